// cuBLAS, cuBLASLt and NCCL are loaded at run time (dlopen), not linked: NVIDIA ships them as shared
// libraries only (this toolkit's lib64 has libcublas.so.13, libcublasLt.so.13, libnccl.so.2 and no static
// archive of them), and a linked shared library that is absent makes the dynamic loader stop the program
// with exit 127 before main() runs. This file defines every cuBLAS/cuBLASLt/NCCL function the calibrator
// calls, with the signatures of the toolkit's headers (the compiler checks them), each forwarding to the
// symbol of the loaded library; before load_cuda_libraries() succeeds they return the library's
// "not initialized" status. The CUDA runtime is linked statically (libcudart_static.a), so the binary
// needs nothing of CUDA but the driver, which is itself probed with dlopen (native/calibrate/src/driver.cpp).
#include "cuda_libs.hpp"

#include "ftcost/calibrate/driver.hpp"

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <atomic>
#include <nccl.h>

// The CUresult numbers driver.hpp copies from cuda.h.
static_assert(ftcost::calib::cu::no_device == CUDA_ERROR_NO_DEVICE);
static_assert(ftcost::calib::cu::device_unavailable == CUDA_ERROR_DEVICE_UNAVAILABLE);
static_assert(ftcost::calib::cu::stub_library == CUDA_ERROR_STUB_LIBRARY);
static_assert(ftcost::calib::cu::invalid_device == CUDA_ERROR_INVALID_DEVICE);
static_assert(ftcost::calib::cu::device_not_licensed == CUDA_ERROR_DEVICE_NOT_LICENSED);
static_assert(ftcost::calib::cu::operating_system == CUDA_ERROR_OPERATING_SYSTEM);
static_assert(ftcost::calib::cu::not_permitted == CUDA_ERROR_NOT_PERMITTED);
static_assert(ftcost::calib::cu::system_not_ready == CUDA_ERROR_SYSTEM_NOT_READY);
static_assert(ftcost::calib::cu::system_driver_mismatch == CUDA_ERROR_SYSTEM_DRIVER_MISMATCH);
static_assert(ftcost::calib::cu::compat_not_supported_on_device == CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE);
static_assert(ftcost::calib::cu::attr_compute_mode == CU_DEVICE_ATTRIBUTE_COMPUTE_MODE);
static_assert(ftcost::calib::cu::computemode_prohibited == CU_COMPUTEMODE_PROHIBITED);
static_assert(ftcost::calib::cu::computemode_exclusive_process == CU_COMPUTEMODE_EXCLUSIVE_PROCESS);

// The cuBLAS and CUDA runtime numbers bench.cpp classifies without the headers.
static_assert(CUBLAS_STATUS_NOT_SUPPORTED == 15 && CUBLAS_STATUS_ARCH_MISMATCH == 8 &&
              CUBLAS_STATUS_ALLOC_FAILED == 3 && CUBLAS_STATUS_INVALID_VALUE == 7);
static_assert(cudaErrorIllegalAddress == 700 && cudaErrorLaunchTimeout == 702 && cudaErrorAssert == 710 &&
              cudaErrorHardwareStackError == 714 && cudaErrorIllegalInstruction == 715 &&
              cudaErrorMisalignedAddress == 716 && cudaErrorInvalidAddressSpace == 717 &&
              cudaErrorInvalidPc == 718 && cudaErrorLaunchFailure == 719 &&
              cudaErrorECCUncorrectable == 214 && cudaErrorUnknown == 999);

#ifndef FTCOST_CUDA_LIBDIR
#define FTCOST_CUDA_LIBDIR ""
#endif
#ifndef FTCOST_CUBLAS_SOVERSION
#define FTCOST_CUBLAS_SOVERSION "13"
#endif

