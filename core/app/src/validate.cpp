#include "ftcost/validate.hpp"

#include "ftcost/fit.hpp"
#include "ftcost/paper.hpp"
#include "ftcost/parallel.hpp"
#include "ftcost/units.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>

namespace ftcost {

namespace {

// The largest measured value a row may hold: beyond every metric's physical range (seconds per step,
// queries/s, microseconds per call, batch sizes), far from overflow in the error statistics.
constexpr double kMaxMeasured = 1e9;

Result<std::string> nonempty_string(const json& r, const char* key, const std::string& where) {
  FTCOST_TRY(v, get_string(r, key, where));
  if (v.find_first_not_of(" \t\r\n") == std::string::npos)
    return make_error(Errc::invalid_value, where + "." + key, "must not be empty");
  return v;
}

}  // namespace

Result<std::vector<RefRow>> parse_reference(const std::string& text, const std::string& source) {
  FTCOST_TRY(doc, parse_json_text(text, source));
  if (!doc.is_object()) return make_error(Errc::wrong_type, source, "must be a JSON object");
  FTCOST_TRY(schema, get_string(doc, "schema", ""));
  if (schema != "ftcost.reference/1")
    return make_error(Errc::schema_mismatch, source + ": schema",
                      "expected \"ftcost.reference/1\", got \"" + schema + "\"");
  if (!has(doc, "rows") || !doc.at("rows").is_array())
    return make_error(Errc::missing_field, source + ": rows", "required array");
  std::vector<RefRow> out;
  const json& rows = doc.at("rows");
  if (rows.empty()) return make_error(Errc::invalid_value, source + ": rows", "must hold at least one row");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::string p = "rows[" + std::to_string(i) + "]";
    const std::string where = std::string(source).append(": ").append(p);
    const json& r = rows[i];
    if (!r.is_object()) return make_error(Errc::wrong_type, where, "must be a JSON object");
    RefRow row;
    FTCOST_TRY(id, nonempty_string(r, "id", where));
    FTCOST_TRY(role, nonempty_string(r, "role", where));
    FTCOST_TRY(group, nonempty_string(r, "group", where));
    FTCOST_TRY(metric, nonempty_string(r, "metric", where));
    FTCOST_TRY(src, nonempty_string(r, "source", where));
    FTCOST_TRY(measured, get_number(r, "measured", where));
    if (role != "training" && role != "validation" && role != "development")
      return make_error(Errc::invalid_value, where + ".role", "must be training, development or validation");
    if (!(measured > 0) || !(measured <= kMaxMeasured))
      return make_error(Errc::out_of_range, where + ".measured",
                        "must be > 0 and at most 1e9, got " + json(measured).dump());
    if (!has(r, "request") || !r.at("request").is_object())
      return make_error(Errc::missing_field, where + ".request", "required object");
    auto req = request_from_json(r.at("request"));
    if (!req.ok()) {
      Error e = req.error();
      e.field = where + ".request" + (e.field.empty() ? "" : "." + e.field);
      return e;
    }
    for (const auto& prev : out)
      if (prev.id == id) return make_error(Errc::invalid_value, where + ".id", "duplicate id \"" + id + "\"");
    row.id = id;
    row.role = role;
    row.group = group;
    row.metric = metric;
    row.measured = measured;
    row.source = src;
    row.request = req.value();
    // a row that names no stack was measured on the paper's software (the estimate's default is another)
    if (row.request.count("stack") == 0) row.request["stack"] = kPaperStackId;
    if (has(r, "parallel")) {
      if (!r.at("parallel").is_object())
        return make_error(Errc::wrong_type, where + ".parallel", "must be an object");
      row.parallel = r.at("parallel");
    }
    out.push_back(row);
  }
  return out;
}

Status check_unique_ids(const std::vector<RefRow>& rows) {
  std::map<std::string, const RefRow*> seen;
  for (const auto& r : rows) {
    auto [it, fresh] = seen.emplace(r.id, &r);
    if (!fresh)
      return make_error(Errc::invalid_value, "id",
                        "duplicate reference row id \"" + r.id + "\" (in two files)");
  }
  return Ok{};
}

