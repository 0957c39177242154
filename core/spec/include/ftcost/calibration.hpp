// Kernel calibration of one GPU (schema "ftcost.calibration/3"; files of versions 1 and 2 still load): what
// `ftcost-calibrate` measures and the throughput model consumes. The JSON format is described in
// docs/calibrate.md and, precisely, in gpu-db/schema/calibration.schema.json; this loader is the authority
// (the schema mirrors it).
//
// Conventions (every row):
//   - units are in the key names: *_tflops (1e12 FLOP/s), *_gbps (1e9 B/s), *_us (microseconds);
//   - a measured quantity X is stored as X_median, X_p10, X_p90 (percentiles of the timed samples,
//     X_p10 <= X_median <= X_p90; for a rate these are the rates of the slow/fast samples) and
//     `iterations` (timed samples after warm-up);
//   - GEMM dimensions m, n, k are cuBLAS's column-major ones with transa/transb (C[m,n] = op(A) op(B),
//     op(A) is m x k); FLOPs = 2 m n k. For a linear layer y = x W^T with x [tokens, in] and W [out, in]
//     (row-major, as PyTorch stores them) the three passes are:
//         fwd   (y  = x W^T):   transa=T transb=N  m=out n=tokens k=in
//         dgrad (dx = dy W):    transa=N transb=N  m=in  n=tokens k=out
//         wgrad (dW = dy^T x):  transa=N transb=T  m=in  n=out    k=tokens
//
// Pure C++17 (also built by em++ 3.1.6): no CUDA, no <expected>/<format>, no floating-point from_chars.
#pragma once

#include "ftcost/error.hpp"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ftcost {

inline constexpr const char* kCalibrationSchema = "ftcost.calibration/3";
// Version 2 (before the op classes between the GEMMs, issue 38: norm, cast, pointwise, cross_entropy,
// lora_gemm, attention rows and their derived rates): still read; what it lacks is empty / null.
inline constexpr const char* kCalibrationSchemaV2 = "ftcost.calibration/2";
// Version 1 (before the collectives, p2p and gemm fast_accum fields): still read; what it lacks is empty.
inline constexpr const char* kCalibrationSchemaV1 = "ftcost.calibration/1";

// Statistics of one measured quantity (unit given by the owning key's prefix).
struct CalStat {
  double median = 0;
  double p10 = 0;
  double p90 = 0;
};

struct CalMeta {
  std::string schema = kCalibrationSchema;
  std::string tool = "ftcost-calibrate";
  std::string tool_version;  // e.g. "0.1.0"
  std::string git_revision;  // short hash or "unknown"
  bool git_dirty = false;
  std::string created_utc;  // "YYYY-MM-DDTHH:MM:SSZ"
  std::string command_line;
  std::string mode;               // "quick" | "full" | "smoke" (tiny sizes, device tests only)
  std::vector<std::string> only;  // benchmark families requested with --only (empty: all)
  bool partial = false;           // interrupted (Ctrl-C) or stopped by an error: not every row ran
  double duration_s = 0;
  std::vector<std::string> notes;  // skipped shapes (out of memory, unsupported), failures, remarks
};

struct CalDevice {
  std::string name;                          // cudaDeviceProp::name
  std::optional<std::string> pci_device_id;  // "0x2335" (NVML); null when NVML is absent
  std::string uuid_hash;                     // "sha256:<64 hex>" of a salted UUID; never the raw UUID
  int cc_major = 0;                          // JSON: "compute_capability": "9.0"
  int cc_minor = 0;
  int sm_count = 0;
  std::uint64_t memory_bytes = 0;
  int memory_bus_width_bits = 0;
  std::uint64_t l2_cache_bytes = 0;
  std::optional<double> sm_clock_max_mhz;  // null when neither CUDA nor NVML reports it
  std::optional<double> memory_clock_max_mhz;
  std::optional<double> power_limit_w;
  std::string driver_version;        // NVML's driver string, else the CUDA driver API version
  std::string cuda_runtime_version;  // "13.0"
  std::string cublas_version;        // "13.1.0"
  std::string host_cpu;              // CPU model of the host ("unknown" if not readable)
};

struct CalClockSample {
  std::optional<double> sm_clock_mhz;
  std::optional<double> memory_clock_mhz;
  std::optional<double> temperature_c;
  std::optional<double> power_w;
};

