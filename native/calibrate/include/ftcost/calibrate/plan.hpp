// What each mode measures: the benchmark families, their sizes and shapes, and the timing policy.
// Host-only: the CUDA side executes a Plan; tests check plans here without a GPU.
#pragma once

#include "ftcost/calibrate/stats.hpp"
#include "ftcost/error.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ftcost::calib {

enum class Mode { quick, full, smoke };  // smoke: tiny sizes for device tests, not for gpu-db
const char* mode_name(Mode m);

// Benchmark families in run order (names accepted by --only).
const std::vector<std::string>& all_families();
// Validates and de-duplicates an --only list (comma-separated items already split); empty -> all.
Result<std::vector<std::string>> parse_only(const std::vector<std::string>& items);

struct DeviceFacts {
  int cc_major = 0, cc_minor = 0;
  std::uint64_t memory_bytes = 0;  // total device memory
  std::uint64_t l2_bytes = 0;
  int sm_count = 0;
  bool has_fp8() const { return cc_major > 8 || (cc_major == 8 && cc_minor >= 9); }
};

// Mixtral-8x7B (the paper's model): hidden 4096, expert FFN 14336, 8 experts, top-2, vocab 32000,
// 32 query heads / 8 KV heads of 128.
struct MoeModel {
  std::string name = "mixtral-8x7b";
  int hidden = 4096;
  int ffn = 14336;
  int experts = 8;
  int top_k = 2;
  int vocab = 32000;
  int q_out = 4096;
  int kv_out = 1024;
};

struct GemmSpec {
  std::string shape;                         // "square" | "mixtral-8x7b.q" ...
  std::string dtype;                         // bf16 | fp16 | tf32 | fp8_e4m3
  std::string pass;                          // fwd | dgrad | wgrad
  std::int64_t tokens = 0, in = 0, out = 0;  // the linear layer y[tokens,out] = x[tokens,in] W[out,in]^T
  // cuBLAS column-major view (see calibration.hpp)
  char transa = 'T', transb = 'N';
  // fp8 only: CUBLASLT_MATMUL_DESC_FAST_ACCUM (Transformer Engine sets it for the forward GEMMs:
  // transformer_engine/pytorch/module/linear.py, fp8_gemm(..., use_split_accumulator=False) in fwd)
  bool fast_accum = false;
  std::int64_t m = 0, n = 0, k = 0;
  double flops() const {
    return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  }
  std::string label() const;
  GemmRow row() const;  // a calibration row naming this GEMM (shape, dtype, pass, layout); no timings
};
// Fills transa/transb/m/n/k from pass, tokens, in, out.
GemmSpec make_gemm(const std::string& shape, const std::string& dtype, const std::string& pass,
                   std::int64_t tokens, std::int64_t in, std::int64_t out);
std::size_t dtype_bytes(const std::string& dtype);      // A/B element size
std::size_t dtype_out_bytes(const std::string& dtype);  // C/D element size (fp8 -> bf16 output)

struct MoeSpec {
  MoeModel model;
  std::int64_t tokens = 0;
  std::string routing;       // sparse | dense
  std::string distribution;  // uniform | mixtral_he_tuned | mixtral_gs_tuned | skewed
  int active() const { return routing == "dense" ? model.experts : model.top_k; }
  std::string label() const;
  std::uint64_t bytes_needed() const;  // device memory of one forward + backward at this size
};

// ---- the op classes between the GEMMs (issue 38) ----
// Shapes of Llama-3-8B (hidden 4096, FFN 14336, vocab 128256, 32 query / 8 KV heads of 128) and Qwen2.5-7B
// (hidden 3584, vocab 152064, 28 / 4 heads of 128): gpu-db/models/llama-3.1-8b.json, qwen2.5-7b.json.
struct NormSpec {
  std::int64_t rows = 0, cols = 0;
};
struct PointwiseSpec {
  std::string op;  // mul | add
  std::int64_t elements = 0;
};
struct CrossEntropySpec {
  std::int64_t rows = 0, vocab = 0;
};
struct LoraSpec {
  GemmSpec gemm;     // the adapter GEMM as a linear layer (tokens, in, out) and its pass
  std::string side;  // A (in -> rank) | B (rank -> out)
  int rank = 0;
  std::uint64_t bytes_moved() const;  // 2 (m k + k n + m n)
};
struct AttentionSpec {
  std::string model;
  int batch = 0, heads = 0, kv_heads = 0, head_dim = 0;
  std::int64_t seq_len = 0;
  std::string label() const;
  std::uint64_t bytes_needed() const;  // Q, K, V, O, dO, dQ (fp32 accumulator and bf16), dK, dV, LSE, D
};

struct Plan {
  Mode mode = Mode::quick;
  std::vector<std::string> families;  // to run, in order
  TimingPolicy timing;
  int gemm_algo_candidates = 4;  // cuBLASLt heuristic results timed per shape
  int gemm_samples = 128;        // output elements checked against the CPU per GEMM
  std::vector<std::uint64_t> bandwidth_array_bytes;
  std::vector<GemmSpec> gemm;
  std::vector<MoeSpec> moe;
  std::vector<std::int64_t> nf4_elements;
  std::vector<std::int64_t> adamw_params;
  std::vector<std::int64_t> elementwise_tokens;  // rows; widths from the Mixtral model
  MoeModel model;
  std::vector<NormSpec> norm;               // each: fwd and bwd
  std::vector<std::int64_t> cast_elements;  // each: bf16 -> fp32 and fp32 -> bf16
  std::vector<PointwiseSpec> pointwise;
  std::vector<CrossEntropySpec> cross_entropy;  // each: fwd and bwd
  std::vector<LoraSpec> lora;
  std::vector<AttentionSpec> attention;  // each: fwd and bwd
  int launch_per_sample = 1000;
  int eager_ops_per_sample = 512;
  int eager_sync_every = 32;

  bool runs(const std::string& family) const;
  int items(const std::string& family) const;                // measurements (progress steps)
  double estimate_seconds(const std::string& family) const;  // rough, for the ETA
  double estimate_seconds() const;
  std::vector<std::string> notes;  // sizes dropped for lack of memory, fp8 unsupported, ...
};

Plan make_plan(Mode mode, const DeviceFacts& dev, const std::vector<std::string>& only);

}  // namespace ftcost::calib