namespace ftcost::calib {

namespace {
enum Which { kCublas = 0, kCublasLt = 1, kNccl = 2 };
DynLib g_libs[3];
std::atomic<bool> g_loaded[3] = {false, false, false};

void* sym(Which w, const char* name) {
  if (!g_loaded[w].load(std::memory_order_acquire)) return nullptr;
  return g_libs[w].symbol(name);
}

std::vector<std::string> dirs() { return {FTCOST_CUDA_LIBDIR, "/usr/local/cuda/lib64"}; }

// Loads one library and checks that it has every symbol the calibrator calls.
std::optional<std::string> load_one(Which w, const std::string& soname,
                                    const std::vector<const char*>& names) {
  if (g_loaded[w].load()) return std::nullopt;
  if (auto e = g_libs[w].open(library_candidates(soname, dirs()))) return e;
  for (const char* n : names) {
    if (!g_libs[w].symbol(n)) return g_libs[w].loaded_from() + " has no " + n + " (too old a version?)";
  }
  g_loaded[w].store(true, std::memory_order_release);
  return std::nullopt;
}
}  // namespace

std::vector<std::string> load_cuda_libraries(bool with_blas, bool with_nccl) {
  std::vector<std::string> problems;
  const std::string v = FTCOST_CUBLAS_SOVERSION;
  if (with_blas) {
    // cuBLASLt first: libcublas needs it and finds it beside itself
    if (auto e = load_one(
            kCublasLt, "libcublasLt.so." + v,
            {"cublasLtCreate", "cublasLtDestroy", "cublasLtGetVersion", "cublasLtMatmul",
             "cublasLtMatmulAlgoGetHeuristic", "cublasLtMatmulDescCreate", "cublasLtMatmulDescDestroy",
             "cublasLtMatmulDescSetAttribute", "cublasLtMatmulPreferenceCreate",
             "cublasLtMatmulPreferenceDestroy", "cublasLtMatmulPreferenceSetAttribute",
             "cublasLtMatrixLayoutCreate", "cublasLtMatrixLayoutDestroy"}))
      problems.push_back(*e);
    if (auto e = load_one(
            kCublas, "libcublas.so." + v,
            {"cublasCreate_v2", "cublasDestroy_v2", "cublasSetStream_v2", "cublasSetWorkspace_v2",
             "cublasGemmEx", "cublasGemmGroupedBatchedEx", "cublasGetStatusName", "cublasGetStatusString"}))
      problems.push_back(*e);
  }
  if (with_nccl) {
    if (auto e = load_one(kNccl, "libnccl.so.2",
                          {"ncclGetVersion", "ncclGetUniqueId", "ncclCommInitAll", "ncclCommInitRank",
                           "ncclCommDestroy", "ncclGetErrorString", "ncclAllReduce", "ncclAllGather",
                           "ncclReduceScatter", "ncclSend", "ncclRecv", "ncclGroupStart", "ncclGroupEnd"}))
      problems.push_back(*e);
  }
  return problems;
}

bool cuda_library_loaded(const std::string& name) {
  if (name == "cublas") return g_loaded[kCublas].load() && g_loaded[kCublasLt].load();
  if (name == "nccl") return g_loaded[kNccl].load();
  return false;
}

}  // namespace ftcost::calib

using ftcost::calib::kCublas;
using ftcost::calib::kCublasLt;
using ftcost::calib::kNccl;

