// Timing statistics and the noise-based stopping rule (host-only, no CUDA).
#pragma once

#include "ftcost/calibration.hpp"

#include <vector>

namespace ftcost::calib {

// Percentile with linear interpolation between order statistics (numpy's default); q in [0, 1].
// `sorted` must be sorted ascending and non-empty.
double percentile_sorted(const std::vector<double>& sorted, double q);

struct Summary {
  double median = 0, p10 = 0, p90 = 0, min = 0, max = 0;
  int n = 0;
};
Summary summarize(std::vector<double> samples);  // empty input -> all zero, n = 0

// Relative standard error of the median, from a robust spread: sigma ~ (p90 - p10) / 2.563 (normal),
// se(median) ~ 1.2533 sigma / sqrt(n). Returns +inf for n < 2 or median <= 0.
double relative_stderr_of_median(const Summary& s);

struct TimingPolicy {
  int warmup = 2;                   // untimed runs first
  int min_iters = 5;                // timed samples at least
  int max_iters = 50;               // and at most
  double max_seconds = 0.25;        // wall time cap for the timed samples of one measurement
  double target_rel_stderr = 0.01;  // stop once the median is known this well
};

// nvbench-style: stop when enough samples and the median is precise enough, or a cap is reached.
bool should_stop(const Summary& s, double elapsed_seconds, const TimingPolicy& p);

// Collects samples (seconds) under a policy.
class Sampler {
 public:
  explicit Sampler(TimingPolicy p) : policy_(p) {}
  void add(double seconds) { samples_.push_back(seconds); }
  bool done(double elapsed_seconds) const;
  Summary summary() const { return summarize(samples_); }
  int count() const { return static_cast<int>(samples_.size()); }
  const std::vector<double>& samples() const { return samples_; }

 private:
  TimingPolicy policy_;
  std::vector<double> samples_;
};

// Converts time statistics (seconds) to a rate stat: work / time, so the rate's p10 is the slow (p90)
// time's rate. `unit` divides: e.g. work in bytes and unit 1e9 gives GB/s.
CalStat rate_stat(const Summary& seconds, double work, double unit);
// Time statistics in microseconds.
CalStat micros_stat(const Summary& seconds);

}  // namespace ftcost::calib
