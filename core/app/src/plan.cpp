#include "ftcost/plan.hpp"

#include "ftcost/job.hpp"
#include "ftcost/options.hpp"
#include "ftcost/parallel.hpp"
#include "ftcost/plan_config.hpp"
#include "ftcost/shapes.hpp"
#include "ftcost/units.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <memory>
#include <set>
#include <sstream>

namespace ftcost {

namespace {

std::string num(double v, int digits) {
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(digits);
  s << v;
  return s.str();
}
std::string money(double v) { return "$" + num(v, v < 100 ? 2 : 0); }
std::string hours_text(double h) { return num(h, h < 10 ? 2 : 1) + " h"; }

}  // namespace

std::vector<PlanShape> rule_picks(const std::vector<PlanShape>& all) {
  std::map<std::string, std::size_t> best;
  std::vector<PlanShape> out;
  auto choice = [](const PlanShape& s) {
    PriceChoice p;
    p.date = s.date;
    p.stale = s.stale;
    p.spot = s.spot;
    return p;
  };
  for (const auto& s : all) {
    const std::string key = s.gpu_id + "/" + std::to_string(s.gpus_per_node) + "x" + std::to_string(s.nodes);
    auto it = best.find(key);
    if (it == best.end()) {
      best[key] = out.size();
      out.push_back(s);
    } else if (price_better(choice(s), s.usd_per_gpu_hour, choice(out[it->second]),
                            out[it->second].usd_per_gpu_hour)) {
      out[it->second] = s;
    }
  }
  return out;
}

// The instance shapes of shapes.hpp (one per offer and node count), filtered by the constraints, one per
// price kind (on-demand, and spot when allowed), then the price rule's pick per GPU type and shape.
std::vector<PlanShape> plan_shapes(const Database& db, const PlanConstraints& c, long today_days,
                                   long stale_days) {
  std::vector<PlanShape> out;
  ShapeFilter f;
  f.max_gpus = c.max_gpus;
  std::map<std::string, std::string> provider_names;
  for (const auto& prov : db.providers()) provider_names[prov.id] = prov.name;
  for (const auto& sh : instance_shapes(db, "", f)) {
    const PriceOffer& o = sh.offer;
    if (!c.providers.empty() &&
        std::find(c.providers.begin(), c.providers.end(), o.provider_id) == c.providers.end())
      continue;
    if (!c.gpus.empty() && std::find(c.gpus.begin(), c.gpus.end(), o.gpu_id) == c.gpus.end()) continue;
    if (db.gpu(o.gpu_id) == nullptr) continue;
    if (c.max_gpus > 0 && sh.gpus() > c.max_gpus) continue;
    for (int spot = 0; spot < 2; ++spot) {
      const double price = spot ? o.spot_usd_per_gpu_hour : o.on_demand_usd_per_gpu_hour;
      if (price <= 0 || (spot && !c.spot)) continue;
      PlanShape s;
      s.gpu_id = o.gpu_id;
      s.provider_id = o.provider_id;
      s.provider = o.provider.empty() ? provider_names[o.provider_id] : o.provider;
      s.instance_type = o.instance_type;
      s.region = o.region;
      s.date = o.date;
      s.spot = spot == 1;
      s.stale = o.date_days >= 0 && today_days >= 0 && today_days - o.date_days > stale_days;
      s.gpus_per_node = sh.gpus_per_node;
      s.nodes = sh.nodes;
      if (sh.nodes > 1) {
        s.network = o.network;
        s.network_gbit_per_gpu = o.network_gbit_per_gpu;
      }
      s.usd_per_gpu_hour = price;
      s.usd_per_hour = sh.usd_per_hour(s.spot);
      out.push_back(s);
    }
  }
  return rule_picks(out);
}

// Which multi-GPU strategies each stack's software runs (structural facts, docs/sources/plan-configs.md):
// - HF Trainer stacks (transformers + accelerate; TRL, LLaMA-Factory and axolotl configure it): DDP,
//   FSDP (accelerate/utils/dataclasses.py FullyShardedDataParallelPlugin.sharding_strategy FULL_SHARD /
//   SHARD_GRAD_OP / HYBRID_SHARD) and DeepSpeed ZeRO stages 1-3 (DeepSpeedPlugin.zero_stage). No Megatron
//   tensor/expert parallelism in the Trainer.
// - torchtune 2024: its distributed recipes shard with FSDP2 fully_shard
// (recipes/lora_finetune_distributed.py,
//   torchtune/training/_distributed.py shard_model); no DeepSpeed.
// - Unsloth 2024: one GPU only (unsloth/__init__.py: "Currently only supports 1 GPU", it sets
//   CUDA_VISIBLE_DEVICES=0 when more are visible).
std::vector<std::string> stack_strategies(const StackProfile& stack, const ModelSpec& model,
                                          const std::string& method, int gpus_per_node) {
  (void)model;
  (void)method;
  (void)gpus_per_node;
  const std::string id = stack.alias_of.empty() ? stack.id : stack.alias_of;
  if (id.rfind("unsloth", 0) == 0) return {};
  if (id.rfind("torchtune", 0) == 0) return {"fsdp"};
  return {"ddp", "fsdp", "fsdp-grad-op", "zero1", "zero2", "zero3"};
}

namespace {

struct Config {
  Request req;  // job + gpu, method, stack, checkpointing, optimizer
  std::string gpu, method, stack, checkpointing, optimizer;
};

struct Eval {
  int config = -1;
  int ranks = 1;
  std::string parallel = "single";
  std::string offload = "none";
  std::int64_t micro = 0, accum = 1, max_micro = 0;
  double hours = 0, step_s = 0, qps = 0, peak = 0, usable = 0;
  std::string bottleneck;
  double share = 0;
};

struct Cand {
  int eval = -1;
  int shape = -1;
  double cost = 0;
};

// The largest device-time kernel class, or host/communication/optimizer when they dominate the step.
void bottleneck_of(const StepTime& st, double total_s, double comm_exposed_s, double optimizer_s, Eval& ev) {
  double best = -1;
  std::string name;
  for (int i = 0; i < kKernelClasses; ++i) {
    const double v = st.by_class[static_cast<std::size_t>(i)];
    if (v > best) {
      best = v;
      name = kernel_class_name(static_cast<KernelClass>(i));
    }
  }
  const double dev = std::max(1e-12, st.gpu_s);
  ev.bottleneck = name;
  ev.share = best / dev;
  if (st.total_s > 0 && st.host_s / st.total_s > kHostBoundFraction) {
    ev.bottleneck = "host";
    ev.share = st.host_s / st.total_s;
  }
  if (total_s > 0 && comm_exposed_s / total_s > 0.3) {
    ev.bottleneck = "communication";
    ev.share = comm_exposed_s / total_s;
  } else if (total_s > 0 && optimizer_s / total_s > 0.5) {
    ev.bottleneck = "optimizer";
    ev.share = optimizer_s / total_s;
  }
}

// The step breakdown behind a multi-GPU plan's bottleneck: the single-GPU step model's at the plan's
// micro-batch. Where the job fits one GPU at no batch, the single-GPU estimate inside the search's probe
// (no --batch) stops before its step, all zero ("gemm, 0% of device time"): the step model runs here instead,
// as estimate_parallel runs it for the compute per rank.
StepTime multi_gpu_breakdown(const Inputs& y, const ParallelEstimate& pe) {
  if (pe.single.step.gpu_s > 0) return pe.single.step;
  Workload w1 = y.workload;
  w1.grad_accum = 1;
  return step_model(y.model, w1, y.stack, y.gpu, y.calibration.get(), pe.micro_batch,
                    w1.mean_padded_len(pe.micro_batch), y.expert_shares);
}

// Micro-batch candidates from the maximum: the maximum alone, or (with an effective batch to keep) the
// maximum and the powers of two below it whose grad-accum makes the effective batch exactly.
std::vector<std::pair<std::int64_t, std::int64_t>> micro_candidates(std::int64_t max_micro, int dp,
                                                                    std::int64_t effective) {
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  if (max_micro < 1) return out;
  if (effective <= 0) return {{max_micro, 1}};
  std::vector<std::int64_t> mbs = {max_micro};
  for (std::int64_t p = 1; p < max_micro; p *= 2) mbs.push_back(p);
  std::sort(mbs.rbegin(), mbs.rend());
  for (auto mb : mbs) {
    const std::int64_t per = mb * dp;
    if (per <= 0 || effective % per != 0) continue;
    out.emplace_back(mb, effective / per);
  }
  return out;
}

std::string pct(double f) { return num(f * 100, 0) + "%"; }

// Checkpointing off keeps every activation: a plan with it off at 90% or more of the usable memory (as the
// percentage prints) has little room for allocator fragmentation and the memory model's uncertainty.
constexpr double kNoCheckpointingWarnFraction = 0.9;
std::vector<std::string> plan_warnings(const PlanEntry& e) {
  std::vector<std::string> w;
  const double f = e.usable_gib > 0 ? e.peak_gib_per_gpu / e.usable_gib : 0;
  if (e.checkpointing == "off" && std::round(f * 100) >= kNoCheckpointingWarnFraction * 100)
    w.push_back(
        "checkpointing off at " + pct(f) + " of the usable memory (" + num(e.peak_gib_per_gpu, 1) + " of " +
        num(e.usable_gib, 1) +
        " GiB per GPU): allocator fragmentation or the memory estimate's uncertainty can run it out of "
        "memory; --checkpointing on trades a slower step for room");
  return w;
}

}  // namespace

namespace {

// A plan's job leaves to the search what it chooses (plan_chosen_keys) and takes the GPUs and spot as
// constraints, not job options.
Status check_plan_job(const Request& job_in) {
  for (const auto& k : plan_chosen_keys())
    if (job_in.count(k) != 0)
      return make_error(Errc::invalid_value, "--" + k, "is chosen by the plan (the search picks it)");
  for (const char* k : {"gpus", "spot"})
    if (job_in.count(k) != 0)
      return make_error(Errc::invalid_value, std::string("--") + k,
                        "is a plan constraint here, not a job option");
  return Ok{};
}

// Shapes by layout (GPUs per node x nodes x network) for one GPU type: one estimate per layout, priced for
// every offer of it.
using Layouts = std::map<std::string, std::vector<int>>;

// The plan search: GPU type x method x stack x variant (checkpointing, optimizer) x layout x strategy (and
// offload) x micro-batch, with the pruning reasons counted in res.pruned; then the constraints, the Pareto
// front of (hours, cost) and the alternatives that lose.
class PlanSearch {
 public:
  PlanSearch(const Request& job, const PlanConstraints& c, const Database& db, const FileReader& reader,
             long today_days, const Inputs& probe_in, std::vector<PlanShape> shapes, PlanResult& res)
      : job_(job),
        c_(c),
        db_(db),
        reader_(reader),
        today_days_(today_days),
        probe_in_(probe_in),
        job_method_(method_name(probe_in.workload.method)),
        stale_days_(probe_in.stale_days),
        shapes_(std::move(shapes)),
        res_(res) {
    // Variants the user left open: checkpointing on/off (and, per method, an 8-bit optimizer).
    if (job_.count("checkpointing") == 0) ckpts_ = {"on", "off"};
  }