struct CalConditions {
  bool nvml = false;  // NVML was loaded; when false every optional below is null
  CalClockSample start;
  CalClockSample end;
  std::optional<double> sm_clock_min_mhz;  // seen during the run (sampled in the background)
  std::optional<double> sm_clock_max_mhz;
  std::optional<double> temperature_max_c;
  std::optional<double> power_max_w;
  std::vector<std::string> throttle_reasons_seen;  // names from kThrottleReasonNames
  std::optional<int> other_processes;              // compute processes on the GPU besides this one
};

// ---- measurements --------------------------------------------------------------------------------

struct BandwidthRow {             // STREAM-style kernels over arrays far larger than L2
  std::string kernel;             // "copy" (b = a) | "triad" (a = b + s*c), fp32, 16-byte vectors
  std::uint64_t array_bytes = 0;  // bytes of one array
  std::uint64_t bytes_moved = 0;  // per run, reads + writes: copy 2x, triad 3x array_bytes
  CalStat gbps;
  double time_us_median = 0;
  int iterations = 0;
};

struct GemmRow {               // one cuBLASLt matmul, best of the heuristic's candidates
  std::string shape;           // "square" or "<model>.<layer>" e.g. "mixtral-8x7b.w1"
  std::string dtype;           // "bf16" | "fp16" | "tf32" | "fp8_e4m3"
  std::string pass;            // "fwd" | "dgrad" | "wgrad" (see the table at the top)
  std::string transa, transb;  // "N" | "T"
  std::int64_t m = 0, n = 0, k = 0;
  CalStat tflops;
  double time_us_median = 0;
  int iterations = 0;
  int algos_tried = 0;                     // heuristic candidates timed
  std::optional<double> tflops_heuristic;  // the heuristic's first choice (what a framework gets), timed
                                           // under the same policy as `tflops` (schema 2; v1: 3 samples)
  bool fast_accum = false;  // fp8 only: CUBLASLT_MATMUL_DESC_FAST_ACCUM on (Transformer Engine's forward
                            // GEMMs); false: full-precision accumulation (TE's dgrad/wgrad). Schema 2.
};

struct ExpertGemmRow {       // the expert GEMMs of one MoE layer pass, loop of GEMMs vs one grouped call
  std::string model;         // "mixtral-8x7b"
  std::string dtype;         // "bf16"
  std::string proj;          // "w1_w3" (two GEMMs per expert) | "w2"
  std::string pass;          // "fwd" | "dgrad" | "wgrad"
  std::string impl;          // "loop" (cublasGemmEx per expert) | "grouped" (cublasGemmGroupedBatchedEx)
  std::string routing;       // "sparse" (top_k of experts) | "dense" (every expert, top_k = experts)
  std::string distribution;  // "uniform" | "mixtral_he_tuned" | "mixtral_gs_tuned" | "skewed"
  int experts = 0;
  int top_k = 0;
  std::int64_t tokens = 0;    // tokens entering the layer
  std::int64_t n = 0, k = 0;  // per-expert linear: out features, in features (w1: ffn, hidden)
  std::vector<std::int64_t> tokens_per_expert;  // sum = tokens * top_k
  CalStat time_us;
  double tflops_median = 0;  // useful FLOPs / time_us_median
  int iterations = 0;
};

struct MoeLayerRow {  // a whole MoE block (router .. unpermute), forward or backward
  std::string model;
  std::string direction;  // "forward" | "backward"
  std::string impl;       // expert GEMMs as "loop" | "grouped"
  std::string routing;
  std::string distribution;
  int experts = 0;
  int top_k = 0;
  std::int64_t tokens = 0;
  std::int64_t hidden = 0;
  std::int64_t ffn = 0;
  CalStat time_us;
  int iterations = 0;
  // stage name -> median microseconds. forward: router, topk, permute, experts, unpermute;
  // backward: unpermute, experts_dgrad, experts_wgrad, permute, router.
  std::vector<std::pair<std::string, double>> stages_us;
};

struct Nf4Row {         // bitsandbytes NF4 dequantization (64-value blocks, double-quantized absmax)
  std::string variant;  // "fused" (one kernel) | "bnb" (absmax, +offset, nf4->fp16, fp16->bf16)
  std::int64_t elements = 0;
  std::string out_dtype;  // "bf16"
  bool double_quant = true;
  std::uint64_t bytes_moved = 0;  // all kernels' reads + writes per run
  double bytes_per_param = 0;     // bytes_moved / elements
  CalStat gbps;
  double time_us_median = 0;
  int iterations = 0;
};

