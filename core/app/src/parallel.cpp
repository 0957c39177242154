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

using detail::Ctx;
using detail::d;
using detail::is_fsdp;
using detail::is_sharded_dp;
using detail::is_zero;
using detail::kZeroReduceBucketElems;
using detail::max_micro;
using detail::max_micro_upper;
using detail::max_seq_rank;
using detail::rank_memory;
using detail::shard_group;
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

// What FSDP2 all-gathers per replica: `gather_bytes` (the weights in their dtype), less one byte per
// parameter of the float8 linears' weights under --fp8-all-gather. torchao float8/fsdp_utils.py (@ 11ce6347)
// WeightWithDynamicFloat8CastTensor.fsdp_pre_all_gather returns `(float8_training_tensor._data,)` (e4m3, 1 B)
// with the tensorwise scale as metadata, for the forward's and the backward's unshard alike. The float8
// linears are those --fp8 converts (throughput.cpp: every linear but the router and lm_head): attention
// (its biases and q/k norms, a few thousand parameters a layer, counted with it), MLP and experts.
double fsdp_gather_bytes(const ModelSpec& m, const Workload& w, double gather_bytes) {
  if (!w.fp8_all_gather || w.fp8 != "tensorwise") return gather_bytes;
  const ParamCounts pc = m.params();
  const double fp8 = d(pc.attention + pc.mlp + pc.experts + pc.shared_experts);
  const double wbytes = w.precision == "fp32" ? 4.0 : 2.0;
  return std::max(0.0, gather_bytes - fp8 * (wbytes - 1.0));
}

// ---- Constants with their provenance (docs/sources/parallel.md). "code" = read from the library's source,
// "assumed" = an engineering estimate the docs say is one.
// code: torch/nn/parallel/distributed.py DistributedDataParallel(bucket_cap_mb=25).
constexpr double kDdpBucketBytes = 25.0 * kMiB;
// assumed: host Adam (DeepSpeed CPUAdam) parameters updated per second per rank.
constexpr double kHostAdamParamsPerS = 1.0e9;
// assumed: how much slower torch.optim.AdamW steps host tensors than DeepSpeed's CPUAdam. FSDP's CPU offload
// runs the user's torch optimizer on the host shards; DeepSpeedCPUAdam's docstring claims "between 5x to 7x
// speedup over torch.optim.adam(W)" (deepspeed/ops/adam/cpu_adam.py @ edaa722): the middle, 6.
constexpr double kTorchCpuAdamSlowdown = 6.0;

