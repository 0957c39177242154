// The MoE layer of Mixtral-8x7B (hidden 4096, expert FFN 14336 with SwiGLU, 8 experts, top-2), as a
// fine-tuning step runs it, forward and backward:
//   router   logits[T,E] = x Wg^T                                   (cublasGemmEx, bf16)
//   topk     softmax over E, top-k, weights renormalized over the k  (own kernel, one thread per token)
//   permute  per-expert counts, offsets, stable positions, gather rows into expert order (own kernels)
//   experts  h1 = xp W1[e]^T, h3 = xp W3[e]^T, a = silu(h1) h3, yp = a W2[e]^T for every expert, either
//            "loop":    one cublasGemmEx per expert and projection (what a per-expert Python loop does)
//            "grouped": one cublasGemmGroupedBatchedEx per projection for all experts
//   unpermute out[t] = sum_j w[t,j] yp[pos[t,j]]                      (own kernel)
// and the backward of each (dgrad and wgrad of every GEMM, SwiGLU backward, routing-weight gradient,
// softmax-over-top-k backward). Routing: "sparse" = top-k, "dense" = every expert (the paper's dense
// mode); load distributions uniform, the paper's measured Mixtral loads (Fig. 11) and a Zipf skew: the
// benchmark replaces the router's choices by an assignment with exactly those loads (the router and
// top-k kernels still run and are timed).
//
// Checks before timing: (1) the whole layer, forward and backward, both implementations, at a small
// size (H 256, F 512, 8 experts; top-2 and dense) against the CPU reference (reference.cpp, whose
// backward is itself checked against finite differences in the unit tests), with the router's own
// routing; (2) at the benchmark's size, loop and grouped must agree on the output and the gradients,
// and the top-k kernel must match the CPU on the real logits.
#include "common.cuh"
#include "elementwise.cuh"
#include "families.hpp"
#include "ftcost/calibrate/routing.hpp"

#include <algorithm>
#include <cmath>

namespace ftcost::calib {

namespace {

constexpr int kMaxExperts = 256;

// ---- kernels ----

__global__ void topk_softmax_kernel(const bf16* __restrict__ logits, int T, int E, int k,
                                    int* __restrict__ idx, float* __restrict__ w) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= T) return;
  const bf16* l = logits + static_cast<std::size_t>(t) * E;
  float mx = -INFINITY;
  for (int e = 0; e < E; ++e) mx = fmaxf(mx, __bfloat162float(l[e]));
  unsigned long long taken[kMaxExperts / 64] = {0, 0, 0, 0};
  float sum = 0;
  for (int j = 0; j < k; ++j) {
    int best = -1;
    float bv = 0;
    for (int e = 0; e < E; ++e) {
      if (taken[e >> 6] & (1ull << (e & 63))) continue;
      float v = __bfloat162float(l[e]);
      if (best < 0 || v > bv) {
        best = e;
        bv = v;
      }
    }
    taken[best >> 6] |= 1ull << (best & 63);
    const float p = expf(bv - mx);
    idx[static_cast<std::size_t>(t) * k + j] = best;
    w[static_cast<std::size_t>(t) * k + j] = p;
    sum += p;
  }
  for (int j = 0; j < k; ++j) w[static_cast<std::size_t>(t) * k + j] /= sum;
}

__global__ void count_kernel(const int* __restrict__ idx, int n, int* __restrict__ counts) {
  for (int a = blockIdx.x * blockDim.x + threadIdx.x; a < n; a += gridDim.x * blockDim.x)
    atomicAdd(&counts[idx[a]], 1);
}

__global__ void offsets_kernel(const int* __restrict__ counts, int E, int* __restrict__ offsets) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    int s = 0;
    for (int e = 0; e < E; ++e) {
      offsets[e] = s;
      s += counts[e];
    }
    offsets[E] = s;
  }
}

// one block (256 threads) per expert: stable positions of its assignments, in assignment order
__global__ void positions_kernel(const int* __restrict__ idx, int n, const int* __restrict__ offsets,
                                 int* __restrict__ pos) {
  const int e = blockIdx.x;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
  __shared__ int warp_counts[32];
  __shared__ int running;
  if (threadIdx.x == 0) running = offsets[e];
  __syncthreads();
  for (int base = 0; base < n; base += blockDim.x) {
    const int a = base + threadIdx.x;
    const bool mine = a < n && idx[a] == e;
    const unsigned ballot = __ballot_sync(0xffffffffu, mine);
    if (lane == 0) warp_counts[warp] = __popc(ballot);
    __syncthreads();
    int before = running;
    for (int wi = 0; wi < warp; ++wi) before += warp_counts[wi];
    if (mine) pos[a] = before + __popc(ballot & ((1u << lane) - 1u));
    __syncthreads();
    if (threadIdx.x == 0) {
      for (int wi = 0; wi < nwarps; ++wi) running += warp_counts[wi];
    }
    __syncthreads();
  }
}

union Pack8 {
  uint4 u;
  __nv_bfloat162 h[4];
};