  // Every GPU type with at least one shape, for every method and stack the plan may choose.
  void search(const std::vector<std::string>& methods, const std::vector<std::string>& stacks) {
    std::map<std::string, Layouts> by_gpu;
    for (std::size_t i = 0; i < shapes_.size(); ++i) {
      const PlanShape& s = shapes_[i];
      char key[96];
      std::snprintf(key, sizeof key, "%05d x %05d %s %g", s.gpus_per_node, s.nodes, s.network.c_str(),
                    s.network_gbit_per_gpu);
      by_gpu[s.gpu_id][key].push_back(static_cast<int>(i));
    }
    for (const auto& [gpu_id, layouts] : by_gpu)
      for (const auto& method : methods)
        for (const auto& stack_id : stacks) search_stack(gpu_id, layouts, method, stack_id);
    res_.considered = static_cast<long>(cands_.size());
    for (const auto& [k, v] : res_.pruned) res_.considered += v;
  }

  // The constraints, the Pareto front and its entries (res.front, res.best), and the alternatives.
  void choose() {
    const Picks p = apply_constraints();
    // Ties (e.g. ZeRO-1 and ZeRO-2 at the same time and cost) keep the search order, so the native and the
    // browser build (libstdc++ vs libc++ std::sort) pick the same plan.
    std::vector<int> ok = p.ok;
    std::stable_sort(ok.begin(), ok.end(), [&](int a, int b) {
      if (cost_of(a) != cost_of(b)) return cost_of(a) < cost_of(b);
      return hours_of(a) < hours_of(b);
    });
    std::vector<int> front;
    double best_hours = 0;
    for (int i : ok) {
      if (front.empty() || hours_of(i) < best_hours) {
        front.push_back(i);
        best_hours = hours_of(i);
      }
    }
    for (std::size_t k = 0; k < front.size(); ++k) {
      PlanEntry e = make_entry(front[k]);
      e.id = static_cast<int>(k);
      e.why = why_on_front(e, front, k);
      e.warnings = plan_warnings(e);
      res_.front.push_back(e);
    }
    if (!res_.front.empty()) res_.best = c_.minimize == "time" ? res_.front.back().id : res_.front.front().id;
    add_alternatives(p, front);
  }

