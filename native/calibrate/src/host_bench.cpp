#include "ftcost/calibrate/host_bench.hpp"

#include <array>
#include <chrono>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

namespace ftcost::calib {

namespace {
std::uint64_t mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// A shuffled cyclic list of 64K entries (512 KiB: beyond L1, within L2/L3 of any host CPU).
const std::vector<std::uint32_t>& chase_list() {
  static const std::vector<std::uint32_t> next = [] {
    const std::uint32_t n = 1u << 16;
    std::vector<std::uint32_t> perm(n);
    std::iota(perm.begin(), perm.end(), 0u);
    for (std::uint32_t i = n - 1; i > 0; --i) {
      std::uint32_t j = static_cast<std::uint32_t>(mix(i) % (i + 1));
      std::swap(perm[i], perm[j]);
    }
    std::vector<std::uint32_t> nx(n);
    for (std::uint32_t i = 0; i < n; ++i) nx[perm[i]] = perm[(i + 1) % n];
    return nx;
  }();
  return next;
}
}  // namespace

std::uint64_t cpu_work_unit(std::uint64_t seed) {
  const auto& next = chase_list();
  std::uint64_t sum = seed;
  // 1) pointer chasing
  std::uint32_t p = static_cast<std::uint32_t>(seed & 0xFFFF);
  for (int i = 0; i < 4096; ++i) p = next[p];
  sum += p;
  // 2) open-addressing hash table inserts and lookups
  std::array<std::uint64_t, 1024> table{};
  for (std::uint64_t i = 0; i < 768; ++i) {
    std::uint64_t key = mix(seed + i) | 1u;
    std::size_t h = static_cast<std::size_t>(key & 1023u);
    while (table[h] != 0 && table[h] != key) h = (h + 1) & 1023u;
    table[h] = key;
  }
  for (std::uint64_t i = 0; i < 1024; ++i) {
    std::uint64_t key = mix(seed + i * 3) | 1u;
    std::size_t h = static_cast<std::size_t>(key & 1023u);
    int probes = 0;
    while (table[h] != 0 && table[h] != key && probes++ < 1024) h = (h + 1) & 1023u;
    sum += table[h] == key ? 1 : 0;
  }
  // 3) data-dependent branches (Collatz steps)
  for (std::uint64_t i = 1; i < 200; ++i) {
    std::uint64_t x = (seed ^ i) % 100000 + 1;
    int steps = 0;
    while (x != 1 && steps < 500) {
      x = (x & 1) ? 3 * x + 1 : x / 2;
      ++steps;
    }
    sum += static_cast<std::uint64_t>(steps);
  }
  return sum;
}

CpuRow measure_cpu_score(const TimingPolicy& policy) {
  using clock = std::chrono::steady_clock;
  volatile std::uint64_t sink = 0;
  const int units = 50;  // one sample: ~1-3 ms on a current core
  for (int w = 0; w < policy.warmup; ++w) sink = sink + cpu_work_unit(static_cast<std::uint64_t>(w));
  Sampler s(policy);
  auto start = clock::now();
  std::uint64_t seed = 1000;
  do {
    auto t0 = clock::now();
    for (int i = 0; i < units; ++i) sink = sink + cpu_work_unit(seed++);
    auto t1 = clock::now();
    s.add(std::chrono::duration<double>(t1 - t0).count());
  } while (!s.done(std::chrono::duration<double>(clock::now() - start).count()));
  CpuRow r;
  r.kind = "single_thread";
  r.score = rate_stat(s.summary(), units, 1e3);  // units per millisecond
  r.iterations = s.count();
  return r;
}

std::uint64_t eager_host_work(std::uint64_t op) {
  // what a dispatcher does per op: build sizes/strides, hash a key, look up a cache, allocate metadata
  std::array<std::int64_t, 4> sizes = {static_cast<std::int64_t>(op % 7 + 1), 128, 64, 32};
  std::array<std::int64_t, 4> strides{};
  std::int64_t st = 1;
  for (int i = 3; i >= 0; --i) {
    strides[static_cast<std::size_t>(i)] = st;
    st *= sizes[static_cast<std::size_t>(i)];
  }
  std::uint64_t h = 1469598103934665603ull;
  for (int i = 0; i < 4; ++i) {
    h = (h ^ static_cast<std::uint64_t>(sizes[static_cast<std::size_t>(i)])) * 1099511628211ull;
    h = (h ^ static_cast<std::uint64_t>(strides[static_cast<std::size_t>(i)])) * 1099511628211ull;
  }
  auto meta = std::make_unique<std::string>("aten::op_" + std::to_string(op % 32));
  for (char c : *meta) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h ^ mix(op);
}

}  // namespace ftcost::calib
