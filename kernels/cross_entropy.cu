// Softmax + cross-entropy over vocabulary-wide rows of fp32 logits (issue 38), as transformers' loss runs it:
// ForCausalLMLoss upcasts the logits with logits.float() before cross_entropy (src/transformers/loss/
// loss_utils.py; docs/sources/stacks/transformers.md). Forward: one block per row, an online max/sum-exp
// pass, loss = lse - x[label] and lse written per row; backward: dlogits = (exp(x - lse) - onehot) / rows
// (mean reduction), fp32. GB/s counts logits, int64 labels, per-row loss/lse and dlogits once
// (calibration.hpp). Checks: sampled rows (every row at small sizes) against cross_entropy_row_ref /
// cross_entropy_grad_ref.
#include "common.cuh"
#include "families.hpp"
#include "selftest.hpp"

#include <cmath>

namespace ftcost::calib {

namespace {

constexpr int kThreads = 256;

struct MaxSum {
  float m, s;
};
__device__ MaxSum combine(MaxSum a, MaxSum b) {
  const float m = fmaxf(a.m, b.m);
  if (m == -INFINITY) return {m, 0.f};
  return {m, a.s * expf(a.m - m) + b.s * expf(b.m - m)};
}
__device__ void add_value(MaxSum& a, float x) {
  if (x > a.m) {
    a.s = a.s * expf(a.m - x) + 1.f;
    a.m = x;
  } else {
    a.s += expf(x - a.m);
  }
}

__global__ void __launch_bounds__(kThreads)
    ce_fwd_kernel(const float* __restrict__ logits, const std::int64_t* __restrict__ labels,
                  float* __restrict__ loss, float* __restrict__ lse, std::int64_t vocab) {
  const float* row = logits + static_cast<std::size_t>(blockIdx.x) * vocab;
  MaxSum a{-INFINITY, 0.f};
  if (vocab % 4 == 0) {
    for (std::int64_t v = threadIdx.x; v < vocab / 4; v += kThreads) {
      const float4 f = reinterpret_cast<const float4*>(row)[v];
      add_value(a, f.x), add_value(a, f.y), add_value(a, f.z), add_value(a, f.w);
    }
  } else {
    for (std::int64_t j = threadIdx.x; j < vocab; j += kThreads) add_value(a, row[j]);
  }
  for (int o = 16; o > 0; o >>= 1)
    a = combine(a, MaxSum{__shfl_xor_sync(0xffffffffu, a.m, o), __shfl_xor_sync(0xffffffffu, a.s, o)});
  __shared__ MaxSum red[kThreads / 32];
  if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = a;
  __syncthreads();
  if (threadIdx.x == 0) {
    MaxSum t = red[0];
    for (int w = 1; w < kThreads / 32; ++w) t = combine(t, red[w]);
    const float l = t.m + logf(t.s);
    lse[blockIdx.x] = l;
    loss[blockIdx.x] = l - row[labels[blockIdx.x]];
  }
}

__global__ void __launch_bounds__(kThreads)
    ce_bwd_kernel(const float* __restrict__ logits, const std::int64_t* __restrict__ labels,
                  const float* __restrict__ lse, float* __restrict__ dlogits, std::int64_t vocab,
                  float scale) {
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * vocab;
  const float l = lse[blockIdx.x];
  const std::int64_t label = labels[blockIdx.x];
  if (vocab % 4 == 0) {
    for (std::int64_t v = threadIdx.x; v < vocab / 4; v += kThreads) {
      float4 f = reinterpret_cast<const float4*>(logits + base)[v];
      const std::int64_t j = 4 * v;
      f.x = (expf(f.x - l) - (j == label ? 1.f : 0.f)) * scale;
      f.y = (expf(f.y - l) - (j + 1 == label ? 1.f : 0.f)) * scale;
      f.z = (expf(f.z - l) - (j + 2 == label ? 1.f : 0.f)) * scale;
      f.w = (expf(f.w - l) - (j + 3 == label ? 1.f : 0.f)) * scale;
      reinterpret_cast<float4*>(dlogits + base)[v] = f;
    }
  } else {
    for (std::int64_t j = threadIdx.x; j < vocab; j += kThreads)
      dlogits[base + j] = (expf(logits[base + j] - l) - (j == label ? 1.f : 0.f)) * scale;
  }
}

__global__ void ce_labels_kernel(std::int64_t* labels, std::int64_t rows, std::int64_t vocab, CeGens g) {
  for (std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; r < rows;
       r += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    labels[r] = static_cast<std::int64_t>(hash32(g.label_seed, static_cast<std::uint64_t>(r)) %
                                          static_cast<std::uint64_t>(vocab));
}

struct CeBufs {
  DevBuf<float> logits, dlogits, loss, lse;
  DevBuf<std::int64_t> labels;
  void prepare(std::int64_t rows, std::int64_t vocab) {
    const auto n = static_cast<std::size_t>(rows * vocab), r = static_cast<std::size_t>(rows);
    logits.reserve(n), dlogits.reserve(n), loss.reserve(r), lse.reserve(r), labels.reserve(r);
    const CeGens g;
    fill(logits.get(), n, g.logits);
    ce_labels_kernel<<<grid_for(r, 256), 256, 0, gpu().stream>>>(labels.get(), rows, vocab, g);
    LAUNCH_CHECK("ce_labels_kernel");
  }
};

void run_ce(CeBufs& b, bool fwd, std::int64_t rows, std::int64_t vocab) {
  cudaStream_t s = gpu().stream;
  if (fwd) {
    ce_fwd_kernel<<<static_cast<unsigned>(rows), kThreads, 0, s>>>(b.logits.get(), b.labels.get(),
                                                                   b.loss.get(), b.lse.get(), vocab);
    LAUNCH_CHECK("ce_fwd_kernel");
  } else {
    ce_bwd_kernel<<<static_cast<unsigned>(rows), kThreads, 0, s>>>(
        b.logits.get(), b.labels.get(), b.lse.get(), b.dlogits.get(), vocab, 1.0f / static_cast<float>(rows));
    LAUNCH_CHECK("ce_bwd_kernel");
  }
}

// Forward and backward on `rows` x `vocab`: loss and lse of the chosen rows, dlogits at sampled columns of
// them (the label's among them).
void validate_ce(CeBufs& b, std::int64_t rows, std::int64_t vocab, bool all) {
  b.prepare(rows, vocab);
  run_ce(b, true, rows, vocab);
  run_ce(b, false, rows, vocab);
  const CeGens g;
  std::vector<std::int64_t> check_rows;
  if (all) {
    for (std::int64_t r = 0; r < rows; ++r) check_rows.push_back(r);
  } else {
    check_rows = sample_positions(rows, 4, 83);
  }
  auto loss = sample_to_host(b.loss.get(), check_rows);
  auto lse = sample_to_host(b.lse.get(), check_rows);
  Check c;
  std::vector<float> x(static_cast<std::size_t>(vocab));
  for (std::size_t k = 0; k < check_rows.size(); ++k) {
    const std::int64_t r = check_rows[k], label = g.label(r, vocab);
    for (std::int64_t j = 0; j < vocab; ++j)
      x[static_cast<std::size_t>(j)] = g.logits(static_cast<std::uint64_t>(r * vocab + j));
    const CeRowRef want = cross_entropy_row_ref(x.data(), vocab, label);
    check_one(c, r, loss[k], want.loss, 1e-4 * (1.0 + std::fabs(want.lse)));
    check_one(c, r, lse[k], want.lse, 1e-4 * (1.0 + std::fabs(want.lse)));
    std::vector<std::int64_t> cols =
        all && vocab <= 4096 ? std::vector<std::int64_t>{} : sample_positions(vocab, 64, 84);
    if (cols.empty())
      for (std::int64_t j = 0; j < vocab; ++j) cols.push_back(j);
    cols.push_back(label);
    std::vector<std::int64_t> pos;
    for (auto j : cols) pos.push_back(r * vocab + j);
    auto got = sample_to_host(b.dlogits.get(), pos);
    const double scale = 1.0 / static_cast<double>(rows);
    for (std::size_t i = 0; i < cols.size(); ++i) {
      const double w =
          cross_entropy_grad_ref(x[static_cast<std::size_t>(cols[i])], want.lse, cols[i] == label, scale);
      check_one(
          c, pos[i], got[i], w,
          1e-3 * std::fabs(w) +
              1e-4 * scale * std::exp(static_cast<double>(x[static_cast<std::size_t>(cols[i])]) - want.lse) +
              1e-12);
    }
  }
  if (!c.ok) throw ValidationFailure(c.describe("cross-entropy"));
}

}  // namespace

void bench_cross_entropy(Env& env) {
  CeBufs b;
  for (const CrossEntropySpec& s : env.plan().cross_entropy) {
    bool checked = false;
    for (bool fwd : {true, false}) {
      const std::string label = std::string("cross_entropy ") + (fwd ? "fwd " : "bwd ") +
                                std::to_string(s.rows) + "x" + std::to_string(s.vocab) + " fp32";
      run_item(env, label, [&] {
        if (!checked) validate_ce(b, s.rows, s.vocab, false);  // checks both directions
        checked = true;
        b.prepare(s.rows, s.vocab);
        run_ce(b, true, s.rows, s.vocab);  // the backward reads the forward's lse
        CrossEntropyRow r;
        r.direction = fwd ? "fwd" : "bwd";
        r.logits_dtype = "fp32";
        r.rows = s.rows;
        r.vocab = s.vocab;
        const auto rv = static_cast<std::uint64_t>(s.rows * s.vocab),
                   rows = static_cast<std::uint64_t>(s.rows);
        env.rows().cross_entropy.push_back(timed_row(r, env.plan().timing,
                                                     fwd ? 4 * rv + 16 * rows : 8 * rv + 12 * rows,
                                                     [&] { run_ce(b, fwd, s.rows, s.vocab); }));
      });
    }
  }
}

void selftest_cross_entropy(Report& rep) {
  CeBufs b;
  struct Case {
    std::int64_t rows, vocab;
  };
  for (const Case& cs : {Case{1, 5}, Case{3, 1000}, Case{7, 4096}, Case{5, 32003}, Case{2, 152064}}) {
    const std::string name = "cross_entropy " + std::to_string(cs.rows) + "x" + std::to_string(cs.vocab);
    self_check(rep, name, [&] { validate_ce(b, cs.rows, cs.vocab, true); });
  }
}

}  // namespace ftcost::calib
