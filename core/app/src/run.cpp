#include "ftcost/memory.hpp"
#include "ftcost/units.hpp"
#include "run_internal.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <tuple>
#include <utility>

namespace ftcost {

using run_detail::kConfigPath;
using run_detail::MicroCache;
using run_detail::MicroTime;
using run_detail::step_s_cached;

namespace {

MicroTime micro_time(const Inputs& in, std::int64_t b, double len) {
  const StepTime t =
      step_model(in.model, in.workload, in.stack, in.gpu, in.calibration.get(), b, len, in.expert_shares);
  MicroTime out;
  out.opt = t.by_stage[static_cast<std::size_t>(Stage::optimizer)];
  out.fwd_bwd = t.total_s - out.opt;
  return out;
}

}  // namespace

namespace run_detail {

double step_s_cached(const Inputs& in, const RunStep& step, MicroCache& cache) {
  double fb = 0;
  double opt = 0;
  for (const auto& mb : step.micro) {
    auto key = std::make_pair(mb.batch, mb.seq_len);
    auto it = cache.find(key);
    if (it == cache.end()) it = cache.emplace(key, micro_time(in, mb.batch, mb.seq_len)).first;
    fb += it->second.fwd_bwd;
    opt = it->second.opt;
  }
  return static_cast<double>(step.count) * (fb + opt);
}

}  // namespace run_detail

double predict_run_step_s(const Inputs& in, const RunStep& step) {
  MicroCache cache;
  return step_s_cached(in, step, cache);
}

double predict_run_allocated_bytes(const Inputs& in, const RunStep& step) {
  double best = 0;
  for (const auto& mb : step.micro) {
    const MemoryBreakdown m = memory_for_batch(in.model, in.workload, in.stack, mb.batch, mb.seq_len);
    best = std::max(best, m.total() - m.cuda_context - m.allocator_overhead);
  }
  return best;
}

std::vector<RefRow> run_reference_rows(const RunFile& run) {
  std::vector<RefRow> out;
  auto it = run.request.find("model");
  if (it == run.request.end() || it->second == kConfigPath) return out;
  struct Shape {
    std::vector<double> walls, allocated, reserved;
  };
  std::map<std::pair<std::int64_t, double>, Shape> by_shape;
  for (const auto& s : run.steps) {
    if (s.warmup || s.count != 1 || s.micro.size() != 1 || s.wall_s <= 0) continue;
    Shape& sh = by_shape[{s.micro[0].batch, s.micro[0].seq_len}];
    sh.walls.push_back(s.wall_s);
    if (s.max_allocated_bytes >= 0) sh.allocated.push_back(s.max_allocated_bytes);
    if (s.max_reserved_bytes >= 0) sh.reserved.push_back(s.max_reserved_bytes);
  }
  std::string stem = run.source;
  stem = stem.substr(stem.find_last_of('/') + 1);
  stem = stem.substr(0, stem.rfind(".json"));
  const std::string recorder =
      run.recorder_source.empty() ? std::string("ftcost_probe.py") : run.recorder_source;
  const std::string stack_note = run.software_stack.empty()
                                     ? std::string()
                                     : "; stack " + run.software_stack + " (" + run.software_stack_why + ")";
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t k = v.size();
    return k % 2 ? v[k / 2] : 0.5 * (v[k / 2 - 1] + v[k / 2]);
  };
  // "<file>: median <what> of <n> step(s) recorded by <recorder>[; stack <id> (<why>)]"
  auto describe = [&](const std::string& what, std::size_t n) {
    std::string s = run.source;
    s += ": median ";
    s += what;
    s += " of ";
    s += std::to_string(n);
    s += " step(s) recorded by ";
    s += recorder;
    s += stack_note;
    return s;
  };
  for (auto& [shape, sh] : by_shape) {
    RefRow row;
    row.id = "run-" + run.gpu_id + "-" + stem + "-b" + std::to_string(shape.first) + "-s" +
             std::to_string(static_cast<long long>(shape.second));
    row.role = "validation";
    row.group = "contributed runs (gpu-db/runs, not fitted)";
    row.request = run.request;
    row.request["batch"] = std::to_string(shape.first);
    row.request["seq"] = std::to_string(static_cast<long long>(shape.second));
    if (!run.software_stack.empty()) row.request["stack"] = run.software_stack;
    row.metric = "step_time_s";
    row.measured = median(sh.walls);
    row.source = describe("wall time", sh.walls.size());
    out.push_back(row);
    // Peak memory of the same steps, as torch's counters see it (no CUDA context; reserved = allocated +
    // the caching allocator's blocks).
    for (const auto& [values, metric, what] :
         {std::make_tuple(&sh.allocated, "peak_allocated_gib", "max_memory_allocated"),
          std::make_tuple(&sh.reserved, "peak_reserved_gib", "max_memory_reserved")}) {
      if (values->empty()) continue;
      RefRow mem = row;
      mem.id = row.id + (std::string(metric) == "peak_allocated_gib" ? "-allocated" : "-reserved");
      mem.group = "contributed runs, memory (gpu-db/runs, not fitted)";
      mem.metric = metric;
      mem.measured = median(*values) / kGiB;
      mem.source = describe(what, values->size());
      out.push_back(mem);
    }
  }
  return out;
}

