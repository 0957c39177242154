// The field lists of the calibration file format (ftcost.calibration/1; fields.hpp), the largest of the
// database formats: its header, device, conditions, every measurement row kind and the derived rates.
#include "fields_build.hpp"
#include "ftcost/calibration.hpp"

#include <utility>

namespace ftcost::field_build {

namespace {

// ---------------------------------------------------------------------------------------- calibration
// The sections that describe the run (meta, device, conditions); read by calibration.cpp's reader, written
// in this order by its writer, and checked against gpu-db/schema/calibration.schema.json.

Field text(const char* key, const char* help) {
  Field x = req(f(key, K::string, help));
  x.min_length = 1;
  x.max_length = 4096;
  return x;
}

FieldList calibration_meta_list() {
  Field only = req(array("only", K::choice, 0, "Benchmark families run (empty: all)."));
  only.values = {"launch", "host", "bandwidth", "elementwise", "adamw",         "nf4",  "gemm",
                 "moe",    "norm", "cast",      "pointwise",   "cross_entropy", "lora", "attention"};
  Field notes = req(array("notes", K::string, 0, "Warnings and failures recorded during the run."));
  return {
      "calibration.meta",
      kCalibrationSchema,
      {
          req(choice("schema", {kCalibrationSchema, kCalibrationSchemaV2, kCalibrationSchemaV1},
                     "Format identifier and version.")),
          text("tool", "The program that wrote the file."),
          text("tool_version", "Its version."),
          text("git_revision", "Source revision of the tool."),
          req(f("git_dirty", K::boolean, "Whether the tool's sources had uncommitted changes.")),
          req(f("created_utc", K::string, "When the run ended, YYYY-MM-DDTHH:MM:SSZ.")),
          text("command_line", "How the tool was run."),
          req(choice("mode", {"quick", "full", "smoke"}, "How thorough the run was.")),
          only,
          req(f("partial", K::boolean, "Whether some measurements were dropped or the run stopped early.")),
          req(range(f("duration_s", K::number, "Wall time of the run."), 0, 1e7, "s")),
          notes,
      }};
}

FieldList calibration_device_list() {
  auto clock = [](const char* key, const char* help) {
    return null_ok(req(above(f(key, K::number, help), 0, 20000, "MHz")));
  };
  return {
      "calibration.device",
      kCalibrationSchema,
      {
          text("name", "Device name as the driver reports it."),
          null_ok(
              req(f("pci_device_id", K::string, "PCI device id \"0x\" + 4 hex digits; null if unknown."))),
          req(f("uuid_hash", K::string, "sha256 of the device UUID (never the UUID itself).")),
          req(f("compute_capability", K::string, "CUDA compute capability major.minor.")),
          req(range(f("sm_count", K::integer, "Streaming multiprocessors."), 1, 100000, "")),
          req(range(f("memory_bytes", K::integer, "Device memory."), 1, 4503599627370496.0, "bytes")),
          req(range(f("memory_bus_width_bits", K::integer, "Memory bus width."), 0, 1048576, "bits")),
          req(range(f("l2_cache_bytes", K::integer, "L2 cache size."), 0, 1099511627776.0, "bytes")),
          clock("sm_clock_max_mhz", "Maximum SM clock; null if unknown."),
          clock("memory_clock_max_mhz", "Maximum memory clock; null if unknown."),
          null_ok(req(range(f("power_limit_w", K::number, "Power limit; null if unknown."), 0, 5000, "W"))),
          text("driver_version", "NVIDIA driver version."),
          text("cuda_runtime_version", "CUDA runtime version."),
          text("cublas_version", "cuBLAS version."),
          text("host_cpu", "Host CPU model."),
      }};
}

FieldList calibration_sample_list() {
  return {"calibration.conditions.sample",
          kCalibrationSchema,
          {
              null_ok(req(above(f("sm_clock_mhz", K::number, "SM clock."), 0, 20000, "MHz"))),
              null_ok(req(above(f("memory_clock_mhz", K::number, "Memory clock."), 0, 20000, "MHz"))),
              null_ok(req(range(f("temperature_c", K::number, "GPU temperature."), -50, 150, "degC"))),
              null_ok(req(range(f("power_w", K::number, "Board power."), 0, 5000, "W"))),
          }};
}

FieldList calibration_conditions_list() {
  Field reasons = req(array("throttle_reasons_seen", K::choice, 0, "NVML clock throttle reasons seen."));
  for (const char* r : kThrottleReasonNames) reasons.values.emplace_back(r);
  return {
      "calibration.conditions",
      kCalibrationSchema,
      {
          req(f("nvml", K::boolean, "Whether NVML readings were available.")),
          req(object("start", "calibration.conditions.sample", "Readings at the start of the run.")),
          req(object("end", "calibration.conditions.sample", "Readings at the end of the run.")),
          null_ok(req(above(f("sm_clock_min_mhz", K::number, "Lowest SM clock seen."), 0, 20000, "MHz"))),
          null_ok(req(above(f("sm_clock_max_mhz", K::number, "Highest SM clock seen."), 0, 20000, "MHz"))),
          null_ok(
              req(range(f("temperature_max_c", K::number, "Highest temperature seen."), -50, 150, "degC"))),
          null_ok(req(range(f("power_max_w", K::number, "Highest board power seen."), 0, 5000, "W"))),
          reasons,
          null_ok(req(range(f("other_processes", K::integer, "Other processes on the GPU; null if unknown."),
                            0, 100000, ""))),
      }};
}

// The measurement rows (one list per benchmark family; a rate or time given as median/p10/p90 is three
// fields). Authored from calibration.schema.json's descriptions; the ranges are the reader's.
const char* const kSee = "See calibration.schema.json.";

Field length(Field x, std::size_t lo, std::size_t hi) {
  x.min_length = lo;
  x.max_length = hi;
  return x;
}

// The column shapes the rows repeat: a required string name, a count, a byte size, a rate or a time.
Field name(const char* key, const char* help) { return req(length(f(key, K::string, help), 1, 4096)); }
Field count(const char* key, const char* help, double hi) {
  return req(range(f(key, K::integer, help), 1, hi, ""));
}
Field bytes(const char* key, const char* help) {
  return req(range(f(key, K::integer, help), 1, 4503599627370496.0, "bytes"));
}
Field positive(const char* key, const char* help, double hi, const char* unit) {
  return req(above(f(key, K::number, help), 0, hi, unit));
}
Field gbps(const char* key, const char* help) { return positive(key, help, 200000, "GB/s"); }
Field tflops(const char* key, const char* help) { return positive(key, help, 20000, "TFLOP/s"); }
Field time_us(const char* key, const char* help) { return positive(key, help, 10000000000.0, "us"); }
Field iterations() { return count("iterations", "timed samples after warm-up.", 100000000); }

std::vector<Field> joined(std::vector<Field> head, const std::vector<Field>& tail) {
  head.insert(head.end(), tail.begin(), tail.end());
  return head;
}

// The GB/s statistic, median time and sample count that end the schema-1 bandwidth rows after their
// bytes_moved (nf4_dequant, adamw, elementwise).
std::vector<Field> with_rate_tail(std::vector<Field> head) {
  return joined(
      std::move(head),
      {gbps("gbps_median", "median over the timed samples, GB/s."),
       gbps("gbps_p10", "10th percentile, GB/s (for a rate: the rate of the slow samples); <= median."),
       gbps("gbps_p90", "90th percentile, GB/s; >= median."), time_us("time_us_median", kSee), iterations()});
}

// The microseconds statistic of the MoE rows (expert_gemm, moe_layer).
std::vector<Field> time_us_stat() {
  return {time_us("time_us_median", "median over the timed samples, microseconds."),
          time_us("time_us_p10",
                  "10th percentile, microseconds (for a rate: the rate of the slow samples); <= median."),
          time_us("time_us_p90", "90th percentile, microseconds; >= median.")};
}

FieldList cal_bandwidth_list() {
  return {"calibration.measurements.bandwidth[]",
          kCalibrationSchema,
          {
              req(choice("kernel", {"copy", "triad"},
                         "copy: b = a; triad: a = b + s c (fp32, 16-byte vectors).")),
              bytes("array_bytes", "bytes."),
              bytes("bytes_moved", "per run: 2 x array_bytes (copy), 3 x (triad)."),
              gbps("gbps_median", "median over the timed samples, GB/s (1e9 B/s)."),
              gbps("gbps_p10",
                   "10th percentile, GB/s (1e9 B/s) (for a rate: the rate of the slow samples); <= median."),
              gbps("gbps_p90", "90th percentile, GB/s (1e9 B/s); >= median."),
              time_us("time_us_median", kSee),
              iterations(),
          }};
}

FieldList cal_gemm_list() {
  return {
      "calibration.measurements.gemm[]",
      kCalibrationSchema,
      {
          name("shape", "\"square\" or <model>.<layer>."),
          req(choice("dtype", {"bf16", "fp16", "tf32", "fp8_e4m3"}, kSee)),
          req(choice("pass", {"fwd", "dgrad", "wgrad"}, "fwd: TN, dgrad: NN, wgrad: NT.")),
          req(choice("transa", {"N", "T"}, kSee)),
          req(choice("transb", {"N", "T"}, kSee)),
          count("m", kSee, 2147483647),
          count("n", kSee, 2147483647),
          count("k", kSee, 2147483647),
          tflops("tflops_median", "median over the timed samples, TFLOP/s (2mnk / time)."),
          tflops(
              "tflops_p10",
              "10th percentile, TFLOP/s (2mnk / time) (for a rate: the rate of the slow samples); <= ...."),
          tflops("tflops_p90", "90th percentile, TFLOP/s (2mnk / time); >= median."),
          time_us("time_us_median", kSee),
          iterations(),
          count("algos_tried", "cuBLASLt heuristic candidates timed; the best is recorded.", 1024),
          null_ok(tflops("tflops_heuristic", "(schema 2: timed under the same policy as tflops_median).")),
          null_ok(
              f("fast_accum", K::boolean,
                "fp8 only: CUBLASLT_MATMUL_DESC_FAST_ACCUM on (Transformer Engine's forward GEMMs); ....")),
      }};
}

// The routing columns that expert_gemm and moe_layer rows share, in the files' order, after `head`.
std::vector<Field> with_routing(std::vector<Field> head, const char* impl_help) {
  return joined(
      std::move(head),
      {req(choice("impl", {"loop", "grouped"}, impl_help)), req(choice("routing", {"sparse", "dense"}, kSee)),
       req(choice("distribution", {"uniform", "mixtral_he_tuned", "mixtral_gs_tuned", "skewed"},
                  "expert-load distribution: uniform; the paper's Fig.")),
       count("experts", kSee, 4096), count("top_k", kSee, 4096), count("tokens", kSee, 2147483647)});
}

FieldList cal_expert_gemm_list() {
  std::vector<Field> head = with_routing(
      {name("model", kSee), req(choice("dtype", {"bf16", "fp16"}, kSee)),
       req(choice("proj", {"w1_w3", "w2"}, kSee)), req(choice("pass", {"fwd", "dgrad", "wgrad"}, kSee))},
      "loop: cublasGemmEx per expert; grouped: one cublasGemmGroupedBatchedEx.");
  return {"calibration.measurements.expert_gemm[]", kCalibrationSchema,
          joined(joined(std::move(head),
                        {count("n", kSee, 2147483647), count("k", kSee, 2147483647),
                         req(array("tokens_per_expert", K::integer, 0, "sums to tokens x top_k."))}),
                 joined(time_us_stat(), {tflops("tflops_median", kSee), iterations()}))};
}

FieldList cal_moe_layer_stages_us_list() {
  auto stage = [](const char* key) { return range(f(key, K::number, kSee), 0, 10000000000.0, ""); };
  return {"calibration.measurements.moe_layer[].stages_us",
          kCalibrationSchema,
          {stage("router"), stage("topk"), stage("permute"), stage("experts"), stage("unpermute"),
           stage("experts_dgrad"), stage("experts_wgrad")}};
}

FieldList cal_moe_layer_list() {
  std::vector<Field> head =
      with_routing({name("model", kSee), req(choice("direction", {"forward", "backward"}, kSee))}, kSee);
  return {
      "calibration.measurements.moe_layer[]", kCalibrationSchema,
      joined(joined(std::move(head), {count("hidden", kSee, 2147483647), count("ffn", kSee, 2147483647)}),
             joined(time_us_stat(),
                    {iterations(), req(object("stages_us", "calibration.measurements.moe_layer[].stages_us",
                                              "median microseconds per stage; forward: router, topk, "
                                              "permute, experts, unpermute; ...."))}))};
}

FieldList cal_nf4_dequant_list() {
  return {"calibration.measurements.nf4_dequant[]", kCalibrationSchema,
          with_rate_tail({req(choice("variant", {"fused", "bnb"}, kSee)),
                          req(range(f("elements", K::integer, kSee), 64, 1099511627776.0, "")),
                          req(choice("out_dtype", {"bf16", "fp16"}, kSee)),
                          req(f("double_quant", K::boolean, kSee)), bytes("bytes_moved", "bytes."),
                          positive("bytes_per_param", kSee, 64, "")})};
}

FieldList cal_adamw_list() {
  return {
      "calibration.measurements.adamw[]", kCalibrationSchema,
      with_rate_tail({req(choice("impl", {"fused", "unfused"}, kSee)), count("params", kSee, 1099511627776.0),
                      bytes("bytes_moved", "bytes."), positive("bytes_per_param", kSee, 256, "")})};
}

FieldList cal_elementwise_list() {
  return {"calibration.measurements.elementwise[]", kCalibrationSchema,
          with_rate_tail({req(choice("op", {"swiglu", "swiglu_bwd", "gelu", "rmsnorm"}, kSee)),
                          req(choice("dtype", {"bf16", "fp16", "fp32"}, kSee)),
                          count("elements", kSee, 1099511627776.0), bytes("bytes_moved", "bytes.")})};
}

// A per-launch, per-op or score statistic (median, p10, p90), then the sample count.
struct Stat {
  const char* prefix;
  const char* median_help;
  const char* p10_help;
  const char* p90_help;
  double hi;
  const char* unit;
};
std::vector<Field> with_stat(std::vector<Field> head, const Stat& s) {
  auto column = [&s](const char* which, const char* help) {
    Field x = positive("", help, s.hi, s.unit);
    x.key = std::string(s.prefix) + which;
    return x;
  };
  return joined(std::move(head), {column("_median", s.median_help), column("_p10", s.p10_help),
                                  column("_p90", s.p90_help), iterations()});
}

FieldList cal_launch_list() {
  return {
      "calibration.measurements.launch[]", kCalibrationSchema,
      with_stat({req(choice("kind", {"async", "sync"}, kSee))},
                {"us", "median over the timed samples, microseconds per launch.",
                 "10th percentile, microseconds per launch (for a rate: the rate of the slow samples); ....",
                 "90th percentile, microseconds per launch; >= median.", 10000000, "us"})};
}

FieldList cal_host_list() {
  return {"calibration.measurements.host[]", kCalibrationSchema,
          with_stat({req(choice("kind", {"eager_op"}, kSee)), count("ops_per_sample", kSee, 100000000),
                     count("sync_every", kSee, 100000000)},
                    {"us", "median over the timed samples, microseconds per op.",
                     "10th percentile, microseconds per op (for a rate: the rate of the slow samples); "
                     "<= median.",
                     "90th percentile, microseconds per op; >= median.", 10000000, "us"})};
}

FieldList cal_cpu_list() {
  return {"calibration.measurements.cpu[]", kCalibrationSchema,
          with_stat({req(choice("kind", {"single_thread"}, kSee))},
                    {"score", "median over the timed samples, work units per millisecond.",
                     "10th percentile, work units per millisecond (for a rate: the rate of the slow ....",
                     "90th percentile, work units per millisecond; >= median.", 1000000000, ""})};
}

FieldList cal_collectives_list() {
  return {
      "calibration.measurements.collectives[]",
      kCalibrationSchema,
      {
          req(choice("op", {"all_reduce", "all_gather", "reduce_scatter", "all_to_all", "send_recv"}, kSee)),
          req(range(f("ranks", K::integer, "GPUs in the communicator."), 2, 1048576, "")),
          bytes("bytes", "nccl-tests' size: max(send, receive) bytes per rank."),
          time_us("time_us", "one operation, microseconds."),
          gbps("algbw_gbps", "bytes / time (1e9 B/s)."),
          gbps("busbw_gbps",
               "algbw x 2(n-1)/n (all_reduce), (n-1)/n (all_gather, reduce_scatter, all_to_all), 1 ...."),
      }};
}

FieldList cal_p2p_list() {
  return {"calibration.measurements.p2p[]",
          kCalibrationSchema,
          {
              req(range(f("src", K::integer, kSee), 0, 4096, "")),
              req(range(f("dst", K::integer, kSee), 0, 4096, "")),
              req(f("peer_access", K::boolean, "cudaDeviceCanAccessPeer: direct NVLink/PCIe peer copies.")),
              bytes("bytes", kSee),
              time_us("time_us", "microseconds."),
              gbps("gbps", "bytes / time (1e9 B/s)."),
          }};
}

// ---- schema 3: the op classes between the GEMMs (issue 38) ----
// The rate columns every bandwidth-type row of schema 3 ends with.
std::vector<Field> with_gbps_tail(std::vector<Field> head, const char* bytes_help) {
  return joined(std::move(head),
                {bytes("bytes_moved", bytes_help),
                 gbps("gbps_median", "median over the timed samples, GB/s (bytes_moved / time)."),
                 gbps("gbps_p10", "10th percentile (the rate of the slow samples); <= median."),
                 gbps("gbps_p90", "90th percentile; >= median."),
                 time_us("time_us_median", "median time of one run."), iterations()});
}

FieldList cal_norm_list() {
  return {"calibration.measurements.norm[]", kCalibrationSchema,
          with_gbps_tail({req(choice("op", {"rmsnorm"}, "transformers' LlamaRMSNorm (fp32 math).")),
                          req(choice("direction", {"fwd", "bwd"}, "forward, or backward (dx and dweight).")),
                          req(choice("dtype", {"bf16"}, "activations and weight; the math is fp32.")),
                          count("rows", "tokens.", 2147483647), count("cols", "hidden size.", 2147483647)},
                         "fwd: 2 (2 rows cols + cols); bwd: 2 (3 rows cols + 2 cols).")};
}

FieldList cal_cast_list() {
  return {"calibration.measurements.cast[]", kCalibrationSchema,
          with_gbps_tail({req(choice("src_dtype", {"bf16", "fp32"}, "dtype read.")),
                          req(choice("dst_dtype", {"bf16", "fp32"}, "dtype written (the other one).")),
                          count("elements", "elements cast.", 1099511627776.0)},
                         "elements x 6.")};
}

FieldList cal_pointwise_list() {
  return {"calibration.measurements.pointwise[]", kCalibrationSchema,
          with_gbps_tail({req(choice("op", {"mul", "add"}, "c = a * b or c = a + b, fp32 math.")),
                          req(choice("dtype", {"bf16"}, "a, b and c.")),
                          count("elements", "elements of c.", 1099511627776.0)},
                         "elements x 6 (two inputs and the output, 2 bytes each).")};
}

FieldList cal_cross_entropy_list() {
  return {
      "calibration.measurements.cross_entropy[]", kCalibrationSchema,
      with_gbps_tail({req(choice("direction", {"fwd", "bwd"}, "loss and log-sum-exp per row, or dlogits.")),
                      req(choice("logits_dtype", {"fp32"}, "transformers' loss upcasts the logits.")),
                      count("rows", "tokens.", 2147483647), count("vocab", "columns.", 2147483647)},
                     "fwd: 4 rows vocab + 16 rows; bwd: 8 rows vocab + 12 rows.")};
}

FieldList cal_lora_gemm_list() {
  return {"calibration.measurements.lora_gemm[]",
          kCalibrationSchema,
          {
              name("shape", "the base layer, <model>.<layer>."),
              req(choice("side", {"A", "B"}, "A: in -> rank; B: rank -> out.")),
              count("rank", "LoRA rank r.", 65536),
              req(choice("dtype", {"bf16"}, "operands and output; fp32 accumulation.")),
              req(choice("pass", {"fwd", "dgrad", "wgrad"}, "fwd: TN, dgrad: NN, wgrad: NT.")),
              req(choice("transa", {"N", "T"}, "cuBLAS's op(A).")),
              req(choice("transb", {"N", "T"}, "cuBLAS's op(B).")),
              count("tokens", "rows of x.", 2147483647),
              count("in", "in features of this GEMM's linear.", 2147483647),
              count("out", "out features of this GEMM's linear.", 2147483647),
              count("m", "cuBLAS m.", 2147483647),
              count("n", "cuBLAS n.", 2147483647),
              count("k", "cuBLAS k.", 2147483647),
              bytes("bytes_moved", "2 (m k + k n + m n)."),
              tflops("tflops_median", "median over the timed samples, TFLOP/s (2mnk / time)."),
              tflops("tflops_p10", "10th percentile (the rate of the slow samples); <= median."),
              tflops("tflops_p90", "90th percentile; >= median."),
              time_us("time_us_median", "median time of one run."),
              iterations(),
              count("algos_tried", "cuBLASLt heuristic candidates timed; the best is recorded.", 1024),
          }};
}

FieldList cal_attention_list() {
  return {
      "calibration.measurements.attention[]",
      kCalibrationSchema,
      {
          req(choice("direction", {"fwd", "bwd"}, "forward, or backward (dQ, dK, dV).")),
          name("impl", "the kernel measured (the calibrator's own or a library's)."),
          req(choice("dtype", {"bf16"}, "Q, K, V, O and the gradients; fp32 softmax and accumulation.")),
          req(f("causal", K::boolean, "causal mask (true: the only kind measured).")),
          name("model", "where the shape comes from."),
          count("batch", "sequences.", 1048576),
          count("heads", "query heads.", 4096),
          count("kv_heads", "key/value heads; divides heads.", 4096),
          count("head_dim", "dimension per head.", 1024),
          count("seq_len", "tokens per sequence.", 2147483647),
          positive("flops", "causal FLOPs: fwd 2 batch heads seq_len^2 head_dim, bwd 2.5x.", 1e21, "FLOP"),
          tflops("tflops_median", "median over the timed samples, TFLOP/s (flops / time)."),
          tflops("tflops_p10", "10th percentile (the rate of the slow samples); <= median."),
          tflops("tflops_p90", "90th percentile; >= median."),
          time_us("time_us_median", "median time of one run."),
          iterations(),
      }};
}

FieldList cal_measurements_list() {
  auto rows = [](const char* key, const char* help) {
    Field x = array(key, K::object, 0, help);
    x.members = std::string("calibration.measurements.") + key + "[]";
    return x;
  };
  return {
      "calibration.measurements",
      kCalibrationSchema,
      {
          req(rows("bandwidth", "STREAM-style DRAM bandwidth, arrays >= 4x L2.")),
          req(rows("gemm",
                   "cuBLASLt matmuls; m, n, k in cuBLAS's column-major view (see docs/calibrate.md).")),
          req(rows("expert_gemm", "the expert GEMMs of one MoE layer pass.")),
          req(rows("moe_layer", "a whole MoE block.")),
          req(rows("nf4_dequant",
                   "bitsandbytes NF4 dequantization (64-value blocks, double-quantized absmax).")),
          req(rows("adamw", "one AdamW step over fp32 states.")),
          req(rows("elementwise", "memory-bound elementwise kernels.")),
          req(rows("launch", "empty-kernel launch overhead.")),
          req(rows("host", "eager pattern: host work + a small kernel per op, a host sync every few ops.")),
          req(rows("cpu", "single-thread CPU score.")),
          null_ok(
              rows("collectives",
                   "NCCL collectives as nccl-tests reports them (doc/PERFORMANCE.md, src/*.cu GetBw); ....")),
          null_ok(rows(
              "p2p",
              "GPU-to-GPU copies (cudaMemcpyPeerAsync), one direction; --collectives in one process ....")),
          // schema 3 (issue 38): absent in older files
          null_ok(rows("norm", "RMSNorm forward and backward (LlamaRMSNorm, fp32 math).")),
          null_ok(rows("cast", "dtype casts bf16 <-> fp32.")),
          null_ok(rows("pointwise", "binary element-wise mul and add, bf16.")),
          null_ok(rows("cross_entropy", "softmax + cross-entropy over vocabulary-wide fp32 rows.")),
          null_ok(rows("lora_gemm", "LoRA-shaped GEMMs (rank 8-64) through cuBLASLt.")),
          null_ok(rows("attention", "causal flash-style attention forward and backward.")),
      }};
}

// The derived block (recomputed from the measurements on load and compared) and the file's top level.
FieldList cal_derived_list() {
  auto rate = [](const char* key, double hi, const char* unit, const char* help) {
    return req(null_ok(above(f(key, K::number, help), 0, hi, unit)));
  };
  auto opt_rate = [](const char* key, double hi, const char* unit, const char* help) {
    return null_ok(above(f(key, K::number, help), 0, hi, unit));
  };
  return {"calibration.derived",
          kCalibrationSchema,
          {
              req(array("gemm_efficiency", K::object, 0, "Per GEMM dtype: efficiency against 2mnk.",
                        "calibration.derived.gemm_efficiency[]")),
              rate("memory_bandwidth_gbps", 200000, "GB/s", "Best triad bandwidth (median)."),
              rate("nf4_dequant_gbps", 200000, "GB/s", "NF4 dequantization bandwidth."),
              rate("adamw_fused_gbps", 200000, "GB/s", "Fused AdamW bandwidth."),
              rate("adamw_unfused_gbps", 200000, "GB/s", "Unfused AdamW bandwidth."),
              rate("elementwise_gbps", 200000, "GB/s", "Elementwise kernel bandwidth."),
              rate("launch_overhead_us", 1e7, "us", "Kernel launch overhead."),
              rate("host_op_overhead_us", 1e7, "us", "Host overhead per eager op."),
              rate("cpu_score", 1e9, "", "Single-thread CPU score."),
              rate("grouped_over_loop_speedup", 1e6, "", "Grouped over loop expert GEMM speed-up."),
              // schema 3 (issue 38): absent in older files
              opt_rate("norm_gbps", 200000, "GB/s", "RMSNorm fwd + bwd bandwidth (median over rows)."),
              opt_rate("cast_gbps", 200000, "GB/s", "bf16 <-> fp32 cast bandwidth (median over rows)."),
              opt_rate("pointwise_gbps", 200000, "GB/s", "Binary element-wise bandwidth (median over rows)."),
              opt_rate("cross_entropy_gbps", 200000, "GB/s", "Softmax + cross-entropy bandwidth (median)."),
              opt_rate("attention_fwd_tflops", 20000, "TFLOP/s", "Causal attention forward (median)."),
              opt_rate("attention_bwd_tflops", 20000, "TFLOP/s", "Causal attention backward (median)."),
              opt_rate("lora_gemm_roofline_fraction", 4, "",
                       "LoRA GEMMs: roofline time / measured time (median)."),
          }};
}

FieldList cal_curve_list() {
  return {"calibration.derived.gemm_efficiency[]",
          kCalibrationSchema,
          {
              req(choice("dtype", {"bf16", "fp16", "tf32", "fp8_e4m3"}, "GEMM dtype of the curve.")),
              req(above(f("peak_measured_tflops", K::number, "Best median TFLOP/s measured."), 0, 20000,
                        "TFLOP/s")),
              req(array("points", K::object, 0, "One point per octave of 2mnk.",
                        "calibration.derived.gemm_efficiency[].points[]")),
          }};
}

FieldList cal_point_list() {
  Field flops = req(f("flops", K::number, "2mnk of the point."));
  flops.min = 0;
  flops.min_exclusive = true;
  return {
      "calibration.derived.gemm_efficiency[].points[]",
      kCalibrationSchema,
      {flops, req(above(f("efficiency", K::number, "Median TFLOP/s / peak_measured_tflops."), 0, 1, ""))}};
}

FieldList calibration_list() {
  return {"calibration",
          kCalibrationSchema,
          {
              req(object("meta", "calibration.meta", "The run: tool, version, mode, duration, notes.")),
              req(object("device", "calibration.device", "The GPU measured.")),
              req(object("conditions", "calibration.conditions",
                         "Clocks, temperature and power during the run.")),
              req(object("measurements", "calibration.measurements", "The benchmark rows.")),
              req(object("derived", "calibration.derived", "Values derived from the measurements.")),
          }};
}

}  // namespace

std::vector<FieldList> calibration_field_lists() {
  return {calibration_meta_list(),
          calibration_device_list(),
          calibration_sample_list(),
          calibration_conditions_list(),
          cal_bandwidth_list(),
          cal_gemm_list(),
          cal_expert_gemm_list(),
          cal_moe_layer_stages_us_list(),
          cal_moe_layer_list(),
          cal_nf4_dequant_list(),
          cal_adamw_list(),
          cal_elementwise_list(),
          cal_launch_list(),
          cal_host_list(),
          cal_cpu_list(),
          cal_collectives_list(),
          cal_p2p_list(),
          cal_norm_list(),
          cal_cast_list(),
          cal_pointwise_list(),
          cal_cross_entropy_list(),
          cal_lora_gemm_list(),
          cal_attention_list(),
          cal_measurements_list(),
          cal_derived_list(),
          cal_curve_list(),
          cal_point_list(),
          calibration_list()};
}

}  // namespace ftcost::field_build
