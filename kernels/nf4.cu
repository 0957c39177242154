// NF4 dequantization as bitsandbytes lays the data out (0.42, compress_statistics=True):
//   packed   uint8 [n/2]    two 4-bit codes per byte, the element with the even index in the high nibble
//   qabsmax  uint8 [n/64]   absmax of each 64-value block, 8-bit through the signed dynamic map (code2)
//   absmax2  fp32  [n/64/256]  scale of each 256 absmax values;  offset fp32: the mean absmax
//   value(i) = NF4[code(i)] * (code2[qabsmax[i/64]] * absmax2[i/64/256] + offset)
// Variants:
//   1 "fused": one kernel writes bf16 directly                 ~2.52 bytes / parameter
//   2 "bnb":   bitsandbytes' sequence: absmax -> fp32 (dequantize_blockwise), += offset, NF4 -> fp16
//              (kDequantizeBlockwise, quant_state.dtype = fp16), fp16 -> bf16 cast (compute dtype)
//                                                              ~6.77 bytes / parameter
//              The NF4 code is looked up as bitsandbytes does it: a 16-entry table in global memory
//              (`__device__ static float nf4_dequantization_lut[16]`, read by dDequantizeNF4 with the
//              thread's own 4-bit code as index; csrc/kernels.cu of bitsandbytes HEAD 95f9af3, 0.50.2.dev0;
//              excerpt in docs/sources/bitsandbytes-nf4-lut.md). Not from __constant__ memory: a
//              lane-dependent index into constant memory serialises the warp's reads, which bitsandbytes
//              does not do. Version 0.42 used a branch tree (dDequantizeNF4 with nested ifs) instead; the
//              table is what current releases run.
// GB/s counts each variant's kernels' reads + writes. Check: CPU reference (reference.cpp) at sampled
// positions of the benchmark's size, every element of small sizes in the self-test.
#include "common.cuh"
#include "families.hpp"
#include "selftest.hpp"

#include <cmath>

namespace ftcost::calib {

namespace {

__constant__ float c_nf4[16];    // the fused kernel copies it to shared memory once per block
__device__ float g_nf4_lut[16];  // the "bnb" variant reads it per value, as bitsandbytes' kernel does

struct Nf4Dev {
  DevBuf<std::uint8_t> packed, qabsmax;
  DevBuf<float> absmax2, code2, absmax32;
  DevBuf<fp16> out16;
  DevBuf<bf16> out;
  std::size_t n = 0;
};

__global__ void gen_kernel(std::uint8_t* packed, std::uint8_t* qabsmax, float* absmax2, std::size_t n,
                           Nf4Inputs in) {
  const std::size_t nbytes = n / 2, nblocks = n / 64, ngroups = (nblocks + 255) / 256;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < nbytes;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    packed[i] = in.packed(i);
    if (i < nblocks) qabsmax[i] = in.qabsmax(i);
    if (i < ngroups) absmax2[i] = in.absmax2(i);
  }
}

// 8 values per thread: one 32-bit load of 4 packed bytes, one 16-byte store of 8 bf16
__global__ void fused_kernel(const std::uint32_t* __restrict__ packed,
                             const std::uint8_t* __restrict__ qabsmax, const float* __restrict__ absmax2,
                             const float* __restrict__ code2, float offset, uint4* __restrict__ out,
                             std::size_t n8) {
  __shared__ float s_code2[256];
  __shared__ float s_nf4[16];
  for (int i = threadIdx.x; i < 256; i += blockDim.x) s_code2[i] = code2[i];
  if (threadIdx.x < 16) s_nf4[threadIdx.x] = c_nf4[threadIdx.x];
  __syncthreads();
  for (std::size_t v = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; v < n8;
       v += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::size_t block = v / 8;  // 8 groups of 8 values per 64-value block
    const float absmax = s_code2[qabsmax[block]] * absmax2[block / 256] + offset;
    const std::uint32_t w = packed[v];
    union {
      uint4 u;
      __nv_bfloat162 h[4];
    } o;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const unsigned byte = (w >> (8 * j)) & 0xFFu;  // little endian: byte j is packed[4v + j]
      o.h[j] = __floats2bfloat162_rn(s_nf4[byte >> 4] * absmax, s_nf4[byte & 0xFu] * absmax);
    }
    out[v] = o.u;
  }
}

