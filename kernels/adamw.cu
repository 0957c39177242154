// One AdamW step over fp32 parameters, gradients and both moments (torch.optim.AdamW's formula):
//   variant 1 "fused":   one kernel, reads p g m v, writes p m v            28 bytes / parameter
//   variant 2 "unfused": five passes as the non-fused PyTorch optimizer does them
//                        (p *= 1-lr wd; m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2;
//                         d = sqrt(v)/sqrt(bc2) + eps; p -= lr/bc1 * m / d)  56 bytes / parameter
// GB/s counts each variant's own traffic. Check: CPU reference (reference.cpp) on samples of the
// benchmark's size and on every element of small odd sizes, after two steps.
#include "common.cuh"
#include "families.hpp"
#include "selftest.hpp"

#include <cmath>

namespace ftcost::calib {

namespace {

struct Consts {
  float decay;       // 1 - lr * wd
  float b1, one_b1;  // beta1, 1 - beta1
  float b2, one_b2;
  float step_size;     // lr / (1 - beta1^t)
  float inv_sqrt_bc2;  // 1 / sqrt(1 - beta2^t)
  float eps;
};

Consts consts(const AdamwHyper& h, int step) {
  Consts c;
  c.decay = 1.0f - h.lr * h.weight_decay;
  c.b1 = h.beta1;
  c.one_b1 = 1.0f - h.beta1;
  c.b2 = h.beta2;
  c.one_b2 = 1.0f - h.beta2;
  c.step_size = static_cast<float>(h.lr / (1.0 - std::pow(static_cast<double>(h.beta1), step)));
  c.inv_sqrt_bc2 = static_cast<float>(1.0 / std::sqrt(1.0 - std::pow(static_cast<double>(h.beta2), step)));
  c.eps = h.eps;
  return c;
}

__device__ __forceinline__ void adamw_one(float& p, float g, float& m, float& v, const Consts& c) {
  p *= c.decay;
  m = c.b1 * m + c.one_b1 * g;
  v = c.b2 * v + c.one_b2 * g * g;
  p -= c.step_size * m / (sqrtf(v) * c.inv_sqrt_bc2 + c.eps);
}

#define GRID_STRIDE(i, n)                                                                        \
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < (n); \
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)

// n4 = n / 4 float4 groups; the tail (n % 4) is done by thread 0 of block 0
__global__ void fused_kernel(float* __restrict__ p, const float* __restrict__ g, float* __restrict__ m,
                             float* __restrict__ v, std::size_t n, Consts c) {
  const std::size_t n4 = n / 4;
  GRID_STRIDE(i, n4) {
    float4 pp = reinterpret_cast<float4*>(p)[i], gg = reinterpret_cast<const float4*>(g)[i];
    float4 mm = reinterpret_cast<float4*>(m)[i], vv = reinterpret_cast<float4*>(v)[i];
    adamw_one(pp.x, gg.x, mm.x, vv.x, c);
    adamw_one(pp.y, gg.y, mm.y, vv.y, c);
    adamw_one(pp.z, gg.z, mm.z, vv.z, c);
    adamw_one(pp.w, gg.w, mm.w, vv.w, c);
    reinterpret_cast<float4*>(p)[i] = pp;
    reinterpret_cast<float4*>(m)[i] = mm;
    reinterpret_cast<float4*>(v)[i] = vv;
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    for (std::size_t i = n4 * 4; i < n; ++i) adamw_one(p[i], g[i], m[i], v[i], c);
  }
}

// the five passes (scalar loops: each is trivially bandwidth bound; float4 would not change traffic)
__global__ void pass_decay(float* p, std::size_t n, float decay) { GRID_STRIDE(i, n) p[i] *= decay; }
__global__ void pass_m(float* m, const float* g, std::size_t n, float b1, float one_b1) {
  GRID_STRIDE(i, n) m[i] = b1 * m[i] + one_b1 * g[i];
}
__global__ void pass_v(float* v, const float* g, std::size_t n, float b2, float one_b2) {
  GRID_STRIDE(i, n) v[i] = b2 * v[i] + one_b2 * g[i] * g[i];
}
__global__ void pass_denom(float* d, const float* v, std::size_t n, float inv_sqrt_bc2, float eps) {
  GRID_STRIDE(i, n) d[i] = sqrtf(v[i]) * inv_sqrt_bc2 + eps;
}
__global__ void pass_update(float* p, const float* m, const float* d, std::size_t n, float step_size) {
  GRID_STRIDE(i, n) p[i] -= step_size * m[i] / d[i];
}

struct State {
  DevBuf<float> p, g, m, v, d;
  void reserve(std::size_t n) { reserve_all(n, p, g, m, v, d); }
};

const Gen kP{41, 127, 1.0f / 128};
const Gen kG{42, 127, 1.0f / 1024};
const Gen kM{43, 127, 1.0f / 16384};
const Gen kV{44, 127, 1.0f / 131072};  // v must be >= 0: abs taken below
const AdamwHyper kHyper{};

__global__ void abs_kernel(float* x, std::size_t n) { GRID_STRIDE(i, n) x[i] = fabsf(x[i]); }

void init(State& s, std::size_t n) {
  s.reserve(n);
  fill(s.p.get(), n, kP);
  fill(s.g.get(), n, kG);
  fill(s.m.get(), n, kM);
  fill(s.v.get(), n, kV);
  abs_kernel<<<grid_for(n, 256), 256, 0, gpu().stream>>>(s.v.get(), n);
  LAUNCH_CHECK("abs_kernel");
}

void step(bool fused, State& s, std::size_t n, int t) {
  const Consts c = consts(kHyper, t);
  cudaStream_t st = gpu().stream;
  if (fused) {
    fused_kernel<<<grid_for(n / 4 + 1, 256), 256, 0, st>>>(s.p.get(), s.g.get(), s.m.get(), s.v.get(), n, c);
    LAUNCH_CHECK("adamw fused_kernel");
    return;
  }
  const unsigned grid = grid_for(n, 256);
  pass_decay<<<grid, 256, 0, st>>>(s.p.get(), n, c.decay);
  LAUNCH_CHECK("adamw pass_decay");
  pass_m<<<grid, 256, 0, st>>>(s.m.get(), s.g.get(), n, c.b1, c.one_b1);
  LAUNCH_CHECK("adamw pass_m");
  pass_v<<<grid, 256, 0, st>>>(s.v.get(), s.g.get(), n, c.b2, c.one_b2);
  LAUNCH_CHECK("adamw pass_v");
  pass_denom<<<grid, 256, 0, st>>>(s.d.get(), s.v.get(), n, c.inv_sqrt_bc2, c.eps);
  LAUNCH_CHECK("adamw pass_denom");
  pass_update<<<grid, 256, 0, st>>>(s.p.get(), s.m.get(), s.d.get(), n, c.step_size);
  LAUNCH_CHECK("adamw pass_update");
}

// two steps (t = 1, 2) from the generated state, checked against the CPU
void validate(bool fused, State& s, std::size_t n, bool all) {
  init(s, n);
  step(fused, s, n, 1);
  step(fused, s, n, 2);
  const std::vector<std::int64_t> pos = check_positions(static_cast<std::int64_t>(n), all, 4096, 45);
  auto gp = sample_to_host(s.p.get(), pos), gm = sample_to_host(s.m.get(), pos),
       gv = sample_to_host(s.v.get(), pos);
  Check c;
  for (std::size_t k = 0; k < pos.size(); ++k) {
    auto u = static_cast<std::uint64_t>(pos[k]);
    float p = kP(u), g = kG(u), m = kM(u), v = std::fabs(kV(u));
    adamw_ref(p, g, m, v, kHyper, 1);
    adamw_ref(p, g, m, v, kHyper, 2);
    check_one(c, pos[k], gp[k], p, 1e-7 + 1e-5 * std::fabs(p));
    check_one(c, pos[k], gm[k], m, 1e-9 + 1e-5 * std::fabs(m));
    check_one(c, pos[k], gv[k], v, 1e-12 + 1e-5 * std::fabs(v));
  }
  if (!c.ok) throw ValidationFailure(c.describe(fused ? "adamw fused" : "adamw unfused"));
}

}  // namespace

