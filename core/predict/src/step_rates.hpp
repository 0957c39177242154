// Internal to the step model (throughput.cpp, step_model.cpp): the device rates one step is timed at: the
// GPU's datasheet peaks and bandwidth times the stack's efficiencies, or the calibration's measured rates
// where it has them.
#pragma once

#include "ftcost/calibration.hpp"
#include "ftcost/gpu.hpp"
#include "ftcost/ops.hpp"
#include "ftcost/throughput.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

namespace ftcost::step_detail {

// Compute capability 9.x (Hopper) and 10.x (data-centre Blackwell) reach their tensor peak only with their
// own instructions (wgmma, tcgen05); sm_120 consumer Blackwell and everything older use mma.sync natively.
inline bool uses_hopper_tensor_instructions(const GpuSpec& g) {
  const auto cc = parse_compute_capability(g.compute_capability);
  return g.vendor == "NVIDIA" && cc && (cc->first == 9 || cc->first == 10);
}

// Per-op device time.
struct Rates {
  double peak = 0;  // FLOP/s of the compute dtype
  double bw = 0;    // B/s, spec
  double sms = 108;
  double eta_c = 0.75;  // large-GEMM fraction of peak
  // instruction-set limit of the stack on this architecture (hopper_tensor_peak_fraction)
  double tensor_scale = 1;
  double eta_m = 0.75;   // streaming fraction of bandwidth
  double eta_gm = 0.75;  // memory-bound GEMMs: fraction of bandwidth for their operands
  double eta_dq = 0.65;
  double eta_opt = 0.75;
  const Calibration* cal = nullptr;
  std::string dtype = "bf16";
  double fp8_peak = 0;  // FLOP/s of the FP8 tensor cores (torchao float8 linears)

  // Wave quantization: output tiles of 128x128 spread over the SMs. When the output has fewer tiles than the
  // GPU has SMs and K is long, cuBLAS splits K across CTAs (split-K / stream-K) so that more SMs work; each
  // split keeps at least 256 of K (several main-loop iterations of a 32-64 deep tile).
  double wave_efficiency(double M, double N, double K) const {
    const double tiles = std::ceil(M / 128.0) * std::ceil(N / 128.0);
    double split = 1;
    if (tiles < sms) split = std::max(1.0, std::min(std::floor(sms / tiles), std::floor(K / 256.0)));
    const double ctas = tiles * split;
    const double waves = std::ceil(ctas / sms);
    return ctas / (waves * sms);
  }
  double gemm_compute_rate(double M, double N, double K) const {
    if (cal != nullptr) {
      auto r = framework_gemm_tflops(cal->derived, dtype, 2 * M * N * K);
      if (r) return *r * 1e12 * tensor_scale;
    }
    // Small-M GEMMs use smaller tiles: count the tile rows actually filled.
    const double m_fill = std::min(1.0, M / (std::ceil(M / 16.0) * 16.0));
    return peak * tensor_scale * eta_c * wave_efficiency(M, N, K) * m_fill;
  }
  // An FP8 GEMM (torchao float8: torch._scaled_mm on e4m3 inputs): the calibration's fp8 rows where it has
  // them, else the FP8 peak at the same share, wave and tile fill as the compute dtype's GEMMs.
  double gemm_compute_rate_fp8(double M, double N, double K) const {
    if (cal != nullptr) {
      auto r = framework_gemm_tflops(cal->derived, "fp8", 2 * M * N * K);
      if (r) return *r * 1e12 * tensor_scale;
    }
    const double m_fill = std::min(1.0, M / (std::ceil(M / 16.0) * 16.0));
    return fp8_peak * tensor_scale * eta_c * wave_efficiency(M, N, K) * m_fill;
  }
  // The calibration's best measured GEMM rate of the dtype (the stack's peak share without one), FLOP/s.
  double gemm_peak() const {
    if (cal != nullptr)
      for (const auto& c : cal->derived.gemm_efficiency)
        if (c.dtype == dtype) return c.peak_measured_tflops * 1e12 * tensor_scale;
    return peak * tensor_scale * eta_c;
  }
  double stream_bw(double eta) const {
    if (cal != nullptr && cal->derived.memory_bandwidth_gbps)
      return *cal->derived.memory_bandwidth_gbps * 1e9 * (eta / eta_m);
    return bw * eta;
  }
  double dequant_bw() const {
    if (cal != nullptr && cal->derived.nf4_dequant_gbps) return *cal->derived.nf4_dequant_gbps * 1e9;
    return bw * eta_dq;
  }

  // ---- the eager op inventory's rates (StackProfile ops_inventory "eager") ----
  double ops_fraction = 0.8;  // spec path: share of the datasheet bandwidth element-wise kernels stream at
  bool fused_adamw = false;   // torch's _fused_adamw rather than the foreach kernels
  // Bandwidth of an op class: the calibration's class rate when it has one, else its sustained copy/triad
  // bandwidth, else the datasheet's times the stack's fraction.
  double op_bw(OpKind k) const {
    if (cal != nullptr) {
      const CalDerived& dv = cal->derived;
      const std::optional<double>* rate = nullptr;
      if (k == OpKind::norm) rate = &dv.norm_gbps;
      if (k == OpKind::cast) rate = &dv.cast_gbps;
      if (k == OpKind::pointwise) rate = &dv.pointwise_gbps;
      if (k == OpKind::cross_entropy) rate = &dv.cross_entropy_gbps;
      if (rate != nullptr && rate->has_value()) return **rate * 1e9;
      if (dv.memory_bandwidth_gbps) return *dv.memory_bandwidth_gbps * 1e9;
    }
    return bw * ops_fraction;
  }
  // Attention kernel rate measured by the calibration (causal FLOPs), 0 when it has none.
  double attention_rate(bool backward) const {
    if (cal == nullptr) return 0;
    const auto& r = backward ? cal->derived.attention_bwd_tflops : cal->derived.attention_fwd_tflops;
    return r ? *r * 1e12 : 0;
  }
};

// The op list of one step at `r` (throughput.cpp's builder): every op of the forward, recompute, backward
// and optimizer stages, their device and host time; step_model (step_model.cpp) adds what acts on the whole
// step.
StepTime build_step(const ModelSpec& m, const Workload& w, const StackProfile& s, const Rates& r,
                    std::int64_t batch, double mean_len, const std::vector<double>& shares);

}  // namespace ftcost::step_detail
