// Launch and host overheads:
//   launch "async": back-to-back launches of an empty kernel, per launch (host submission rate)
//   launch "sync":  one empty launch + cudaStreamSynchronize, round trip
//   host "eager_op": the eager pattern of a PyTorch training step: per op some host work (shape and
//                    stride bookkeeping, a hash, a small allocation) and a small kernel launch; every
//                    `sync_every` ops a 4-byte device-to-host copy and a stream sync (nonzero/.item()).
//                    Time per op. In the paper's stack tens of thousands of such ops per step run at
//                    host speed, so the stack profile's overheads scale with this number.
//   cpu "single_thread": a fixed integer/branchy workload (host_bench.cpp), units per millisecond.
// Timed with the host clock (these are host-side costs).
#include "common.cuh"
#include "families.hpp"
#include "ftcost/calibrate/host_bench.hpp"

namespace ftcost::calib {

namespace {

__global__ void empty_kernel() {}

__global__ void small_kernel(float* x, int n, float a) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * a + 1.0f;
}

struct Eager {
  DevBuf<float> buf;
  DevBuf<int> flag;
  int* host_flag = nullptr;
  Eager() {
    buf.alloc(4096);
    flag.alloc(1);
    CUDA_CHECK(cudaMallocHost(&host_flag, sizeof(int)));
    CUDA_CHECK(cudaMemsetAsync(buf.get(), 0, 4096 * sizeof(float), gpu().stream));
    CUDA_CHECK(cudaMemsetAsync(flag.get(), 0, sizeof(int), gpu().stream));
  }
  ~Eager() {
    if (host_flag) cudaFreeHost(host_flag);
  }
  Eager(const Eager&) = delete;
  Eager& operator=(const Eager&) = delete;
  std::uint64_t sink = 0;
  void run(int ops, int sync_every, std::uint64_t& op_counter) {
    cudaStream_t s = gpu().stream;
    for (int i = 0; i < ops; ++i) {
      sink += eager_host_work(op_counter++);
      small_kernel<<<16, 256, 0, s>>>(buf.get(), 4096, 0.5f);
      if ((i + 1) % sync_every == 0) {
        CUDA_CHECK(cudaMemcpyAsync(host_flag, flag.get(), sizeof(int), cudaMemcpyDeviceToHost, s));
        CUDA_CHECK(cudaStreamSynchronize(s));
      }
    }
    LAUNCH_CHECK("small_kernel");
    CUDA_CHECK(cudaStreamSynchronize(s));
  }
};

// seconds per sample of `ops` operations -> microseconds per operation
CalStat per_op_us(const Summary& t, int ops) {
  const double k = 1e6 / ops;
  return CalStat{t.median * k, t.p10 * k, t.p90 * k};
}

}  // namespace

void bench_launch(Env& env) {
  const Plan& plan = env.plan();
  const int per = plan.launch_per_sample;
  cudaStream_t s = gpu().stream;
  run_item(env, "launch async (empty kernel)", [&] {
    Summary t = time_host(plan.timing, [&] {
      for (int i = 0; i < per; ++i) empty_kernel<<<1, 1, 0, s>>>();
      LAUNCH_CHECK("empty_kernel");
      CUDA_CHECK(cudaStreamSynchronize(s));
    });
    env.rows().launch.push_back(LaunchRow{"async", per_op_us(t, per), t.n});
  });
  run_item(env, "launch + sync (empty kernel)", [&] {
    const int reps = std::max(1, per / 10);
    Summary t = time_host(plan.timing, [&] {
      for (int i = 0; i < reps; ++i) {
        empty_kernel<<<1, 1, 0, s>>>();
        CUDA_CHECK(cudaStreamSynchronize(s));
      }
      LAUNCH_CHECK("empty_kernel");
    });
    env.rows().launch.push_back(LaunchRow{"sync", per_op_us(t, reps), t.n});
  });
}

void bench_host(Env& env) {
  const Plan& plan = env.plan();
  run_item(env, "host: eager op pattern", [&] {
    Eager e;
    std::uint64_t counter = 0;
    const int ops = plan.eager_ops_per_sample, every = plan.eager_sync_every;
    Summary t = time_host(plan.timing, [&] { e.run(ops, every, counter); });
    HostRow r;
    r.kind = "eager_op";
    r.ops_per_sample = ops;
    r.sync_every = every;
    r.us = per_op_us(t, ops);
    r.iterations = t.n;
    env.rows().host.push_back(r);
  });
  run_item(env, "host: single-thread CPU score",
           [&] { env.rows().cpu.push_back(measure_cpu_score(plan.timing)); });
}

void selftest_launch(Report& rep) {
  Eager e;
  std::uint64_t counter = 0;
  e.run(64, 8, counter);
  // 64 launches of x = 0.5 x + 1 from 0: x converges to 2 - 2^-63 -> 2.0f in fp32
  auto got = to_host(e.buf.get(), 4096);
  double want = 0;
  for (int i = 0; i < 64; ++i) want = want * 0.5 + 1.0;
  Check c;
  for (std::size_t i = 0; i < got.size(); ++i) check_one(c, static_cast<std::int64_t>(i), got[i], want, 1e-6);
  rep.push_back(c.ok ? "ok: eager pattern kernels ran 64 times" : "FAILED: " + c.describe("eager pattern"));
}

}  // namespace ftcost::calib
