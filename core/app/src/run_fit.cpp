#include "ftcost/fit.hpp"
#include "ftcost/memory.hpp"
#include "ftcost/units.hpp"
#include "run_internal.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <tuple>
#include <utility>

namespace ftcost {

using fit::FitParam;
using fit::mean_of;
using fit::rms_of;
using fit::t975;
using run_detail::idx;
using run_detail::MicroCache;
using run_detail::step_s_cached;

namespace {

struct TimePoint {
  std::size_t run;
  const RunStep* step;
};

}  // namespace

json RunFitResult::to_json() const {
  json ps = json::array();
  for (const auto& p : params) {
    json j = {
        {"name", p.name}, {"kind", p.kind}, {"before", p.before}, {"value", p.value}, {"fitted", p.fitted}};
    if (p.fitted) {  // no error bar at the edge of the range (the logistic map flattens there)
      j["sigma"] = p.at_bound ? json(nullptr) : json(p.sigma);
      j["ci95"] = p.at_bound ? json(nullptr) : json{p.ci95_lo, p.ci95_hi};
      j["at_bound"] = p.at_bound;
    }
    if (!p.note.empty()) j["note"] = p.note;
    ps.push_back(j);
  }
  json pts = json::array();
  auto opt = [](double v) { return v >= 0 ? json(v) : json(nullptr); };
  for (const auto& q : points)
    pts.push_back(json_object({"file", q.file}, {"step", q.step}, {"shape", q.shape},
                              {"measured_s", q.measured_s}, {"predicted_before_s", q.before_s},
                              {"predicted_after_s", q.after_s},
                              {"measured_allocated_bytes", opt(q.measured_alloc_bytes)},
                              {"predicted_before_allocated_bytes", opt(q.before_alloc_bytes)},
                              {"predicted_after_allocated_bytes", opt(q.after_alloc_bytes)}));
  return json{
      {"stack", stack.id},
      {"points", pts},
      {"time_points", time_points},
      {"memory_points", memory_points},
      {"step_time_rms_log_error", {{"before", rms_log_before}, {"after", rms_log_after}}},
      {"memory_allocated_mean_abs_rel_error",
       memory_points > 0 ? json{{"before", mem_rel_before}, {"after", mem_rel_after}} : json(nullptr)},
      {"parameters", ps},
      {"notes", notes},
      {"provenance", stack.fit}};
}

namespace {

// The refit of a stack profile to recorded runs (fit_stack_to_runs), one step per member function: the
// runs' inputs, the timed steps (nonsense timings refused), the identifiable step-time parameters, the
// Levenberg-Marquardt fit with its standard errors, the memory parameters and the provenance.
class RunFitter {
 public:
  RunFitter(const std::vector<RunFile>& runs, const Database& db, const StackProfile& stack)
      : runs_(runs), db_(db), stack_(stack) {}

  Result<RunFitResult> fit() {
    if (auto st = load_inputs(); !st.ok()) return st.error();
    if (auto st = collect_time_points(); !st.ok()) return st.error();
    res_.time_points = pts_.size();
    n_ = pts_.size();
    candidates();
    const std::vector<double> r0 = residuals(stack_);
    res_.rms_log_before = rms_of(r0);
    choose_identifiable();
    fit_time_params();
    StackProfile fitted = profile_at(lm_.x);
    res_.rms_log_after = rms_of(lm_.r);
    time_points_out(r0);
    std::set<std::string> shapes;
    for (const auto& q : res_.points) shapes.insert(q.shape);
    res_.time_shapes = shapes.size();
    res_.time_params_fitted = chosen_.size();
    json pv = json::object();
    json ps = json::object();
    json nf = json::object();
    time_params_out(fitted, pv, ps, nf);
    const json mem_prov = fit_memory(fitted);
    fitted.fit =
        json{{"method",
              "Levenberg-Marquardt on the log step-time residuals of the run(s), over the parameters "
              "they can tell apart; memory parameters by least squares on max_memory_allocated"},
             {"data", "user run(s), ftcost.run/1"},
             {"runs", run_sources()},
             {"gpu", runs_[0].gpu_id},
             {"rows", n_},
             {"rms_log_residual", res_.rms_log_after},
             {"rms_log_residual_before", res_.rms_log_before},
             {"parameters", pv},
             {"parameters_sigma", ps},
             {"not_fitted", nf},
             {"memory_parameters", mem_prov},
             {"based_on", stack_.id},
             {"command", "ftcost fit-stack --stack " + stack_.id + " --run ..."}};
    fitted.id = stack_.id + "+run";
    fitted.display_name = stack_.display_name + ", refitted to a user run";
    res_.stack = fitted;
    return res_;
  }

