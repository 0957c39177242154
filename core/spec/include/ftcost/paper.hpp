// The paper's analytical model, exactly as published (arXiv 2408.04693, §V; reconstruction in
// docs/sources/paper.md §3): Eq. (1) maximum batch size, Eq. (2) logarithmic throughput, its
// least-squares fit, and the cost rule behind Table IV.
#pragma once

#include "ftcost/error.hpp"
#include "ftcost/json_util.hpp"

#include <string>
#include <utility>
#include <vector>

namespace ftcost::paper {

// Eq. (1): MaxBSZ = floor(C0 * (GPU_mem - model_mem) / (seq_len * ((1 - C1) + C1 * sparsity))).
struct Eq1Coeffs {
  double c0 = 0;
  double c1 = 0;
  const char* label = "";
};
inline constexpr Eq1Coeffs kEq1MixtralPaper{82, 0.95, "Mixtral, paper text (C0=82, C1=0.95)"};
inline constexpr Eq1Coeffs kEq1MixtralCode{62, 0.89, "Mixtral, paper's Fig. 13 code (C0=62, C1=0.89)"};
inline constexpr Eq1Coeffs kEq1BlackMamba{83, 0.88, "BlackMamba, paper text (C0=83, C1=0.88)"};
inline constexpr double kMixtralModelMemGB = 23.35;   // Table I (4-bit QLoRA base)
inline constexpr double kBlackMambaModelMemGB = 5.6;  // Table I (bf16)

// Returns the unfloored value too, so that callers can show "27.9 -> 27".
struct Eq1Result {
  double raw = 0;
  long batch = 0;
};
Result<Eq1Result> eq1_max_batch(const Eq1Coeffs& c, double gpu_mem_gb, double model_mem_gb, double seq_len,
                                double sparsity);

// Eq. (2): throughput [queries/s] = C2 * ln(bsz^(1/(sparsity*C3))) + C4 = C2/(sparsity*C3) * ln(bsz) + C4.
inline constexpr double kC3Mixtral = 1.8;
inline constexpr double kC3BlackMamba = 2.5;
double eq2_throughput(double c2, double c3, double c4, double sparsity, double batch);

struct Point {
  double batch = 0;
  double throughput = 0;   // queries/s
  double sparsity = 0.25;  // fraction of experts active (0.25 sparse top-2 of 8, 1.0 dense)
};

struct Eq2Fit {
  double c2 = 0;    // slope coefficient
  double c3 = 0;    // fixed per model
  double c4 = 0;    // intercept
  double rmse = 0;  // as the paper's scripts compute it (dense points evaluated with plain ln(bsz))
  double rmse_exponent_everywhere = 0;  // dense points also with the 1/(s*C3) exponent
  std::size_t n = 0;
};

// Least squares for C2 and C4 with C3 fixed (closed form, linear in ln(bsz)/(s*C3)); like the released
// code, the fit uses the exponent for every point.
// Ranges: C3 in [1e-9, 1e12] (as `ftcost fit --c3`), batch 1..2^24 (as --batch), throughput in (0, 1e6]
// queries/s, sparsity in (0, 1]. A fit whose result would not be finite is an error (fit_failed).
constexpr double kMinC3 = 1e-9;
constexpr double kMaxC3 = 1e12;
constexpr long kMaxPointBatch = 1L << 24;
constexpr double kMaxPointThroughput = 1e6;
Result<Eq2Fit> fit_eq2(const std::vector<Point>& pts, double c3);

// Reads a CSV with a header naming at least `batch,throughput` (optional `sparsity`, default 0.25); a UTF-8
// byte-order mark before the header is skipped; batch follows --batch's rule (digits only, 1..2^24).
Result<std::vector<Point>> parse_points_csv(const std::string& text, const std::string& source);

// The paper's A40 measurements: the text of tests/data/reference/paper-a40.json (the only copy), compiled in
// by cmake/embed_text.cmake.
extern const char* const kPaperA40ReferenceJson;
// Sparsity of the paper's "sparse" runs in its Eq. (2) fits: 0.25 (top-2 of 8 experts; the scripts use it for
// BlackMamba too).
inline constexpr double kPaperSparseSparsity = 0.25;

// The A40 sweeps of paper.md §2.4 (the data the paper fitted), read from kPaperA40ReferenceJson.
struct Sweep {
  const char* id;       // "mixtral-cs", ...
  const char* model;    // "mixtral-8x7b" | "blackmamba-2.8b"
  const char* dataset;  // "cs15k" | "math14k"
  double c3;
  std::vector<Point> points;
};
const std::vector<Sweep>& a40_sweeps();

// Cost rule of Table IV: queries * epochs / throughput / 3600 * price.
double cost_usd(double queries, double epochs, double throughput_qps, double usd_per_hour);
double hours(double queries, double epochs, double throughput_qps);

struct Table4Row {
  std::string gpu;     // as printed in the paper
  std::string gpu_id;  // our id
  double memory_gb = 0;
  long max_batch = 0;
  double throughput_qps = 0;  // measured at the max batch (repo values)
  double usd_per_hour = 0;    // CUDO Compute, 2024
  double published_cost = 0;  // printed in the table
  double hours = 0;
  double cost = 0;  // recomputed
};
// Table IV: Mixtral-8x7B QLoRA, sparse, math data, 10 epochs; reproduced with 15,000 queries.
std::vector<Table4Row> table4(double queries = 15000, double epochs = 10);
json table4_json(double queries = 15000, double epochs = 10);

}  // namespace ftcost::paper