// one block per assignment a = t*kk + j: xp[pos[a]] = x[t]   (H % 8 == 0)
__global__ void permute_rows_kernel(const bf16* __restrict__ x, const int* __restrict__ pos, int kk, int H,
                                    bf16* __restrict__ xp) {
  const int a = blockIdx.x;
  const uint4* src = reinterpret_cast<const uint4*>(x + static_cast<std::size_t>(a / kk) * H);
  uint4* dst = reinterpret_cast<uint4*>(xp + static_cast<std::size_t>(pos[a]) * H);
  for (int v = threadIdx.x; v < H / 8; v += blockDim.x) dst[v] = src[v];
}

// one block per token: out[t] = sum_j w[t,j] yp[pos[t,j]]
__global__ void unpermute_kernel(const bf16* __restrict__ yp, const int* __restrict__ pos,
                                 const float* __restrict__ w, int kk, int H, bf16* __restrict__ out) {
  const int t = blockIdx.x;
  for (int v = threadIdx.x; v < H / 8; v += blockDim.x) {
    float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int j = 0; j < kk; ++j) {
      const int a = t * kk + j;
      const float wa = w[a];
      Pack8 p;
      p.u = reinterpret_cast<const uint4*>(yp + static_cast<std::size_t>(pos[a]) * H)[v];
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        float2 f = __bfloat1622float2(p.h[q]);
        acc[2 * q] += wa * f.x;
        acc[2 * q + 1] += wa * f.y;
      }
    }
    Pack8 o;
#pragma unroll
    for (int q = 0; q < 4; ++q) o.h[q] = __floats2bfloat162_rn(acc[2 * q], acc[2 * q + 1]);
    reinterpret_cast<uint4*>(out + static_cast<std::size_t>(t) * H)[v] = o.u;
  }
}

__device__ float block_sum(float v) {
  __shared__ float s[32];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  if ((threadIdx.x & 31) == 0) s[threadIdx.x >> 5] = v;
  __syncthreads();
  float r = 0;
  if (threadIdx.x < 32) {
    r = threadIdx.x < (blockDim.x + 31) / 32 ? s[threadIdx.x] : 0.0f;
    for (int o = 16; o > 0; o >>= 1) r += __shfl_xor_sync(0xffffffffu, r, o);
  }
  __syncthreads();
  return r;  // valid in thread 0
}

// one block per assignment: dyp[pos[a]] = w[a] dout[t]; dw[a] = <dout[t], yp[pos[a]]>
__global__ void unpermute_bwd_kernel(const bf16* __restrict__ dout, const bf16* __restrict__ yp,
                                     const int* __restrict__ pos, const float* __restrict__ w, int kk, int H,
                                     bf16* __restrict__ dyp, float* __restrict__ dw) {
  const int a = blockIdx.x, t = a / kk;
  const float wa = w[a];
  const std::size_t row = static_cast<std::size_t>(pos[a]) * H;
  float dot = 0;
  for (int v = threadIdx.x; v < H / 8; v += blockDim.x) {
    Pack8 g, y, o;
    g.u = reinterpret_cast<const uint4*>(dout + static_cast<std::size_t>(t) * H)[v];
    y.u = reinterpret_cast<const uint4*>(yp + row)[v];
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      float2 gf = __bfloat1622float2(g.h[q]), yf = __bfloat1622float2(y.h[q]);
      dot += gf.x * yf.x + gf.y * yf.y;
      o.h[q] = __floats2bfloat162_rn(wa * gf.x, wa * gf.y);
    }
    reinterpret_cast<uint4*>(dyp + row)[v] = o.u;
  }
  const float s = block_sum(dot);
  if (threadIdx.x == 0) dw[a] = s;
}

// one block per token: dx[t] = sum_j dxp[pos[t,j]]
__global__ void permute_bwd_kernel(const bf16* __restrict__ dxp, const int* __restrict__ pos, int kk, int H,
                                   bf16* __restrict__ dx) {
  const int t = blockIdx.x;
  for (int v = threadIdx.x; v < H / 8; v += blockDim.x) {
    float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int j = 0; j < kk; ++j) {
      Pack8 p;
      p.u = reinterpret_cast<const uint4*>(dxp + static_cast<std::size_t>(pos[t * kk + j]) * H)[v];
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        float2 f = __bfloat1622float2(p.h[q]);
        acc[2 * q] += f.x;
        acc[2 * q + 1] += f.y;
      }
    }
    Pack8 o;
#pragma unroll
    for (int q = 0; q < 4; ++q) o.h[q] = __floats2bfloat162_rn(acc[2 * q], acc[2 * q + 1]);
    reinterpret_cast<uint4*>(dx + static_cast<std::size_t>(t) * H)[v] = o.u;
  }
}