// bitsandbytes sequence, kernel 1: dequantize_blockwise of the absmax (blocksize 256)
__global__ void absmax_kernel(const std::uint8_t* qabsmax, const float* absmax2, const float* code2,
                              float* absmax32, std::size_t nblocks) {
  for (std::size_t b = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; b < nblocks;
       b += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    absmax32[b] = code2[qabsmax[b]] * absmax2[b / 256];
  }
}
// kernel 2: absmax += offset
__global__ void offset_kernel(float* absmax32, std::size_t nblocks, float offset) {
  for (std::size_t b = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; b < nblocks;
       b += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    absmax32[b] += offset;
  }
}
// kernel 3: NF4 -> fp16 with fp32 absmax
__global__ void nf4_fp16_kernel(const std::uint32_t* __restrict__ packed, const float* __restrict__ absmax32,
                                uint4* __restrict__ out, std::size_t n8) {
  for (std::size_t v = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; v < n8;
       v += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const float absmax = absmax32[v / 8];
    const std::uint32_t w = packed[v];
    union {
      uint4 u;
      __half2 h[4];
    } o;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const unsigned byte = (w >> (8 * j)) & 0xFFu;
      o.h[j] = __floats2half2_rn(g_nf4_lut[byte >> 4] * absmax, g_nf4_lut[byte & 0xFu] * absmax);
    }
    out[v] = o.u;
  }
}
// kernel 4: fp16 -> bf16
__global__ void cast_kernel(const uint4* __restrict__ in, uint4* __restrict__ out, std::size_t n8) {
  for (std::size_t v = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; v < n8;
       v += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    union {
      uint4 u;
      __half2 h[4];
    } a;
    union {
      uint4 u;
      __nv_bfloat162 b[4];
    } o;
    a.u = in[v];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      float2 f = __half22float2(a.h[j]);
      o.b[j] = __floats2bfloat162_rn(f.x, f.y);
    }
    out[v] = o.u;
  }
}

const Nf4Inputs kIn{};

// n must be a multiple of 64
void prepare(Nf4Dev& d, std::size_t n, const std::vector<float>& code2) {
  cudaStream_t s = gpu().stream;
  const std::size_t nblocks = n / 64, ngroups = (nblocks + 255) / 256;
  d.packed.reserve(n / 2);
  d.qabsmax.reserve(nblocks);
  d.absmax2.reserve(ngroups);
  d.code2.reserve(256);
  d.absmax32.reserve(nblocks);
  d.out16.reserve(n);
  d.out.reserve(n);
  d.n = n;
  CUDA_CHECK(cudaMemcpyToSymbolAsync(c_nf4, kNf4Code, sizeof(float) * 16, 0, cudaMemcpyHostToDevice, s));
  CUDA_CHECK(cudaMemcpyToSymbolAsync(g_nf4_lut, kNf4Code, sizeof(float) * 16, 0, cudaMemcpyHostToDevice, s));
  CUDA_CHECK(cudaMemcpyAsync(d.code2.get(), code2.data(), 256 * sizeof(float), cudaMemcpyHostToDevice, s));
  gen_kernel<<<grid_for(n / 2, 256), 256, 0, s>>>(d.packed.get(), d.qabsmax.get(), d.absmax2.get(), n, kIn);
  LAUNCH_CHECK("nf4 gen_kernel");
  CUDA_CHECK(cudaStreamSynchronize(s));  // code2 comes from a host vector that may go away
}

