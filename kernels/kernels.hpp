// Entry points of the CUDA benchmark families (plain C++ declarations: main.cpp and the device tests
// include this without CUDA headers). Each family appends rows to env.rows() and checks its kernels
// against their CPU references before timing them.
#pragma once

#include "ftcost/calibrate/bench.hpp"

#include <string>
#include <vector>

namespace ftcost::calib {

// Creates the stream, cuBLAS/cuBLASLt handles, workspace and the L2 flush buffer on `device`;
// shutdown() releases them. Throws DeviceError.
void gpu_init(int device);
void gpu_shutdown();

// Runs one family ("launch", "host", "bandwidth", "elementwise", "adamw", "nf4", "gemm", "moe", "norm",
// "cast", "pointwise", "cross_entropy", "lora", "attention").
void run_family(const std::string& family, Env& env);

// Correctness checks of every kernel at small and odd sizes (device tests). Returns one line per
// check ("ok: ..." or "FAILED: ...").
std::vector<std::string> self_test();

}  // namespace ftcost::calib
