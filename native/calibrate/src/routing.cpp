#include "ftcost/calibrate/routing.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

namespace ftcost::calib {

Result<std::vector<double>> distribution_weights(const std::string& name, int experts) {
  if (experts < 1) return make_error(Errc::invalid_value, "experts", "must be >= 1");
  std::vector<double> w;
  if (name == "uniform") {
    w.assign(static_cast<std::size_t>(experts), 1.0);
  } else if (name == "mixtral_he_tuned" || name == "mixtral_gs_tuned") {
    if (experts != 8) {
      return make_error(Errc::invalid_value, "distribution", name + " is measured for Mixtral's 8 experts");
    }
    w = name == "mixtral_he_tuned" ? std::vector<double>{53.2, 53.3, 68.3, 47.9, 37.7, 65.6, 47.9, 37.6}
                                   : std::vector<double>{80.9, 80.6, 98.3, 71.0, 73.9, 88.6, 79.7, 69.7};
  } else if (name == "skewed") {
    for (int i = 0; i < experts; ++i) w.push_back(1.0 / std::pow(static_cast<double>(i + 1), 1.2));
  } else {
    return make_error(
        Errc::invalid_value, "distribution",
        "unknown distribution \"" + name + "\" (uniform, mixtral_he_tuned, mixtral_gs_tuned, skewed)");
  }
  double s = std::accumulate(w.begin(), w.end(), 0.0);
  for (auto& x : w) x /= s;
  return w;
}

std::vector<std::int64_t> expert_counts(std::int64_t tokens, int top_k, const std::vector<double>& weights) {
  const std::size_t E = weights.size();
  std::vector<std::int64_t> counts(E, 0);
  if (E == 0 || tokens <= 0 || top_k <= 0) return counts;
  const double total = static_cast<double>(tokens) * top_k;
  const double cap = static_cast<double>(tokens);
  // water-filling: experts whose proportional share exceeds the cap get the cap; the rest is re-shared
  std::vector<double> target(E, 0);
  std::vector<bool> capped(E, false);
  for (int iter = 0; iter < static_cast<int>(E) + 1; ++iter) {
    double free_total = total, free_w = 0;
    for (std::size_t e = 0; e < E; ++e) {
      if (capped[e])
        free_total -= cap;
      else
        free_w += std::max(0.0, weights[e]);
    }
    bool changed = false;
    for (std::size_t e = 0; e < E; ++e) {
      if (capped[e]) {
        target[e] = cap;
        continue;
      }
      target[e] = free_w > 0 ? free_total * std::max(0.0, weights[e]) / free_w : 0;
      if (target[e] > cap) {
        capped[e] = true;
        changed = true;
      }
    }
    if (!changed) break;
  }
  // largest remainder
  std::int64_t assigned = 0;
  std::vector<std::pair<double, std::size_t>> rem;
  for (std::size_t e = 0; e < E; ++e) {
    counts[e] = std::min(tokens, static_cast<std::int64_t>(std::floor(target[e])));
    assigned += counts[e];
    rem.emplace_back(target[e] - std::floor(target[e]), e);
  }
  std::stable_sort(rem.begin(), rem.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::int64_t need = tokens * top_k - assigned;
  for (std::size_t pass = 0; need > 0 && pass < 2 * E + 2; ++pass) {
    for (const auto& r : rem) {
      if (need == 0) break;
      if (counts[r.second] < tokens) {
        ++counts[r.second];
        --need;
      }
    }
  }
  return counts;
}

std::vector<std::int32_t> assign_experts(std::int64_t tokens, int top_k,
                                         const std::vector<std::int64_t>& counts, std::uint64_t seed) {
  // Lay the experts' slots out in expert order (expert e repeated counts[e] times); token t takes slots
  // t, t + T, t + 2T, ...: a run of one expert is at most T long, so a token's k slots are distinct experts.
  std::vector<std::int32_t> slots;
  slots.reserve(static_cast<std::size_t>(tokens * top_k));
  for (std::size_t e = 0; e < counts.size(); ++e) {
    for (std::int64_t i = 0; i < counts[e]; ++i) slots.push_back(static_cast<std::int32_t>(e));
  }
  std::vector<std::int64_t> order(static_cast<std::size_t>(tokens));
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(seed);
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<std::int32_t> idx(static_cast<std::size_t>(tokens * top_k), 0);
  for (std::int64_t t = 0; t < tokens; ++t) {
    for (int j = 0; j < top_k; ++j) {
      std::size_t s = static_cast<std::size_t>(t + j * tokens);
      idx[static_cast<std::size_t>(order[static_cast<std::size_t>(t)] * top_k + j)] =
          s < slots.size() ? slots[s] : 0;
    }
  }
  return idx;
}

}  // namespace ftcost::calib
