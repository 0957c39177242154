// A fresh directory under /tmp for a test file's outputs: /tmp/ftcost-calibrate-<tag>-XXXXXX.
#pragma once

#include <doctest/doctest.h>

#include <cstdlib>
#include <string>
#include <unistd.h>
#include <vector>

namespace ftcost::test {

inline std::string make_tmpdir(const std::string& tag) {
  const std::string name = "/tmp/ftcost-calibrate-" + tag + "-XXXXXX";
  std::vector<char> tmpl(name.begin(), name.end());
  tmpl.push_back('\0');
  char* d = ::mkdtemp(tmpl.data());
  REQUIRE(d != nullptr);
  return std::string(d);
}

}  // namespace ftcost::test