 private:
  // The estimate at the largest micro-batch (batch 0 = max) of one (layout, strategy, offload), reused as
  // the estimate of that candidate instead of estimating it again.
  struct Probe {
    std::int64_t max_micro = 0;
    std::unique_ptr<Estimate> single;
    std::unique_ptr<ParallelEstimate> multi;
  };
  // What the constraints leave (indices into cands_), and the cheapest and fastest candidates before them.
  struct Picks {
    std::vector<int> ok;
    int cheapest_any = -1, fastest_any = -1, cheapest_single_any = -1;
  };

  const Request& job_;
  const PlanConstraints& c_;
  const Database& db_;
  const FileReader& reader_;
  long today_days_;
  const Inputs& probe_in_;
  std::string job_method_;
  long stale_days_;
  std::vector<PlanShape> shapes_;
  PlanResult& res_;
  std::vector<std::string> ckpts_ = {""};
  std::vector<Config> configs_;
  std::vector<Eval> evals_;
  std::vector<Cand> cands_;
  std::set<std::string> no_fit_gpus_;
  std::set<std::string> fit_gpus_;
  std::map<std::string, std::string> unresolved_;  // GPU -> why the job cannot be resolved on it
  std::set<std::string> resolved_gpus_;

  void prune(const std::string& why, long n = 1) { res_.pruned[why] += n; }
  void prune_layouts(const std::string& why, const Layouts& layouts) {
    for (const auto& [n, idx] : layouts) prune(why, static_cast<long>(idx.size()));
  }
  double hours_of(int i) const {
    return evals_[static_cast<std::size_t>(cands_[static_cast<std::size_t>(i)].eval)].hours;
  }
  double cost_of(int i) const { return cands_[static_cast<std::size_t>(i)].cost; }