namespace {
// A multi-GPU row's metric of a job that fits: per-rank step and memory, the whole job's throughput.
Result<double> parallel_metric(const RefRow& row, const ParallelEstimate& pe) {
  const std::string& m = row.metric;
  if (m == "step_time_s") return pe.step_s;
  if (m == "throughput_tokens_per_s") return pe.throughput_tps;
  if (m == "throughput_queries_per_s") return pe.throughput_qps;
  if (m == "peak_reserved_gib")  // per rank, on the GPU (paged states yield), without the CUDA context
    return (pe.memory.on_gpu(pe.usable_bytes) - pe.memory.base.cuda_context) / kGiB;
  return make_error(Errc::invalid_value, row.id + ": metric", "\"" + m + "\" is not a multi-GPU metric");
}
}  // namespace

Result<double> predict_resolved(const RefRow& row, const Inputs& in, const Database& db) {
  if (!row.parallel.is_null()) {
    // Multi-GPU rows: per-rank batch and memory, the whole job's throughput, the optimizer step's time.
    FTCOST_TRY(plan, plan_from_json(row.parallel, in, db));
    FTCOST_TRY(pe, estimate_parallel(in, plan, db));
    const std::string& m = row.metric;
    if (m == "max_batch_size") return static_cast<double>(pe.max_micro_batch);
    if (pe.micro_batch <= 0)
      return make_error(Errc::does_not_fit, row.id, "does not fit in the model's per-rank memory estimate");
    return parallel_metric(row, pe);
  }
  FTCOST_TRY(e, estimate(in, db));
  const std::string& m = row.metric;
  if (m == "max_batch_size") return static_cast<double>(e.max_batch.batch);
  if (m == "max_seq_len") return e.max_seq.seq_len;
  if (m == "peak_memory_gib" || m == "peak_reserved_gib" || m == "peak_allocated_gib") {
    if (e.batch <= 0)
      return make_error(Errc::does_not_fit, row.id, "does not fit in the model's memory estimate");
    double b = e.memory.total();
    if (m != "peak_memory_gib") b -= e.memory.cuda_context;
    if (m == "peak_allocated_gib") b -= e.memory.allocator_overhead;
    return b / kGiB;
  }
  if (e.batch <= 0)
    return make_error(Errc::does_not_fit, row.id, "does not fit in the model's memory estimate");
  if (m == "throughput_queries_per_s") return e.throughput_qps;
  if (m == "step_time_s") return e.step.total_s;
  if (m == "tokens_per_s") return e.throughput_tps;
  if (e.step.model != "step-model")
    return make_error(Errc::invalid_value, row.id, "stage metrics need the step model");
  if (m == "stage_forward_s") return e.step.by_stage[static_cast<std::size_t>(Stage::forward)];
  if (m == "stage_backward_s")  // the paper's backward bar includes the checkpointing recompute
    return e.step.by_stage[static_cast<std::size_t>(Stage::backward)] +
           e.step.by_stage[static_cast<std::size_t>(Stage::recompute)];
  if (m == "stage_optimizer_s") return e.step.by_stage[static_cast<std::size_t>(Stage::optimizer)];
  if (m == "step_fwd_bwd_s")  // a step without the optimizer: forward, recompute and backward
    return e.step.total_s - e.step.by_stage[static_cast<std::size_t>(Stage::optimizer)];
  if (m == "moe_expert_gemm_call_us" || m == "moe_dequant_call_us") {
    // Kernel-level: forward device time of one expert invocation (the paper's Fig. 6 "per call"), i.e. the
    // forward MoE ops of that class over (MoE layers x experts that receive tokens).
    const ModelSpec& md = in.model;
    if (!md.is_moe()) return make_error(Errc::invalid_value, row.id + ": metric", m + " needs an MoE model");
    const bool gemm = m == "moe_expert_gemm_call_us";
    double t = 0;
    for (const auto& op : e.step.ops) {
      if (op.stage != Stage::forward || op.layer != LayerType::moe) continue;
      if (gemm ? op.kclass == KernelClass::expert_gemm : op.kclass == KernelClass::dequant) t += op.gpu_s;
    }
    const auto experts = static_cast<double>(md.moe.experts);
    const auto k = static_cast<double>(in.workload.active_experts(md));
    const double tokens = static_cast<double>(e.batch) * e.padded_len;
    const double called = experts * (1.0 - std::pow(1.0 - k / experts, tokens));  // uniform routing
    const auto layers = static_cast<double>(md.layers_with(Ffn::moe));
    return t / (layers * called) * 1e6;
  }
  return make_error(Errc::invalid_value, row.id + ": metric", "unknown metric \"" + m + "\"");
}

