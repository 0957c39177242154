// `ftcost db check` as a command (native/ftcost/db_check_cmd.cpp): reading folders and files, the output
// lines, --json, exit codes.
#include "db_check_cmd.hpp"
#include "fixtures.hpp"
#include "helpers.hpp"

#include <doctest/doctest.h>

#include <sstream>

using namespace dbtest;
using nlohmann::json;

namespace {

struct Run {
  int rc;
  std::string out, err;
};

Run run(const std::vector<std::string>& paths, bool as_json = false) {
  std::ostringstream out, err;
  const int rc = ftcost::run_db_check(paths, as_json, out, err);
  return {rc, out.str(), err.str()};
}

const std::string kTmp = std::string(FTCOST_TEST_TMP) + "/db-command";

}  // namespace

TEST_CASE("db check with no path checks the repository's gpu-db/ and passes") {
  const Run r = run({});
  INFO(r.out << r.err);
  CHECK(r.rc == 0);
  CHECK(r.out.empty());
  CHECK(r.err.find("no problems") != std::string::npos);
}

TEST_CASE("db check on the gpu-db folder, a single file, and --json") {
  Run r = run({kDb});
  INFO(r.out << r.err);
  CHECK(r.rc == 0);
  r = run({kDb + "/gpus/h100-sxm5-80gb.json", kDb + "/prices/aws.json"});
  CHECK(r.rc == 0);
  r = run({kDb}, true);
  CHECK(r.rc == 0);
  const json j = json::parse(r.out);
  CHECK(j["ok"] == true);
  CHECK(j["files_checked"].get<int>() >= 70);
  CHECK(j["files_by_kind"]["gpu"].get<int>() >= 25);
  CHECK(j["problems"].empty());
}

TEST_CASE("db check prints one line per problem naming file and field, exit code 2") {
  const json expected = json::parse(read_file(kFixtures + "/expected.json"));
  for (const auto& [name, wants] : expected.items()) {
    if (name[0] == '_') continue;
    CAPTURE(name);
    const std::string dir = kFixtures + "/" + name;
    const Run r = run({dir});
    INFO(r.out << r.err);
    CHECK(r.rc == 2);
    for (const auto& want : wants) {
      const std::string line =
          dir + "/" + want["file"].get<std::string>() + ": " + want["field"].get<std::string>() + ": ";
      CHECK(r.out.find(line) != std::string::npos);
    }
    // --json: the same problems, machine-readable and valid UTF-8 even for the invalid-UTF-8 fixture
    const Run rj = run({dir}, true);
    CHECK(rj.rc == 2);
    const json j = json::parse(rj.out);
    CHECK(j["ok"] == false);
    CHECK(j["problems"].size() >= wants.size());
  }
}

TEST_CASE("db check on generated fixtures written to disk") {
  for (const auto& g : generated_fixtures()) {
    CAPTURE(g.name);
    const std::string path = kTmp + "/" + g.file;
    write_file(path, g.content);
    const Run r = run({path});
    INFO(r.out << r.err);
    CHECK(r.rc == 2);
    CHECK(r.out.find(path + ": " + g.field + ": ") != std::string::npos);
    fs::remove(path);
  }
}

TEST_CASE("db check on a whole database folder checks it on its own") {
  // A copy of gpu-db/ without a40: the prices that refer to a40 must fail (no fallback to the shipped
  // database when a whole database is given, as in the pull-request workflow).
  const std::string copy = kTmp + "/whole/gpu-db";
  fs::remove_all(kTmp + "/whole");
  fs::create_directories(copy);
  fs::copy(kDb, copy, fs::copy_options::recursive);
  fs::remove(copy + "/gpus/a40.json");
  const Run r = run({copy});
  INFO(r.out << r.err);
  CHECK(r.rc == 2);
  CHECK(r.out.find(copy + "/prices/cudo-compute.json: offers[") != std::string::npos);
  CHECK(r.out.find("\"a40\" is not a GPU in gpus/") != std::string::npos);
  fs::remove_all(kTmp + "/whole");
}

TEST_CASE("db check: paths that are not there or not files") {
  Run r = run({kTmp + "/does-not-exist"});
  CHECK(r.rc == 2);
  CHECK(r.out.find("does-not-exist: (file): no such file or folder") != std::string::npos);
  fs::create_directories(kTmp + "/empty");
  r = run({kTmp + "/empty"});
  CHECK(r.rc == 2);
  CHECK(r.err.find("no files to check") != std::string::npos);
}
