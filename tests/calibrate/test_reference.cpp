// The CPU references that every GPU result is checked against: number formats, the input generator,
// bitsandbytes' tables, AdamW, elementwise ops, routing, GEMM elements, and the MoE backward (checked
// against finite differences of the forward).
#include "ftcost/calibrate/reference.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <set>

using namespace ftcost::calib;

TEST_CASE("bf16 and fp16 conversions round to nearest even") {
  CHECK(float_to_bf16_bits(1.0f) == 0x3F80);
  CHECK(bf16_bits_to_float(0x3F80) == 1.0f);
  CHECK(round_bf16(1.0f + 1.0f / 256) == 1.0f);                       // halfway: to even
  CHECK(round_bf16(1.0f + 3.0f / 256) == 1.0f + 4.0f / 256);          // halfway: to even (up)
  CHECK(round_bf16(1.0f + 1.0f / 256 + 1e-6f) == 1.0f + 2.0f / 256);  // above halfway
  CHECK(std::isnan(round_bf16(std::nanf(""))));
  CHECK(float_to_half_bits(1.0f) == 0x3C00);
  CHECK(float_to_half_bits(-2.0f) == 0xC000);
  CHECK(float_to_half_bits(65504.0f) == 0x7BFF);
  CHECK(float_to_half_bits(70000.0f) == 0x7C00);
  CHECK(half_bits_to_float(0x0001) == std::ldexp(1.0f, -24));  // smallest subnormal
  CHECK(round_half(std::ldexp(1.0f, -25) * 1.5f) == std::ldexp(1.0f, -24));
  CHECK(round_half(1.0f + 1.0f / 2048) == 1.0f);  // halfway: to even
  CHECK(round_half(0.1f) == doctest::Approx(0.0999755859375));
  for (float v : {0.5f, 3.140625f, -1e-3f, 1e4f, 6.1e-5f})
    CHECK(half_bits_to_float(float_to_half_bits(v)) == doctest::Approx(v).epsilon(1e-3));
}

TEST_CASE("generated inputs are deterministic and exact in the narrow formats") {
  Gen g{7, 127, 1.0f / 128};
  CHECK(g(12345) == g(12345));
  std::set<float> values;
  for (std::uint64_t i = 0; i < 20000; ++i) {
    float v = g(i);
    CHECK(std::fabs(v) <= 127.0f / 128);
    CHECK(round_bf16(v) == v);
    CHECK(round_half(v) == v);
    values.insert(v);
  }
  CHECK(values.size() == 255);  // every level appears
  Gen f8{9, 15, 1.0f / 16};
  for (std::uint64_t i = 0; i < 1000; ++i) {
    float v = f8(i) * 16;
    CHECK(v == std::round(v));
    CHECK(std::fabs(v) <= 15);  // 4 significant bits: exact in e4m3
  }
  for (std::uint64_t i = 0; i < 1000; ++i) {
    CHECK(hash_unit(3, i) >= 0.0f);
    CHECK(hash_unit(3, i) < 1.0f);
  }
}

TEST_CASE("bitsandbytes tables") {
  CHECK(kNf4Code[0] == -1.0f);
  CHECK(kNf4Code[7] == 0.0f);
  CHECK(kNf4Code[15] == 1.0f);
  for (int i = 1; i < 16; ++i) CHECK(kNf4Code[i] > kNf4Code[i - 1]);
  auto m = bnb_dynamic_map_signed();
  REQUIRE(m.size() == 256);
  CHECK(std::is_sorted(m.begin(), m.end()));
  CHECK(m.back() == 1.0f);
  CHECK(std::count(m.begin(), m.end(), 0.0f) == 1);
  // 127 negative values, the largest magnitude 0.9929 (= 10^0 * mean of the last linspace interval)
  CHECK(std::count_if(m.begin(), m.end(), [](float v) { return v < 0; }) == 127);
  CHECK(m.front() == doctest::Approx(-0.99296875).epsilon(1e-6));
  CHECK(m[127] == 0.0f);
  // smallest magnitudes: 1e-6 * 0.55
  CHECK(m[126] == doctest::Approx(-0.55e-6).epsilon(1e-6));
  CHECK(m[128] == doctest::Approx(0.55e-6).epsilon(1e-6));
}