// one thread per token: w = softmax over the chosen logits -> dlogit_s = w_s (dw_s - sum_i w_i dw_i), others
// 0
__global__ void router_bwd_kernel(const float* __restrict__ w, const float* __restrict__ dw,
                                  const int* __restrict__ idx, int T, int E, int kk,
                                  bf16* __restrict__ dlogits) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= T) return;
  float dot = 0;
  for (int j = 0; j < kk; ++j) dot += w[t * kk + j] * dw[t * kk + j];
  bf16* row = dlogits + static_cast<std::size_t>(t) * E;
  for (int e = 0; e < E; ++e) row[e] = __float2bfloat16_rn(0.0f);
  for (int j = 0; j < kk; ++j)
    row[idx[t * kk + j]] = __float2bfloat16_rn(w[t * kk + j] * (dw[t * kk + j] - dot));
}

// ---- GEMMs in row-major terms (see calibration.hpp for the mapping) ----

struct Problem {
  cublasOperation_t ta, tb;
  int m, n, k;
  const bf16* A;
  int lda;
  const bf16* B;
  int ldb;
  bf16* C;
  int ldc;
  float beta;
};
// y[T,out] = x[T,in] W[out,in]^T (+ beta y)
Problem lin_fwd(int T, int in, int out, const bf16* x, const bf16* W, bf16* y, float beta = 0) {
  return {CUBLAS_OP_T, CUBLAS_OP_N, out, T, in, W, in, x, in, y, out, beta};
}
// dx[T,in] = dy[T,out] W[out,in] (+ beta dx)
Problem lin_dgrad(int T, int in, int out, const bf16* dy, const bf16* W, bf16* dx, float beta = 0) {
  return {CUBLAS_OP_N, CUBLAS_OP_N, in, T, out, W, in, dy, out, dx, in, beta};
}
// dW[out,in] = dy[T,out]^T x[T,in] (+ beta dW)
Problem lin_wgrad(int T, int in, int out, const bf16* dy, const bf16* x, bf16* dW, float beta = 0) {
  return {CUBLAS_OP_N, CUBLAS_OP_T, in, out, T, x, in, dy, out, dW, in, beta};
}

void gemm_ex(const Problem& p) {
  const float alpha = 1.0f;
  CUBLAS_CHECK(cublasGemmEx(gpu().blas, p.ta, p.tb, p.m, p.n, p.k, &alpha, p.A, CUDA_R_16BF, p.lda, p.B,
                            CUDA_R_16BF, p.ldb, &p.beta, p.C, CUDA_R_16BF, p.ldc, CUBLAS_COMPUTE_32F,
                            CUBLAS_GEMM_DEFAULT));
}

// pinned staging + device copies of the grouped call's pointer arrays, one slot per call of a layer pass
class PointerSlots {
 public:
  static constexpr int kSlots = 8;
  void reserve(int max_problems) {
    if (max_problems <= cap_) return;
    release();
    const std::size_t n = static_cast<std::size_t>(kSlots) * 3 * static_cast<std::size_t>(max_problems);
    CUDA_CHECK(cudaMallocHost(&host_, n * sizeof(void*)));
    dev_.alloc(n);
    cap_ = max_problems;
  }
  ~PointerSlots() { release(); }
  void release() {
    if (host_) cudaFreeHost(host_);
    host_ = nullptr;
    dev_.release();
    cap_ = 0;
  }
  void** host(int slot) { return host_ + static_cast<std::size_t>(slot) * 3 * cap_; }
  void** dev(int slot) { return dev_.get() + static_cast<std::size_t>(slot) * 3 * cap_; }
  int cap() const { return cap_; }

 private:
  void** host_ = nullptr;
  DevBuf<void*> dev_;
  int cap_ = 0;
};

void grouped(const std::vector<Problem>& ps, PointerSlots& slots, int slot) {
  const int G = static_cast<int>(ps.size());
  if (G == 0) return;
  if (G > slots.cap() || slot >= PointerSlots::kSlots)
    throw DeviceError("grouped", "pointer slots too small");
  std::vector<cublasOperation_t> ta(ps.size()), tb(ps.size());
  std::vector<int> m(ps.size()), n(ps.size()), k(ps.size()), lda(ps.size()), ldb(ps.size()), ldc(ps.size()),
      size(ps.size(), 1);
  std::vector<float> alpha(ps.size(), 1.0f), beta(ps.size());
  void** h = slots.host(slot);
  for (int i = 0; i < G; ++i) {
    const Problem& p = ps[static_cast<std::size_t>(i)];
    const auto u = static_cast<std::size_t>(i);
    ta[u] = p.ta;
    tb[u] = p.tb;
    m[u] = p.m;
    n[u] = p.n;
    k[u] = p.k;
    lda[u] = p.lda;
    ldb[u] = p.ldb;
    ldc[u] = p.ldc;
    beta[u] = p.beta;
    h[i] = const_cast<bf16*>(p.A);
    h[G + i] = const_cast<bf16*>(p.B);
    h[2 * G + i] = p.C;
  }
  void** d = slots.dev(slot);
  Gpu& g = gpu();
  CUDA_CHECK(cudaMemcpyAsync(d, h, 3 * static_cast<std::size_t>(G) * sizeof(void*), cudaMemcpyHostToDevice,
                             g.stream));
  CUBLAS_CHECK(cublasGemmGroupedBatchedEx(g.blas, ta.data(), tb.data(), m.data(), n.data(), k.data(),
                                          alpha.data(), reinterpret_cast<const void* const*>(d), CUDA_R_16BF,
                                          lda.data(), reinterpret_cast<const void* const*>(d + G),
                                          CUDA_R_16BF, ldb.data(), beta.data(),
                                          reinterpret_cast<void* const*>(d + 2 * G), CUDA_R_16BF, ldc.data(),
                                          G, size.data(), CUBLAS_COMPUTE_32F));
}

