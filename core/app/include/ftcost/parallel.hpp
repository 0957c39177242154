// More than one GPU: a layer over the single-GPU estimate (estimate.hpp). Strategies DDP, FSDP (full shard,
// shard-grad-op, hybrid), DeepSpeed ZeRO-1/2/3 with optimizer/parameter offload, tensor(+sequence), expert
// and context parallelism. Per rank: sharded model states, communication buffers, activations, host RAM for
// offload. Per step: every collective with an alpha-beta time (nccl-tests' bus-bandwidth conventions) on the
// node's links, and the part of it that the strategy overlaps with compute. Provenance of every structural
// fact and assumed constant: docs/sources/parallel.md.
#pragma once

#include "ftcost/estimate.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ftcost {

enum class Strategy { single, ddp, fsdp, fsdp_grad_op, hsdp, zero1, zero2, zero3, tp, ep, cp };
// optimizer / params: host RAM (DeepSpeed offload device cpu, FSDP CPU offload); optimizer_nvme /
// params_nvme: DeepSpeed ZeRO-Infinity, the same states on the node's NVMe drives (offload device nvme,
// ZeRO-3 only).
enum class Offload { none, optimizer, params, optimizer_nvme, params_nvme };
enum class CollOp { all_reduce, all_gather, reduce_scatter, all_to_all, send_recv };
enum class LinkKind { nvswitch, nvlink_bridge, pcie_p2p, pcie_host, infiniband, roce, ethernet, none };

const char* strategy_name(Strategy s);  // as --parallel spells it (tp/ep/cp without the degree)
const char* offload_name(Offload o);    // as --offload spells it
bool offloads_params(Offload o);        // params or params_nvme
bool offload_on_nvme(Offload o);        // optimizer_nvme or params_nvme
const char* coll_op_name(CollOp o);     // all_reduce, all_gather, reduce_scatter, all_to_all, send_recv
const char* link_kind_name(LinkKind k);

// nccl-tests doc/PERFORMANCE.md: busbw = algbw * factor; all-reduce 2(n-1)/n, all-gather, reduce-scatter and
// all-to-all (n-1)/n, send/recv 1 (n = ranks).
double busbw_factor(CollOp op, int ranks);

// One link class as the estimator sees it: the bus bandwidth a large collective reaches per GPU (decimal
// GB/s, one direction) and the fixed time of one collective call.
struct Link {
  LinkKind kind = LinkKind::none;
  double busbw_gbps = 0;
  double latency_us = 0;
  std::string note;  // where the numbers come from
};

// A measured collective curve point (the calibration's `collectives` section, nccl-tests' columns).
struct CollectivePoint {
  CollOp op = CollOp::all_reduce;
  int ranks = 0;
  double bytes = 0;  // nccl-tests' size S
  double time_us = 0;
  double algbw_gbps = 0;
  double busbw_gbps = 0;
};
// Reads [{op, ranks, bytes, time_us, algbw_gbps, busbw_gbps}, ...]; errors name the row and field.
Result<std::vector<CollectivePoint>> parse_collectives(const json& rows, const std::string& field);

// DeepSpeed ZeRO-3's parameter cache (deepspeedai/DeepSpeed v0.19.6 @ edaa722, runtime/zero/config.py
// DeepSpeedZeroConfig: stage3_max_live_parameters 1e9, stage3_max_reuse_distance 1e9,
// stage3_prefetch_bucket_size 5e7, stage3_param_persistence_threshold 1e5 elements; zero_hpz_partition_size
// 1). 0 in the two "auto" fields = the Hugging Face Trainer's "auto" (transformers integrations/deepspeed.py
// HfTrainerDeepSpeedConfig.trainer_config_finalize: prefetch 0.9 H^2, persistence 10 H), which the configs of
// TRL, LLaMA-Factory, axolotl and ms-swift use. --zero3 KEY=VALUE,... sets them (docs/sources/parallel.md).
struct Zero3Settings {
  double max_live_parameters = 1e9;
  double max_reuse_distance = 1e9;
  double prefetch_bucket_size = 0;         // elements; 0: auto
  double param_persistence_threshold = 0;  // elements; 0: auto
  int hpz_partition_size = 1;              // ZeRO++ hpZ: secondary partition within groups of this size
  bool given = false;                      // --zero3 was given (else the settings are assumed)
  double prefetch_elems(const ModelSpec& m) const;
  double persistence_elems(const ModelSpec& m) const;
};
// "max_live_parameters=1e9,prefetch_bucket_size=auto,..." (DeepSpeed's key names, with or without the
// "stage3_" prefix; zero_hpz_partition_size for hpZ) -> settings; errors name `field` and the key.
Result<Zero3Settings> parse_zero3(const std::string& text, const std::string& field);

