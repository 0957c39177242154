// The table of fittable parameters (ftcost/fit.hpp) and the logit map of their ranges.
#include "ftcost/fit.hpp"

#include <algorithm>
#include <cmath>

namespace ftcost::fit {

namespace {

// Physical ranges: what dense GEMMs and streaming kernels reach on NVIDIA GPUs (cuBLAS 60-90% of the dense
// peak, STREAM-like kernels 50-92% of the spec bandwidth); the fit may not leave them.
constexpr const char* kPhysical =
    "physical: cuBLAS reaches 60-90% of the dense peak, STREAM-like kernels 50-92% of the spec bandwidth";
constexpr const char* kAssumed = "assumed: a wide range around the profiles' values";

}  // namespace

const std::vector<FitParam>& fit_params() {
  static const std::vector<FitParam> table = {
      {"host_us_per_kernel", &StackProfile::host_us_per_kernel, 0.5, 60, FitKind::step_time, false, kAssumed},
      {"gemm_efficiency", &StackProfile::gemm_efficiency, 0.5, 0.9, FitKind::step_time, false, kPhysical},
      {"memory_efficiency", &StackProfile::memory_efficiency, 0.5, 0.92, FitKind::step_time, false,
       kPhysical},
      {"gemm_memory_efficiency", &StackProfile::gemm_memory_efficiency, 0.5, 0.92, FitKind::step_time, false,
       kPhysical},
      {"dequant_efficiency", &StackProfile::dequant_efficiency, 0.3, 0.92, FitKind::step_time, false,
       kPhysical},
      {"optimizer_efficiency", &StackProfile::optimizer_efficiency, 0.05, 0.92, FitKind::step_time, false,
       kPhysical},
      {"backward_host_factor", &StackProfile::backward_host_factor, 0.2, 1.5, FitKind::step_time, false,
       kAssumed},
      {"allocator_overhead_fraction", &StackProfile::allocator_overhead_fraction, 0, 0.5, FitKind::memory,
       false, kAssumed},
      {"gc_retained_fraction", &StackProfile::gc_retained_fraction, 0, 1, FitKind::memory, false,
       "structural: a fraction of the checkpointed activations"},
      // [N, F] tensors a gated MLP keeps for backward (HF: gate, up, activation, product = 4; fused kernels
      // 2).
      {"mlp_saved_intermediates", &StackProfile::mlp_saved_intermediates, 1, 6, FitKind::memory, true,
       "structural: HF's gated MLP keeps gate, up, activation and product (4), fused kernels 2"},
  };
  return table;
}

std::vector<const FitParam*> fit_params_of(FitKind kind) {
  std::vector<const FitParam*> out;
  for (const auto& p : fit_params())
    if (p.kind == kind) out.push_back(&p);
  return out;
}

Result<std::vector<const FitParam*>> select_fit_params(const std::vector<std::string>& names, FitKind kind,
                                                       const std::string& field) {
  const std::vector<const FitParam*> known = fit_params_of(kind);
  std::vector<const FitParam*> out;
  for (const auto& name : names) {
    auto it = std::find_if(known.begin(), known.end(), [&](const FitParam* p) { return name == p->name; });
    if (it == known.end()) {
      std::string list;
      for (const FitParam* p : known) list += std::string(list.empty() ? "" : ", ") + p->name;
      return make_error(Errc::invalid_value, field,
                        std::string("unknown parameter \"").append(name).append("\"; known: ").append(list));
    }
    out.push_back(*it);
  }
  return out;
}

double logistic(double x) { return 1.0 / (1.0 + std::exp(-x)); }

double to_x(const FitParam& p, double v) {
  double t = (v - p.lo) / (p.hi - p.lo);
  t = std::min(std::max(t, 1e-6), 1 - 1e-6);
  return std::log(t / (1 - t));
}

double from_x(const FitParam& p, double x) { return p.lo + (p.hi - p.lo) * logistic(x); }

}  // namespace ftcost::fit
