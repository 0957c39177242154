#include "ftcost/calibrate/stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ftcost::calib {

double percentile_sorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  q = std::min(1.0, std::max(0.0, q));
  double h = q * static_cast<double>(sorted.size() - 1);
  std::size_t lo = static_cast<std::size_t>(std::floor(h));
  std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  double frac = h - static_cast<double>(lo);
  return sorted[lo] + frac * (sorted[hi] - sorted[lo]);
}

Summary summarize(std::vector<double> samples) {
  Summary s;
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  s.n = static_cast<int>(samples.size());
  s.min = samples.front();
  s.max = samples.back();
  s.median = percentile_sorted(samples, 0.5);
  s.p10 = percentile_sorted(samples, 0.1);
  s.p90 = percentile_sorted(samples, 0.9);
  return s;
}

double relative_stderr_of_median(const Summary& s) {
  if (s.n < 2 || s.median <= 0) return std::numeric_limits<double>::infinity();
  double sigma = (s.p90 - s.p10) / 2.5631;
  return 1.2533 * sigma / std::sqrt(static_cast<double>(s.n)) / s.median;
}

bool should_stop(const Summary& s, double elapsed_seconds, const TimingPolicy& p) {
  if (s.n >= p.max_iters) return true;
  if (s.n < 1) return false;
  if (elapsed_seconds >= p.max_seconds) return true;
  if (s.n < p.min_iters) return false;
  return relative_stderr_of_median(s) <= p.target_rel_stderr;
}

bool Sampler::done(double elapsed_seconds) const { return should_stop(summary(), elapsed_seconds, policy_); }

CalStat rate_stat(const Summary& t, double work, double unit) {
  CalStat r;
  if (t.median <= 0 || t.p10 <= 0 || t.p90 <= 0) return r;
  r.median = work / t.median / unit;
  r.p10 = work / t.p90 / unit;
  r.p90 = work / t.p10 / unit;
  return r;
}

CalStat micros_stat(const Summary& t) { return CalStat{t.median * 1e6, t.p10 * 1e6, t.p90 * 1e6}; }

}  // namespace ftcost::calib