struct ParallelPlan {
  Strategy strategy = Strategy::single;
  int degree = 1;  // tp / ep / cp degree; the remaining ranks replicate (data parallel)
  Offload offload = Offload::none;
  int gpus_per_node = 1;
  int nodes = 1;
  int grad_accum = 1;           // micro-batches per optimizer step (no gradient sync on the others where the
                                // strategy allows it)
  bool choose = false;          // --parallel auto: fastest candidate that fits
  std::string node_id;          // preset the links came from, or empty
  Link intra, inter;            // filled by resolve_links() when empty
  double host_ram_gib = 0;      // per node: --host-ram, else the node preset's (0: not checked)
  double host_memory_gbps = 0;  // per node: --host-memory-gbps, else the node preset's (0: not stated)
  // The node's NVMe drives as ZeRO-Infinity reads and writes them (decimal GB/s, shared by the node's ranks):
  // --nvme-gbps, else DeepSpeed's own measurement of 4 PCIe 4.0 SSDs in RAID-0 (docs/sources/parallel.md).
  double nvme_read_gbps = 0, nvme_write_gbps = 0;
  std::string nvme_note;                     // where the NVMe rates come from
  std::vector<CollectivePoint> collectives;  // measured curves (optional)
  Zero3Settings zero3;                       // DeepSpeed ZeRO-3's cache settings (zero3 only)
  // DeepSpeed Ulysses sequence parallelism (--sequence-parallel, ZeRO only): each sample's sequence is split
  // over `sp` ranks of a node, attention all-to-alls heads for sequence; ZeRO still shards over every rank.
  int sp = 1;
  // NCCL's compute-capability row of its tuning tables (0 Volta, 1 Ampere, 2 Hopper, 3 Blackwell), from the
  // GPU's compute capability (estimate_parallel sets it).
  int nccl_arch = 1;
  int ranks() const { return gpus_per_node * nodes; }
};

// "ddp", "fsdp", ..., "tp:4", "ep:8", "cp:2", "auto" -> strategy and degree; errors name `field`.
Result<ParallelPlan> parse_parallel(const std::string& text, const std::string& field, ParallelPlan base);
// What the model itself rules out, whatever the GPU count (an error naming --parallel): tp:N must divide the
// attention heads, ep:N needs a MoE model and must divide its experts. The request's --parallel is checked
// when it is resolved (estimate, scale, compare alike) and every plan again before it is estimated.
Status check_parallel_for_model(Strategy s, int degree, const ModelSpec& m);

// Links from the GPU's interconnect fields and the node preset / network (assumed efficiencies in
// docs/sources/parallel.md).
// What a streaming kernel sustains of the node's host memory, GB/s: the stated line rate (0: the assumed
// default, eight channels of DDR4-3200) x the assumed sustained fraction (docs/sources/parallel.md).
double sustained_host_memory_gbps(double host_memory_gbps);
// host_memory_gbps: the node's host memory bandwidth, GB/s (0: not stated, the assumed default), which
// bounds PCIe links without peer-to-peer (NCCL stages them through host memory).
Link intra_node_link(const GpuSpec& g, int gpus_per_node, int pcie_p2p_override, double host_memory_gbps = 0);
Link network_link(const std::string& kind, double gbit_per_gpu);

