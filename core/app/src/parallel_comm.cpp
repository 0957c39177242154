// The multi-GPU step's communication per optimizer step, each collective with its overlap rule: DDP's
// gradient all-reduce, DeepSpeed ZeRO's reduce-scatter and parameter gathers, FSDP's per-unit collectives,
// and the activations of tensor, expert and context parallelism (parallel.cpp's evaluate calls them in turn;
// parallel_internal.hpp declares them).
#include "ftcost/units.hpp"
#include "parallel_internal.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace ftcost::detail {

namespace {

// What FSDP2 all-gathers per replica: `gather_bytes` (the weights in their dtype), less what torchao's FP8
// all-gather saves (--fp8-all-gather: 1 B per parameter of the float8 linears; fp8_all_gather_saving,
// rank_memory.cpp).
double fsdp_gather_bytes(const ModelSpec& m, const Workload& w, double gather_bytes) {
  return std::max(0.0, gather_bytes - fp8_all_gather_saving(m, w));
}

}  // namespace

namespace {

// code: torch/nn/parallel/distributed.py DistributedDataParallel(bucket_cap_mb=25).
constexpr double kDdpBucketBytes = 25.0 * kMiB;

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

// One ZeRO-3 pass along the module trace with DeepSpeed's prefetch depth: the exposed gather time.
// partitioned_param_coordinator.py fetch_sub_module (@ edaa722): for module i it waits for i's parameters
// (all-gathered on demand when not prefetched), then pops the trace and issues all-gathers of the next
// parameters not yet fetched until numel_prefetching reaches stage3_prefetch_bucket_size (at least one: the
// loop tests the count before adding); the gathers run in issue order on one all-gather stream. A module
// larger than the bucket is therefore fetched one module ahead: its gather hides only behind the compute of
// the module before it. The trace: the embedding, the layers' fetched sub-modules in order
// (zero3_fetch_modules' groups, each layer's share), the lm_head. assumed: the pass's compute is spread over
// the modules in proportion to their elements (the linears' FLOPs are; attention's and the norms' follow
// them); stage3_max_live_parameters does not bind before the bucket (1e9 elements by default).
// The layers repeat, so a pass is played over the head, k layers and the tail, and the layers beyond k add
// the last layer's exposed time each (the streams' lag is periodic once the prefetch fills; k = 2).
struct TraceModule {
  double elems = 0, gather_s = 0;
};
struct Zero3Trace {
  std::vector<TraceModule> head, layer, tail;
  std::int64_t layers = 1;
  double elems = 0;  // the whole pass's
};
Zero3Trace zero3_trace(const ModelSpec& m, double gather_bytes, int gpn, int nodes, const ParallelPlan& p) {
  const std::vector<FetchModules> mods = zero3_fetch_modules(m);
  Zero3Trace t;
  t.elems = zero3_fetch_totals(mods).elems;
  t.layers = std::max<std::int64_t>(1, m.layers());
  for (const auto& fm : mods) {
    const TraceModule one{
        d(fm.elems),
        group_collective_time_s(CollOp::all_gather, d(fm.elems) * gather_bytes / t.elems, gpn, nodes, p)};
    if (fm.count < t.layers) {
      std::vector<TraceModule>& edge = t.head.empty() ? t.head : t.tail;
      edge.insert(edge.end(), static_cast<std::size_t>(fm.count), one);
    } else {
      t.layer.insert(t.layer.end(), static_cast<std::size_t>(fm.count / t.layers), one);
    }
  }
  return t;
}

// The exposed time of the pass over the head, `k` layers and the tail (reversed for the backward), at
// `s_per_elem` seconds of compute per element, with `bucket` the prefetch bucket in elements.
double zero3_play(const Zero3Trace& t, std::int64_t k, bool reverse, double s_per_elem, double bucket) {
  std::vector<TraceModule> seq = t.head;
  for (std::int64_t l = 0; l < k; ++l) seq.insert(seq.end(), t.layer.begin(), t.layer.end());
  seq.insert(seq.end(), t.tail.begin(), t.tail.end());
  if (reverse) std::reverse(seq.begin(), seq.end());
  const std::size_t n = seq.size();
  std::vector<double> done(n, 0);
  std::size_t issued = 0;  // modules [0, issued) have their gathers issued
  double now = 0;          // the compute stream
  double stream = 0;       // the all-gather stream
  double compute = 0;
  const auto issue = [&](std::size_t i) {
    stream = std::max(now, stream) + seq[i].gather_s;
    done[i] = stream;
  };
  for (std::size_t i = 0; i < n; ++i) {
    if (i >= issued) issue(issued++);
    now = std::max(now, done[i]);
    for (double fresh = 0; issued < n && fresh < bucket; ++issued) {
      fresh += seq[issued].elems;
      issue(issued);
    }
    now += s_per_elem * seq[i].elems;
    compute += s_per_elem * seq[i].elems;
  }
  return now - compute;
}

// One pass's exposed gather time with `compute_s` spread over its modules, on a 1 ns grid: the play subtracts
// sums of a pass's length, so an ulp of difference in the compute (the CLI's and the API's inputs) would
// otherwise show in the last digits of every derived number.
double zero3_pass_exposed(const Zero3Trace& t, bool reverse, double compute_s, double bucket) {
  if (t.elems <= 0) return 0;
  const double rate = compute_s / t.elems;
  const std::int64_t k = std::min<std::int64_t>(t.layers, 2);
  const double played = zero3_play(t, k, reverse, rate, bucket);
  double exposed = played;
  if (t.layers > k)
    exposed += d(t.layers - k) * std::max(0.0, played - zero3_play(t, k - 1, reverse, rate, bucket));
  return std::round(exposed * 1e9) / 1e9;
}

// The backward's ZeRO-3 gathers: over all ranks as the forward's, or with hpZ (zero_hpz_partition_size > 1)
// over the hpZ group from the secondary partition (partition_parameters.py all_gather_coalesced:
// use_secondary_tensor, num_ranks_in_param_group @ edaa722).
struct Zero3Backward {
  Zero3Pass pass;
  std::string name;
  int ranks = 0;
  bool intra = false;
  int gpn = 1, nodes = 1;  // the group the backward gathers over
};
Zero3Backward zero3_backward_gathers(const ModelSpec& m, double gather_bytes, const ParallelPlan& p,
                                     const Zero3Pass& forward) {
  const int group = std::min(std::max(1, p.zero3.hpz_partition_size), p.ranks());
  if (group <= 1)
    return {forward,         "backward parameter all-gather (per sub-module, prefetch)",
            p.ranks(),       false,
            p.gpus_per_node, p.nodes};
  const int gpn = std::min(group, p.gpus_per_node);
  const int nodes = std::max(1, group / p.gpus_per_node);
  return {zero3_gather_pass(m, gather_bytes, gpn, nodes, p),
          "backward parameter all-gather (hpZ secondary partition, prefetch)",
          group,
          group <= p.gpus_per_node,
          gpn,
          nodes};
}

}  // namespace