// ---- one MoE layer instance ----

struct Dims {
  int T = 0, H = 0, F = 0, E = 0, kk = 0;
  std::int64_t R() const { return static_cast<std::int64_t>(T) * kk; }
};

class MoeLayer {
 public:
  void setup(const Dims& d, const MoeGens& gens = MoeGens{}) {
    d_ = d;
    if (d.E > kMaxExperts || d.kk > d.E || d.H % 8 != 0)
      throw Unsupported("moe setup", "unsupported layer dimensions");
    const auto T = static_cast<std::size_t>(d.T), H = static_cast<std::size_t>(d.H),
               F = static_cast<std::size_t>(d.F), E = static_cast<std::size_t>(d.E),
               R = static_cast<std::size_t>(d.R());
    reserve_all(T * H, x, out, dout, dx);
    reserve_all(E * H, wg, dwg);
    reserve_all(E * F * H, w1, w3, w2, dw1, dw3, dw2);  // w2 and dw2 are E x H x F
    reserve_all(T * E, logits, dlogits);
    reserve_all(R, topw, topi, ctrl, pos, dw);
    counts.reserve(E);
    offsets.reserve(E + 1);
    reserve_all(R * H, xp, yp, dyp, dxp);
    reserve_all(R * F, h1, h3, act, da, dh1, dh3);
    slots.reserve(2 * d.E);
    if (!h_counts) CUDA_CHECK(cudaMallocHost(&h_counts, sizeof(int) * (kMaxExperts + 1)));
    fill(x.get(), T * H, gens.x);
    fill(wg.get(), E * H, gens.wg);
    fill(w1.get(), E * F * H, gens.w1);
    fill(w3.get(), E * F * H, gens.w3);
    fill(w2.get(), E * H * F, gens.w2);
    fill(dout.get(), T * H, gens.dout);
    host_counts.assign(E, 0);
    host_offsets.assign(E + 1, 0);
  }
  ~MoeLayer() {
    if (h_counts) cudaFreeHost(h_counts);
  }

  void set_assignment(const std::vector<std::int32_t>& idx) {
    CUDA_CHECK(cudaMemcpyAsync(ctrl.get(), idx.data(), idx.size() * sizeof(std::int32_t),
                               cudaMemcpyHostToDevice, gpu().stream));
    CUDA_CHECK(cudaStreamSynchronize(gpu().stream));
  }

  // forward; `controlled` routes by the assignment given to set_assignment, else by the router's top-k
  void forward(bool grouped_impl, bool controlled, const std::function<void()>& mark) {
    Gpu& g = gpu();
    cudaStream_t s = g.stream;
    const Dims& d = d_;
    const int R = static_cast<int>(d.R());
    mark();
    gemm_ex(lin_fwd(d.T, d.H, d.E, x.get(), wg.get(), logits.get()));
    mark();
    topk_softmax_kernel<<<(d.T + 127) / 128, 128, 0, s>>>(logits.get(), d.T, d.E, d.kk, topi.get(),
                                                          topw.get());
    LAUNCH_CHECK("topk_softmax_kernel");
    mark();
    used_ = controlled ? ctrl.get() : topi.get();
    CUDA_CHECK(cudaMemsetAsync(counts.get(), 0, sizeof(int) * static_cast<std::size_t>(d.E), s));
    count_kernel<<<grid_for(static_cast<std::size_t>(R), 256), 256, 0, s>>>(used_, R, counts.get());
    LAUNCH_CHECK("count_kernel");
    offsets_kernel<<<1, 1, 0, s>>>(counts.get(), d.E, offsets.get());
    LAUNCH_CHECK("offsets_kernel");
    positions_kernel<<<d.E, 256, 0, s>>>(used_, R, offsets.get(), pos.get());
    LAUNCH_CHECK("positions_kernel");
    permute_rows_kernel<<<R, 128, 0, s>>>(x.get(), pos.get(), d.kk, d.H, xp.get());
    LAUNCH_CHECK("permute_rows_kernel");
    mark();
    // the host needs the per-expert counts to issue the expert GEMMs: one device-to-host sync
    CUDA_CHECK(cudaMemcpyAsync(h_counts, counts.get(), sizeof(int) * static_cast<std::size_t>(d.E),
                               cudaMemcpyDeviceToHost, s));
    CUDA_CHECK(cudaStreamSynchronize(s));
    for (int e = 0; e < d.E; ++e) {
      host_counts[static_cast<std::size_t>(e)] = h_counts[e];
      host_offsets[static_cast<std::size_t>(e) + 1] = host_offsets[static_cast<std::size_t>(e)] + h_counts[e];
    }
    experts("w1_w3", "fwd", grouped_impl);
    launch_swiglu(h1.get(), h3.get(), act.get(),
                  static_cast<std::size_t>(d.R()) * static_cast<std::size_t>(d.F), s);
    experts("w2", "fwd", grouped_impl);
    mark();
    unpermute_kernel<<<d.T, 128, 0, s>>>(yp.get(), pos.get(), topw.get(), d.kk, d.H, out.get());
    LAUNCH_CHECK("unpermute_kernel");
    mark();
  }