// A plan from a JSON object with the option names as keys: {"gpus": N, "nodes": M, "parallel":
// "fsdp"|"tp:4"|"auto"|..., "offload": "none"|"optimizer"|"params"|"optimizer-nvme"|"params-nvme",
// "nvme-gbps": "READ[,WRITE]", "host-ram": GiB per node, "node": preset id, "network":
// "infiniband"|"roce"|"ethernet"|"none", "network-gbit-per-gpu": X} plus two keys that are not job options:
// "nvlink-gbps" (override of the GPU's NVLink bandwidth, bidirectional per GPU; e.g. 400 for the A800, used
// by reference rows) and "collectives" (measured curve rows). Gradient accumulation comes from
// in.workload.grad_accum (--grad-accum). Errors name the option.
Result<ParallelPlan> plan_from_json(const json& obj, const Inputs& in, const Database& db);
// obj's "nvme-gbps" ("READ[,WRITE]" GB/s, or a number) as {read, write}; absent: the assumed default.
Result<std::pair<double, double>> parse_nvme_gbps(const json& obj);
// The plan of a resolved request (--gpus, --nodes, --parallel, --offload, --node, --network...).
Result<ParallelPlan> plan_from_inputs(const Inputs& in, const Database& db);

// Time of one collective of nccl-tests size `bytes` over `ranks` GPUs on `link`; measured curves for
// (op, ranks) win when given (busbw interpolated in log(bytes)).
double collective_time_s(CollOp op, double bytes, int ranks, const Link& link,
                         const std::vector<CollectivePoint>& curves);
// NCCL's own choice for one all-reduce, all-gather or reduce-scatter over one communicator of
// gpus_per_node x nodes ranks (NVIDIA/nccl src/graph/tuning.cc ncclTopoTuneModel + ncclTopoGetAlgoTime @
// 5067397c): every enabled algorithm (ring, tree for all-reduce, NVLS on NVSwitch Hopper/Blackwell nodes,
// PAT with one GPU per node) and protocol (LL, LL128, Simple) timed with its tables' latencies and bandwidth
// factors, the fastest kept. The communicator is flat: a ring over nodes moves its data through the slowest
// link, the node's NICs (--network-gbit-per-gpu x GPUs of the node) or the intra-node link.
struct NcclTime {
  double time_s = 0;
  const char* algorithm = "";  // "ring", "tree", "nvls", "pat"
  const char* protocol = "";   // "LL", "LL128", "Simple"
  bool network_bound = false;  // the node's NICs, not the intra-node link, set the bandwidth
  double busbw_gbps = 0;       // the bus bandwidth of the chosen algorithm's graph
};
NcclTime nccl_time(CollOp op, double bytes, int gpus_per_node, int nodes, const ParallelPlan& p);
// "ring/Simple" or "ring/Simple, network-bound" (nccl_time's choice, for a communication item).
std::string nccl_label(const NcclTime& t);
// Over gpus_per_node x nodes: NCCL's choice (nccl_time) for all-reduce, all-gather and reduce-scatter;
// measured curves on one node win; all-to-all and send/recv on the link model.
double group_collective_time_s(CollOp op, double bytes, int gpus_per_node, int nodes, const ParallelPlan& p);

// DeepSpeed's estimators, as written in deepspeed/runtime/zero/stage_1_and_2.py and stage3.py
// (docs/sources/deepspeed-zero-estimators.md): {cpu bytes, gpu bytes}, truncated like Python's int().
struct ZeroEstimate {
  std::int64_t cpu_bytes = 0;
  std::int64_t gpu_bytes = 0;
  std::int64_t largest_layer_bytes = 0;  // stage 3 only
};
ZeroEstimate deepspeed_zero2_estimate(std::int64_t total_params, int gpus_per_node, int nodes,
                                      bool cpu_offload, double additional_buffer_factor = 1.5);
ZeroEstimate deepspeed_zero3_estimate(std::int64_t total_params, std::int64_t largest_layer_params,
                                      int gpus_per_node, int nodes, bool cpu_offload, bool cpu_offload_params,
                                      bool zero_init = true, double additional_buffer_factor = 1.5);
// Parameters of the largest module (nn.Module's own parameters, not recursing): what DeepSpeed's
// model_to_params() finds. For HF LLMs: the embedding or lm_head, else the largest linear.
std::int64_t largest_module_params(const ModelSpec& m);

