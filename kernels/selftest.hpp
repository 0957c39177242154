// One case of a family's self-test (families.hpp selftest_*): the check runs, and the report gets
// "ok: NAME" or "FAILED: NAME: why" (a ValidationFailure; any other error goes on to the caller).
#pragma once

#include "families.hpp"
#include "ftcost/calibrate/bench.hpp"

#include <functional>
#include <string>

namespace ftcost::calib {

inline void self_check(Report& rep, const std::string& name, const std::function<void()>& check) {
  try {
    check();
    rep.push_back("ok: " + name);
  } catch (const ValidationFailure& e) {
    rep.push_back("FAILED: " + name + ": " + e.what());
  }
}

}  // namespace ftcost::calib
