// Memory-bound elementwise kernels of a transformer layer: SwiGLU forward and backward, GELU (tanh),
// RMSNorm. GB/s counts each kernel's reads + writes. Checks: CPU references (reference.cpp) on samples
// at the benchmark's size, every element at small odd sizes in the self-test.
#include "common.cuh"
#include "elementwise.cuh"
#include "families.hpp"
#include "selftest.hpp"

#include <cmath>

namespace ftcost::calib {

namespace {

__device__ __forceinline__ float silu_f(float x) { return x / (1.0f + expf(-x)); }
__device__ __forceinline__ float gelu_f(float x) {
  const float c = 0.7978845608028654f;  // sqrt(2/pi)
  return 0.5f * x * (1.0f + tanhf(c * (x + 0.044715f * x * x * x)));
}

union Pack8 {
  uint4 u;
  __nv_bfloat162 h[4];
};

// One functor per op: reads `NIn` bf16 streams, writes `NOut`, elementwise in fp32.
struct SwigluOp {
  static constexpr int kIn = 2, kOut = 1;
  __device__ void operator()(const float* in, float* out) const { out[0] = silu_f(in[0]) * in[1]; }
};
struct SwigluBwdOp {
  static constexpr int kIn = 3, kOut = 2;  // in: dout, a, b; out: da, db
  __device__ void operator()(const float* in, float* out) const {
    float a = in[1], s = 1.0f / (1.0f + expf(-a));
    out[0] = in[0] * in[2] * (s * (1.0f + a * (1.0f - s)));
    out[1] = in[0] * a * s;
  }
};
struct GeluOp {
  static constexpr int kIn = 1, kOut = 1;
  __device__ void operator()(const float* in, float* out) const { out[0] = gelu_f(in[0]); }
};

struct MulOp {  // c = a * b (a gate product)
  static constexpr int kIn = 2, kOut = 1;
  __device__ void operator()(const float* in, float* out) const { out[0] = in[0] * in[1]; }
};
struct AddOp {  // c = a + b (a residual add)
  static constexpr int kIn = 2, kOut = 1;
  __device__ void operator()(const float* in, float* out) const { out[0] = in[0] + in[1]; }
};

template <class Op>
struct Streams {
  const bf16* in[3];
  bf16* out[2];
};

template <class Op>
__global__ void elementwise_kernel(Streams<Op> st, std::size_t n, Op op) {
  const std::size_t n8 = n / 8;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t v = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; v < n8; v += stride) {
    Pack8 in[Op::kIn], out[Op::kOut];
#pragma unroll
    for (int s = 0; s < Op::kIn; ++s) in[s].u = reinterpret_cast<const uint4*>(st.in[s])[v];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      float lo[Op::kIn], hi[Op::kIn], rlo[Op::kOut], rhi[Op::kOut];
#pragma unroll
      for (int s = 0; s < Op::kIn; ++s) {
        float2 f = __bfloat1622float2(in[s].h[j]);
        lo[s] = f.x;
        hi[s] = f.y;
      }
      op(lo, rlo);
      op(hi, rhi);
#pragma unroll
      for (int s = 0; s < Op::kOut; ++s) out[s].h[j] = __floats2bfloat162_rn(rlo[s], rhi[s]);
    }
#pragma unroll
    for (int s = 0; s < Op::kOut; ++s) reinterpret_cast<uint4*>(st.out[s])[v] = out[s].u;
  }
  // tail (< 8 elements)
  if (blockIdx.x == 0 && threadIdx.x < n - n8 * 8) {
    std::size_t i = n8 * 8 + threadIdx.x;
    float in[Op::kIn], out[Op::kOut];
#pragma unroll
    for (int s = 0; s < Op::kIn; ++s) in[s] = __bfloat162float(st.in[s][i]);
    op(in, out);
#pragma unroll
    for (int s = 0; s < Op::kOut; ++s) st.out[s][i] = __float2bfloat16_rn(out[s]);
  }
}

template <class Op>
void launch(Streams<Op> st, std::size_t n, cudaStream_t s, const char* name) {
  elementwise_kernel<Op><<<grid_for(n / 8 + 1, 256), 256, 0, s>>>(st, n, Op{});
  cuda_check(cudaGetLastError(), name, __FILE__, __LINE__);
}