TEST_CASE("NF4 reference: layout (high nibble first, 64-value blocks, 256-block absmax groups)") {
  Nf4Inputs in;
  auto code2 = bnb_dynamic_map_signed();
  for (std::int64_t i : {0LL, 1LL, 63LL, 64LL, 64LL * 256 - 1, 64LL * 256, 1000001LL}) {
    auto u = static_cast<std::uint64_t>(i);
    std::uint8_t byte = in.packed(u / 2);
    int code = u % 2 ? byte & 15 : byte >> 4;
    float absmax = code2[in.qabsmax(u / 64)] * in.absmax2(u / 64 / 256) + in.offset;
    CHECK(nf4_ref(in, code2, i, false) == round_bf16(kNf4Code[code] * absmax));
    CHECK(nf4_ref(in, code2, i, true) == round_bf16(round_half(kNf4Code[code] * absmax)));
  }
}

TEST_CASE("AdamW reference matches torch.optim.AdamW's formula") {
  AdamwHyper h;
  float p = 1.0f, m = 0.0f, v = 0.0f;
  adamw_ref(p, 0.5f, m, v, h, 1);
  // step 1: m = 0.05, v = 0.00025, mhat = 0.5, vhat = 0.25 -> p = 1*(1-1e-5) - 1e-3 * 0.5/(0.5+1e-8)
  CHECK(m == doctest::Approx(0.05));
  CHECK(v == doctest::Approx(0.00025));
  CHECK(p == doctest::Approx(1.0 - 1e-5 - 1e-3 * 0.5 / (0.5 + 1e-8)).epsilon(1e-7));
  float p2 = p, m2 = m, v2 = v;
  adamw_ref(p2, -0.25f, m2, v2, h, 2);
  double mm = 0.9 * 0.05 + 0.1 * -0.25, vv = 0.999 * 0.00025 + 0.001 * 0.0625;
  double expect = static_cast<double>(p) * (1 - 1e-5) -
                  1e-3 / (1 - 0.81) * mm / (std::sqrt(vv) / std::sqrt(1 - 0.999 * 0.999) + 1e-8);
  CHECK(p2 == doctest::Approx(expect).epsilon(1e-7));
}

TEST_CASE("elementwise references") {
  CHECK(silu_ref(0) == 0);
  CHECK(silu_ref(1) == doctest::Approx(0.7310585786));
  CHECK(gelu_tanh_ref(1) == doctest::Approx(0.8411919906));
  double e = 1e-6;
  for (double x : {-3.0, -0.5, 0.0, 0.7, 2.5})
    CHECK(dsilu_ref(x) == doctest::Approx((silu_ref(x + e) - silu_ref(x - e)) / (2 * e)).epsilon(1e-6));
  std::vector<float> x = {1, -2, 3, -4}, w = {1, 1, 0.5f, 2}, y(4);
  rmsnorm_ref(x.data(), w.data(), y.data(), 4, 1e-5f);
  double r = 1 / std::sqrt((1 + 4 + 9 + 16) / 4.0 + 1e-5);
  CHECK(y[0] == doctest::Approx(1 * r).epsilon(1e-2));
  CHECK(y[3] == doctest::Approx(-8 * r).epsilon(1e-2));
}

TEST_CASE("top-k softmax: renormalized over the chosen, ties to the lower index") {
  float logits[4] = {1.0f, 3.0f, 3.0f, 0.0f};
  int idx[2];
  float w[2];
  topk_softmax_ref(logits, 4, 2, idx, w);
  CHECK(idx[0] == 1);
  CHECK(idx[1] == 2);
  CHECK(w[0] == doctest::Approx(0.5));
  CHECK(w[1] == doctest::Approx(0.5));
  float l2[3] = {0.0f, std::log(3.0f), -5.0f};
  int i2[3];
  float w2[3];
  topk_softmax_ref(l2, 3, 3, i2, w2);  // k = E: plain softmax
  double s = 1 + 3 + std::exp(-5.0);
  CHECK(i2[0] == 1);
  CHECK(w2[0] == doctest::Approx(3 / s));
  CHECK(w2[2] == doctest::Approx(std::exp(-5.0) / s));
}