  // One (GPU type, method, stack): pruned when the stack cannot run it, else every variant.
  void search_stack(const std::string& gpu_id, const Layouts& layouts, const std::string& method,
                    const std::string& stack_id) {
    const GpuSpec& gpu = *db_.gpu(gpu_id);
    const StackProfile* stack = db_.stack(stack_id);
    if (stack == nullptr) return;
    const std::string base = stack->alias_of.empty() ? stack->id : stack->alias_of;
    if (base.rfind("torchtune", 0) == 0 && !torchtune_builds(probe_in_.model.id, method == "qlora")) {
      // torchtune builds only the models it has builders for (plan_config.cpp torchtune_model)
      prune_layouts("stack_lacks_model", layouts);
      return;
    }
    if (!stack_vendor_warning(*stack, gpu_id, gpu.vendor).empty()) {
      prune_layouts("stack_not_on_gpu_vendor", layouts);
      return;
    }
    std::vector<std::string> opts = {""};
    if (method == "full" && job_.count("optimizer") == 0) opts = {"", "adamw-8bit"};
    // GRPO without a --generation: both ways of generating on the training GPU (model.generate, vLLM
    // colocated)
    std::vector<std::string> gens = {""};
    const auto obj = job_.find("objective");
    if (obj != job_.end() && obj->second == "grpo" && job_.count("generation") == 0)
      gens = {"hf", "vllm-colocate"};
    for (const auto& ck : ckpts_)
      for (const auto& opt : opts)
        for (const auto& gen : gens) search_config(gpu_id, layouts, method, stack_id, ck, opt, gen);
  }

  // The job's request for one configuration (the options of the job's method that another method does not
  // take are dropped).
  Request config_request(const std::string& gpu_id, const std::string& method, const std::string& stack_id,
                         const std::string& ck, const std::string& opt) const {
    Request req = job_;
    req["gpu"] = gpu_id;
    req["method"] = method;
    req["stack"] = stack_id;
    if (method != job_method_) {
      if (method != "qlora") req.erase("quant");
      if (method == "full") {
        req.erase("lora-rank");
        req.erase("lora-targets");
      }
    }
    if (!ck.empty()) req["checkpointing"] = ck;
    if (!opt.empty()) req["optimizer"] = opt;
    return req;
  }

  // One configuration: resolved, skipped when it repeats the previous one, then every layout.
  void search_config(const std::string& gpu_id, const Layouts& layouts, const std::string& method,
                     const std::string& stack_id, const std::string& ck, const std::string& opt,
                     const std::string& gen) {
    Config cfg;
    cfg.req = config_request(gpu_id, method, stack_id, ck, opt);
    if (!gen.empty()) cfg.req["generation"] = gen;
    auto rin = resolve_request(cfg.req, db_, reader_, today_days_);
    if (!rin.ok()) {
      prune("error");
      unresolved_.emplace(gpu_id, rin.error().to_string());  // the first reason per GPU
      return;
    }
    resolved_gpus_.insert(gpu_id);
    const Inputs in = rin.value();
    // A stack whose pinned software cannot load the model (stack.hpp's stack_supports) is no plan.
    if (const StackSupport sup = stack_supports(in.stack, in.model); !sup.ok) {
      prune("stack_cannot_load_model");
      const std::string note = stack_id + " left out: " + sup.message;
      if (std::find(res_.notes.begin(), res_.notes.end(), note) == res_.notes.end())
        res_.notes.push_back(note);
      return;
    }
    cfg.gpu = gpu_id;
    cfg.method = method;
    cfg.stack = stack_id;
    cfg.checkpointing = in.workload.checkpointing ? "on" : "off";
    cfg.optimizer = optimizer_name(in.workload.optimizer);
    // skip a variant identical to the default one (8-bit already the default optimizer)
    if (!opt.empty() && gen.empty() && !configs_.empty()) {
      const Config& prev = configs_.back();
      if (prev.gpu == cfg.gpu && prev.method == cfg.method && prev.stack == cfg.stack &&
          prev.checkpointing == cfg.checkpointing && prev.optimizer == cfg.optimizer)
        return;
    }
    const int ci = static_cast<int>(configs_.size());
    configs_.push_back(cfg);
    const auto strategies = stack_strategies(in.stack, in.model, method, 8);
    for (const auto& [layout, idx] : layouts) search_layout(in, ci, strategies, idx);
  }

  // One layout (the shapes idx share it): every strategy the stack runs there, with the offload variants a
  // ZeRO strategy that does not fit gets appended as it fails.
  void search_layout(const Inputs& in, int ci, const std::vector<std::string>& strategies,
                     const std::vector<int>& idx) {
    const PlanShape& rep = shapes_[static_cast<std::size_t>(idx.front())];
    // Preference and RL objectives and Transformer Engine's FP8 are estimated on one training GPU (job.cpp
    // make_job refuses them on several).
    const std::string one_gpu = one_gpu_only_option(in);
    if (rep.ranks() > 1 && !one_gpu.empty()) {
      prune("objective_one_gpu", static_cast<long>(idx.size()));
      const std::string note =
          one_gpu + ": only one-GPU shapes are searched (several training GPUs are not modelled for it)";
      if (std::find(res_.notes.begin(), res_.notes.end(), note) == res_.notes.end())
        res_.notes.push_back(note);
      return;
    }
    std::vector<std::string> strats;
    if (rep.ranks() == 1)
      strats = {"single"};
    else
      strats = strategies;
    // hybrid sharding (FSDP in a node, replicas across nodes) where the stack runs FSDP1's HYBRID_SHARD
    if (rep.nodes > 1 && std::find(strats.begin(), strats.end(), "fsdp-grad-op") != strats.end())
      strats.emplace_back("hsdp");
    if (strats.empty()) {
      prune("stack_runs_one_gpu", static_cast<long>(idx.size()));
      return;
    }
    // (strategy, offload) pairs
    std::vector<std::pair<std::string, std::string>> variants;
    variants.reserve(strats.size());
    for (const auto& st : strats) variants.emplace_back(st, "none");
    for (std::size_t vi = 0; vi < variants.size(); ++vi) {
      const std::string strat = variants[vi].first;
      const std::string offload = variants[vi].second;
      search_variant(in, ci, rep, idx, strat, offload, variants);
    }
  }