// The sizes every strategy's communication uses.
void Eval::comm_setup() {
  layers = std::max<double>(1, d(m.layers()));
  accum = plan.grad_accum;
  gpn = plan.gpus_per_node;
  nodes = plan.nodes;
  const MemoryBreakdown full_mb = memory_for_batch(c.m_eff, w, in.stack, 0, c.seq_len);
  grad_bytes = full_mb.gradients;  // trainable grads in their dtype, one replica
  ds_full = is_zero(st) && w.method == Method::full;
  grad16 = ds_full ? 2.0 * d(c.m_eff.params().total()) : grad_bytes;
  gather_bytes = full_mb.weights + full_mb.trainable_params;  // what FSDP/ZeRO-3 all-gathers
  scope = nodes > 1 ? "flat across nodes" : "intra-node";
}

// DDP-style gradient all-reduce (ddp, and the replicas of tp, ep and cp).
void Eval::comm_data_parallel() {
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
        CommItem it = comm_item("expert gradient all-reduce (DDP buckets)", CollOp::all_reduce, scope,
                                R / deg, eb / calls, calls, one * calls, "during backward (DDP buckets)");
        it.algorithm = algo(CollOp::all_reduce, eb / calls, std::max(1, gpn / deg), nodes);
        it.exposed_s = one + std::max(0.0, it.time_s - one - bwd_s);
        add(e, it);
      }
    }
    if (g_gpn * g_nodes > 1 && bytes > 0) {
      const double calls = std::ceil(bytes / kDdpBucketBytes);
      const double one = group_collective_time_s(CollOp::all_reduce, bytes / calls, g_gpn, g_nodes, plan);
      CommItem it =
          comm_item("gradient all-reduce (DDP buckets)", CollOp::all_reduce,
                    g_nodes > 1 ? "flat across nodes" : "intra-node", g_gpn * g_nodes, bytes / calls, calls,
                    one * calls, "during backward as buckets fill; the last bucket after it");
      it.algorithm = algo(CollOp::all_reduce, bytes / calls, g_gpn, g_nodes);
      it.exposed_s = one + std::max(0.0, it.time_s - one - bwd_s);
      add(e, it);
    }
  }
}