struct AdamwRow {    // one AdamW step over fp32 params, grads, m, v
  std::string impl;  // "fused" (1 kernel, 28 B/param) | "unfused" (5 passes, 56 B/param)
  std::int64_t params = 0;
  std::uint64_t bytes_moved = 0;
  double bytes_per_param = 0;
  CalStat gbps;
  double time_us_median = 0;
  int iterations = 0;
};

struct ElementwiseRow {
  std::string op;             // "swiglu" | "gelu" | "rmsnorm" | "swiglu_bwd"
  std::string dtype;          // "bf16"
  std::int64_t elements = 0;  // output elements
  std::uint64_t bytes_moved = 0;
  CalStat gbps;
  double time_us_median = 0;
  int iterations = 0;
};

struct LaunchRow {   // empty-kernel launches
  std::string kind;  // "async" (back-to-back, per launch) | "sync" (launch + stream sync)
  CalStat us;
  int iterations = 0;
};

struct HostRow {     // eager pattern: host work + small kernel per op, a host sync every few ops
  std::string kind;  // "eager_op"
  int ops_per_sample = 0;
  int sync_every = 0;
  CalStat us;  // per op
  int iterations = 0;
};

struct CpuRow {      // single-thread CPU score (fixed integer/branchy workload)
  std::string kind;  // "single_thread"
  CalStat score;     // work units per microsecond; higher is faster
  int iterations = 0;
};

// One NCCL collective at one message size, as nccl-tests reports it (doc/PERFORMANCE.md; src/*.cu *GetBw):
//   bytes      nccl-tests' "size": max(send, receive) buffer bytes of one rank: all_reduce the buffer,
//              all_gather the gathered (receive) buffer, reduce_scatter the send buffer, all_to_all the
//              send buffer (ranks x per-peer chunk), send_recv the buffer each rank sends
//   time_us    one operation (median over timed batches; each batch's mean per operation)
//   algbw_gbps bytes / time
//   busbw_gbps algbw x factor: all_reduce 2(n-1)/n; all_gather, reduce_scatter, all_to_all (n-1)/n;
//              send_recv 1
// The multi-GPU model reads exactly these six fields.
struct CollectiveRow {
  std::string op;  // "all_reduce" | "all_gather" | "reduce_scatter" | "all_to_all" | "send_recv"
  int ranks = 0;   // GPUs in the communicator (all nodes)
  std::uint64_t bytes = 0;
  double time_us = 0;
  double algbw_gbps = 0;
  double busbw_gbps = 0;
};

// Copy bandwidth from one GPU to another (cudaMemcpyPeerAsync), one direction at a time.
struct P2pRow {
  int src = 0, dst = 0;      // CUDA device indices of this process
  bool peer_access = false;  // cudaDeviceCanAccessPeer: direct (NVLink/PCIe P2P) rather than through host
  std::uint64_t bytes = 0;
  double time_us = 0;
  double gbps = 0;  // bytes / time
};

// ---- op classes between the GEMMs (schema 3; issue 38) -----------------------------------------------
// Rates of memory-bound rows are effective bandwidths: bytes_moved counts what a minimal kernel reads and
// writes once (each row's formula below; the loader checks it), whatever the measured kernel moves besides.

struct NormRow {                  // RMSNorm as transformers' LlamaRMSNorm: bf16 in and out, fp32 math
  std::string op;                 // "rmsnorm"
  std::string direction;          // "fwd" | "bwd"
  std::string dtype;              // "bf16" (activations and weight; the math is fp32)
  std::int64_t rows = 0;          // tokens
  std::int64_t cols = 0;          // hidden size
  std::uint64_t bytes_moved = 0;  // fwd: x, y, weight = 2 (2 rows cols + cols); bwd: dy, x, dx, weight,
                                  // dweight = 2 (3 rows cols + 2 cols)
  CalStat gbps;
  double time_us_median = 0;
  int iterations = 0;
};

struct CastRow {          // a dtype cast (PyTorch's .to(dtype)), 16-byte vectors
  std::string src_dtype;  // "bf16" | "fp32"
  std::string dst_dtype;  // "fp32" | "bf16" (the other one)
  std::int64_t elements = 0;
  std::uint64_t bytes_moved = 0;  // elements x (2 + 4)
  CalStat gbps;
  double time_us_median = 0;
  int iterations = 0;
};

