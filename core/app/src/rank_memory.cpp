// Per-rank memory of a multi-GPU plan: DeepSpeed's own model-state estimators, the modules ZeRO-3 fetches and
// keeps, each strategy's sharding of weights, gradients and optimizer states with its buffers, offload to
// host RAM and NVMe, and the largest micro-batch and sequence that fit.
#include "ftcost/parallel.hpp"
#include "ftcost/units.hpp"
#include "parallel_internal.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace ftcost {

using detail::d;

namespace {

// ---- Constants with their provenance (docs/sources/parallel.md). "code" = read from the library's source,
// "assumed" = an engineering estimate the docs say is one.
// assumed: NCCL communicator buffers per rank and communicator (NCCL_BUFFSIZE 4 MiB x channels x peers).
constexpr double kNcclBufferBytes = 0.25 * kGiB;
// ZeRO-Infinity (DeepSpeed ZeRO-3, offload device nvme), structural: DeepSpeed's defaults @ edaa722.
// runtime/zero/config.py sub_group_size 1e9 elements: the optimizer steps (and swaps) its partition in
// sub-groups of at most that; runtime/zero/offload_config.py offload_optimizer.buffer_count 4 pinned fp32
// buffers of the largest sub-group (swap_tensor/optimizer_utils.py SwapBufferManager(largest_numel,
// buffer_count)); offload_param.max_in_cpu 1e9 elements stay in host RAM, the rest of the 16-bit partition
// on NVMe, through buffer_count 5 pinned buffers of buffer_size 1e8 elements.
constexpr double kDsSubGroupElems = 1e9;
constexpr double kDsOptimizerSwapBuffers = 4;
constexpr double kDsParamMaxInCpu = 1e9;
constexpr double kDsParamSwapBufferElems = 5 * 1e8;
// structural: FSDP's unsharded gradients of full fine-tuning at the backward peak, in units (see
// rank_memory).
constexpr double kFsdpGradUnitsInFlight = 2;

}  // namespace

ZeroEstimate deepspeed_zero2_estimate(std::int64_t total_params, int gpus_per_node, int nodes,
                                      bool cpu_offload, double additional_buffer_factor) {
  // deepspeed/runtime/zero/stage_1_and_2.py estimate_zero2_model_states_mem_needs (commit edaa722), verbatim
  // in arithmetic order: Python ints stay exact, `/` is true division, int() truncates.
  const std::int64_t total_gpus = static_cast<std::int64_t>(nodes) * gpus_per_node;
  ZeroEstimate z;
  if (cpu_offload) {
    const std::int64_t gpu_mem = 2 * total_params;
    const double cpu_mem = static_cast<double>(total_params * std::max<std::int64_t>(4 * total_gpus, 16)) *
                           additional_buffer_factor;
    z.gpu_bytes = gpu_mem;
    z.cpu_bytes = static_cast<std::int64_t>(cpu_mem);
  } else {
    const std::int64_t gpu_mem =
        2 * total_params +
        static_cast<std::int64_t>(static_cast<double>(18 * total_params) / static_cast<double>(total_gpus));
    const double cpu_mem = static_cast<double>(total_params * 4 * gpus_per_node) * additional_buffer_factor;
    z.gpu_bytes = gpu_mem;
    z.cpu_bytes = static_cast<std::int64_t>(cpu_mem);
  }
  return z;
}

