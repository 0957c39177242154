// Reference measurements (tests/data/reference/*.json), predictions against them, error statistics,
// and the least-squares fit of a stack profile's free parameters to its training rows.
#pragma once

#include "ftcost/database.hpp"
#include "ftcost/estimate.hpp"

#include <string>
#include <vector>

namespace ftcost {

// bugprone-exception-escape (silenced below): its implicit destructor and moves destroy nlohmann::json
// members, whose noexcept destructor may allocate (a stack for nested values) inside the library.
// NOLINTNEXTLINE(bugprone-exception-escape)
struct RefRow {
  std::string id;
  // "training": the stack profile's parameters were fitted on it. "development": not fitted, but seen while
  // choosing the model's structure (so not an independent test). "validation": held out.
  std::string role;
  std::string group;
  Request request;     // `ftcost estimate` flags
  std::string metric;  // throughput_queries_per_s | step_time_s | stage_forward_s | stage_backward_s |
                       // stage_optimizer_s | max_batch_size | tokens_per_s | max_seq_len |
                       // peak_memory_gib (all of it, nvidia-smi) | peak_reserved_gib (without the CUDA
                       // context) | peak_allocated_gib (without context and allocator overhead)
  double measured = 0;
  std::string source;
  json parallel;  // multi-GPU options (parallel.hpp plan_from_json); null for a single-GPU row
};

// Every row needs a non-empty id, role, group, metric and source and a measured value in (0, 1e9]; a file
// needs at least one row, and ids must be unique within it. (A metric ftcost does not predict fails in
// predict() as invalid_value: bad input.)
Result<std::vector<RefRow>> parse_reference(const std::string& text, const std::string& source);
// Ids must also be unique across files: the first duplicate is reported with both places.
Status check_unique_ids(const std::vector<RefRow>& rows);

// The predicted value of a row's metric. `stack_override` replaces the request's stack profile.
Result<double> predict(const RefRow& row, const Database& db, const StackProfile* stack_override = nullptr);
Result<double> predict_resolved(const RefRow& row, const Inputs& in, const Database& db);

struct RowResult {
  const RefRow* row = nullptr;
  double predicted = 0;
  double rel_error = 0;        // (predicted - measured) / measured
  std::string error;           // non-empty when the prediction failed
  Errc code = Errc::internal;  // the failure's class when `error` is set (bad input in the row: exit 2)
};

struct GroupStats {
  std::string group;
  std::string role;
  int n = 0;
  double mape = 0;     // mean |relative error|
  double max_abs = 0;  // max |relative error|
  std::string worst_id;
};

std::vector<RowResult> evaluate(const std::vector<RefRow>& rows, const Database& db,
                                const StackProfile* stack_override = nullptr);
std::vector<GroupStats> group_stats(const std::vector<RowResult>& results);

// Fits host_us_per_kernel, gemm_efficiency, memory_efficiency, gemm_memory_efficiency, dequant_efficiency and
// optimizer_efficiency of `stack` to the training rows with a time/throughput metric (Nelder-Mead on the
// mean squared log error). Returns the fitted profile; `fit` records the provenance and residual.
Result<StackProfile> fit_stack(const std::vector<RefRow>& rows, const Database& db,
                               const StackProfile& stack);

// Fits the memory parameters the profile names in memory.fit_parameters (allocator_overhead_fraction,
// gc_retained_fraction, mlp_saved_intermediates), in that order, to the stack's training memory rows (maximum
// batch, longest context, peak memory) on GPUs it does not hold out: each parameter is scanned over its range
// on the rows it moves and no later parameter does, and set to the middle of the interval of least summed
// |log error|. `memory_fit` records the rows, intervals and the command. A profile without
// memory.fit_parameters is returned unchanged.
Result<StackProfile> fit_stack_memory(const std::vector<RefRow>& rows, const Database& db,
                                      const StackProfile& stack);

// The row's resolved inputs (its request through the option table).
Result<Inputs> resolve_row(const RefRow& row, const Database& db);

// ftcost's own prediction for a row of the paper's Table IV (Mixtral-8x7B QLoRA, sparse, math data, on the
// paper's stack hf-transformers-2024): maximum batch, throughput at it, time and cost at the paper's CUDO
// price.
struct Table4Prediction {
  std::string gpu_id;
  long max_batch = 0;
  double throughput_qps = 0;
  double hours = 0;
  double cost = 0;
  std::string error;  // non-empty when the job could not be estimated
};
std::vector<Table4Prediction> paper_table4_predictions(const Database& db, double queries, double epochs);
// paper::table4_json with each row's "ftcost" prediction beside the paper's arithmetic.
json paper_table4_with_predictions_json(const Database& db, double queries, double epochs);

}  // namespace ftcost
