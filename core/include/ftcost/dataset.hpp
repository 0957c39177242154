// Dataset presets and sequence-length distributions.
#pragma once

#include "ftcost/error.hpp"
#include "ftcost/json_util.hpp"

#include <string>
#include <utility>
#include <vector>

namespace ftcost {

// A length distribution given by quantile points (u, length), 0 = u_0 < ... < u_n = 1, read as a
// piecewise-linear quantile function.
class LengthDistribution {
 public:
  static Result<LengthDistribution> from_quantiles(std::vector<std::pair<double, double>> points,
                                                   const std::string& path);
  static LengthDistribution fixed(double length);

  double quantile(double u) const;
  double mean() const;
  double max() const { return points_.back().second; }
  double min() const { return points_.front().second; }
  // E[max of n independent draws], each truncated to `cap` tokens: the expected length a batch is padded
  // to when padding to the longest sample (order statistic), ∫ min(Q(u), cap) d(u^n).
  double expected_max(double n, double cap) const;
  // E[min(L, cap)].
  double truncated_mean(double cap) const;
  const std::vector<std::pair<double, double>>& points() const { return points_; }

 private:
  std::vector<std::pair<double, double>> points_;
};

struct Dataset {
  std::string id;
  std::string display_name;
  double queries = 0;
  double queries_published = 0;
  LengthDistribution lengths = LengthDistribution::fixed(128);
  double median = 0;
  double template_tokens = 0;  // added to every sample by the prompt template
  std::string source;
  json to_json() const;
};

Result<Dataset> parse_dataset(const json& doc, const std::string& source);

}  // namespace ftcost
