// The multi-GPU step evaluation: per strategy the rank's compute, each collective with its overlap rule, the
// job's time and cost (evaluate), the micro-batch choice and --parallel auto's choice of strategy. The rest
// of the layer: parallel_internal.hpp lists its files.
#include "ftcost/parallel.hpp"

#include "ftcost/calibration.hpp"
#include "ftcost/paper.hpp"
#include "ftcost/units.hpp"
#include "parallel_internal.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace ftcost {

using detail::add;
using detail::comm_item;
using detail::Ctx;
using detail::d;
using detail::Eval;
using detail::gib_text;
using detail::is_fsdp;
using detail::is_zero;
using detail::zero3_fetch_totals;
using detail::Zero3FetchTotals;

// Data-parallel replicas of a plan's strategy (tensor and context groups share one replica; a Ulysses group
// holds one sample between its ranks).
int replicas(const ParallelPlan& p) {
  const int r = (p.strategy == Strategy::tp || p.strategy == Strategy::cp) ? p.ranks() / std::max(1, p.degree)
                                                                           : p.ranks();
  return r / std::max(1, p.sp);
}

namespace {

// ---- Constants with their provenance (docs/sources/parallel.md). "code" = read from the library's source,
// "assumed" = an engineering estimate the docs say is one.
// assumed: host Adam parameters updated per second per rank when host memory is not the bound (a single
// vectorised, multithreaded pass: DeepSpeed's CPUAdam, csrc/adam/cpu_adam_impl.cpp Step_AVX with OpenMP, or
// torch's fused CPU AdamW, aten/src/ATen/native/cpu/FusedAdamKernel.cpp, at::parallel_for).
constexpr double kHostAdamParamsPerS = 1.0e9;
// Host memory moved per parameter and optimizer step, in passes over an element of the states' dtype
// (structural, counted from the code):
//   DeepSpeed CPUAdam (cpu_adam_impl.cpp Step_AVX @ edaa722): reads the fp32 parameter, gradient and both
//     moments, writes the parameter and the moments: 7 passes of 4 B = 28 B.
//   torch fused AdamW on CPU (FusedAdamKernel.cpp adam_math: one loop over param, grad, exp_avg,
//     exp_avg_sq): the same 7 passes, of the parameters' own dtype.
//   torch foreach / for-loop (torch/optim/adam.py _single_tensor_adam, _multi_tensor_adam: one tensor op
//     each): param.mul_(1 - lr wd) 2, exp_avg.lerp_(grad) 3, exp_avg_sq.mul_ 2 and .addcmul_(grad, grad) 3,
//     sqrt 2, / bias_correction2_sqrt 2, .add_(eps) 2, param.addcdiv_(exp_avg, denom) 4: 20 passes.
// This replaces the assumed 6x slowdown of torch's optimizer (DeepSpeedCPUAdam's docstring, 5x-7x).
constexpr double kFusedAdamPasses = 7.0;
constexpr double kUnfusedAdamPasses = 20.0;

// Host bytes per parameter of the node's optimizer step: DeepSpeed's CPUAdam keeps fp32 states (ZeRO); FSDP's
// CPU offload steps the user's torch AdamW on the host shards in the parameters' dtype: fp32 with mixed
// precision (adamw-mixed), the compute dtype with pure 16-bit training (torchtune's dtype: bf16).
double host_adam_bytes_per_param(Strategy s, const Inputs& in) {
  if (!is_fsdp(s)) return kFusedAdamPasses * 4.0;
  const Workload& w = in.workload;
  const double elem = w.optimizer == Optimizer::adamw_mixed || w.precision == "fp32" ? 4.0 : 2.0;
  return (adamw_fused(in.stack, w) ? kFusedAdamPasses : kUnfusedAdamPasses) * elem;
}

// Parameters the host optimizer updates per second per rank: the lesser of the assumed compute rate and the
// node's sustained host memory shared by its ranks (they step at once) over the bytes per parameter.
double host_adam_params_per_s(Strategy s, const Inputs& in, const ParallelPlan& plan) {
  const double memory = sustained_host_memory_gbps(plan.host_memory_gbps) * 1e9 /
                        (host_adam_bytes_per_param(s, in) * std::max(1, plan.gpus_per_node));
  return std::min(kHostAdamParamsPerS, memory);
}

// DeepSpeed ZeRO-3 runs Python hooks around every sub-module with parameters of its own
// (parameter_offload.py _pre_forward_module_hook / _post_forward_module_hook and their backward twins ->
// partitioned_param_coordinator.py fetch_sub_module, release_sub_module @ edaa722): trace bookkeeping, the
// prefetch walk, the coalesced all-gather's buffers and launch, the release's partition and record_stream.
// DeepSpeed's own PRs name this host time as the cost of fine-grained MoE models (#6649
// zero_module_granularity_threshold, "reducing host overhead (reduce many hooks)", 64 experts x 3 linears;
// #6694). It hides behind the device while the host runs ahead, but the eager expert loop syncs on
// torch.where before every expert (throughput.cpp expert_loop), so the hooks of its expert Linears add to the
// step. assumed: 0.4 ms per sub-module fetch + release (about 140 lines of Python in fetch_sub_module alone,
// the all-gather's tensor ops, and a few CUDA event/stream calls), an order-of-magnitude estimate, not
// fitted. A stack that registers the MoE block as a ZeRO-3 leaf module (zero3_moe_leaf_modules: LLaMA-Factory
// >= v0.8.0, model/model_utils/moe.py add_z3_leaf_module) fetches it whole, once per block: no such cost.
constexpr double kZero3HookHostS = 0.4e-3;

// Per micro-batch, the ZeRO-3 hook time the expert loop exposes: every expert Linear fetched and released in
// the forward, the recompute (with checkpointing) and the backward. 0 unless the stack runs the eager loop.
double zero3_expert_hook_s(const ModelSpec& m, const StackProfile& stack, bool checkpointing) {
  if (stack.moe_execution != "loop" || stack.zero3_moe_leaf_modules || m.layers_with(Ffn::moe) == 0) return 0;
  const MoeSpec& e = m.moe;
  const double linears = d(m.layers_with(Ffn::moe)) * d(e.experts) * (e.gated ? 3.0 : 2.0);
  return linears * (checkpointing ? 3.0 : 2.0) * kZero3HookHostS;
}

// Ranks one sample's sequence is split over: context parallelism's degree, Ulysses' group.
double sequence_split(const ParallelPlan& plan, Strategy st) {
  return (st == Strategy::cp ? plan.degree : 1) * static_cast<double>(std::max(1, plan.sp));
}

// DeepSpeed Ulysses (--sequence-parallel N) as deepspeedai/DeepSpeed @ edaa722
// runtime/sequence_parallel/ulysses_sp.py UlyssesSPAttentionHF runs it: with ZeRO (its engine shards over the
// sequence-data-parallel group, every rank), N inside a node (ftcost keeps all-to-all groups there, as tp/ep/
// cp), N dividing the GPUs and the attention heads ("Attention head count ... is not divisible by SP size"),
// and the KV heads dividing N or N dividing them (smaller KV counts are replicated, kv_replication_factor).
// The strategy label gains "+sp:N".
Status check_sequence_parallel(const ParallelPlan& plan, Strategy st, const ModelSpec& m,
                               std::string& label) {
  const int sp = plan.sp;
  if (sp <= 1) return Ok{};
  label += "+sp:" + std::to_string(sp);
  const std::string f = "--sequence-parallel";
  if (!is_zero(st))
    return make_error(Errc::invalid_value, f,
                      "DeepSpeed Ulysses runs with ZeRO (--parallel zero1, zero2 or zero3), not " + label);
  if (plan.ranks() % sp != 0)
    return make_error(Errc::invalid_value, f,
                      std::to_string(sp) + " must divide the GPU count, " + std::to_string(plan.ranks()));
  if (sp > plan.gpus_per_node)
    return make_error(Errc::invalid_value, f,
                      std::to_string(sp) + " spans more GPUs than one node has (" +
                          std::to_string(plan.gpus_per_node) +
                          "); ftcost keeps all-to-all groups inside a node");
  if (m.layers_with(Mixer::attention) == 0)
    return make_error(Errc::invalid_value, f,
                      "Ulysses splits attention heads; " + m.id + " has no attention");
  const std::int64_t kv = m.attn.kv_heads;
  if (m.attn.heads % sp != 0 || !(kv % sp == 0 || sp % kv == 0))
    return make_error(
        Errc::invalid_value, f,
        std::to_string(sp) + " must divide the " + std::to_string(m.attn.heads) +
            " attention heads, and the " + std::to_string(kv) +
            " KV heads must divide it or be divisible by it (ulysses_sp.py UlyssesSPAttentionHF)");
  return Ok{};
}

// The hooks' host time in a ZeRO-3 micro-batch's forward (one pass of the two or three) and backward.
void add_zero3_hooks(ParallelEstimate& e, const Ctx& c, double& micro_s, double& fwd_s, double& bwd_s) {
  const Workload& w = c.in.workload;
  const double hooks = zero3_expert_hook_s(c.m_eff, c.in.stack, w.checkpointing);
  const double fwd_share = hooks / (w.checkpointing ? 3.0 : 2.0);
  micro_s += hooks;
  fwd_s += fwd_share;
  bwd_s += hooks - fwd_share;
  e.zero3_hook_s = c.plan.grad_accum * hooks;
}

// The model one tensor-parallel rank holds: heads, FFN widths and the vocabulary split t ways (Megatron's
// column/row-parallel linears and vocab-parallel embedding).
ModelSpec tp_shard(const ModelSpec& m, int t) {
  ModelSpec r = m;
  auto div = [t](std::int64_t v) { return std::max<std::int64_t>(1, (v + t - 1) / t); };
  r.attn.heads = div(m.attn.heads);
  r.attn.kv_heads = div(m.attn.kv_heads);
  r.mlp.intermediate = div(m.mlp.intermediate);
  r.moe.expert_intermediate = div(m.moe.expert_intermediate);
  r.moe.shared_intermediate = div(m.moe.shared_intermediate);
  r.mamba.d_inner = div(m.mamba.d_inner);
  r.vocab = div(m.vocab);
  return r;
}

// The busiest EP rank's share of routed pairs over the mean (experts placed contiguously, E/ep per rank).
double ep_imbalance(const std::vector<double>& shares, int ep) {
  if (shares.empty() || ep <= 1) return 1.0;
  const std::size_t per = shares.size() / static_cast<std::size_t>(ep);
  if (per == 0) return 1.0;
  double sum = 0;
  double mx = 0;
  for (int r = 0; r < ep; ++r) {
    double s = 0;
    for (std::size_t i = 0; i < per; ++i) s += shares[static_cast<std::size_t>(r) * per + i];
    mx = std::max(mx, s);
    sum += s;
  }
  return sum > 0 ? mx * ep / sum : 1.0;
}

// Ulysses' all-to-alls per attention layer and pass (ulysses_sp.py _combine_local_sequences: query, key and
// value, each [L/N, b, heads, head_dim] per rank, KV heads replicated up to N; _partition_global_sequence:
// the attention output back), each as many bytes per rank as the local tensor; the backward runs the same
// four in reverse (_DimZeroAllToAll's backward is an all-to-all) and checkpointing a recompute. On the
// critical path.
void add_ulysses_all_to_all(ParallelEstimate& e, const Ctx& c, double micro, double len) {
  const int sp = c.plan.sp;
  if (sp <= 1) return;
  const Workload& w = c.in.workload;
  const AttentionSpec& a = c.m_eff.attn;
  const double local = micro * len / sp * d(a.head_dim) * w.compute_bytes();
  const double q = local * d(a.heads);
  const double kv = local * d(std::max<std::int64_t>(a.kv_heads, sp));
  const double passes = 2.0 + (w.checkpointing ? 1.0 : 0.0);
  const double layers = d(c.m_eff.layers_with(Mixer::attention)) * passes * c.plan.grad_accum;
  const double t_q = collective_time_s(CollOp::all_to_all, q, sp, c.plan.intra, c.plan.collectives);
  const double t_kv = collective_time_s(CollOp::all_to_all, kv, sp, c.plan.intra, c.plan.collectives);
  CommItem it =
      comm_item("Ulysses sequence all-to-all (query, key, value in; output back)", CollOp::all_to_all,
                "intra-node", sp, (2.0 * q + 2.0 * kv) / 4.0, 4.0 * layers, layers * (2.0 * t_q + 2.0 * t_kv),
                "on the critical path (attention waits for its heads; the output for its sequence)");
  it.exposed_s = it.time_s;
  add(e, it);
}

// Whole optimizer steps: transformers' Trainer (Trainer.set_initial_training_values, 4.5x) runs
// max_steps = ceil(num_train_epochs x num_update_steps_per_epoch), an epoch being at least one step of
// ceil(rows / global batch) (the dataloader keeps its short last batch: drop_last off, DistributedSampler
// pads it). A global batch larger than the data is one whole step per epoch, never a fraction of one.
void whole_step_time(ParallelEstimate& e, const Workload& w) {
  const double rows = w.rows_per_epoch();
  e.steps_per_epoch = std::max(1.0, std::ceil(rows / d(e.global_batch)));
  e.optimizer_steps = std::ceil(w.epochs * e.steps_per_epoch);
  e.time_hours = e.optimizer_steps * e.step_s / 3600.0;
  if (d(e.global_batch) <= rows) return;
  const std::string rows_text = rows == std::floor(rows) ? std::to_string(static_cast<long long>(rows))
                                                         : json(std::round(rows * 10) / 10).dump();
  e.warnings.push_back("global batch " + std::to_string(e.global_batch) + " (" +
                       std::to_string(e.micro_batch) + " per GPU x " + std::to_string(e.dp) + " replicas x " +
                       std::to_string(e.plan.grad_accum) + " accumulation) is larger than the data (" +
                       rows_text + (w.queries_per_row() > 1 ? " packed rows" : " samples") +
                       "): an epoch is one optimizer step, and the time counts whole steps; fewer GPUs or a "
                       "smaller --batch do the same work with less idle hardware");
}

// ZeRO-3's plan-wide counts, once per plan rather than per micro-batch tried: the elements kept by the reuse
// distance and the mean fetched sub-module (0 for other strategies).
void init_zero3(Ctx& c) {
  if (c.st != Strategy::zero3) return;
  c.z3_retained = zero3_retained_elems(c.m_eff, c.plan.zero3.max_reuse_distance, c.in.workload.checkpointing);
  const Zero3FetchTotals t = zero3_fetch_totals(zero3_fetch_modules(c.m_eff));
  c.z3_mean_module = t.calls > 0 ? t.elems / t.calls : 0;
}

// NCCL's row of its tuning tables from the GPU's compute capability (tuning.cc compCapIndex: >= 10.0
// Blackwell, >= 9.0 Hopper, >= 8.0 Ampere, else Volta); Ampere when the GPU file does not say.
int nccl_arch_of(const GpuSpec& g) {
  const auto cc = parse_compute_capability(g.compute_capability);
  if (!cc) return 1;
  const int v = cc->first * 10 + cc->second;
  return v >= 100 ? 3 : v >= 90 ? 2 : v >= 80 ? 1 : 0;
}

// --parallel auto's order: a candidate whose per-rank upper end fits before one that may not fit, then the
// faster first.
bool upper_end_fits(const ParallelEstimate& e) { return e.memory_high <= e.usable_bytes; }
bool by_fit_then_speed(const ParallelEstimate& a, const ParallelEstimate& b) {
  if (upper_end_fits(a) != upper_end_fits(b)) return upper_end_fits(a);
  return a.throughput_qps > b.throughput_qps;
}

// --parallel auto's reason names the step's largest collective with NCCL's algorithm for it and the link that
// bounds it (the node's NICs when network-bound, else the intra-node link); empty without one.
std::string largest_collective_note(const ParallelEstimate& e) {
  const CommItem* big = nullptr;
  for (const auto& c : e.comm)
    if (!c.algorithm.empty() && (big == nullptr || c.time_s > big->time_s)) big = &c;
  if (big == nullptr) return "";
  const bool net = big->algorithm.find("network-bound") != std::string::npos;
  const std::string link = net ? std::string("the node's NICs (") + link_kind_name(e.plan.inter.kind) + ")"
                               : std::string(link_kind_name(e.plan.intra.kind));
  return "; largest collective: " + big->name + ", NCCL " +
         big->algorithm.substr(0, big->algorithm.find(',')) + " over " + link + ", " +
         json(std::round(big->exposed_s * 1000) / 1000).dump() + " s exposed of " +
         json(std::round(big->time_s * 1000) / 1000).dump();
}

// How the micro-batch is chosen: given (--batch N), fastest (--batch fastest) or largest (--batch max).
std::string batch_rule(const Workload& w) {
  if (w.batch > 0) return "given";
  return w.batch_fastest ? "fastest" : "largest";
}

// The warning of a job whose resident memory fits but whose per-rank range's upper end does not, naming the
// term that decides.
void warn_may_not_fit(ParallelEstimate& e) {
  if (!e.fits || e.memory_high <= e.usable_bytes) return;
  std::string w = "may not fit: the per-GPU memory range's upper end, " + gib_text(e.memory_high);
  w += " GiB, exceeds the " + gib_text(e.usable_bytes) + " GiB usable";
  if (e.memory.residue_high > 0)
    w += "; it includes " + gib_text(e.memory.residue_high) + " GiB of " + e.memory.residue_term;
  else
    w += " (the stack's uncertainty on activations, loss and allocator)";
  e.warnings.push_back(w);
}

// One line of --parallel auto's explanation for a candidate not chosen: slower, or (when the chosen one's
// upper end fits and this one's does not) may not fit, with the term that decides.
std::string not_chosen_line(const ParallelEstimate& e, bool safe, bool best_safe) {
  std::string line = "slower: ";
  if (best_safe && !safe) {
    line = "may not fit (upper end " + gib_text(e.memory_high) + " GiB per GPU";
    if (!e.memory.residue_term.empty()) line += ", with " + e.memory.residue_term;
    line += "): ";
  }
  return line + e.strategy_label + " at " + json(std::round(e.throughput_qps * 1000) / 1000).dump() +
         " queries/s (batch " + std::to_string(e.micro_batch) + ")";
}

// The flags a multi-GPU plan must agree with, each error naming its flag (label gains "+sp:N" with
// sequence parallelism).
Status check_plan_flags(const ParallelPlan& plan, const ModelSpec& m, int deg, std::string& label) {
  const Strategy st = plan.strategy;
  const int R = plan.ranks();
  if (deg > 1 && (R % deg != 0))
    return make_error(
        Errc::invalid_value, "--parallel",
        label + " needs a GPU count divisible by " + std::to_string(deg) + ", got " + std::to_string(R));
  if (deg > plan.gpus_per_node)
    return make_error(Errc::invalid_value, "--parallel",
                      label + " spans more GPUs than one node has (" + std::to_string(plan.gpus_per_node) +
                          "); ftcost keeps tensor, expert and context groups inside a node");
  if (auto fit = check_parallel_for_model(st, deg, m); !fit.ok()) return fit.error();
  if (auto sp = check_sequence_parallel(plan, st, m, label); !sp.ok()) return sp.error();
  if (plan.offload != Offload::none && !(is_zero(st) || is_fsdp(st)))
    return make_error(Errc::invalid_value, "--offload",
                      "applies to zero1/zero2/zero3 and fsdp strategies, not " + label);
  if (plan.offload == Offload::params && !(st == Strategy::zero3 || is_fsdp(st)))
    return make_error(Errc::invalid_value, "--offload",
                      "params needs zero3 or fsdp (ZeRO-1/2 keep parameters on the GPU)");
  if (offload_on_nvme(plan.offload) && st != Strategy::zero3)
    return make_error(Errc::invalid_value, "--offload",
                      std::string(offload_name(plan.offload)) +
                          " needs zero3: DeepSpeed swaps to NVMe only in ZeRO stage 3 (ZeRO-Infinity: "
                          "stage3.py _configure_tensor_swapping), not " +
                          label);
  if (plan.offload == Offload::optimizer && is_fsdp(st))
    return make_error(
        Errc::invalid_value, "--offload",
        "FSDP offloads parameters, gradients and optimizer step together: use --offload params");
  if (plan.nodes > 1 && plan.inter.kind == LinkKind::none)
    return make_error(Errc::missing_field, "--network",
                      "--nodes > 1 needs a network: a --node preset with one, or --network and "
                      "--network-gbit-per-gpu");
  return Ok{};
}

}  // namespace