// DeepSpeed ZeRO stages 1-3: gradient reduce-scatter, ZeRO-3's parameter gathers, stages 1-2's all-gather.
void Eval::comm_zero() {
  if (is_zero(st)) {
    const double n = R;
    const bool each_micro = st != Strategy::zero1;  // stage 1 reduces at the accumulation boundary only
    const double rs_calls =
        (each_micro ? accum : 1.0) * std::max(1.0, std::ceil(grad16 / 2.0 / kZeroReduceBucketElems));
    const double rs_one = coll(CollOp::reduce_scatter,
                               grad16 / std::max(1.0, std::ceil(grad16 / 2.0 / kZeroReduceBucketElems)));
    CommItem rs = comm_item("gradient reduce-scatter", CollOp::reduce_scatter, scope, static_cast<int>(n),
                            grad16 / std::max(1.0, std::ceil(grad16 / 2.0 / kZeroReduceBucketElems)),
                            rs_calls, rs_one * rs_calls, "");
    rs.algorithm = algo(CollOp::reduce_scatter, rs.bytes, gpn, nodes);
    if (st == Strategy::zero3) {
      // One all-gather per fetched sub-module (zero3_fetch_modules) over all ranks; with hpZ the backward's
      // over the hpZ group, from the secondary partition.
      const Zero3Pass fp = zero3_gather_pass(c.m_eff, gather_bytes, gpn, nodes, plan);
      const Zero3Backward bk = zero3_backward_gathers(c.m_eff, gather_bytes, plan, fp);
      const Zero3Pass& bp = bk.pass;
      const double ag = fp.time_s;
      const double calls = fp.calls;
      CommItem f =
          comm_item("forward parameter all-gather (per sub-module, prefetch)", CollOp::all_gather, scope,
                    static_cast<int>(n), gather_bytes / std::max(1.0, calls), calls * accum, ag * accum,
                    "prefetched ahead of use along the recorded module trace (overlap_comm on for stage 3)");
      f.algorithm = algo(CollOp::all_gather, f.bytes, gpn, nodes);
      const double bucket = plan.zero3.prefetch_elems(c.m_eff);
      f.exposed_s = accum * zero3_pass_exposed(zero3_trace(c.m_eff, gather_bytes, gpn, nodes, plan), false,
                                               fwd_s, bucket);
      f.overlap += "; one bucket ahead (stage3_prefetch_bucket_size)";
      add(e, f);
      CommItem b =
          comm_item(bk.name, CollOp::all_gather, bk.intra ? "intra-node" : scope, bk.ranks,
                    gather_bytes / std::max(1.0, calls), calls * accum, bp.time_s * accum,
                    "prefetched ahead of use; with checkpointing the recompute's fetch serves the backward");
      b.algorithm = bk.intra ? algo(CollOp::all_gather, b.bytes, bk.ranks, 1) : f.algorithm;
      const double bwd_comm = bp.time_s + rs_one * rs_calls / accum;
      const double depth =
          zero3_pass_exposed(zero3_trace(c.m_eff, gather_bytes, bk.gpn, bk.nodes, plan), true, bwd_s, bucket);
      b.exposed_s = accum * std::max(depth, bp.time_s / std::max(1.0, calls) +
                                                std::max(0.0, bwd_comm - bwd_s) * bp.time_s / bwd_comm);
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
      CommItem a = comm_item("updated parameter all-gather", CollOp::all_gather, scope, static_cast<int>(n),
                             pbytes, 1, ag, "after the optimizer step, exposed");
      a.algorithm = algo(CollOp::all_gather, pbytes, gpn, nodes);
      a.exposed_s = ag;
      add(e, a);
    }
  }
}

