// Enum -> name tables written once: each enum's names are a table of {value, name} rows, looked up here. A
// value without a row reads as the fallback (where a switch would have had the compiler name the missing
// case).
#pragma once

#include <cstddef>

namespace ftcost {

template <class E>
struct EnumName {
  E value;
  const char* name;
};

// The name of `e` in `table`; `fallback` (the first row's name when null) for a value with no row.
template <class E, std::size_t N>
constexpr const char* enum_name(const EnumName<E> (&table)[N], E e, const char* fallback = nullptr) {
  for (const EnumName<E>& row : table)
    if (row.value == e) return row.name;
  return fallback != nullptr ? fallback : table[0].name;
}

}  // namespace ftcost
