// Internal to the field lists (fields.cpp, fields_calibration.cpp): the builders each list is written with.
#pragma once

#include "ftcost/fields.hpp"

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace ftcost::field_build {

using K = FieldKind;

// Builders, so that each list below reads as a table: key, kind, and what else the field has.
inline Field f(const char* key, K kind, const char* help) {
  Field x;
  x.key = key;
  x.kind = kind;
  x.help = help;
  return x;
}
inline Field req(Field x) {
  x.required = true;
  return x;
}
inline Field need(Field x) {
  x.needed = true;
  return req(std::move(x));
}
inline Field null_ok(Field x) {
  x.nullable = true;
  return x;
}
inline Field range(Field x, double lo, double hi, const char* unit) {
  x.min = lo;
  x.max = hi;
  x.unit = unit;
  return x;
}
inline Field above(Field x, double lo, double hi, const char* unit) {
  x = range(std::move(x), lo, hi, unit);
  x.min_exclusive = true;
  return x;
}
inline Field choice(const char* key, std::vector<std::string> values, const char* help) {
  Field x = f(key, K::choice, help);
  x.values = std::move(values);
  return x;
}
inline Field at_least(Field x, std::size_t chars) {
  x.min_length = chars;
  return x;
}
inline Field limited(Field x, const char* why) {
  x.why_limited = why;
  return x;
}
inline Field object(const char* key, const char* members, const char* help) {
  Field x = f(key, K::object, help);
  x.members = members;
  return x;
}
inline Field array(const char* key, K items, std::size_t min_items, const char* help,
                   const char* members = "") {
  Field x = f(key, K::array, help);
  x.items = items;
  x.min_items = min_items;
  x.members = members;
  return x;
}

// The calibration file's lists, in order (fields_calibration.cpp).
std::vector<FieldList> calibration_field_lists();

}  // namespace ftcost::field_build
