// Causal self-attention forward and backward (issue 38), bf16, grouped-query, Q/K/V/O [batch, seq, heads,
// dim].
//
// cuDNN's SDPA needs the cuDNN frontend (a C++ header library that builds the fused attention graph), which
// this toolchain does not have (CUDA 13.0 ships cudnn*.h, the backend API, and no cudnn_frontend.h), so the
// kernels here are the calibrator's own, in FlashAttention-2's structure (Dao, 2023; Algorithms 1 and 2):
//   forward   one block per 64 query rows of one head, 4 warps of 16 rows; key/value tiles of 64 in shared
//             memory; S = Q K^T and O += P V on tensor cores through WMMA (bf16 in, fp32 accumulate); an
//             online softmax in fp32 (running max and sum per row, O rescaled); P rounded to bf16 for P V as
//             FlashAttention does; the log-sum-exp of each row is written for the backward.
//   backward  D = rowsum(dO * O) first; then one block per 64 keys of one KV head (4 warps of 16 keys)
//   looping
//             over the heads that share it and the query tiles of 32 at or after its keys: S^T, P^T =
//             exp(S^T scale - lse), dV += P^T dO, dP^T = V dO^T, dS^T = P^T (dP^T - D), dK += dS^T Q, and
//             dQ += dS K added into an fp32 buffer with atomics; dQ and dK scaled at the end.
// It is correct (checked below against attention_fwd_ref / attention_dq_ref / attention_dkv_ref) but not
// tuned: no cp.async pipelining, no Hopper wgmma; flash-attn 2/3 and cuDNN run several times faster on the
// same GPU. Its rows say so in `impl`, and docs/calibrate.md tells the step model's reader to treat them as a
// lower bound. FLOPs: FlashAttention-2's causal count (calibration.hpp, attention_causal_flops).
#include "common.cuh"
#include "families.hpp"

#include <algorithm>
#include <cmath>
#include <mma.h>