// Per-rank memory and the micro-batch: the largest that fits, the one chosen, and why; false when not even
// micro-batch 1 fits (the estimate then says so and stops).
bool detail::Eval::size_micro_batch() {
  e.seq_len = c.seq_len;
  e.dp = replicas(plan);
  e.usable_bytes = in.gpu.usable_bytes();
  e.max_micro_batch = max_micro(c, e.usable_bytes);
  e.max_micro_range_fit = max_micro_upper(c, e.usable_bytes, e.max_micro_batch);
  e.micro_batch = w.batch > 0 ? w.batch : e.max_micro_batch;
  if (w.batch <= 0 && (w.batch_fastest || w.effective_batch > 0) && e.max_micro_range_fit > 0)
    e.micro_batch = e.max_micro_range_fit;  // choose_micro() times the others
  e.batch_choice.rule = batch_rule(w);
  e.batch_choice.reason =
      e.batch_choice.rule == "largest" ? "the largest micro-batch per GPU that fits (--batch max)" : "";
  e.batch_choice.largest = e.max_micro_range_fit;
  e.batch_choice.grad_accum = plan.grad_accum;
  e.max_seq_len = known_max_seq >= 0 ? known_max_seq : max_seq_rank(c, e.usable_bytes);
  if (w.batch > 0 && w.batch > e.max_micro_batch)
    e.warnings.push_back("batch " + std::to_string(w.batch) +
                         " per GPU does not fit: the maximum per rank is " +
                         std::to_string(e.max_micro_batch));
  e.memory = rank_memory(c, std::max<std::int64_t>(e.micro_batch, 0));
  e.fits = e.micro_batch > 0 && e.memory.resident() <= e.usable_bytes;
  if (e.micro_batch > 0 && !e.fits)
    e.does_not_fit = "batch " + std::to_string(e.micro_batch) + " per GPU needs " +
                     gib_text(e.memory.resident()) + " GiB per rank";
  check_node_host_ram(e);
  if (is_zero(st) && w.method == Method::full) {
    const std::int64_t P = m.params().total();
    if (st == Strategy::zero3)
      e.deepspeed = deepspeed_zero3_estimate(P, largest_module_params(m), plan.gpus_per_node, plan.nodes,
                                             plan.offload != Offload::none, offloads_params(plan.offload));
    else
      e.deepspeed =
          deepspeed_zero2_estimate(P, plan.gpus_per_node, plan.nodes, plan.offload != Offload::none);
  }
  if (e.micro_batch <= 0) {
    // the memory shown is micro-batch 1's, the job that does not fit (as on one GPU)
    e.memory = rank_memory(c, 1);
    const std::string gpu = "even batch 1 per GPU needs " + gib_text(e.memory.resident()) + " GiB per rank";
    e.does_not_fit = gpu + (e.does_not_fit.empty() ? "" : "; " + e.does_not_fit);
    e.warnings.push_back("does not fit: " + gpu);
    return false;
  }
  e.global_batch = e.micro_batch * e.dp * plan.grad_accum;

  return true;
}