void bench_adamw(Env& env) {
  const Plan& plan = env.plan();
  State s;
  for (std::int64_t params : plan.adamw_params) {
    const auto n = static_cast<std::size_t>(params);
    for (bool fused : {true, false}) {
      run_item(
          env,
          std::string("adamw ") + (fused ? "fused" : "unfused") + " " + std::to_string(params) + " params",
          [&] {
            validate(fused, s, n, false);
            int t = 3;
            AdamwRow r;
            r.impl = fused ? "fused" : "unfused";
            r.params = params;
            r.bytes_per_param = fused ? 28 : 56;
            env.rows().adamw.push_back(
                timed_row(r, plan.timing,
                          static_cast<std::uint64_t>(r.bytes_per_param) * static_cast<std::uint64_t>(params),
                          [&] { step(fused, s, n, t++); }));
          });
    }
  }
}

void selftest_adamw(Report& rep) {
  State s;
  for (std::size_t n : {std::size_t{1}, std::size_t{7}, std::size_t{1001}, std::size_t{1} << 20}) {
    for (bool fused : {true, false}) {
      std::string name = std::string("adamw ") + (fused ? "fused" : "unfused") + " n=" + std::to_string(n);
      self_check(rep, name, [&] { validate(fused, s, n, n < 5000); });
    }
  }
}

}  // namespace ftcost::calib