// Resolves `name` (of function-pointer type `type`) from library `lib` once it is loaded; `fail` is
// returned before that.
#define FTCOST_FORWARD_T(type, lib, name, fail, ...)              \
  do {                                                            \
    static std::atomic<type> fn{nullptr};                         \
    auto f = fn.load(std::memory_order_acquire);                  \
    if (!f) {                                                     \
      f = reinterpret_cast<type>(ftcost::calib::sym(lib, #name)); \
      if (!f) return fail;                                        \
      fn.store(f, std::memory_order_release);                     \
    }                                                             \
    return f(__VA_ARGS__);                                        \
  } while (0)
#define FTCOST_FORWARD(lib, name, fail, ...) FTCOST_FORWARD_T(decltype(&::name), lib, name, fail, __VA_ARGS__)

// cublas_api.h also declares a C++ overload of cublasGemmEx (cudaDataType computeType): name the C one
using GemmExFn = cublasStatus_t(CUBLASWINAPI*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                               int, const void*, const void*, cudaDataType, int, const void*,
                                               cudaDataType, int, const void*, void*, cudaDataType, int,
                                               cublasComputeType_t, cublasGemmAlgo_t);
// The same for a function without arguments.
#define FTCOST_FORWARD0(lib, name, fail)                                       \
  do {                                                                         \
    static std::atomic<decltype(&::name)> fn{nullptr};                         \
    auto f = fn.load(std::memory_order_acquire);                               \
    if (!f) {                                                                  \
      f = reinterpret_cast<decltype(&::name)>(ftcost::calib::sym(lib, #name)); \
      if (!f) return fail;                                                     \
      fn.store(f, std::memory_order_release);                                  \
    }                                                                          \
    return f();                                                                \
  } while (0)

extern "C" {

// ---- cuBLAS (cublas_api.h, CUDA 13.0) ----
cublasStatus_t CUBLASWINAPI cublasCreate_v2(cublasHandle_t* handle) {
  FTCOST_FORWARD(kCublas, cublasCreate_v2, CUBLAS_STATUS_NOT_INITIALIZED, handle);
}
cublasStatus_t CUBLASWINAPI cublasDestroy_v2(cublasHandle_t handle) {
  FTCOST_FORWARD(kCublas, cublasDestroy_v2, CUBLAS_STATUS_NOT_INITIALIZED, handle);
}
cublasStatus_t CUBLASWINAPI cublasSetStream_v2(cublasHandle_t handle, cudaStream_t streamId) {
  FTCOST_FORWARD(kCublas, cublasSetStream_v2, CUBLAS_STATUS_NOT_INITIALIZED, handle, streamId);
}
cublasStatus_t CUBLASWINAPI cublasSetWorkspace_v2(cublasHandle_t handle, void* workspace,
                                                  size_t workspaceSizeInBytes) {
  FTCOST_FORWARD(kCublas, cublasSetWorkspace_v2, CUBLAS_STATUS_NOT_INITIALIZED, handle, workspace,
                 workspaceSizeInBytes);
}
const char* CUBLASWINAPI cublasGetStatusName(cublasStatus_t status) {
  FTCOST_FORWARD(kCublas, cublasGetStatusName, "CUBLAS_STATUS (cuBLAS not loaded)", status);
}
const char* CUBLASWINAPI cublasGetStatusString(cublasStatus_t status) {
  FTCOST_FORWARD(kCublas, cublasGetStatusString, "cuBLAS is not loaded", status);
}
cublasStatus_t CUBLASWINAPI cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
                                         cublasOperation_t transb, int m, int n, int k, const void* alpha,
                                         const void* A, cudaDataType Atype, int lda, const void* B,
                                         cudaDataType Btype, int ldb, const void* beta, void* C,
                                         cudaDataType Ctype, int ldc, cublasComputeType_t computeType,
                                         cublasGemmAlgo_t algo) {
  FTCOST_FORWARD_T(GemmExFn, kCublas, cublasGemmEx, CUBLAS_STATUS_NOT_INITIALIZED, handle, transa, transb, m,
                   n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C, Ctype, ldc, computeType, algo);
}
cublasStatus_t CUBLASWINAPI cublasGemmGroupedBatchedEx(
    cublasHandle_t handle, const cublasOperation_t transa_array[], const cublasOperation_t transb_array[],
    const int m_array[], const int n_array[], const int k_array[], const void* alpha_array,
    const void* const Aarray[], cudaDataType_t Atype, const int lda_array[], const void* const Barray[],
    cudaDataType_t Btype, const int ldb_array[], const void* beta_array, void* const Carray[],
    cudaDataType_t Ctype, const int ldc_array[], int group_count, const int group_size[],
    cublasComputeType_t computeType) {
  FTCOST_FORWARD(kCublas, cublasGemmGroupedBatchedEx, CUBLAS_STATUS_NOT_INITIALIZED, handle, transa_array,
                 transb_array, m_array, n_array, k_array, alpha_array, Aarray, Atype, lda_array, Barray,
                 Btype, ldb_array, beta_array, Carray, Ctype, ldc_array, group_count, group_size,
                 computeType);
}

// ---- cuBLASLt (cublasLt.h, CUDA 13.0) ----
cublasStatus_t CUBLASWINAPI cublasLtCreate(cublasLtHandle_t* lightHandle) {
  FTCOST_FORWARD(kCublasLt, cublasLtCreate, CUBLAS_STATUS_NOT_INITIALIZED, lightHandle);
}
cublasStatus_t CUBLASWINAPI cublasLtDestroy(cublasLtHandle_t lightHandle) {
  FTCOST_FORWARD(kCublasLt, cublasLtDestroy, CUBLAS_STATUS_NOT_INITIALIZED, lightHandle);
}
size_t CUBLASWINAPI cublasLtGetVersion(void) { FTCOST_FORWARD0(kCublasLt, cublasLtGetVersion, size_t{0}); }
cublasStatus_t CUBLASWINAPI cublasLtMatmul(cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t computeDesc,
                                           const void* alpha, const void* A, cublasLtMatrixLayout_t Adesc,
                                           const void* B, cublasLtMatrixLayout_t Bdesc, const void* beta,
                                           const void* C, cublasLtMatrixLayout_t Cdesc, void* D,
                                           cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t* algo,
                                           void* workspace, size_t workspaceSizeInBytes,
                                           cudaStream_t stream) {
  FTCOST_FORWARD(kCublasLt, cublasLtMatmul, CUBLAS_STATUS_NOT_INITIALIZED, lightHandle, computeDesc, alpha, A,
                 Adesc, B, Bdesc, beta, C, Cdesc, D, Ddesc, algo, workspace, workspaceSizeInBytes, stream);
}
cublasStatus_t CUBLASWINAPI cublasLtMatmulAlgoGetHeuristic(
    cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t operationDesc, cublasLtMatrixLayout_t Adesc,
    cublasLtMatrixLayout_t Bdesc, cublasLtMatrixLayout_t Cdesc, cublasLtMatrixLayout_t Ddesc,
    cublasLtMatmulPreference_t preference, int requestedAlgoCount,
    cublasLtMatmulHeuristicResult_t heuristicResultsArray[], int* returnAlgoCount) {
  FTCOST_FORWARD(kCublasLt, cublasLtMatmulAlgoGetHeuristic, CUBLAS_STATUS_NOT_INITIALIZED, lightHandle,
                 operationDesc, Adesc, Bdesc, Cdesc, Ddesc, preference, requestedAlgoCount,
                 heuristicResultsArray, returnAlgoCount);
}
cublasStatus_t CUBLASWINAPI cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* matmulDesc,
                                                     cublasComputeType_t computeType,
                                                     cudaDataType_t scaleType) {
  FTCOST_FORWARD(kCublasLt, cublasLtMatmulDescCreate, CUBLAS_STATUS_NOT_INITIALIZED, matmulDesc, computeType,
                 scaleType);
}
cublasStatus_t CUBLASWINAPI cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t matmulDesc) {
  FTCOST_FORWARD(kCublasLt, cublasLtMatmulDescDestroy, CUBLAS_STATUS_NOT_INITIALIZED, matmulDesc);
}
cublasStatus_t CUBLASWINAPI cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t matmulDesc,
                                                           cublasLtMatmulDescAttributes_t attr,
                                                           const void* buf, size_t sizeInBytes) {
  FTCOST_FORWARD(kCublasLt, cublasLtMatmulDescSetAttribute, CUBLAS_STATUS_NOT_INITIALIZED, matmulDesc, attr,
                 buf, sizeInBytes);
}
cublasStatus_t CUBLASWINAPI cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* pref) {
  FTCOST_FORWARD(kCublasLt, cublasLtMatmulPreferenceCreate, CUBLAS_STATUS_NOT_INITIALIZED, pref);
}
cublasStatus_t CUBLASWINAPI cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref) {
  FTCOST_FORWARD(kCublasLt, cublasLtMatmulPreferenceDestroy, CUBLAS_STATUS_NOT_INITIALIZED, pref);
}
cublasStatus_t CUBLASWINAPI cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref,
                                                                 cublasLtMatmulPreferenceAttributes_t attr,
                                                                 const void* buf, size_t sizeInBytes) {
  FTCOST_FORWARD(kCublasLt, cublasLtMatmulPreferenceSetAttribute, CUBLAS_STATUS_NOT_INITIALIZED, pref, attr,
                 buf, sizeInBytes);
}
cublasStatus_t CUBLASWINAPI cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* matLayout, cudaDataType type,
                                                       uint64_t rows, uint64_t cols, int64_t ld) {
  FTCOST_FORWARD(kCublasLt, cublasLtMatrixLayoutCreate, CUBLAS_STATUS_NOT_INITIALIZED, matLayout, type, rows,
                 cols, ld);
}
cublasStatus_t CUBLASWINAPI cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t matLayout) {
  FTCOST_FORWARD(kCublasLt, cublasLtMatrixLayoutDestroy, CUBLAS_STATUS_NOT_INITIALIZED, matLayout);
}

