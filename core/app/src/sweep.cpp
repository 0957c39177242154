#include "ftcost/sweep.hpp"

#include "ftcost/compare.hpp"
#include "ftcost/units.hpp"

#include <cmath>
#include <cstdint>
#include <exception>
#include <set>

namespace ftcost {

Sweep batch_sweep(const Inputs& in, const Database& db, int points) {
  Sweep s;
  try {
    Inputs inputs = in;
    inputs.workload.batch = 0;  // the maximum
    auto first = estimate(inputs, db);
    if (!first.ok()) {
      s.error = first.error().to_string();
      s.code = first.error().code;
      return s;
    }
    const auto max_b = static_cast<double>(first.value().max_batch.batch);
    s.max_batch = max_b;
    if (max_b < 1) {
      s.error = "does not fit at batch 1";
      s.code = Errc::does_not_fit;
      return s;
    }
    const double top = std::max(max_b + 2, std::ceil(max_b * 1.25));
    std::set<std::int64_t> batches;
    if (top <= points) {
      for (std::int64_t b = 1; b <= static_cast<std::int64_t>(top); ++b) batches.insert(b);
    } else {
      for (int i = 0; i < points; ++i) {
        double t = static_cast<double>(i) / (points - 1);
        batches.insert(static_cast<std::int64_t>(std::llround(std::exp(t * std::log(top)))));
      }
      batches.insert(static_cast<std::int64_t>(max_b));
    }
    // The Estimate's numbers directly (no JSON): the calculator runs this on every input change.
    for (std::int64_t b : batches) {
      if (b < 1) continue;
      inputs.workload.batch = b;
      auto e = estimate(inputs, db);
      if (!e.ok() || e.value().throughput_qps <= 0) continue;
      const Estimate& est = e.value();
      SweepPoint p;
      p.batch = static_cast<double>(b);
      p.qps = est.throughput_qps;
      p.qps_low = est.throughput_low > 0 ? est.throughput_low : p.qps;
      p.qps_high = est.throughput_high > 0 ? est.throughput_high : p.qps;
      p.tokens_per_s = est.throughput_tps;
      p.step_s = est.step.total_s;
      p.memory_gib = est.memory.total() / kGiB;
      p.fits = static_cast<double>(b) <= max_b;
      s.points.push_back(p);
    }
  } catch (const std::exception& ex) {
    s.error = std::string("internal error: ") + ex.what();
  }
  return s;
}

json sweep_to_json(const Sweep& s) {
  json pts = json::array();
  for (const auto& p : s.points)
    pts.push_back(json{{"batch_size", static_cast<long long>(p.batch)},
                       {"fits", p.fits},
                       {"memory_gib", p.memory_gib},
                       {"step_time_s", p.step_s},
                       {"throughput_queries_per_s", p.qps},
                       {"throughput_queries_per_s_range", json::array({p.qps_low, p.qps_high})},
                       {"throughput_tokens_per_s", p.tokens_per_s}});
  return json{{"max_batch_size", static_cast<long long>(s.max_batch)}, {"points", pts}};
}

std::string sweep_to_csv(const Sweep& s) {
  std::string out =
      "batch_size,fits,memory_gib,step_time_s,throughput_queries_per_s,throughput_queries_per_s_low,"
      "throughput_queries_per_s_high,throughput_tokens_per_s\n";
  auto n = [](double v) { return json(v).dump(); };
  for (const auto& p : s.points)
    out += std::to_string(static_cast<long long>(p.batch)) + "," + (p.fits ? "yes" : "no") + "," +
           n(p.memory_gib) + "," + n(p.step_s) + "," + n(p.qps) + "," + n(p.qps_low) + "," + n(p.qps_high) +
           "," + n(p.tokens_per_s) + "\n";
  return out;
}

}  // namespace ftcost
