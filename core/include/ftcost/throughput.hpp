// Step time and throughput. Until the step-time model (throughput issue) lands, the default is a
// labelled "roofline-lite" stand-in: per pass, GEMM time = max(FLOPs at a fixed fraction of the dense
// peak, weight bytes at a fixed fraction of bandwidth), plus QLoRA dequantization traffic, activation
// traffic, the optimizer pass and per-kernel launch overhead, with the stack profile's constants.
// `--model-kind paper` uses the paper's Eq. (2) fitted to its A40 sweeps (A40 only).
#pragma once

#include <cstdint>
#include <string>

#include "ftcost/gpu.hpp"
#include "ftcost/model.hpp"
#include "ftcost/stack.hpp"
#include "ftcost/workload.hpp"

namespace ftcost {

struct StepTime {
  std::string model;        // "roofline-lite" | "paper-eq2"
  double total_s = 0;
  double forward_s = 0, recompute_s = 0, backward_s = 0, optimizer_s = 0;
  double gemm_s = 0, dequant_s = 0, elementwise_s = 0, launch_s = 0;
  double flops = 0;          // per step
  double bytes = 0;          // DRAM bytes per step
  double range_fraction = 0; // +/- relative uncertainty of total_s
  std::string range_note;
};

StepTime roofline_lite_step(const ModelSpec& m, const Workload& w, const StackProfile& s, const GpuSpec& g,
                            std::int64_t batch, double mean_len);

// Eq. (2) on the A40 with coefficients fitted to the paper's sweep for (model, dataset); error when no fit
// applies. Returns queries/s.
Result<double> paper_eq2_qps(const std::string& model_id, const std::string& dataset_id, const std::string& gpu_id,
                             double sparsity, std::int64_t batch, double* rmse_out);

}  // namespace ftcost
