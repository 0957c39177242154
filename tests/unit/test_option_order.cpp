// The order of the option table (core/app/src/options*.cpp): resolve_request applies the options in table
// order, so an option may read only what the options above it stored. Each option names what it reads
// (Option::reads) and whose presence in the request it checks (Option::checks_given); this walks the built
// table and fails on a read of an option that comes after it, or of one that does not exist.
#include "ftcost/options.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

using ftcost::find_option;
using ftcost::job_options;
using ftcost::Option;

namespace {

// What is wrong with the table's order, one line per problem (none: nothing).
std::vector<std::string> order_problems(const std::vector<Option>& table) {
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < table.size(); ++i) index.emplace(table[i].key, i);
  std::vector<std::string> problems;
  for (std::size_t i = 0; i < table.size(); ++i) {
    const Option& o = table[i];
    std::set<std::string> seen;
    for (const auto& r : o.reads) {
      const auto it = index.find(r);
      if (!seen.insert(r).second) problems.push_back(o.key + " reads " + r + " twice");
      if (it == index.end())
        problems.push_back(o.key + " reads " + r + ", which is no option");
      else if (it->second >= i)
        problems.push_back(o.key + " reads " + r + ", which comes " + (it->second == i ? "at" : "after") +
                           " it in the table (" + std::to_string(it->second) + " >= " + std::to_string(i) +
                           ")");
    }
    for (const auto& g : o.checks_given) {
      if (index.count(g) == 0)
        problems.push_back(o.key + " checks whether " + g + " is given, which is no option");
      if (g == o.key) problems.push_back(o.key + " checks whether it is given itself");
    }
  }
  return problems;
}

Option named(const std::string& key, std::vector<std::string> reads) {
  Option o;
  o.key = key;
  o.reads = std::move(reads);
  return o;
}

}  // namespace

TEST_CASE("option order: every option reads only options above it") {
  const auto problems = order_problems(job_options());
  for (const auto& p : problems) FAIL_CHECK(p);
  CHECK(problems.empty());
}

TEST_CASE("option order: the reads the table declares") {
  std::size_t reading = 0;
  for (const auto& o : job_options()) reading += o.reads.empty() ? 0 : 1;
  // Most options read another (the method, the model, the GPU ...); the check above has something to check.
  CHECK(reading >= 40);
  const Option* run = find_option("run");
  REQUIRE(run != nullptr);
  // --run refits the stack at the estimate's batch: it reads every workload option, which all come first
  for (const char* k :
       {"model", "gpu", "stack", "batch", "seq", "dataset", "calibration", "routing", "model-kind"})
    CHECK(std::find(run->reads.begin(), run->reads.end(), k) != run->reads.end());
}

TEST_CASE("option order: the check finds a read out of order or of no option") {
  const std::vector<Option> table = {named("a", {}), named("b", {"a", "c"}), named("c", {"nope"}),
                                     named("d", {"d"})};
  const auto problems = order_problems(table);
  REQUIRE(problems.size() == 3);
  CHECK(problems[0].find("b reads c, which comes after") == 0);
  CHECK(problems[1] == "c reads nope, which is no option");
  CHECK(problems[2].find("d reads d, which comes at it") == 0);
  Option given = named("e", {"a"});
  given.checks_given = {"zz"};
  CHECK(order_problems({named("a", {}), given}).size() == 1);
}