// The rank's compute: one micro-batch's forward and backward (expert imbalance, the attention a sequence
// split repeats, ZeRO-3's hooks), and the optimizer step (sharded, or on the host with offload).
void detail::Eval::rank_compute() {
  len = w.mean_padded_len(e.micro_batch);
  step_len = len / sequence_split(plan, st);
  Workload w1 = w;
  w1.grad_accum = 1;  // this layer spreads the optimizer step over the micro-batches itself
  t = step_model(c.m_eff, w1, in.stack, in.gpu, in.calibration.get(), e.micro_batch, step_len,
                 in.expert_shares);
  const auto S = [&](Stage s) { return t.by_stage[static_cast<std::size_t>(s)]; };
  micro_s = t.total_s - S(Stage::optimizer);
  fwd_s = S(Stage::forward);
  bwd_s = S(Stage::backward) + S(Stage::recompute);
  if (st == Strategy::ep) {
    e.expert_imbalance = ep_imbalance(in.expert_shares, deg);
    const double extra =
        t.by_class[static_cast<std::size_t>(KernelClass::expert_gemm)] * (e.expert_imbalance - 1.0);
    micro_s += extra;
    bwd_s += extra * 2.0 / 3.0;
    fwd_s += extra / 3.0;
  }
  if (const double split = sequence_split(plan, st); split > 1) {
    // Causal attention is quadratic: each rank computes 1/c of the full-length attention, c times its own
    // chunk's (L/c)^2 work (load-balanced ring attention); Ulysses' rank runs 1/N of the heads over the whole
    // sequence, N times the (L/N)^2 work of its own tokens with every head.
    const double extra = t.by_class[static_cast<std::size_t>(KernelClass::attention)] * (split - 1.0);
    micro_s += extra;
    bwd_s += extra * 2.0 / 3.0;
    fwd_s += extra / 3.0;
  }
  if (st == Strategy::zero3) add_zero3_hooks(e, c, micro_s, fwd_s, bwd_s);
  e.compute_s = plan.grad_accum * micro_s;
  double opt = S(Stage::optimizer);
  const ParamBreakdown pb = param_breakdown(c.m_eff, w);
  if (is_sharded_dp(st)) opt /= shard_group(plan, st);
  if (plan.offload != Offload::none) {
    const double n = shard_group(plan, st);
    opt = pb.trainable / n / host_adam_params_per_s(st, in, plan);
    const double bytes = 2.0 * pb.trainable / n * 2.0;  // 16-bit grads down, 16-bit params up
    CommItem it = comm_item("offload: gradients to host, parameters back (PCIe)", CollOp::send_recv,
                            "pcie-host", 1, bytes / 2, 2, bytes / own_pcie_bytes_per_s(in.gpu), "");
    it.exposed_s = it.time_s;
    it.overlap = "exposed (around the host optimizer step)";
    add(e, it);
    add_offload_accumulation_crossings(e, in.gpu, bytes / 2, bwd_s);
    add_nvme_optimizer_swaps(e);
  }
  e.optimizer_s = opt;
  add_optimizer_paging_item(e, in.gpu);
}