struct PointwiseRow {  // a binary element-wise op c = a (op) b, fp32 math
  std::string op;      // "mul" | "add"
  std::string dtype;   // "bf16"
  std::int64_t elements = 0;
  std::uint64_t bytes_moved = 0;  // 3 x 2 x elements (a, b read; c written)
  CalStat gbps;
  double time_us_median = 0;
  int iterations = 0;
};

struct CrossEntropyRow {          // softmax + cross-entropy over vocabulary-wide rows (one row per token)
  std::string direction;          // "fwd" (loss and log-sum-exp per row) | "bwd" (d loss / d logits)
  std::string logits_dtype;       // "fp32" (transformers' loss upcasts the logits)
  std::int64_t rows = 0;          // tokens
  std::int64_t vocab = 0;         // columns
  std::uint64_t bytes_moved = 0;  // fwd: logits 4 rows vocab, int64 labels 8 rows, loss and lse 4 + 4 per
                                  // row = 4 rows vocab + 16 rows; bwd: logits, labels, lse read, dlogits
                                  // (fp32) written = 8 rows vocab + 12 rows
  CalStat gbps;
  double time_us_median = 0;
  int iterations = 0;
};

struct LoraGemmRow {           // one LoRA adapter GEMM through cuBLASLt (best heuristic candidate)
  std::string shape;           // the base layer the adapter sits on: "<model>.<layer>", e.g. "llama-3-8b.q"
  std::string side;            // "A" (in -> rank) | "B" (rank -> out)
  int rank = 0;                // A: out == rank; B: in == rank
  std::string dtype;           // "bf16"
  std::string pass;            // "fwd" | "dgrad" | "wgrad"
  std::string transa, transb;  // as GemmRow (the table at the top)
  std::int64_t tokens = 0, in = 0, out = 0;  // this GEMM's linear y[tokens,out] = x[tokens,in] W[out,in]^T
  std::int64_t m = 0, n = 0, k = 0;          // cuBLAS's view of the pass (the table at the top)
  std::uint64_t bytes_moved = 0;             // 2 (m k + k n + m n): A and B read, C written once (bf16)
  CalStat tflops;                            // 2 m n k / time
  double time_us_median = 0;
  int iterations = 0;
  int algos_tried = 0;
};

// Causal self-attention (softmax(Q K^T / sqrt(d)) V with the upper triangle masked), bf16, Q/K/V/O laid out
// [batch, seq_len, heads, head_dim] as FlashAttention's interface takes them; grouped-query when kv_heads <
// heads. FLOPs count the causal half (FlashAttention-2's benchmark convention, benchmarks/benchmark_flash_
// attention.py flops(): 4 b L^2 h d / 2 forward, 2.5x that backward).
struct AttentionRow {
  std::string direction;  // "fwd" | "bwd" (dQ, dK, dV from dO, with the forward's log-sum-exp)
  std::string impl;   // which kernel: "ftcost_wmma_fa2" (the calibrator's own tiled kernel) or a library's
  std::string dtype;  // "bf16"
  bool causal = true;
  std::string model;  // shape source, e.g. "llama-3-8b"
  int batch = 0, heads = 0, kv_heads = 0, head_dim = 0;
  std::int64_t seq_len = 0;
  double flops = 0;  // fwd 2 batch heads seq_len^2 head_dim; bwd 2.5x
  CalStat tflops;
  double time_us_median = 0;
  int iterations = 0;
};

struct CalMeasurements {
  std::vector<BandwidthRow> bandwidth;
  std::vector<GemmRow> gemm;
  std::vector<ExpertGemmRow> expert_gemm;
  std::vector<MoeLayerRow> moe_layer;
  std::vector<Nf4Row> nf4_dequant;
  std::vector<AdamwRow> adamw;
  std::vector<ElementwiseRow> elementwise;
  std::vector<LaunchRow> launch;
  std::vector<HostRow> host;
  std::vector<CpuRow> cpu;
  std::vector<CollectiveRow> collectives;  // schema 2; empty unless --collectives
  std::vector<P2pRow> p2p;                 // schema 2; empty unless --collectives on >= 2 GPUs
  // schema 3 (issue 38): the op classes between the GEMMs
  std::vector<NormRow> norm;
  std::vector<CastRow> cast;
  std::vector<PointwiseRow> pointwise;
  std::vector<CrossEntropyRow> cross_entropy;
  std::vector<LoraGemmRow> lora_gemm;
  std::vector<AttentionRow> attention;
};