Result<Inputs> resolve_row(const RefRow& row, const Database& db) {
  return resolve_request(row.request, db, nullptr);
}

Result<double> predict(const RefRow& row, const Database& db, const StackProfile* stack_override) {
  FTCOST_TRY(in, resolve_row(row, db));
  if (stack_override != nullptr) in.stack = *stack_override;
  return predict_resolved(row, in, db);
}

std::vector<RowResult> evaluate(const std::vector<RefRow>& rows, const Database& db,
                                const StackProfile* stack_override) {
  std::vector<RowResult> out;
  for (const auto& r : rows) {
    RowResult res;
    res.row = &r;
    auto p = predict(r, db, stack_override);
    if (!p.ok()) {
      res.error = p.error().to_string();
      res.code = p.error().code;
    } else {
      res.predicted = p.value();
      res.rel_error = (res.predicted - r.measured) / r.measured;
    }
    out.push_back(res);
  }
  return out;
}

std::vector<GroupStats> group_stats(const std::vector<RowResult>& results) {
  std::vector<GroupStats> out;
  std::map<std::string, std::size_t> index;
  auto add = [&](const std::string& key, const std::string& role, const RowResult& r) {
    auto it = index.find(key);
    if (it == index.end()) {
      index[key] = out.size();
      GroupStats g;
      g.group = key;
      g.role = role;
      out.push_back(g);
      it = index.find(key);
    }
    GroupStats& g = out[it->second];
    const double e = r.error.empty() ? std::fabs(r.rel_error) : 1.0;
    g.mape = (g.mape * g.n + e) / (g.n + 1);
    ++g.n;
    if (e >= g.max_abs) {
      g.max_abs = e;
      g.worst_id = r.row->id;
    }
  };
  for (const auto& r : results) {
    add(r.row->group, r.row->role, r);
    add("all " + r.row->role + " rows", r.row->role, r);
  }
  return out;
}

