// A request resolved against the embedded database, for unit tests: the test stops (with the resolver's
// message) when the request does not resolve.
#pragma once

#include "ftcost/api.hpp"
#include "ftcost/database.hpp"
#include "ftcost/estimate.hpp"

#include <doctest/doctest.h>

#include <string>

namespace ftcost::test {

inline Inputs inputs(Request r) {
  auto in = resolve_request(r, Database::embedded(), nullptr);
  REQUIRE_MESSAGE(in.ok(), (in.ok() ? std::string() : in.error().to_string()));
  return in.value();
}

}  // namespace ftcost::test
