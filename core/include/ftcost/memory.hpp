// First-principles peak memory of one training step, every component separately, and the
// maximum batch size that fits.
#pragma once

#include "ftcost/gpu.hpp"
#include "ftcost/model.hpp"
#include "ftcost/stack.hpp"
#include "ftcost/workload.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ftcost {

struct ParamBreakdown {
  double frozen = 0;     // parameters not trained
  double trainable = 0;  // full: all; LoRA: adapter parameters
  double quantized = 0;  // parameters stored 4/8-bit (QLoRA)
  double lora = 0;       // adapter parameters (0 for full fine-tuning)
};

struct MemoryBreakdown {
  // bytes
  double weights = 0;           // base weights as stored (16-bit, NF4 + absmax, int8)
  double trainable_params = 0;  // LoRA adapters (fp32) — for full fine-tuning the weights are the params
  double gradients = 0;
  double optimizer_states = 0;
  double autocast_copies = 0;  // 16-bit copies of fp32 trainable weights under autocast
  double activations = 0;      // saved for backward (+ recompute peak with checkpointing)
  double logits = 0;           // logits and loss (often fp32)
  double dequant_buffers = 0;  // QLoRA: dequantized weight temporaries
  double cuda_context = 0;
  double allocator_overhead = 0;
  double total() const;
  json to_json_gib() const;  // {"total":..., "weights":..., ...} in GiB
};

struct ActivationDetail {
  double per_token_bytes = 0;  // resident activations per (padded) token, excluding logits
  double logits_per_token_bytes = 0;
  double per_layer_max_bytes = 0;  // the largest layer's saved activations per token
};

ParamBreakdown param_breakdown(const ModelSpec& m, const Workload& w);
ActivationDetail activation_detail(const ModelSpec& m, const Workload& w, const StackProfile& s,
                                   double seq_len);
MemoryBreakdown memory_for_batch(const ModelSpec& m, const Workload& w, const StackProfile& s,
                                 std::int64_t batch, double seq_len);

struct MaxBatch {
  std::int64_t batch = 0;   // 0 = even one sample does not fit
  double seq_len = 0;       // padded length used
  double usable_bytes = 0;  // GPU memory available to the process
  double fixed_bytes = 0;   // memory at batch 0 (weights, optimizer, context...)
  double per_sample_bytes = 0;
};

MaxBatch max_batch_size(const ModelSpec& m, const Workload& w, const StackProfile& s, const GpuSpec& g);

// LoRA adapter parameter count for the chosen targets and rank.
double lora_params(const ModelSpec& m, const Workload& w);

}  // namespace ftcost