// ---- derived: what the throughput model uses, recomputable from the measurements ------------------

struct GemmEfficiencyPoint {
  double flops = 0;       // 2mnk at this point of the curve (geometric mean of the bin)
  double efficiency = 0;  // (0, 1]: TFLOP/s / peak_measured_tflops, non-decreasing in flops
};

struct GemmEfficiencyCurve {
  std::string dtype;
  double peak_measured_tflops = 0;          // best median over this dtype's GEMM rows
  std::vector<GemmEfficiencyPoint> points;  // strictly increasing flops
};

struct CalDerived {
  std::vector<GemmEfficiencyCurve> gemm_efficiency;
  // The same curves from each row's tflops_heuristic (cuBLAS's first choice: what PyTorch's matmul gets,
  // derive_calibration in calibration.cpp) against the same peak; the step model times GEMMs with these.
  // Recomputed when a file is read, not written to it.
  std::vector<GemmEfficiencyCurve> framework_gemm_efficiency;
  std::optional<double> memory_bandwidth_gbps;  // best copy/triad median: sustained DRAM bandwidth
  std::optional<double> nf4_dequant_gbps;       // fused variant, largest size
  std::optional<double> adamw_fused_gbps;
  std::optional<double> adamw_unfused_gbps;
  std::optional<double> elementwise_gbps;     // median over elementwise rows
  std::optional<double> launch_overhead_us;   // "async" launch median
  std::optional<double> host_op_overhead_us;  // eager pattern, per op
  std::optional<double> cpu_score;
  std::optional<double>
      grouped_over_loop_speedup;  // median over matched expert_gemm rows: loop time / grouped time
  // Op classes between the GEMMs (issue 38; measured by schema-3 files, absent in older ones, where the step
  // model falls back to memory_bandwidth_gbps and the spec path): each a median over its rows at the sizes
  // the op inventory needs (core/predict ops).
  std::optional<double> norm_gbps;             // RMSNorm/LayerNorm forward + backward, bf16 in/out, fp32 math
  std::optional<double> cast_gbps;             // dtype casts bf16 <-> fp32
  std::optional<double> pointwise_gbps;        // binary element-wise (mul, add), bf16
  std::optional<double> cross_entropy_gbps;    // softmax + cross-entropy over vocabulary-wide rows, fwd + bwd
  std::optional<double> attention_fwd_tflops;  // causal flash-style attention forward, bf16, causal FLOPs
  std::optional<double> attention_bwd_tflops;  // its backward
  // LoRA-shaped GEMMs (rank 8-64): median over those rows of roofline time / measured time, the roofline
  // being max(FLOPs / peak_measured, bytes / memory_bandwidth); in (0, 1]. (peak_measured: the bf16 curve's
  // peak_measured_tflops; memory_bandwidth: memory_bandwidth_gbps; null when either is missing, i.e. a run
  // without the gemm or bandwidth family. A value slightly above 1 is possible when a GEMM streams its
  // operands faster than copy/triad do: the loader accepts up to 4.)
  std::optional<double> lora_gemm_roofline_fraction;
};

struct Calibration {
  CalMeta meta;
  CalDevice device;
  CalConditions conditions;
  CalMeasurements measurements;
  CalDerived derived;
};

// ---- functions -----------------------------------------------------------------------------------

// Throttle-reason names used in conditions.throttle_reasons_seen (NVML clock-event reason bits 0..8).
extern const char* const kThrottleReasonNames[9];

// Parses and checks a calibration file: every field's presence, type, range and unit, consistency
// between fields (e.g. time vs rate), unknown keys, the schema version, and that `derived` equals what
// derive_calibration() computes from `measurements`. Errors name the JSON path
// ("measurements.gemm[3].tflops_median: must be > 0 (got -1)"); `source_name` is added to the message.
Result<Calibration> parse_calibration(const std::string& json_text, const std::string& source_name);
Result<Calibration> parse_calibration(const nlohmann::json& doc, const std::string& source_name);