void run(bool fused, Nf4Dev& d) {
  cudaStream_t s = gpu().stream;
  const std::size_t n8 = d.n / 8, nblocks = d.n / 64;
  const auto* packed = reinterpret_cast<const std::uint32_t*>(d.packed.get());
  if (fused) {
    fused_kernel<<<grid_for(n8, 256), 256, 0, s>>>(packed, d.qabsmax.get(), d.absmax2.get(), d.code2.get(),
                                                   kIn.offset, reinterpret_cast<uint4*>(d.out.get()), n8);
    LAUNCH_CHECK("nf4 fused_kernel");
    return;
  }
  absmax_kernel<<<grid_for(nblocks, 256), 256, 0, s>>>(d.qabsmax.get(), d.absmax2.get(), d.code2.get(),
                                                       d.absmax32.get(), nblocks);
  LAUNCH_CHECK("nf4 absmax_kernel");
  offset_kernel<<<grid_for(nblocks, 256), 256, 0, s>>>(d.absmax32.get(), nblocks, kIn.offset);
  LAUNCH_CHECK("nf4 offset_kernel");
  nf4_fp16_kernel<<<grid_for(n8, 256), 256, 0, s>>>(packed, d.absmax32.get(),
                                                    reinterpret_cast<uint4*>(d.out16.get()), n8);
  LAUNCH_CHECK("nf4 nf4_fp16_kernel");
  cast_kernel<<<grid_for(n8, 256), 256, 0, s>>>(reinterpret_cast<const uint4*>(d.out16.get()),
                                                reinterpret_cast<uint4*>(d.out.get()), n8);
  LAUNCH_CHECK("nf4 cast_kernel");
}

std::uint64_t bytes_of(bool fused, std::size_t n) {
  const std::uint64_t nb = n / 64, ng = (nb + 255) / 256, packed = n / 2;
  if (fused) return packed + nb + 4 * ng + 2 * n;
  return (nb + 4 * ng + 4 * nb)       // absmax: read q + absmax2, write fp32
         + 8 * nb                     // += offset
         + (packed + 4 * nb + 2 * n)  // nf4 -> fp16
         + 4 * n;                     // fp16 -> bf16
}

void validate(bool fused, Nf4Dev& d, std::size_t n, const std::vector<float>& code2, bool all) {
  prepare(d, n, code2);
  CUDA_CHECK(cudaMemsetAsync(d.out.get(), 0xFF, n * sizeof(bf16), gpu().stream));  // NaN: must be overwritten
  run(fused, d);
  const std::vector<std::int64_t> pos = check_positions(static_cast<std::int64_t>(n), all, 1 << 16, 51);
  auto got = sample_to_host(d.out.get(), pos);
  Check c;
  for (std::size_t k = 0; k < pos.size(); ++k) {
    double want = nf4_ref(kIn, code2, pos[k], !fused);
    // one bf16 rounding step of slack: the GPU may fuse the absmax multiply-add
    check_one(c, pos[k], got[k], want, 1e-9 + std::fabs(want) / 128);
  }
  if (!c.ok) throw ValidationFailure(c.describe(fused ? "nf4 fused" : "nf4 bnb"));
}

}  // namespace

void bench_nf4(Env& env) {
  const Plan& plan = env.plan();
  const std::vector<float> code2 = bnb_dynamic_map_signed();
  Nf4Dev d;
  for (std::int64_t elements : plan.nf4_elements) {
    const auto n = static_cast<std::size_t>(elements) / 64 * 64;
    for (bool fused : {true, false}) {
      run_item(env,
               std::string("nf4 dequant ") + (fused ? "fused" : "bnb") + " " + std::to_string(n) + " params",
               [&] {
                 validate(fused, d, n, code2, false);
                 Nf4Row r;
                 r.variant = fused ? "fused" : "bnb";
                 r.elements = static_cast<std::int64_t>(n);
                 r.out_dtype = "bf16";
                 r.double_quant = true;
                 const std::uint64_t bytes = bytes_of(fused, n);
                 r.bytes_per_param = static_cast<double>(bytes) / static_cast<double>(n);
                 env.rows().nf4_dequant.push_back(timed_row(r, plan.timing, bytes, [&] { run(fused, d); }));
               });
    }
  }
}

void selftest_nf4(Report& rep) {
  const std::vector<float> code2 = bnb_dynamic_map_signed();
  Nf4Dev d;
  // 64: one block; 64*257: a partial second absmax group; 64*256*3: whole groups
  for (std::size_t n : {std::size_t{64}, std::size_t{64} * 257, std::size_t{64} * 256 * 3}) {
    for (bool fused : {true, false}) {
      std::string name = std::string("nf4 ") + (fused ? "fused" : "bnb") + " n=" + std::to_string(n);
      self_check(rep, name, [&] { validate(fused, d, n, code2, true); });
    }
  }
}

}  // namespace ftcost::calib