  // The inputs of one (layout, strategy, offload) at the largest micro-batch.
  static Inputs variant_inputs(const Inputs& in, const PlanShape& rep, const std::string& strat,
                               const std::string& offload) {
    Inputs x = in;
    x.advise = false;
    x.workload.batch = 0;  // the estimate's own choice (--batch fastest)
    x.workload.grad_accum = 1;
    x.workload.effective_batch = 0;  // the plan's --effective-batch is a constraint of its search
    if (rep.ranks() > 1) {
      x.multi.gpus = rep.gpus_per_node;
      x.multi.nodes = rep.nodes;
      x.multi.network = rep.nodes > 1 ? rep.network : "";
      x.multi.network_gbit_per_gpu = rep.nodes > 1 ? rep.network_gbit_per_gpu : 0;
      x.multi.parallel = strat;
      x.multi.offload = offload;
    }
    return x;
  }

  // The estimate at the largest micro-batch: the prune reason when there is none ("" with max_micro 0
  // when it does not fit).
  std::string probe(const Inputs& x, int count, Probe& pr) {
    if (count == 1) {
      auto e = estimate(x, db_);
      if (!e.ok()) return "error";
      // The largest micro-batch whose memory range's upper end fits (the stack's uncertainty): a plan must
      // not rely on the low end of the range.
      pr.max_micro = e->max_batch.batch > 0 ? e->max_batch_range_fit : 0;
      if (e->max_batch.batch > 0 && pr.max_micro < 1) return "memory_range";
      pr.single = std::make_unique<Estimate>(std::move(e).value());
      return "";
    }
    auto p = plan_from_inputs(x, db_);
    if (!p.ok()) return "error";
    auto pe = estimate_parallel(x, p.value(), db_);
    if (!pe.ok()) return "error";
    pr.max_micro = pe->fits ? pe->max_micro_batch : 0;
    pr.multi = std::make_unique<ParallelEstimate>(std::move(pe).value());
    return "";
  }

  // One (layout, strategy, offload): its largest micro-batch, then the micro-batch candidates.
  void search_variant(const Inputs& in, int ci, const PlanShape& rep, const std::vector<int>& idx,
                      const std::string& strat, const std::string& offload,
                      std::vector<std::pair<std::string, std::string>>& variants) {
    const int count = rep.ranks();
    const Inputs x = variant_inputs(in, rep, strat, offload);
    ++res_.estimates;
    Probe pr;
    const std::string failed = probe(x, count, pr);
    if (!failed.empty()) {
      prune(failed, static_cast<long>(idx.size()));
      return;
    }
    if (pr.max_micro < 1) {
      if (count > 1 && strat.rfind("zero", 0) == 0 && offload == "none")
        variants.emplace_back(strat, "optimizer");
      else if (count > 1 && strat == "zero3" && offload == "optimizer")
        variants.emplace_back(strat, "params");
      prune("does_not_fit", static_cast<long>(idx.size()));
      if (count == 1) no_fit_gpus_.insert(configs_[static_cast<std::size_t>(ci)].gpu);
      return;
    }
    // The largest micro-batch the job takes here: the largest that fits (at --seq max the estimate's batch
    // 1), and no more than the data fills: a global batch beyond the rows of an epoch idles GPUs and still
    // takes a whole step (issue 39 W3), so such shapes are not offered.
    const std::int64_t dp = pr.multi ? pr.multi->dp : 1;
    const double rows = x.workload.rows_per_epoch();
    const auto data_cap =
        static_cast<std::int64_t>(std::min(1e15, std::floor(rows / static_cast<double>(dp))));
    const std::int64_t use =
        std::min({pr.max_micro, pr.multi ? pr.multi->micro_batch : pr.max_micro, data_cap});
    if (use < 1 || (c_.effective_batch > 0 && static_cast<double>(c_.effective_batch) > rows)) {
      prune("global_batch_exceeds_data", static_cast<long>(idx.size()));
      return;
    }
    // Without an effective batch to keep: the micro-batch `estimate` chooses (the fastest that fits, never
    // a slower larger one), so that the plan and the estimate of the same job agree.
    const std::int64_t chosen = pr.multi ? pr.multi->micro_batch : pr.single->batch;
    const auto mbs = c_.effective_batch > 0
                         ? micro_candidates(use, count, c_.effective_batch)
                         : std::vector<std::pair<std::int64_t, std::int64_t>>{{std::min(chosen, use), 1}};
    if (mbs.empty()) {
      prune("effective_batch", static_cast<long>(idx.size()));
      return;
    }
    Eval ev;
    ev.config = ci;
    ev.ranks = count;
    ev.parallel = strat;
    ev.offload = offload;
    ev.max_micro = pr.max_micro;
    for (const auto& [mb, accum] : mbs) {
      ev.micro = mb;
      ev.accum = accum;
      evaluate_micro(x, pr, ev, idx);
    }
  }