namespace ftcost::calib {

namespace {

using namespace nvcuda;

const char* const kImpl = "ftcost own tiled FA2-style WMMA kernel (not flash-attn/cuDNN; slower)";

constexpr int kWarps = 4;
constexpr int kThreads = 32 * kWarps;
constexpr int kBr = 64;  // forward: query rows per block
constexpr int kBc = 64;  // forward: keys per tile; backward: keys per block
constexpr int kBq = 32;  // backward: query rows per tile
constexpr int kPad = 8;  // bf16 elements of padding per shared-memory row (16 bytes)

struct Dims {
  int batch, heads, kv_heads, seq;
  float scale;
};

using FragAcc = wmma::fragment<wmma::accumulator, 16, 16, 16, float>;
using FragArow = wmma::fragment<wmma::matrix_a, 16, 16, 16, bf16, wmma::row_major>;
using FragAcol = wmma::fragment<wmma::matrix_a, 16, 16, 16, bf16, wmma::col_major>;
using FragBrow = wmma::fragment<wmma::matrix_b, 16, 16, 16, bf16, wmma::row_major>;
using FragBcol = wmma::fragment<wmma::matrix_b, 16, 16, 16, bf16, wmma::col_major>;

// rows [row0, row0 + R) of a [seq, stride] bf16 tensor (one head's dim columns at `src`) into dst[R][D +
// kPad]; rows at or past seq are zero.
template <int D, int R>
__device__ void load_rows(bf16* dst, const bf16* src, int row0, int seq, std::size_t stride) {
  constexpr int kVecs = D / 8;
  for (int e = threadIdx.x; e < R * kVecs; e += kThreads) {
    const int r = e / kVecs, c = (e % kVecs) * 8;
    uint4 v = make_uint4(0, 0, 0, 0);
    if (row0 + r < seq)
      v = *reinterpret_cast<const uint4*>(src + static_cast<std::size_t>(row0 + r) * stride + c);
    *reinterpret_cast<uint4*>(dst + r * (D + kPad) + c) = v;
  }
}

// One warp's strip of an A B^T product through 16x16x16 WMMA tiles: scratch[16][Cols] (row stride lds) = the
// 16 rows of A at `a` times the transpose of B's Cols rows at `b`, both D wide with row stride ld.
template <int D, int Cols>
__device__ void warp_abt(float* scratch, int lds, const bf16* a, const bf16* b, int ld) {
  for (int j = 0; j < Cols / 16; ++j) {
    FragAcc s;
    wmma::fill_fragment(s, 0.f);
    for (int kk = 0; kk < D / 16; ++kk) {
      FragArow fa;
      FragBcol fb;
      wmma::load_matrix_sync(fa, a + kk * 16, ld);
      wmma::load_matrix_sync(fb, b + j * 16 * ld + kk * 16, ld);
      wmma::mma_sync(s, fa, fb, s);
    }
    wmma::store_matrix_sync(scratch + j * 16, s, lds, wmma::mem_row_major);
  }
}

// One warp's strip of an A B product accumulated through 16x16x16 WMMA tiles: acc[t] += the 16 rows of A at
// `a` (K wide, row stride lda) times columns [16 t, 16 t + 16) of B's K rows at `b` (D wide, row stride ldb).
template <int D, int K>
__device__ void warp_ab_acc(FragAcc (&acc)[D / 16], const bf16* a, int lda, const bf16* b, int ldb) {
  for (int t = 0; t < D / 16; ++t) {
    for (int kk = 0; kk < K / 16; ++kk) {
      FragArow fa;
      FragBrow fb;
      wmma::load_matrix_sync(fa, a + kk * 16, lda);
      wmma::load_matrix_sync(fb, b + kk * 16 * ldb + t * 16, ldb);
      wmma::mma_sync(acc[t], fa, fb, acc[t]);
    }
  }
}

template <int D>
constexpr std::size_t fwd_smem_bytes() {
  return sizeof(bf16) * (kBr + 2 * kBc) * (D + kPad) + sizeof(float) * kBr * (kBc + 4) +
         sizeof(bf16) * kBr * (kBc + kPad) + sizeof(float) * 3 * kBr;
}

template <int D>
__global__ void __launch_bounds__(kThreads)
    attn_fwd_kernel(const bf16* __restrict__ q, const bf16* __restrict__ k, const bf16* __restrict__ v,
                    bf16* __restrict__ o, float* __restrict__ lse, Dims a) {
  constexpr int LD = D + kPad, LDS = kBc + 4, LDP = kBc + kPad;
  extern __shared__ __align__(128) unsigned char smem[];
  bf16* sQ = reinterpret_cast<bf16*>(smem);
  bf16* sK = sQ + kBr * LD;
  bf16* sV = sK + kBc * LD;
  float* sS = reinterpret_cast<float*>(sV + kBc * LD);
  bf16* sP = reinterpret_cast<bf16*>(sS + kBr * LDS);
  float* sM = reinterpret_cast<float*>(sP + kBr * LDP);
  float* sL = sM + kBr;
  float* sA = sL + kBr;

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int q0 = (gridDim.x - 1 - blockIdx.x) * kBr;  // the longest rows first
  const int h = blockIdx.y, b = blockIdx.z, g = h / (a.heads / a.kv_heads);
  const std::size_t qs = static_cast<std::size_t>(a.heads) * D, ks = static_cast<std::size_t>(a.kv_heads) * D;
  const bf16* qb = q + static_cast<std::size_t>(b) * a.seq * qs + static_cast<std::size_t>(h) * D;
  const bf16* kb = k + static_cast<std::size_t>(b) * a.seq * ks + static_cast<std::size_t>(g) * D;
  const bf16* vb = v + static_cast<std::size_t>(b) * a.seq * ks + static_cast<std::size_t>(g) * D;
  load_rows<D, kBr>(sQ, qb, q0, a.seq, qs);
  if (threadIdx.x < kBr) {
    sM[threadIdx.x] = -INFINITY;
    sL[threadIdx.x] = 0.f;
  }
  // which row of the warp's 16 each accumulator element holds: a fragment loaded from a matrix of row numbers
  float* scratch = sS + warp * 16 * LDS;
  for (int e = lane; e < 256; e += 32) scratch[(e / 16) * LDS + e % 16] = static_cast<float>(e / 16);
  __syncwarp();
  FragAcc rowid;
  wmma::load_matrix_sync(rowid, scratch, LDS, wmma::mem_row_major);
  __syncwarp();
  FragAcc acc[D / 16];
  for (int t = 0; t < D / 16; ++t) wmma::fill_fragment(acc[t], 0.f);

  const int last_key = min(q0 + kBr, a.seq) - 1;
  for (int k0 = 0; k0 <= last_key; k0 += kBc) {
    __syncthreads();  // the previous tile is no longer read (and sQ, sM, sL are ready)
    load_rows<D, kBc>(sK, kb, k0, a.seq, ks);
    load_rows<D, kBc>(sV, vb, k0, a.seq, ks);
    __syncthreads();
    warp_abt<D, kBc>(scratch, LDS, sQ + warp * 16 * LD, sK, LD);  // S = Q K^T for the warp's 16 rows
    __syncwarp();
    {  // online softmax: two lanes per row, 32 columns each
      const int r = lane >> 1, c0 = (lane & 1) * (kBc / 2), R = warp * 16 + r, qi = q0 + R;
      float* srow = scratch + r * LDS;
      float mx = -INFINITY;
      for (int c = c0; c < c0 + kBc / 2; ++c) {
        const int kj = k0 + c;
        const float sv = (kj <= qi && kj < a.seq) ? srow[c] * a.scale : -INFINITY;
        srow[c] = sv;
        mx = fmaxf(mx, sv);
      }
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      const float m_old = sM[R], m_new = fmaxf(m_old, mx);  // finite: key 0 is in every row's first tile
      float sum = 0.f;
      for (int c = c0; c < c0 + kBc / 2; ++c) {
        const float p = srow[c] == -INFINITY ? 0.f : expf(srow[c] - m_new);
        sP[R * LDP + c] = __float2bfloat16_rn(p);
        sum += p;
      }
      sum += __shfl_xor_sync(0xffffffffu, sum, 1);
      __syncwarp();
      if ((lane & 1) == 0) {
        const float alpha = expf(m_old - m_new);  // 0 on the first tile (m_old = -inf)
        sA[R] = alpha;
        sL[R] = sL[R] * alpha + sum;
        sM[R] = m_new;
      }
    }
    __syncwarp();
    for (int t = 0; t < D / 16; ++t)
      for (int i = 0; i < acc[t].num_elements; ++i)
        acc[t].x[i] *= sA[warp * 16 + static_cast<int>(rowid.x[i])];
    warp_ab_acc<D, kBc>(acc, sP + warp * 16 * LDP, LDP, sV, LD);  // O_w = alpha O_w + P_w V
  }
  __syncwarp();
  for (int t = 0; t < D / 16; ++t) {  // O = acc / l, through the warp's scratch
    for (int i = 0; i < acc[t].num_elements; ++i) acc[t].x[i] /= sL[warp * 16 + static_cast<int>(rowid.x[i])];
    wmma::store_matrix_sync(scratch, acc[t], LDS, wmma::mem_row_major);
    __syncwarp();
    for (int e = lane; e < 256; e += 32) {
      const int r = e / 16, c = e % 16, qi = q0 + warp * 16 + r;
      if (qi < a.seq)
        o[(static_cast<std::size_t>(b) * a.seq + qi) * qs + static_cast<std::size_t>(h) * D + t * 16 + c] =
            __float2bfloat16_rn(scratch[r * LDS + c]);
    }
    __syncwarp();
  }
  if (lane < 16) {
    const int R = warp * 16 + lane, qi = q0 + R;
    if (qi < a.seq) lse[(static_cast<std::size_t>(b) * a.heads + h) * a.seq + qi] = sM[R] + logf(sL[R]);
  }
}

// D[b, h, i] = sum_d dO * O, one warp per row.
template <int D>
__global__ void attn_bwd_dot_kernel(const bf16* __restrict__ o, const bf16* __restrict__ dout,
                                    float* __restrict__ dd, Dims a) {
  const std::size_t rows = static_cast<std::size_t>(a.batch) * a.seq * a.heads;
  const int lane = threadIdx.x % 32;
  for (std::size_t w = (blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x) / 32; w < rows;
       w += static_cast<std::size_t>(gridDim.x) * blockDim.x / 32) {
    float s = 0.f;
    for (int d = lane; d < D; d += 32)
      s += __bfloat162float(o[w * D + d]) * __bfloat162float(dout[w * D + d]);
    for (int off = 16; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffffu, s, off);
    if (lane == 0) {  // w = (b seq + t) heads + h  ->  [b, h, t]
      const std::size_t h = w % a.heads, bt = w / a.heads, t = bt % a.seq, b = bt / a.seq;
      dd[(b * a.heads + h) * a.seq + t] = s;
    }
  }
}

__global__ void attn_dq_convert_kernel(const float* __restrict__ acc, bf16* __restrict__ dq, std::size_t n,
                                       float scale) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    dq[i] = __float2bfloat16_rn(acc[i] * scale);
}

template <int D>
constexpr std::size_t bwd_smem_bytes() {
  return sizeof(bf16) * (2 * kBc + 2 * kBq) * (D + kPad) + sizeof(float) * kBc * (kBq + 4) +
         sizeof(bf16) * 2 * kBc * (kBq + kPad) + sizeof(float) * 2 * kBq;
}

template <int D>
__global__ void __launch_bounds__(kThreads)
    attn_bwd_kernel(const bf16* __restrict__ q, const bf16* __restrict__ k, const bf16* __restrict__ v,
                    const bf16* __restrict__ dout, const float* __restrict__ lse,
                    const float* __restrict__ dd, float* __restrict__ dq_acc, bf16* __restrict__ dk,
                    bf16* __restrict__ dv, Dims a) {
  constexpr int LD = D + kPad, LDS = kBq + 4, LDP = kBq + kPad;
  extern __shared__ __align__(128) unsigned char smem[];
  bf16* sK = reinterpret_cast<bf16*>(smem);
  bf16* sV = sK + kBc * LD;
  bf16* sQ = sV + kBc * LD;
  bf16* sdO = sQ + kBq * LD;
  float* sS = reinterpret_cast<float*>(sdO + kBq * LD);
  bf16* sP = reinterpret_cast<bf16*>(sS + kBc * LDS);
  bf16* sdS = sP + kBc * LDP;
  float* sLse = reinterpret_cast<float*>(sdS + kBc * LDP);
  float* sD = sLse + kBq;

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int k0 = blockIdx.x * kBc, g = blockIdx.y, b = blockIdx.z, group = a.heads / a.kv_heads;
  const std::size_t qs = static_cast<std::size_t>(a.heads) * D, ks = static_cast<std::size_t>(a.kv_heads) * D;
  const std::size_t kvoff = static_cast<std::size_t>(b) * a.seq * ks + static_cast<std::size_t>(g) * D;
  load_rows<D, kBc>(sK, k + kvoff, k0, a.seq, ks);
  load_rows<D, kBc>(sV, v + kvoff, k0, a.seq, ks);
  float* scratch = sS + warp * 16 * LDS;
  FragAcc dK[D / 16], dV[D / 16];
  for (int t = 0; t < D / 16; ++t) {
    wmma::fill_fragment(dK[t], 0.f);
    wmma::fill_fragment(dV[t], 0.f);
  }
  for (int h = g * group; h < (g + 1) * group; ++h) {
    const std::size_t qoff = static_cast<std::size_t>(b) * a.seq * qs + static_cast<std::size_t>(h) * D;
    const std::size_t row_stat = (static_cast<std::size_t>(b) * a.heads + h) * a.seq;
    for (int q0 = (k0 / kBq) * kBq; q0 < a.seq; q0 += kBq) {
      __syncthreads();  // the previous tile is no longer read (and sK, sV are ready)
      load_rows<D, kBq>(sQ, q + qoff, q0, a.seq, qs);
      load_rows<D, kBq>(sdO, dout + qoff, q0, a.seq, qs);
      if (threadIdx.x < kBq) {
        const int qi = q0 + threadIdx.x;
        sLse[threadIdx.x] = qi < a.seq ? lse[row_stat + qi] : 0.f;
        sD[threadIdx.x] = qi < a.seq ? dd[row_stat + qi] : 0.f;
      }
      __syncthreads();
      warp_abt<D, kBq>(scratch, LDS, sK + warp * 16 * LD, sQ, LD);  // S^T = K_w Q^T
      __syncwarp();
      for (int e = lane; e < 16 * kBq; e += 32) {  // P^T
        const int r = e / kBq, c = e % kBq, key = k0 + warp * 16 + r, qi = q0 + c;
        const float p = (key <= qi && qi < a.seq) ? expf(scratch[r * LDS + c] * a.scale - sLse[c]) : 0.f;
        sP[(warp * 16 + r) * LDP + c] = __float2bfloat16_rn(p);
      }
      __syncwarp();
      warp_ab_acc<D, kBq>(dV, sP + warp * 16 * LDP, LDP, sdO, LD);   // dV_w += P^T_w dO
      warp_abt<D, kBq>(scratch, LDS, sV + warp * 16 * LD, sdO, LD);  // dP^T = V_w dO^T
      __syncwarp();
      for (int e = lane; e < 16 * kBq; e += 32) {  // dS^T = P^T (dP^T - D)
        const int r = e / kBq, c = e % kBq, R = warp * 16 + r;
        const float p = __bfloat162float(sP[R * LDP + c]);
        sdS[R * LDP + c] = __float2bfloat16_rn(p * (scratch[r * LDS + c] - sD[c]));
      }
      __syncwarp();
      warp_ab_acc<D, kBq>(dK, sdS + warp * 16 * LDP, LDP, sQ, LD);  // dK_w += dS^T_w Q
      __syncthreads();                                              // every warp's dS^T rows are written
      for (int tile = warp; tile < (kBq / 16) * (D / 16);
           tile += kWarps) {  // dQ += dS K, into fp32 by atomics
        const int i = tile % (kBq / 16), t = tile / (kBq / 16);
        FragAcc s;
        wmma::fill_fragment(s, 0.f);
        for (int kk = 0; kk < kBc / 16; ++kk) {
          FragAcol sa;  // dS = (dS^T)^T: column-major view of sdS
          FragBrow kf;
          wmma::load_matrix_sync(sa, sdS + kk * 16 * LDP + i * 16, LDP);
          wmma::load_matrix_sync(kf, sK + kk * 16 * LD + t * 16, LD);
          wmma::mma_sync(s, sa, kf, s);
        }
        wmma::store_matrix_sync(scratch, s, LDS, wmma::mem_row_major);
        __syncwarp();
        for (int e = lane; e < 256; e += 32) {
          const int r = e / 16, c = e % 16, qi = q0 + i * 16 + r;
          if (qi < a.seq)
            atomicAdd(dq_acc + (static_cast<std::size_t>(b) * a.seq + qi) * qs +
                          static_cast<std::size_t>(h) * D + t * 16 + c,
                      scratch[r * LDS + c]);
        }
        __syncwarp();
      }
    }
  }
  __syncthreads();
  for (int t = 0; t < D / 16; ++t) {  // dK (scaled) and dV rows of the warp's 16 keys
    for (int which = 0; which < 2; ++which) {
      FragAcc& f = which == 0 ? dK[t] : dV[t];
      if (which == 0)
        for (int i = 0; i < f.num_elements; ++i) f.x[i] *= a.scale;
      wmma::store_matrix_sync(scratch, f, LDS, wmma::mem_row_major);
      __syncwarp();
      bf16* out = which == 0 ? dk : dv;
      for (int e = lane; e < 256; e += 32) {
        const int r = e / 16, c = e % 16, key = k0 + warp * 16 + r;
        if (key < a.seq)
          out[kvoff + static_cast<std::size_t>(key) * ks + t * 16 + c] =
              __float2bfloat16_rn(scratch[r * LDS + c]);
      }
      __syncwarp();
    }
  }
}

struct AttnBufs {
  DevBuf<bf16> q, k, v, o, dout, dq, dk, dv;
  DevBuf<float> lse, dd, dq_acc;
  void prepare(const AttnProblem& p) {
    const auto t = static_cast<std::size_t>(p.batch) * static_cast<std::size_t>(p.seq);
    const std::size_t nq = t * static_cast<std::size_t>(p.heads * p.dim),
                      nk = t * static_cast<std::size_t>(p.kv_heads * p.dim),
                      nr = t * static_cast<std::size_t>(p.heads);
    q.reserve(nq), o.reserve(nq), dout.reserve(nq), dq.reserve(nq), dq_acc.reserve(nq);
    k.reserve(nk), v.reserve(nk), dk.reserve(nk), dv.reserve(nk);
    lse.reserve(nr), dd.reserve(nr);
    fill(q.get(), nq, p.gq);
    fill(k.get(), nk, p.gk);
    fill(v.get(), nk, p.gv);
    fill(dout.get(), nq, p.gdo);
  }
};

Dims dims_of(const AttnProblem& p) {
  return Dims{p.batch, p.heads, p.kv_heads, static_cast<int>(p.seq), static_cast<float>(p.scale())};
}

template <int D>
void run_fwd_d(AttnBufs& bb, const AttnProblem& p) {
  const std::size_t smem = fwd_smem_bytes<D>();
  CUDA_CHECK(cudaFuncSetAttribute(attn_fwd_kernel<D>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  static_cast<int>(smem)));
  const dim3 grid(static_cast<unsigned>((p.seq + kBr - 1) / kBr), static_cast<unsigned>(p.heads),
                  static_cast<unsigned>(p.batch));
  attn_fwd_kernel<D><<<grid, kThreads, smem, gpu().stream>>>(bb.q.get(), bb.k.get(), bb.v.get(), bb.o.get(),
                                                             bb.lse.get(), dims_of(p));
  LAUNCH_CHECK("attn_fwd_kernel");
}

template <int D>
void run_bwd_d(AttnBufs& bb, const AttnProblem& p) {
  cudaStream_t s = gpu().stream;
  const Dims a = dims_of(p);
  const std::size_t nq =
      static_cast<std::size_t>(p.batch) * static_cast<std::size_t>(p.seq) * p.heads * p.dim;
  CUDA_CHECK(cudaMemsetAsync(bb.dq_acc.get(), 0, nq * sizeof(float), s));
  const std::size_t rows = nq / static_cast<std::size_t>(p.dim);
  attn_bwd_dot_kernel<D><<<grid_for(rows * 32, 256), 256, 0, s>>>(bb.o.get(), bb.dout.get(), bb.dd.get(), a);
  LAUNCH_CHECK("attn_bwd_dot_kernel");
  const std::size_t smem = bwd_smem_bytes<D>();
  CUDA_CHECK(cudaFuncSetAttribute(attn_bwd_kernel<D>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  static_cast<int>(smem)));
  const dim3 grid(static_cast<unsigned>((p.seq + kBc - 1) / kBc), static_cast<unsigned>(p.kv_heads),
                  static_cast<unsigned>(p.batch));
  attn_bwd_kernel<D><<<grid, kThreads, smem, s>>>(bb.q.get(), bb.k.get(), bb.v.get(), bb.dout.get(),
                                                  bb.lse.get(), bb.dd.get(), bb.dq_acc.get(), bb.dk.get(),
                                                  bb.dv.get(), a);
  LAUNCH_CHECK("attn_bwd_kernel");
  attn_dq_convert_kernel<<<grid_for(nq, 256), 256, 0, s>>>(bb.dq_acc.get(), bb.dq.get(), nq, a.scale);
  LAUNCH_CHECK("attn_dq_convert_kernel");
}

void check_supported(const AttnProblem& p) {
  if (p.dim != 64 && p.dim != 128) throw Unsupported("attention", "head_dim must be 64 or 128");
  if (p.heads % p.kv_heads != 0) throw Unsupported("attention", "kv_heads must divide heads");
  const std::size_t need = std::max(p.dim == 64 ? fwd_smem_bytes<64>() : fwd_smem_bytes<128>(),
                                    p.dim == 64 ? bwd_smem_bytes<64>() : bwd_smem_bytes<128>());
  if (need > gpu().prop.sharedMemPerBlockOptin)
    throw Unsupported("attention", "needs " + std::to_string(need) +
                                       " bytes of shared memory per block, the GPU has " +
                                       std::to_string(gpu().prop.sharedMemPerBlockOptin));
}

void run_attention(AttnBufs& bb, const AttnProblem& p, bool fwd) {
  if (fwd)
    p.dim == 64 ? run_fwd_d<64>(bb, p) : run_fwd_d<128>(bb, p);
  else
    p.dim == 64 ? run_bwd_d<64>(bb, p) : run_bwd_d<128>(bb, p);
}

// Positions (flat indices of [b, t, h, d]) of `rows` (b, t, h) triples, every dimension.
std::vector<std::int64_t> row_positions(const AttnProblem& p, int b, std::int64_t t, int h, int nh) {
  std::vector<std::int64_t> pos;
  for (int d = 0; d < p.dim; ++d) pos.push_back(static_cast<std::int64_t>(p.index(b, t, h, d, nh)));
  return pos;
}

void check_row(Check& c, const std::vector<std::int64_t>& pos, const std::vector<float>& got,
               const std::vector<double>& want, const std::vector<double>& abs) {
  for (std::size_t d = 0; d < want.size(); ++d)
    check_one(c, pos[d], got[d], want[d], 1e-6 + std::ldexp(abs[d], -6) + std::fabs(want[d]) / 128);
}

struct RowPick {
  int b, h;
  std::int64_t t;
};

// Rows to check: every (b, head, t) when `all`, else corners and a few others.
std::vector<RowPick> pick_rows(const AttnProblem& p, int nh, bool all, std::uint32_t seed) {
  std::vector<RowPick> v;
  if (all) {
    for (int b = 0; b < p.batch; ++b)
      for (int h = 0; h < nh; ++h)
        for (std::int64_t t = 0; t < p.seq; ++t) v.push_back({b, h, t});
    return v;
  }
  const std::int64_t n = static_cast<std::int64_t>(p.batch) * nh * p.seq;
  for (std::int64_t x : sample_positions(n, 5, seed))
    v.push_back({static_cast<int>(x / (nh * p.seq)), static_cast<int>((x / p.seq) % nh), x % p.seq});
  return v;
}

void validate_fwd(AttnBufs& bb, const AttnProblem& p, bool all) {
  Check c;
  for (const RowPick& r : pick_rows(p, p.heads, all, 75)) {
    const AttnRowRef want = attention_fwd_ref(p, r.b, r.h, r.t);
    const auto pos = row_positions(p, r.b, r.t, r.h, p.heads);
    check_row(c, pos, sample_to_host(bb.o.get(), pos), want.out, want.abs);
    const std::int64_t li = (static_cast<std::int64_t>(r.b) * p.heads + r.h) * p.seq + r.t;
    check_one(c, li, sample_to_host(bb.lse.get(), {li})[0], want.lse, 1e-4 * (1.0 + std::fabs(want.lse)));
  }
  if (!c.ok) throw ValidationFailure(c.describe("attention forward"));
}

void validate_bwd(AttnBufs& bb, const AttnProblem& p, bool all) {
  Check c;
  for (const RowPick& r : pick_rows(p, p.heads, all, 76)) {
    std::vector<double> abs;
    const std::vector<double> want = attention_dq_ref(p, r.b, r.h, r.t, &abs);
    const auto pos = row_positions(p, r.b, r.t, r.h, p.heads);
    check_row(c, pos, sample_to_host(bb.dq.get(), pos), want, abs);
  }
  // dK/dV rows: every one when `all` and short, else the last keys (their reference is cheap) and key 0 when
  // the sequence is short
  std::vector<RowPick> kv;
  if (all && p.seq <= 96) {
    kv = pick_rows(p, p.kv_heads, true, 0);
  } else {
    for (std::int64_t t :
         {p.seq - 1, p.seq - 2, p.seq - 17, p.seq > 200 ? std::int64_t{-1} : std::int64_t{0}})
      if (t >= 0) kv.push_back({p.batch - 1, p.kv_heads - 1, t});
  }
  for (const RowPick& r : kv) {
    const AttnKvRef want = attention_dkv_ref(p, r.b, r.h, r.t);
    const auto pos = row_positions(p, r.b, r.t, r.h, p.kv_heads);
    check_row(c, pos, sample_to_host(bb.dk.get(), pos), want.dk, want.abs_dk);
    check_row(c, pos, sample_to_host(bb.dv.get(), pos), want.dv, want.abs_dv);
  }
  if (!c.ok) throw ValidationFailure(c.describe("attention backward"));
}

// Forward then backward on fresh inputs, each checked.
void validate(AttnBufs& bb, const AttnProblem& p, bool all) {
  check_supported(p);
  bb.prepare(p);
  const auto t = static_cast<std::size_t>(p.batch) * static_cast<std::size_t>(p.seq);
  CUDA_CHECK(cudaMemsetAsync(bb.o.get(), 0x7F, t * p.heads * p.dim * sizeof(bf16), gpu().stream));
  run_attention(bb, p, true);
  validate_fwd(bb, p, all);
  CUDA_CHECK(cudaMemsetAsync(bb.dk.get(), 0x7F, t * p.kv_heads * p.dim * sizeof(bf16), gpu().stream));
  CUDA_CHECK(cudaMemsetAsync(bb.dv.get(), 0x7F, t * p.kv_heads * p.dim * sizeof(bf16), gpu().stream));
  run_attention(bb, p, false);
  validate_bwd(bb, p, all);
}

// The benchmark's and the self-test's problems: the spec's shape, the reference's default inputs.
AttnProblem problem_of(const AttentionSpec& s) {
  AttnProblem p;
  p.batch = s.batch;
  p.heads = s.heads;
  p.kv_heads = s.kv_heads;
  p.dim = s.head_dim;
  p.seq = s.seq_len;
  return p;
}

}  // namespace

