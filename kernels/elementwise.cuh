// Elementwise kernels shared by elementwise.cu (benchmarks) and moe.cu (the MoE layer): bf16 in and
// out, fp32 math, 16-byte vectors with a scalar tail.
#pragma once

#include "common.cuh"

namespace ftcost::calib {

// out = silu(a) * b   (Mixtral's act_fn(w1 x) * w3 x)
void launch_swiglu(const bf16* a, const bf16* b, bf16* out, std::size_t n, cudaStream_t s);
// da = dout * b * silu'(a), db = dout * silu(a)
void launch_swiglu_bwd(const bf16* dout, const bf16* a, const bf16* b, bf16* da, bf16* db, std::size_t n,
                       cudaStream_t s);
// y = gelu_tanh(x)
void launch_gelu(const bf16* x, bf16* y, std::size_t n, cudaStream_t s);
// out = a * b, out = a + b (bf16, fp32 math): the binary element-wise ops of a layer (gate products, residual
// adds)
void launch_mul(const bf16* a, const bf16* b, bf16* out, std::size_t n, cudaStream_t s);
void launch_add(const bf16* a, const bf16* b, bf16* out, std::size_t n, cudaStream_t s);
// y = w * bf16(x * rsqrt(mean(x^2) + eps)) per row (transformers' MistralRMSNorm)
void launch_rmsnorm(const bf16* x, const bf16* w, bf16* y, int rows, int cols, float eps, cudaStream_t s);

}  // namespace ftcost::calib