  // One micro-batch (and grad-accum) of a variant: its hours, step and memory into ev; false (with the
  // prune counted, where the search counts one) when it does not fit.
  bool estimate_micro(const Inputs& x, const Probe& pr, Eval& ev, const std::vector<int>& idx) {
    Inputs y = x;
    y.workload.batch = ev.micro;
    y.workload.grad_accum = ev.accum;
    const bool single = ev.ranks == 1;
    const bool reuse = ev.accum == 1 && (single ? (pr.single && ev.micro == pr.single->batch)
                                                : (pr.multi && ev.micro == pr.multi->micro_batch));
    if (!reuse) ++res_.estimates;
    if (single) {
      // the probe's estimate is read in place (copying an Estimate per candidate was a third of the search)
      Result<Estimate> fresh = make_error(Errc::internal, "", "not estimated");
      if (!reuse) fresh = estimate(y, db_);
      const Estimate* e = reuse ? pr.single.get() : fresh.ok() ? &fresh.value() : nullptr;
      if (e == nullptr || e->batch < 1 || e->batch > e->max_batch.batch) {
        prune("does_not_fit", static_cast<long>(idx.size()));
        return false;
      }
      ev.hours = e->time_hours;
      ev.step_s = e->step.total_s;
      ev.qps = e->throughput_qps;
      ev.peak = e->memory.total();
      ev.usable = e->max_batch.usable_bytes;
      bottleneck_of(e->step, e->step.total_s, 0, 0, ev);
      return true;
    }
    Result<ParallelEstimate> fresh = make_error(Errc::internal, "", "not estimated");
    if (!reuse) {
      auto p = plan_from_inputs(y, db_);
      if (!p.ok()) return false;
      fresh = estimate_parallel(y, p.value(), db_);
    }
    const ParallelEstimate* pe = reuse ? pr.multi.get() : fresh.ok() ? &fresh.value() : nullptr;
    if (pe == nullptr || !pe->fits || pe->micro_batch < 1) {
      prune("does_not_fit", static_cast<long>(idx.size()));
      return false;
    }
    ev.hours = pe->time_hours;
    ev.step_s = pe->step_s;
    ev.qps = pe->throughput_qps;
    ev.peak = pe->memory.total();
    ev.usable = pe->usable_bytes;
    // the compute part's breakdown is the single-GPU step model's at the same micro-batch
    bottleneck_of(multi_gpu_breakdown(y, *pe), pe->step_s, pe->comm_exposed_s, pe->optimizer_s, ev);
    return true;
  }

  // One micro-batch candidate: estimated, and on success one candidate per shape of the layout.
  void evaluate_micro(const Inputs& x, const Probe& pr, Eval ev, const std::vector<int>& idx) {
    if (!estimate_micro(x, pr, ev, idx)) return;
    if (!(ev.hours > 0) || !std::isfinite(ev.hours)) {
      prune("error", static_cast<long>(idx.size()));
      return;
    }
    if (ev.ranks == 1) fit_gpus_.insert(configs_[static_cast<std::size_t>(ev.config)].gpu);
    const int ei = static_cast<int>(evals_.size());
    evals_.push_back(ev);
    for (int si : idx) {
      Cand cd;
      cd.eval = ei;
      cd.shape = si;
      cd.cost = ev.hours * shapes_[static_cast<std::size_t>(si)].usd_per_hour;
      cands_.push_back(cd);
    }
  }

  // Deadline and budget (pruned), and the cheapest / fastest / cheapest single-GPU candidates before them.
  Picks apply_constraints() {
    Picks p;
    for (std::size_t i = 0; i < cands_.size(); ++i) {
      const Cand& cd = cands_[i];
      const Eval& ev = evals_[static_cast<std::size_t>(cd.eval)];
      const int ii = static_cast<int>(i);
      auto better_cost = [&](int j) { return j < 0 || cd.cost < cost_of(j); };
      if (better_cost(p.cheapest_any)) p.cheapest_any = ii;
      if (ev.ranks == 1 && better_cost(p.cheapest_single_any)) p.cheapest_single_any = ii;
      if (p.fastest_any < 0 || ev.hours < hours_of(p.fastest_any) ||
          (ev.hours == hours_of(p.fastest_any) && cd.cost < cost_of(p.fastest_any)))
        p.fastest_any = ii;
      if (c_.deadline_hours > 0 && ev.hours > c_.deadline_hours) {
        prune("deadline");
        continue;
      }
      if (c_.budget_usd > 0 && cd.cost > c_.budget_usd) {
        prune("budget");
        continue;
      }
      p.ok.push_back(ii);
    }
    return p;
  }

  // The request `ftcost estimate` takes to reproduce candidate ci.
  static Request entry_request(const Config& cfg, const Eval& ev, const PlanShape& s) {
    Request r = cfg.req;
    r["batch"] = std::to_string(ev.micro);
    r["grad-accum"] = std::to_string(ev.accum);
    r["provider"] = s.provider_id;
    if (s.spot) r["spot"] = "on";
    if (ev.ranks > 1) {
      r["gpus"] = std::to_string(s.gpus_per_node);
      if (s.nodes > 1) {
        r["nodes"] = std::to_string(s.nodes);
        r["network"] = s.network;
        r["network-gbit-per-gpu"] = json(s.network_gbit_per_gpu).dump();
      }
      r["parallel"] = ev.parallel;
      if (ev.offload != "none") r["offload"] = ev.offload;
    }
    return r;
  }

