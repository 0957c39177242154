// CPU references of the op classes between the GEMMs (issue 38): RMSNorm backward, softmax cross-entropy,
// causal grouped-query attention forward and backward. Double math; see reference.hpp for the formulas.
#include "ftcost/calibrate/reference.hpp"

#include <algorithm>
#include <cmath>

namespace ftcost::calib {

void rmsnorm_bwd_ref(const float* x, const float* w, const float* dy, double* dx, double* dw_row,
                     std::int64_t n, float eps) {
  auto d = [](float f) { return static_cast<double>(f); };
  double ss = 0, gx = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    ss += d(x[i]) * d(x[i]);
    gx += d(dy[i]) * d(w[i]) * d(x[i]);
  }
  const double nn = static_cast<double>(n);
  const double rstd = 1.0 / std::sqrt(ss / nn + d(eps));
  const double c = gx * rstd / nn;  // mean(g xhat)
  for (std::int64_t i = 0; i < n; ++i) {
    const double xhat = d(x[i]) * rstd;
    dx[i] = rstd * (d(dy[i]) * d(w[i]) - xhat * c);
    dw_row[i] = d(dy[i]) * d(round_bf16(static_cast<float>(xhat)));
  }
}

CeRowRef cross_entropy_row_ref(const float* logits, std::int64_t vocab, std::int64_t label) {
  double mx = logits[0];
  for (std::int64_t j = 1; j < vocab; ++j) mx = std::max(mx, static_cast<double>(logits[j]));
  double sum = 0;
  for (std::int64_t j = 0; j < vocab; ++j) sum += std::exp(static_cast<double>(logits[j]) - mx);
  CeRowRef r;
  r.lse = mx + std::log(sum);
  r.loss = r.lse - static_cast<double>(logits[label]);
  return r;
}

double cross_entropy_grad_ref(double logit, double lse, bool is_label, double grad_scale) {
  return (std::exp(logit - lse) - (is_label ? 1.0 : 0.0)) * grad_scale;
}

// ---- attention ----

namespace {
double pick(const std::vector<double>& v, const Gen& g, std::uint64_t i) {
  return v.empty() ? static_cast<double>(g(i)) : v[i];
}
}  // namespace

double AttnProblem::Q(int b, std::int64_t t, int h, int d) const {
  return pick(q, gq, index(b, t, h, d, heads));
}
double AttnProblem::K(int b, std::int64_t t, int g, int d) const {
  return pick(k, gk, index(b, t, g, d, kv_heads));
}
double AttnProblem::V(int b, std::int64_t t, int g, int d) const {
  return pick(v, gv, index(b, t, g, d, kv_heads));
}
double AttnProblem::dO(int b, std::int64_t t, int h, int d) const {
  return pick(dout, gdo, index(b, t, h, d, heads));
}
double AttnProblem::scale() const { return 1.0 / std::sqrt(static_cast<double>(dim)); }

namespace {
double score(const AttnProblem& p, int b, int h, std::int64_t i, std::int64_t j) {
  const int g = h / p.group();
  double s = 0;
  for (int d = 0; d < p.dim; ++d) s += p.Q(b, i, h, d) * p.K(b, j, g, d);
  return s * p.scale();
}
double dot_do_v(const AttnProblem& p, int b, int h, std::int64_t i, std::int64_t j) {
  const int g = h / p.group();
  double s = 0;
  for (int d = 0; d < p.dim; ++d) s += p.dO(b, i, h, d) * p.V(b, j, g, d);
  return s;
}
double dot_do_out(const AttnProblem& p, int b, int h, std::int64_t i, const std::vector<double>& out) {
  double s = 0;
  for (int d = 0; d < p.dim; ++d) s += p.dO(b, i, h, d) * out[static_cast<std::size_t>(d)];
  return s;
}
}  // namespace

AttnRowRef attention_fwd_ref(const AttnProblem& p, int b, int h, std::int64_t i) {
  const auto D = static_cast<std::size_t>(p.dim);
  const int g = h / p.group();
  std::vector<double> s(static_cast<std::size_t>(i + 1));
  double mx = -1e300;
  for (std::int64_t j = 0; j <= i; ++j)
    mx = std::max(mx, s[static_cast<std::size_t>(j)] = score(p, b, h, i, j));
  AttnRowRef r;
  r.out.assign(D, 0.0);
  r.abs.assign(D, 0.0);
  double l = 0;
  for (std::int64_t j = 0; j <= i; ++j) {
    const double e = std::exp(s[static_cast<std::size_t>(j)] - mx);
    l += e;
    for (int d = 0; d < p.dim; ++d) {
      const double v = p.V(b, j, g, d);
      r.out[static_cast<std::size_t>(d)] += e * v;
      r.abs[static_cast<std::size_t>(d)] += e * std::fabs(v);
    }
  }
  for (std::size_t d = 0; d < D; ++d) {
    r.out[d] /= l;
    r.abs[d] /= l;
  }
  r.lse = mx + std::log(l);
  return r;
}

std::vector<double> attention_dq_ref(const AttnProblem& p, int b, int h, std::int64_t i,
                                     std::vector<double>* abs) {
  const AttnRowRef f = attention_fwd_ref(p, b, h, i);
  const double Di = dot_do_out(p, b, h, i, f.out);
  const int g = h / p.group();
  std::vector<double> dq(static_cast<std::size_t>(p.dim), 0.0);
  if (abs) abs->assign(dq.size(), 0.0);
  for (std::int64_t j = 0; j <= i; ++j) {
    const double P = std::exp(score(p, b, h, i, j) - f.lse), dP = dot_do_v(p, b, h, i, j);
    const double dS = P * (dP - Di) * p.scale();
    const double mag = P * (std::fabs(dP) + std::fabs(Di)) * p.scale();  // before dP - D cancels
    for (int d = 0; d < p.dim; ++d) {
      const double kk = p.K(b, j, g, d);
      dq[static_cast<std::size_t>(d)] += dS * kk;
      if (abs) (*abs)[static_cast<std::size_t>(d)] += mag * std::fabs(kk);
    }
  }
  return dq;
}

AttnKvRef attention_dkv_ref(const AttnProblem& p, int b, int g, std::int64_t j) {
  const auto D = static_cast<std::size_t>(p.dim);
  AttnKvRef r;
  r.dk.assign(D, 0.0);
  r.dv.assign(D, 0.0);
  r.abs_dk.assign(D, 0.0);
  r.abs_dv.assign(D, 0.0);
  for (int h = g * p.group(); h < (g + 1) * p.group(); ++h) {
    for (std::int64_t i = j; i < p.seq; ++i) {
      const AttnRowRef f = attention_fwd_ref(p, b, h, i);
      const double P = std::exp(score(p, b, h, i, j) - f.lse), dP = dot_do_v(p, b, h, i, j);
      const double Di = dot_do_out(p, b, h, i, f.out);
      const double dS = P * (dP - Di) * p.scale();
      const double mag = P * (std::fabs(dP) + std::fabs(Di)) * p.scale();  // before dP - D cancels
      for (int d = 0; d < p.dim; ++d) {
        const auto k = static_cast<std::size_t>(d);
        const double dO = p.dO(b, i, h, d), q = p.Q(b, i, h, d);
        r.dv[k] += P * dO;
        r.abs_dv[k] += std::fabs(P * dO);
        r.dk[k] += dS * q;
        r.abs_dk[k] += mag * std::fabs(q);
      }
    }
  }
  return r;
}

}  // namespace ftcost::calib
