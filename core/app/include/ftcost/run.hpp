// A user's own training run (`ftcost.run/1`, written by tools/ftcost_probe.py; docs/runs.md; the file's
// reader is ftcost/run_file.hpp in spec): the run resolved against the database, the refit of a stack
// profile's free parameters to the run's step times (and peak memory, where the run has it), and the
// adjusted profile that `ftcost estimate --run` applies.
#pragma once

#include "ftcost/database.hpp"
#include "ftcost/estimate.hpp"
#include "ftcost/run_file.hpp"
#include "ftcost/validate.hpp"

#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace ftcost {

// A run file resolved against the database: the record as the file states it (ftcost/run_file.hpp: source,
// recorder, GPU and model as recorded, software, training arguments, steps) with the database's GPU, the
// request and the stack profile the recorded versions point to.
// NOLINTNEXTLINE(bugprone-exception-escape): json members, as RunRecord
struct RunFile : RunRecord {
  std::string gpu_id;              // resolved against the database (gpu.id, or matched from gpu.name)
  Request request;                 // the run as `ftcost estimate` flags (model, gpu, method, ...)
  std::vector<std::string> notes;  // what the loader assumed
  // The shipped stack profile the recorded software versions (software.transformers, .trl) point to, and
  // why; empty when no rule applies (unsloth, torchtune, no versions): the estimate's default stack then.
  std::string software_stack;
  std::string software_stack_why;
};

// Parses and checks a run file (parse_run_record) and resolves it against the database: the GPU (gpu.id, or
// gpu.name matched to one GPU; gpu.memory_bytes and the steps' memory figures within its memory), the model
// preset, the stack profile of the recorded software, the request. Errors name the JSON field.
Result<RunFile> parse_run(const std::string& text, const std::string& source, const Database& db);
// The run file at `path`, read through `reader` and parsed: an unreadable file's error names --run, a bad
// file's names the file and its field ("PATH: steps[2].wall_s").
Result<RunFile> read_run(const std::string& path, const Database& db, const FileReader& reader);

// Resolves the run's request to Inputs (the recorded config.json is read through a reader of its own).
Result<Inputs> run_inputs(const RunFile& run, const Database& db);

// Predicted wall time of one run step record with the stack profile in `in` (count x (micro-batches'
// forward + recompute + backward, plus one optimizer step)).
double predict_run_step_s(const Inputs& in, const RunStep& step);
// Predicted torch.cuda.max_memory_allocated of a step: the memory model's components without the CUDA
// context and allocator overhead, at the step's largest micro-batch.
double predict_run_allocated_bytes(const Inputs& in, const RunStep& step);

struct RunFitParam {
  std::string name;
  std::string kind;  // "step-time" | "memory"
  double before = 0, value = 0;
  double sigma = 0;  // 1-sigma standard error (0 when not fitted)
  double ci95_lo = 0, ci95_hi = 0;
  bool fitted = false;
  bool at_bound = false;
  std::string note;  // why not fitted, or what bound it hit
};

// One timed step of a run: measured against predicted with the profile before and after the fit (what the
// calculator plots as "measured vs predicted for the run").
struct RunPoint {
  std::string file;
  std::int64_t step = 0;
  std::string shape;  // "4x512" or "2x(4x512)" with accumulation
  double measured_s = 0, before_s = 0, after_s = 0;
  double measured_alloc_bytes = -1, before_alloc_bytes = -1, after_alloc_bytes = -1;  // -1: no figure
};

struct RunFitResult {
  StackProfile stack;  // the adjusted profile; stack.fit holds the provenance
  std::vector<RunFitParam> params;
  std::size_t time_points = 0, memory_points = 0;
  // Distinct step shapes among the timed points, and step-time parameters fitted: with no more shapes than
  // parameters the fit passes through them and cannot tell its own error elsewhere (apply_runs then keeps
  // the profile's own range).
  std::size_t time_shapes = 0, time_params_fitted = 0;
  double rms_log_before = 0, rms_log_after = 0;  // step time, on the run's timed steps
  double mem_rel_before = 0, mem_rel_after = 0;  // mean |relative error| of max_memory_allocated
  std::vector<std::string> notes;
  std::vector<RunPoint> points;  // every timed step, in file order
  json to_json() const;
};

// Refits `stack`'s free parameters to the runs (all recorded on one GPU): step-time parameters
// (gemm_efficiency, memory_efficiency, host_us_per_kernel, dequant_efficiency with QLoRA,
// optimizer_efficiency) by Levenberg-Marquardt on the log step-time residuals, choosing only the
// parameters the runs can tell apart (the others stay as the profile has them); memory parameters
// (gc_retained_fraction with checkpointing, allocator_overhead_fraction from reserved - allocated) only
// from runs with memory figures. Standard errors from the residual scatter (t quantile for 95%).
Result<RunFitResult> fit_stack_to_runs(const std::vector<RunFile>& runs, const Database& db,
                                       const StackProfile& stack);

