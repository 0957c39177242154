// One way to write a duration for people, shared by the CLI and the calculator: minutes below an hour,
// hours below two days, then days with the hours beside them ("3.4 d (81 h)").
#pragma once

#include <string>

namespace ftcost {

std::string duration_text(double hours);

}  // namespace ftcost
