// Memory-bound op classes between the GEMMs (issue 38): RMSNorm forward and backward as transformers'
// LlamaRMSNorm computes it (bf16 in and out, fp32 math: models/llama/modeling_llama.py, LlamaRMSNorm.forward
// upcasts with .to(torch.float32); docs/sources/calibrator-op-classes.md), dtype casts bf16 <-> fp32, and the
// binary element-wise ops (mul, add). GB/s counts what a minimal kernel reads and writes once (the row
// formulas in calibration.hpp). Checks: CPU references (reference.hpp) on sampled rows/elements at the
// benchmark's size, every element at small odd sizes in the self-test.
#include "common.cuh"
#include "elementwise.cuh"
#include "families.hpp"
#include "selftest.hpp"

#include <algorithm>
#include <cmath>

namespace ftcost::calib {

namespace {

union Pack8 {
  uint4 u;
  __nv_bfloat162 h[4];
};

constexpr int kNormThreads = 256;
constexpr int kNormVecs = 4;  // 16-byte vectors per thread and row: cols <= 256 x 4 x 8 = 8192
constexpr float kEps = 1e-5f;

__device__ float block_sum(float v, float* red) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  __syncthreads();  // `red` may still be read from the previous call
  if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = v;
  __syncthreads();
  float t = 0;
  for (int w = 0; w < kNormThreads / 32; ++w) t += red[w];
  return t;
}

// RMSNorm backward, one pass over dy and x: blocks stride over rows; each thread keeps its columns' dweight
// partial sums in registers and writes them once to part[block][cols]; rmsnorm_dw_kernel adds the blocks up.
//   rstd = 1/sqrt(mean(x^2) + eps), g = dy w, dx = rstd g - x rstd^3 mean(g x), dw += dy bf16(x rstd)
__global__ void __launch_bounds__(kNormThreads)
    rmsnorm_bwd_kernel(const bf16* __restrict__ x, const bf16* __restrict__ w, const bf16* __restrict__ dy,
                       bf16* __restrict__ dx, float* __restrict__ part, int rows, int cols, float eps) {
  __shared__ float red[kNormThreads / 32];
  const int nvec = cols / 8;
  float dw[kNormVecs][8];
  for (int v = 0; v < kNormVecs; ++v)
    for (int j = 0; j < 8; ++j) dw[v][j] = 0.f;
  for (int r = blockIdx.x; r < rows; r += gridDim.x) {
    const std::size_t base = static_cast<std::size_t>(r) * cols;
    Pack8 px[kNormVecs], pd[kNormVecs];
    float ss = 0, gx = 0;
    for (int v = 0; v < kNormVecs; ++v) {
      const int c = threadIdx.x + v * kNormThreads;
      if (c >= nvec) break;
      px[v].u = reinterpret_cast<const uint4*>(x + base)[c];
      pd[v].u = reinterpret_cast<const uint4*>(dy + base)[c];
      Pack8 pw;
      pw.u = reinterpret_cast<const uint4*>(w)[c];
      for (int j = 0; j < 4; ++j) {
        float2 fx = __bfloat1622float2(px[v].h[j]), fd = __bfloat1622float2(pd[v].h[j]),
               fw = __bfloat1622float2(pw.h[j]);
        ss += fx.x * fx.x + fx.y * fx.y;
        gx += fd.x * fw.x * fx.x + fd.y * fw.y * fx.y;
      }
    }
    ss = block_sum(ss, red);
    gx = block_sum(gx, red);
    const float rstd = rsqrtf(ss / static_cast<float>(cols) + eps);
    const float c3 = rstd * rstd * rstd * gx / static_cast<float>(cols);
    for (int v = 0; v < kNormVecs; ++v) {
      const int c = threadIdx.x + v * kNormThreads;
      if (c >= nvec) break;
      Pack8 pw, out;
      pw.u = reinterpret_cast<const uint4*>(w)[c];
      for (int j = 0; j < 4; ++j) {
        float2 fx = __bfloat1622float2(px[v].h[j]), fd = __bfloat1622float2(pd[v].h[j]),
               fw = __bfloat1622float2(pw.h[j]);
        out.h[j] = __floats2bfloat162_rn(rstd * fd.x * fw.x - fx.x * c3, rstd * fd.y * fw.y - fx.y * c3);
        dw[v][2 * j] += fd.x * __bfloat162float(__float2bfloat16_rn(fx.x * rstd));
        dw[v][2 * j + 1] += fd.y * __bfloat162float(__float2bfloat16_rn(fx.y * rstd));
      }
      reinterpret_cast<uint4*>(dx + base)[c] = out.u;
    }
  }
  for (int v = 0; v < kNormVecs; ++v) {
    const int c = threadIdx.x + v * kNormThreads;
    if (c >= nvec) break;
    for (int j = 0; j < 8; ++j) part[static_cast<std::size_t>(blockIdx.x) * cols + c * 8 + j] = dw[v][j];
  }
}

__global__ void rmsnorm_dw_kernel(const float* __restrict__ part, bf16* __restrict__ dw, int blocks,
                                  int cols) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= cols) return;
  float s = 0;
  for (int b = 0; b < blocks; ++b) s += part[static_cast<std::size_t>(b) * cols + c];
  dw[c] = __float2bfloat16_rn(s);
}

