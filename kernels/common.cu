// Shared CUDA infrastructure (see common.cuh) and the family dispatcher.
#include "common.cuh"
#include "families.hpp"
#include "kernels.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>

namespace ftcost::calib {

// ---- errors ----

void cuda_check(cudaError_t e, const char* call, const char* file, int line) {
  if (e == cudaSuccess) return;
  std::string msg = std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
  std::string where = std::string(call) + " [" + file + ":" + std::to_string(line) + "]";
  if (e == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();  // not sticky: clear it and go on
    throw OutOfMemory(where, msg);
  }
  if (cuda_error_is_sticky(static_cast<int>(e))) throw FatalDeviceError(where, msg);
  (void)cudaGetLastError();
  throw DeviceError(where, msg);
}

void cublas_check(cublasStatus_t s, const char* call, const char* file, int line) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  std::string msg = std::string(cublasGetStatusName(s)) + ": " + cublasGetStatusString(s);
  std::string where = std::string(call) + " [" + file + ":" + std::to_string(line) + "]";
  switch (classify_cublas_status(static_cast<int>(s))) {
    case StatusClass::out_of_memory:
      throw OutOfMemory(where, msg);
    case StatusClass::skip:
      throw Unsupported(where, msg);
    case StatusClass::failure:
      break;
  }
  throw DeviceError(where, msg);
}

// ---- context ----

namespace {
std::unique_ptr<Gpu> g_gpu;

__global__ void fill_const_kernel(float* p, std::size_t n, float v) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    p[i] = v;
  }
}

template <class T>
__global__ void fill_gen_kernel(T* p, std::size_t n, Gen g) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    store(p[i], g(i));
  }
}

template <class T>
__global__ void gather_kernel(const T* src, const std::int64_t* idx, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = load(src[idx[i]]);
}

template <class T>
__global__ void to_float_kernel(const T* src, float* out, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    out[i] = load(src[i]);
  }
}
}  // namespace

Gpu& gpu() {
  if (!g_gpu) throw DeviceError("gpu()", "the GPU context is not initialized");
  return *g_gpu;
}

void gpu_init(int device) {
  auto g = std::make_unique<Gpu>();
  g->device = device;
  CUDA_CHECK(cudaSetDevice(device));
  CUDA_CHECK(cudaGetDeviceProperties(&g->prop, device));
  CUDA_CHECK(cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking));
  CUBLAS_CHECK(cublasCreate(&g->blas));
  CUBLAS_CHECK(cublasSetStream(g->blas, g->stream));
  CUBLAS_CHECK(cublasLtCreate(&g->lt));
  g->workspace.alloc(kWorkspaceBytes);
  CUBLAS_CHECK(cublasSetWorkspace(g->blas, g->workspace.get(), kWorkspaceBytes));
  // twice the L2, at least 64 MiB: after writing it, nothing of the benchmark's data is left in L2
  g->flush_bytes = std::max<std::size_t>(64u << 20, 2 * static_cast<std::size_t>(g->prop.l2CacheSize));
  g->flush_buf.alloc(g->flush_bytes);
  g->max_blocks = std::max(1, g->prop.multiProcessorCount * 16);
  g_gpu = std::move(g);
}

void gpu_shutdown() {
  if (!g_gpu) return;
  cudaStreamSynchronize(g_gpu->stream);
  g_gpu->workspace.release();
  g_gpu->flush_buf.release();
  if (g_gpu->lt) cublasLtDestroy(g_gpu->lt);
  if (g_gpu->blas) cublasDestroy(g_gpu->blas);
  if (g_gpu->stream) cudaStreamDestroy(g_gpu->stream);
  g_gpu.reset();
}

void Gpu::flush_l2() {
  static unsigned char value = 0;
  CUDA_CHECK(cudaMemsetAsync(flush_buf.get(), ++value, flush_bytes, stream));
}

// ---- inputs and read-back ----