 private:
  const std::vector<RunFile>& runs_;
  const Database& db_;
  const StackProfile& stack_;
  RunFitResult res_;
  std::vector<Inputs> ins_;                     // one per run, with the stack being tried
  std::vector<TimePoint> pts_;                  // the timed steps
  std::size_t n_ = 0;                           // pts_.size()
  std::vector<const FitParam*> cand_;           // step-time parameters that apply to these runs
  std::vector<const FitParam*> chosen_;         // those being fitted
  std::map<std::string, std::string> why_not_;  // the others, and why
  // The fit over chosen_: its p parameters in x (logit space), residuals r, SSE f, standard errors sig.
  fit::LmState lm_;
  std::vector<double> sig_;
  std::size_t dof_ = 0;

  // The runs' inputs (one GPU; the step model), with `stack`, and their notes.
  Status load_inputs() {
    if (runs_.empty()) return make_error(Errc::missing_field, "--run", "give at least one run file");
    for (const auto& r : runs_)
      if (r.gpu_id != runs_[0].gpu_id)
        return make_error(Errc::invalid_value, r.source + ": gpu",
                          "recorded on " + r.gpu_id + ", " + runs_[0].source + " on " + runs_[0].gpu_id +
                              ": fit one GPU's runs at a time");
    for (const auto& r : runs_) {
      FTCOST_TRY(in, run_inputs(r, db_));
      if (in.model_kind != "step")
        return make_error(Errc::invalid_value, r.source, "runs are fitted with the step model only");
      in.stack = stack_;
      ins_.push_back(in);
      for (const auto& n : r.notes) res_.notes.push_back(r.source + ": " + n);
    }
    return Ok{};
  }

  // The timed steps of run ri; an error for a nonsense timing (faster than the forward pass's FLOPs at the
  // GPU's dense peak).
  Status time_points_of(std::size_t ri) {
    const Inputs& in = ins_[ri];
    // the GPU's highest dense peak of any dtype (FP8 included): the floor must not flag a run that used a
    // faster dtype than the one recorded
    const double peak = std::max({in.gpu.fp8_tflops, in.gpu.bf16_tflops, in.gpu.fp16_tflops,
                                  in.gpu.tf32_tflops, in.gpu.fp32_tflops}) *
                        1e12;
    const auto active = static_cast<double>(
        in.model.active_params(in.model.is_moe() ? in.workload.active_experts(in.model) : 0));
    for (std::size_t si = 0; si < runs_[ri].steps.size(); ++si) {
      const RunStep& st = runs_[ri].steps[si];
      if (st.warmup || st.micro.empty() || st.wall_s <= 0) continue;
      double tokens = 0;
      for (const auto& mb : st.micro) tokens += static_cast<double>(mb.batch) * mb.seq_len;
      if (peak > 0) {
        const double floor_s = static_cast<double>(st.count) * 2.0 * active * tokens / peak;
        if (st.wall_s < 0.5 * floor_s)
          return make_error(Errc::out_of_range, runs_[ri].source + ": " + idx("steps", si) + ".wall_s",
                            json(st.wall_s).dump() + " s is less than half the forward pass alone at " +
                                in.gpu.id + "'s highest dense peak (" + json(floor_s).dump() +
                                " s for 2 x active params x padded tokens): not a real step time of this "
                                "model on this GPU");
      }
      pts_.push_back({ri, &st});
    }
    return Ok{};
  }