TEST_CASE("linear reference agrees with a naive triple loop for each pass") {
  LinearProblem p;
  p.tokens = 3;
  p.in = 5;
  p.out = 4;
  p.x = Gen{1, 127, 1.0f / 128};
  p.w = Gen{2, 127, 1.0f / 128};
  p.dy = Gen{3, 127, 1.0f / 128};
  auto X = [&](int t, int i) { return static_cast<double>(p.x(static_cast<std::uint64_t>(t * 5 + i))); };
  auto W = [&](int o, int i) { return static_cast<double>(p.w(static_cast<std::uint64_t>(o * 5 + i))); };
  auto DY = [&](int t, int o) { return static_cast<double>(p.dy(static_cast<std::uint64_t>(t * 4 + o))); };
  p.pass = "fwd";
  CHECK(p.out_rows() == 3);
  CHECK(p.out_cols() == 4);
  double s = 0;
  for (int i = 0; i < 5; ++i) s += X(2, i) * W(3, i);
  CHECK(linear_ref(p, 2, 3, nullptr) == doctest::Approx(s));
  p.pass = "dgrad";
  CHECK(p.out_cols() == 5);
  s = 0;
  for (int o = 0; o < 4; ++o) s += DY(1, o) * W(o, 4);
  CHECK(linear_ref(p, 1, 4, nullptr) == doctest::Approx(s));
  p.pass = "wgrad";
  CHECK(p.out_rows() == 4);
  CHECK(p.out_cols() == 5);
  s = 0;
  double a = 0;
  for (int t = 0; t < 3; ++t) {
    s += DY(t, 2) * X(t, 1);
    a += std::fabs(DY(t, 2) * X(t, 1));
  }
  double abs_sum = 0;
  CHECK(linear_ref(p, 2, 1, &abs_sum) == doctest::Approx(s));
  CHECK(abs_sum == doctest::Approx(a));
}

TEST_CASE("check_close reports the first mismatch, NaN fails") {
  std::vector<float> want = {1, 2, 3, 4}, got = {1, 2.001f, 3.5f, std::nanf("")};
  Check c = check_close(got.data(), want.data(), 4, 0, 1e-3);
  CHECK(!c.ok);
  CHECK(c.bad == 2);
  CHECK(c.first_bad == 2);
  CHECK(c.describe("x").find("2 of 4 values differ") != std::string::npos);
  CHECK(check_close(want.data(), want.data(), 4, 0, 0).ok);
}

namespace {
// loss = sum(out * dOut) of the exact (unrounded) forward with routing recomputed
double moe_loss(const MoeRefProblem& p) {
  auto logits = moe_logits_ref(p, false);
  auto r = moe_route_ref(logits, p.T, p.E, p.kk);
  auto f = moe_forward_ref(p, r, false);
  double l = 0;
  for (std::size_t i = 0; i < f.out.size(); ++i)
    l += static_cast<double>(f.out[i]) * static_cast<double>(p.dOut[i]);
  return l;
}
}  // namespace

TEST_CASE("MoE reference backward = finite differences of the forward (top-2 and dense)") {
  for (int kk : {2, 4}) {
    CAPTURE(kk);
    MoeRefProblem p = moe_problem(5, 6, 8, 4, kk);
    // larger weights than the benchmark's, so that every term matters at this tiny size
    for (auto* v : {&p.Wg, &p.W1, &p.W3, &p.W2}) {
      for (auto& x : *v) x *= 16;
    }
    auto logits = moe_logits_ref(p, false);
    auto r = moe_route_ref(logits, p.T, p.E, p.kk);
    auto f = moe_forward_ref(p, r, false);
    auto b = moe_backward_ref(p, r, f, false);
    const double eps = 1e-3;
    auto fd = [&](std::vector<float>& v, std::size_t i) {
      float keep = v[i];
      v[i] = keep + static_cast<float>(eps);
      double up = moe_loss(p);
      v[i] = keep - static_cast<float>(eps);
      double down = moe_loss(p);
      v[i] = keep;
      return (up - down) / (2 * eps);
    };
    auto near = [](double analytic, double numeric) {
      return std::fabs(analytic - numeric) <= 2e-3 + 2e-3 * std::fabs(numeric);
    };
    for (std::size_t i : {0u, 7u, 13u, 29u}) CHECK(near(b.dX[i], fd(p.X, i)));
    for (std::size_t i : {0u, 5u, 11u, 23u}) CHECK(near(b.dWg[i], fd(p.Wg, i)));
    for (std::size_t i : {0u, 17u, 60u, 150u}) {
      CHECK(near(b.dW1[i], fd(p.W1, i)));
      CHECK(near(b.dW3[i], fd(p.W3, i)));
      CHECK(near(b.dW2[i], fd(p.W2, i)));
    }
  }
}

