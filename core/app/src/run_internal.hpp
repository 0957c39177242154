// Internal to a user's runs (ftcost/run.hpp): what their sources share.
//   run_file.cpp   the `ftcost.run/1` file: its reader, the software stack it names, the request it resolves
//   to run_fit.cpp    the refit of a stack profile's free parameters to runs' step times and peak memory
//   run.cpp        the step model at a run's shapes, the run as validation rows, --run applied to an estimate
#pragma once

#include "ftcost/run.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <utility>

namespace ftcost::run_detail {

inline constexpr const char* kConfigPath = "run/config.json";  // the virtual path of the recorded config.json

inline std::string idx(const std::string& base, std::size_t i) {
  return base + "[" + std::to_string(i) + "]";
}

// One micro-batch shape's forward+backward and optimizer seconds from the step model.
struct MicroTime {
  double fwd_bwd = 0, opt = 0;
};

using MicroCache = std::map<std::pair<std::int64_t, double>, MicroTime>;

// A step's predicted seconds, each shape evaluated once per cache (run.cpp).
double step_s_cached(const Inputs& in, const RunStep& step, MicroCache& cache);

struct Param {
  const char* name;
  double StackProfile::*field;
  double lo, hi;
};
// The same physical ranges as the reference fit (core/app/src/validate.cpp kParams).
inline constexpr Param kTimeParams[] = {
    {"gemm_efficiency", &StackProfile::gemm_efficiency, 0.5, 0.9},
    {"memory_efficiency", &StackProfile::memory_efficiency, 0.5, 0.92},
    {"host_us_per_kernel", &StackProfile::host_us_per_kernel, 0.5, 60},
    {"dequant_efficiency", &StackProfile::dequant_efficiency, 0.3, 0.92},
    {"optimizer_efficiency", &StackProfile::optimizer_efficiency, 0.05, 0.92},
};

}  // namespace ftcost::run_detail