__global__ void cast_bf16_to_fp32_kernel(const bf16* __restrict__ in, float* __restrict__ out,
                                         std::size_t n) {
  const std::size_t n8 = n / 8, stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t v = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; v < n8; v += stride) {
    Pack8 p;
    p.u = reinterpret_cast<const uint4*>(in)[v];
    float4 lo, hi;
    float2 a = __bfloat1622float2(p.h[0]), b = __bfloat1622float2(p.h[1]), c = __bfloat1622float2(p.h[2]),
           d = __bfloat1622float2(p.h[3]);
    lo = make_float4(a.x, a.y, b.x, b.y);
    hi = make_float4(c.x, c.y, d.x, d.y);
    reinterpret_cast<float4*>(out)[2 * v] = lo;
    reinterpret_cast<float4*>(out)[2 * v + 1] = hi;
  }
  if (blockIdx.x == 0 && threadIdx.x < n - n8 * 8)
    out[n8 * 8 + threadIdx.x] = __bfloat162float(in[n8 * 8 + threadIdx.x]);
}

__global__ void cast_fp32_to_bf16_kernel(const float* __restrict__ in, bf16* __restrict__ out,
                                         std::size_t n) {
  const std::size_t n8 = n / 8, stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t v = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; v < n8; v += stride) {
    const float4 lo = reinterpret_cast<const float4*>(in)[2 * v],
                 hi = reinterpret_cast<const float4*>(in)[2 * v + 1];
    Pack8 p;
    p.h[0] = __floats2bfloat162_rn(lo.x, lo.y);
    p.h[1] = __floats2bfloat162_rn(lo.z, lo.w);
    p.h[2] = __floats2bfloat162_rn(hi.x, hi.y);
    p.h[3] = __floats2bfloat162_rn(hi.z, hi.w);
    reinterpret_cast<uint4*>(out)[v] = p.u;
  }
  if (blockIdx.x == 0 && threadIdx.x < n - n8 * 8)
    out[n8 * 8 + threadIdx.x] = __float2bfloat16_rn(in[n8 * 8 + threadIdx.x]);
}

const Gen kX{91, 127, 1.0f / 32};  // [-4, 4]
const Gen kW{92, 127, 1.0f / 64};  // [-2, 2]
const Gen kDy{93, 127, 1.0f / 128};
const Gen kF{94, 127,
             1.0f / 16};  // fp32 cast input, [-8, 8] (exact in bf16: the fp32 -> bf16 check is exact)

struct NormBufs {
  DevBuf<bf16> x, w, dy, y, dx, dw;
  DevBuf<float> part;
  int blocks = 0;
  void prepare(std::int64_t rows, std::int64_t cols) {
    const auto n = static_cast<std::size_t>(rows * cols), c = static_cast<std::size_t>(cols);
    x.reserve(n), dy.reserve(n), y.reserve(n), dx.reserve(n), w.reserve(c), dw.reserve(c);
    blocks = static_cast<int>(std::min<std::int64_t>(rows, 2 * gpu().prop.multiProcessorCount));
    part.reserve(static_cast<std::size_t>(blocks) * c);
    fill(x.get(), n, kX);
    fill(dy.get(), n, kDy);
    fill(w.get(), c, kW);
  }
};