  // A step's peak memory holds at least the model's weights as stored (16-bit, NF4 + absmax, int8: the
  // memory model's weights term): a smaller max_memory_allocated is not a figure of this run. 10% below the
  // term is allowed for what the parameter count can get wrong (tied or untied embeddings, buffers).
  Status memory_floor_of(std::size_t ri) const {
    const Inputs& in = ins_[ri];
    const double weights = memory_for_batch(in.model, in.workload, in.stack, 1, 1).weights;
    const double floor_bytes = 0.9 * weights;
    for (std::size_t si = 0; si < runs_[ri].steps.size(); ++si) {
      const RunStep& st = runs_[ri].steps[si];
      for (const auto& [key, v] : {std::make_pair("max_memory_allocated_bytes", st.max_allocated_bytes),
                                   std::make_pair("max_memory_reserved_bytes", st.max_reserved_bytes)})
        if (v >= 0 && v < floor_bytes)
          return make_error(Errc::out_of_range, runs_[ri].source + ": " + idx("steps", si) + "." + key,
                            json(v).dump() + " bytes is less than the weights of " + in.model.id + " (" +
                                json(std::round(weights / kGiB * 100) / 100).dump() + " GiB as " +
                                method_name(in.workload.method) + " stores them): not a peak of this run");
    }
    return Ok{};
  }

  Status collect_time_points() {
    for (std::size_t ri = 0; ri < runs_.size(); ++ri) {
      if (auto st = memory_floor_of(ri); !st.ok()) return st;
      if (auto st = time_points_of(ri); !st.ok()) return st;
    }
    return Ok{};
  }

  // The step-time parameters that apply (dequant_efficiency with QLoRA only).
  void candidates() {
    bool any_qlora = false;
    for (const auto& in : ins_) any_qlora = any_qlora || in.workload.method == Method::qlora;
    for (const FitParam* p : run_detail::time_params())
      if (std::string(p->name) != "dequant_efficiency" || any_qlora) cand_.push_back(p);
  }

  // Log residuals of the predicted step times with profile s.
  std::vector<double> residuals(const StackProfile& s) {
    std::vector<double> r;
    r.reserve(pts_.size());
    std::vector<MicroCache> caches(ins_.size());  // one step-model evaluation per run and shape
    for (auto& in : ins_) in.stack = s;
    for (const auto& tp : pts_) {
      const double pred = step_s_cached(ins_[tp.run], *tp.step, caches[tp.run]);
      r.push_back(pred > 0 ? std::log(pred / tp.step->wall_s) : 25.0);
    }
    return r;
  }

  // The candidates the runs can tell apart (fit::choose_identifiable); the others get their reason in
  // why_not_.
  void choose_identifiable() {
    const auto res = [this](const StackProfile& s) { return residuals(s); };
    std::vector<fit::Sensitivity> cols;
    for (const FitParam* p : cand_) cols.push_back(fit::sensitivity(*p, stack_, res, n_));
    chosen_ = fit::choose_identifiable(cols, n_, why_not_);
  }

  StackProfile profile_at(const std::vector<double>& xv) const {
    StackProfile s = stack_;
    for (std::size_t j = 0; j < chosen_.size(); ++j) s.*(chosen_[j]->field) = fit::from_x(*chosen_[j], xv[j]);
    return s;
  }

