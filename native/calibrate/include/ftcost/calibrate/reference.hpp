// CPU references of every benchmarked kernel (host-only, double accumulation). The CUDA side checks its
// results against these before timing anything; unit tests check the references themselves here (known
// values, bitsandbytes tables, finite-difference gradients of the MoE backward).
#pragma once

#include "ftcost/calibrate/hd.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ftcost::calib {

// A generated tensor: element i = hash_value(seed, i, levels, scale).
struct Gen {
  std::uint32_t seed = 1;
  int levels = 127;
  float scale = 1.0f / 128;
  FTCOST_HD float operator()(std::uint64_t i) const { return hash_value(seed, i, levels, scale); }
};

// ---- GEMM: one output element of a linear-layer pass, in row-major semantics -----------------------
// fwd:   Y[t,o]  = sum_i X[t,i]  W[o,i]     output [tokens, out]
// dgrad: dX[t,i] = sum_o dY[t,o] W[o,i]     output [tokens, in]
// wgrad: dW[o,i] = sum_t dY[t,o] X[t,i]     output [out, in]
// with X [tokens,in], W [out,in], dY [tokens,out] row-major. `abs_sum` gets sum |a b| (error scale).
struct LinearProblem {
  std::string pass;
  std::int64_t tokens = 0, in = 0, out = 0;
  Gen x, w, dy;
  std::int64_t out_rows() const;
  std::int64_t out_cols() const;
};
double linear_ref(const LinearProblem& p, std::int64_t row, std::int64_t col, double* abs_sum);

// ---- comparisons -----------------------------------------------------------------------------------
struct Check {
  bool ok = true;
  std::int64_t checked = 0, bad = 0;
  std::int64_t first_bad = -1;
  double got = 0, want = 0, tol = 0;
  double max_rel_err = 0;  // max |got - want| / (|want| + atol) over checked elements
  std::string describe(const std::string& what) const;
};
// |got - want| <= atol + rtol |want| (NaN fails).
Check check_close(const float* got, const float* want, std::int64_t n, double atol, double rtol);
void check_one(Check& c, std::int64_t index, double got, double want, double tol);

// ---- bitsandbytes NF4 with double quantization --------------------------------------------------------
extern const float kNf4Code[16];              // bitsandbytes NF4 code book (index = 4-bit code)
std::vector<float> bnb_dynamic_map_signed();  // create_dynamic_map(signed=True, 7, 8): 256 sorted values

// The generated inputs: packed codes (2 per byte, high nibble first), 8-bit quantized absmax per 64
// values, an fp32 absmax per 256 absmax values, one fp32 offset.
struct Nf4Inputs {
  std::uint32_t seed_packed = 11, seed_qabsmax = 12, seed_absmax2 = 13;
  float offset = 0.0625f;
  FTCOST_HD std::uint8_t packed(std::uint64_t byte) const {
    return static_cast<std::uint8_t>(hash32(seed_packed, byte));
  }
  FTCOST_HD std::uint8_t qabsmax(std::uint64_t block) const {
    return static_cast<std::uint8_t>(hash32(seed_qabsmax, block));
  }
  FTCOST_HD float absmax2(std::uint64_t group) const {
    return 0.01f * (1.0f + hash_unit(seed_absmax2, group));
  }
};
// Element i dequantized: fused = fp32 math then bf16; bnb = bitsandbytes' sequence (absmax to fp32,
// + offset, value in fp16, then cast to bf16).
float nf4_ref(const Nf4Inputs& in, const std::vector<float>& code2, std::int64_t i, bool bnb_sequence);

// ---- AdamW (torch.optim.AdamW, non-fused formula) ------------------------------------------------------
struct AdamwHyper {
  float lr = 1e-3f, beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f, weight_decay = 0.01f;
};
// One step (step >= 1) on one element:
//   p *= 1 - lr wd;  m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2;
//   p -= lr / (1 - b1^step) * m / (sqrt(v) / sqrt(1 - b2^step) + eps)
void adamw_ref(float& p, float g, float& m, float& v, const AdamwHyper& h, int step);

// ---- elementwise --------------------------------------------------------------------------------------
double silu_ref(double x);
double dsilu_ref(double x);
double gelu_tanh_ref(double x);
// RMSNorm as transformers' MistralRMSNorm: y = w * bf16(x * rsqrt(mean(x^2) + eps)), fp32 math.
void rmsnorm_ref(const float* x, const float* w, float* y, std::int64_t n, float eps);

// ---- op classes between the GEMMs (issue 38; op_references.cpp) ----------------------------------------
// RMSNorm backward of y = w * bf16(x * rstd), rstd = 1 / sqrt(mean(x^2) + eps), with the upcast's fp32 math
// (transformers' LlamaRMSNorm; autograd passes the bf16 cast's gradient through unchanged):
//   g = dy * w,  dx = rstd (g - xhat mean(g xhat)),  dw += dy * bf16(xhat)   (dw_row: this row's share)
void rmsnorm_bwd_ref(const float* x, const float* w, const float* dy, double* dx, double* dw_row,
                     std::int64_t n, float eps);

// Softmax cross-entropy of one row of fp32 logits: loss = lse - x[label], lse = log sum exp x;
// d loss / d x_j = (softmax_j - [j == label]) * grad_scale.
struct CeRowRef {
  double loss = 0, lse = 0;
};
CeRowRef cross_entropy_row_ref(const float* logits, std::int64_t vocab, std::int64_t label);
double cross_entropy_grad_ref(double logit, double lse, bool is_label, double grad_scale);
// The benchmark's inputs: logits in [-8, 8], labels hash32 % vocab.
struct CeGens {
  Gen logits{81, 127, 1.0f / 16};
  std::uint32_t label_seed = 82;
  std::int64_t label(std::int64_t row, std::int64_t vocab) const {
    return static_cast<std::int64_t>(hash32(label_seed, static_cast<std::uint64_t>(row)) %
                                     static_cast<std::uint64_t>(vocab));
  }
};

