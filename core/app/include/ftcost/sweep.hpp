// One job over batch sizes: throughput, its range and memory from batch 1 to beyond the maximum that fits.
// Shared by `ftcost sweep` and the calculator's throughput-vs-batch plot.
#pragma once

#include "ftcost/database.hpp"
#include "ftcost/estimate.hpp"
#include "ftcost/json_util.hpp"

#include <string>
#include <vector>

namespace ftcost {

struct SweepPoint {
  double batch = 0;
  double qps = 0, qps_low = 0, qps_high = 0;
  double tokens_per_s = 0;
  double step_s = 0;
  double memory_gib = 0;
  bool fits = false;
};

struct Sweep {
  std::vector<SweepPoint> points;  // increasing batch; the last ones may not fit
  double max_batch = 0;
  std::string error;           // why there is no sweep (e.g. does not fit at batch 1)
  Errc code = Errc::internal;  // its kind when `error` is set (does_not_fit: not even batch 1 fits)
};

// `in` as resolved for the job (its batch is ignored). Batch sizes from 1 to 1.25 x the maximum (at least
// the maximum + 2): all of them when there are at most `points`, else about `points` log-spaced sizes and
// the maximum itself.
Sweep batch_sweep(const Inputs& in, const Database& db, int points = 36);

json sweep_to_json(const Sweep& s);
std::string sweep_to_csv(const Sweep& s);

}  // namespace ftcost
