// Requests for unit tests: written as one line of `option=value` words, and resolved against the embedded
// database (the test stops, with the resolver's message, when the request does not resolve).
#pragma once

#include "ftcost/api.hpp"
#include "ftcost/database.hpp"
#include "ftcost/estimate.hpp"

#include <doctest/doctest.h>

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace ftcost::test {

// "model=llama-3.1-8b gpu=a40 seq=512": the request with those options (option names as in Request, no
// dashes; a value has no space). A word without '=' is a mistake in the test itself.
inline Request request(const std::string& spec) {
  Request r;
  std::istringstream words(spec);
  std::string word;
  while (words >> word) {
    const auto eq = word.find('=');
    if (eq == std::string::npos || eq == 0)
      throw std::invalid_argument("request word without option=: " + word);
    r[word.substr(0, eq)] = word.substr(eq + 1);
  }
  return r;
}

inline Inputs inputs(Request r) {
  auto in = resolve_request(r, Database::embedded(), nullptr);
  REQUIRE_MESSAGE(in.ok(), (in.ok() ? std::string() : in.error().to_string()));
  return in.value();
}

// The paper's stack (transformers 4.40, paper.md) where the request names no stack: the tests that pin the
// paper's memory and step models ask for it explicitly, not the estimate's default (today's HF/TRL stack).
inline Inputs paper_inputs(Request r) {
  if (r.count("stack") == 0) r["stack"] = kPaperStackId;
  return inputs(std::move(r));
}

}  // namespace ftcost::test