  // Fit; then drop the parameter the run pins down worst (1-sigma wider than a quarter of its range) and
  // fit again, until every fitted parameter is determined.
  void fit_time_params() {
    const fit::Residuals res = [this](const std::vector<double>& xv) { return residuals(profile_at(xv)); };
    for (;;) {
      const std::size_t p = chosen_.size();
      lm_.x.assign(p, 0);
      for (std::size_t j = 0; j < p; ++j) lm_.x[j] = fit::to_x(*chosen_[j], stack_.*(chosen_[j]->field));
      fit::levenberg_marquardt(res, lm_, 200);
      dof_ = n_ > p ? n_ - p : 0;
      sig_ = fit::standard_errors(res, lm_, chosen_, n_, dof_);
      std::size_t worst = p;
      double worst_rel = 0.25;
      for (std::size_t j = 0; j < p && dof_ > 0; ++j) {
        const double rel = sig_[j] / (chosen_[j]->hi - chosen_[j]->lo);
        if (rel > worst_rel) {
          worst = j;
          worst_rel = rel;
        }
      }
      if (worst == p) break;
      why_not_[chosen_[worst]->name] = "the run cannot pin it down: fitted, its 1-sigma error bar was " +
                                       json(std::round(worst_rel * 100)).dump() + "% of its range [" +
                                       json(chosen_[worst]->lo).dump() + ", " +
                                       json(chosen_[worst]->hi).dump() + "]; kept at the profile's value";
      chosen_.erase(chosen_.begin() + static_cast<std::ptrdiff_t>(worst));
    }
  }

  // Every timed step, measured against predicted before (r0) and after (r_) the fit.
  void time_points_out(const std::vector<double>& r0) {
    for (std::size_t i = 0; i < n_; ++i) {
      const RunStep& st = *pts_[i].step;
      RunPoint q;
      q.file = runs_[pts_[i].run].source;
      q.step = st.step;
      const RunMicroBatch& mb = st.micro[0];
      q.shape = std::to_string(mb.batch) + "x" + std::to_string(static_cast<long long>(mb.seq_len));
      if (st.micro.size() > 1) q.shape = std::to_string(st.micro.size()) + "x(" + q.shape + ")";
      q.measured_s = st.wall_s;
      q.before_s = st.wall_s * std::exp(r0[i]);
      q.after_s = st.wall_s * std::exp(lm_.r[i]);
      res_.points.push_back(q);
    }
  }

  // A fitted step-time parameter's error bar, interval and notes (chosen_[j]).
  void fitted_param(RunFitParam& rp, const FitParam* c, std::size_t j) const {
    rp.fitted = true;
    rp.sigma = sig_[j];
    const double t = t975(dof_);
    rp.ci95_lo = std::max(c->lo, rp.value - t * sig_[j]);
    rp.ci95_hi = std::min(c->hi, rp.value + t * sig_[j]);
    const double rel = (rp.value - c->lo) / (c->hi - c->lo);
    if (rel < 1e-3 || rel > 1 - 1e-3) {
      rp.at_bound = true;
      rp.note =
          "at the edge of its physical range [" + json(c->lo).dump() + ", " + json(c->hi).dump() +
          "]: the run asks for more than this parameter can give; the residual says how much (no error bar "
          "at the edge)";
    }
    if (dof_ == 0)
      rp.note += (rp.note.empty() ? "" : "; ") + std::string("no degrees of freedom left: no error bar");
  }

  // The step-time parameters into res_.params, and their provenance (values, sigmas, why not fitted).
  void time_params_out(const StackProfile& fitted, json& pv, json& ps, json& nf) {
    for (const FitParam* c : cand_) {
      RunFitParam rp;
      rp.name = c->name;
      rp.kind = "step-time";
      rp.before = stack_.*(c->field);
      rp.value = fitted.*(c->field);
      auto it = std::find(chosen_.begin(), chosen_.end(), c);
      if (it != chosen_.end()) {
        fitted_param(rp, c, static_cast<std::size_t>(it - chosen_.begin()));
        pv[c->name] = rp.value;
        ps[c->name] = rp.at_bound ? json(nullptr) : json(rp.sigma);
      } else {
        rp.note = why_not_.count(c->name) ? why_not_[c->name] : "not fitted";
        nf[c->name] = rp.note;
      }
      res_.params.push_back(rp);
    }
  }

  using MemPoints = std::vector<std::pair<std::size_t, const RunStep*>>;

  // Mean |relative error| of max_memory_allocated with profile s.
  double mem_err(const MemPoints& mpts, const StackProfile& s) {
    double e = 0;
    for (const auto& [ri, st] : mpts) {
      Inputs& in = ins_[ri];
      in.stack = s;
      e += std::fabs(predict_run_allocated_bytes(in, *st) / st->max_allocated_bytes - 1);
    }
    return e / static_cast<double>(mpts.size());
  }