  // backward of the last forward
  void backward(bool grouped_impl, const std::function<void()>& mark) {
    cudaStream_t s = gpu().stream;
    const Dims& d = d_;
    const int R = static_cast<int>(d.R());
    mark();
    unpermute_bwd_kernel<<<R, 128, 0, s>>>(dout.get(), yp.get(), pos.get(), topw.get(), d.kk, d.H, dyp.get(),
                                           dw.get());
    LAUNCH_CHECK("unpermute_bwd_kernel");
    mark();
    experts("w2", "dgrad", grouped_impl);
    launch_swiglu_bwd(da.get(), h1.get(), h3.get(), dh1.get(), dh3.get(),
                      static_cast<std::size_t>(d.R()) * static_cast<std::size_t>(d.F), s);
    experts("w1_w3", "dgrad", grouped_impl);
    mark();
    experts("w2", "wgrad", grouped_impl);
    experts("w1_w3", "wgrad", grouped_impl);
    mark();
    permute_bwd_kernel<<<d.T, 128, 0, s>>>(dxp.get(), pos.get(), d.kk, d.H, dx.get());
    LAUNCH_CHECK("permute_bwd_kernel");
    mark();
    router_bwd_kernel<<<(d.T + 127) / 128, 128, 0, s>>>(topw.get(), dw.get(), used_, d.T, d.E, d.kk,
                                                        dlogits.get());
    LAUNCH_CHECK("router_bwd_kernel");
    gemm_ex(lin_dgrad(d.T, d.H, d.E, dlogits.get(), wg.get(), dx.get(), 1.0f));
    gemm_ex(lin_wgrad(d.T, d.H, d.E, dlogits.get(), x.get(), dwg.get()));
    mark();
  }

  // The expert GEMMs of one projection and pass, for every expert with tokens (host_counts).
  void experts(const std::string& proj, const std::string& pass, bool grouped_impl) {
    const Dims& d = d_;
    const std::size_t H = static_cast<std::size_t>(d.H), F = static_cast<std::size_t>(d.F);
    std::vector<Problem> first, second;  // second: accumulates into what `first` wrote (beta = 1)
    for (int e = 0; e < d.E; ++e) {
      const int c = host_counts[static_cast<std::size_t>(e)];
      const auto o = static_cast<std::size_t>(host_offsets[static_cast<std::size_t>(e)]);
      const std::size_t we = static_cast<std::size_t>(e) * F * H;  // expert e's weight offset (all are F*H)
      if (c == 0) {
        if (pass == "wgrad") {  // no tokens: the expert's weight gradient is zero
          cudaStream_t s = gpu().stream;
          if (proj == "w2") {
            CUDA_CHECK(cudaMemsetAsync(dw2.get() + we, 0, F * H * sizeof(bf16), s));
          } else {
            CUDA_CHECK(cudaMemsetAsync(dw1.get() + we, 0, F * H * sizeof(bf16), s));
            CUDA_CHECK(cudaMemsetAsync(dw3.get() + we, 0, F * H * sizeof(bf16), s));
          }
        }
        continue;
      }
      if (proj == "w1_w3") {  // per expert: in = H, out = F
        if (pass == "fwd") {
          first.push_back(lin_fwd(c, d.H, d.F, xp.get() + o * H, w1.get() + we, h1.get() + o * F));
          first.push_back(lin_fwd(c, d.H, d.F, xp.get() + o * H, w3.get() + we, h3.get() + o * F));
        } else if (pass == "dgrad") {
          first.push_back(lin_dgrad(c, d.H, d.F, dh1.get() + o * F, w1.get() + we, dxp.get() + o * H));
          second.push_back(lin_dgrad(c, d.H, d.F, dh3.get() + o * F, w3.get() + we, dxp.get() + o * H, 1.0f));
        } else {
          first.push_back(lin_wgrad(c, d.H, d.F, dh1.get() + o * F, xp.get() + o * H, dw1.get() + we));
          first.push_back(lin_wgrad(c, d.H, d.F, dh3.get() + o * F, xp.get() + o * H, dw3.get() + we));
        }
      } else {  // w2: in = F, out = H
        if (pass == "fwd") {
          first.push_back(lin_fwd(c, d.F, d.H, act.get() + o * F, w2.get() + we, yp.get() + o * H));
        } else if (pass == "dgrad") {
          first.push_back(lin_dgrad(c, d.F, d.H, dyp.get() + o * H, w2.get() + we, da.get() + o * F));
        } else {
          first.push_back(lin_wgrad(c, d.F, d.H, dyp.get() + o * H, act.get() + o * F, dw2.get() + we));
        }
      }
    }
    if (grouped_impl) {
      // a distinct pointer slot for every grouped call of a forward + backward (0..6): a slot is only
      // rewritten after the stream has been synchronized (between timed samples)
      const int base = pass == "fwd" ? 0 : pass == "dgrad" ? 2 : 5;
      grouped(first, slots, base + (proj == "w2" ? 0 : 1));
      if (!second.empty()) grouped(second, slots, 4);
    } else {
      for (const auto& p : first) gemm_ex(p);
      for (const auto& p : second) gemm_ex(p);
    }
  }