namespace {

using fit::FitKind;
using fit::FitParam;

bool is_memory_metric(const std::string& m) {
  return m == "max_batch_size" || m == "max_seq_len" || m.rfind("peak_", 0) == 0;
}

// GPUs held out from a stack's fit: those of its validation and development rows, except the GPUs the profile
// declares it is fitted on (fit.gpus; the paper's A40 carries both the fit and a held-out sequence-length
// ablation). A training row on a held-out GPU would leak the test into the fit. GPU id -> a held-out row.
std::map<std::string, std::string> held_out_gpus(const std::vector<RefRow>& rows, const Database& db,
                                                 const StackProfile& stack) {
  const std::vector<std::string> declared = stack_fit_gpus(stack);
  std::map<std::string, std::string> held_out;
  for (const auto& r : rows) {
    if (r.role == "training") continue;
    auto in = resolve_row(r, db);
    if (!in.ok() || in->stack.id != stack.id) continue;
    if (std::find(declared.begin(), declared.end(), in->gpu.id) == declared.end())
      held_out.emplace(in->gpu.id, r.id);
  }
  return held_out;
}

// A training row's inputs; an error when the row is on a GPU the stack holds out.
Result<Inputs> training_row_inputs(const RefRow& r, const Database& db, const StackProfile& stack,
                                   const std::map<std::string, std::string>& held_out) {
  FTCOST_TRY(in, resolve_row(r, db));
  if (in.stack.id != stack.id) return in;
  auto h = held_out.find(in.gpu.id);
  if (h != held_out.end())
    return make_error(Errc::invalid_value, "rows",
                      "training row \"" + r.id + "\" is on " + in.gpu.id + ", a GPU that " + stack.id +
                          " holds out (row \"" + h->second +
                          "\" tests it): fitting on it would leak the test into the fit; drop the row, "
                          "or relabel the held-out rows");
  return in;
}

constexpr int kMemScanSteps = 2000;

struct MemRow {
  const RefRow* row;
  Inputs in;
};

// A row's prediction under `s`; NaN when it cannot be predicted (does not fit), so that two failures compare
// as "no change".
double mem_predict(const MemRow& r, const StackProfile& s, const Database& db) {
  Inputs in = r.in;
  in.stack = s;
  auto v = predict_resolved(*r.row, in, db);
  return v.ok() ? v.value() : std::nan("");
}
bool same_prediction(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }
// Does moving `p` across its range change the row's prediction?
bool moved_by(const MemRow& r, const StackProfile& s, const FitParam& p, const Database& db) {
  StackProfile lo = s;
  StackProfile hi = s;
  lo.*(p.field) = p.lo;
  hi.*(p.field) = p.hi;
  return !same_prediction(mem_predict(r, lo, db), mem_predict(r, hi, db));
}
// Summed |log(predicted / measured)| of the rows; a row that cannot be predicted costs 5 (a factor e^5).
double mem_loss(const std::vector<const MemRow*>& rs, const StackProfile& s, const Database& db) {
  double loss = 0;
  for (const MemRow* r : rs) {
    const double v = mem_predict(*r, s, db);
    loss += (std::isnan(v) || !(v > 0)) ? 5.0 : std::fabs(std::log(v / r->row->measured));
  }
  return loss;
}

// One parameter's scan: the rows it moves (and no later parameter does), the grid values with the least loss
// (the longest run of them), and its middle.
json scan_memory_param(const std::vector<MemRow>& rows, StackProfile& s, std::size_t k,
                       const std::vector<const FitParam*>& params, const Database& db) {
  const FitParam& p = *params[k];
  std::vector<const MemRow*> used;
  std::set<std::string> gpus;
  json ids = json::array();
  for (const auto& r : rows) {
    if (!moved_by(r, s, p, db)) continue;
    bool later = false;
    for (std::size_t j = k + 1; j < params.size(); ++j) later = later || moved_by(r, s, *params[j], db);
    if (later) continue;
    used.push_back(&r);
    gpus.insert(r.in.gpu.id);
    ids.push_back(r.row->id);
  }
  if (used.empty())  // rows of throughput only (e.g. a user's --dir): the value stays, and the step says so
    return json{
        {"parameter", p.name},
        {"value", s.*(p.field)},
        {"kept", "no training memory row moves it without a later parameter also moving: not refitted"},
        {"rows", json::array()}};
  const int steps = p.count ? static_cast<int>(p.hi - p.lo) : kMemScanSteps;
  std::vector<double> loss(static_cast<std::size_t>(steps) + 1);
  const double step = (p.hi - p.lo) / steps;
  for (int i = 0; i <= steps; ++i) {
    s.*(p.field) = p.lo + step * i;
    loss[static_cast<std::size_t>(i)] = mem_loss(used, s, db);
  }
  const double best = *std::min_element(loss.begin(), loss.end());
  int run_start = 0;
  int best_start = 0;
  int best_len = 0;
  for (int i = 0; i <= steps; ++i) {
    if (loss[static_cast<std::size_t>(i)] > best + 1e-9) {
      run_start = i + 1;
      continue;
    }
    if (i - run_start + 1 > best_len) {
      best_len = i - run_start + 1;
      best_start = run_start;
    }
  }
  const double a = p.lo + step * best_start;
  const double b = p.lo + step * (best_start + best_len - 1);
  // The interval's middle; a count takes the whole number at (or just below) it.
  s.*(p.field) = p.count ? std::floor(0.5 * (a + b)) : 0.5 * (a + b);
  // A count is written as a whole number (4, not 4.0), as in the profiles.
  const json value = p.count ? json(static_cast<long long>(s.*(p.field))) : json(s.*(p.field));
  return json{{"parameter", p.name}, {"value", value},
              {"interval", {a, b}},  {"sum_abs_log_error", best},
              {"rows", ids},         {"gpus", std::vector<std::string>(gpus.begin(), gpus.end())}};
}
}  // namespace