// The step, throughput and ranges, the price and the job's time and cost.
ParallelEstimate detail::Eval::finish(const Estimate& single, const Database& db) {
  e.step_s = e.compute_s + e.optimizer_s + e.comm_exposed_s;
  if (e.zero3_hook_s > 0.05 * e.step_s)
    e.warnings.push_back(
        "ZeRO-3 fetches every expert Linear as its own sub-module, and the eager expert loop's "
        "host syncs expose DeepSpeed's fetch/release hooks: " +
        json(std::round(e.zero3_hook_s * 100) / 100).dump() +
        " s per step (assumed 0.4 ms each); deepspeed.utils.set_z3_leaf_modules on the MoE "
        "block, a grouped-expert stack or ZeRO-2 avoid it");
  const double queries_per_row = w.queries_per_row();  // samples per row (packing)
  e.throughput_qps = d(e.global_batch) * queries_per_row / e.step_s;
  e.throughput_tps = e.throughput_qps / queries_per_row * len;
  e.throughput_data_tps = e.throughput_qps * w.mean_data_len();
  const double rf = step_range_fraction(in);
  e.throughput_low = e.throughput_qps / (1 + rf);
  e.throughput_high = e.throughput_qps * (1 + rf);
  e.memory_low = e.memory.total() - in.stack.memory_uncertainty_fraction * e.memory.base.variable();
  e.memory_high = e.memory.total() + in.stack.memory_uncertainty_fraction * e.memory.base.variable() +
                  e.memory.residue_high;
  warn_may_not_fit(e);
  if (single.batch > 0 && single.batch <= single.max_batch.batch && single.throughput_qps > 0)
    e.scaling_efficiency = e.throughput_qps / (R * single.throughput_qps);
  whole_step_time(e, w);
  e.price = single.chosen.price;
  if (!single.has_price && single.batch <= 0) {
    // The single-GPU estimate stops before pricing when one GPU cannot hold the job: the same rule here.
    Estimate priced = single;
    const std::size_t had = priced.warnings.size();
    estimate_costs(priced, db);
    if (priced.has_price) e.price = priced.chosen.price;
    e.warnings.insert(e.warnings.end(), priced.warnings.begin() + static_cast<std::ptrdiff_t>(had),
                      priced.warnings.end());
  }
  if (single.has_price || e.price.usd_per_hour > 0 || e.price.basis == "given") {
    e.usd_per_gpu_hour = e.price.usd_per_hour;
    e.price_provider = e.price.provider;
  }
  if (!e.fits) {
    // A job that does not fit (GPU memory at this micro-batch, or host RAM for the offload) has no time and
    // no cost, as on one GPU; its step stays for what it would take (validate compares measured steps).
    e.time_hours = 0;
    return e;
  }
  e.hours_low = e.time_hours / (1 + rf);
  e.hours_high = e.time_hours * (1 + rf);
  if (e.usd_per_gpu_hour > 0) {
    e.cost_usd = e.time_hours * e.usd_per_gpu_hour * R;
    e.cost_low = e.hours_low * e.usd_per_gpu_hour * R;
    e.cost_high = e.hours_high * e.usd_per_gpu_hour * R;
  }
  return e;
}

