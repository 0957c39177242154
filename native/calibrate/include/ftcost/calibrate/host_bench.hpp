// Host-only benchmarks: a single-thread CPU score, and the "host work" of the eager pattern (the
// launches themselves are in kernels/launch.cu).
#pragma once

#include "ftcost/calibrate/stats.hpp"
#include "ftcost/calibration.hpp"

#include <cstdint>

namespace ftcost::calib {

// One unit of a fixed single-thread workload resembling a framework's dispatcher: pointer chasing
// through a shuffled list (cache/latency bound), hashing into a small open-addressing table, and
// data-dependent branches. Returns a checksum (so that nothing is optimized away).
std::uint64_t cpu_work_unit(std::uint64_t seed);

// Times cpu_work_unit under the policy: score = units per millisecond (higher is faster).
CpuRow measure_cpu_score(const TimingPolicy& policy);

// The host-side work of one eager op (a few hundred nanoseconds on a current server core): shape and
// stride bookkeeping, a hash lookup, a small allocation. Returns a value to keep it alive.
std::uint64_t eager_host_work(std::uint64_t op);

}  // namespace ftcost::calib
