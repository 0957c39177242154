// The CLI tests' harness, shared by the files of ftcost_cli_tests (tests/cli/*_tests.cpp): runs the built
// `ftcost` (FTCOST_BIN) and keeps its exit code, standard output and standard error.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

using json = nlohmann::json;

struct Run {
  int code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// `prefix` goes before the binary (e.g. "timeout 30 " where a regression would hang).
Run run(const std::string& args, const std::string& prefix = "");

// `ftcost ARGS`, which must succeed: its standard output, parsed as JSON.
json run_json(const std::string& args);

// `ftcost ARGS` must fail: exit code 2, nothing on stdout, "ftcost: error: ..." naming `must_mention`.
void expect_bad(const std::string& args, const std::string& must_mention);

inline const std::string kData = std::string(FTCOST_SOURCE_DIR) + "/tests/data";

// The paper's Mixtral commonsense sparse sweep as a --points CSV file; returns its path.
std::string mixtral_cs_sparse_csv();
