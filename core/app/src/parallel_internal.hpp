// Internal to the multi-GPU layer: what its sources share beyond the public ftcost/parallel.hpp.
//   parallel_links.cpp   collectives and links (nccl-tests' bus bandwidth, intra-node and network links)
//   parallel_plan.cpp    the typed plan and its parsing (--parallel, --offload, --zero3, the plan's keys)
//   rank_memory.cpp      per-rank memory (DeepSpeed's estimators, ZeRO-3's gathered parameters, sharding)
//   parallel.cpp         the step evaluation per strategy, the micro-batch and --parallel auto's choice
//   parallel_comm.cpp    the step's communication per strategy (parallel.cpp's evaluate calls it)
//   parallel_offload.cpp what offload moves between a rank and its host, and the node's host RAM it needs
//   parallel_json.cpp    the JSON output
#pragma once

#include "ftcost/parallel.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

namespace ftcost::detail {

// code: deepspeed/runtime/zero/config.py reduce_bucket_size = 5e8, prefetch_bucket_size = 5e7 (elements).
constexpr double kZeroReduceBucketElems = 5e8;
constexpr double kZeroPrefetchElems = 5e7;

inline double d(std::int64_t v) { return static_cast<double>(v); }

inline bool is_sharded_dp(Strategy s) {
  return s == Strategy::fsdp || s == Strategy::fsdp_grad_op || s == Strategy::hsdp || s == Strategy::zero1 ||
         s == Strategy::zero2 || s == Strategy::zero3;
}
inline bool is_zero(Strategy s) {
  return s == Strategy::zero1 || s == Strategy::zero2 || s == Strategy::zero3;
}
inline bool is_fsdp(Strategy s) {
  return s == Strategy::fsdp || s == Strategy::fsdp_grad_op || s == Strategy::hsdp;
}

struct Ctx {
  const Inputs& in;
  const ParallelPlan& plan;
  Strategy st;
  int deg;
  ModelSpec m_eff;  // what one rank computes (TP-sharded model)
  double seq_len = 0;
  double z3_retained = 0;     // ZeRO-3: elements kept gathered by the reuse distance (zero3_retained_elems)
  double z3_mean_module = 0;  // ZeRO-3: mean elements of a fetched sub-module (zero3_fetch_totals)
};

// ZeRO-3's fetched sub-modules (zero3_fetch_modules) summed: their elements and their count.
struct Zero3FetchTotals {
  double elems = 0;
  double calls = 0;
};
Zero3FetchTotals zero3_fetch_totals(const std::vector<FetchModules>& mods);

// Shard group size for sharded data parallelism.
int shard_group(const ParallelPlan& p, Strategy s);

// Per-rank memory of the plan's strategy at a micro-batch (rank_memory.cpp), the largest micro-batch whose
// resident memory fits, the largest whose memory range's upper end fits, and the longest sequence at
// micro-batch 1.
RankMemory rank_memory(const Ctx& c, std::int64_t micro);
std::int64_t max_micro(const Ctx& c, double usable);
std::int64_t max_micro_upper(const Ctx& c, double usable, std::int64_t max_b);
double max_seq_rank(const Ctx& c0, double usable);
// torchao's FP8 all-gather (--fp8-all-gather, --fp8 tensorwise): what it saves of the weights in their dtype,
// per replica: the parameter dtype less 1 B for every parameter of the float8 linears.
double fp8_all_gather_saving(const ModelSpec& m, const Workload& w);

// A collective of the step: `calls` calls of `bytes` each over `ranks` ranks, `time_s` in all, `overlap` its
// overlap rule; the caller sets its exposed part (add() clamps it and derives the overlapped part).
inline CommItem comm_item(std::string name, CollOp op, std::string scope, int ranks, double bytes,
                          double calls, double time_s, std::string overlap) {
  return CommItem{std::move(name),    op, std::move(scope), ranks, bytes, calls, time_s, 0, 0,
                  std::move(overlap), ""};
}

// One collective of the step, its exposed part clamped to [0, its time], into the estimate's totals.
inline void add(ParallelEstimate& e, CommItem it) {
  it.exposed_s = std::max(0.0, std::min(it.exposed_s, it.time_s));
  it.overlapped_s = it.time_s - it.exposed_s;
  e.comm_s += it.time_s;
  e.comm_exposed_s += it.exposed_s;
  e.comm.push_back(std::move(it));
}

// parallel_offload.cpp
// The GPU's own PCIe link to host memory, bytes/s (intra_node_link of a node no NVLink joins).
double own_pcie_bytes_per_s(const GpuSpec& gpu);
// DeepSpeed's offloaded gradient accumulation: A - 1 more crossings down and up per optimizer step.
void add_offload_accumulation_crossings(ParallelEstimate& e, const GpuSpec& gpu, double grad_shard_bytes,
                                        double bwd_s);
// Offloaded parameters' copies to the GPU before every all-gather of them (nothing unless the plan offloads
// parameters).
void add_offloaded_param_copies(ParallelEstimate& e, const GpuSpec& gpu, double shard_bytes, double fwd_comm,
                                double fwd_s, double bwd_comm, double bwd_s, double accum);
// ZeRO-Infinity's optimizer step: each sub-group's states read from and written back to NVMe.
void add_nvme_optimizer_swaps(ParallelEstimate& e);
// Paged optimizer states that do not fit cross the rank's PCIe link out and back.
void add_optimizer_paging_item(ParallelEstimate& e, const GpuSpec& gpu);
// Bytes as GiB for a message: one decimal, none when whole ("2048", "12.5").
std::string gib_text(double bytes);
// The node's host RAM holds every rank's offloaded states and checkpoints: the job does not fit when it
// cannot.
void check_node_host_ram(ParallelEstimate& e);
// One multi-GPU evaluation (parallel.cpp evaluate) in sections, each a member: the job, the rank's context,
// the estimate being filled, the rank's step times and the communication's common sizes.
struct Eval {
  Eval(const Inputs& in_, const ParallelPlan& plan_, Ctx& c_, ParallelEstimate& e_)
      : in(in_),
        plan(plan_),
        w(in_.workload),
        m(in_.model),
        st(plan_.strategy),
        R(plan_.ranks()),
        deg(c_.deg),
        c(c_),
        e(e_) {}
  const Inputs& in;
  const ParallelPlan& plan;
  const Workload& w;
  const ModelSpec& m;
  Strategy st;
  int R, deg;  // ranks; tensor, expert or context degree
  Ctx& c;
  ParallelEstimate& e;
  double known_max_seq = -1;     // the rank's longest sequence when the caller has it already (choose_micro)
  StepTime t;                    // one micro-batch on one rank (the optimizer's share not spread yet)
  double len = 0, step_len = 0;  // padded length, and the rank's share of it
  double micro_s = 0, fwd_s = 0, bwd_s = 0;  // a micro-batch's compute, its forward and backward
  double layers = 1, accum = 1;
  int gpn = 1, nodes = 1;
  double grad_bytes = 0, grad16 = 0, gather_bytes = 0;
  bool ds_full = false;  // DeepSpeed ZeRO with full fine-tuning (16-bit gradients of every parameter)
  std::string scope;
  double coll(CollOp op, double bytes) const { return group_collective_time_s(op, bytes, gpn, nodes, plan); }
  // NCCL's choice for one call over g_gpn x g_nodes ranks, as a communication item's label.
  std::string algo(CollOp op, double bytes, int g_gpn, int g_nodes) const {
    return nccl_label(nccl_time(op, bytes, g_gpn, g_nodes, plan));
  }

  // parallel.cpp: per-rank memory and the micro-batch (false when not even micro-batch 1 fits); the rank's
  // compute and optimizer step; the step, throughput, price and cost.
  bool size_micro_batch();
  void rank_compute();
  ParallelEstimate finish(const Estimate& single, const Database& db);
  // parallel_comm.cpp: the sizes every strategy's communication uses, then each strategy family's
  // collectives (each applies to its own strategies only and does nothing for the others).
  void comm_setup();
  void comm_data_parallel();   // DDP's gradient all-reduce (ddp; the replicas of tp, ep and cp)
  void comm_zero();            // DeepSpeed ZeRO stages 1-3
  void comm_fsdp();            // FSDP, HSDP, SHARD_GRAD_OP
  void comm_model_parallel();  // tensor, expert and context parallelism's activations
};

}  // namespace ftcost::detail