// `ftcost estimate --run FILE...` in three steps, so that a resolution never fits (issue 40): the option
// only loads and checks (check_runs_for), the refit depends on the runs and the profile alone
// (fit_stack_to_runs, once; RunFitCache keeps it across the calculator's changes), and apply_run_fit sets
// it on the estimate after the request is resolved.
//
// check_runs_for: the runs must be for the estimate's GPU (else an error naming `<file>: gpu`) and the step
// model (--model-kind step).
Status check_runs_for(const Inputs& in, const std::vector<RunFile>& runs);
// apply_run_fit: `fit` (of in.stack to `runs`) as the estimate's profile, with stack.fit.rms_log_residual
// set to the run residual combined with the fitted parameters' uncertainty propagated to this
// configuration — at least the profile's own range when the runs leave no degrees of freedom (time_shapes
// <= time_params_fitted: one step, or identical ones), never a zero-width range from a fit through its
// points. A parameter fitted at the edge of its physical range is warned about.
void apply_run_fit(Inputs& in, RunFitResult fit, const std::vector<RunFile>& runs);
// All three at once (resolve_request, after the last option): check, fit in.stack to the runs through
// run_fit_cache(), apply. Returns the fit as well.
Result<RunFitResult> apply_runs(Inputs& in, const std::vector<RunFile>& runs, const Database& db);

// The fits of a profile to runs, kept while the runs, the profile and the database are the same (the
// calculator resolves its job at every change; the fit depends on neither the job nor the change). The key
// is the database's address, the runs' content (source, GPU, request, config.json, shapes, times, memory
// figures) and the profile's id, name, version, source digest and fittable parameters, exactly.
// resolve_request keeps one for the process (run_fit_cache()).
class RunFitCache {
 public:
  Result<RunFitResult> fit(const std::vector<RunFile>& runs, const Database& db, const StackProfile& stack);
  void clear();
  std::size_t fits_computed() const { return computed_; }

 private:
  std::mutex m_;                                            // the core runs single-threaded; a caller may not
  std::vector<std::pair<std::string, RunFitResult>> kept_;  // the last few, newest last
  std::size_t computed_ = 0;
};

// The process's fits (resolve_request's): one estimate, its sweep, scaling series and comparisons share
// a fit.
RunFitCache& run_fit_cache();

// The `run` job option's work (`ftcost estimate --run FILE`; the calculator's upload): reads the run file
// through `reader`, parses it against `db` and checks it against `in` (check_runs_for). Errors name "--run"
// (no reader, unreadable file) or "<file>: <field>". The refit is not made here: resolve_request applies it
// once every option is resolved (Resolution::runs).
Result<RunFile> load_run_for(const Inputs& in, const std::string& path, const Database& db,
                             const FileReader& reader);

// The stack profile of `db` for recorded package versions (software: {"transformers": "5.17.0", ...}): the
// deciding package is axolotl or LLaMA-Factory (llamafactory) when recorded (then transformers must be
// recorded too), else trl, else transformers (a plain Trainer: the model's own loss); the profile whose
// software_versions range covers its version and transformers' is the answer (gpu-db/stacks/; db check keeps
// the ranges from overlapping). Unsloth or torchtune in the list, no transformers version, or a version older
// than every range: "" (the estimate's default stack). `why` says which versions decided. The shipped
// ranges: TRL >= 1.4 -> hf-trl-2026, TRL 0.12-1.3 -> hf-trl-2025 with transformers >= 4.49 else
// hf-trl-2024q4, TRL 0.7-0.11 -> hf-trl-2024q1; transformers alone >= 5 -> hf-trainer-2026, 4.49-4.x ->
// hf-trl-2025, 4.46-4.48 -> hf-trl-2024q4, 4.36-4.45 -> hf-trl-2024q1; axolotl / LLaMA-Factory by
// transformers: 4.49+ -> axolotl-2025 / llamafactory-2025, older -> axolotl-2024q4 / llamafactory-2024,
// 5+ -> hf-trainer-2026.
std::string stack_for_software(const json& software, const Database& db, std::string& why);
// The same over the embedded database.
std::string stack_for_software(const json& software, std::string& why);

// A contributed run (gpu-db/runs/<gpu-id>/) as reference rows of `ftcost validate` (role "validation",
// not fitted), per batch shape of its timed single-micro-batch steps: a step_time_s row (the median wall
// time of that shape) and, where the steps carry memory figures, peak_allocated_gib and peak_reserved_gib
// rows (the medians of max_memory_allocated / max_memory_reserved). The rows use the stack the recorded
// software points to (stack_for_software), else the default. Needs a model preset (a row's request cannot
// carry a config.json); empty otherwise.
std::vector<RefRow> run_reference_rows(const RunFile& run);

}  // namespace ftcost