Result<StackProfile> fit_stack(const std::vector<RefRow>& rows, const Database& db,
                               const StackProfile& stack) {
  struct Prepared {
    const RefRow* row;
    Inputs in;
  };
  // GPUs held out from this stack's fit: those of its validation and development rows, except the GPUs the
  // profile declares it is fitted on (fit.gpus; the paper's A40 carries both the fit and a held-out
  // sequence-length ablation). A training row on a held-out GPU would leak the test into the fit.
  const std::map<std::string, std::string> held_out = held_out_gpus(rows, db, stack);
  std::vector<Prepared> prep;
  std::set<std::string> used_gpus;
  for (const auto& r : rows) {
    if (r.role != "training" || is_memory_metric(r.metric)) continue;
    FTCOST_TRY(in, training_row_inputs(r, db, stack, held_out));
    if (in.stack.id != stack.id) continue;
    used_gpus.insert(in.gpu.id);
    prep.push_back({&r, in});
  }
  // The free parameters: the profile's fit_parameters (a stack with few rows frees only what they pin),
  // or all of them.
  FTCOST_TRY(free,
             fit::select_fit_params(stack.fit_parameters, FitKind::step_time, "throughput.fit_parameters"));
  if (free.empty()) free = fit::fit_params_of(FitKind::step_time);
  const std::size_t np = free.size();
  if (prep.size() < np + 1)
    return make_error(Errc::fit_failed, "rows",
                      "too few training rows for " + stack.id + ": " + std::to_string(prep.size()) + " for " +
                          std::to_string(np) + " free parameters");
  auto objective = [&](const std::vector<double>& x, StackProfile& s) {
    s = stack;
    for (std::size_t i = 0; i < np; ++i) s.*(free[i]->field) = fit::from_x(*free[i], x[i]);
    double sse = 0;
    for (auto& p : prep) {
      p.in.stack = s;
      auto v = predict_resolved(*p.row, p.in, db);
      if (!v.ok() || !(v.value() > 0)) {
        sse += 25.0;
        continue;
      }
      const double e = std::log(v.value() / p.row->measured);
      sse += e * e;
    }
    return sse / static_cast<double>(prep.size());
  };
  // Nelder-Mead from two starts (the middle of every range, and the stack file's values), each restarted
  // around its best point (a collapsed simplex stalls; restarts are cheap); the better end point wins.
  StackProfile scratch;
  const std::function<double(const std::vector<double>&)> f = [&](const std::vector<double>& x) {
    return objective(x, scratch);
  };
  std::vector<double> current(np);
  for (std::size_t i = 0; i < np; ++i) current[i] = fit::to_x(*free[i], stack.*(free[i]->field));
  std::vector<double> best_x;
  double best_f = 0;
  for (const auto& first : {std::vector<double>(np, 0.0), current}) {
    std::vector<double> x = first;
    for (int restart = 0; restart < 6; ++restart) x = fit::nelder_mead(f, x, restart == 0 ? 1.5 : 0.5);
    const double fx = f(x);
    if (best_x.empty() || fx < best_f) {
      best_x = x;
      best_f = fx;
    }
  }
  StackProfile out;
  const double mse = objective(best_x, out);
  json params = json::object();
  for (const auto* p : free) params[p->name] = out.*(p->field);
  const std::string data = stack.id == kPaperStackId
                               ? "training rows of tests/data/reference/ (the paper's A40 measurements only)"
                               : "training rows of tests/data/reference/ whose stack is " + stack.id +
                                     " (that stack's own published measurements only)";
  out.fit =
      json{{"method", "Nelder-Mead on the mean squared log error of throughput, stage and kernel times"},
           {"rows", prep.size()},
           {"gpus", std::vector<std::string>(used_gpus.begin(), used_gpus.end())},
           {"data", data},
           {"rms_log_residual", std::sqrt(mse)},
           {"parameters", params},
           {"command", "ftcost fit-stack --stack " + stack.id}};
  return out;
}

