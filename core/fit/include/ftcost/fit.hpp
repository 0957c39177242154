// Fitting a stack profile's free parameters, in one place (core/fit, a layer above predict and below app):
// the table of fittable parameters (the member each fills, its range, where the range comes from), the
// logit map that keeps a solver inside a range, both solvers (Nelder-Mead for `ftcost fit-stack` on the
// reference rows, Levenberg-Marquardt for the refit to a user's runs) and the identifiability report (which
// parameters the data can tell apart, and why the others are not fitted). The callers (core/app/src/
// validate.cpp fit_stack, core/app/src/run_fit.cpp fit_stack_to_runs) supply the residuals.
#pragma once

#include "ftcost/error.hpp"
#include "ftcost/stack.hpp"

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace ftcost::fit {

enum class FitKind { step_time, memory };

// One fittable parameter of a stack profile.
struct FitParam {
  const char* name;             // the profile's field name (throughput.* or memory.*)
  double StackProfile::*field;  // the member it fills
  double lo, hi;                // the range a fit may not leave
  FitKind kind;
  bool count;              // a number of tensors: scanned over whole numbers
  const char* provenance;  // where the range comes from
};

// Every fittable parameter, in the order fit-stack frees them when a profile names none.
const std::vector<FitParam>& fit_params();
// The parameters of one kind, in the table's order.
std::vector<const FitParam*> fit_params_of(FitKind kind);
// The parameters `names` names (of `kind`), in that order; an error naming `field` for an unknown name
// (listing the known ones).
Result<std::vector<const FitParam*>> select_fit_params(const std::vector<std::string>& names, FitKind kind,
                                                       const std::string& field);

// The logit map of a range onto the real line (a solver's coordinates) and back.
double to_x(const FitParam& p, double v);
double from_x(const FitParam& p, double x);
double logistic(double x);

using Vec = std::vector<double>;
using Mat = std::vector<std::vector<double>>;
using Objective = std::function<double(const Vec&)>;
using Residuals = std::function<Vec(const Vec&)>;

// Nelder-Mead minimisation of f from `start` with an initial simplex of edge `step`; returns the best vertex.
Vec nelder_mead(const Objective& f, const Vec& start, double step);

// Levenberg-Marquardt on the sum of squared residuals, from x (updated in place with r = residuals(x) and
// f = SSE); at most `max_iter` iterations.
struct LmState {
  Vec x, r;
  double f = 0;
};
void levenberg_marquardt(const Residuals& residuals, LmState& s, int max_iter);
// Central-difference Jacobian (n residuals x x.size() parameters), step h.
Mat jacobian(const Residuals& residuals, const Vec& x, std::size_t n, double h);
// Standard errors of the values (not the logit coordinates) of a least-squares fit at s over `params`:
// cov(x) = s^2 (J'J)^-1 with s^2 = SSE / dof, the delta method through the logistic map. Zeros when dof is 0
// or J'J is singular.
Vec standard_errors(const Residuals& residuals, const LmState& s, const std::vector<const FitParam*>& params,
                    std::size_t n, std::size_t dof);

// Linear algebra (n <= 8): A x = b by Gaussian elimination with partial pivoting, false when singular; the
// inverse; J'J of an n x p Jacobian.
bool solve(Mat a, Vec b, Vec& x);
bool invert(const Mat& a, Mat& inv);
Mat normal_matrix(const Mat& jm, std::size_t p);
// 97.5% quantile of Student's t with `dof` degrees of freedom.
double t975(std::size_t dof);

double rms_of(const Vec& r);
double sse_of(const Vec& r);
double mean_of(const Vec& v);

// The identifiability report: a candidate's sensitivity (d residual / d log value per point, and its RMS),
// the candidates the data can tell apart, most sensitive first (Gram-Schmidt on the sensitivities, at most
// n - 1 of them), and for each other candidate why it is not fitted.
struct Sensitivity {
  const FitParam* p;
  Vec d;
  double norm;
};
Sensitivity sensitivity(const FitParam& p, const StackProfile& at,
                        const std::function<Vec(const StackProfile&)>& residuals, std::size_t n);
std::vector<const FitParam*> choose_identifiable(std::vector<Sensitivity> cols, std::size_t n,
                                                 std::map<std::string, std::string>& why_not);

}  // namespace ftcost::fit
