// Numbers and durations written for people, one implementation shared by the CLI (native/ftcost/format.hpp
// re-exports these) and the calculator.
#pragma once

#include <string>

namespace ftcost {

// `v` with exactly `decimals` digits after the point, as printf's "%.*f" writes it: fixed(2.345, 1) = "2.3".
std::string fixed(double v, int decimals);

// `v` rounded to a whole number (as printf's "%.0f" rounds) with a comma every three digits:
// 46702792704 -> "46,702,792,704", -1234.4 -> "-1,234".
std::string group_thousands(double v);

// One way to write a duration: minutes below an hour, hours below two days, then days with the hours beside
// them ("3.4 d (81 h)").
std::string duration_text(double hours);

}  // namespace ftcost