  PlanEntry make_entry(int ci) const {
    const Cand& cd = cands_[static_cast<std::size_t>(ci)];
    const Eval& ev = evals_[static_cast<std::size_t>(cd.eval)];
    const Config& cfg = configs_[static_cast<std::size_t>(ev.config)];
    const PlanShape& s = shapes_[static_cast<std::size_t>(cd.shape)];
    const GpuSpec& g = *db_.gpu(s.gpu_id);
    PlanEntry e;
    e.shape = s;
    e.gpu_name = g.name;
    e.memory_gib = g.memory_gib;
    e.method = cfg.method;
    e.stack = cfg.stack;
    e.parallel = ev.parallel;
    e.offload = ev.offload;
    e.checkpointing = cfg.checkpointing;
    e.optimizer = cfg.optimizer;
    e.micro_batch = ev.micro;
    e.grad_accum = ev.accum;
    e.effective_batch = ev.micro * ev.accum * ev.ranks;
    e.max_micro_batch = ev.max_micro;
    e.hours = ev.hours;
    e.cost_usd = cd.cost;
    e.step_s = ev.step_s;
    e.throughput_qps = ev.qps;
    e.peak_gib_per_gpu = ev.peak / kGiB;
    e.usable_gib = ev.usable / kGiB;
    e.bottleneck = ev.bottleneck;
    e.bottleneck_share = ev.share;
    e.request = entry_request(cfg, ev, s);
    return e;
  }

  static std::string label(const PlanEntry& e) {
    std::string s = (e.shape.ranks() > 1 ? std::to_string(e.shape.ranks()) + "x " : std::string()) +
                    e.shape.gpu_id + " at " + e.shape.provider + (e.shape.spot ? " (spot)" : "");
    if (e.shape.ranks() > 1) s += ", " + e.parallel;
    return s;
  }

  // Why entry k of the front is there: its place on the front, bottleneck, memory, offload, micro-batch
  // and price age.
  std::string why_on_front(const PlanEntry& e, const std::vector<int>& front, std::size_t k) const {
    std::string why;
    if (k == 0) why = "cheapest plan that meets the constraints";
    if (k + 1 == front.size())
      why += std::string(why.empty() ? "" : "; ") + "fastest plan that meets the constraints";
    if (why.empty()) {
      const double dh = hours_of(front[k - 1]) - e.hours;
      const double dc = e.cost_usd - cost_of(front[k - 1]);
      why = hours_text(dh) + " faster than the next cheaper plan for " + money(dc) + " more";
    }
    why += "; bottleneck " + e.bottleneck + " (" + pct(e.bottleneck_share) +
           (e.bottleneck == "host" || e.bottleneck == "communication" || e.bottleneck == "optimizer"
                ? " of the step)"
                : " of device time)");
    why += "; peak " + num(e.peak_gib_per_gpu, 1) + " of " + num(e.usable_gib, 1) + " GiB usable per GPU (" +
           num(e.usable_gib - e.peak_gib_per_gpu, 1) + " GiB headroom" +
           (e.peak_gib_per_gpu > kTightMemoryFraction * e.usable_gib ? ", tight" : "") + ")";
    if (e.offload != "none")
      why += "; " +
             std::string(e.offload == "params" ? "parameters and optimizer states" : "optimizer states") +
             " offloaded to host RAM (nothing fits on these GPUs without it)";
    if (e.micro_batch == e.max_micro_batch)
      why += "; micro-batch " + std::to_string(e.micro_batch) +
             (e.shape.ranks() == 1 ? " is the largest whose memory range (upper end) fits, and the fastest"
                                   : " is the largest that fits, and the fastest");
    else if (e.grad_accum == 1)
      why += "; micro-batch " + std::to_string(e.micro_batch) + " is the fastest that fits (up to " +
             std::to_string(e.max_micro_batch) + " fit, slower: padding to the longest sample of a batch)";
    if (e.shape.stale) why += "; its price is older than " + std::to_string(stale_days_) + " days";
    if (e.shape.date.empty()) why += "; its price is undated";
    return why;
  }

  void add_alt(const std::string& what, const std::string& why) { res_.alternatives.push_back({what, why}); }

  // The cheapest single GPU, against the deadline, the budget or a multi-GPU best plan.
  void single_gpu_alternative(int cheapest_single_any) {
    if (cheapest_single_any < 0) return;
    res_.cheapest_single_gpu = make_entry(cheapest_single_any);
    res_.cheapest_single_gpu.id = -1;
    const PlanEntry e = make_entry(cheapest_single_any);
    const double h = e.hours;
    if (c_.deadline_hours > 0 && h > c_.deadline_hours)
      add_alt("cheapest single GPU: " + label(e) + ", " + money(e.cost_usd),
              "misses the deadline: " + hours_text(h) + " > " + hours_text(c_.deadline_hours));
    else if (c_.budget_usd > 0 && e.cost_usd > c_.budget_usd)
      add_alt("cheapest single GPU: " + label(e),
              "over budget: " + money(e.cost_usd) + " > " + money(c_.budget_usd));
    else if (res_.best >= 0 && res_.front[static_cast<std::size_t>(res_.best)].shape.ranks() > 1)
      add_alt("cheapest single GPU: " + label(e) + ", " + money(e.cost_usd) + ", " + hours_text(h),
              c_.minimize == "time" ? "slower than the best plan" : "costs more than the best plan");
  }