// Parameters the host optimizer updates per second per rank: DeepSpeed's CPUAdam, or torch's AdamW on the
// host shards under FSDP's offload. torch's fused AdamW has a CPU kernel (aten/src/ATen/native/FusedAdam.cpp
// _fused_adamw_kernel_cpu_ -> fused_adam_stub, native/cpu/FusedAdamKernel.cpp: one vectorized pass over
// param, grad and both states, at::parallel_for over the host's threads; PyTorch >= 2.4), the same kind of
// single-pass vectorized, multithreaded kernel as DeepSpeed's CPUAdam (csrc/adam/cpu_adam_impl.cpp, AVX,
// OpenMP): assumed the same rate. The slowdown applies to the foreach / for-loop paths it was stated for
// (DeepSpeedCPUAdam's docstring compares with torch.optim.adam(W) before the fused CPU kernel existed).
// Either pass reads the fp32 parameter, gradient and both moments and writes back the parameter and the
// moments: 28 bytes of host memory per parameter (structural), and the node's ranks step at once, so the
// rate is also at most the node's sustained host memory / (28 B x ranks per node).
constexpr double kHostAdamBytesPerParam = 28.0;
double host_adam_params_per_s(Strategy s, const StackProfile& stack, const ParallelPlan& plan) {
  const bool torch_unfused = is_fsdp(s) && stack.adamw_implementation != "fused";
  const double compute = torch_unfused ? kHostAdamParamsPerS / kTorchCpuAdamSlowdown : kHostAdamParamsPerS;
  const double memory = sustained_host_memory_gbps(plan.host_memory_gbps) * 1e9 /
                        (kHostAdamBytesPerParam * std::max(1, plan.gpus_per_node));
  return std::min(compute, memory);
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

void add(ParallelEstimate& e, CommItem it) {
  it.exposed_s = std::max(0.0, std::min(it.exposed_s, it.time_s));
  it.overlapped_s = it.time_s - it.exposed_s;
  e.comm_s += it.time_s;
  e.comm_exposed_s += it.exposed_s;
  e.comm.push_back(std::move(it));
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
  CommItem it{"Ulysses sequence all-to-all (query, key, value in; output back)",
              CollOp::all_to_all,
              "intra-node",
              sp,
              (2.0 * q + 2.0 * kv) / 4.0,
              4.0 * layers,
              layers * (2.0 * t_q + 2.0 * t_kv),
              0,
              0,
              "on the critical path (attention waits for its heads; the output for its sequence)"};
  it.exposed_s = it.time_s;
  add(e, it);
}

// The GPU's own PCIe link to host memory, bytes/s: what offload moves over (intra_node_link of a node so
// large that no NVLink joins it, with peer-to-peer allowed).
double own_pcie_bytes_per_s(const GpuSpec& gpu) { return intra_node_link(gpu, 1 << 20, 1).busbw_gbps * 1e9; }

// DeepSpeed's optimizer offload accumulates partitioned gradients in host memory (ZeRO-2/3; ZeRO-1 reduces
// only at the accumulation boundary, engine.py allreduce_gradients): with gradient accumulation every
// micro-batch copies the rank's gradient partition (in the model's dtype, the default grad_accum_dtype:
// engine.py get_data_types) down to host memory, and every micro-batch after the first brings the running
// sum back up to add to first. ZeRO-2: stage_1_and_2.py async_accumulate_grad_in_cpu_via_gpu
// (accumulate_gradients: dest_buffer.copy_(accumulated_grads_in_cpu) and add_, then copy_gradients_to_cpu);
// ZeRO-3: stage3.py partition_grads (the grad partition buffer lives on self.device, the CPU under
// offload_optimizer: copy_ at micro_step_id 0, else to(device) + add_ + copy_ back); both @ edaa722. Beyond
// the boundary's crossing (in the offload item): A - 1 more down and A - 1 up per optimizer step. ZeRO-3 runs
// them on its reduce-and-partition stream during backward (overlap_comm on for stage 3); ZeRO-2 on the
// compute stream (overlap_comm off by default): exposed.
void add_offload_accumulation_crossings(ParallelEstimate& e, const GpuSpec& gpu, double grad_shard_bytes,
                                        double bwd_s) {
  const double accum = e.plan.grad_accum;
  const Strategy st = e.plan.strategy;
  if (accum <= 1 || (st != Strategy::zero2 && st != Strategy::zero3)) return;
  const double one = grad_shard_bytes / own_pcie_bytes_per_s(gpu);
  const bool overlapped = st == Strategy::zero3;
  CommItem it{"offload: gradient partitions to host and back on accumulation micro-batches (PCIe)",
              CollOp::send_recv,
              "pcie-host",
              1,
              grad_shard_bytes,
              2 * (accum - 1),
              2 * (accum - 1) * one,
              0,
              0,
              overlapped ? "during backward on ZeRO-3's reduce-and-partition stream"
                         : "exposed (on the compute stream: overlap_comm is off for stage 2)"};
  it.exposed_s = overlapped ? (accum - 1) * std::max(0.0, 2 * one - bwd_s) : it.time_s;
  add(e, it);
}

// Offloaded parameters cross the rank's PCIe link to the GPU before every all-gather of them: FSDP2
// (torch/distributed/fsdp/_fully_shard/_fsdp_param.py FSDPParam.all_gather_inputs: the shard kept in pinned
// host memory is copied with sharded_param_data.to(device, non_blocking=True) when offload_to_cpu; pytorch @
// 010ae4a8) and DeepSpeed ZeRO-3 (runtime/zero/partition_parameters.py all_gather_coalesced: p.ds_tensor.to(
// current_device) before _dist_allgather_fn; @ edaa722). Each gather pass of a micro-batch (forward, and
// backward unless fsdp-grad-op keeps the gathered parameters) moves the rank's shard. The copy is part
// of the gather's prefetch, so what it exposes is the pass's pipeline with it minus the pipeline without it.
// Nothing unless the plan offloads parameters.
void add_offloaded_param_copies(ParallelEstimate& e, const GpuSpec& gpu, double shard_bytes, double fwd_comm,
                                double fwd_s, double bwd_comm, double bwd_s, double accum) {
  if (!offloads_params(e.plan.offload)) return;
  const int passes = e.plan.strategy == Strategy::fsdp_grad_op ? 1 : 2;
  const double h2d = shard_bytes / own_pcie_bytes_per_s(gpu);
  // ZeRO-Infinity reads the part of the shard beyond max_in_cpu from the node's drives first (the node's
  // ranks at once): partition_parameters.py all_gather_coalesced swaps in params whose ds_tensor
  // final_location is nvme before the copy (@ edaa722).
  const double nvme = e.memory.nvme_param_bytes * e.plan.gpus_per_node / (e.plan.nvme_read_gbps * 1e9);
  const auto pass_exposed = [&](double extra) {
    double x = std::max(0.0, fwd_comm + extra - fwd_s) - std::max(0.0, fwd_comm - fwd_s);
    if (passes > 1) x += std::max(0.0, bwd_comm + extra - bwd_s) - std::max(0.0, bwd_comm - bwd_s);
    return x;
  };
  const double exposed = pass_exposed(h2d);
  add(e,
      CommItem{"offloaded parameters to the GPU before each all-gather (PCIe)", CollOp::send_recv,
               "pcie-host", 1, shard_bytes, passes * accum, passes * accum * h2d, 0, accum * exposed,
               "in the all-gather's prefetch: the shard is copied from pinned host memory, then gathered"});
  if (nvme <= 0) return;
  add(e,
      CommItem{"NVMe: 16-bit parameters read before each all-gather (ZeRO-Infinity)", CollOp::send_recv,
               "nvme", e.plan.gpus_per_node, e.memory.nvme_param_bytes, passes * accum, passes * accum * nvme,
               0, accum * (pass_exposed(h2d + nvme) - exposed),
               "in the all-gather's prefetch, before the PCIe copy; the node's drives serve all its ranks"});
}

// ZeRO-Infinity's optimizer step (stage3.py step -> _prepare_sub_group / _release_sub_group @ edaa722): per
// sub-group, swap_in_optimizer_state reads the fp32 master partition, its two Adam states and its fp32
// gradient (16 B per element; partitioned_optimizer_swapper.py), the CPU steps it, swap_out_optimizer_state
// writes the three states back (12 B); the fp32 gradients were written at the end of backward (4 B,
// _swap_out_offload_fp32_gradients); with parameters on NVMe the updated 16-bit partition is written too
// (_partitioned_params_swap_out, 2 B). offload_optimizer.pipeline_read / pipeline_write default to false
// (offload_config.py), so the step waits for every read and write. The node's ranks share its drives.
void add_nvme_optimizer_swaps(ParallelEstimate& e) {
  const RankMemory& m = e.memory;
  if (m.nvme_optimizer_bytes <= 0) return;
  const double gpn = e.plan.gpus_per_node;
  const double read = m.nvme_optimizer_bytes;
  const double write = m.nvme_optimizer_bytes + m.nvme_param_bytes;
  const double t = gpn * (read / (e.plan.nvme_read_gbps * 1e9) + write / (e.plan.nvme_write_gbps * 1e9));
  add(e, CommItem{"NVMe: optimizer states and fp32 gradients swapped in and out (ZeRO-Infinity)",
                  CollOp::send_recv, "nvme", e.plan.gpus_per_node, (read + write) / 2, 2, t, 0, t,
                  "exposed: pipeline_read / pipeline_write are off by default, the step waits for each "
                  "sub-group's read and write; the node's drives serve all its ranks"});
}

// Paged optimizer states that do not fit next to the rank's other memory cross the rank's PCIe link out and
// back every optimizer step (add_optimizer_paging, throughput.hpp), in the step's critical path.
void add_optimizer_paging_item(ParallelEstimate& e, const GpuSpec& gpu) {
  const double paged = e.memory.paged_out(e.usable_bytes);
  if (paged <= 0) return;
  StepTime pg;
  add_optimizer_paging(pg, paged, gpu, 1);
  e.warnings.push_back("paged optimizer: " + json(std::round(paged / kGiB * 10) / 10).dump() + " of " +
                       json(std::round(e.memory.base.optimizer_states / kGiB * 10) / 10).dump() +
                       " GiB of optimizer states per rank do not fit next to the rest and are paged to host "
                       "RAM and back every optimizer step (" +
                       json(std::round(pg.paging_s * 100) / 100).dump() + " s of PCIe per step)");
  add(e, CommItem{"paged optimizer states: to host RAM and back (unified memory, PCIe)", CollOp::send_recv,
                  "pcie-host", 1, paged, 2, pg.paging_s, 0, pg.paging_s,
                  "exposed (evicted while the step allocates, prefetched before each update)"});
}

// Bytes as GiB for a message: one decimal, none when whole ("2048", "12.5").
std::string gib_text(double bytes) {
  const double g = std::round(bytes / kGiB * 10) / 10;
  return g == std::floor(g) ? std::to_string(static_cast<long long>(g)) : json(g).dump();
}

// The node's host RAM (--host-ram, else the --node preset's) holds every rank's offloaded states and its
// offloaded activation checkpoints (--offload-activations, memory.cpp host_offload): a job that needs more
// does not fit.
void check_node_host_ram(ParallelEstimate& e) {
  const ParallelPlan& plan = e.plan;
  const double node_host = (e.memory.host_bytes + e.memory.base.host_offload) * plan.gpus_per_node;
  if (plan.host_ram_gib <= 0 || node_host <= plan.host_ram_gib * kGiB) return;
  e.fits = false;
  const double ckpt = e.memory.base.host_offload * plan.gpus_per_node;
  const std::string host =
      "host RAM: offload needs " + gib_text(node_host) + " GiB per node" +
      (ckpt > 0 ? " (" + gib_text(ckpt) + " GiB of it offloaded checkpoints)" : std::string()) +
      ", the node has " + gib_text(plan.host_ram_gib * kGiB);
  e.does_not_fit += (e.does_not_fit.empty() ? "" : "; ") + host;
  e.warnings.push_back(
      "does not fit: " + host +
      (plan.offload == Offload::none || offload_on_nvme(plan.offload)
           ? std::string()
           : std::string("; --parallel zero3 --offload optimizer-nvme or params-nvme keeps the "
                         "states on NVMe (ZeRO-Infinity)")));
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

// One ZeRO-3 gather pass: an all-gather per fetched sub-module over a group of `gpn` x `nodes` ranks, each
// with its own call latency; the pass's bytes are the model's gathered weights shared out by module size.
struct Zero3Pass {
  double time_s = 0;
  double calls = 0;
};
Zero3Pass zero3_gather_pass(const ModelSpec& m, double gather_bytes, int gpn, int nodes,
                            const ParallelPlan& p) {
  const std::vector<FetchModules> mods = zero3_fetch_modules(m);
  const Zero3FetchTotals total = zero3_fetch_totals(mods);
  const double elems = total.elems;
  Zero3Pass out;
  out.calls = total.calls;
  if (elems <= 0) return {group_collective_time_s(CollOp::all_gather, gather_bytes, gpn, nodes, p), 1};
  for (const auto& fm : mods)
    out.time_s += d(fm.count) * group_collective_time_s(CollOp::all_gather,
                                                        d(fm.elems) * gather_bytes / elems, gpn, nodes, p);
  return out;
}

// The backward's ZeRO-3 gathers: over all ranks as the forward's, or with hpZ (zero_hpz_partition_size > 1)
// over the hpZ group from the secondary partition (partition_parameters.py all_gather_coalesced:
// use_secondary_tensor, num_ranks_in_param_group @ edaa722).
struct Zero3Backward {
  Zero3Pass pass;
  std::string name;
  int ranks = 0;
  bool intra = false;
};
Zero3Backward zero3_backward_gathers(const ModelSpec& m, double gather_bytes, const ParallelPlan& p,
                                     const Zero3Pass& forward) {
  const int group = std::min(std::max(1, p.zero3.hpz_partition_size), p.ranks());
  if (group <= 1)
    return {forward, "backward parameter all-gather (per sub-module, prefetch)", p.ranks(), false};
  const int gpn = std::min(group, p.gpus_per_node);
  return {zero3_gather_pass(m, gather_bytes, gpn, std::max(1, group / p.gpus_per_node), p),
          "backward parameter all-gather (hpZ secondary partition, prefetch)", group,
          group <= p.gpus_per_node};
}

// ZeRO-3's plan-wide counts, once per plan rather than per micro-batch tried: the elements kept by the reuse
// distance and the mean fetched sub-module (0 for other strategies).
void init_zero3(Ctx& c) {
  if (c.st != Strategy::zero3) return;
  c.z3_retained = zero3_retained_elems(c.m_eff, c.plan.zero3.max_reuse_distance, c.in.workload.checkpointing);
  const Zero3FetchTotals t = zero3_fetch_totals(zero3_fetch_modules(c.m_eff));
  c.z3_mean_module = t.calls > 0 ? t.elems / t.calls : 0;
}

// --parallel auto's order: a candidate whose per-rank upper end fits before one that may not fit, then the
// faster first.
bool upper_end_fits(const ParallelEstimate& e) { return e.memory_high <= e.usable_bytes; }
bool by_fit_then_speed(const ParallelEstimate& a, const ParallelEstimate& b) {
  if (upper_end_fits(a) != upper_end_fits(b)) return upper_end_fits(a);
  return a.throughput_qps > b.throughput_qps;
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

Result<ParallelEstimate> evaluate(const Inputs& in, const ParallelPlan& plan, const Estimate& single,
                                  const Database& db) {
  ParallelEstimate e;
  e.single = single;
  e.plan = plan;
  e.is_single = false;
  const Workload& w = in.workload;
  const ModelSpec& m = in.model;
  const Strategy st = plan.strategy;
  const int R = plan.ranks();
  const int deg = (st == Strategy::tp || st == Strategy::ep || st == Strategy::cp) ? plan.degree : 1;
  e.strategy_label = std::string(strategy_name(st)) + (deg > 1 ? ":" + std::to_string(deg) : "");
  // --- checks that name the flag
  if (deg > 1 && (R % deg != 0))
    return make_error(Errc::invalid_value, "--parallel",
                      e.strategy_label + " needs a GPU count divisible by " + std::to_string(deg) + ", got " +
                          std::to_string(R));
  if (deg > plan.gpus_per_node)
    return make_error(Errc::invalid_value, "--parallel",
                      e.strategy_label + " spans more GPUs than one node has (" +
                          std::to_string(plan.gpus_per_node) +
                          "); ftcost keeps tensor, expert and context groups inside a node");
  if (auto fit = check_parallel_for_model(st, deg, m); !fit.ok()) return fit.error();
  if (auto sp = check_sequence_parallel(plan, st, m, e.strategy_label); !sp.ok()) return sp.error();
  if (plan.offload != Offload::none && !(is_zero(st) || is_fsdp(st)))
    return make_error(Errc::invalid_value, "--offload",
                      "applies to zero1/zero2/zero3 and fsdp strategies, not " + e.strategy_label);
  if (plan.offload == Offload::params && !(st == Strategy::zero3 || is_fsdp(st)))
    return make_error(Errc::invalid_value, "--offload",
                      "params needs zero3 or fsdp (ZeRO-1/2 keep parameters on the GPU)");
  if (offload_on_nvme(plan.offload) && st != Strategy::zero3)
    return make_error(Errc::invalid_value, "--offload",
                      std::string(offload_name(plan.offload)) +
                          " needs zero3: DeepSpeed swaps to NVMe only in ZeRO stage 3 (ZeRO-Infinity: "
                          "stage3.py _configure_tensor_swapping), not " +
                          e.strategy_label);
  if (plan.offload == Offload::optimizer && is_fsdp(st))
    return make_error(
        Errc::invalid_value, "--offload",
        "FSDP offloads parameters, gradients and optimizer step together: use --offload params");
  if (plan.nodes > 1 && plan.inter.kind == LinkKind::none)
    return make_error(Errc::missing_field, "--network",
                      "--nodes > 1 needs a network: a --node preset with one, or --network and "
                      "--network-gbit-per-gpu");
  if (is_zero(st) && w.method == Method::full && w.optimizer != Optimizer::adamw_mixed)
    e.warnings.emplace_back(
        "DeepSpeed ZeRO keeps fp32 master weights and Adam states (12 B/param) whatever --optimizer says; "
        "memory follows DeepSpeed's accounting");

  Ctx c{in, plan, st, deg, st == Strategy::tp ? tp_shard(m, deg) : m, single.max_batch.seq_len, 0};
  init_zero3(c);
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
  e.max_seq_len = max_seq_rank(c, e.usable_bytes);
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
    return e;
  }
  e.global_batch = e.micro_batch * e.dp * plan.grad_accum;

  // --- compute per rank
  const double len = w.mean_padded_len(e.micro_batch);
  const double step_len = len / sequence_split(plan, st);
  Workload w1 = w;
  w1.grad_accum = 1;  // this layer spreads the optimizer step over the micro-batches itself
  StepTime t = step_model(c.m_eff, w1, in.stack, in.gpu, in.calibration.get(), e.micro_batch, step_len,
                          in.expert_shares);
  const auto S = [&](Stage s) { return t.by_stage[static_cast<std::size_t>(s)]; };
  double micro_s = t.total_s - S(Stage::optimizer);
  double fwd_s = S(Stage::forward);
  double bwd_s = S(Stage::backward) + S(Stage::recompute);
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
    opt = pb.trainable / n / host_adam_params_per_s(st, in.stack, plan);
    const double bytes = 2.0 * pb.trainable / n * 2.0;  // 16-bit grads down, 16-bit params up
    CommItem it{"offload: gradients to host, parameters back (PCIe)",
                CollOp::send_recv,
                "pcie-host",
                1,
                bytes / 2,
                2,
                bytes / own_pcie_bytes_per_s(in.gpu),
                0,
                0,
                ""};
    it.exposed_s = it.time_s;
    it.overlap = "exposed (around the host optimizer step)";
    add(e, it);
    add_offload_accumulation_crossings(e, in.gpu, bytes / 2, bwd_s);
    add_nvme_optimizer_swaps(e);
  }
  e.optimizer_s = opt;
  add_optimizer_paging_item(e, in.gpu);

  // --- communication per optimizer step
  const double layers = std::max<double>(1, d(m.layers()));
  const double accum = plan.grad_accum;
  const int gpn = plan.gpus_per_node;
  const int nodes = plan.nodes;
  const MemoryBreakdown full_mb = memory_for_batch(c.m_eff, w, in.stack, 0, c.seq_len);
  const double grad_bytes = full_mb.gradients;  // trainable grads in their dtype, one replica
  const bool ds_full = is_zero(st) && w.method == Method::full;
  const double grad16 = ds_full ? 2.0 * d(c.m_eff.params().total()) : grad_bytes;
  const double gather_bytes = full_mb.weights + full_mb.trainable_params;  // what FSDP/ZeRO-3 all-gathers
  auto coll = [&](CollOp op, double bytes) { return group_collective_time_s(op, bytes, gpn, nodes, plan); };
  const std::string scope = nodes > 1 ? "hierarchical" : "intra-node";
  if (st == Strategy::ddp || st == Strategy::tp || st == Strategy::ep || st == Strategy::cp) {
    // Gradient all-reduce over the data-parallel replicas in 25 MiB buckets during backward; no_sync on
    // accumulation micro-batches.
    int g_gpn = gpn;
    int g_nodes = nodes;
    // TP ranks hold different shards: their replicas are the other TP groups. CP ranks hold the same
    // parameters and see different tokens: gradients are reduced over all ranks (Megatron's dp x cp group).
    if (st == Strategy::tp) g_gpn = gpn / deg;
    double bytes = grad_bytes;
    if (st == Strategy::ep) {
      // Non-expert gradients over all ranks, expert gradients over the R/ep replicas of each expert shard.
      const ParamCounts pc = m.params();
      const double f = d(pc.experts) / std::max(1.0, d(pc.total()));
      bytes = grad_bytes * (1 - f);
      const double eb = grad_bytes * f / deg;
      if (R / deg > 1 && eb > 0) {
        const double calls = std::ceil(eb / kDdpBucketBytes);
        const double one =
            group_collective_time_s(CollOp::all_reduce, eb / calls, std::max(1, gpn / deg), nodes, plan);
        CommItem it{"expert gradient all-reduce (DDP buckets)",
                    CollOp::all_reduce,
                    scope,
                    R / deg,
                    eb / calls,
                    calls,
                    one * calls,
                    0,
                    0,
                    "during backward (DDP buckets)"};
        it.exposed_s = one + std::max(0.0, it.time_s - one - bwd_s);
        add(e, it);
      }
    }
    if (g_gpn * g_nodes > 1 && bytes > 0) {
      const double calls = std::ceil(bytes / kDdpBucketBytes);
      const double one = group_collective_time_s(CollOp::all_reduce, bytes / calls, g_gpn, g_nodes, plan);
      CommItem it{"gradient all-reduce (DDP buckets)",
                  CollOp::all_reduce,
                  g_nodes > 1 ? "hierarchical" : "intra-node",
                  g_gpn * g_nodes,
                  bytes / calls,
                  calls,
                  one * calls,
                  0,
                  0,
                  "during backward as buckets fill; the last bucket after it"};
      it.exposed_s = one + std::max(0.0, it.time_s - one - bwd_s);
      add(e, it);
    }
  }
  if (is_zero(st)) {
    const double n = R;
    const bool each_micro = st != Strategy::zero1;  // stage 1 reduces at the accumulation boundary only
    const double rs_calls =
        (each_micro ? accum : 1.0) * std::max(1.0, std::ceil(grad16 / 2.0 / kZeroReduceBucketElems));
    const double rs_one = coll(CollOp::reduce_scatter,
                               grad16 / std::max(1.0, std::ceil(grad16 / 2.0 / kZeroReduceBucketElems)));
    CommItem rs{"gradient reduce-scatter",
                CollOp::reduce_scatter,
                scope,
                static_cast<int>(n),
                grad16 / std::max(1.0, std::ceil(grad16 / 2.0 / kZeroReduceBucketElems)),
                rs_calls,
                rs_one * rs_calls,
                0,
                0,
                ""};
    if (st == Strategy::zero3) {
      // One all-gather per fetched sub-module (zero3_fetch_modules) over all ranks; with hpZ the backward's
      // over the hpZ group, from the secondary partition.
      const Zero3Pass fp = zero3_gather_pass(c.m_eff, gather_bytes, gpn, nodes, plan);
      const Zero3Backward bk = zero3_backward_gathers(c.m_eff, gather_bytes, plan, fp);
      const Zero3Pass& bp = bk.pass;
      const double ag = fp.time_s;
      const double calls = fp.calls;
      const double first = ag / std::max(1.0, calls);  // the first module of a pass waits for its gather
      CommItem f{"forward parameter all-gather (per sub-module, prefetch)",
                 CollOp::all_gather,
                 scope,
                 static_cast<int>(n),
                 gather_bytes / std::max(1.0, calls),
                 calls * accum,
                 ag * accum,
                 0,
                 0,
                 "prefetched ahead of use along the recorded module trace (overlap_comm on for stage 3)"};
      f.exposed_s = accum * (first + std::max(0.0, ag - fwd_s));
      add(e, f);
      CommItem b{bk.name,
                 CollOp::all_gather,
                 bk.intra ? "intra-node" : scope,
                 bk.ranks,
                 gather_bytes / std::max(1.0, calls),
                 calls * accum,
                 bp.time_s * accum,
                 0,
                 0,
                 "prefetched ahead of use; with checkpointing the recompute's fetch serves the backward"};
      const double bwd_comm = bp.time_s + rs_one * rs_calls / accum;
      b.exposed_s =
          accum * (bp.time_s / std::max(1.0, calls) + std::max(0.0, bwd_comm - bwd_s) * bp.time_s / bwd_comm);
      rs.overlap = "overlapped with backward (overlap_comm)";
      rs.exposed_s =
          accum * std::max(0.0, bwd_comm - bwd_s) * (rs_one * rs_calls / accum) / bwd_comm + rs_one;
      add(e, b);
      add(e, rs);
      add_offloaded_param_copies(e, in.gpu, gather_bytes / n, ag, fwd_s, bwd_comm, bwd_s, accum);
    } else {
      rs.overlap = "not overlapped: DeepSpeed's overlap_comm defaults to off for stages 1 and 2";
      rs.exposed_s = rs.time_s;
      add(e, rs);
      const double pbytes = ds_full ? 2.0 * d(c.m_eff.params().total()) : grad_bytes;
      const double ag = coll(CollOp::all_gather, pbytes);
      CommItem a{"updated parameter all-gather",
                 CollOp::all_gather,
                 scope,
                 static_cast<int>(n),
                 pbytes,
                 1,
                 ag,
                 0,
                 ag,
                 "after the optimizer step, exposed"};
      add(e, a);
    }
  }
  if (is_fsdp(st)) {
    const int sg_gpn = gpn;
    const int sg_nodes = st == Strategy::hsdp ? 1 : nodes;
    auto scoll = [&](CollOp op, double bytes) {
      return group_collective_time_s(op, bytes, sg_gpn, sg_nodes, plan);
    };
    const std::string sscope = sg_nodes > 1 ? "hierarchical" : "intra-node";
    const double unit_bytes = fsdp_gather_bytes(c.m_eff, w, gather_bytes);
    const double ag = scoll(CollOp::all_gather, unit_bytes);
    const double rs = scoll(CollOp::reduce_scatter, grad_bytes);
    CommItem f{"forward parameter all-gather",
               CollOp::all_gather,
               sscope,
               sg_gpn * sg_nodes,
               unit_bytes / layers,
               layers * accum,
               ag * accum,
               0,
               0,
               "next unit's all-gather issued while the current unit computes"};
    f.exposed_s = accum * (ag / layers + std::max(0.0, ag - fwd_s));
    add(e, f);
    double bwd_comm = rs;
    if (st != Strategy::fsdp_grad_op) {
      CommItem b{"backward parameter all-gather",
                 CollOp::all_gather,
                 sscope,
                 sg_gpn * sg_nodes,
                 unit_bytes / layers,
                 layers * accum,
                 ag * accum,
                 0,
                 0,
                 "BACKWARD_PRE prefetch of the next unit"};
      bwd_comm += ag;
      b.exposed_s = accum * std::max(0.0, bwd_comm - bwd_s) * ag / bwd_comm;
      add(e, b);
    }
    CommItem r{"gradient reduce-scatter",
               CollOp::reduce_scatter,
               sscope,
               sg_gpn * sg_nodes,
               grad_bytes / layers,
               layers * accum,
               rs * accum,
               0,
               0,
               "per unit during backward; the last unit's after it"};
    r.exposed_s = accum * (rs / layers + std::max(0.0, bwd_comm - bwd_s) * rs / std::max(bwd_comm, 1e-30));
    add(e, r);
    add_offloaded_param_copies(e, in.gpu, gather_bytes / (sg_gpn * sg_nodes), ag, fwd_s, bwd_comm, bwd_s,
                               accum);
    if (st == Strategy::hsdp) {
      const double shard = grad_bytes / gpn;
      const double ar = group_collective_time_s(CollOp::all_reduce, shard, 1, nodes, plan);
      CommItem h{"gradient shard all-reduce across nodes",
                 CollOp::all_reduce,
                 "inter-node",
                 nodes,
                 shard / layers,
                 layers * accum,
                 ar * accum,
                 0,
                 0,
                 "after each unit's reduce-scatter, during backward"};
      h.exposed_s = accum * (ar / layers + std::max(0.0, ar - bwd_s));
      add(e, h);
    }
  }
  const double act_bytes = d(e.micro_batch) * step_len * d(m.hidden) * w.compute_bytes();
  if (st == Strategy::tp) {
    // Megatron sequence parallelism: per transformer layer, an all-gather and a reduce-scatter around the
    // attention block and around the MLP, in forward and (swapped) in backward; recompute repeats forward's.
    const double per_layer_calls = 4.0 * (1.0 + 1.0 + (w.checkpointing ? 1.0 : 0.0));
    const double ag = collective_time_s(CollOp::all_gather, act_bytes, deg, plan.intra, plan.collectives);
    const double rs = collective_time_s(CollOp::reduce_scatter, act_bytes, deg, plan.intra, plan.collectives);
    const double calls = layers * per_layer_calls * accum;
    CommItem it{"sequence-parallel all-gather / reduce-scatter",
                CollOp::all_gather,
                "intra-node",
                deg,
                act_bytes,
                calls,
                calls * (ag + rs) / 2.0,
                0,
                0,
                "on the critical path (tp_comm_overlap off by default)"};
    it.exposed_s = it.time_s;
    add(e, it);
  }
  if (st == Strategy::ep) {
    const double k = d(w.active_experts(m));
    const double bytes = act_bytes * k;
    const double moe_layers = d(m.layers_with(Ffn::moe));
    const double calls = moe_layers * (4.0 + (w.checkpointing ? 2.0 : 0.0)) * accum;
    const double one =
        collective_time_s(CollOp::all_to_all, bytes, deg, plan.intra, plan.collectives) * e.expert_imbalance;
    CommItem it{"expert dispatch / combine all-to-all",
                CollOp::all_to_all,
                "intra-node",
                deg,
                bytes,
                calls,
                calls * one,
                0,
                0,
                "on the critical path (the experts wait for their tokens)"};
    it.exposed_s = it.time_s;
    add(e, it);
  }
  if (st == Strategy::cp) {
    const double kv = d(e.micro_batch) * step_len * 2.0 * d(m.attn.kv_dim()) * w.compute_bytes();
    const double att_layers = d(m.layers_with(Mixer::attention));
    const double steps = (deg - 1.0) * (1.0 + 2.0 + (w.checkpointing ? 1.0 : 0.0));
    const double one = collective_time_s(CollOp::send_recv, kv, 2, plan.intra, plan.collectives);
    const double calls = att_layers * steps * accum;
    CommItem it{"ring attention K/V send/recv",
                CollOp::send_recv,
                "intra-node",
                deg,
                kv,
                calls,
                calls * one,
                0,
                0,
                "overlapped with the attention of the chunk in hand"};
    const double attn = t.by_class[static_cast<std::size_t>(KernelClass::attention)] * deg * accum;
    it.exposed_s = std::max(0.0, it.time_s - attn);
    add(e, it);
  }
  add_ulysses_all_to_all(e, c, d(e.micro_batch), len);
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

// A 1-GPU plan: the single-GPU estimate. A data-parallel or sharding strategy named for one GPU has nothing
// to replicate or shard, and the estimate says so rather than drop the flag (tp/ep/cp:N need N GPUs: an
// error).
ParallelEstimate one_gpu(const Estimate& single, const ParallelPlan& plan) {
  ParallelEstimate e;
  e.single = single;
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
Result<ParallelEstimate> choose_micro(const Inputs& in, const ParallelEstimate& first, const Estimate& single,
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
  for (const std::int64_t b : cand) {
    Inputs x = in;
    x.workload.batch = b;
    x.workload.grad_accum = w.effective_batch > 0 ? w.effective_batch / (b * dp) : w.grad_accum;
    ParallelPlan p = first.plan;
    p.grad_accum = static_cast<int>(x.workload.grad_accum);
    FTCOST_TRY(r, evaluate(x, p, single, db));
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
  best.single.in.workload.grad_accum = c.grad_accum;
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
  if (one) return one_gpu(single, plan);
  if (plan.intra.kind == LinkKind::none && plan.gpus_per_node > 1)
    plan.intra = intra_node_link(in.gpu, plan.gpus_per_node, -1);
  if (!plan.choose) {
    if (plan.strategy == Strategy::single) plan.strategy = Strategy::ddp;
    FTCOST_TRY(first, evaluate(in, plan, single, db));
    return choose_micro(in, first, single, db);
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
    return e;
  }
  std::stable_sort(ok.begin(), ok.end(), by_fit_then_speed);
  FTCOST_TRY(best, choose_micro(in, ok.front(), single, db));
  best.why.push_back("fastest that fits: " + best.strategy_label + " at " +
                     json(std::round(best.throughput_qps * 1000) / 1000).dump() + " queries/s (batch " +
                     std::to_string(best.micro_batch) + " per GPU, " +
                     json(std::round(best.comm_exposed_s / best.step_s * 1000) / 10).dump() +
                     "% of the step is exposed communication)");
  for (std::size_t i = 1; i < ok.size(); ++i)
    best.why.push_back(not_chosen_line(ok[i], upper_end_fits(ok[i]), upper_end_fits(ok[0])));
  for (const auto& s : no) best.why.push_back("does not fit: " + s);
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
