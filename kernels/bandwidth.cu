// DRAM bandwidth, STREAM-style: copy (b = a) and triad (a = b + s*c) over fp32 arrays of at least 4x the
// L2, 16-byte vectors, grid-stride loops. GB/s counts reads + writes (2x / 3x the array per run).
// Check: every element against the generator (on the GPU, independent of the kernel under test) and a
// sample on the CPU, before timing.
#include "common.cuh"
#include "families.hpp"

#include <cstdio>

namespace ftcost::calib {

namespace {

__global__ void copy_kernel(const float4* __restrict__ a, float4* __restrict__ b, std::size_t n4) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n4;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    b[i] = a[i];
  }
}

__global__ void triad_kernel(float4* __restrict__ a, const float4* __restrict__ b,
                             const float4* __restrict__ c, float s, std::size_t n4) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n4;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    float4 x = b[i], y = c[i];
    a[i] = make_float4(x.x + s * y.x, x.y + s * y.y, x.z + s * y.z, x.w + s * y.w);
  }
}

// counts elements of `out` that differ from expect(i) = gb(i) + s * gc(i) (s = 0: copy of gb)
__global__ void verify_kernel(const float* out, std::size_t n, Gen gb, Gen gc, float s,
                              unsigned long long* bad) {
  unsigned long long local = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    float want = s == 0.0f ? gb(i) : gb(i) + s * gc(i);
    if (out[i] != want) ++local;
  }
  if (local) atomicAdd(bad, local);
}

const Gen kB{21, 127, 1.0f / 128};
const Gen kC{22, 127, 1.0f / 128};
constexpr float kScalar = 0.5f;  // exact: b + 0.5 c of 1/128-step values is exact in fp32

struct Arrays {
  DevBuf<float> a, b, c;
};

void run_kernel(bool triad, Arrays& x, std::size_t n) {
  std::size_t n4 = n / 4;
  unsigned grid = grid_for(n4, 256);
  if (triad) {
    triad_kernel<<<grid, 256, 0, gpu().stream>>>(reinterpret_cast<float4*>(x.a.get()),
                                                 reinterpret_cast<const float4*>(x.b.get()),
                                                 reinterpret_cast<const float4*>(x.c.get()), kScalar, n4);
    LAUNCH_CHECK("triad_kernel");
  } else {
    copy_kernel<<<grid, 256, 0, gpu().stream>>>(reinterpret_cast<const float4*>(x.b.get()),
                                                reinterpret_cast<float4*>(x.a.get()), n4);
    LAUNCH_CHECK("copy_kernel");
  }
}

// n must be a multiple of 4
void validate(bool triad, Arrays& x, std::size_t n) {
  Gpu& g = gpu();
  fill(x.a.get(), n, Gen{23, 127, 1.0f});  // garbage that the kernel must overwrite
  fill(x.b.get(), n, kB);
  fill(x.c.get(), n, kC);
  run_kernel(triad, x, n);
  DevBuf<unsigned long long> bad(1);
  CUDA_CHECK(cudaMemsetAsync(bad.get(), 0, sizeof(unsigned long long), g.stream));
  verify_kernel<<<grid_for(n, 256), 256, 0, g.stream>>>(x.a.get(), n, kB, kC, triad ? kScalar : 0.0f,
                                                        bad.get());
  LAUNCH_CHECK("verify_kernel");
  unsigned long long nbad = 0;
  CUDA_CHECK(cudaMemcpyAsync(&nbad, bad.get(), sizeof nbad, cudaMemcpyDeviceToHost, g.stream));
  auto pos = sample_positions(static_cast<std::int64_t>(n), 2048, 24);
  auto got = sample_to_host(x.a.get(), pos);
  Check c;
  for (std::size_t i = 0; i < pos.size(); ++i) {
    auto u = static_cast<std::uint64_t>(pos[i]);
    double want = triad ? static_cast<double>(kB(u)) + kScalar * static_cast<double>(kC(u))
                        : static_cast<double>(kB(u));
    check_one(c, pos[i], got[i], want, 0.0);
  }
  const char* name = triad ? "triad" : "copy";
  if (!c.ok) throw ValidationFailure(c.describe(name));
  if (nbad)
    throw ValidationFailure(std::string(name) + ": " + std::to_string(nbad) + " of " + std::to_string(n) +
                            " elements wrong");
}

}  // namespace

void bench_bandwidth(Env& env) {
  const Plan& plan = env.plan();
  for (std::uint64_t bytes : plan.bandwidth_array_bytes) {
    const std::size_t n = static_cast<std::size_t>(bytes / sizeof(float)) / 4 * 4;
    Arrays x;
    for (bool triad : {false, true}) {
      const char* kind = triad ? "triad" : "copy";
      run_item(env, std::string("bandwidth ") + kind + " " + std::to_string(bytes >> 20) + " MiB", [&] {
        if (!x.c.get()) {
          x.a.alloc(n);
          x.b.alloc(n);
          x.c.alloc(n);
        }
        validate(triad, x, n);
        BandwidthRow r;
        r.kernel = kind;
        r.array_bytes = static_cast<std::uint64_t>(n) * sizeof(float);
        env.rows().bandwidth.push_back(
            timed_row(r, plan.timing, r.array_bytes * (triad ? 3u : 2u), [&] { run_kernel(triad, x, n); }));
      });
    }
  }
}

void selftest_bandwidth(Report& rep) {
  for (std::size_t n : {std::size_t{4}, std::size_t{4} * 1000 + 4, std::size_t{1} << 22}) {
    Arrays x;
    x.a.alloc(n);
    x.b.alloc(n);
    x.c.alloc(n);
    for (bool triad : {false, true}) {
      std::string name = std::string(triad ? "triad" : "copy") + " n=" + std::to_string(n);
      try {
        validate(triad, x, n);
        rep.push_back("ok: bandwidth " + name);
      } catch (const ValidationFailure& e) {
        rep.push_back("FAILED: bandwidth " + name + ": " + e.what());
      }
    }
  }
}

}  // namespace ftcost::calib