  // gc_retained_fraction: allocated(g) is linear in g, least squares on relative errors, closed form.
  RunFitParam fit_gc(const MemPoints& mpts, StackProfile& fitted) {
    bool all_gc = true;
    for (const auto& in : ins_) all_gc = all_gc && in.workload.checkpointing;
    RunFitParam g;
    g.name = "gc_retained_fraction";
    g.kind = "memory";
    g.before = stack_.gc_retained_fraction;
    g.value = g.before;
    if (!all_gc) {
      g.note = "applies with gradient checkpointing only; the run(s) train without it";
      return g;
    }
    double sxx = 0;
    double sxy = 0;
    std::vector<std::pair<double, double>> rows;  // (slope/meas, (meas-base)/meas)
    for (const auto& [ri, st] : mpts) {
      Inputs& in = ins_[ri];
      StackProfile s0 = fitted;
      StackProfile s1 = fitted;
      s0.gc_retained_fraction = 0;
      s1.gc_retained_fraction = 1;
      in.stack = s0;
      const double b0 = predict_run_allocated_bytes(in, *st);
      in.stack = s1;
      const double slope = predict_run_allocated_bytes(in, *st) - b0;
      const double a = slope / st->max_allocated_bytes;
      const double y = (st->max_allocated_bytes - b0) / st->max_allocated_bytes;
      rows.emplace_back(a, y);
      sxx += a * a;
      sxy += a * y;
    }
    if (sxx <= 0) {
      g.note = "not identifiable: the run's activations are too small to move the allocated peak";
      return g;
    }
    const double gv = sxy / sxx;
    double ss = 0;
    for (const auto& [a, y] : rows) ss += (y - gv * a) * (y - gv * a);
    const std::size_t mdof = rows.size() > 1 ? rows.size() - 1 : 0;
    g.fitted = true;
    g.sigma = mdof > 0 ? std::sqrt(ss / static_cast<double>(mdof) / sxx) : 0;
    g.value = std::min(1.0, std::max(0.0, gv));
    g.at_bound = g.value != gv;
    if (g.at_bound)
      g.note = "the run needs " + json(gv).dump() +
               ", outside [0, 1]: another memory component is off for this stack; kept at the bound";
    const double t = t975(mdof);
    g.ci95_lo = std::max(0.0, g.value - t * g.sigma);
    g.ci95_hi = std::min(1.0, g.value + t * g.sigma);
    fitted.gc_retained_fraction = g.value;
    fitted.gc_retained_provenance = "fitted to max_memory_allocated of the run(s) (ftcost fit-stack --run)";
    return g;
  }

  // f = (reserved - allocated) / (activations + logits + dequant buffers) per step with profile prof.
  std::vector<double> reserved_ratios(const MemPoints& mpts, const StackProfile& prof) {
    std::vector<double> out;
    for (const auto& [ri, st] : mpts) {
      if (st->max_reserved_bytes <= 0) continue;
      Inputs& in = ins_[ri];
      double transient = 0;
      for (const auto& mb : st->micro) {
        const MemoryBreakdown m = memory_for_batch(in.model, in.workload, prof, mb.batch, mb.seq_len);
        transient = std::max(transient, m.activations + m.logits + m.dequant_buffers);
      }
      if (transient > 0) out.push_back((st->max_reserved_bytes - st->max_allocated_bytes) / transient);
    }
    return out;
  }