ZeroEstimate deepspeed_zero3_estimate(std::int64_t total_params, std::int64_t largest_layer_params,
                                      int gpus_per_node, int nodes, bool cpu_offload, bool cpu_offload_params,
                                      bool zero_init, double additional_buffer_factor) {
  // deepspeed/runtime/zero/stage3.py estimate_zero3_model_states_mem_needs (commit edaa722).
  const std::int64_t total_gpus = static_cast<std::int64_t>(nodes) * gpus_per_node;
  const double gpus_factor = 1.0 / static_cast<double>(nodes);
  const std::int64_t largest_layer_memory = 4 * largest_layer_params;
  const auto P = static_cast<double>(total_params);
  ZeroEstimate z;
  z.largest_layer_bytes = largest_layer_memory;
  double cpu_mem = 0;
  std::int64_t gpu_mem = 0;
  auto tdiv = [&](std::int64_t num) {
    return static_cast<std::int64_t>(static_cast<double>(num) / static_cast<double>(total_gpus));
  };
  // With CPU offload: host bytes per parameter on the CPU (18 with the parameters, 16 without), per node.
  auto offload_cpu_mem = [&](std::int64_t per_param) {
    if (zero_init)
      return static_cast<double>(total_params * per_param) * gpus_factor * additional_buffer_factor;
    return P *
           std::max(static_cast<double>(4 * gpus_per_node), static_cast<double>(per_param) * gpus_factor) *
           additional_buffer_factor;
  };
  if (cpu_offload) {
    gpu_mem = largest_layer_memory + (cpu_offload_params ? 0 : tdiv(2 * total_params));
    cpu_mem = offload_cpu_mem(cpu_offload_params ? 18 : 16);
  } else {
    gpu_mem = largest_layer_memory + tdiv(18 * total_params);
    if (zero_init)
      cpu_mem = static_cast<double>(largest_layer_params * 4 * gpus_per_node) * additional_buffer_factor;
    else
      cpu_mem = static_cast<double>(total_params * 4 * gpus_per_node) * additional_buffer_factor;
  }
  z.gpu_bytes = gpu_mem;
  z.cpu_bytes = static_cast<std::int64_t>(cpu_mem);
  return z;
}

std::int64_t largest_module_params(const ModelSpec& m) {
  const ParamCounts c = m.params();
  std::int64_t mx = std::max(c.embedding, c.lm_head);
  return std::max(mx, m.largest_linear());
}

std::vector<FetchModules> zero3_fetch_modules(const ModelSpec& m) {
  std::vector<FetchModules> out;
  auto add = [&out](std::int64_t elems, std::int64_t count) {
    if (elems > kZero3PersistenceThreshold && count > 0) out.push_back({elems, count});
  };
  const std::int64_t H = m.hidden;
  const ParamCounts pc = m.params();
  add(pc.embedding, 1);
  if (!m.tied_embeddings) add(pc.lm_head, 1);
  const std::int64_t att = m.layers_with(Mixer::attention);
  if (att > 0) {
    const AttentionSpec& a = m.attn;
    if (a.mla) {
      add(m.attention_params_per_layer() / 4, 4 * att);
    } else {
      const std::int64_t q = a.heads * a.head_dim;
      const std::int64_t kv = a.kv_heads * a.head_dim;
      add(H * q + (a.qkv_bias ? q : 0), att);
      add(H * kv + (a.qkv_bias ? kv : 0), 2 * att);
      add(q * H + (a.o_bias ? H : 0), att);
    }
  }
  const std::int64_t mam = m.layers_with(Mixer::mamba);
  if (mam > 0) {
    const MambaSpec& b = m.mamba;
    add(H * 2 * b.d_inner, mam);                        // in_proj
    add(b.d_inner * b.d_conv, mam);                     // conv1d
    add(b.d_inner * (b.dt_rank + 2 * b.d_state), mam);  // x_proj
    add(b.dt_rank * b.d_inner, mam);                    // dt_proj
    add(b.d_inner * H, mam);                            // out_proj
  }
  const std::int64_t dense = m.layers_with(Ffn::mlp);
  if (dense > 0) add(H * m.mlp.intermediate, (m.mlp.gated ? 3 : 2) * dense);
  const std::int64_t moe = m.layers_with(Ffn::moe);
  if (moe > 0) {
    const MoeSpec& e = m.moe;
    add(H * e.expert_intermediate, (e.gated ? 3 : 2) * e.experts * moe);
    add(m.router_params_per_layer(), moe);
    if (e.shared_experts > 0 && e.shared_intermediate > 0)
      add(H * e.shared_intermediate, (e.gated ? 3 : 2) * e.shared_experts * moe);
    if (e.shared_gate) add(H, moe);  // H -> 1: persistent below 1e5 elements
  }
  return out;
}

namespace detail {
Zero3FetchTotals zero3_fetch_totals(const std::vector<FetchModules>& mods) {
  Zero3FetchTotals t;
  for (const auto& f : mods) {
    t.elems += d(f.elems) * d(f.count);
    t.calls += d(f.count);
  }
  return t;
}
}  // namespace detail

std::int64_t zero3_fetch_module_count(const ModelSpec& m) {
  return static_cast<std::int64_t>(detail::zero3_fetch_totals(zero3_fetch_modules(m)).calls);
}