TEST_CASE("MoE reference with bf16 rounding stays close to the exact one") {
  MoeRefProblem p = moe_problem(7, 32, 48, 4, 2);
  auto logits = moe_logits_ref(p, false);
  auto r = moe_route_ref(logits, p.T, p.E, p.kk);
  auto exact = moe_forward_ref(p, r, false);
  auto rounded = moe_forward_ref(p, r, true);
  double mx = 0;
  for (float v : exact.out) mx = std::max(mx, static_cast<double>(std::fabs(v)));
  Check c = check_close(rounded.out.data(), exact.out.data(), static_cast<std::int64_t>(exact.out.size()),
                        0.02 * mx, 0.02);
  CHECK_MESSAGE(c.ok, c.describe("out"));
}

// ---- op classes between the GEMMs (issue 38) ----

TEST_CASE("RMSNorm backward reference = finite differences of w * x rstd") {
  const std::int64_t n = 7;
  std::vector<float> x = {0.5f, -1.25f, 2.0f, 0.75f, -0.5f, 1.5f, -2.25f};
  std::vector<float> w = {1.0f, 0.5f, -0.75f, 2.0f, 1.25f, -1.0f, 0.25f};
  std::vector<float> dy = {0.3f, -0.2f, 0.1f, 0.4f, -0.6f, 0.05f, 0.7f};
  const float eps = 1e-5f;
  const double epsd = 1e-5;
  auto loss = [&](const std::vector<double>& xs) {  // sum dy * w * x * rstd (no bf16 rounding)
    double ss = 0;
    for (double v : xs) ss += v * v;
    const double rstd = 1.0 / std::sqrt(ss / static_cast<double>(n) + epsd);
    double l = 0;
    for (std::size_t i = 0; i < xs.size(); ++i)
      l += static_cast<double>(dy[i]) * static_cast<double>(w[i]) * xs[i] * rstd;
    return l;
  };
  std::vector<double> dx(7), dw(7);
  ftcost::calib::rmsnorm_bwd_ref(x.data(), w.data(), dy.data(), dx.data(), dw.data(), n, eps);
  for (std::size_t i = 0; i < 7; ++i) {
    std::vector<double> hi(x.begin(), x.end()), lo(x.begin(), x.end());
    hi[i] += 1e-6;
    lo[i] -= 1e-6;
    CHECK(dx[i] == doctest::Approx((loss(hi) - loss(lo)) / 2e-6).epsilon(1e-6));
  }
  // dw = dy * bf16(xhat): xhat of x[0] = 0.5 / rms(x)
  double ss = 0;
  for (float v : x) ss += static_cast<double>(v) * static_cast<double>(v);
  const double xhat0 = 0.5 / std::sqrt(ss / 7 + epsd);
  CHECK(dw[0] == doctest::Approx(0.3f * ftcost::calib::round_bf16(static_cast<float>(xhat0))));
}

TEST_CASE("cross-entropy reference: loss = lse - x[label], gradient = softmax - one-hot, by hand") {
  const std::vector<float> logits = {1.0f, 2.0f, 3.0f};
  auto r = ftcost::calib::cross_entropy_row_ref(logits.data(), 3, 2);
  const double lse = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0));  // 3.40760596
  CHECK(r.lse == doctest::Approx(lse));
  CHECK(r.loss == doctest::Approx(lse - 3.0));
  double sum = 0;
  for (int j = 0; j < 3; ++j) sum += ftcost::calib::cross_entropy_grad_ref(logits[j], r.lse, j == 2, 0.5);
  CHECK(sum == doctest::Approx(0.0).epsilon(1e-12));  // softmax sums to one
  CHECK(ftcost::calib::cross_entropy_grad_ref(3.0, r.lse, true, 0.5) ==
        doctest::Approx((std::exp(3.0 - lse) - 1.0) * 0.5));
  ftcost::calib::CeGens g;
  CHECK(g.label(5, 32000) == g.label(5, 32000));
  CHECK(g.label(5, 32000) < 32000);
}

