// First-principles peak memory of one training step, every component separately, and the
// maximum batch size that fits.
#pragma once

#include "ftcost/gpu.hpp"
#include "ftcost/model.hpp"
#include "ftcost/stack.hpp"
#include "ftcost/workload.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ftcost {

struct ObjectiveMemory;  // objective.hpp

struct ParamBreakdown {
  double frozen = 0;     // parameters not trained
  double trainable = 0;  // full: all; LoRA: adapter parameters
  double quantized = 0;  // parameters stored 4/8-bit (QLoRA)
  double lora = 0;       // adapter parameters (0 for full fine-tuning)
  // PEFT variants (docs/sources/peft-variants.md): DoRA's magnitude vectors (out_features per adapted
  // module, trained, in the adapters' dtype); LoRA-FA's lora_A (stored with the adapters, frozen: of `lora`);
  // modules_to_save's trained copies (in the base weights' dtype; the frozen originals stay in `frozen`).
  double dora_magnitude = 0;
  double frozen_adapter = 0;
  double saved_modules = 0;
};

struct MemoryBreakdown {
  // bytes
  double weights = 0;           // base weights as stored (16-bit, NF4 + absmax, int8)
  double trainable_params = 0;  // LoRA adapters (fp32) — for full fine-tuning the weights are the params
  double gradients = 0;
  double optimizer_states = 0;
  double autocast_copies = 0;  // 16-bit copies of fp32 trainable weights under autocast
  double activations = 0;      // saved for backward (+ recompute peak with checkpointing)
  // Of `activations`: what exists only once backward runs (the recomputed layer and its gradients in flight;
  // without checkpointing the backward layer's gradients in flight), and the peak of the one layer whose
  // backward runs last (at the end of backward, when every other layer's activations are freed).
  double activations_backward = 0;
  double activations_last_layer = 0;
  double logits = 0;           // logits and loss (often fp32)
  double dequant_buffers = 0;  // QLoRA: dequantized weight temporaries
  // DoRA: the weight-norm temporaries of the largest adapted module's forward (and, with lora_dropout, the
  // 16-bit weight copies the recomputed base output keeps for backward); 0 otherwise.
  double dora_weight_norm = 0;
  // Transformer Engine (--fp8 te-*): the FP8 weights te.Linear saves for its backward (te_weight_copy_bytes).
  double fp8_weight_copies = 0;
  double cuda_context = 0;
  double allocator_overhead = 0;
  // The optimizer step's own temporaries (not in the sum of the other components): torch's foreach AdamW
  // (the stack's adamw_implementation "foreach") allocates sqrt(exp_avg_sq) for every parameter it steps at
  // once (torch/optim/adam.py _multi_tensor_adam: `exp_avg_sq_sqrt = torch._foreach_sqrt(...)`), one
  // state-sized list. It exists only at the step, when the activations and logits are freed and every
  // gradient exists: the moment optimizer_step = fixed + gradients + optimizer_step_temp, a peak of its own
  // for full fine-tuning at small batches (an 8B model's +16 GB in bf16).
  double optimizer_step_temp = 0;
  // Preference and RL objectives (objective.hpp): a frozen reference copy (in the fixed part), and GRPO's
  // generation with model.generate, a moment of its own: fixed + generation_temp (the KV cache, the prefill's
  // transient, the sampler), when no gradient or activation exists.
  double reference_weights = 0;
  double generation_temp = 0;
  // Not on the GPU (not in total()): gradient checkpoints offloaded to pinned host RAM.
  double host_offload = 0;
  // Paged optimizer states (bitsandbytes PagedAdamW / PagedAdamW8bit): allocated with cudaMallocManaged
  // (functional.py get_paged -> csrc cget_managed_ptr, cudaMemAttachHost), prefetched to the GPU before each
  // parameter's update (Optimizer8bit.prefetch_state) and evicted to host RAM by the driver when the other
  // allocations need the room. They yield, so they do not decide whether a job fits (resident()); what does
  // not fit next to the rest crosses PCIe every optimizer step (paged_out()).
  bool paged_optimizer = false;
  // How the components combine into the peak (StackProfile::peak_model). `sum`: all at once. `phases`:
  // the peak is the largest of three moments of a step, because the gradients do not exist before
  // backward (the optimizer's zero_grad(set_to_none=True), PyTorch >= 2.0 default) and the logits and the
  // saved activations are freed while backward runs:
  //   forward_loss   = fixed + G_kept + saved activations + logits         (end of forward, loss)
  //   backward_start = fixed + G_kept + activations                        (first layer recomputed)
  //   backward_end   = fixed + gradients + activations_last_layer          (last layer, all gradients)
  // fixed = weights, adapters, optimizer states, autocast copies, dequant buffers, context, allocator;
  // G_kept = the gradients when they outlive the step's forward (gradient accumulation), else 0.
  bool phased = false;
  bool gradients_kept = false;
  // Every profile, phased or not, also has the optimizer step: fixed + gradients + optimizer_step_temp
  // (it is the peak only where that temporary outweighs the activations and logits).
  struct Phases {
    double forward_loss = 0, backward_start = 0, backward_end = 0, optimizer_step = 0, generation = 0;
  };
  Phases phases() const;
  enum class Moment { sum, forward_loss, backward_start, backward_end, optimizer_step, generation };
  Moment peak_moment() const;  // Moment::sum (or optimizer_step, generation) when not phased
  Moment training_peak_moment(const Phases& p) const;  // the peak without the generation moment
  static double moment_bytes(const Phases& p, Moment at, const MemoryBreakdown& b);
  // The components as they are at the peak moment (what is freed or not yet allocated then is left out or
  // reduced): an unphased breakdown whose plain sum is total(). Unphased: a copy.
  MemoryBreakdown at_peak() const;
  // "forward_loss", "backward_start", "backward_end", "optimizer_step", or "sum" when not phased.
  const char* peak_phase() const;
  double total() const;
  // What must fit on the GPU: total() without paged optimizer states (they yield to the rest).
  double resident() const;
  // What is on the GPU at the peak with `usable` bytes: paged states fill the room left, no more.
  double on_gpu(double usable) const;
  // Paged optimizer states that do not fit next to the rest: paged out to host RAM and back every step.
  double paged_out(double usable) const;
  // The part of the peak that the stack's memory uncertainty applies to (activations, logits,
  // allocator overhead at the peak phase): the memory range is total() -/+ uncertainty x variable().
  double variable() const;
  json to_json_gib() const;  // {"total":..., "weights":..., ...} in GiB; phased or a step peak: + peak_phase,
                             // at_peak (phases)
};