namespace {

// known_max_seq: the rank's longest sequence at micro-batch 1 when the caller has it for the same plan and
// accumulation (it does not depend on the micro-batch), else -1.
Result<ParallelEstimate> evaluate(const Inputs& in, const ParallelPlan& plan, const Estimate& single,
                                  const Database& db, double known_max_seq = -1) {
  // e.single stays empty: copying the single-GPU estimate into every candidate was most of --parallel auto's
  // and the plan search's time; estimate_parallel_resolved moves it into the result it returns.
  ParallelEstimate e;
  e.plan = plan;
  e.is_single = false;
  const Workload& w = in.workload;
  const ModelSpec& m = in.model;
  const Strategy st = plan.strategy;
  const int deg = (st == Strategy::tp || st == Strategy::ep || st == Strategy::cp) ? plan.degree : 1;
  e.strategy_label = std::string(strategy_name(st)) + (deg > 1 ? ":" + std::to_string(deg) : "");
  if (auto ok = check_plan_flags(plan, m, deg, e.strategy_label); !ok.ok()) return ok.error();
  if (is_zero(st) && w.method == Method::full && w.optimizer != Optimizer::adamw_mixed)
    e.warnings.emplace_back(
        "DeepSpeed ZeRO keeps fp32 master weights and Adam states (12 B/param) whatever --optimizer says; "
        "memory follows DeepSpeed's accounting");

  Ctx c{in, plan, st, deg, st == Strategy::tp ? tp_shard(m, deg) : m, single.max_batch.seq_len, 0};
  init_zero3(c);
  Eval v(in, plan, c, e);
  v.known_max_seq = known_max_seq;
  if (!v.size_micro_batch()) return e;
  v.rank_compute();
  v.comm_setup();
  v.comm_data_parallel();  // each section applies to its strategies only
  v.comm_zero();
  v.comm_fsdp();
  v.comm_model_parallel();
  add_ulysses_all_to_all(e, c, d(e.micro_batch), v.len);
  return v.finish(single, db);
}

// A 1-GPU plan: the single-GPU estimate. A data-parallel or sharding strategy named for one GPU has nothing
// to replicate or shard, and the estimate says so rather than drop the flag (tp/ep/cp:N need N GPUs: an
// error).
ParallelEstimate one_gpu(Estimate&& single, const ParallelPlan& plan) {
  ParallelEstimate e;
  e.single = std::move(single);
  e.plan = plan;
  e.is_single = true;
  e.strategy_label = "single";
  if (plan.strategy != Strategy::single)
    e.single.warnings.push_back(std::string("--parallel ") + strategy_name(plan.strategy) +
                                " applies only with more than one GPU (--gpus, --nodes): one GPU has nothing "
                                "to replicate or shard, this is the single-GPU estimate (--offload runs "
                                "DeepSpeed ZeRO or FSDP offload on one GPU)");
  return e;
}

// The micro-batches choose_micro times: with --effective-batch those that divide it over the replicas (at
// most `limit`), with padding to the longest sample the powers of two below the limit and the limit, else
// none (with every sample the same length the largest is the fastest).
std::vector<std::int64_t> micro_candidates_for(const Workload& w, int dp, std::int64_t limit) {
  std::vector<std::int64_t> out;
  if (w.effective_batch > 0) {
    for (std::int64_t b = w.batch > 0 ? w.batch : 1; b <= (w.batch > 0 ? w.batch : limit); ++b)
      if (w.effective_batch % (b * dp) == 0) out.push_back(b);
    return out;
  }
  if (w.mean_padded_len(1) == w.mean_padded_len(limit)) return out;
  for (std::int64_t b = 1; b < limit; b *= 2) out.push_back(b);
  for (std::int64_t b = 3; b < limit; b *= 2) out.push_back(b);
  out.push_back(limit);
  return out;
}

// --batch fastest / --effective-batch on several GPUs: the micro-batch per rank (and the grad-accum) of the
// highest throughput among those whose rank memory's upper end fits, each candidate estimated in full.
Result<ParallelEstimate> choose_micro(const Inputs& in, const ParallelEstimate& first, Estimate& single,
                                      const Database& db) {
  const Workload& w = in.workload;
  if (!first.fits || (w.batch > 0 && w.effective_batch <= 0) ||
      (w.batch <= 0 && !w.batch_fastest && w.effective_batch <= 0))
    return first;
  const int dp = replicas(first.plan);
  const std::int64_t limit =
      first.max_micro_range_fit > 0 ? first.max_micro_range_fit : first.max_micro_batch;
  const std::vector<std::int64_t> cand = micro_candidates_for(w, dp, limit);
  if (cand.empty() && w.effective_batch > 0)
    return make_error(Errc::invalid_value, "--effective-batch",
                      std::to_string(w.effective_batch) + " is not a multiple of " +
                          (w.batch > 0 ? "--batch " + std::to_string(w.batch) + " x " : std::string()) +
                          std::to_string(dp) +
                          " data-parallel replicas with a micro-batch that fits (up to " +
                          std::to_string(limit) + ")");
  ParallelEstimate best = first;
  bool have = w.effective_batch <= 0;  // the first estimate is a candidate only without an effective batch
  int evaluated = 0;
  Inputs x = in;  // one copy for every candidate: only the batch and the accumulation change
  for (const std::int64_t b : cand) {
    x.workload.batch = b;
    x.workload.grad_accum = w.effective_batch > 0 ? w.effective_batch / (b * dp) : w.grad_accum;
    ParallelPlan p = first.plan;
    p.grad_accum = static_cast<int>(x.workload.grad_accum);
    const bool same_accum = x.workload.grad_accum == w.grad_accum;
    FTCOST_TRY(r, evaluate(x, p, single, db, same_accum ? first.max_seq_len : -1.0));
    ++evaluated;
    if (r.fits && (!have || r.throughput_qps > best.throughput_qps)) {
      best = std::move(r);
      have = true;
    }
  }
  if (!have) {
    // no micro-batch that divides the effective batch over the replicas fits: no time, no cost
    best.fits = false;
    best.does_not_fit = "no micro-batch that makes --effective-batch " + std::to_string(w.effective_batch) +
                        " over " + std::to_string(dp) + " replicas fits";
    best.warnings.push_back("does not fit: " + best.does_not_fit);
    best.time_hours = best.cost_usd = best.cost_low = best.cost_high = 0;
    return best;
  }
  BatchChoice& c = best.batch_choice;
  c.rule = w.batch > 0 ? "given" : w.batch_fastest ? "fastest" : "largest";
  c.largest = limit;
  c.grad_accum = best.plan.grad_accum;
  c.evaluated = evaluated;
  c.largest_qps = best.micro_batch == first.micro_batch ? 0 : first.throughput_qps;
  c.reason = best.micro_batch == limit
                 ? "the largest micro-batch per GPU whose memory range's upper end fits is the fastest"
                 : "micro-batch " + std::to_string(best.micro_batch) + " per GPU is the fastest that fits";
  if (c.largest_qps > 0 && best.micro_batch != limit)
    c.reason += slower_largest_note(limit, c.largest_qps, best.throughput_qps);
  if (w.effective_batch > 0)
    c.reason += " for the effective batch " + std::to_string(w.effective_batch) + " (grad-accum " +
                std::to_string(c.grad_accum) + " on " + std::to_string(dp) + " replicas)";
  single.in.workload.grad_accum = c.grad_accum;
  return best;
}

// estimate_parallel of inputs whose length is resolved.
Result<ParallelEstimate> estimate_parallel_resolved(const Inputs& in, const ParallelPlan& plan_in,
                                                    const Database& db) {
  ParallelPlan plan = plan_in;
  if (plan.gpus_per_node < 1 || plan.nodes < 1)
    return make_error(Errc::out_of_range, "--gpus", "needs at least 1 GPU per node and 1 node");
  plan.grad_accum = static_cast<int>(std::max<std::int64_t>(1, in.workload.grad_accum));
  if (plan.strategy == Strategy::hsdp && plan.nodes < 2)  // on any GPU count, one GPU included
    return make_error(Errc::invalid_value, "--parallel",
                      "hsdp shards inside a node and replicates across nodes: needs --nodes 2 or more");
  FTCOST_TRY(single, estimate(in, db));
  const bool one = plan.ranks() == 1 && plan.offload == Offload::none && !plan.choose &&
                   (plan.strategy == Strategy::single || plan.degree <= 1);
  if (one) return one_gpu(std::move(single), plan);
  if (plan.intra.kind == LinkKind::none && plan.gpus_per_node > 1)
    plan.intra = intra_node_link(in.gpu, plan.gpus_per_node, -1);
  plan.nccl_arch = nccl_arch_of(in.gpu);
  if (!plan.choose) {
    if (plan.strategy == Strategy::single) plan.strategy = Strategy::ddp;
    FTCOST_TRY(first, evaluate(in, plan, single, db));
    FTCOST_TRY(best, choose_micro(in, first, single, db));
    best.single = std::move(single);
    return best;
  }
  // --parallel auto: every applicable strategy; the fastest that fits wins.
  std::vector<ParallelPlan> cands;
  auto push = [&](Strategy s, int deg) {
    ParallelPlan p = plan;
    p.choose = false;
    p.strategy = s;
    p.degree = deg;
    cands.push_back(p);
  };
  const bool off = plan.offload != Offload::none;
  const bool zero3_only = plan.offload == Offload::params || offload_on_nvme(plan.offload);
  if (!off) push(Strategy::ddp, 1);
  for (Strategy s : {Strategy::zero1, Strategy::zero2, Strategy::zero3})
    if (!(zero3_only && s != Strategy::zero3)) push(s, 1);
  if (plan.offload == Offload::none || plan.offload == Offload::params) {
    push(Strategy::fsdp, 1);
    push(Strategy::fsdp_grad_op, 1);
    if (plan.nodes > 1) push(Strategy::hsdp, 1);
  }
  if (!off) {
    for (int d2 = 2; d2 <= plan.gpus_per_node; d2 *= 2) {
      if (plan.gpus_per_node % d2 != 0) continue;
      if (in.model.attn.heads > 0 && in.model.attn.heads % d2 == 0) push(Strategy::tp, d2);
      if (in.model.is_moe() && in.model.moe.experts % d2 == 0) push(Strategy::ep, d2);
    }
  }
  std::vector<ParallelEstimate> ok;
  std::vector<std::string> no;
  for (const auto& p : cands) {
    auto r = evaluate(in, p, single, db);
    if (!r.ok()) continue;
    const ParallelEstimate& e = r.value();
    if (e.fits)
      ok.push_back(e);
    else
      no.push_back(e.strategy_label + " (" + e.does_not_fit + ")");
  }
  if (ok.empty()) {
    ParallelPlan p = plan;
    p.choose = false;
    p.strategy = plan.offload == Offload::none ? Strategy::fsdp : Strategy::zero3;
    FTCOST_TRY(e, evaluate(in, p, single, db));
    e.why.push_back("no strategy fits on " + std::to_string(plan.ranks()) + " x " + in.gpu.id +
                    "; shown: " + e.strategy_label);
    for (const auto& s : no) e.why.push_back("does not fit: " + s);
    e.single = std::move(single);
    return e;
  }
  std::stable_sort(ok.begin(), ok.end(), by_fit_then_speed);
  FTCOST_TRY(best, choose_micro(in, ok.front(), single, db));
  best.why.push_back("fastest that fits: " + best.strategy_label + " at " +
                     json(std::round(best.throughput_qps * 1000) / 1000).dump() + " queries/s (batch " +
                     std::to_string(best.micro_batch) + " per GPU, " +
                     json(std::round(best.comm_exposed_s / best.step_s * 1000) / 10).dump() +
                     "% of the step is exposed communication" + largest_collective_note(best) + ")");
  for (std::size_t i = 1; i < ok.size(); ++i)
    best.why.push_back(not_chosen_line(ok[i], upper_end_fits(ok[i]), upper_end_fits(ok[0])));
  for (const auto& s : no) best.why.push_back("does not fit: " + s);
  best.single = std::move(single);
  return best;
}

}  // namespace