namespace {
// A tiny grouped-query problem with explicit inputs (2 heads share 1 kv head).
ftcost::calib::AttnProblem tiny_attention() {
  ftcost::calib::AttnProblem p;
  p.batch = 1;
  p.heads = 2;
  p.kv_heads = 1;
  p.dim = 4;
  p.seq = 5;
  auto fill = [&](std::vector<double>& v, int nh, const ftcost::calib::Gen& g, double s) {
    v.resize(static_cast<std::size_t>(p.seq * nh * p.dim));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = s * static_cast<double>(g(i));
  };
  fill(p.q, 2, p.gq, 0.25);
  fill(p.k, 1, p.gk, 2.0);
  fill(p.v, 1, p.gv, 1.0);
  fill(p.dout, 2, p.gdo, 1.0);
  return p;
}
// sum over every output element of dO * O: its gradients are the backward's dQ, dK, dV
double attention_loss(const ftcost::calib::AttnProblem& p) {
  double l = 0;
  for (int h = 0; h < p.heads; ++h)
    for (std::int64_t i = 0; i < p.seq; ++i) {
      auto f = ftcost::calib::attention_fwd_ref(p, 0, h, i);
      for (int d = 0; d < p.dim; ++d) l += p.dO(0, i, h, d) * f.out[static_cast<std::size_t>(d)];
    }
  return l;
}
double central_difference(ftcost::calib::AttnProblem p,
                          std::vector<double> ftcost::calib::AttnProblem::*which, std::size_t i) {
  const double h = 1e-6;
  (p.*which)[i] += h;
  const double hi = attention_loss(p);
  (p.*which)[i] -= 2 * h;
  return (hi - attention_loss(p)) / (2 * h);
}
}  // namespace

TEST_CASE("attention reference: causal (row 0 sees only key 0) and backward = finite differences") {
  using ftcost::calib::AttnProblem;
  const AttnProblem p = tiny_attention();
  auto r0 = ftcost::calib::attention_fwd_ref(p, 0, 1, 0);  // the first query attends to the first key alone
  for (int d = 0; d < p.dim; ++d)
    CHECK(r0.out[static_cast<std::size_t>(d)] == doctest::Approx(p.V(0, 0, 0, d)));
  CHECK(r0.lse ==
        doctest::Approx(p.scale() * (p.Q(0, 0, 1, 0) * p.K(0, 0, 0, 0) + p.Q(0, 0, 1, 1) * p.K(0, 0, 0, 1) +
                                     p.Q(0, 0, 1, 2) * p.K(0, 0, 0, 2) + p.Q(0, 0, 1, 3) * p.K(0, 0, 0, 3))));
  for (int h = 0; h < 2; ++h)
    for (std::int64_t i = 0; i < p.seq; ++i) {
      auto dq = ftcost::calib::attention_dq_ref(p, 0, h, i, nullptr);
      for (int d = 0; d < p.dim; ++d)
        CHECK(dq[static_cast<std::size_t>(d)] ==
              doctest::Approx(central_difference(p, &AttnProblem::q, p.index(0, i, h, d, 2))).epsilon(1e-5));
    }
  for (std::int64_t j = 0; j < p.seq; ++j) {
    auto kv = ftcost::calib::attention_dkv_ref(p, 0, 0, j);
    for (int d = 0; d < p.dim; ++d) {
      const std::size_t at = p.index(0, j, 0, d, 1);
      CHECK(kv.dk[static_cast<std::size_t>(d)] ==
            doctest::Approx(central_difference(p, &AttnProblem::k, at)).epsilon(1e-5));
      CHECK(kv.dv[static_cast<std::size_t>(d)] ==
            doctest::Approx(central_difference(p, &AttnProblem::v, at)).epsilon(1e-5));
    }
  }
}
