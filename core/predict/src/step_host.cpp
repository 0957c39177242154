// What crosses the host link in a step (offloaded checkpoints, paged optimizer states) and the rate it
// crosses at; and the paper's Eq. (2) throughput (ftcost/throughput.hpp declares them).
#include "ftcost/memory.hpp"
#include "ftcost/paper.hpp"
#include "ftcost/throughput.hpp"

#include <algorithm>
#include <cstdint>

namespace ftcost {

double host_link_bytes_per_s(const GpuSpec& g) {
  // PCIe 4.0 x16 (Ampere/Ada) or 5.0 x16 (Hopper and later) at ~80% of the raw rate: 25 and 50 GB/s
  // [assumed: the GPU database carries no host-link field; pinned-memory copies reach 80-90% of it].
  const auto cc = parse_compute_capability(g.compute_capability);
  const bool pcie5 = cc && cc->first >= 9;  // Hopper, Blackwell: PCIe 5.0 hosts
  return (pcie5 ? 50.0 : 25.0) * 1e9;
}

double offloaded_bytes_per_token(const ModelSpec& m, const Workload& w, const StackProfile& s) {
  if (!w.offloads(s.offload_checkpoints)) return 0;
  const double ckpt =
      (m.residual_fp32 || kbit_upcast(s, w) ? 4.0 : w.compute_bytes()) * static_cast<double>(m.hidden);
  return static_cast<double>(m.layers()) * ckpt;
}

void add_optimizer_paging(StepTime& t, double paged_out_bytes, const GpuSpec& g, std::int64_t grad_accum) {
  if (paged_out_bytes <= 0) return;
  t.paging_s = 2.0 * paged_out_bytes / host_link_bytes_per_s(g);
  const double per_micro = t.paging_s / static_cast<double>(std::max<std::int64_t>(1, grad_accum));
  t.by_stage[static_cast<std::size_t>(Stage::optimizer)] += per_micro;
  t.total_s += per_micro;
}

Result<double> paper_eq2_qps(const std::string& model_id, const std::string& dataset_id,
                             const std::string& gpu_id, double sparsity, std::int64_t batch,
                             double* rmse_out) {
  if (gpu_id != "a40")
    return make_error(
        Errc::invalid_value, "--model-kind",
        "paper: Eq. (2) has coefficients only for the A40 (the paper re-fits C2/C4 per GPU from a sweep); "
        "use `ftcost fit` with your own sweep for " +
            gpu_id);
  for (const auto& sw : paper::a40_sweeps()) {
    if (model_id == sw.model && dataset_id == sw.dataset) {
      auto fit = paper::fit_eq2(sw.points, sw.c3);
      if (!fit.ok()) return fit.error();
      if (rmse_out != nullptr) *rmse_out = fit->rmse;
      return paper::eq2_throughput(fit->c2, fit->c3, fit->c4, sparsity, static_cast<double>(batch));
    }
  }
  return make_error(Errc::invalid_value, "--model-kind",
                    "paper: Eq. (2) was fitted only for mixtral-8x7b and blackmamba-2.8b on cs15k/math14k");
}

}  // namespace ftcost