// ---- NCCL (nccl.h 2.28) ----
ncclResult_t ncclGetVersion(int* version) { FTCOST_FORWARD(kNccl, ncclGetVersion, ncclSystemError, version); }
ncclResult_t ncclGetUniqueId(ncclUniqueId* uniqueId) {
  FTCOST_FORWARD(kNccl, ncclGetUniqueId, ncclSystemError, uniqueId);
}
ncclResult_t ncclCommInitAll(ncclComm_t* comm, int ndev, const int* devlist) {
  FTCOST_FORWARD(kNccl, ncclCommInitAll, ncclSystemError, comm, ndev, devlist);
}
ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank) {
  FTCOST_FORWARD(kNccl, ncclCommInitRank, ncclSystemError, comm, nranks, commId, rank);
}
ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  FTCOST_FORWARD(kNccl, ncclCommDestroy, ncclSystemError, comm);
}
const char* ncclGetErrorString(ncclResult_t result) {
  FTCOST_FORWARD(kNccl, ncclGetErrorString, "NCCL is not loaded", result);
}
ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                           ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  FTCOST_FORWARD(kNccl, ncclAllReduce, ncclSystemError, sendbuff, recvbuff, count, datatype, op, comm,
                 stream);
}
ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                               ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                               cudaStream_t stream) {
  FTCOST_FORWARD(kNccl, ncclReduceScatter, ncclSystemError, sendbuff, recvbuff, recvcount, datatype, op, comm,
                 stream);
}
ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, ncclDataType_t datatype,
                           ncclComm_t comm, cudaStream_t stream) {
  FTCOST_FORWARD(kNccl, ncclAllGather, ncclSystemError, sendbuff, recvbuff, sendcount, datatype, comm,
                 stream);
}
ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream) {
  FTCOST_FORWARD(kNccl, ncclSend, ncclSystemError, sendbuff, count, datatype, peer, comm, stream);
}
ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream) {
  FTCOST_FORWARD(kNccl, ncclRecv, ncclSystemError, recvbuff, count, datatype, peer, comm, stream);
}
ncclResult_t ncclGroupStart() { FTCOST_FORWARD0(kNccl, ncclGroupStart, ncclSystemError); }
ncclResult_t ncclGroupEnd() { FTCOST_FORWARD0(kNccl, ncclGroupEnd, ncclSystemError); }

}  // extern "C"
