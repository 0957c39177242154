// The benchmark families, one .cu each (internal to kernels/).
#pragma once

#include "ftcost/calibrate/bench.hpp"

#include <string>
#include <vector>

namespace ftcost::calib {

void bench_launch(Env& env);       // launch.cu: empty-kernel launches, eager host pattern, CPU score
void bench_host(Env& env);         // launch.cu
void bench_bandwidth(Env& env);    // bandwidth.cu: copy, triad
void bench_elementwise(Env& env);  // elementwise.cu: SwiGLU (+bwd), GELU, RMSNorm
void bench_adamw(Env& env);        // adamw.cu: fused vs 5 passes
void bench_nf4(Env& env);          // nf4.cu: bitsandbytes NF4 with double quant
void bench_gemm(Env& env);         // gemm.cu: cuBLASLt, best heuristic algorithm
void bench_moe(Env& env);          // moe.cu: router, top-k, permute, experts loop vs grouped, unpermute
// the op classes between the GEMMs (issue 38)
void bench_norm(Env& env);           // opclasses.cu: RMSNorm fwd + bwd (LlamaRMSNorm, fp32 math)
void bench_cast(Env& env);           // opclasses.cu: bf16 <-> fp32
void bench_pointwise(Env& env);      // opclasses.cu: mul, add (bf16)
void bench_cross_entropy(Env& env);  // cross_entropy.cu: softmax + cross-entropy over fp32 vocabulary rows
void bench_lora(Env& env);           // gemm.cu: LoRA adapter GEMMs through cuBLASLt
void bench_attention(Env& env);      // attention.cu: causal attention fwd + bwd (own tiled WMMA kernel)

using Report = std::vector<std::string>;
void selftest_bandwidth(Report& r);
void selftest_elementwise(Report& r);
void selftest_adamw(Report& r);
void selftest_nf4(Report& r);
void selftest_gemm(Report& r);
void selftest_moe(Report& r);
void selftest_launch(Report& r);
void selftest_opclasses(Report& r);
void selftest_cross_entropy(Report& r);
void selftest_lora(Report& r);
void selftest_attention(Report& r);

}  // namespace ftcost::calib
