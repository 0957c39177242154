// The step-time model: a training step as a list of operations (forward, recompute, backward,
// optimizer), each with FLOPs, bytes moved, kernel count and shape; per-op time from a roofline with
// shape-dependent GEMM efficiency (wave quantization over the GPU's SMs, or a loaded calibration) and
// memory efficiency, plus host launch/loop overheads from the software stack profile.
// `--model-kind paper` instead uses the paper's Eq. (2) fitted to its A40 sweeps (A40 only).
#pragma once

#include "ftcost/gpu.hpp"
#include "ftcost/model.hpp"
#include "ftcost/stack.hpp"
#include "ftcost/workload.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace ftcost {

struct Calibration;  // ftcost/calibration.hpp

enum class Stage { forward, recompute, backward, optimizer };
enum class LayerType { attention, moe, mamba, mlp, norm, other };
enum class KernelClass { gemm, expert_gemm, attention, dequant, elementwise, scan, routing, loss, optimizer };
constexpr int kStages = 4;
constexpr int kLayerTypes = 6;
constexpr int kKernelClasses = 9;
const char* stage_name(Stage s);
const char* layer_type_name(LayerType l);
const char* kernel_class_name(KernelClass k);

// One operation of the step, aggregated over identical layers (count) and kernels.
struct Op {
  const char* name = "";
  Stage stage = Stage::forward;
  LayerType layer = LayerType::other;
  KernelClass kclass = KernelClass::elementwise;
  double flops = 0;    // total over its repetitions
  double bytes = 0;    // DRAM bytes, total
  double kernels = 0;  // kernel launches, total
  double gpu_s = 0;    // device time, total
  bool compute_bound = false;
};

// Expert load distribution: share of routed (token, expert) pairs per expert.
Result<std::vector<double>> expert_shares(const std::string& routing, std::int64_t experts);

// GRPO's generation phase for one generation batch (objective.hpp generation_time).
struct GenerationTime {
  double prefill_s = 0, decode_s = 0, sync_s = 0, total_s = 0;
  double decode_steps = 0;    // decode steps run (completion length x waves)
  double waves = 1;           // batches the KV cache forces (vLLM)
  double device_step_s = 0;   // mean device time per decode step
  double host_step_s = 0;     // host time per decode step (launches; vLLM's scheduler)
  double bytes_per_step = 0;  // mean DRAM bytes per decode step (weights + KV)
  std::string bound;          // "bandwidth", "compute" or "host"
};

// What a preference or RL objective adds to the step (objective.hpp objective_step), per micro-batch: the
// once-per-generation terms divided over the micro-batches and iterations that share a generation. All 0 for
// sft.
struct ObjectiveTime {
  double train_s = 0;      // forward, backward and optimizer over the trained sequences
  double reference_s = 0;  // the reference's forwards (no gradients)
  double policy_forward_s =
      0;                    // the policy's forwards without gradients (KTO's KL pass, GRPO's old log-probs)
  double generation_s = 0;  // GRPO: prefill, decode and the weight sync to vLLM
  double reward_s = 0;      // GRPO: reward functions on the host
  double round_completions = 0;  // GRPO: completions per generation round on this GPU
  double round_s = 0;            // GRPO: one round, every term not amortised
  GenerationTime generation;     // GRPO: the round's generation phase
};

struct StepTime {
  std::string model;  // "step-model" | "paper-eq2"
  double total_s = 0;
  std::array<double, kStages> by_stage{};         // wall time per stage (host overhead included)
  std::array<double, kLayerTypes> by_layer{};     // device time per layer type
  std::array<double, kKernelClasses> by_class{};  // device time per kernel class
  double gpu_s = 0;                               // device busy time
  double host_s = 0;                              // host launch/loop time that the device waits for
  std::array<double, kStages>
      host_issue_by_stage{};  // host time issuing each stage's ops (overlapped or not)
  double flops = 0;           // per step
  double bytes = 0;           // DRAM bytes per step
  double kernels = 0;         // launches per step
  double range_fraction = 0;  // +/- relative uncertainty of total_s
  std::string range_note;
  std::string dominant_uncertainty;
  bool calibrated = false;
  double offload_pcie_s = 0;  // host<->device copy time of offloaded checkpoints (mostly overlapped)
  double paging_s = 0;        // PCIe time of paged-out optimizer states per optimizer step (exposed)
  std::vector<Op> ops;
  ObjectiveTime objective;  // preference/RL objectives' split; zero for sft
};

// Host link (PCIe) bandwidth used for activation offloading, B/s [assumed per GPU generation].
double host_link_bytes_per_s(const GpuSpec& g);

// Paged optimizer states that do not fit next to the rest of the step (MemoryBreakdown::paged_out) are
// evicted to host RAM while the forward and backward allocate, and prefetched back before each parameter's
// update, which bitsandbytes follows with a device synchronisation (Optimizer8bit.step: prefetch_state,
// update_step, sync_gpu): both directions cross PCIe in the step's critical path. Adds 2 x bytes over the
// host link to the optimizer stage, shared by the `grad_accum` micro-batches of an optimizer step.
void add_optimizer_paging(StepTime& t, double paged_out_bytes, const GpuSpec& g, std::int64_t grad_accum);
// Bytes per token this run moves to host RAM (gradient checkpoints when offloaded), 0 otherwise.
double offloaded_bytes_per_token(const ModelSpec& m, const Workload& w, const StackProfile& s);

StepTime step_model(const ModelSpec& m, const Workload& w, const StackProfile& s, const GpuSpec& g,
                    const Calibration* cal, std::int64_t batch, double mean_len,
                    const std::vector<double>& shares);

// Eq. (2) on the A40 with coefficients fitted to the paper's sweep for (model, dataset); error when no fit
// applies. Returns queries/s.
Result<double> paper_eq2_qps(const std::string& model_id, const std::string& dataset_id,
                             const std::string& gpu_id, double sparsity, std::int64_t batch,
                             double* rmse_out);

}  // namespace ftcost
