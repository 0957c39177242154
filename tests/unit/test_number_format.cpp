// The number writers the CLI and the calculator share (core/base/include/ftcost/duration.hpp): the exact text
// of each, including the two rounding rules (printf's round-half-to-even for group_thousands, half away from
// zero for the hours beside a duration in days), and the lists the CLI and the JavaScript API both print.
#include "ftcost/api.hpp"
#include "ftcost/database.hpp"
#include "ftcost/duration.hpp"

#include <doctest/doctest.h>

#include <limits>
#include <string>

using namespace ftcost;

TEST_CASE("fixed writes exactly the given decimals") {
  CHECK(fixed(2.345, 1) == "2.3");
  CHECK(fixed(2.0, 3) == "2.000");
  CHECK(fixed(-0.5, 0) == "-0");  // printf: half to even, the sign kept
  CHECK(fixed(1234567.891, 2) == "1234567.89");
}

TEST_CASE("group_thousands puts a comma every three digits") {
  CHECK(group_thousands(0) == "0");
  CHECK(group_thousands(999) == "999");
  CHECK(group_thousands(1000) == "1,000");
  CHECK(group_thousands(46702792704.0) == "46,702,792,704");
  CHECK(group_thousands(-1234.4) == "-1,234");
  CHECK(group_thousands(2.5) == "2");  // printf's %.0f rounds half to even
  CHECK(group_thousands(1500000.5) == "1,500,000");
}

TEST_CASE("duration_text: minutes, hours, then days with the hours") {
  CHECK(duration_text(0.05) == "3.0 min");
  CHECK(duration_text(0.5) == "30 min");
  CHECK(duration_text(3.25) == "3.2 h");  // 3.25 is exact in binary: printf rounds half to even
  CHECK(duration_text(47.9) == "47.9 h");
  CHECK(duration_text(81.0) == "3.4 d (81 h)");
  CHECK(duration_text(50.5) == "2.1 d (51 h)");  // the hours round half away from zero (std::round)
  CHECK(duration_text(1234.0) == "51.4 d (1,234 h)");
  CHECK(duration_text(std::numeric_limits<double>::infinity()) == "n/a");
}

TEST_CASE("the model and GPU lists are one function for the CLI and the JavaScript API") {
  const Database& db = Database::embedded();
  const json models = api::models_list(db);
  const json gpus = api::gpus_list(db);
  CHECK(api::models_json() == models.dump());
  CHECK(api::gpus_json() == gpus.dump());
  REQUIRE(models.size() >= 20);
  REQUIRE(gpus.size() >= 25);
  for (const auto& m : models) {
    CHECK(m.contains("layers"));
    CHECK(m["layers"].get<int>() > 0);
  }
  for (const auto& g : gpus)
    CHECK(g["price_offers"].get<std::size_t>() == db.offers_for(g["id"].get<std::string>()).size());
}