Status check_runs_for(const Inputs& in, const std::vector<RunFile>& runs) {
  if (runs.empty()) return make_error(Errc::missing_field, "--run", "give at least one run file");
  if (runs[0].gpu_id != in.gpu.id)
    return make_error(Errc::invalid_value, runs[0].source + ": gpu",
                      "the run was recorded on " + runs[0].gpu_id + ", this estimate is for " + in.gpu.id +
                          ": a run calibrates the GPU it ran on (estimate with --gpu " + runs[0].gpu_id +
                          ", or fit a profile with fit-stack --run and read its parameters as a guide)");
  if (in.model_kind != "step")
    return make_error(Errc::invalid_value, "--run", "applies to the step model (--model-kind step) only");
  return Ok{};
}

void apply_run_fit(Inputs& in, RunFitResult fit, const std::vector<RunFile>& runs) {
  // Uncertainty at this configuration: the run residual and the fitted parameters' error bars
  // propagated through the step model at the estimate's batch.
  Inputs probe = in;
  probe.stack = fit.stack;
  double prop2 = 0;
  auto mb = max_batch_size(probe.model, probe.workload, probe.stack, probe.gpu);
  const std::int64_t b = in.workload.batch > 0 ? in.workload.batch : std::max<std::int64_t>(mb.batch, 1);
  const double len = in.workload.mean_padded_len(b);
  auto step_s = [&](const StackProfile& s) {
    probe.stack = s;
    return step_model(probe.model, probe.workload, s, probe.gpu, probe.calibration.get(), b, len,
                      probe.expert_shares)
        .total_s;
  };
  const double t0 = step_s(fit.stack);
  for (const auto& p : fit.params) {
    if (!p.fitted || p.kind != "step-time" || p.sigma <= 0) continue;
    for (const fit::FitParam* kp : run_detail::time_params()) {
      if (p.name != kp->name) continue;
      StackProfile s = fit.stack;
      s.*(kp->field) = std::min(kp->hi, std::max(kp->lo, p.value + p.sigma));
      const double d = std::log(step_s(s) / t0);
      prop2 += d * d;
    }
  }
  double total = std::sqrt(fit.rms_log_after * fit.rms_log_after + prop2);
  if (fit.time_shapes <= fit.time_params_fitted) {
    // A fit through as many shapes as parameters (one step, identical steps) has a zero residual and no
    // error bars: it says nothing of its error here, so the profile's own range stands (issue 39 W6).
    const double own = std::log1p(step_range_fraction(in));  // in.stack: the profile before the run
    if (total < own) {
      total = own;
      in.warnings.push_back("the run has " + std::to_string(fit.time_shapes) + " step shape(s) for " +
                            std::to_string(fit.time_params_fitted) +
                            " fitted step-time parameter(s): no degrees of freedom to measure the fit's "
                            "error, so the range is " +
                            in.stack.id +
                            "'s own (record steps of other batch sizes or lengths to narrow it)");
    }
  }
  for (const auto& p : fit.params)
    if (p.fitted && p.at_bound)
      in.warnings.push_back(p.name + " from the run sits at its bound (" +
                            json(std::round(p.value * 1e4) / 1e4).dump() + ", " + p.note +
                            "): the estimate uses the bound; check the run's " +
                            (p.kind == "memory" ? "memory figures" : "step times"));
  fit.stack.fit["rms_log_residual"] = total;
  fit.stack.fit["rms_log_residual_on_run"] = fit.rms_log_after;
  fit.stack.fit["parameter_uncertainty_at_this_config"] = std::sqrt(prop2);
  in.stack = fit.stack;
  const std::string memory_part =
      fit.memory_points > 0
          ? "; max_memory_allocated error " + json(std::round(fit.mem_rel_before * 1000) / 10).dump() +
                "% -> " + json(std::round(fit.mem_rel_after * 1000) / 10).dump() + "%"
          : "; memory not refitted (the run has no memory figures: steps[].max_memory_allocated_bytes)";
  in.warnings.push_back("stack refitted to " + std::to_string(runs.size()) + " run(s) (" + runs[0].source +
                        (runs.size() > 1 ? ", ..." : "") + "): step-time error on the run " +
                        json(std::round(fit.rms_log_before * 1000) / 10).dump() + "% -> " +
                        json(std::round(fit.rms_log_after * 1000) / 10).dump() + "% (RMS log)" + memory_part);
}