  double expert_flops(const std::string& proj) const {
    double rows = 0;
    for (int c : host_counts) rows += c;
    return 2.0 * (proj == "w1_w3" ? 2 : 1) * rows * d_.H * d_.F;
  }

  Dims d_;
  DevBuf<bf16> x, wg, w1, w3, w2, logits, xp, h1, h3, act, yp, out, dout, dyp, da, dh1, dh3, dxp, dx, dlogits,
      dw1, dw3, dw2, dwg;
  DevBuf<float> topw, dw;
  DevBuf<int> topi, ctrl, counts, offsets, pos;
  PointerSlots slots;
  int* h_counts = nullptr;
  std::vector<int> host_counts, host_offsets;
  const int* used_ = nullptr;
};

const std::function<void()> kNoMark = [] {};

// device -> host on the benchmark stream (a non-blocking stream: plain cudaMemcpy would not wait for it)
template <class T>
void download(T* host, const T* dev, std::size_t n) {
  CUDA_CHECK(cudaMemcpyAsync(host, dev, n * sizeof(T), cudaMemcpyDeviceToHost, gpu().stream));
  CUDA_CHECK(cudaStreamSynchronize(gpu().stream));
}

Check compare(const std::vector<float>& got, const std::vector<float>& want, double rel_atol, double rtol) {
  double mx = 0;
  for (float v : want) mx = std::max(mx, static_cast<double>(std::fabs(v)));
  return check_close(got.data(), want.data(), static_cast<std::int64_t>(want.size()), rel_atol * mx + 1e-30,
                     rtol);
}

// (1) small layer against the CPU reference, router's own routing; `impls`: false = loop, true = grouped
void validate_small(int T, int kk, Report* rep, std::initializer_list<bool> impls = {false, true}) {
  const int H = 256, F = 512, E = 8;
  MoeLayer L;
  L.setup(Dims{T, H, F, E, kk});
  MoeRefProblem p = moe_problem(T, H, F, E, kk);
  for (bool grouped_impl : impls) {
    const std::string name = std::string("moe small T=") + std::to_string(T) + " k=" + std::to_string(kk) +
                             (grouped_impl ? " grouped" : " loop");
    L.forward(grouped_impl, false, kNoMark);
    L.backward(grouped_impl, kNoMark);
    const auto R = static_cast<std::size_t>(T) * kk;
    auto logits = to_host(L.logits.get(), static_cast<std::size_t>(T) * E);
    std::vector<int> gi(R);
    std::vector<float> gw(R), gdw(R);
    download(gi.data(), L.topi.get(), R);
    download(gw.data(), L.topw.get(), R);
    download(gdw.data(), L.dw.get(), R);
    std::vector<std::pair<std::string, Check>> checks;
    checks.emplace_back("router logits", compare(logits, moe_logits_ref(p, true), 1.0 / 128, 1.0 / 64));
    // top-k on the GPU's logits: exact choices, weights to float precision
    MoeRefRouting want_r = moe_route_ref(logits, T, E, kk);
    Check ci;
    for (std::size_t a = 0; a < R; ++a) check_one(ci, static_cast<std::int64_t>(a), gi[a], want_r.idx[a], 0);
    checks.emplace_back("top-k experts", ci);
    checks.emplace_back("top-k weights",
                        check_close(gw.data(), want_r.w.data(), static_cast<std::int64_t>(R), 1e-6, 1e-5));
    MoeRefRouting r{gi, gw};
    MoeRefForward f = moe_forward_ref(p, r, true);
    MoeRefBackward b = moe_backward_ref(p, r, f, true);
    const double at = 1.0 / 64, rt = 1.0 / 32;
    checks.emplace_back("out", compare(to_host(L.out.get(), static_cast<std::size_t>(T) * H), f.out, at, rt));
    checks.emplace_back("dw (routing weights)", compare(gdw, b.dw, at, rt));
    checks.emplace_back("dx", compare(to_host(L.dx.get(), static_cast<std::size_t>(T) * H), b.dX, at, rt));
    checks.emplace_back("dW1",
                        compare(to_host(L.dw1.get(), static_cast<std::size_t>(E) * F * H), b.dW1, at, rt));
    checks.emplace_back("dW3",
                        compare(to_host(L.dw3.get(), static_cast<std::size_t>(E) * F * H), b.dW3, at, rt));
    checks.emplace_back("dW2",
                        compare(to_host(L.dw2.get(), static_cast<std::size_t>(E) * H * F), b.dW2, at, rt));
    checks.emplace_back("dWg", compare(to_host(L.dwg.get(), static_cast<std::size_t>(E) * H), b.dWg, at, rt));
    std::string failed;
    for (const auto& c : checks) {
      if (!c.second.ok) failed += (failed.empty() ? "" : "; ") + c.second.describe(c.first);
    }
    if (rep) rep->push_back(failed.empty() ? "ok: " + name : "FAILED: " + name + ": " + failed);
    if (!failed.empty() && !rep) throw ValidationFailure(name + ": " + failed);
  }
}

