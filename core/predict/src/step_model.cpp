// The step model's assembly (throughput.hpp step_model): the device rates from the GPU's datasheet, the
// stack's efficiencies and the calibration; the op list built by throughput.cpp at those rates; then what
// acts on the whole step: checkpoints offloaded over PCIe, and the optimizer amortized over gradient
// accumulation.
#include "ftcost/memory.hpp"
#include "ftcost/throughput.hpp"
#include "step_rates.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace ftcost {

using step_detail::build_step;
using step_detail::Rates;
using step_detail::uses_hopper_tensor_instructions;

namespace {

// Gradient accumulation: the optimizer runs once every `n` micro-batches, so each micro-batch carries 1/n of
// its time, traffic and launches (forward, recompute and backward are unchanged; the gradient buffer that
// accumulates is the `gradients` component the memory model already keeps for the whole step).
void amortize_optimizer(StepTime& t, double n) {
  const double f = 1.0 - 1.0 / n;
  const auto opt = static_cast<std::size_t>(Stage::optimizer);
  double opt_gpu = 0;
  for (auto& op : t.ops) {
    if (op.stage != Stage::optimizer) continue;
    t.by_class[static_cast<std::size_t>(op.kclass)] -= op.gpu_s * f;
    t.by_layer[static_cast<std::size_t>(op.layer)] -= op.gpu_s * f;
    t.flops -= op.flops * f;
    t.bytes -= op.bytes * f;
    t.kernels -= op.kernels * f;
    opt_gpu += op.gpu_s;
    op.gpu_s /= n;
    op.flops /= n;
    op.bytes /= n;
    op.kernels /= n;
  }
  const double wall = t.by_stage[opt];
  t.host_issue_by_stage[opt] /= n;
  t.gpu_s -= opt_gpu * f;
  t.host_s -= std::max(0.0, wall - opt_gpu) * f;
  t.total_s -= wall * f;
  t.by_stage[opt] = wall / n;
}

}  // namespace

StepTime step_model(const ModelSpec& m, const Workload& w, const StackProfile& s, const GpuSpec& g,
                    const Calibration* cal, std::int64_t batch, double mean_len,
                    const std::vector<double>& shares) {
  Rates r;
  r.dtype = w.precision == "fp32" ? "tf32" : w.precision;
  r.peak = std::max(g.peak_tflops(r.dtype), g.fp32_tflops) * 1e12;
  if (r.peak <= 0) r.peak = 1e12;
  r.fp8_peak = g.peak_tflops("fp8") * 1e12;
  r.bw = g.memory_bandwidth_gbps * 1e9;
  r.sms = g.sm_count > 0 ? g.sm_count : 108;
  r.eta_c = s.gemm_efficiency;
  if (uses_hopper_tensor_instructions(g)) r.tensor_scale = s.hopper_tensor_peak_fraction;
  r.eta_m = s.memory_efficiency;
  r.eta_gm = s.gemm_memory_efficiency;
  r.eta_dq = s.dequant_efficiency;
  r.eta_opt = s.optimizer_efficiency;
  r.cal = cal;
  r.ops_fraction = s.ops_bandwidth_fraction;
  r.fused_adamw = adamw_fused(s, w);
  StepTime t = build_step(m, w, s, r, batch, mean_len, shares);
  // Offloaded checkpoints cross PCIe twice a step (out in the forward, back in the backward) on a side
  // stream, overlapped with compute; only what exceeds the forward + backward time is exposed.
  const double host_bytes = offloaded_bytes_per_token(m, w, s) * static_cast<double>(batch) * mean_len;
  if (host_bytes > 0) {
    const double link = host_link_bytes_per_s(g);
    const double pcie_s = 2.0 * host_bytes / link;
    const double overlap_s = t.total_s - t.by_stage[static_cast<std::size_t>(Stage::optimizer)];
    const double exposed = std::max(0.0, pcie_s - overlap_s);
    t.by_stage[static_cast<std::size_t>(Stage::backward)] += exposed;
    t.total_s += exposed;
    t.offload_pcie_s = pcie_s;
  }
  t.calibrated = cal != nullptr;
  if (w.grad_accum > 1) amortize_optimizer(t, static_cast<double>(w.grad_accum));
  return t;
}

}  // namespace ftcost