void bench_attention(Env& env) {
  AttnBufs bb;
  for (const AttentionSpec& s : env.plan().attention) {
    const AttnProblem p = problem_of(s);
    bool checked = false;
    for (bool fwd : {true, false}) {
      run_item(env, s.label() + (fwd ? " fwd" : " bwd"), [&] {
        if (!checked) validate(bb, p, false);  // both directions
        checked = true;
        run_attention(bb, p, true);  // the backward reads O and the log-sum-exp
        Summary t = time_op(env.plan().timing, [&] { run_attention(bb, p, fwd); });
        AttentionRow r;
        r.direction = fwd ? "fwd" : "bwd";
        r.impl = kImpl;
        r.dtype = "bf16";
        r.causal = true;
        r.model = s.model;
        r.batch = s.batch;
        r.heads = s.heads;
        r.kv_heads = s.kv_heads;
        r.head_dim = s.head_dim;
        r.seq_len = s.seq_len;
        r.flops = attention_causal_flops(r.direction, r.batch, r.heads, r.seq_len, r.head_dim);
        r.tflops = rate_stat(t, r.flops, 1e12);
        r.time_us_median = t.median * 1e6;
        r.iterations = t.n;
        env.rows().attention.push_back(r);
      });
    }
  }
}

void selftest_attention(Report& rep) {
  AttnBufs bb;
  struct Case {
    AttentionSpec shape;  // no model: only the shape
    bool all;
  };
  // odd lengths (partial tiles), grouped-query, both head sizes; the last one at a length where only samples
  // are checked, as in the benchmark
  for (const Case& cs : {Case{{"", 1, 2, 1, 64, 77}, true}, Case{{"", 2, 4, 2, 128, 70}, true},
                         Case{{"", 1, 1, 1, 128, 1}, true}, Case{{"", 1, 4, 1, 128, 130}, true},
                         Case{{"", 1, 8, 2, 128, 1000}, false}}) {
    const AttentionSpec& s = cs.shape;
    const AttnProblem p = problem_of(s);
    const std::string name = "attention b=" + std::to_string(s.batch) + " h=" + std::to_string(s.heads) +
                             "/" + std::to_string(s.kv_heads) + " d=" + std::to_string(s.head_dim) +
                             " L=" + std::to_string(s.seq_len);
    try {
      validate(bb, p, cs.all);
      rep.push_back("ok: " + name);
    } catch (const ValidationFailure& e) {
      rep.push_back("FAILED: " + name + ": " + e.what());
    } catch (const DeviceError& e) {
      rep.push_back("FAILED: " + name + ": " + e.call + ": " + e.what());
    }
  }
}

}  // namespace ftcost::calib