// one block per row; cols % 8 == 0 uses 16-byte vectors
__global__ void rmsnorm_kernel(const bf16* __restrict__ x, const bf16* __restrict__ w, bf16* __restrict__ y,
                               int cols, float eps) {
  const bf16* xr = x + static_cast<std::size_t>(blockIdx.x) * cols;
  bf16* yr = y + static_cast<std::size_t>(blockIdx.x) * cols;
  const bool vec = cols % 8 == 0;
  float ss = 0;
  if (vec) {
    for (int v = threadIdx.x; v < cols / 8; v += blockDim.x) {
      Pack8 p;
      p.u = reinterpret_cast<const uint4*>(xr)[v];
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        float2 f = __bfloat1622float2(p.h[j]);
        ss += f.x * f.x + f.y * f.y;
      }
    }
  } else {
    for (int i = threadIdx.x; i < cols; i += blockDim.x) {
      float f = __bfloat162float(xr[i]);
      ss += f * f;
    }
  }
  __shared__ float warp_sums[32];
  for (int o = 16; o > 0; o >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, o);
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = ss;
  __syncthreads();
  if (threadIdx.x < 32) {
    float t = threadIdx.x < (blockDim.x + 31) / 32 ? warp_sums[threadIdx.x] : 0.0f;
    for (int o = 16; o > 0; o >>= 1) t += __shfl_xor_sync(0xffffffffu, t, o);
    if (threadIdx.x == 0) warp_sums[0] = t;
  }
  __syncthreads();
  const float rstd = rsqrtf(warp_sums[0] / static_cast<float>(cols) + eps);
  if (vec) {
    for (int v = threadIdx.x; v < cols / 8; v += blockDim.x) {
      Pack8 px, pw, py;
      px.u = reinterpret_cast<const uint4*>(xr)[v];
      pw.u = reinterpret_cast<const uint4*>(w)[v];
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        float2 f = __bfloat1622float2(px.h[j]), g = __bfloat1622float2(pw.h[j]);
        float2 nrm = __bfloat1622float2(__floats2bfloat162_rn(f.x * rstd, f.y * rstd));
        py.h[j] = __floats2bfloat162_rn(g.x * nrm.x, g.y * nrm.y);
      }
      reinterpret_cast<uint4*>(yr)[v] = py.u;
    }
  } else {
    for (int i = threadIdx.x; i < cols; i += blockDim.x) {
      float nrm = __bfloat162float(__float2bfloat16_rn(__bfloat162float(xr[i]) * rstd));
      yr[i] = __float2bfloat16_rn(__bfloat162float(w[i]) * nrm);
    }
  }
}

const Gen kA{31, 127, 1.0f / 32};  // [-4, 4]: the interesting range of silu / gelu
const Gen kB{32, 127, 1.0f / 32};
const Gen kD{33, 127, 1.0f / 64};
const Gen kW{34, 127, 1.0f / 64};
constexpr float kEps = 1e-5f;
constexpr double kRtol = 1.0 / 64;  // bf16 output: float vs double math can round to neighbours
constexpr double kAtol = 1e-6;

// Checks the op `name` on rows x cols at the given element positions (all when `pos` is empty).
struct Bufs {
  DevBuf<bf16> a, b, c, d, e;
  void reserve(std::size_t n) { reserve_all(n, a, b, c, d, e); }
};

void run_op(const std::string& op, Bufs& x, std::int64_t rows, std::int64_t cols) {
  const std::size_t n = static_cast<std::size_t>(rows * cols);
  cudaStream_t s = gpu().stream;
  if (op == "swiglu")
    launch_swiglu(x.a.get(), x.b.get(), x.c.get(), n, s);
  else if (op == "swiglu_bwd")
    launch_swiglu_bwd(x.c.get(), x.a.get(), x.b.get(), x.d.get(), x.e.get(), n, s);
  else if (op == "gelu")
    launch_gelu(x.a.get(), x.c.get(), n, s);
  else
    launch_rmsnorm(x.a.get(), x.b.get(), x.c.get(), static_cast<int>(rows), static_cast<int>(cols), kEps, s);
}

void prepare(const std::string& op, Bufs& x, std::int64_t rows, std::int64_t cols) {
  const std::size_t n = static_cast<std::size_t>(rows * cols);
  x.reserve(n);
  fill(x.a.get(), n, kA);
  if (op == "rmsnorm") {
    fill(x.b.get(), static_cast<std::size_t>(cols), kW);
  } else {
    fill(x.b.get(), n, kB);
  }
  if (op == "swiglu_bwd") fill(x.c.get(), n, kD);  // dout
}