// The components of `b` in GiB ({"total", "weights", ...}, "optimizer_paged" when paged), without the peak's
// moment: to_json_gib's body, and the per-rank memory of a multi-GPU estimate.
json components_gib(const MemoryBreakdown& b);

struct ActivationDetail {
  double per_token_bytes = 0;             // resident activations per (padded) token, excluding logits
  double backward_per_token_bytes = 0;    // of per_token_bytes: only once backward runs
  double last_layer_per_token_bytes = 0;  // the last backward layer's peak (saved + gradients in flight)
  double logits_per_token_bytes = 0;
  double per_layer_max_bytes = 0;   // the largest layer's saved activations per token
  double host_per_token_bytes = 0;  // offloaded to host RAM per token (checkpoints)
  // Loss: a fixed transient of `logits_fixed_tokens` tokens' logits (chunked loss) at
  // logits_fixed_bytes_per_token each, on top of logits_per_token_bytes for every token.
  double logits_fixed_tokens = 0;
  double logits_fixed_bytes_per_token = 0;
};

// QLoRA with peft's prepare_model_for_kbit_training: the unquantized parameters (norms included) are fp32,
// so norm outputs, the MLP's 4-bit linear outputs and the residual stream are fp32 too (bitsandbytes'
// Linear4bit returns its input's dtype).
bool kbit_upcast(const StackProfile& s, const Workload& w);
// Whether torch's AdamW runs fused (one kernel, no step temporary): --adamw-impl, else the stack's
// adamw_implementation. Only torch's AdamW (--optimizer adamw / adamw-mixed) has the choice.
bool adamw_fused(const StackProfile& s, const Workload& w);

// Plain LoRA through PEFT's Linear.forward casts the adapter input x to the adapters' dtype before lora_A
// (tuners/lora/layer.py, `x = x.to(lora_A.weight.dtype)` since peft 0.7, `_cast_input_dtype` since 0.15;
// peft @ 5d602fdb), with autocast on or off. With fp32 adapters under bf16/fp16 autocast that is an fp32
// copy of x, and autocast casts it back for the matmul, which saves that 16-bit copy for backward. QLoRA's
// bnb Linear4bit/8bitLt cast only when autocast is off (tuners/lora/bnb.py `requires_conversion`), and a
// stack whose fused LoRA kernels replace PEFT's forward (Unsloth at lora_dropout 0: matmul_lora casts the
// adapter weights, not x) casts nothing. True when the cast happens.
bool peft_casts_lora_input(const StackProfile& s, const Workload& w);

// A stack's fused LoRA kernels replace PEFT's adapter forward: Unsloth patches its LoRA MLP, QKV and O
// kernels only at lora_dropout 0 (unsloth/models/llama.py FastLlamaModel.patch_peft_model), LoRA or QLoRA.
bool fused_lora(const StackProfile& s, const Workload& w);

// The loss path this run takes: "full", "chunked" or "fused_linear" (Liger overrides the stack's).
const std::string& effective_loss_path(const StackProfile& s, const Workload& w);