// FSDP (and HSDP, SHARD_GRAD_OP): per-unit all-gathers and reduce-scatters, HSDP's cross-node all-reduce.
void Eval::comm_fsdp() {
  if (is_fsdp(st)) {
    const int sg_gpn = gpn;
    const int sg_nodes = st == Strategy::hsdp ? 1 : nodes;
    auto scoll = [&](CollOp op, double bytes) {
      return group_collective_time_s(op, bytes, sg_gpn, sg_nodes, plan);
    };
    const std::string sscope = sg_nodes > 1 ? "flat across nodes" : "intra-node";
    const double unit_bytes = fsdp_gather_bytes(c.m_eff, w, gather_bytes);
    const double ag = scoll(CollOp::all_gather, unit_bytes);
    const double rs = scoll(CollOp::reduce_scatter, grad_bytes);
    CommItem f = comm_item("forward parameter all-gather", CollOp::all_gather, sscope, sg_gpn * sg_nodes,
                           unit_bytes / layers, layers * accum, ag * accum,
                           "next unit's all-gather issued while the current unit computes");
    f.algorithm = algo(CollOp::all_gather, f.bytes, sg_gpn, sg_nodes);
    f.exposed_s = accum * (ag / layers + std::max(0.0, ag - fwd_s));
    add(e, f);
    double bwd_comm = rs;
    if (st != Strategy::fsdp_grad_op) {
      CommItem b = comm_item("backward parameter all-gather", CollOp::all_gather, sscope, sg_gpn * sg_nodes,
                             unit_bytes / layers, layers * accum, ag * accum,
                             "BACKWARD_PRE prefetch of the next unit");
      b.algorithm = f.algorithm;
      bwd_comm += ag;
      b.exposed_s = accum * std::max(0.0, bwd_comm - bwd_s) * ag / bwd_comm;
      add(e, b);
    }
    CommItem r = comm_item("gradient reduce-scatter", CollOp::reduce_scatter, sscope, sg_gpn * sg_nodes,
                           grad_bytes / layers, layers * accum, rs * accum,
                           "per unit during backward; the last unit's after it");
    r.algorithm = algo(CollOp::reduce_scatter, r.bytes, sg_gpn, sg_nodes);
    r.exposed_s = accum * (rs / layers + std::max(0.0, bwd_comm - bwd_s) * rs / std::max(bwd_comm, 1e-30));
    add(e, r);
    add_offloaded_param_copies(e, in.gpu, gather_bytes / (sg_gpn * sg_nodes), ag, fwd_s, bwd_comm, bwd_s,
                               accum);
    if (st == Strategy::hsdp) {
      const double shard = grad_bytes / gpn;
      const double ar = group_collective_time_s(CollOp::all_reduce, shard, 1, nodes, plan);
      CommItem h = comm_item("gradient shard all-reduce across nodes", CollOp::all_reduce, "inter-node",
                             nodes, shard / layers, layers * accum, ar * accum,
                             "after each unit's reduce-scatter, during backward");
      h.algorithm = algo(CollOp::all_reduce, h.bytes, 1, nodes);
      h.exposed_s = accum * (ar / layers + std::max(0.0, ar - bwd_s));
      add(e, h);
    }
  }
}

// Tensor, expert and context parallelism's activations on the critical path (and overlapped ring K/V).
void Eval::comm_model_parallel() {
  const double act_bytes = d(e.micro_batch) * step_len * d(m.hidden) * w.compute_bytes();
  if (st == Strategy::tp) {
    // Megatron sequence parallelism: per transformer layer, an all-gather and a reduce-scatter around the
    // attention block and around the MLP, in forward and (swapped) in backward; recompute repeats forward's.
    const double per_layer_calls = 4.0 * (1.0 + 1.0 + (w.checkpointing ? 1.0 : 0.0));
    const double ag = collective_time_s(CollOp::all_gather, act_bytes, deg, plan.intra, plan.collectives);
    const double rs = collective_time_s(CollOp::reduce_scatter, act_bytes, deg, plan.intra, plan.collectives);
    const double calls = layers * per_layer_calls * accum;
    CommItem it = comm_item("sequence-parallel all-gather / reduce-scatter", CollOp::all_gather, "intra-node",
                            deg, act_bytes, calls, calls * (ag + rs) / 2.0,
                            "on the critical path (tp_comm_overlap off by default)");
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
    CommItem it =
        comm_item("expert dispatch / combine all-to-all", CollOp::all_to_all, "intra-node", deg, bytes, calls,
                  calls * one, "on the critical path (the experts wait for their tokens)");
    it.exposed_s = it.time_s;
    add(e, it);
  }
  if (st == Strategy::cp) {
    const double kv = d(e.micro_batch) * step_len * 2.0 * d(m.attn.kv_dim()) * w.compute_bytes();
    const double att_layers = d(m.layers_with(Mixer::attention));
    const double steps = (deg - 1.0) * (1.0 + 2.0 + (w.checkpointing ? 1.0 : 0.0));
    const double one = collective_time_s(CollOp::send_recv, kv, 2, plan.intra, plan.collectives);
    const double calls = att_layers * steps * accum;
    CommItem it = comm_item("ring attention K/V send/recv", CollOp::send_recv, "intra-node", deg, kv, calls,
                            calls * one, "overlapped with the attention of the chunk in hand");
    const double attn = t.by_class[static_cast<std::size_t>(KernelClass::attention)] * deg * accum;
    it.exposed_s = std::max(0.0, it.time_s - attn);
    add(e, it);
  }
}

}  // namespace ftcost::detail