// (2) at the benchmark's size, once per shape: the loop implementation's results (the reference the
// grouped one must agree with) and the top-k kernel against the CPU on the real logits.
struct BigRef {
  std::vector<std::int64_t> wpos;
  std::vector<float> out, dx, dw1, dw2;
  std::string failure;  // top-k mismatch
};

BigRef loop_reference(MoeLayer& L) {
  const Dims& d = L.d_;
  const auto T = static_cast<std::size_t>(d.T), H = static_cast<std::size_t>(d.H),
             F = static_cast<std::size_t>(d.F), E = static_cast<std::size_t>(d.E),
             R = static_cast<std::size_t>(d.R());
  BigRef ref;
  // weight gradients are E*F*H (470M for Mixtral): compared at sampled positions
  ref.wpos = sample_positions(static_cast<std::int64_t>(E * F * H), 1 << 17, 78);
  L.forward(false, true, kNoMark);
  L.backward(false, kNoMark);
  ref.out = to_host(L.out.get(), T * H);
  ref.dx = to_host(L.dx.get(), T * H);
  ref.dw1 = sample_to_host(L.dw1.get(), ref.wpos);
  ref.dw2 = sample_to_host(L.dw2.get(), ref.wpos);
  auto logits = to_host(L.logits.get(), T * E);
  std::vector<int> gi(R);
  download(gi.data(), L.topi.get(), R);
  MoeRefRouting want = moe_route_ref(logits, d.T, d.E, d.kk);
  Check ci;
  for (std::size_t a = 0; a < R; ++a) check_one(ci, static_cast<std::int64_t>(a), gi[a], want.idx[a], 0);
  if (!ci.ok) ref.failure = ci.describe("top-k experts");
  return ref;
}

// grouped vs the loop's results: "" when they agree
std::string grouped_vs_loop(MoeLayer& L, const BigRef& ref) {
  const Dims& d = L.d_;
  const auto T = static_cast<std::size_t>(d.T), H = static_cast<std::size_t>(d.H);
  L.forward(true, true, kNoMark);
  L.backward(true, kNoMark);
  std::vector<std::pair<std::string, Check>> checks;
  // Same math, different kernels: each output is a sum of bf16-rounded partial results (per expert pair, per
  // projection) whose rounding can differ by one bf16 ulp (2^-7 of the summand) between the two orders; with
  // summands up to the tensor's largest value that is 2 x 2^-7 of it. 1/256 of the largest value failed
  // 1 element of 33.5M on an H200 (dx at T=8192: 2.3125 vs 2.0625, a one-ulp flip of a summand in [32, 64)).
  const double at = 1.0 / 64, rt = 1.0 / 64;
  checks.emplace_back("out", compare(to_host(L.out.get(), T * H), ref.out, at, rt));
  checks.emplace_back("dx", compare(to_host(L.dx.get(), T * H), ref.dx, at, rt));
  checks.emplace_back("dW1", compare(sample_to_host(L.dw1.get(), ref.wpos), ref.dw1, at, rt));
  checks.emplace_back("dW2", compare(sample_to_host(L.dw2.get(), ref.wpos), ref.dw2, at, rt));
  std::string failed;
  for (const auto& c : checks) {
    if (!c.second.ok)
      failed += (failed.empty() ? "" : "; ") + c.second.describe("loop vs grouped " + c.first);
  }
  return failed;
}

void validate_big(MoeLayer& L) {
  BigRef ref = loop_reference(L);
  std::string failed = grouped_vs_loop(L, ref);
  if (!ref.failure.empty()) failed += (failed.empty() ? "" : "; ") + ref.failure;
  if (!failed.empty()) throw ValidationFailure(failed);
}

}  // namespace

