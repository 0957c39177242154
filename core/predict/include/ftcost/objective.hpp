// Preference and RL objectives (issue 42): what DPO, ORPO, SimPO, KTO and GRPO add to a supervised step —
// sequences per sample, a reference model, the loss's log-prob tensors, and GRPO's generation phase (decode
// time from the bytes each token reads, the vLLM memory share). Every term is read from TRL's trainers
// (TRL 1.10.0.dev0 @ f2cd5771) and vLLM's memory manager; docs/sources/trl-preference.md has the citations.
#pragma once

#include "ftcost/gpu.hpp"
#include "ftcost/model.hpp"
#include "ftcost/stack.hpp"
#include "ftcost/throughput.hpp"
#include "ftcost/workload.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ftcost {

struct Calibration;

// The objective's memory terms for one padded length (BatchMemory applies them).
struct ObjectiveMemory {
  double sequences = 1;  // sequences through forward and backward per sample (2 for paired objectives)
  double reference_weights = 0;  // bytes: a frozen reference copy (full fine-tuning with a reference pass)
  // Bytes per token of the loss's logits when TRL computes the log-probs itself
  // (selective_log_softmax) instead of the stack's SFT loss; < 0: the stack's loss path stands (Liger's fused
  // preference/GRPO losses materialise no logits).
  double logits_bytes_per_token = -1;
  double logits_share = 1;  // share of each sequence's tokens that get logits (GRPO: logits_to_keep)
  // The reference forward's logits, per training token, alive beside the policy's graph at the loss (DPO,
  // KTO: the reference runs inside compute_loss after the policy's forward).
  double reference_logits_per_token = 0;
  // GRPO with model.generate: bytes per completion of the generation batch at the generation moment (KV
  // cache, the prefill's largest transient, the sampler's probabilities), when the weights and optimizer
  // states are resident and no gradient or activation is.
  double generation_per_row = 0;
};
ObjectiveMemory objective_memory(const ModelSpec& m, const Workload& w, const StackProfile& s,
                                 double seq_len);

// KV-cache bytes per token: model.generate's DynamicCache (k and v as attention consumes them, every
// attention layer), or vLLM's paged cache (MLA: the compressed latent and the rope key, one vector per
// layer).
double kv_bytes_per_token(const ModelSpec& m, const Workload& w, bool vllm);

// vLLM's memory within its share of a GPU (vllm/v1/worker/gpu_worker.py Worker.determine_available_memory:
// KV cache = total x gpu_memory_utilization - the profile run's peak).
struct VllmMemory {
  double pool = 0;           // total x gpu_memory_utilization, bytes
  double weights = 0;        // the model in the compute dtype
  double overhead = 0;       // profile-run activations, sampler, CUDA graphs
  double kv_cache = 0;       // what is left for the KV cache (negative: the share cannot hold the weights)
  double max_sequences = 0;  // sequences of (prompt + completion) the KV cache holds at once
};
// The weights vLLM holds: the compute dtype, or with QLoRA the bitsandbytes 4-bit checkpoint.
double vllm_weight_bytes(const ModelSpec& m, const Workload& w);
// `trl vllm-serve`'s gpu_memory_utilization default (trl/scripts/vllm_serve.py ScriptArguments: 0.9).
constexpr double kVllmServerMemoryFraction = 0.9;
// vLLM's share of its GPU for this job: the server's default in server mode, else
// --vllm-gpu-memory-utilization.
double vllm_share(const ObjectiveConfig& c);
VllmMemory vllm_memory(const ModelSpec& m, const Workload& w, const GpuSpec& g, double fraction,
                       double seq_len);

// The generation phase for `completions` sequences of `prompt_len` prompt tokens, each decoded to the
// workload's completion length (GenerationTime: throughput.hpp).
GenerationTime generation_time(const ModelSpec& m, const Workload& w, const StackProfile& s, const GpuSpec& g,
                               const Calibration* cal, double completions, double prompt_len);

// The step of the objective at `batch` samples (rows): step_model over the sequences trained, plus the
// reference and policy forwards without gradients, and GRPO's generation and reward, amortised per
// micro-batch (StepTime::objective has the split). For sft: step_model unchanged.
StepTime objective_step(const ModelSpec& m, const Workload& w, const StackProfile& s, const GpuSpec& g,
                        const Calibration* cal, std::int64_t batch, double padded_len,
                        const std::vector<double>& shares);

// Seconds to precompute the reference log-probs over an epoch's `rows` before training (DPO/KTO with
// precompute_ref_log_probs), 0 otherwise.
double reference_precompute_s(const ModelSpec& m, const Workload& w, const StackProfile& s, const GpuSpec& g,
                              const Calibration* cal, std::int64_t batch, double padded_len,
                              const std::vector<double>& shares, double rows);

}  // namespace ftcost
