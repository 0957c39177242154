// The solvers over the fittable parameters (ftcost/fit.hpp): Nelder-Mead, Levenberg-Marquardt with its
// standard errors, the small linear algebra they need, and the identifiability report.
#include "ftcost/fit.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace ftcost::fit {

// Nelder-Mead minimisation of f from `start` with an initial simplex of edge `step`; returns the best vertex.
Vec nelder_mead(const Objective& f, const Vec& start, double step) {
  const std::size_t n = start.size();
  std::vector<std::vector<double>> simplex(n + 1, start);
  for (std::size_t j = 1; j <= n; ++j) simplex[j][j - 1] += step;
  std::vector<double> fv(n + 1);
  for (std::size_t j = 0; j <= n; ++j) fv[j] = f(simplex[j]);
  for (int iter = 0; iter < 1500; ++iter) {
    std::vector<std::size_t> order(n + 1);
    for (std::size_t i = 0; i <= n; ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return fv[a] < fv[b]; });
    std::vector<std::vector<double>> s2;
    std::vector<double> f2;
    for (auto o : order) {
      s2.push_back(simplex[o]);
      f2.push_back(fv[o]);
    }
    simplex = s2;
    fv = f2;
    if (fv[n] - fv[0] < 1e-10) break;
    std::vector<double> c(n, 0.0);
    for (std::size_t j = 0; j < n; ++j)
      for (std::size_t i = 0; i < n; ++i) c[i] += simplex[j][i] / static_cast<double>(n);
    auto lerp = [&](double t) {
      std::vector<double> x(n);
      for (std::size_t i = 0; i < n; ++i) x[i] = c[i] + t * (simplex[n][i] - c[i]);
      return x;
    };
    auto xr = lerp(-1.0);
    const double fr = f(xr);
    if (fr < fv[0]) {
      auto xe = lerp(-2.0);
      const double fe = f(xe);
      simplex[n] = fe < fr ? xe : xr;
      fv[n] = std::min(fe, fr);
    } else if (fr < fv[n - 1]) {
      simplex[n] = xr;
      fv[n] = fr;
    } else {
      auto xc = lerp(fr < fv[n] ? -0.5 : 0.5);
      const double fc = f(xc);
      if (fc < std::min(fr, fv[n])) {
        simplex[n] = xc;
        fv[n] = fc;
      } else {  // shrink towards the best vertex
        for (std::size_t j = 1; j <= n; ++j) {
          for (std::size_t i = 0; i < n; ++i)
            simplex[j][i] = simplex[0][i] + 0.5 * (simplex[j][i] - simplex[0][i]);
          fv[j] = f(simplex[j]);
        }
      }
    }
  }
  return simplex[static_cast<std::size_t>(std::min_element(fv.begin(), fv.end()) - fv.begin())];
}

bool solve(Mat a, Vec b, Vec& x) {
  const std::size_t n = b.size();
  for (std::size_t c = 0; c < n; ++c) {
    std::size_t piv = c;
    for (std::size_t r = c + 1; r < n; ++r)
      if (std::fabs(a[r][c]) > std::fabs(a[piv][c])) piv = r;
    if (std::fabs(a[piv][c]) < 1e-300) return false;
    std::swap(a[c], a[piv]);
    std::swap(b[c], b[piv]);
    for (std::size_t r = c + 1; r < n; ++r) {
      const double f = a[r][c] / a[c][c];
      for (std::size_t k = c; k < n; ++k) a[r][k] -= f * a[c][k];
      b[r] -= f * b[c];
    }
  }
  x.assign(n, 0);
  for (std::size_t c = n; c-- > 0;) {
    double s = b[c];
    for (std::size_t k = c + 1; k < n; ++k) s -= a[c][k] * x[k];
    x[c] = s / a[c][c];
  }
  return true;
}

bool invert(const Mat& a, Mat& inv) {
  const std::size_t n = a.size();
  inv.assign(n, Vec(n, 0));
  for (std::size_t j = 0; j < n; ++j) {
    Vec e(n, 0);
    Vec col;
    e[j] = 1;
    if (!solve(a, e, col)) return false;
    for (std::size_t i = 0; i < n; ++i) inv[i][j] = col[i];
  }
  return true;
}

Mat normal_matrix(const Mat& jm, std::size_t p) {
  Mat jtj(p, Vec(p, 0));
  for (const auto& row : jm)
    for (std::size_t a = 0; a < p; ++a)
      for (std::size_t b = 0; b < p; ++b) jtj[a][b] += row[a] * row[b];
  return jtj;
}