void validate(const std::string& op, Bufs& x, std::int64_t rows, std::int64_t cols, bool all) {
  const std::int64_t n = rows * cols;
  prepare(op, x, rows, cols);
  run_op(op, x, rows, cols);
  Check c;
  if (op == "rmsnorm") {
    std::vector<std::int64_t> rws;
    if (all) {
      for (std::int64_t r = 0; r < rows; ++r) rws.push_back(r);
    } else {
      rws = sample_positions(rows, 6, 35);
    }
    std::vector<float> xin(static_cast<std::size_t>(cols)), w(static_cast<std::size_t>(cols)),
        want(static_cast<std::size_t>(cols));
    for (std::int64_t i = 0; i < cols; ++i)
      w[static_cast<std::size_t>(i)] = kW(static_cast<std::uint64_t>(i));
    std::vector<std::int64_t> pos;
    for (auto r : rws) {
      for (std::int64_t i = 0; i < cols; ++i) pos.push_back(r * cols + i);
    }
    auto got = sample_to_host(x.c.get(), pos);
    std::size_t k = 0;
    for (auto r : rws) {
      for (std::int64_t i = 0; i < cols; ++i)
        xin[static_cast<std::size_t>(i)] = kA(static_cast<std::uint64_t>(r * cols + i));
      rmsnorm_ref(xin.data(), w.data(), want.data(), cols, kEps);
      for (std::int64_t i = 0; i < cols; ++i, ++k) {
        check_one(c, r * cols + i, got[k], want[static_cast<std::size_t>(i)],
                  kAtol + kRtol * std::fabs(want[static_cast<std::size_t>(i)]));
      }
    }
  } else {
    const std::vector<std::int64_t> pos = check_positions(n, all, 4096, 36);
    auto got = sample_to_host(op == "swiglu_bwd" ? x.d.get() : x.c.get(), pos);
    std::vector<float> got2;
    if (op == "swiglu_bwd") got2 = sample_to_host(x.e.get(), pos);
    for (std::size_t k = 0; k < pos.size(); ++k) {
      auto u = static_cast<std::uint64_t>(pos[k]);
      double a = kA(u), b = kB(u), want = 0, want2 = 0;
      if (op == "swiglu")
        want = silu_ref(a) * b;
      else if (op == "gelu")
        want = gelu_tanh_ref(a);
      else {
        double d = kD(u);
        want = d * b * dsilu_ref(a);
        want2 = d * silu_ref(a);
      }
      check_one(c, pos[k], got[k], want, kAtol + kRtol * std::fabs(want));
      if (op == "swiglu_bwd") check_one(c, pos[k], got2[k], want2, kAtol + kRtol * std::fabs(want2));
    }
  }
  if (!c.ok) throw ValidationFailure(c.describe(op));
}

std::uint64_t bytes_of(const std::string& op, std::int64_t rows, std::int64_t cols) {
  const auto n = static_cast<std::uint64_t>(rows * cols);
  if (op == "swiglu") return 6 * n;
  if (op == "swiglu_bwd") return 10 * n;
  if (op == "gelu") return 4 * n;
  return 4 * n + 2 * static_cast<std::uint64_t>(cols);  // rmsnorm: x, y and the weight row
}

}  // namespace

void launch_swiglu(const bf16* a, const bf16* b, bf16* out, std::size_t n, cudaStream_t s) {
  launch(Streams<SwigluOp>{{a, b, nullptr}, {out, nullptr}}, n, s, "swiglu_kernel<<<>>>");
}
void launch_swiglu_bwd(const bf16* dout, const bf16* a, const bf16* b, bf16* da, bf16* db, std::size_t n,
                       cudaStream_t s) {
  launch(Streams<SwigluBwdOp>{{dout, a, b}, {da, db}}, n, s, "swiglu_bwd_kernel<<<>>>");
}
void launch_gelu(const bf16* x, bf16* y, std::size_t n, cudaStream_t s) {
  launch(Streams<GeluOp>{{x, nullptr, nullptr}, {y, nullptr}}, n, s, "gelu_kernel<<<>>>");
}
void launch_mul(const bf16* a, const bf16* b, bf16* out, std::size_t n, cudaStream_t s) {
  launch(Streams<MulOp>{{a, b, nullptr}, {out, nullptr}}, n, s, "mul_kernel<<<>>>");
}
void launch_add(const bf16* a, const bf16* b, bf16* out, std::size_t n, cudaStream_t s) {
  launch(Streams<AddOp>{{a, b, nullptr}, {out, nullptr}}, n, s, "add_kernel<<<>>>");
}
void launch_rmsnorm(const bf16* x, const bf16* w, bf16* y, int rows, int cols, float eps, cudaStream_t s) {
  if (rows <= 0) return;
  rmsnorm_kernel<<<rows, 256, 0, s>>>(x, w, y, cols, eps);
  LAUNCH_CHECK("rmsnorm_kernel");
}

void bench_elementwise(Env& env) {
  const Plan& plan = env.plan();
  const MoeModel& m = plan.model;
  Bufs x;
  for (std::int64_t tokens : plan.elementwise_tokens) {
    for (const char* op : {"swiglu", "swiglu_bwd", "gelu", "rmsnorm"}) {
      const std::int64_t cols = std::string(op) == "rmsnorm" ? m.hidden : m.ffn;
      run_item(env,
               std::string("elementwise ") + op + " " + std::to_string(tokens) + "x" + std::to_string(cols),
               [&] {
                 validate(op, x, tokens, cols, false);
                 ElementwiseRow r;
                 r.op = op;
                 r.dtype = "bf16";
                 r.elements = tokens * cols;
                 env.rows().elementwise.push_back(timed_row(r, plan.timing, bytes_of(op, tokens, cols),
                                                            [&] { run_op(op, x, tokens, cols); }));
               });
    }
  }
}

void selftest_elementwise(Report& rep) {
  Bufs x;
  struct Case {
    std::int64_t rows, cols;
  };
  for (const Case& cs : {Case{1, 7}, Case{3, 40}, Case{5, 1000}, Case{17, 4096}}) {
    for (const char* op : {"swiglu", "swiglu_bwd", "gelu", "rmsnorm"}) {
      std::string name =
          std::string("elementwise ") + op + " " + std::to_string(cs.rows) + "x" + std::to_string(cs.cols);
      self_check(rep, name, [&] { validate(op, x, cs.rows, cs.cols, true); });
    }
  }
}

}  // namespace ftcost::calib