void check_norm_shape(std::int64_t cols) {
  if (cols % 8 != 0 || cols / 8 > kNormThreads * kNormVecs)
    throw Unsupported("rmsnorm_bwd_kernel", "cols must be a multiple of 8 and at most 8192");
}

void run_norm(NormBufs& b, bool fwd, std::int64_t rows, std::int64_t cols) {
  cudaStream_t s = gpu().stream;
  if (fwd)
    return launch_rmsnorm(b.x.get(), b.w.get(), b.y.get(), static_cast<int>(rows), static_cast<int>(cols),
                          kEps, s);
  check_norm_shape(cols);
  rmsnorm_bwd_kernel<<<b.blocks, kNormThreads, 0, s>>>(b.x.get(), b.w.get(), b.dy.get(), b.dx.get(),
                                                       b.part.get(), static_cast<int>(rows),
                                                       static_cast<int>(cols), kEps);
  LAUNCH_CHECK("rmsnorm_bwd_kernel");
  rmsnorm_dw_kernel<<<static_cast<unsigned>((cols + 255) / 256), 256, 0, s>>>(
      b.part.get(), b.dw.get(), b.blocks, static_cast<int>(cols));
  LAUNCH_CHECK("rmsnorm_dw_kernel");
}

std::vector<float> gen_row(const Gen& g, std::int64_t row, std::int64_t cols) {
  std::vector<float> v(static_cast<std::size_t>(cols));
  for (std::int64_t i = 0; i < cols; ++i)
    v[static_cast<std::size_t>(i)] = g(static_cast<std::uint64_t>(row * cols + i));
  return v;
}

// The forward is checked by the elementwise family's rmsnorm check (the same kernel); here the backward: dx
// on sampled rows (all when `all`), dweight at sampled columns against the sum over every row.
void validate_norm_bwd(NormBufs& b, std::int64_t rows, std::int64_t cols, bool all) {
  b.prepare(rows, cols);
  CUDA_CHECK(
      cudaMemsetAsync(b.dx.get(), 0x7F, static_cast<std::size_t>(rows * cols) * sizeof(bf16), gpu().stream));
  run_norm(b, false, rows, cols);
  std::vector<float> w = gen_row(kW, 0, cols);
  std::vector<double> dx(static_cast<std::size_t>(cols)), dwr(static_cast<std::size_t>(cols)),
      dw(static_cast<std::size_t>(cols), 0.0), dw_abs(static_cast<std::size_t>(cols), 0.0);
  std::vector<std::int64_t> check_rows = all ? std::vector<std::int64_t>{} : sample_positions(rows, 4, 95);
  if (all)
    for (std::int64_t r = 0; r < rows; ++r) check_rows.push_back(r);
  Check c;
  for (std::int64_t r = 0; r < rows; ++r) {  // every row for dweight; the chosen ones for dx
    std::vector<float> x = gen_row(kX, r, cols), dy = gen_row(kDy, r, cols);
    rmsnorm_bwd_ref(x.data(), w.data(), dy.data(), dx.data(), dwr.data(), cols, kEps);
    for (std::size_t i = 0; i < dwr.size(); ++i) dw[i] += dwr[i], dw_abs[i] += std::fabs(dwr[i]);
    if (std::find(check_rows.begin(), check_rows.end(), r) == check_rows.end()) continue;
    std::vector<std::int64_t> pos;
    for (std::int64_t i = 0; i < cols; ++i) pos.push_back(r * cols + i);
    auto got = sample_to_host(b.dx.get(), pos);
    double scale = 0;  // rstd |g| is the size of dx's terms
    for (std::int64_t i = 0; i < cols; ++i)
      scale = std::max(scale, std::fabs(dx[static_cast<std::size_t>(i)]));
    for (std::int64_t i = 0; i < cols; ++i)
      check_one(c, r * cols + i, got[static_cast<std::size_t>(i)], dx[static_cast<std::size_t>(i)],
                1e-6 + std::ldexp(scale, -8) + std::fabs(dx[static_cast<std::size_t>(i)]) / 64);
  }
  std::vector<std::int64_t> cpos = all ? std::vector<std::int64_t>{} : sample_positions(cols, 16, 96);
  if (all)
    for (std::int64_t i = 0; i < cols; ++i) cpos.push_back(i);
  auto got = sample_to_host(b.dw.get(), cpos);
  for (std::size_t k = 0; k < cpos.size(); ++k) {
    const auto i = static_cast<std::size_t>(cpos[k]);
    check_one(c, cpos[k], got[k], dw[i], 1e-6 + std::ldexp(dw_abs[i], -10) + std::fabs(dw[i]) / 64);
  }
  if (!c.ok) throw ValidationFailure(c.describe("rmsnorm backward"));
}