  // The fastest shape off the front, and the cheapest of all when it is not the single-GPU one.
  void fastest_and_cheapest_alternatives(const Picks& p, const std::vector<int>& front) {
    if (p.fastest_any >= 0 && res_.best >= 0 &&
        std::find(front.begin(), front.end(), p.fastest_any) == front.end()) {
      const PlanEntry e = make_entry(p.fastest_any);
      const PlanEntry& b = res_.front[static_cast<std::size_t>(res_.best)];
      if (e.hours < b.hours) {
        std::string why = "costs " + money(e.cost_usd) + " (" +
                          num(e.cost_usd / std::max(1e-9, b.cost_usd), 1) + "x the best plan's " +
                          money(b.cost_usd) + ") to finish in " + hours_text(e.hours);
        if (c_.budget_usd > 0 && e.cost_usd > c_.budget_usd) why = "over budget: " + why;
        add_alt("fastest shape: " + label(e), why);
      }
    }
    if (p.cheapest_any >= 0 && res_.best >= 0 && p.cheapest_any != p.cheapest_single_any) {
      const PlanEntry e = make_entry(p.cheapest_any);
      const PlanEntry& b = res_.front[static_cast<std::size_t>(res_.best)];
      if (e.cost_usd < b.cost_usd)
        add_alt("cheapest of all: " + label(e) + ", " + money(e.cost_usd),
                c_.deadline_hours > 0 && e.hours > c_.deadline_hours
                    ? "misses the deadline: " + hours_text(e.hours) + " > " + hours_text(c_.deadline_hours)
                    : "slower than the best plan (" + hours_text(e.hours) + ")");
    }
  }

  // Why the obvious alternatives lose.
  void add_alternatives(const Picks& p, const std::vector<int>& front) {
    single_gpu_alternative(p.cheapest_single_any);
    fastest_and_cheapest_alternatives(p, front);
    std::vector<std::string> ids;
    for (const auto& g : no_fit_gpus_)
      if (fit_gpus_.count(g) == 0) ids.push_back(g);
    if (!ids.empty()) {
      if (ids.size() > 6) {
        const std::size_t more = ids.size() - 6;
        ids.resize(6);
        ids.push_back("and " + std::to_string(more) + " more");
      }
      add_alt("one GPU of: " + join_ids(ids),
              "the job does not fit on one of them at micro-batch 1 in any configuration tried");
    }
    // GPUs the job cannot even be resolved on (a --headroom above their memory): left out, and why
    for (const auto& [gpu, why] : unresolved_)
      if (resolved_gpus_.count(gpu) == 0) add_alt(gpu, "left out: " + why);
    if (res_.front.empty() && cands_.empty())
      add_alt("any plan", "nothing fits: try --methods qlora, more GPUs (--max-gpus) or other --gpus");
  }
};

}  // namespace

Result<PlanResult> plan(const Request& job_in, const PlanConstraints& c, const Database& db,
                        const FileReader& reader, long today_days) {
  const auto t0 = std::chrono::steady_clock::now();
  PlanResult res;
  res.constraints = c;
  if (auto st = check_plan_job(job_in); !st.ok()) return st.error();
  if (db.gpus().empty()) return make_error(Errc::invalid_value, "--gpus", "the database has no GPUs");
  // The job itself must be valid whatever the GPU (an unknown model or a bad flag is an error, not a prune);
  // a GPU it cannot be resolved on (a --headroom above its memory) is left out with a note. The largest
  // GPUs first: the likeliest to take the job.
  std::vector<std::string> gpus = c.gpus.empty() ? db.gpu_ids() : c.gpus;
  std::stable_sort(gpus.begin(), gpus.end(), [&db](const std::string& a, const std::string& b) {
    const GpuSpec* ga = db.gpu(a);
    const GpuSpec* gb = db.gpu(b);
    return ga != nullptr && gb != nullptr && ga->usable_bytes() > gb->usable_bytes();
  });
  FTCOST_TRY(gpu_probe, probe_gpus(job_in, gpus, db, reader, today_days));
  const Inputs& probe_in = gpu_probe.in;
  const FileReader& summarised = gpu_probe.reader;  // one binning of the user's lengths
  if (job_in.count("stack") != 0 && db.stack(job_in.at("stack")) == nullptr)
    return make_error(Errc::invalid_value, "--stack",
                      job_in.at("stack") +
                          " is a profile file; the plan searches the database's stacks (ids, or --stacks): "
                          "price your profile with estimate, compare or scale --stack FILE");
  const std::string job_method = method_name(probe_in.workload.method);
  const std::string job_stack = probe_in.stack.id;
  std::vector<std::string> methods = c.methods.empty() ? std::vector<std::string>{job_method} : c.methods;
  std::vector<std::string> stacks = c.stacks.empty() ? std::vector<std::string>{job_stack} : c.stacks;
  if (!c.methods.empty() && job_in.count("method") != 0 &&
      std::find(methods.begin(), methods.end(), job_method) == methods.end())
    return make_error(Errc::invalid_value, "--methods",
                      "does not include the job's --method " + job_method + "; give one or the other");
  if (!c.stacks.empty() && job_in.count("stack") != 0 &&
      std::find(stacks.begin(), stacks.end(), job_stack) == stacks.end())
    return make_error(Errc::invalid_value, "--stacks",
                      "does not include the job's --stack " + job_stack + "; give one or the other");
  PlanSearch search(job_in, c, db, summarised, today_days, probe_in,
                    plan_shapes(db, c, today_days, probe_in.stale_days), res);
  search.search(methods, stacks);
  search.choose();
  res.search_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return res;
}

}  // namespace ftcost