template <class T>
void fill(T* p, std::size_t n, const Gen& g) {
  fill_gen_kernel<T><<<grid_for(n, 256), 256, 0, gpu().stream>>>(p, n, g);
  LAUNCH_CHECK("fill_gen_kernel");
}
template void fill<float>(float*, std::size_t, const Gen&);
template void fill<bf16>(bf16*, std::size_t, const Gen&);
template void fill<fp16>(fp16*, std::size_t, const Gen&);
template void fill<fp8>(fp8*, std::size_t, const Gen&);

void fill_const(float* p, std::size_t n, float v) {
  fill_const_kernel<<<grid_for(n, 256), 256, 0, gpu().stream>>>(p, n, v);
  LAUNCH_CHECK("fill_const_kernel");
}

template <class T>
std::vector<float> sample_to_host(const T* src, const std::vector<std::int64_t>& idx) {
  const int n = static_cast<int>(idx.size());
  std::vector<float> out(idx.size());
  if (n == 0) return out;
  DevBuf<std::int64_t> d_idx(idx.size());
  DevBuf<float> d_out(idx.size());
  cudaStream_t s = gpu().stream;
  CUDA_CHECK(
      cudaMemcpyAsync(d_idx.get(), idx.data(), idx.size() * sizeof(std::int64_t), cudaMemcpyHostToDevice, s));
  gather_kernel<T><<<(n + 255) / 256, 256, 0, s>>>(src, d_idx.get(), d_out.get(), n);
  LAUNCH_CHECK("gather_kernel");
  CUDA_CHECK(cudaMemcpyAsync(out.data(), d_out.get(), out.size() * sizeof(float), cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
  return out;
}
template std::vector<float> sample_to_host<float>(const float*, const std::vector<std::int64_t>&);
template std::vector<float> sample_to_host<bf16>(const bf16*, const std::vector<std::int64_t>&);
template std::vector<float> sample_to_host<fp16>(const fp16*, const std::vector<std::int64_t>&);

template <class T>
std::vector<float> to_host(const T* src, std::size_t n) {
  std::vector<float> out(n);
  if (n == 0) return out;
  DevBuf<float> tmp(n);
  cudaStream_t s = gpu().stream;
  to_float_kernel<T><<<grid_for(n, 256), 256, 0, s>>>(src, tmp.get(), n);
  LAUNCH_CHECK("to_float_kernel");
  CUDA_CHECK(cudaMemcpyAsync(out.data(), tmp.get(), n * sizeof(float), cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
  return out;
}
template std::vector<float> to_host<float>(const float*, std::size_t);
template std::vector<float> to_host<bf16>(const bf16*, std::size_t);
template std::vector<float> to_host<fp16>(const fp16*, std::size_t);

std::vector<std::int64_t> sample_positions(std::int64_t n, int count, std::uint32_t seed) {
  std::vector<std::int64_t> v;
  if (n <= 0) return v;
  v.push_back(0);
  v.push_back(n - 1);
  for (int i = 0; i < count; ++i)
    v.push_back(static_cast<std::int64_t>(hash32(seed, static_cast<std::uint64_t>(i)) %
                                          static_cast<std::uint64_t>(n)));
  return v;
}

// ---- timing ----

namespace {
struct Events {
  std::vector<cudaEvent_t> ev;
  explicit Events(int n) : ev(static_cast<std::size_t>(n), nullptr) {
    for (auto& e : ev) CUDA_CHECK(cudaEventCreate(&e));
  }
  ~Events() {
    for (auto e : ev) {
      if (e) cudaEventDestroy(e);
    }
  }
};
double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

StagedTiming time_staged(const TimingPolicy& p, int stages,
                         const std::function<void(const std::function<void()>&)>& op, bool flush) {
  Gpu& g = gpu();
  Events evs(stages + 1);
  int marks = 0;
  auto mark = [&] {
    if (marks <= stages) CUDA_CHECK(cudaEventRecord(evs.ev[static_cast<std::size_t>(marks)], g.stream));
    ++marks;
  };
  for (int w = 0; w < p.warmup; ++w) {
    marks = 0;
    op(mark);
    CUDA_CHECK(cudaStreamSynchronize(g.stream));  // an op may reuse host staging buffers per run
  }
  Sampler total(p);
  std::vector<std::vector<double>> per_stage(static_cast<std::size_t>(stages));
  auto start = std::chrono::steady_clock::now();
  do {
    if (flush) g.flush_l2();
    marks = 0;
    op(mark);
    if (marks != stages + 1) {
      throw DeviceError("time_staged", "the benchmark marked " + std::to_string(marks) +
                                           " points, expected " + std::to_string(stages + 1));
    }
    CUDA_CHECK(cudaEventSynchronize(evs.ev.back()));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, evs.ev.front(), evs.ev.back()));
    total.add(ms * 1e-3);
    for (int s = 0; s < stages; ++s) {
      float sm = 0;
      CUDA_CHECK(cudaEventElapsedTime(&sm, evs.ev[static_cast<std::size_t>(s)],
                                      evs.ev[static_cast<std::size_t>(s) + 1]));
      per_stage[static_cast<std::size_t>(s)].push_back(sm * 1e-3);
    }
  } while (!total.done(seconds_since(start)));
  StagedTiming t;
  t.total = total.summary();
  for (auto& v : per_stage) t.stage_median_s.push_back(summarize(v).median);
  return t;
}

Summary time_op(const TimingPolicy& p, const std::function<void()>& op, bool flush) {
  return time_staged(
             p, 1,
             [&](const std::function<void()>& mark) {
               mark();
               op();
               mark();
             },
             flush)
      .total;
}

Summary time_host(const TimingPolicy& p, const std::function<void()>& op_batch) {
  for (int w = 0; w < p.warmup; ++w) op_batch();
  Sampler s(p);
  auto start = std::chrono::steady_clock::now();
  do {
    auto t0 = std::chrono::steady_clock::now();
    op_batch();
    s.add(seconds_since(t0));
  } while (!s.done(seconds_since(start)));
  return s.summary();
}

// ---- dispatch ----

void run_family(const std::string& family, Env& env) {
  if (family == "launch") return bench_launch(env);
  if (family == "host") return bench_host(env);
  if (family == "bandwidth") return bench_bandwidth(env);
  if (family == "elementwise") return bench_elementwise(env);
  if (family == "adamw") return bench_adamw(env);
  if (family == "nf4") return bench_nf4(env);
  if (family == "gemm") return bench_gemm(env);
  if (family == "moe") return bench_moe(env);
  if (family == "norm") return bench_norm(env);
  if (family == "cast") return bench_cast(env);
  if (family == "pointwise") return bench_pointwise(env);
  if (family == "cross_entropy") return bench_cross_entropy(env);
  if (family == "lora") return bench_lora(env);
  if (family == "attention") return bench_attention(env);
  throw DeviceError("run_family", "unknown benchmark family " + family);
}

std::vector<std::string> self_test() {
  Report r;
  auto guard = [&](const char* name, void (*fn)(Report&)) {
    try {
      fn(r);
    } catch (const DeviceError& e) {
      r.push_back(std::string("FAILED: ") + name + ": " + e.call + ": " + e.what());
    } catch (const std::exception& e) {
      r.push_back(std::string("FAILED: ") + name + ": " + e.what());
    }
  };
  guard("launch", selftest_launch);
  guard("bandwidth", selftest_bandwidth);
  guard("elementwise", selftest_elementwise);
  guard("adamw", selftest_adamw);
  guard("nf4", selftest_nf4);
  guard("gemm", selftest_gemm);
  guard("moe", selftest_moe);
  guard("norm, cast, pointwise", selftest_opclasses);
  guard("cross_entropy", selftest_cross_entropy);
  guard("lora", selftest_lora);
  guard("attention", selftest_attention);
  return r;
}

}  // namespace ftcost::calib