void validate_norm_fwd(NormBufs& b, std::int64_t rows, std::int64_t cols) {
  b.prepare(rows, cols);
  run_norm(b, true, rows, cols);
  std::vector<float> w = gen_row(kW, 0, cols), want(static_cast<std::size_t>(cols));
  Check c;
  for (std::int64_t r : sample_positions(rows, 4, 99)) {
    std::vector<float> x = gen_row(kX, r, cols);
    rmsnorm_ref(x.data(), w.data(), want.data(), cols, kEps);
    std::vector<std::int64_t> pos;
    for (std::int64_t i = 0; i < cols; ++i) pos.push_back(r * cols + i);
    auto got = sample_to_host(b.y.get(), pos);
    for (std::int64_t i = 0; i < cols; ++i) {
      const double wv = want[static_cast<std::size_t>(i)];
      check_one(c, r * cols + i, got[static_cast<std::size_t>(i)], wv, 1e-6 + std::fabs(wv) / 64);
    }
  }
  if (!c.ok) throw ValidationFailure(c.describe("rmsnorm forward"));
}

std::uint64_t norm_bytes(bool fwd, std::int64_t rows, std::int64_t cols) {
  const auto n = static_cast<std::uint64_t>(rows * cols), c = static_cast<std::uint64_t>(cols);
  return fwd ? 2 * (2 * n + c) : 2 * (3 * n + 2 * c);
}

struct CastBufs {
  DevBuf<bf16> h;
  DevBuf<float> f;
  void prepare(std::size_t n) {
    h.reserve(n);
    f.reserve(n);
    fill(h.get(), n, kX);
    fill(f.get(), n, kF);
  }
};

void run_cast(CastBufs& b, bool to_fp32, std::size_t n) {
  cudaStream_t s = gpu().stream;
  if (to_fp32) {
    cast_bf16_to_fp32_kernel<<<grid_for(n / 8 + 1, 256), 256, 0, s>>>(b.h.get(), b.f.get(), n);
    LAUNCH_CHECK("cast_bf16_to_fp32_kernel");
  } else {
    cast_fp32_to_bf16_kernel<<<grid_for(n / 8 + 1, 256), 256, 0, s>>>(b.f.get(), b.h.get(), n);
    LAUNCH_CHECK("cast_fp32_to_bf16_kernel");
  }
}

// Both directions are exact on these inputs (bf16 values widen exactly; kF's values are bf16 values).
void validate_cast(CastBufs& b, bool to_fp32, std::size_t n, bool all) {
  b.prepare(n);
  run_cast(b, to_fp32, n);
  const std::vector<std::int64_t> pos = check_positions(static_cast<std::int64_t>(n), all, 4096, 97);
  auto got = to_fp32 ? sample_to_host(b.f.get(), pos) : sample_to_host(b.h.get(), pos);
  Check c;
  for (std::size_t k = 0; k < pos.size(); ++k)
    check_one(c, pos[k], got[k], (to_fp32 ? kX : kF)(static_cast<std::uint64_t>(pos[k])), 0.0);
  if (!c.ok) throw ValidationFailure(c.describe(to_fp32 ? "cast bf16 -> fp32" : "cast fp32 -> bf16"));
}

struct PwBufs {
  DevBuf<bf16> a, b, c;
  void prepare(std::size_t n) {
    a.reserve(n), b.reserve(n), c.reserve(n);
    fill(a.get(), n, kX);
    fill(b.get(), n, kW);
  }
};

void run_pointwise(PwBufs& p, const std::string& op, std::size_t n) {
  if (op == "mul")
    launch_mul(p.a.get(), p.b.get(), p.c.get(), n, gpu().stream);
  else
    launch_add(p.a.get(), p.b.get(), p.c.get(), n, gpu().stream);
}