// DeepSpeed ZeRO-3 fetches parameters per sub-module: deepspeed/runtime/zero/partitioned_param_coordinator.py
// (v0.19.6, commit edaa722) `_fetch_sub_module_impl` issues one all_gather_coalesced per module; parameters
// of at most stage3_param_persistence_threshold = 1e5 elements (runtime/zero/config.py, parameter_offload.py
// `mark_persistent_parameters`) stay resident and are never fetched. The modules one forward pass fetches, as
// (parameter elements of one module, how many such modules): attention projections, MLP / expert / shared-
// expert linears, routers, Mamba projections, embedding and lm_head (approximations for MLA: its projections
// as four equal parts).
struct FetchModules {
  std::int64_t elems = 0;
  std::int64_t count = 0;
};
constexpr std::int64_t kZero3PersistenceThreshold = 100000;
std::vector<FetchModules> zero3_fetch_modules(const ModelSpec& m);
std::int64_t zero3_fetch_module_count(const ModelSpec& m);  // sum of the counts
// Elements ZeRO-3 keeps gathered at the forward/backward turn because their next use in the module trace lies
// within `reuse_distance` elements (partitioned_param_coordinator.py __params_to_release @ edaa722): lm_head
// always, and the tail of the last layers while twice the elements after them (recompute and backward
// counted with checkpointing) stay under the distance.
double zero3_retained_elems(const ModelSpec& m, double reuse_distance, bool checkpointing);

// Per-rank memory, bytes.
struct RankMemory {
  MemoryBreakdown base;            // the single-GPU components after sharding (weights, grads, ...)
  double fp32_grad_partition = 0;  // DeepSpeed: fp32 gradient partition (ZeRO) / FSDP's sharded fp32 grads
  double gather_buffers = 0;       // FSDP unit all-gather + prefetch, ZeRO-3 live parameters
  double bucket_buffers = 0;       // DDP gradient buckets, ZeRO reduce/all-gather buckets
  double nccl_buffers = 0;         // communicator buffers
  // Parameters that stay gathered beyond the working set: ZeRO-3's live-parameter cache (modules whose reuse
  // lies within stage3_max_reuse_distance, the prefetch bucket, persistent small parameters, hpZ's secondary
  // partition); FSDP's root unit (embedding, final norm, lm_head), which is not resharded after forward.
  double live_params = 0;
  // What may be on the GPU beyond the point estimate, depending on settings ftcost cannot see (the upper end
  // of the per-rank range adds it): ZeRO-3's prefetch up to stage3_max_live_parameters, FSDP's next-but-one
  // unit in flight, an fp32 reduce_dtype. `residue_term` names them, the largest first.
  double residue_high = 0;
  std::string residue_term;
  // bitsandbytes' 4-bit quantization states (absmax, nested absmax) of every Linear4bit under a full-shard
  // strategy: attributes of the module and of Params4bit, neither parameter nor buffer, so FSDP and ZeRO-3
  // neither shard nor offload them (bitsandbytes @ 20e1677 nn/modules.py Params4bit._quantize,
  // Linear4bit.forward's fix_4bit_weight_quant_state_from_module). What sharding and offload had removed of
  // them from `weights`.
  double quant_states = 0;
  // gpt-oss's training expert loop (transformers @ 00d4b3d GptOssExperts.forward, self.training): every
  // expert hit indexes the fused [E, H, 2I] / [E, I, H] parameters with a tensor, a copy of its slices that
  // matmul saves for backward (one layer's worth under checkpointing); full fine-tuning adds index's
  // backward, a zeros tensor of the whole fused parameter per expert, accumulated by the autograd engine.
  // Unsharded.
  double expert_copies = 0;
  double host_bytes = 0;             // host RAM per rank for offload
  double nvme_optimizer_bytes = 0;   // ZeRO-Infinity, per rank on NVMe: fp32 master, Adam states, fp32 grads
  double nvme_param_bytes = 0;       // ZeRO-Infinity, per rank on NVMe: 16-bit parameters beyond max_in_cpu
  double model_state_bytes() const;  // weights + trainable + grads + optimizer + fp32 grads + gather buffers
  double total() const;
  double resident() const;                // what must fit: total() without paged optimizer states
  double on_gpu(double usable) const;     // on the GPU at the peak: paged states fill the room left
  double paged_out(double usable) const;  // paged optimizer states that cross PCIe every step
};

struct CommItem {
  std::string name;  // what it moves ("gradient all-reduce", "forward parameter all-gather", ...)
  CollOp op = CollOp::all_reduce;
  std::string scope;  // "intra-node" | "inter-node" | "flat across nodes" | "pcie-host"
  int ranks = 0;
  double bytes = 0;   // nccl-tests size S of one call
  double calls = 0;   // per optimizer step
  double time_s = 0;  // total per optimizer step
  double overlapped_s = 0;
  double exposed_s = 0;
  std::string overlap;    // how the strategy overlaps it (the code fact, short)
  std::string algorithm;  // NCCL's choice for one call ("ring/Simple", "tree/LL", "nvls/Simple"; bound)
};

