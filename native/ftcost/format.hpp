// Human-readable output: aligned tables with units.
#pragma once

#include "ftcost/duration.hpp"

#include <string>
#include <vector>

namespace ftcost::cli {

class Table {
 public:
  explicit Table(std::vector<std::string> header, std::vector<bool> right_align = {});
  void row(std::vector<std::string> cells);
  std::string str() const;

 private:
  std::vector<std::string> header_;
  std::vector<bool> right_;
  std::vector<std::vector<std::string>> rows_;
};

// The core's number writers (ftcost/duration.hpp), one implementation for the CLI and the calculator.
using ftcost::fixed;                 // fixed(2.345, 1) = "2.3"
using ftcost::group_thousands;       // 46702792704 -> 46,702,792,704
std::string human_count(double v);   // 46.7B, 12.9M
std::string money(double usd);       // $1,234.56
std::string duration(double hours);  // 42 min, 3.5 h, 2.1 d (50 h)

}  // namespace ftcost::cli
