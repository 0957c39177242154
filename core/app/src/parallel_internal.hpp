// Internal to the multi-GPU layer: what its sources share beyond the public ftcost/parallel.hpp.
//   parallel_links.cpp   collectives and links (nccl-tests' bus bandwidth, intra-node and network links)
//   parallel_plan.cpp    the typed plan and its parsing (--parallel, --offload, --zero3, the plan's keys)
//   rank_memory.cpp      per-rank memory (DeepSpeed's estimators, ZeRO-3's gathered parameters, sharding)
//   parallel.cpp         the step evaluation per strategy, the micro-batch and --parallel auto's choice
//   parallel_json.cpp    the JSON output
#pragma once

#include "ftcost/parallel.hpp"

#include <cstdint>

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

}  // namespace ftcost::detail