// Each implementation is its own item (issue 17 item 4): a grouped failure (unsupported, out of memory,
// wrong result) loses only the grouped rows. The CPU-reference check of the small layer runs once per
// implementation and run; the big-size loop reference once per shape.
void bench_moe(Env& env) {
  const Plan& plan = env.plan();
  MoeGate gate;
  MoeLayer L;
  for (const MoeSpec& spec : plan.moe) {
    const MoeModel& m = spec.model;
    const Dims d{static_cast<int>(spec.tokens), m.hidden, m.ffn, m.experts, spec.active()};
    auto weights = distribution_weights(spec.distribution, m.experts);
    if (!weights.ok()) throw Unsupported("distribution_weights", weights.error().to_string());
    const std::vector<std::int64_t> counts = expert_counts(spec.tokens, d.kk, weights.value());
    gate.new_shape();
    bool ready = false;
    BigRef ref;
    MoeGate::Hooks hooks;
    hooks.small_check = [](bool grouped_impl) -> std::string {
      try {
        validate_small(100, 2, nullptr, {grouped_impl});
        validate_small(40, 8, nullptr, {grouped_impl});
      } catch (const ValidationFailure& e) {
        return e.what();
      }
      return "";
    };
    hooks.loop_reference = [&]() -> std::string {
      if (!ready) {
        L.setup(d);
        L.set_assignment(assign_experts(spec.tokens, d.kk, counts, 77));
        ready = true;
      }
      ref = loop_reference(L);
      return ref.failure;
    };
    hooks.grouped_agrees = [&]() -> std::string { return grouped_vs_loop(L, ref); };
    auto prepare = [&](bool grouped_impl) { gate.prepare(grouped_impl, hooks); };
    auto row_common = [&](auto& r) {
      r.model = m.name;
      r.routing = spec.routing;
      r.distribution = spec.distribution;
      r.experts = m.experts;
      r.top_k = d.kk;
      r.tokens = spec.tokens;
    };
    for (bool grouped_impl : {false, true}) {
      const std::string impl = grouped_impl ? "grouped" : "loop";
      run_item(env, spec.label() + ": layer forward + backward, " + impl, [&] {
        prepare(grouped_impl);
        StagedTiming f = time_staged(
            plan.timing, 5, [&](const std::function<void()>& mark) { L.forward(grouped_impl, true, mark); });
        StagedTiming b = time_staged(
            plan.timing, 5, [&](const std::function<void()>& mark) { L.backward(grouped_impl, mark); });
        for (int dir = 0; dir < 2; ++dir) {
          const StagedTiming& t = dir == 0 ? f : b;
          MoeLayerRow r;
          row_common(r);
          r.direction = dir == 0 ? "forward" : "backward";
          r.impl = impl;
          r.hidden = m.hidden;
          r.ffn = m.ffn;
          r.time_us = micros_stat(t.total);
          r.iterations = t.total.n;
          const std::vector<const char*> names =
              dir == 0 ? std::vector<const char*>{"router", "topk", "permute", "experts", "unpermute"}
                       : std::vector<const char*>{"unpermute", "experts_dgrad", "experts_wgrad", "permute",
                                                  "router"};
          for (std::size_t st = 0; st < names.size(); ++st)
            r.stages_us.emplace_back(names[st], t.stage_median_s[st] * 1e6);
          env.rows().moe_layer.push_back(r);
        }
      });
    }
    for (bool grouped_impl : {false, true}) {
      const std::string impl = grouped_impl ? "grouped" : "loop";
      run_item(env, spec.label() + ": expert GEMMs, " + impl, [&] {
        prepare(grouped_impl);
        for (const char* proj : {"w1_w3", "w2"}) {
          for (const char* pass : {"fwd", "dgrad", "wgrad"}) {
            Summary t = time_op(plan.timing, [&] { L.experts(proj, pass, grouped_impl); });
            ExpertGemmRow r;
            row_common(r);
            r.dtype = "bf16";
            r.proj = proj;
            r.pass = pass;
            r.impl = impl;
            r.n = r.proj == "w1_w3" ? m.ffn : m.hidden;
            r.k = r.proj == "w1_w3" ? m.hidden : m.ffn;
            r.tokens_per_expert.assign(L.host_counts.begin(), L.host_counts.end());
            r.time_us = micros_stat(t);
            r.tflops_median = L.expert_flops(proj) / t.median / 1e12;
            r.iterations = t.n;
            env.rows().expert_gemm.push_back(r);
          }
        }
      });
    }
  }
}

void selftest_moe(Report& rep) {
  validate_small(100, 2, &rep);
  validate_small(40, 8, &rep);
  validate_small(3, 2, &rep);  // most experts get no token
  // a real-size layer with a skewed assignment: loop and grouped agree
  MoeLayer L;
  const Dims d{512, 4096, 14336, 8, 2};
  try {
    L.setup(d);
    L.set_assignment(
        assign_experts(512, 2, expert_counts(512, 2, distribution_weights("skewed", 8).value()), 5));
    validate_big(L);
    rep.push_back("ok: moe mixtral T=512 skewed: loop and grouped agree");
  } catch (const ValidationFailure& e) {
    rep.push_back(std::string("FAILED: moe mixtral T=512 skewed: ") + e.what());
  } catch (const OutOfMemory&) {
    rep.push_back("ok: moe mixtral T=512 skewed: skipped (device memory)");
  }
}

}  // namespace ftcost::calib