double t975(std::size_t dof) {
  static const double tab[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                               2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                               2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
  if (dof == 0) return 0;
  if (dof <= 30) return tab[dof - 1];
  return 1.96 + 2.5 / static_cast<double>(dof);
}

double rms_of(const Vec& r) {
  double s = 0;
  for (double v : r) s += v * v;
  return r.empty() ? 0.0 : std::sqrt(s / static_cast<double>(r.size()));
}

double sse_of(const Vec& r) {
  double s = 0;
  for (double v : r) s += v * v;
  return s;
}

double mean_of(const Vec& v) {
  double m = 0;
  for (double e : v) m += e;
  return v.empty() ? 0.0 : m / static_cast<double>(v.size());
}

Mat jacobian(const Residuals& residuals, const Vec& x, std::size_t n, double h) {
  const std::size_t p = x.size();
  Mat jm(n, Vec(p));
  for (std::size_t j = 0; j < p; ++j) {
    Vec xa = x;
    Vec xb = x;
    xa[j] += h;
    xb[j] -= h;
    const Vec ra = residuals(xa);
    const Vec rb = residuals(xb);
    for (std::size_t i = 0; i < n; ++i) jm[i][j] = (ra[i] - rb[i]) / (2 * h);
  }
  return jm;
}

namespace {

constexpr double kJacobianStep = 1e-4;

// One Levenberg-Marquardt iteration: up to 30 damping tries for a step that lowers the SSE. Returns false
// when none does; sets converged when the gain is negligible.
bool lm_iteration(const Residuals& residuals, LmState& s, double& lambda, bool& converged) {
  const std::size_t p = s.x.size();
  const Mat jm = jacobian(residuals, s.x, s.r.size(), kJacobianStep);
  const Mat jtj = normal_matrix(jm, p);
  Vec jtr(p, 0);
  for (std::size_t i = 0; i < jm.size(); ++i)
    for (std::size_t a = 0; a < p; ++a) jtr[a] += jm[i][a] * s.r[i];
  for (int tries = 0; tries < 30; ++tries) {
    Mat a = jtj;
    for (std::size_t k = 0; k < p; ++k) a[k][k] += lambda * (jtj[k][k] + 1e-12);
    Vec neg(p);
    Vec dx;
    for (std::size_t k = 0; k < p; ++k) neg[k] = -jtr[k];
    if (!solve(a, neg, dx)) {
      lambda *= 10;
      continue;
    }
    Vec xn = s.x;
    for (std::size_t k = 0; k < p; ++k) xn[k] += std::max(-3.0, std::min(3.0, dx[k]));
    Vec rn = residuals(xn);
    const double fn = sse_of(rn);
    if (fn < s.f) {
      const double gain = s.f - fn;
      s.x = xn;
      s.r = rn;
      s.f = fn;
      lambda = std::max(lambda / 10, 1e-9);
      converged = gain < 1e-14 * (1 + s.f);
      return true;
    }
    lambda *= 10;
  }
  return false;
}

}  // namespace

void levenberg_marquardt(const Residuals& residuals, LmState& s, int max_iter) {
  s.r = residuals(s.x);
  s.f = sse_of(s.r);
  double lambda = 1e-3;
  bool converged = false;
  for (int iter = 0; iter < max_iter && !s.x.empty() && !converged; ++iter)
    if (!lm_iteration(residuals, s, lambda, converged)) break;
}

Vec standard_errors(const Residuals& residuals, const LmState& s, const std::vector<const FitParam*>& params,
                    std::size_t n, std::size_t dof) {
  const std::size_t p = params.size();
  Vec sig(p, 0);
  if (p == 0 || dof == 0) return sig;
  const Mat jtj = normal_matrix(jacobian(residuals, s.x, n, kJacobianStep), p);
  Mat inv;
  const double s2 = s.f / static_cast<double>(dof);
  if (!invert(jtj, inv)) return sig;
  for (std::size_t j = 0; j < p; ++j) {
    const double l = logistic(s.x[j]);
    sig[j] = std::sqrt(std::max(0.0, s2 * inv[j][j])) * (params[j]->hi - params[j]->lo) * l * (1 - l);
  }
  return sig;
}

Sensitivity sensitivity(const FitParam& p, const StackProfile& at,
                        const std::function<Vec(const StackProfile&)>& residuals, std::size_t n) {
  StackProfile a = at;
  StackProfile b = at;
  const double v = at.*(p.field);
  const double h = 0.02;
  a.*(p.field) = v * std::exp(h);
  b.*(p.field) = v * std::exp(-h);
  const Vec ra = residuals(a);
  const Vec rb = residuals(b);
  Sensitivity c{&p, Vec(n), 0};
  for (std::size_t i = 0; i < n; ++i) {
    c.d[i] = (ra[i] - rb[i]) / (2 * h);
    c.norm += c.d[i] * c.d[i];
  }
  c.norm = std::sqrt(c.norm / static_cast<double>(std::max<std::size_t>(n, 1)));
  return c;
}

std::vector<const FitParam*> choose_identifiable(std::vector<Sensitivity> cols, std::size_t n,
                                                 std::map<std::string, std::string>& why_not) {
  std::vector<const FitParam*> chosen;
  std::sort(cols.begin(), cols.end(),
            [](const Sensitivity& a, const Sensitivity& b) { return a.norm > b.norm; });
  Mat basis;  // orthonormal (Gram-Schmidt) of the chosen columns
  for (const auto& c : cols) {
    if (c.norm < 0.01) {
      why_not[c.p->name] =
          "not identifiable from these runs: doubling it moves their step time by less than 1%";
      continue;
    }
    Vec v = c.d;
    for (const auto& e : basis) {
      double dot = 0;
      for (std::size_t i = 0; i < n; ++i) dot += v[i] * e[i];
      for (std::size_t i = 0; i < n; ++i) v[i] -= dot * e[i];
    }
    double nv = 0;
    for (double x : v) nv += x * x;
    nv = std::sqrt(nv / static_cast<double>(n));
    if (nv < 0.1 * c.norm) {
      why_not[c.p->name] = "not separable from " + std::string(chosen.empty() ? "" : chosen[0]->name) +
                           (chosen.size() > 1 ? " and the other fitted parameters" : "") +
                           " with these batch shapes (record other batch sizes or lengths to fit it)";
      continue;
    }
    if (chosen.size() + 1 > (n > 1 ? n - 1 : 1)) {
      why_not[c.p->name] = "too few timed steps for another parameter";
      continue;
    }
    for (double& x : v) x /= nv * std::sqrt(static_cast<double>(n));
    basis.push_back(v);
    chosen.push_back(c.p);
  }
  return chosen;
}

}  // namespace ftcost::fit