namespace {

// The modules of the last decoder layer in forward order, elements each (DeepSpeed fetches per sub-module
// with parameters of its own; those at or under the persistence threshold stay resident and are left out).
std::vector<double> last_layer_modules(const ModelSpec& m, double persist) {
  std::vector<double> out;
  auto add = [&out, persist](std::int64_t elems, std::int64_t count) {
    if (d(elems) > persist)
      for (std::int64_t i = 0; i < count; ++i) out.push_back(d(elems));
  };
  if (m.groups.empty()) return out;
  const LayerGroup& g = m.groups.back();
  const std::int64_t H = m.hidden;
  if (g.mixer == Mixer::attention) {
    const AttentionSpec& a = m.attn;
    if (a.mla) {
      add(m.attention_params_per_layer() / 4, 4);
    } else {
      add(H * a.heads * a.head_dim, 1);
      add(H * a.kv_heads * a.head_dim, 2);
      add(a.heads * a.head_dim * H, 1);
    }
  } else if (g.mixer == Mixer::mamba) {
    add(m.mamba_params_per_layer(), 1);
  }
  if (g.ffn == Ffn::mlp) add(H * m.mlp.intermediate, m.mlp.gated ? 3 : 2);
  if (g.ffn == Ffn::moe) {
    const MoeSpec& e = m.moe;
    add(m.router_params_per_layer(), 1);
    add(H * e.expert_intermediate, (e.gated ? 3 : 2) * e.experts);
    if (e.shared_experts > 0) add(H * e.shared_intermediate, (e.gated ? 3 : 2) * e.shared_experts);
  }
  return out;
}

}  // namespace

double Zero3Settings::prefetch_elems(const ModelSpec& m) const {
  return prefetch_bucket_size > 0 ? prefetch_bucket_size : std::floor(0.9 * d(m.hidden) * d(m.hidden));
}

double Zero3Settings::persistence_elems(const ModelSpec& m) const {
  return param_persistence_threshold > 0 ? param_persistence_threshold : 10.0 * d(m.hidden);
}

double zero3_retained_elems(const ModelSpec& m, double reuse_distance, bool checkpointing) {
  if (reuse_distance <= 0) return 0;
  const ParamCounts pc = m.params();
  const double lm = d(m.tied_embeddings ? pc.embedding : pc.lm_head);
  const std::vector<double> layer = last_layer_modules(m, d(kZero3PersistenceThreshold));
  double layer_total = 0;
  for (const double x : layer) layer_total += x;
  double kept = lm;  // lm_head: its backward follows its forward at once
  if (layer_total <= 0) return kept;
  double after = lm;  // forward elements after the module (its own layer's, later layers', lm_head)
  double later = 0;   // whole decoder layers after the module's layer
  const std::int64_t n = m.layers();
  for (std::int64_t l = 0; l < n; ++l) {
    double in_layer_after = 0;
    for (auto it = layer.rbegin(); it != layer.rend(); ++it) {
      const double before = layer_total - in_layer_after - *it;
      // the trace from this module's release to its next use: the rest of the forward, lm_head's backward,
      // then (checkpointed) each later layer's recompute and backward and this layer's recompute up to it,
      // or (not checkpointed) the later modules' backward
      const double dist = checkpointing ? after + lm + 2.0 * later + before : 2.0 * after;
      if (dist < reuse_distance) kept += *it;
      after += *it;
      in_layer_after += *it;
      if ((checkpointing ? after + lm : 2.0 * after) >= reuse_distance) return kept;
    }
    later += layer_total;
  }
  return kept;
}

std::string rank_memory_state(const ParallelEstimate& e) {
  if (!e.fits) return "does_not_fit";
  if (e.usable_bytes > 0 && e.memory_high > e.usable_bytes) return "may_not_fit";
  const double need = e.usable_bytes > 0 ? e.memory.resident() / e.usable_bytes : 0;  // paged states yield
  return need > kTightMemoryFraction ? "tight" : "fits";
}

double RankMemory::model_state_bytes() const {
  return base.weights + base.trainable_params + base.gradients + base.optimizer_states + fp32_grad_partition +
         gather_buffers;
}

double RankMemory::total() const {
  return base.total() + fp32_grad_partition + gather_buffers + bucket_buffers + nccl_buffers + live_params +
         quant_states + expert_copies;
}

double RankMemory::resident() const { return total() - (base.paged_optimizer ? base.optimizer_states : 0.0); }

double RankMemory::on_gpu(double usable) const {
  return base.paged_optimizer ? std::min(total(), std::max(resident(), usable)) : total();
}

double RankMemory::paged_out(double usable) const { return total() - on_gpu(usable); }