  // allocator_overhead_fraction: the mean of the ratios; the transient bytes depend on
  // gc_retained_fraction, so its error bar (g) is carried into f's.
  RunFitParam fit_allocator(const MemPoints& mpts, const RunFitParam& g, StackProfile& fitted) {
    RunFitParam a;
    a.name = "allocator_overhead_fraction";
    a.kind = "memory";
    a.before = stack_.allocator_overhead_fraction;
    a.value = a.before;
    const std::vector<double> fs = reserved_ratios(mpts, fitted);
    double f_from_g = 0;
    if (g.fitted && g.sigma > 0) {
      StackProfile hi = fitted;
      hi.gc_retained_fraction = std::min(1.0, g.value + g.sigma);
      f_from_g = std::fabs(mean_of(reserved_ratios(mpts, hi)) - mean_of(fs));
    }
    if (fs.empty()) {
      a.note = "needs max_memory_reserved_bytes next to max_memory_allocated_bytes";
      return a;
    }
    double mean = 0;
    for (double v : fs) mean += v;
    mean /= static_cast<double>(fs.size());
    double var = 0;
    for (double v : fs) var += (v - mean) * (v - mean);
    const std::size_t adof = fs.size() > 1 ? fs.size() - 1 : 0;
    a.fitted = true;
    a.sigma = adof > 0 ? std::sqrt(var / static_cast<double>(adof) / static_cast<double>(fs.size()) +
                                   f_from_g * f_from_g)
                       : 0;
    a.value = std::min(1.0, std::max(0.0, mean));
    a.at_bound = a.value != mean;
    if (a.at_bound) a.note = "the run gives " + json(mean).dump() + ", outside [0, 1]; kept at the bound";
    const double t = t975(adof);
    a.ci95_lo = std::max(0.0, a.value - t * a.sigma);
    a.ci95_hi = std::min(1.0, a.value + t * a.sigma);
    fitted.allocator_overhead_fraction = a.value;
    return a;
  }

  // The memory figures of the timed points, before and after.
  void memory_points_out(const MemPoints& mpts, const StackProfile& fitted) {
    for (auto& q : res_.points) {
      for (const auto& [ri, st] : mpts) {
        if (runs_[ri].source != q.file || st->step != q.step) continue;
        Inputs& in = ins_[ri];
        q.measured_alloc_bytes = st->max_allocated_bytes;
        in.stack = stack_;
        q.before_alloc_bytes = predict_run_allocated_bytes(in, *st);
        in.stack = fitted;
        q.after_alloc_bytes = predict_run_allocated_bytes(in, *st);
        break;
      }
    }
  }

  // The memory parameters, only from runs that have the figures; their provenance (null without).
  json fit_memory(StackProfile& fitted) {
    MemPoints mpts;
    for (std::size_t ri = 0; ri < runs_.size(); ++ri)
      for (const auto& st : runs_[ri].steps)
        if (!st.warmup && !st.micro.empty() && st.max_allocated_bytes > 0) mpts.emplace_back(ri, &st);
    res_.memory_points = mpts.size();
    if (mpts.empty()) {
      res_.notes.emplace_back(
          "no memory figures in the run(s) (e.g. a CPU run or an import without peak memory): no memory "
          "parameter is fitted; the memory model keeps the profile's values");
      return nullptr;
    }
    res_.mem_rel_before = mem_err(mpts, stack_);
    const RunFitParam g = fit_gc(mpts, fitted);
    res_.params.push_back(g);
    res_.params.push_back(fit_allocator(mpts, g, fitted));
    res_.mem_rel_after = mem_err(mpts, fitted);
    memory_points_out(mpts, fitted);
    json mp = json::object();
    for (const auto& q : res_.params)
      if (q.kind == "memory" && q.fitted) mp[q.name] = q.value;
    return mp;
  }

  // The runs the fit used, for the provenance.
  json run_sources() const {
    json src = json::array();
    for (std::size_t ri = 0; ri < runs_.size(); ++ri) {
      std::size_t used = 0;
      for (const auto& tp : pts_) used += tp.run == ri ? 1 : 0;
      src.push_back(json{{"file", runs_[ri].source},
                         {"recorder", runs_[ri].recorder_source},
                         {"gpu", runs_[ri].gpu_id},
                         {"model", ins_[ri].model.id},
                         {"timed_steps_used", used},
                         {"lacks", runs_[ri].lacks}});
    }
    return src;
  }
};

}  // namespace

Result<RunFitResult> fit_stack_to_runs(const std::vector<RunFile>& runs, const Database& db,
                                       const StackProfile& stack) {
  return RunFitter(runs, db, stack).fit();
}

}  // namespace ftcost