// Like parse_calibration, but `derived` is recomputed from the measurements instead of checked (it may
// be missing or stale): for tools that edit measurements by hand and rewrite the file.
Result<Calibration> parse_calibration_rederive(const nlohmann::json& doc, const std::string& source_name);

// Serializes (numbers round-trip exactly; optional values become null).
nlohmann::json to_json(const Calibration& cal);
std::string to_json_text(const Calibration& cal);  // 2-space indented, trailing newline

// Recomputes `derived` from `measurements` (the calibrator calls this before writing).
CalDerived derive_calibration(const CalMeasurements& m);

// Causal attention FLOPs as FlashAttention-2's benchmark counts them (AttentionRow): forward
// 4 batch heads seq_len^2 head_dim / 2, backward ("bwd") 2.5x the forward.
double attention_causal_flops(const std::string& direction, std::int64_t batch, std::int64_t heads,
                              std::int64_t seq_len, std::int64_t head_dim);

// nccl-tests' bus-bandwidth factor of a collective over `ranks` GPUs (see CollectiveRow); nullopt for an
// unknown op or ranks < 1.
std::optional<double> collective_bus_factor(const std::string& op, int ranks);

// Two figures bound a measurement:
//   vendor peak       the datasheet's dense figure (gpu-db `dense_tflops`, `memory_bandwidth_gbps`): what
//                     NVIDIA promises; real cards can beat it (boost clocks above the datasheet's, GeForce
//                     parts whose datasheet gives the half-rate fp32-accumulate figure)
//   hardware ceiling  what the chip cannot exceed: SMs x the device's maximum SM clock x dense tensor
//                     FLOP per clock per SM of its architecture for the dtype (full-rate accumulate);
//                     memory clock x bus width x 2 (double data rate) for DRAM bandwidth. Computed from
//                     the calibration's own `device` block.
// Dense tensor FLOP per clock per SM (bf16/fp16); tf32 is half, fp8 twice (cc >= 8.9 only). nullopt for
// an architecture not in the table (before Volta's successor, or unknown).
std::optional<double> tensor_flops_per_clock_per_sm(int cc_major, int cc_minor, const std::string& dtype);
std::optional<double> hardware_ceiling_tflops(const CalDevice& d, const std::string& dtype);
std::optional<double> hardware_ceiling_gbps(const CalDevice& d);

// Rejects measurements above the hardware ceiling (+2%) or far above the datasheet (GEMMs 2.1x: a GeForce
// datasheet's half-rate figure is the largest honest gap; bandwidth 1.25x): more than that is a calibration
// of another GPU. A measurement above the vendor peak x 1.05 but within those bounds is accepted and, when
// `above_datasheet` is given, listed there for review ("measurements.gemm[3].tflops_median: 224 TFLOP/s ...
// is above the datasheet's ..."). Without a ceiling (clock, architecture or memory clock unknown) the
// bounds are 2.1x the vendor peak (GEMMs) and the datasheet + 5% (bandwidth). GEMM rows compare with the
// bf16 peak (fp16 the same, tf32 half, fp8 twice); bandwidth-bound rows (copy/triad, and elementwise/NF4/
// AdamW rows moving at least 4x L2) with the bandwidth. A value <= 0 means "unknown": that figure is not
// used.
Status check_against_spec(const Calibration& cal, double peak_bf16_tflops, double bandwidth_gbps,
                          std::vector<std::string>* above_datasheet = nullptr);

// ---- queries for the throughput model -----------------------------------------------------------

// Efficiency at `flops` on the dtype's curve: linear in log(flops) between points; above the last point,
// the last value; below the first, constant time (efficiency proportional to flops). nullopt: no curve.
std::optional<double> gemm_efficiency(const CalDerived& d, const std::string& dtype, double flops);
// Curve efficiency x peak_measured_tflops.
std::optional<double> gemm_tflops(const CalDerived& d, const std::string& dtype, double flops);
// The same on the framework curves (framework_gemm_efficiency): the rate a PyTorch matmul of that size gets.
std::optional<double> framework_gemm_tflops(const CalDerived& d, const std::string& dtype, double flops);
// The measured median of a GEMM row with exactly this dtype, pass and m, n, k (any shape name).
std::optional<double> measured_gemm_tflops(const Calibration& cal, const std::string& dtype,
                                           const std::string& pass, std::int64_t m, std::int64_t n,
                                           std::int64_t k);

}  // namespace ftcost
