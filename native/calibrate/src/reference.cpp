#include "ftcost/calibrate/reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

// References accumulate float data in double on purpose: promotion is the point here.
#pragma GCC diagnostic ignored "-Wdouble-promotion"

namespace ftcost::calib {

// ---- GEMM ----

std::int64_t LinearProblem::out_rows() const { return pass == "wgrad" ? out : tokens; }
std::int64_t LinearProblem::out_cols() const { return pass == "fwd" ? out : in; }

double linear_ref(const LinearProblem& p, std::int64_t row, std::int64_t col, double* abs_sum) {
  double s = 0, a = 0;
  const auto in = static_cast<std::uint64_t>(p.in), out = static_cast<std::uint64_t>(p.out);
  const auto r = static_cast<std::uint64_t>(row), c = static_cast<std::uint64_t>(col);
  if (p.pass == "fwd") {  // Y[t=row, o=col]
    for (std::uint64_t i = 0; i < in; ++i) {
      double v = static_cast<double>(p.x(r * in + i)) * static_cast<double>(p.w(c * in + i));
      s += v;
      a += std::fabs(v);
    }
  } else if (p.pass == "dgrad") {  // dX[t=row, i=col]
    for (std::uint64_t o = 0; o < out; ++o) {
      double v = static_cast<double>(p.dy(r * out + o)) * static_cast<double>(p.w(o * in + c));
      s += v;
      a += std::fabs(v);
    }
  } else {  // dW[o=row, i=col]
    const auto tokens = static_cast<std::uint64_t>(p.tokens);
    for (std::uint64_t t = 0; t < tokens; ++t) {
      double v = static_cast<double>(p.dy(t * out + r)) * static_cast<double>(p.x(t * in + c));
      s += v;
      a += std::fabs(v);
    }
  }
  if (abs_sum) *abs_sum = a;
  return s;
}

// ---- comparisons ----

void check_one(Check& c, std::int64_t index, double got, double want, double tol) {
  ++c.checked;
  double err = std::fabs(got - want);
  if (!(err <= tol)) {  // NaN fails
    if (c.bad == 0) {
      c.first_bad = index;
      c.got = got;
      c.want = want;
      c.tol = tol;
    }
    ++c.bad;
    c.ok = false;
  }
  double rel = tol > 0 ? err / tol : (err > 0 ? 1e300 : 0);
  if (std::isnan(err)) rel = 1e300;
  c.max_rel_err = std::max(c.max_rel_err, rel);
}

Check check_close(const float* got, const float* want, std::int64_t n, double atol, double rtol) {
  Check c;
  for (std::int64_t i = 0; i < n; ++i) {
    check_one(c, i, got[i], want[i], atol + rtol * std::fabs(static_cast<double>(want[i])));
  }
  return c;
}

std::string Check::describe(const std::string& what) const {
  char buf[256];
  if (ok) {
    std::snprintf(buf, sizeof buf, "%s: %lld values match (worst error %.2g of tolerance)", what.c_str(),
                  static_cast<long long>(checked), max_rel_err);
  } else {
    std::snprintf(buf, sizeof buf,
                  "%s: %lld of %lld values differ from the CPU reference; first at index %lld: got %.6g, "
                  "expected %.6g (tolerance %.3g)",
                  what.c_str(), static_cast<long long>(bad), static_cast<long long>(checked),
                  static_cast<long long>(first_bad), got, want, tol);
  }
  return buf;
}

// ---- NF4 ----

const float kNf4Code[16] = {-1.0f,
                            -0.6961928009986877f,
                            -0.5250730514526367f,
                            -0.39491748809814453f,
                            -0.28444138169288635f,
                            -0.18477343022823334f,
                            -0.09105003625154495f,
                            0.0f,
                            0.07958029955625534f,
                            0.16093020141124725f,
                            0.24611230194568634f,
                            0.33791524171829224f,
                            0.44070982933044434f,
                            0.5626170039176941f,
                            0.7229568362236023f,
                            1.0f};

std::vector<float> bnb_dynamic_map_signed() {
  // bitsandbytes.functional.create_dynamic_map(signed=True, max_exponent_bits=7, total_bits=8)
  const int max_exponent_bits = 7, non_sign_bits = 7;
  std::vector<double> data;
  for (int i = 0; i < max_exponent_bits; ++i) {
    int fraction_items = (1 << (i + non_sign_bits - max_exponent_bits)) + 1;
    std::vector<double> boundaries;
    for (int b = 0; b < fraction_items; ++b) {
      boundaries.push_back(0.1 + 0.9 * b / (fraction_items - 1));  // torch.linspace(0.1, 1, fraction_items)
    }
    double scale = std::pow(10.0, -(max_exponent_bits - 1) + i);
    for (int b = 0; b + 1 < fraction_items; ++b) {
      double mean =
          (boundaries[static_cast<std::size_t>(b)] + boundaries[static_cast<std::size_t>(b) + 1]) / 2.0;
      data.push_back(scale * mean);
      data.push_back(-scale * mean);
    }
  }
  data.push_back(0.0);
  data.push_back(1.0);
  while (data.size() < 256) data.push_back(0.0);
  std::sort(data.begin(), data.end());
  return std::vector<float>(data.begin(), data.end());
}

float nf4_ref(const Nf4Inputs& in, const std::vector<float>& code2, std::int64_t i, bool bnb_sequence) {
  const auto u = static_cast<std::uint64_t>(i);
  std::uint8_t byte = in.packed(u / 2);
  int code = (u % 2 == 0) ? (byte >> 4) : (byte & 0x0F);
  std::uint64_t block = u / 64;
  float a = code2[in.qabsmax(block)] * in.absmax2(block / 256);
  a = a + in.offset;
  float v = kNf4Code[code] * a;
  if (bnb_sequence) v = round_half(v);
  return round_bf16(v);
}

// ---- AdamW ----

void adamw_ref(float& p, float g, float& m, float& v, const AdamwHyper& h, int step) {
  double bc1 = 1.0 - std::pow(static_cast<double>(h.beta1), step);
  double bc2 = 1.0 - std::pow(static_cast<double>(h.beta2), step);
  double pd = static_cast<double>(p) * (1.0 - static_cast<double>(h.lr) * h.weight_decay);
  double md = static_cast<double>(h.beta1) * m + (1.0 - h.beta1) * static_cast<double>(g);
  double vd = static_cast<double>(h.beta2) * v + (1.0 - h.beta2) * static_cast<double>(g) * g;
  double denom = std::sqrt(vd) / std::sqrt(bc2) + h.eps;
  pd -= (static_cast<double>(h.lr) / bc1) * md / denom;
  p = static_cast<float>(pd);
  m = static_cast<float>(md);
  v = static_cast<float>(vd);
}

// ---- elementwise ----

double silu_ref(double x) { return x / (1.0 + std::exp(-x)); }
double dsilu_ref(double x) {
  double s = 1.0 / (1.0 + std::exp(-x));
  return s * (1.0 + x * (1.0 - s));
}
double gelu_tanh_ref(double x) {
  const double c = std::sqrt(2.0 / 3.14159265358979323846);
  return 0.5 * x * (1.0 + std::tanh(c * (x + 0.044715 * x * x * x)));
}

void rmsnorm_ref(const float* x, const float* w, float* y, std::int64_t n, float eps) {
  double ss = 0;
  for (std::int64_t i = 0; i < n; ++i) ss += static_cast<double>(x[i]) * x[i];
  double rstd = 1.0 / std::sqrt(ss / static_cast<double>(n) + eps);
  for (std::int64_t i = 0; i < n; ++i) {
    float normed = round_bf16(static_cast<float>(x[i] * rstd));
    y[i] = round_bf16(w[i] * normed);
  }
}

// ---- routing ----

void topk_softmax_ref(const float* logits, int experts, int k, int* idx, float* w) {
  double mx = logits[0];
  for (int e = 1; e < experts; ++e) mx = std::max(mx, static_cast<double>(logits[e]));
  std::vector<double> p(static_cast<std::size_t>(experts));
  double sum = 0;
  for (int e = 0; e < experts; ++e) sum += p[static_cast<std::size_t>(e)] = std::exp(logits[e] - mx);
  std::vector<bool> taken(static_cast<std::size_t>(experts), false);
  double sel = 0;
  for (int j = 0; j < k; ++j) {
    int best = -1;
    for (int e = 0; e < experts; ++e) {
      if (taken[static_cast<std::size_t>(e)]) continue;
      if (best < 0 || logits[e] > logits[best]) best = e;
    }
    taken[static_cast<std::size_t>(best)] = true;
    idx[j] = best;
    sel += p[static_cast<std::size_t>(best)] / sum;
  }
  for (int j = 0; j < k; ++j) w[j] = static_cast<float>(p[static_cast<std::size_t>(idx[j])] / sum / sel);
}

// ---- MoE ----

namespace {
inline float rnd(double v, bool round) {
  return round ? round_bf16(static_cast<float>(v)) : static_cast<float>(v);
}
inline std::size_t z(std::int64_t v) { return static_cast<std::size_t>(v); }
}  // namespace

MoeRefProblem moe_problem(int T, int H, int F, int E, int kk, const MoeGens& g) {
  MoeRefProblem p;
  p.T = T;
  p.H = H;
  p.F = F;
  p.E = E;
  p.kk = kk;
  auto fill = [](std::vector<float>& v, std::int64_t n, const Gen& gen) {
    v.resize(z(n));
    for (std::int64_t i = 0; i < n; ++i) v[z(i)] = gen(static_cast<std::uint64_t>(i));
  };
  const std::int64_t t = T, h = H, f = F, e = E;
  fill(p.X, t * h, g.x);
  fill(p.Wg, e * h, g.wg);
  fill(p.W1, e * f * h, g.w1);
  fill(p.W3, e * f * h, g.w3);
  fill(p.W2, e * h * f, g.w2);
  fill(p.dOut, t * h, g.dout);
  return p;
}

std::vector<float> moe_logits_ref(const MoeRefProblem& p, bool round) {
  std::vector<float> logits(z(std::int64_t{p.T} * p.E));
  for (int t = 0; t < p.T; ++t) {
    for (int e = 0; e < p.E; ++e) {
      double s = 0;
      for (int h = 0; h < p.H; ++h)
        s += static_cast<double>(p.X[z(std::int64_t{t} * p.H + h)]) * p.Wg[z(std::int64_t{e} * p.H + h)];
      logits[z(std::int64_t{t} * p.E + e)] = rnd(s, round);
    }
  }
  return logits;
}

MoeRefRouting moe_route_ref(const std::vector<float>& logits, int T, int E, int kk) {
  MoeRefRouting r;
  r.idx.resize(z(std::int64_t{T} * kk));
  r.w.resize(z(std::int64_t{T} * kk));
  for (int t = 0; t < T; ++t) {
    topk_softmax_ref(&logits[z(std::int64_t{t} * E)], E, kk, &r.idx[z(std::int64_t{t} * kk)],
                     &r.w[z(std::int64_t{t} * kk)]);
  }
  return r;
}

MoeRefForward moe_forward_ref(const MoeRefProblem& p, const MoeRefRouting& r, bool round) {
  const std::int64_t T = p.T, H = p.H, F = p.F, kk = p.kk, R = T * kk;
  MoeRefForward f;
  f.logits = moe_logits_ref(p, round);
  f.H1.assign(z(R * F), 0);
  f.H3.assign(z(R * F), 0);
  f.A.assign(z(R * F), 0);
  f.Yp.assign(z(R * H), 0);
  f.out.assign(z(T * H), 0);
  for (std::int64_t a = 0; a < R; ++a) {
    const std::int64_t t = a / kk, e = r.idx[z(a)];
    const float* x = &p.X[z(t * H)];
    for (std::int64_t j = 0; j < F; ++j) {
      const float* w1 = &p.W1[z((e * F + j) * H)];
      const float* w3 = &p.W3[z((e * F + j) * H)];
      double s1 = 0, s3 = 0;
      for (std::int64_t h = 0; h < H; ++h) {
        s1 += static_cast<double>(x[h]) * w1[h];
        s3 += static_cast<double>(x[h]) * w3[h];
      }
      float h1 = rnd(s1, round), h3 = rnd(s3, round);
      f.H1[z(a * F + j)] = h1;
      f.H3[z(a * F + j)] = h3;
      f.A[z(a * F + j)] = rnd(silu_ref(h1) * h3, round);
    }
    for (std::int64_t h = 0; h < H; ++h) {
      const float* w2 = &p.W2[z((e * H + h) * F)];
      double s = 0;
      for (std::int64_t j = 0; j < F; ++j) s += static_cast<double>(f.A[z(a * F + j)]) * w2[j];
      f.Yp[z(a * H + h)] = rnd(s, round);
    }
  }
  for (std::int64_t t = 0; t < T; ++t) {
    for (std::int64_t h = 0; h < H; ++h) {
      double s = 0;
      for (std::int64_t j = 0; j < kk; ++j)
        s += static_cast<double>(r.w[z(t * kk + j)]) * f.Yp[z((t * kk + j) * H + h)];
      f.out[z(t * H + h)] = rnd(s, round);
    }
  }
  return f;
}

MoeRefBackward moe_backward_ref(const MoeRefProblem& p, const MoeRefRouting& r, const MoeRefForward& f,
                                bool round) {
  const std::int64_t T = p.T, H = p.H, F = p.F, E = p.E, kk = p.kk, R = T * kk;
  MoeRefBackward b;
  b.dw.assign(z(T * kk), 0);
  b.dlogits.assign(z(T * E), 0);
  b.dX.assign(z(T * H), 0);
  b.dW1.assign(z(E * F * H), 0);
  b.dW3.assign(z(E * F * H), 0);
  b.dW2.assign(z(E * H * F), 0);
  b.dWg.assign(z(E * H), 0);
  std::vector<double> dW1(b.dW1.size(), 0), dW3(b.dW3.size(), 0), dW2(b.dW2.size(), 0);
  std::vector<float> dXp(z(R * H), 0);
  std::vector<float> dYp(z(R * H)), dA(z(F)), dH1(z(F)), dH3(z(F));
  for (std::int64_t a = 0; a < R; ++a) {
    const std::int64_t t = a / kk, e = r.idx[z(a)];
    // unpermute backward
    double dwa = 0;
    for (std::int64_t h = 0; h < H; ++h) {
      dYp[z(a * H + h)] = rnd(static_cast<double>(r.w[z(a)]) * p.dOut[z(t * H + h)], round);
      dwa += static_cast<double>(p.dOut[z(t * H + h)]) * f.Yp[z(a * H + h)];
    }
    b.dw[z(a)] = static_cast<float>(dwa);
    // w2: dA = dYp W2[e]  ([H] x [H,F]); dW2[e] += dYp^T A
    for (std::int64_t j = 0; j < F; ++j) {
      double s = 0;
      for (std::int64_t h = 0; h < H; ++h)
        s += static_cast<double>(dYp[z(a * H + h)]) * p.W2[z((e * H + h) * F + j)];
      dA[z(j)] = rnd(s, round);
    }
    for (std::int64_t h = 0; h < H; ++h) {
      double d = dYp[z(a * H + h)];
      if (d == 0) continue;
      for (std::int64_t j = 0; j < F; ++j) dW2[z((e * H + h) * F + j)] += d * f.A[z(a * F + j)];
    }
    // SwiGLU backward
    for (std::int64_t j = 0; j < F; ++j) {
      double h1 = f.H1[z(a * F + j)], h3 = f.H3[z(a * F + j)], da = dA[z(j)];
      dH1[z(j)] = rnd(da * h3 * dsilu_ref(h1), round);
      dH3[z(j)] = rnd(da * silu_ref(h1), round);
    }
    // w1/w3: dXp = dH1 W1[e] + dH3 W3[e]; dW1[e] += dH1^T x, dW3[e] += dH3^T x
    for (std::int64_t h = 0; h < H; ++h) {
      double s1 = 0, s3 = 0;
      for (std::int64_t j = 0; j < F; ++j) {
        s1 += static_cast<double>(dH1[z(j)]) * p.W1[z((e * F + j) * H + h)];
        s3 += static_cast<double>(dH3[z(j)]) * p.W3[z((e * F + j) * H + h)];
      }
      dXp[z(a * H + h)] = rnd(static_cast<double>(rnd(s1, round)) + s3, round);
    }
    const float* x = &p.X[z(t * H)];
    for (std::int64_t j = 0; j < F; ++j) {
      double d1 = dH1[z(j)], d3 = dH3[z(j)];
      for (std::int64_t h = 0; h < H; ++h) {
        dW1[z((e * F + j) * H + h)] += d1 * x[h];
        dW3[z((e * F + j) * H + h)] += d3 * x[h];
      }
    }
  }
  // router: w = softmax over the chosen logits -> dlogit_s = w_s (dw_s - sum_i w_i dw_i)
  for (std::int64_t t = 0; t < T; ++t) {
    double dot = 0;
    for (std::int64_t j = 0; j < kk; ++j)
      dot += static_cast<double>(r.w[z(t * kk + j)]) * b.dw[z(t * kk + j)];
    for (std::int64_t j = 0; j < kk; ++j) {
      double g = static_cast<double>(r.w[z(t * kk + j)]) * (static_cast<double>(b.dw[z(t * kk + j)]) - dot);
      b.dlogits[z(t * E + r.idx[z(t * kk + j)])] = rnd(g, round);
    }
  }
  // permute backward, then + dlogits Wg
  for (std::int64_t t = 0; t < T; ++t) {
    for (std::int64_t h = 0; h < H; ++h) {
      double s = 0;
      for (std::int64_t j = 0; j < kk; ++j) s += dXp[z((t * kk + j) * H + h)];
      double gx = rnd(s, round);
      for (std::int64_t e = 0; e < E; ++e)
        gx += static_cast<double>(b.dlogits[z(t * E + e)]) * p.Wg[z(e * H + h)];
      b.dX[z(t * H + h)] = rnd(gx, round);
    }
  }
  for (std::int64_t e = 0; e < E; ++e) {
    for (std::int64_t h = 0; h < H; ++h) {
      double s = 0;
      for (std::int64_t t = 0; t < T; ++t)
        s += static_cast<double>(b.dlogits[z(t * E + e)]) * p.X[z(t * H + h)];
      b.dWg[z(e * H + h)] = rnd(s, round);
    }
  }
  for (std::size_t i = 0; i < dW1.size(); ++i) {
    b.dW1[i] = rnd(dW1[i], round);
    b.dW3[i] = rnd(dW3[i], round);
  }
  for (std::size_t i = 0; i < dW2.size(); ++i) b.dW2[i] = rnd(dW2[i], round);
  return b;
}

}  // namespace ftcost::calib