void validate_pointwise(PwBufs& p, const std::string& op, std::size_t n, bool all) {
  p.prepare(n);
  run_pointwise(p, op, n);
  const std::vector<std::int64_t> pos = check_positions(static_cast<std::int64_t>(n), all, 4096, 98);
  auto got = sample_to_host(p.c.get(), pos);
  Check c;
  for (std::size_t k = 0; k < pos.size(); ++k) {
    const auto i = static_cast<std::uint64_t>(pos[k]);
    const double want = op == "mul" ? static_cast<double>(kX(i)) * kW(i) : static_cast<double>(kX(i)) + kW(i);
    check_one(c, pos[k], got[k], want, std::fabs(want) / 128 + 1e-30);  // one bf16 rounding
  }
  if (!c.ok) throw ValidationFailure(c.describe(op));
}

}  // namespace

void bench_norm(Env& env) {
  NormBufs b;
  for (const NormSpec& s : env.plan().norm) {
    for (bool fwd : {true, false}) {
      const std::string label = std::string("norm rmsnorm ") + (fwd ? "fwd " : "bwd ") +
                                std::to_string(s.rows) + "x" + std::to_string(s.cols);
      run_item(env, label, [&] {
        if (fwd)
          validate_norm_fwd(b, s.rows, s.cols);
        else
          validate_norm_bwd(b, s.rows, s.cols, false);
        b.prepare(s.rows, s.cols);
        NormRow r;
        r.op = "rmsnorm";
        r.direction = fwd ? "fwd" : "bwd";
        r.dtype = "bf16";
        r.rows = s.rows;
        r.cols = s.cols;
        env.rows().norm.push_back(timed_row(r, env.plan().timing, norm_bytes(fwd, s.rows, s.cols),
                                            [&] { run_norm(b, fwd, s.rows, s.cols); }));
      });
    }
  }
}

void bench_cast(Env& env) {
  CastBufs b;
  for (std::int64_t n : env.plan().cast_elements) {
    for (bool to_fp32 : {true, false}) {
      const auto un = static_cast<std::size_t>(n);
      run_item(env, std::string("cast ") + (to_fp32 ? "bf16->fp32 " : "fp32->bf16 ") + std::to_string(n),
               [&] {
                 validate_cast(b, to_fp32, un, false);
                 CastRow r;
                 r.src_dtype = to_fp32 ? "bf16" : "fp32";
                 r.dst_dtype = to_fp32 ? "fp32" : "bf16";
                 r.elements = n;
                 env.rows().cast.push_back(timed_row(r, env.plan().timing, 6 * static_cast<std::uint64_t>(n),
                                                     [&] { run_cast(b, to_fp32, un); }));
               });
    }
  }
}

void bench_pointwise(Env& env) {
  PwBufs b;
  for (const PointwiseSpec& s : env.plan().pointwise) {
    const auto un = static_cast<std::size_t>(s.elements);
    run_item(env, "pointwise " + s.op + " bf16 " + std::to_string(s.elements), [&] {
      validate_pointwise(b, s.op, un, false);
      PointwiseRow r;
      r.op = s.op;
      r.dtype = "bf16";
      r.elements = s.elements;
      env.rows().pointwise.push_back(timed_row(r, env.plan().timing,
                                               6 * static_cast<std::uint64_t>(s.elements),
                                               [&] { run_pointwise(b, s.op, un); }));
    });
  }
}

void selftest_opclasses(Report& rep) {
  auto guard = [&](const std::string& name, const std::function<void()>& fn) { self_check(rep, name, fn); };
  NormBufs nb;
  for (auto rc :
       {std::pair<std::int64_t, std::int64_t>{1, 8}, {3, 40}, {5, 1000}, {17, 4096}, {600, 256}, {2, 8192}})
    guard("rmsnorm bwd " + std::to_string(rc.first) + "x" + std::to_string(rc.second),
          [&] { validate_norm_bwd(nb, rc.first, rc.second, true); });
  CastBufs cb;
  PwBufs pb;
  for (std::size_t n : {std::size_t{1}, std::size_t{7}, std::size_t{1000}, std::size_t{65543}}) {
    for (bool to_fp32 : {true, false})
      guard(std::string("cast ") + (to_fp32 ? "bf16->fp32 " : "fp32->bf16 ") + std::to_string(n),
            [&] { validate_cast(cb, to_fp32, n, true); });
    for (const char* op : {"mul", "add"})
      guard(std::string("pointwise ") + op + " " + std::to_string(n),
            [&] { validate_pointwise(pb, op, n, true); });
  }
}

}  // namespace ftcost::calib
