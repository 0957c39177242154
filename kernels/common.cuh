// Shared CUDA infrastructure of the benchmark families: error checks that name the call, device
// buffers, the per-run context (stream, cuBLAS handles, L2 flush buffer), input generation from the
// same hash the CPU references use, and the timing loops (CUDA events, warm-up, L2 flush before each
// sample, noise-based stopping).
#pragma once

#include "ftcost/calibrate/bench.hpp"
#include "ftcost/calibrate/hd.hpp"
#include "ftcost/calibrate/reference.hpp"
#include "ftcost/calibrate/stats.hpp"

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace ftcost::calib {

using bf16 = __nv_bfloat16;
using fp16 = __half;
using fp8 = __nv_fp8_e4m3;

// ---- errors ----
void cuda_check(cudaError_t e, const char* call, const char* file, int line);
void cublas_check(cublasStatus_t s, const char* call, const char* file, int line);
#define CUDA_CHECK(x) ::ftcost::calib::cuda_check((x), #x, __FILE__, __LINE__)
#define CUBLAS_CHECK(x) ::ftcost::calib::cublas_check((x), #x, __FILE__, __LINE__)
#define LAUNCH_CHECK(kernel_name) \
  ::ftcost::calib::cuda_check(cudaGetLastError(), kernel_name "<<<>>>", __FILE__, __LINE__)

// ---- memory ----
template <class T>
class DevBuf {
 public:
  DevBuf() = default;
  explicit DevBuf(std::size_t n) { alloc(n); }
  ~DevBuf() { release(); }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
  DevBuf(DevBuf&& o) noexcept : p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)) {}
  DevBuf& operator=(DevBuf&& o) noexcept {
    if (this != &o) {
      release();
      p_ = std::exchange(o.p_, nullptr);
      n_ = std::exchange(o.n_, 0);
    }
    return *this;
  }
  void alloc(std::size_t n) {
    release();
    if (n == 0) return;
    void* p = nullptr;
    CUDA_CHECK(cudaMalloc(&p, n * sizeof(T)));
    p_ = static_cast<T*>(p);
    n_ = n;
  }
  // grows (never shrinks) to at least n elements; contents are not kept
  void reserve(std::size_t n) {
    if (n > n_) alloc(n);
  }
  void release() {
    if (p_) cudaFree(p_);
    p_ = nullptr;
    n_ = 0;
  }
  T* get() const { return p_; }
  std::size_t size() const { return n_; }

 private:
  T* p_ = nullptr;
  std::size_t n_ = 0;
};

// Grows every buffer of `bufs` to at least n elements (DevBuf::reserve).
template <class... Bufs>
void reserve_all(std::size_t n, Bufs&... bufs) {
  (bufs.reserve(n), ...);
}

// ---- the run's context ----
struct Gpu {
  int device = 0;
  cudaDeviceProp prop{};
  cudaStream_t stream = nullptr;
  cublasHandle_t blas = nullptr;
  cublasLtHandle_t lt = nullptr;
  DevBuf<unsigned char> workspace;  // cuBLASLt / cuBLAS workspace
  DevBuf<unsigned char> flush_buf;  // written before every timed sample to evict L2
  std::size_t flush_bytes = 0;
  int max_blocks = 0;  // grid cap for grid-stride kernels
  void flush_l2();
};
Gpu& gpu();
constexpr std::size_t kWorkspaceBytes = 32u << 20;

inline unsigned grid_for(std::size_t n, unsigned threads) {
  std::size_t b = (n + threads - 1) / threads;
  std::size_t cap = static_cast<std::size_t>(gpu().max_blocks);
  if (b > cap) b = cap;
  return static_cast<unsigned>(b < 1 ? 1 : b);
}

// ---- element conversions ----
__device__ __forceinline__ void store(float& d, float v) { d = v; }
__device__ __forceinline__ void store(bf16& d, float v) { d = __float2bfloat16_rn(v); }
__device__ __forceinline__ void store(fp16& d, float v) { d = __float2half_rn(v); }
__device__ __forceinline__ void store(fp8& d, float v) { d = fp8(v); }
__device__ __forceinline__ float load(float v) { return v; }
__device__ __forceinline__ float load(bf16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float load(fp16 v) { return __half2float(v); }
__device__ __forceinline__ float load(fp8 v) { return static_cast<float>(v); }

// ---- generated inputs and read-back ----
template <class T>
void fill(T* p, std::size_t n, const Gen& g);
void fill_const(float* p, std::size_t n, float v);
// out[i] = float(src[idx[i]]) for a list of indices, copied to the host
template <class T>
std::vector<float> sample_to_host(const T* src, const std::vector<std::int64_t>& idx);
// whole array to host as float
template <class T>
std::vector<float> to_host(const T* src, std::size_t n);

// ---- timing ----
// Warm-up runs, then timed samples: [L2 flush] event op event, until the policy's stopping rule.
// Returns seconds per run.
Summary time_op(const TimingPolicy& p, const std::function<void()>& op, bool flush = true);

struct StagedTiming {
  Summary total;
  std::vector<double> stage_median_s;
};
// Same, for an op made of stages: op(mark) must call mark() before the first stage, between stages and
// after the last (stages + 1 times); each stage's median is reported too.
StagedTiming time_staged(const TimingPolicy& p, int stages,
                         const std::function<void(const std::function<void()>& mark)>& op, bool flush = true);

// Host wall-clock timing of `op` (for launch and host overheads), samples of `per_sample` ops.
Summary time_host(const TimingPolicy& p, const std::function<void()>& op_batch);

// Random-looking but deterministic sample positions in [0, n): the corners and `count` others.
std::vector<std::int64_t> sample_positions(std::int64_t n, int count, std::uint32_t seed);

// The positions a validation compares: every one of [0, n) where `all` (the small sizes), else
// sample_positions(n, count, seed).
inline std::vector<std::int64_t> check_positions(std::int64_t n, bool all, int count, std::uint32_t seed) {
  if (!all) return sample_positions(n, count, seed);
  std::vector<std::int64_t> pos;
  for (std::int64_t i = 0; i < n; ++i) pos.push_back(i);
  return pos;
}

// The three fields every bandwidth-bound row fills from its timing: GB/s over the row's bytes_moved, the
// median time in microseconds and the number of timed samples.
template <class Row>
void set_bandwidth(Row& r, const Summary& t) {
  r.gbps = rate_stat(t, static_cast<double>(r.bytes_moved), 1e9);
  r.time_us_median = t.median * 1e6;
  r.iterations = t.n;
}

// A bandwidth-bound row `r` (its naming fields filled) with `op` timed under `p` over `bytes` moved.
template <class Row>
Row timed_row(Row r, const TimingPolicy& p, std::uint64_t bytes, const std::function<void()>& op) {
  Summary t = time_op(p, op);
  r.bytes_moved = bytes;
  set_bandwidth(r, t);
  return r;
}

}  // namespace ftcost::calib
