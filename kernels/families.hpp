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

using Report = std::vector<std::string>;
void selftest_bandwidth(Report& r);
void selftest_elementwise(Report& r);
void selftest_adamw(Report& r);
void selftest_nf4(Report& r);
void selftest_gemm(Report& r);
void selftest_moe(Report& r);
void selftest_launch(Report& r);

}  // namespace ftcost::calib
