#include "format.hpp"

#include "fileio.hpp"
#include "ftcost/duration.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ftcost::cli {

Table::Table(std::vector<std::string> header, std::vector<bool> right_align)
    : header_(std::move(header)), right_(std::move(right_align)) {
  right_.resize(header_.size(), false);
}

void Table::row(std::vector<std::string> cells) {
  cells.resize(header_.size());
  for (auto& c : cells) c = printable(c);  // names and notes from input files: never a raw control character
  rows_.push_back(std::move(cells));
}

std::string Table::str() const {
  std::vector<std::size_t> width(header_.size(), 0);
  for (std::size_t i = 0; i < header_.size(); ++i) width[i] = header_[i].size();
  for (const auto& r : rows_)
    for (std::size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  auto line = [&](const std::vector<std::string>& cells) {
    std::string s;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      std::string pad(width[i] - cells[i].size(), ' ');
      s += right_[i] ? pad + cells[i] : cells[i] + pad;
      if (i + 1 < cells.size()) s += "  ";
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s + "\n";
  };
  std::string out = line(header_);
  std::string rule;
  for (std::size_t i = 0; i < width.size(); ++i) {
    rule += std::string(width[i], '-');
    if (i + 1 < width.size()) rule += "  ";
  }
  out += rule + "\n";
  for (const auto& r : rows_) out += line(r);
  return out;
}

std::string human_count(double v) {
  const char* unit = "";
  double x = v;
  if (std::fabs(v) >= 1e9) {
    x = v / 1e9;
    unit = "B";
  } else if (std::fabs(v) >= 1e6) {
    x = v / 1e6;
    unit = "M";
  } else if (std::fabs(v) >= 1e3) {
    x = v / 1e3;
    unit = "K";
  }
  return fixed(x, std::fabs(x) >= 100 ? 0 : (std::fabs(x) >= 10 ? 1 : 2)) + unit;
}

std::string money(double usd) {
  double cents = std::round(usd * 100.0);
  std::string whole = group_thousands(std::trunc(cents / 100.0));
  char frac[16];
  std::snprintf(frac, sizeof frac, "%02d", static_cast<int>(std::fmod(std::fabs(cents), 100.0)));
  return "$" + whole + "." + frac;
}

std::string duration(double hours) { return duration_text(hours); }

}  // namespace ftcost::cli
