// Token-to-expert assignments with a controlled load distribution (host-only).
#pragma once

#include "ftcost/error.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ftcost::calib {

// Relative expert loads of a named distribution, normalized to sum 1:
//   uniform           1/E each
//   mixtral_he_tuned  paper Fig. 11 (paper.md section 2.6), Mixtral, HumanEval-style set after tuning:
//                     53.2 53.3 68.3 47.9 37.7 65.6 47.9 37.6 tokens per query (E = 8 only)
//   mixtral_gs_tuned  same figure, GSM-style set after tuning: 80.9 80.6 98.3 71.0 73.9 88.6 79.7 69.7
//   skewed            Zipf, load of the i-th expert ~ 1 / (i+1)^1.2 (the hottest gets 43% of 8 experts' load)
Result<std::vector<double>> distribution_weights(const std::string& name, int experts);

// Exact per-expert assignment counts: sum = tokens * top_k, each <= tokens (an expert gets a token at
// most once); proportional to `weights` after capping (water-filling), rounded by largest remainder.
std::vector<std::int64_t> expert_counts(std::int64_t tokens, int top_k, const std::vector<double>& weights);

// Assignment [tokens x top_k] (row-major) with exactly `counts` per expert and distinct experts within a
// token; tokens are shuffled (seeded) so that an expert's tokens are not contiguous. Requires
// sum(counts) = tokens * top_k and every count <= tokens.
std::vector<std::int32_t> assign_experts(std::int64_t tokens, int top_k,
                                         const std::vector<std::int64_t>& counts, std::uint64_t seed);

}  // namespace ftcost::calib