Result<ParallelEstimate> estimate_parallel(const Inputs& in, const ParallelPlan& plan, const Database& db) {
  if (!in.workload.seq_max) return estimate_parallel_resolved(in, plan, db);
  if (in.workload.batch > 1)
    return make_error(Errc::invalid_value, "--seq",
                      "max is the longest sequence at batch 1; leave --batch out or give 1");
  // --seq max over a chosen strategy (auto, or one GPU): one GPU's longest at batch 1, as estimate()
  // resolves it, so that every candidate is timed at the same length.
  if (plan.choose || plan.ranks() <= 1) {
    FTCOST_TRY(at, resolve_longest_seq(in));
    return estimate_parallel_resolved(at, plan, db);
  }
  // A given strategy: the longest its ranks hold at batch 1 (sharded states leave more room than one GPU;
  // context and Ulysses sequence parallelism keep 1/N of the tokens per rank), found on the plan itself,
  // then the estimate at it: memory and step both at that length.
  FTCOST_TRY(probe, estimate_parallel_resolved(at_fixed_length(in, 1024, "probe"), plan, db));
  const double longest = probe.max_seq_len;
  if (longest < 8)
    return make_error(Errc::does_not_fit, "--seq",
                      "max: even 8 tokens at batch 1 do not fit per rank with --parallel " +
                          probe.strategy_label + " on " + std::to_string(plan.ranks()) + " x " + in.gpu.id);
  return estimate_parallel_resolved(
      at_fixed_length(in, longest, "the longest sequence that fits at batch 1 per rank of this plan"), plan,
      db);
}

}  // namespace ftcost