ParamBreakdown param_breakdown(const ModelSpec& m, const Workload& w);
// Bytes per quantized parameter as QLoRA stores it (NF4 with or without double quantization, LLM.int8).
double quantized_bytes_per_param(const ModelSpec& m, const Workload& w);
ActivationDetail activation_detail(const ModelSpec& m, const Workload& w, const StackProfile& s,
                                   double seq_len);
MemoryBreakdown memory_for_batch(const ModelSpec& m, const Workload& w, const StackProfile& s,
                                 std::int64_t batch, double seq_len);

// memory_for_batch at one padded length for any number of batches: what does not depend on the batch (the
// parameters, optimizer states, the activations per token, ...) is computed once, so that a search over the
// batch evaluates only at(). at(b) is memory_for_batch(m, w, s, b, seq_len), bit for bit (memory_for_batch is
// BatchMemory(m, w, s, seq_len).at(b)).
class BatchMemory {
 public:
  BatchMemory(const ModelSpec& m, const Workload& w, const StackProfile& s, double seq_len);
  MemoryBreakdown at(std::int64_t batch) const;

 private:
  void apply_objective(const ObjectiveMemory& o, const Workload& w);
  MemoryBreakdown base_;  // every component at batch 0 (the token-scaled ones are set by at())
  ActivationDetail ad_;
  double seq_len_ = 0;
  double allocator_fraction_ = 0;
  // The objective's terms (objective.hpp ObjectiveMemory): sequences per sample, the share of tokens with
  // logits, the reference's logits per token, GRPO generation bytes per completion and completions per
  // generation (batch x grad-accum).
  double sequences_ = 1, logits_share_ = 1, reference_logits_per_token_ = 0, generation_per_row_ = 0;
  double generation_rows_per_sample_ = 1;
};

struct MaxBatch {
  std::int64_t batch = 0;   // 0 = even one sample does not fit
  double seq_len = 0;       // padded length used
  double usable_bytes = 0;  // GPU memory available to the process
  double fixed_bytes = 0;   // memory at batch 0 (weights, optimizer, context...)
  double per_sample_bytes = 0;
};

MaxBatch max_batch_size(const ModelSpec& m, const Workload& w, const StackProfile& s, const GpuSpec& g);

// The largest batch b in [1, kMaxSearchBatch] with bytes(b) <= usable, for a peak `bytes` that is
// non-decreasing in the batch (affine, or convex and piecewise affine); m1 and m2 are bytes(1) and bytes(2),
// which the caller has already. Newton steps on the local slope from the secant through batches 1 and 2
// (exact in one step for an affine peak), a bisection on whole batches as the fallback whatever the shape.
// 0 when batch 1 does not fit. The one search behind max_batch_size and the multi-GPU per-rank maximum
// (rank_memory.cpp).
constexpr std::int64_t kMaxSearchBatch = 10000000;
std::int64_t largest_batch_within(const std::function<double(std::int64_t)>& bytes, double usable, double m1,
                                  double m2);

// The longest padded sequence that fits at batch 1 ("what fits?"): memory_for_batch(.., 1, L) is
// non-decreasing in L, so a bisection on whole tokens finds it. 0 when even `min_len` tokens do not fit.
struct MaxSeq {
  double seq_len = 0;
  double usable_bytes = 0;
  double bytes_at_max = 0;  // memory at that length
};
MaxSeq max_seq_len(const ModelSpec& m, const Workload& w, const StackProfile& s, const GpuSpec& g,
                   double min_len = 1, double max_len = 1 << 22);

// LoRA adapter parameter count for the chosen targets and rank.
double lora_params(const ModelSpec& m, const Workload& w);
// How many linear modules get adapters (layers x experts x projections).
double adapted_modules(const ModelSpec& m, const LoraTargets& t);
// The dtypes DoRA's weight norm works in (peft tuners/lora/dora.py DoraLinearLayer, peft @ 5d602fdb).
struct DoraDtypes {
  double tb = 4;             // lora_A's dtype: torch.eye(in) is made in it
  double a = 2;              // compute dtype: lora_B's output under autocast
  double xd = 2;             // x's dtype at the adapter (PEFT's cast to tb, or the norm's fp32 output)
  bool weight_copy = false;  // weight.to(x.dtype) copies: QLoRA's dequantized weight, or a dtype change
  double copy_from = 0;      // bytes per element that copy reads (0: no copy op)
};
DoraDtypes dora_dtypes(const StackProfile& s, const Workload& w);
// The FP8 weight copies Transformer Engine's te.Linear modules keep for the backward
// (MemoryBreakdown::fp8_weight_copies): 0 unless --fp8 te-*.
double te_weight_copy_bytes(const ModelSpec& m, const Workload& w, const StackProfile& s);
// DoRA's weight-norm memory (MemoryBreakdown::dora_weight_norm): 0 unless --lora-variant dora.
double dora_weight_norm_bytes(const ModelSpec& m, const Workload& w, const StackProfile& s);

}  // namespace ftcost