namespace detail {

// Shard group size for sharded data parallelism.
int shard_group(const ParallelPlan& p, Strategy s) {
  if (s == Strategy::hsdp) return p.gpus_per_node;
  return p.ranks();
}

namespace {

// The Trainer's torch AdamW (exported DeepSpeed configs name no optimizer) steps DeepSpeed's fp32 partition:
// a foreach one (a temporary in the single-GPU breakdown) allocates one fp32 state-sized list of it.
double zero_partition_step_temp(const MemoryBreakdown& mb, double P, double N) {
  return mb.optimizer_step_temp > 0 ? 4.0 * P / N : 0.0;
}

// ZeRO-Infinity: what host RAM held for the offload goes to NVMe but the pinned swap buffers (and the
// parameters up to max_in_cpu elements). Per rank: `opt_bytes` over `opt_elems` elements is what the CPU
// offload keeps for the optimizer (full fine-tuning: fp32 master + Adam states + fp32 gradients, 16 B per
// element of the partition), `param_bytes` over `param_elems` the rank's parameter partition (16-bit; NF4
// packed for QLoRA). stage3.py _configure_tensor_swapping (the fp32 partition and its gradient are swapped
// per sub-group) and partitioned_param_swapper.py (parameters) @ edaa722. Nothing unless `o` is on NVMe.
void move_to_nvme(RankMemory& r, Offload o, double opt_bytes, double opt_elems, double param_bytes,
                  double param_elems) {
  if (!offload_on_nvme(o)) return;
  const bool params = offloads_params(o);
  r.nvme_optimizer_bytes = opt_bytes;
  r.host_bytes = kDsOptimizerSwapBuffers * std::min(kDsSubGroupElems, opt_elems) * 4.0;
  if (params && param_elems > 0) {
    const double in_cpu = std::min(1.0, kDsParamMaxInCpu / param_elems);
    r.nvme_param_bytes = param_bytes * (1.0 - in_cpu);
    r.host_bytes += param_bytes * in_cpu + 2.0 * kDsParamSwapBufferElems;
  }
}

// DeepSpeed ZeRO-3's parameters gathered beyond the working set (gather_buffers), in the compute dtype
// (deepspeedai/DeepSpeed @ edaa722, runtime/zero/partitioned_param_coordinator.py):
//  - modules kept by the reuse distance (__params_to_release: a module whose next use in the recorded trace
//    lies within stage3_max_reuse_distance elements is not released; zero3_retained_elems), at the
//    forward/backward turn, less the largest module the working set already counts;
//  - the prefetch in flight (_fetch_sub_module_impl: each fetch gathers up to stage3_prefetch_bucket_size
//  more
//    elements of the trace, while fewer than stage3_max_live_parameters are available). When the bucket is at
//    least the mean module the look-ahead grows by a bucket per module and stops at max_live;
//  - persistent parameters (parameter_offload.py mark_persistent_parameters: at most
//    stage3_param_persistence_threshold elements: norms, small routers), whole on every rank;
//  - hpZ (zero_hpz_partition_size > 1): the secondary copy of the 16-bit parameters partitioned within the
//    hpZ group (partition_parameters.py _partition_param_sec, ds_secondary_tensor).
// With the settings assumed (no --zero3), the upper end adds the look-ahead up to max_live: DeepSpeed's own
// default bucket (5e7) runs that far on models whose modules are smaller than it.
void add_zero3_live(RankMemory& r, const Ctx& c, double bytes_per_elem) {
  const Zero3Settings& z = c.plan.zero3;
  const ModelSpec& m = c.m_eff;
  const double room = std::max(0.0, z.max_live_parameters - c.z3_retained);
  const double bucket = z.prefetch_elems(m);
  const double ahead = bucket >= c.z3_mean_module ? room : std::min(bucket, room);
  const double largest = d(largest_module_params(m));
  const ParamCounts pc = m.params();
  const double thr = z.persistence_elems(m);
  double persistent = d(pc.norms);
  if (d(m.router_params_per_layer()) <= thr) persistent += d(pc.router);
  r.live_params = bytes_per_elem * (std::max(0.0, c.z3_retained + ahead - largest) + persistent);
  if (z.hpz_partition_size > 1) r.live_params += bytes_per_elem * d(pc.total()) / z.hpz_partition_size;
  if (!z.given && ahead < room) {
    r.residue_high = bytes_per_elem * (room - ahead);
    char cap[32];
    std::snprintf(cap, sizeof cap, "%.3g", z.max_live_parameters);
    std::string text = cap;  // "1e+09" -> "1e9", as DeepSpeed's configs write it
    for (const char* from : {"e+0", "e+"})
      if (const auto at = text.find(from); at != std::string::npos)
        text.replace(at, std::string(from).size(), "e");
    r.residue_term = std::string("ZeRO-3's prefetch look-ahead up to stage3_max_live_parameters (") + text +
                     " elements; DeepSpeed's default stage3_prefetch_bucket_size 5e7 runs that far, the HF "
                     "Trainer's \"auto\" 0.9 H^2 does not; --zero3 gives yours)";
  }
}

// FSDP (FULL_SHARD, HSDP): the root unit -- the parameters outside the wrapped decoder layers: embedding,
// final norm, lm_head -- is not resharded after forward and stays gathered until its backward (FSDP1:
// torch/distributed/fsdp/_runtime_utils.py _post_forward_reshard, `not state._is_root`; FSDP2:
// fully_shard's reshard_after_forward "The root FSDP state has its value specially set to False"), in the
// compute dtype. The upper end adds a third decoder unit in flight: forward_prefetch (FSDP1) or an explicit
// prefetch depth of 2 (FSDP2 set_modules_to_forward_prefetch / _backward_prefetch) that a config may set.
double fsdp_root_unit_bytes(const ModelSpec& m, const Workload& w) {
  const ParamCounts pc = m.params();
  return d(pc.embedding + pc.lm_head + m.norm_params()) * w.compute_bytes();
}

// Full-shard (FSDP, HSDP, ZeRO-3) gathered parameters for adapters or without DeepSpeed's full accounting:
// FSDP the running unit, the prefetched next one and the root unit; ZeRO-3 the largest module twice and the
// live-parameter cache.
void add_stage3_gathered(RankMemory& r, const Ctx& c, double unit, double root) {
  const double bytes = c.in.workload.compute_bytes();
  if (!is_fsdp(c.st)) {
    r.gather_buffers = 2.0 * d(largest_module_params(c.m_eff)) * bytes;
    add_zero3_live(r, c, bytes);
    return;
  }
  r.gather_buffers = 2.0 * unit;
  r.live_params = root;
  r.residue_high = unit;
  r.residue_term =
      "a third FSDP unit in flight (forward_prefetch, or a prefetch depth of 2 set in the config)";
}

// The full-shard strategies: FSDP FULL_SHARD, HSDP and ZeRO-3 shard the weights themselves.
bool shards_weights(Strategy s) { return s == Strategy::fsdp || s == Strategy::hsdp || s == Strategy::zero3; }

// bitsandbytes' NF4 quantization states under a full-shard strategy (RankMemory::quant_states): the absmax
// bytes of every quantized parameter (NF4: one fp32 per 64 values; double-quantized: 8-bit plus one fp32 per
// 256 blocks) stay whole on every rank. `weights` counted them sharded (1/N) or, offloaded, not at all.
double unsharded_quant_states(const Ctx& c, double n, bool params_offloaded) {
  const Workload& w = c.in.workload;
  const bool nf4 = w.quant == Quant::nf4 || w.quant == Quant::nf4_dq;
  if (w.method != Method::qlora || !nf4 || !shards_weights(c.st)) return 0;
  const double q = param_breakdown(c.m_eff, w).quantized * (quantized_bytes_per_param(c.m_eff, w) - 0.5);
  return params_offloaded ? q : q * (1.0 - 1.0 / n);
}

// gpt-oss's eager expert loop in training (RankMemory::expert_copies), in the compute dtype. Experts hit by
// `tokens` tokens routed top-k of E: E (1 - exp(-tokens k / E)), the Poisson estimate the step model uses
// (throughput.cpp). Each hit saves its gate_up [H, 2I] and down [I, H] slices (matmul keeps its second
// operand for the input's gradient; the biases' adds keep nothing), for the layer being recomputed under
// checkpointing, for every MoE layer without it. Full fine-tuning: index's backward is a zeros tensor of the
// whole fused parameter per hit (pytorch @ d327a78 tools/autograd/derivatives.yaml `index`: index_backward(
// grad.new_zeros_symint(self.sym_sizes(), ...), ...)); the engine sums them into the gradient (@ 4537ef6
// input_buffer.cpp accumulate, in place), so one full-size gate_up beyond the gradient at a time.
double gpt_oss_expert_copies(const Ctx& c, std::int64_t micro, double seq) {
  const ModelSpec& m = c.m_eff;
  const Workload& w = c.in.workload;
  const std::int64_t moe_layers = m.layers_with(Ffn::moe);
  if (m.family != "gpt_oss" || moe_layers == 0 || c.in.stack.moe_execution != "loop") return 0;
  const double experts = d(m.moe.experts) / (c.st == Strategy::ep ? c.deg : 1);
  const double slice = 3.0 * d(m.hidden) * d(m.moe.expert_intermediate);  // gate_up H x 2I + down I x H
  const double tokens = d(micro) * seq;
  const double hit = experts * (1.0 - std::exp(-tokens * d(m.moe.top_k) / d(m.moe.experts)));
  const double layers = w.checkpointing ? 1.0 : d(moe_layers);
  const double backward =
      w.method == Method::full ? experts * 2.0 * d(m.hidden) * d(m.moe.expert_intermediate) : 0.0;
  return (layers * hit * slice + backward) * w.compute_bytes();
}

// A residue of unknown settings into the upper end: the terms add up, `residue_term` names them, the largest
// first.
void add_residue(RankMemory& r, double bytes, const std::string& term) {
  if (r.residue_term.empty())
    r.residue_term = term;
  else
    r.residue_term = bytes > r.residue_high ? term + "; " + r.residue_term : r.residue_term + "; " + term;
  r.residue_high += bytes;
}

// FSDP, full fine-tuning: two units' unsharded gradients at the backward peak. The one whose reduce-scatter
// is in flight is held for the reduce-scatter stream (pytorch @ 3ade90a FSDP1 _post_backward_hook:
// _no_dispatch_record_stream(autograd_computed_grad, post_backward stream); FSDP2 @ 62a45b6
// FSDPParamGroup.post_backward keeps the last reduce-scatter input in comm_ctx.reduce_scatter_state until
// the next unit's post_backward) while the next unit's accumulate. The upper end adds a unit for an fp32
// reduce_dtype, which a config may set (FSDP2 @ 8fc2039 _fsdp_collectives.py foreach_reduce: `reduce_dtype =
// reduce_dtype or grad_dtype`, the reduce-scatter input allocated in it; FSDP1 MixedPrecision.reduce_dtype).
void add_fsdp_gradient_units(RankMemory& r, double unit, bool grads) {
  if (!grads) return;
  r.bucket_buffers = kFsdpGradUnitsInFlight * unit;
  add_residue(
      r, unit,
      "an fp32 reduce_dtype (FSDP MixedPrecision / MixedPrecisionPolicy): the reduce-scatter input at "
      "twice the 16-bit gradients");
}

}  // namespace

// torchao float8/fsdp_utils.py (@ 11ce6347) WeightWithDynamicFloat8CastTensor: fsdp_pre_all_gather returns
// the FP8 `_data` (1 B per element) with the tensorwise scale as metadata, and fsdp_post_all_gather wraps the
// gathered bytes in a Float8TrainingTensor: the unsharded weight of a float8 linear is FP8, for the forward's
// and the backward's unshard alike. The float8 linears are those --fp8 converts (throughput.cpp: every linear
// but the router and lm_head): attention (its biases and q/k norms, a few thousand parameters a layer,
// counted with it), MLP and experts.
double fp8_all_gather_saving(const ModelSpec& m, const Workload& w) {
  if (!w.fp8_all_gather || w.fp8 != "tensorwise") return 0;
  const ParamCounts pc = m.params();
  const auto fp8 = static_cast<double>(pc.attention + pc.mlp + pc.experts + pc.shared_experts);
  const double wbytes = w.precision == "fp32" ? 4.0 : 2.0;
  return fp8 * (wbytes - 1.0);
}

RankMemory rank_memory(const Ctx& c, std::int64_t micro) {
  const Inputs& in = c.in;
  const Workload& w = in.workload;
  const StackProfile& s = in.stack;
  const ParallelPlan& p = c.plan;
  RankMemory r;
  // context parallelism and Ulysses keep 1/c (1/N) of each sample's tokens per rank
  const double seq = (c.st == Strategy::cp ? c.seq_len / c.deg : c.seq_len) / std::max(1, p.sp);
  MemoryBreakdown mb = memory_for_batch(c.m_eff, w, s, micro, seq);
  const double P = d(c.m_eff.params().total());
  const auto N = static_cast<double>(shard_group(p, c.st));
  const bool full = w.method == Method::full;
  if (c.st == Strategy::tp) {
    // Sequence parallelism: hidden-sized activations are split t ways too (Megatron SP); logits are
    // vocab-parallel already in the sharded model.
    const MemoryBreakdown unsharded = memory_for_batch(in.model, w, s, micro, seq);
    mb.activations = unsharded.activations / c.deg;
    mb.activations_backward = unsharded.activations_backward / c.deg;
    mb.activations_last_layer = unsharded.activations_last_layer / c.deg;
  }
  if (c.st == Strategy::ep) {
    const ParamCounts pc = in.model.params();
    const double f = d(pc.experts) / std::max(1.0, d(pc.total()));
    const double keep = 1.0 - f * (1.0 - 1.0 / c.deg);
    mb.weights *= keep;
    mb.trainable_params *= keep;
    mb.gradients *= keep;
    mb.optimizer_states *= keep;
    mb.optimizer_step_temp *= keep;
    mb.autocast_copies *= keep;
  }
  if (is_zero(c.st) && full) {
    // DeepSpeed's mixed-precision accounting (stage_1_and_2.py / stage3.py estimators): 16-bit params and
    // grads, fp32 grads partition, fp32 master params + Adam momentum and variance.
    mb.weights = 2 * P;
    mb.gradients = 2 * P;
    r.fp32_grad_partition = 4 * P;
    mb.optimizer_states = 12 * P;
    mb.paged_optimizer = false;  // DeepSpeed allocates its own fp32 states, whatever --optimizer says
    mb.optimizer_step_temp = zero_partition_step_temp(mb, P, N);
    mb.autocast_copies = 0;
    mb.gradients /= N;  // the estimator counts the 16-bit gradients partitioned for stages 1 and 2 alike
    r.fp32_grad_partition /= N;
    mb.optimizer_states /= N;
    if (c.st == Strategy::zero3) {
      // Stage 3 reduces each layer's 16-bit gradients straight into the fp32 partition: they live only in
      // the per-layer working set, which the estimator counts as 4 bytes (16-bit param + grad) of the
      // largest layer.
      mb.weights /= N;
      mb.gradients = 0;
      r.gather_buffers = 4.0 * d(largest_module_params(c.m_eff));
      add_zero3_live(r, c, 2.0);
    }
    if (p.offload != Offload::none) {
      r.host_bytes = mb.optimizer_states + r.fp32_grad_partition;
      mb.optimizer_states = 0;
      mb.optimizer_step_temp = 0;  // the step runs on the host (DeepSpeedCPUAdam)
      r.fp32_grad_partition = 0;
      if (c.st != Strategy::zero3) {
        mb.gradients = 0;  // streamed to host during backward (estimator: GPU keeps only 2P)
      } else {
        if (offloads_params(p.offload)) {
          r.host_bytes += mb.weights;
          mb.weights = 0;
        }
      }
      move_to_nvme(r, p.offload, 16.0 * P / N, P / N, 2.0 * P / N, P / N);
    }
    const double grads_elems = P;
    r.bucket_buffers = 2.0 * std::min(kZeroReduceBucketElems, grads_elems);
    if (c.st == Strategy::zero3) r.bucket_buffers += 2.0 * std::min(kZeroPrefetchElems, P);
  } else if (is_zero(c.st) || is_fsdp(c.st)) {
    const int stage = c.st == Strategy::zero1                                     ? 1
                      : c.st == Strategy::zero2 || c.st == Strategy::fsdp_grad_op ? 2
                                                                                  : 3;
    mb.optimizer_states /= N;
    mb.optimizer_step_temp /= N;
    if (stage >= 2) mb.gradients /= N;
    const double layers = std::max<double>(1, d(c.m_eff.layers()));
    const double root = is_fsdp(c.st) ? fsdp_root_unit_bytes(c.m_eff, w) : 0.0;
    // one decoder layer as gathered (the root unit apart)
    const double unit = std::max(0.0, mb.weights + mb.trainable_params - root) / layers;
    if (stage >= 3) {
      mb.weights /= N;
      mb.trainable_params /= N;
      mb.autocast_copies /= N;
      // FSDP: the running unit, the prefetched next one and the root unit; ZeRO-3: the largest module
      // (estimator's 4L) and the live-parameter cache. Under FSDP2's FP8 all-gather a unit's float8 linears
      // arrive in FP8.
      add_stage3_gathered(r, c, std::max(0.0, unit - fp8_all_gather_saving(c.m_eff, w) / layers), root);
    } else if (c.st == Strategy::fsdp_grad_op) {
      // SHARD_GRAD_OP keeps every unit unsharded from forward to backward.
      r.gather_buffers = mb.weights + mb.trainable_params;
      mb.weights /= N;
      mb.trainable_params /= N;
    }
    if (is_fsdp(c.st))
      add_fsdp_gradient_units(r, unit, mb.gradients > 0 && full);
    else
      r.bucket_buffers = 2.0 * std::min(kZeroReduceBucketElems, param_breakdown(c.m_eff, w).trainable);
    if (p.offload != Offload::none) {
      const double opt_bytes = mb.optimizer_states + mb.gradients;
      const double param_bytes = mb.weights + mb.trainable_params;
      r.host_bytes = opt_bytes;
      mb.optimizer_states = 0;
      mb.optimizer_step_temp = 0;
      mb.gradients = 0;
      if (offloads_params(p.offload)) {
        r.host_bytes += param_bytes;
        mb.weights = 0;
        mb.trainable_params = 0;
      }
      move_to_nvme(r, p.offload, opt_bytes, param_breakdown(c.m_eff, w).trainable / N, param_bytes, P / N);
    }
  } else if (c.st == Strategy::ddp || c.st == Strategy::tp || c.st == Strategy::ep || c.st == Strategy::cp) {
    // DDP's reducer holds a flat bucket copy of every gradient (gradient_as_bucket_view=False by default).
    if (p.ranks() > (c.st == Strategy::tp ? c.deg : 1)) r.bucket_buffers = mb.gradients;
  }
  r.quant_states = unsharded_quant_states(c, N, offloads_params(p.offload));
  r.expert_copies = gpt_oss_expert_copies(c, micro, seq);
  mb.allocator_overhead = s.allocator_overhead_fraction * (mb.activations + mb.logits + mb.dequant_buffers);
  int comms = 1 + (c.st == Strategy::tp || c.st == Strategy::ep || c.st == Strategy::cp ? 1 : 0);
  r.nccl_buffers = kNcclBufferBytes * comms;
  r.base = mb;
  return r;
}

// The largest micro-batch whose per-rank resident memory fits: the single-GPU search (largest_batch_within,
// memory.hpp) on the rank's peak. The peak is non-decreasing in the micro-batch; it is not linear from batch
// 0 (per-batch buffers such as a chunked loss's exist from the first sample on), so no extrapolation from 0.
std::int64_t max_micro(const Ctx& c, double usable) {
  const auto bytes = [&c](std::int64_t b) { return rank_memory(c, b).resident(); };
  return largest_batch_within(bytes, usable, bytes(1), bytes(2));
}

// The largest micro-batch whose per-rank memory range's upper end (resident + uncertainty x the variable
// part + the residues of unknown settings) fits; the upper end is non-decreasing in the micro-batch. 0 when
// not even batch 1's does.
std::int64_t max_micro_upper(const Ctx& c, double usable, std::int64_t max_b) {
  const double u = c.in.stack.memory_uncertainty_fraction;
  if (max_b < 1) return max_b;
  const auto upper = [&c, u](std::int64_t b) {
    const RankMemory r = rank_memory(c, b);
    return r.resident() + u * r.base.variable() + r.residue_high;
  };
  if (u <= 0 && upper(max_b) <= usable) return max_b;
  return largest_batch_within(upper, usable, upper(1), upper(2));
}

// The longest padded sequence whose rank memory fits at micro-batch 1 (the single-GPU max_seq_len's
// question, per rank): a doubling then a bisection on whole multiples of 8 tokens.
double max_seq_rank(const Ctx& c0, double usable) {
  Ctx c = c0;
  const auto fits = [&c, usable](double seq) {
    c.seq_len = seq;
    return rank_memory(c, 1).resident() <= usable;
  };
  double lo = 0;
  double hi = 8;
  while (hi <= 16.0 * 1024 * 1024 && fits(hi)) lo = hi, hi *= 2;
  if (hi > 16.0 * 1024 * 1024) return lo;
  while (hi - lo > 8) {
    const double mid = std::floor((lo + hi) / 16) * 8;
    (fits(mid) ? lo : hi) = mid;
  }
  return lo;
}

}  // namespace detail

}  // namespace ftcost
