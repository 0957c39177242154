#include "ftcost/duration.hpp"

#include <cmath>
#include <cstdio>

namespace ftcost {

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string group_thousands(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.0f", std::fabs(v));
  std::string digits = buf;
  std::string out;
  int n = 0;
  for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
    if (n > 0 && n % 3 == 0) out.insert(out.begin(), ',');
    out.insert(out.begin(), *it);
    ++n;
  }
  return (v < 0 ? "-" : "") + out;
}

std::string duration_text(double hours) {
  if (!std::isfinite(hours)) return "n/a";
  if (hours < 1.0) return fixed(hours * 60.0, hours < 1.0 / 6.0 ? 1 : 0) + " min";
  if (hours < 48.0) return fixed(hours, 1) + " h";
  // the hours rounded half away from zero first (std::round), so that 50.5 h reads "51 h", not printf's "50"
  return fixed(hours / 24.0, 1) + " d (" + group_thousands(std::round(hours)) + " h)";
}

}  // namespace ftcost
