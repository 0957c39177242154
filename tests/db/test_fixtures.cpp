// The corrupted fixtures of tests/db/fixtures/ (expected.json says what each must report), plus the
// fixtures too big or too dependent on other formats to commit, generated here: a 10 MB file, 100000
// levels of nesting, a calibration above the GPU's peak, a calibration filed under the wrong GPU.
#include "fixtures.hpp"
#include "helpers.hpp"

#include <doctest/doctest.h>

#include <set>

using namespace dbtest;
using nlohmann::json;

TEST_CASE("every committed fixture is rejected with the expected problems") {
  const json expected = json::parse(read_file(kFixtures + "/expected.json"));
  std::set<std::string> dirs;
  for (const auto& e : fs::directory_iterator(kFixtures))
    if (e.is_directory()) dirs.insert(e.path().filename().string());
  std::set<std::string> listed;
  for (const auto& [name, v] : expected.items())
    if (name[0] != '_') listed.insert(name);
  CHECK(dirs == listed);  // a fixture without expectations, or expectations without a fixture

  for (const auto& name : dirs) {
    CAPTURE(name);
    if (!expected.contains(name)) continue;
    const DbFiles files = tree(kFixtures + "/" + name, "fixtures/" + name);
    const auto r = ftcost::check_db_files(files, shipped());
    INFO(listing(r.problems));
    CHECK(!r.ok());
    for (const auto& want : expected[name]) {
      const std::string file = "fixtures/" + name + "/" + want["file"].get<std::string>();
      const auto* p =
          find(r.problems, file, want["field"].get<std::string>(), want["message"].get<std::string>());
      CAPTURE(want.dump());
      REQUIRE(p != nullptr);
      CHECK(std::string(ftcost::errc_name(p->code)) == want["code"].get<std::string>());
      // The one-line form names the file and the field.
      CHECK(p->to_string().rfind(file + ": " + want["field"].get<std::string>() + ": ", 0) == 0);
    }
    // Only the corrupted file has problems: the rest of the fixture tree is valid.
    for (const auto& p : r.problems) {
      bool expected_file = false;
      for (const auto& want : expected[name])
        expected_file = expected_file || p.file == "fixtures/" + name + "/" + want["file"].get<std::string>();
      CHECK(expected_file);
    }
  }
}

TEST_CASE("generated fixtures are rejected with the expected problems") {
  for (const auto& g : generated_fixtures()) {
    CAPTURE(g.name);
    const auto r = ftcost::check_db_files({{g.file, g.content}}, shipped());
    INFO(listing(r.problems));
    const auto* p = find(r.problems, g.file, g.field, g.message);
    REQUIRE(p != nullptr);
    CHECK(std::string(ftcost::errc_name(p->code)) == g.code);
  }
}