Result<RunFitResult> apply_runs(Inputs& in, const std::vector<RunFile>& runs, const Database& db) {
  FTCOST_CHECK(check_runs_for(in, runs));
  FTCOST_TRY(fit, run_fit_cache().fit(runs, db, in.stack));
  apply_run_fit(in, fit, runs);
  return fit;
}

namespace {

// The cache key of a fit: every field of the runs the fit reads (source, GPU, recorder, request, config.json,
// what the file lacks and the loader assumed, the steps),
// and the profile's id, name, version, the digest of the JSON it was read from and its fittable parameters
// (which a caller may have changed since), printed exactly (%.17g).
std::string fit_key(const std::vector<RunFile>& runs, const StackProfile& stack) {
  std::string k = stack.id + "|" + stack.display_name + "|" + stack.version;
  char b[48];
  std::snprintf(b, sizeof b, "|%016llx", static_cast<unsigned long long>(stack.source_digest));
  k += b;
  auto num = [&](double v) {
    std::snprintf(b, sizeof b, "|%.17g", v);
    k += b;
  };
  for (const auto& p : fit::fit_params()) num(stack.*(p.field));
  for (const auto& r : runs) {
    auto text = [&](const std::string& t) { k.append("|").append(t); };
    for (const std::string& t : {r.source, r.gpu_id, r.recorder_source, r.model_config.dump()}) text(t);
    for (const auto& [key, value] : r.request) k.append("|").append(key).append("=").append(value);
    for (const auto* list : {&r.lacks, &r.notes})
      for (const auto& item : *list) text(item);
    for (const auto& st : r.steps) {
      num(static_cast<double>(st.step));
      num(st.wall_s);
      num(static_cast<double>(st.count));
      num(st.warmup ? 1 : 0);
      num(st.max_allocated_bytes);
      num(st.max_reserved_bytes);
      for (const auto& mb : st.micro) {
        num(static_cast<double>(mb.batch));
        num(mb.seq_len);
        num(mb.tokens);
      }
    }
  }
  return k;
}

}  // namespace

Result<RunFitResult> RunFitCache::fit(const std::vector<RunFile>& runs, const Database& db,
                                      const StackProfile& stack) {
  char at[32];
  std::snprintf(at, sizeof at, "%p|", static_cast<const void*>(&db));
  const std::string key = at + fit_key(runs, stack);
  const std::lock_guard<std::mutex> lock(m_);
  for (const auto& [k, f] : kept_)
    if (k == key) return f;
  FTCOST_TRY(f, fit_stack_to_runs(runs, db, stack));
  ++computed_;
  constexpr std::size_t kKept = 4;
  if (kept_.size() == kKept) kept_.erase(kept_.begin());
  kept_.emplace_back(key, f);
  return f;
}

Result<RunFile> read_run(const std::string& path, const Database& db, const FileReader& reader) {
  auto text = reader(path);
  if (!text.ok()) return make_error(Errc::io_error, "--run", text.error().to_string());
  auto run = parse_run(text.value(), path, db);
  if (!run.ok()) {
    Error e = run.error();
    e.field = path + ": " + e.field;
    return e;
  }
  return run;
}

void RunFitCache::clear() {
  const std::lock_guard<std::mutex> lock(m_);
  kept_.clear();
}

RunFitCache& run_fit_cache() {
  static RunFitCache cache;
  return cache;
}

Result<RunFile> load_run_for(const Inputs& in, const std::string& path, const Database& db,
                             const FileReader& reader) {
  if (!reader)
    return make_error(Errc::io_error, "--run",
                      "file paths are not available here; load the run file in the UI");
  FTCOST_TRY(run, read_run(path, db, reader));
  FTCOST_CHECK(check_runs_for(in, {run}));
  return run;
}

}  // namespace ftcost
