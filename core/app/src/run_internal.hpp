// Internal to a user's runs (ftcost/run.hpp): what their sources share. The `ftcost.run/1` file's reader is
// spec's (core/spec/src/run_file.cpp, ftcost/run_file.hpp: the record as the file states it, no database).
//   run_file.cpp   the record resolved against the database: the GPU (id, or name matched), the memory
//                  figures against it, the model preset, the software stack the versions name, the request
//   run_fit.cpp    the refit of a stack profile's free parameters to runs' step times and peak memory
//   run.cpp        the step model at a run's shapes, the run as validation rows, --run applied to an estimate
#pragma once

#include "ftcost/fit.hpp"
#include "ftcost/run.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

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

// The step-time parameters the refit to runs may free, in its order (fit::fit_params holds their ranges;
// the order is the refit's: its report lists them so).
inline std::vector<const fit::FitParam*> time_params() {
  std::vector<const fit::FitParam*> out;
  for (const char* name : {"gemm_efficiency", "memory_efficiency", "host_us_per_kernel", "dequant_efficiency",
                           "optimizer_efficiency"})
    for (const auto& p : fit::fit_params())
      if (std::string(p.name) == name) out.push_back(&p);
  return out;
}

}  // namespace ftcost::run_detail