Result<StackProfile> fit_stack_memory(const std::vector<RefRow>& rows, const Database& db,
                                      const StackProfile& stack) {
  FTCOST_TRY(params,
             fit::select_fit_params(stack.memory_fit_parameters, FitKind::memory, "memory.fit_parameters"));
  StackProfile out = stack;
  if (params.empty()) return out;
  const std::map<std::string, std::string> held_out = held_out_gpus(rows, db, stack);
  std::vector<MemRow> mrows;
  for (const auto& r : rows) {
    if (r.role != "training" || !is_memory_metric(r.metric)) continue;
    FTCOST_TRY(in, training_row_inputs(r, db, stack, held_out));
    if (in.stack.id == stack.id) mrows.push_back({&r, in});
  }
  json steps = json::array();
  json values = json::object();
  for (std::size_t k = 0; k < params.size(); ++k) {
    const json st = scan_memory_param(mrows, out, k, params, db);
    if (!st.contains("kept")) values[params[k]->name] = st.at("value");
    steps.push_back(st);
  }
  out.memory_fit =
      json{{"method",
            "in the order of memory.fit_parameters, each parameter is scanned over its range (" +
                std::to_string(kMemScanSteps) +
                " steps; a count of tensors over whole numbers) on the stack's training memory rows (maximum "
                "batch, longest context, peak memory) "
                "that it moves and no later parameter does; the summed |log(predicted/measured)| is least on "
                "an interval, and the value is its middle"},
           {"parameters", values},
           {"steps", steps},
           {"command", "ftcost fit-stack --stack " + stack.id}};
  return out;
}

std::vector<Table4Prediction> paper_table4_predictions(const Database& db, double queries, double epochs) {
  std::vector<Table4Prediction> out;
  for (const auto& row : paper::table4(queries, epochs)) {
    Table4Prediction p;
    p.gpu_id = row.gpu_id;
    // The job of the paper's Table IV (paper.md §3.3) as the reference rows of paper-other-gpus.json state
    // it.
    const Request req = {{"model", "mixtral-8x7b"}, {"gpu", row.gpu_id},
                         {"method", "qlora"},       {"lora-targets", "w1,w2,w3,gate"},
                         {"lora-rank", "16"},       {"dataset", "math14k"},
                         {"moe", "sparse"},         {"batch", "max"},
                         {"max-length", "1024"},    {"stack", "hf-transformers-2024"}};
    auto in = resolve_request(req, db, nullptr);
    auto e = in.ok() ? estimate(in.value(), db) : Result<Estimate>(in.error());
    if (!e.ok()) {
      p.error = e.error().to_string();
    } else {
      p.max_batch = static_cast<long>(e->max_batch.batch);
      p.throughput_qps = e->throughput_qps;
      p.hours = paper::hours(queries, epochs, p.throughput_qps);
      p.cost = paper::cost_usd(queries, epochs, p.throughput_qps, row.usd_per_hour);
    }
    out.push_back(p);
  }
  return out;
}

json paper_table4_with_predictions_json(const Database& db, double queries, double epochs) {
  json doc = paper::table4_json(queries, epochs);
  const auto pred = paper_table4_predictions(db, queries, epochs);
  for (std::size_t i = 0; i < pred.size() && i < doc["rows"].size(); ++i) {
    const auto& p = pred[i];
    doc["rows"][i]["ftcost"] = p.error.empty() ? json{{"max_batch_size", p.max_batch},
                                                      {"throughput_queries_per_s", p.throughput_qps},
                                                      {"time_hours", p.hours},
                                                      {"cost_usd", p.cost},
                                                      {"stack", "hf-transformers-2024"}}
                                               : json{{"error", p.error}};
  }
  doc["ftcost_note"] =
      "ftcost: its own prediction (stack hf-transformers-2024, maximum batch it predicts, throughput at that "
      "batch, the paper's CUDO price); the A40 rows were part of the fit, A100 and H100 were not";
  return doc;
}

}  // namespace ftcost
