// The CUDA libraries the calibrator loads at run time (see cuda_libs.cpp). Plain C++.
#pragma once

#include <string>
#include <vector>

namespace ftcost::calib {

// Loads cuBLAS + cuBLASLt (with_blas) and NCCL (with_nccl); returns one message per library that could
// not be loaded (empty: all loaded). Idempotent.
std::vector<std::string> load_cuda_libraries(bool with_blas, bool with_nccl);
bool cuda_library_loaded(const std::string& name);  // "cublas" | "nccl"

}  // namespace ftcost::calib