// Causal grouped-query attention, Q [batch, seq, heads, dim], K/V [batch, seq, kv_heads, dim] (query head h
// reads kv head h / (heads / kv_heads)), scale 1/sqrt(dim), double math. Inputs come from the Gens, or from
// the vectors when they are filled (finite-difference tests).
struct AttnProblem {
  int batch = 1, heads = 1, kv_heads = 1, dim = 64;
  std::int64_t seq = 1;
  // q in [-16, 16] makes the softmax peaky (outputs far from zero, so a wrong row cannot pass as a right one)
  Gen gq{71, 127, 1.0f / 8}, gk{72, 127, 1.0f / 128}, gv{73, 127, 1.0f / 128}, gdo{74, 127, 1.0f / 128};
  std::vector<double> q, k, v, dout;  // optional explicit inputs, same layouts
  std::uint64_t index(int b, std::int64_t t, int h, int d, int nh) const {
    return ((static_cast<std::uint64_t>(b) * static_cast<std::uint64_t>(seq) +
             static_cast<std::uint64_t>(t)) *
                static_cast<std::uint64_t>(nh) +
            static_cast<std::uint64_t>(h)) *
               static_cast<std::uint64_t>(dim) +
           static_cast<std::uint64_t>(d);
  }
  double Q(int b, std::int64_t t, int h, int d) const;
  double K(int b, std::int64_t t, int g, int d) const;
  double V(int b, std::int64_t t, int g, int d) const;
  double dO(int b, std::int64_t t, int h, int d) const;
  double scale() const;
  int group() const { return heads / kv_heads; }
};
struct AttnRowRef {
  std::vector<double> out;  // [dim]
  double lse = 0;           // log sum_j exp(scale q_i . k_j), j <= i
  std::vector<double> abs;  // [dim]: sum_j p_ij |v_j|, the scale of the output's rounding errors
};
AttnRowRef attention_fwd_ref(const AttnProblem& p, int b, int h, std::int64_t i);
// dQ row i of head h; `abs` gets sum_j P_ij (|dP_ij| + |D_i|) |k_j| scale per dimension (the size of the
// terms before dP - D cancels: what bf16 rounding of P, dS and O errs relative to).
std::vector<double> attention_dq_ref(const AttnProblem& p, int b, int h, std::int64_t i,
                                     std::vector<double>* abs);
// dK and dV rows j of kv head g (summed over the heads that share it); `abs_*` as above.
struct AttnKvRef {
  std::vector<double> dk, dv, abs_dk, abs_dv;
};
AttnKvRef attention_dkv_ref(const AttnProblem& p, int b, int g, std::int64_t j);

// ---- routing ------------------------------------------------------------------------------------------
// Softmax over `experts` logits, top-k by probability (ties: lower index first), weights renormalized
// over the k chosen (Mixtral). k = experts gives the plain softmax.
void topk_softmax_ref(const float* logits, int experts, int k, int* idx, float* w);

// ---- a whole MoE block (router, top-k, experts with SwiGLU, weighted combine) and its backward -------
struct MoeRefProblem {
  int T = 0, H = 0, F = 0, E = 0, kk = 0;
  std::vector<float> X;     // [T,H]
  std::vector<float> Wg;    // [E,H]
  std::vector<float> W1;    // [E,F,H]
  std::vector<float> W3;    // [E,F,H]
  std::vector<float> W2;    // [E,H,F]
  std::vector<float> dOut;  // [T,H]
};
struct MoeRefRouting {
  std::vector<int> idx;  // [T,kk]
  std::vector<float> w;  // [T,kk]
};
struct MoeRefForward {
  std::vector<float> logits;     // [T,E]
  std::vector<float> H1, H3, A;  // [T*kk, F], row a = t*kk + j
  std::vector<float> Yp;         // [T*kk, H]
  std::vector<float> out;        // [T,H]
};
struct MoeRefBackward {
  std::vector<float> dw;        // [T,kk]
  std::vector<float> dlogits;   // [T,E]
  std::vector<float> dX;        // [T,H]
  std::vector<float> dW1, dW3;  // [E,F,H]
  std::vector<float> dW2;       // [E,H,F]
  std::vector<float> dWg;       // [E,H]
};
// `round` = store intermediates in bf16 where the GPU implementation does (to compare with it);
// false = exact (double-accumulated float) math, e.g. for gradient checks.
std::vector<float> moe_logits_ref(const MoeRefProblem& p, bool round);
MoeRefRouting moe_route_ref(const std::vector<float>& logits, int T, int E, int kk);
MoeRefForward moe_forward_ref(const MoeRefProblem& p, const MoeRefRouting& r, bool round);
MoeRefBackward moe_backward_ref(const MoeRefProblem& p, const MoeRefRouting& r, const MoeRefForward& f,
                                bool round);

// Generators of the MoE benchmark's tensors (shared by the CUDA fill kernels and the references).
struct MoeGens {
  Gen x{101, 127, 1.0f / 128};
  Gen wg{102, 127, 1.0f / 2048};
  Gen w1{103, 127, 1.0f / 2048};
  Gen w3{104, 127, 1.0f / 2048};
  Gen w2{105, 127, 1.0f / 2048};
  Gen dout{106, 127, 1.0f / 128};
};
MoeRefProblem moe_problem(int T, int H, int F, int E, int kk, const MoeGens& g = MoeGens{});

}  // namespace ftcost::calib
