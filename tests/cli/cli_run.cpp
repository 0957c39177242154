// The CLI tests' harness (cli_run.hpp): runs the built `ftcost` through popen, its stderr through a file.
#include "cli_run.hpp"

#include "ftcost/paper.hpp"

#include <doctest/doctest.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <string>
#include <sys/wait.h>

Run run(const std::string& args, const std::string& prefix) {
  static int n = 0;
  const std::string err_file = std::string(FTCOST_TEST_TMP) + "/stderr_" + std::to_string(n++) + ".txt";
  const std::string cmd = prefix + std::string(FTCOST_BIN) + " " + args + " 2>" + err_file;
  Run r;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::array<char, 4096> buf{};
  std::size_t got = 0;
  while ((got = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), got);
  int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (FILE* f = fopen(err_file.c_str(), "r")) {
    while ((got = fread(buf.data(), 1, buf.size(), f)) > 0) r.err.append(buf.data(), got);
    fclose(f);
  }
  return r;
}

// `ftcost ARGS`, which must succeed: its standard output, parsed as JSON.
json run_json(const std::string& args) {
  Run r = run(args);
  REQUIRE_MESSAGE(r.code == 0, "ftcost " << args << ": " << r.err);
  return json::parse(r.out);
}

void expect_bad(const std::string& args, const std::string& must_mention) {
  CAPTURE(args);
  Run r = run(args);
  CHECK(r.code == 2);
  CHECK(r.err.find(must_mention) != std::string::npos);
  CHECK(r.err.find("ftcost: error:") == 0);
  CHECK(r.out.empty());
}

// The paper's Mixtral commonsense sparse sweep as a --points CSV, written from the embedded reference data
// (the only copy of the paper's measurements) rather than kept as a third copy under tests/data.
std::string mixtral_cs_sparse_csv() {
  const std::string path = std::string(FTCOST_TEST_TMP) + "/a40-mixtral-cs-sparse.csv";
  std::ofstream f(path);
  f << "batch,throughput,sparsity\n";
  for (const auto& sw : ftcost::paper::a40_sweeps())
    if (std::string(sw.id) == "mixtral-cs")
      for (const auto& p : sw.points)
        if (p.sparsity < 1) f << p.batch << ',' << p.throughput << ',' << p.sparsity << '\n';
  return path;
}
