#include "ftcost/duration.hpp"

#include <cmath>
#include <cstdio>

namespace ftcost {

namespace {
std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}
// 12345 -> "12,345" (whole numbers)
std::string grouped(double v) {
  std::string s = fixed(std::round(v), 0);
  const std::size_t start = s[0] == '-' ? 1 : 0;
  for (std::size_t i = s.size(); i > start + 3; i -= 3) s.insert(i - 3, ",");
  return s;
}
}  // namespace

std::string duration_text(double hours) {
  if (!std::isfinite(hours)) return "n/a";
  if (hours < 1.0) return fixed(hours * 60.0, hours < 1.0 / 6.0 ? 1 : 0) + " min";
  if (hours < 48.0) return fixed(hours, 1) + " h";
  return fixed(hours / 24.0, 1) + " d (" + grouped(hours) + " h)";
}

}  // namespace ftcost
