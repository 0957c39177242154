// Dataset presets and sequence-length distributions.
#pragma once

#include "ftcost/error.hpp"
#include "ftcost/json_util.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ftcost {

// A length distribution given by quantile points (u, length), 0 = u_0 < ... < u_n = 1, read as a
// piecewise-linear quantile function.
// The longest sample a length file may hold (the --seq limit), tokens.
inline constexpr double kMaxSampleTokens = 4194304;  // 2^22

// One bin of a token-length histogram: `count` samples with lengths lo..hi tokens (inclusive), read as spread
// evenly over the bin (lo == hi: that exact length).
struct LengthBin {
  double lo = 1, hi = 1;
  double count = 0;
};

class LengthDistribution {
 public:
  static Result<LengthDistribution> from_quantiles(std::vector<std::pair<double, double>> pts,
                                                   const std::string& path);
  static LengthDistribution fixed(double length);
  // From a histogram: bins in increasing order, not overlapping, lengths >= 1, counts >= 0 with a positive
  // total. The quantile function rises linearly through each bin and jumps across gaps, so a histogram of
  // exact lengths gives the data's own mean and maxima. `path` names the array in errors.
  static Result<LengthDistribution> from_histogram(const std::vector<LengthBin>& bins,
                                                   const std::string& path);

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
  std::string tokenizer;
  bool own_data = false;  // the user's own length file (--dataset FILE), not a preset of the database
  std::vector<LengthBin> histogram;  // the bins it was read from (empty for a quantile table)
  // GRPO: the completions' lengths (completion_histogram), when the file gives them.
  bool has_completions = false;
  LengthDistribution completions = LengthDistribution::fixed(1);
  std::vector<LengthBin> completion_histogram;
  json to_json() const;
  // The compact ftcost.dataset/1 file of a histogram-based data set (schema, id, queries, histogram, ...):
  // what a long list of lengths reduces to, read back by parse_dataset_file with the same result.
  json to_file_json() const;
};

Result<Dataset> parse_dataset(const json& doc, const std::string& source);

// A histogram of whole-token lengths: one bin per distinct length while there are at most kExactLengthBins
// of them, else bins of about 1% relative width (so that a file of millions of samples gives a distribution
// of a few hundred points). Lengths must be >= 1.
inline constexpr std::size_t kExactLengthBins = 1024;
std::vector<LengthBin> bin_lengths(const std::vector<std::int64_t>& lengths);
// A histogram of more than kExactLengthBins bins (with samples) reduced by the same rule: finer bins merge
// into bins of about 1% relative width, so that an ftcost.dataset/1 histogram and the list it came from give
// the same distribution, and a file of 400,000 exact bins costs what its ~1,000 coarse bins cost in every
// estimate. Fewer bins are returned as they are.
std::vector<LengthBin> coarsen_bins(const std::vector<LengthBin>& bins);

// The user's own data (--dataset FILE, the calculator's upload), detected from the content:
//   - JSON of schema ftcost.dataset/1 with a "histogram" ([[lo, hi, count], ...]) or "quantiles"
//   (docs/dataset.md);
//   - plain text, one length in tokens per line ('#' comment lines allowed);
//   - CSV with a header row naming a length column (length, tokens, num_tokens, n_tokens, token_count,
//     length_tokens), one sample per row.
// Errors name the file and the line (text, CSV) or the JSON field. template_tokens is 0 unless the JSON file
// states it: the lengths are the user's own tokenized samples, with no prompt pipeline of the paper added.
Result<Dataset> parse_dataset_file(const std::string& text, const std::string& path);

}  // namespace ftcost