struct ParallelEstimate {
  Estimate single;  // the single-GPU estimate of the same inputs (unchanged for a 1-GPU plan)
  ParallelPlan plan;
  bool is_single = true;
  std::string strategy_label;        // "fsdp", "tp:4", ...
  int dp = 1;                        // data-parallel replicas (ranks / degree)
  std::int64_t micro_batch = 0;      // per rank
  std::int64_t max_micro_batch = 0;  // per rank
  // The largest micro-batch whose per-rank memory range's upper end fits (the stack's uncertainty on the
  // rank's activations, loss and allocator): what the fastest-batch rule may choose, as on one GPU.
  std::int64_t max_micro_range_fit = 0;
  BatchChoice batch_choice;
  double memory_low = 0, memory_high = 0;  // per rank, bytes: total() -/+ uncertainty x variable part
  double max_seq_len = 0;                  // per rank: the longest padded sequence that fits at micro-batch 1
  std::int64_t global_batch = 0;           // per optimizer step
  double seq_len = 0;
  RankMemory memory;
  double usable_bytes = 0;
  bool fits = false;
  // Why it does not fit (empty when it fits): "even batch 1 per GPU needs X GiB per rank", "batch N per GPU
  // needs X GiB per rank", "host RAM: offload needs X GiB per node, the node has Y". No time or cost then.
  std::string does_not_fit;
  std::vector<CommItem> comm;
  double compute_s = 0;    // per optimizer step, per rank: grad_accum x (forward+recompute+backward)
  double optimizer_s = 0;  // per rank (sharded where the strategy shards it), host Adam for offload
  double comm_s = 0, comm_exposed_s = 0;
  double step_s = 0;
  double expert_imbalance = 1;  // EP: the busiest rank's routed load over the mean
  double zero3_hook_s = 0;  // ZeRO-3: host time of the expert Linears' fetch/release hooks the eager expert
                            // loop exposes, per optimizer step (in compute_s)
  double throughput_qps = 0, throughput_tps = 0;
  double throughput_data_tps = 0;                  // tokens of data (no padding) per second
  double throughput_low = 0, throughput_high = 0;  // the step model's range (step_range_fraction)
  double scaling_efficiency = 0;  // throughput / (ranks x single-GPU throughput at its own max batch)
  double steps_per_epoch = 0;     // optimizer steps: ceil(rows / global batch), at least 1
  double optimizer_steps = 0;     // in the job: ceil(epochs x steps_per_epoch) (the Trainer's max_steps)
  double time_hours = 0;          // optimizer_steps x step_s
  double cost_usd = 0;            // ranks x price per GPU-hour x hours
  double hours_low = 0, hours_high = 0;  // at the throughput range's high / low end
  double cost_low = 0, cost_high = 0;
  double usd_per_gpu_hour = 0;
  std::string price_provider;
  PriceChoice price;             // the one price rule's choice for the plan's shape (estimate.hpp)
  ZeroEstimate deepspeed;        // for zero1/2/3: DeepSpeed's own estimate of model states (stage 1 uses the
                                 // stage_1_and_2 estimator)
  std::vector<std::string> why;  // auto: the ranking and what did not fit
  std::vector<std::string> warnings;
};

// Per rank: "does_not_fit", "may_not_fit" (the resident memory fits, the range's upper end -- the stack's
// uncertainty and the residues of unknown settings, RankMemory::residue_high -- does not), "tight" or "fits".
std::string rank_memory_state(const ParallelEstimate& e);

Result<ParallelEstimate> estimate_parallel(const Inputs& in, const ParallelPlan& plan, const Database& db);
// For a 1-GPU plan: exactly estimate_to_json(single). Otherwise that object with the multi-GPU fields
// (per-rank memory, communication breakdown, step, throughput, time and cost for all ranks) replacing the
// single-GPU ones, under "parallel".
json parallel_to_json(const ParallelEstimate& p);

// The single-GPU estimate's warnings that still hold for the multi-GPU job (not its "does not fit").
std::vector<std::string> single_gpu_warnings(const ParallelEstimate& p);

}  // namespace ftcost
