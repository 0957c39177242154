// The kernels a training step launches between the GEMMs, counted per element the way eager PyTorch runs
// the Hugging Face modules (the "eager" op inventory of a stack profile, StackProfile::ops), and what a
// stack's fused kernels replace (StackProfile::ops fused groups). Each function gives the bytes read +
// written, FLOPs and launches of one module's kernels per element of its natural basis (tokens x width);
// the step model (throughput.cpp) multiplies by the elements and times them with a roofline of the GPU.
// Provenance of every count: docs/sources/stacks/ops.md.
#pragma once

#include <array>
#include <cstddef>

namespace ftcost {

// Which measured rate an op runs at (calibration: CalDerived norm_gbps, cast_gbps, pointwise_gbps,
// cross_entropy_gbps; optimizer: the AdamW rows).
enum class OpKind { norm, cast, pointwise, cross_entropy, optimizer };
const char* op_kind_name(OpKind k);

struct OpCount {
  const char* name = "";
  OpKind kind = OpKind::pointwise;
  double bytes = 0;    // DRAM bytes read + written
  double flops = 0;    // arithmetic, per the same basis
  double kernels = 0;  // launches
};

// A short list of ops (a module's kernels); fixed capacity, no allocation (one estimate stays under 100 us).
struct OpList {
  static constexpr std::size_t kMax = 4;
  std::array<OpCount, kMax> v{};
  std::size_t n = 0;
  void add(const char* name, OpKind kind, double bytes, double kernels, double flops = 0);
  const OpCount* begin() const { return v.data(); }
  const OpCount* end() const { return v.data() + n; }
  double bytes() const;
  double kernels() const;
  // Every op's bytes and flops times `elements` (its basis), launches unchanged.
  OpList scaled(double elements) const;
};

// The kernel groups a stack replaces with fused kernels (stack throughput.ops.fused; Liger adds its own).
struct FusedOps {
  bool rmsnorm = false;   // one kernel forward, one backward (Liger LigerRMSNorm, Unsloth fast_rms_layernorm)
  bool rope = false;      // q and k rotated in one kernel each way (Liger liger_rotary_pos_emb, Unsloth)
  bool swiglu = false;    // act(gate) * up in one kernel each way (Liger LigerSiLUMulFunction, Unsloth)
  bool residual = false;  // residual add folded into the next norm (torch.compile)
};

// What the per-element counts depend on besides the module.
struct OpContext {
  double a = 2;              // bytes of the compute dtype
  bool backward = false;     // the backward pass (forward and recompute launch the same kernels)
  bool weight_grad = false;  // the norm weights train (full fine-tuning)
  FusedOps fused;
};

// RMSNorm over one element of its width (LlamaRMSNorm.forward: fp32 upcast, pow, mean, rsqrt, two
// multiplies, downcast; its autograd backward).
OpList norm_ops(const OpContext& c);
// Rotary embedding per element of q plus k, launches for both (apply_rotary_pos_emb: q*cos +
// rotate_half(q)*sin).
OpList rope_ops(const OpContext& c);
// One residual add per hidden element; in backward the gradient sum where the stream branches.
OpList residual_ops(const OpContext& c);
// The attention output's transpose(1, 2).contiguous() copy per element of q_dim.
OpList attention_output_ops(const OpContext& c);
// act(gate) * up per intermediate element (gated) or act(x) alone (not gated).
OpList mlp_act_ops(const OpContext& c, bool gated);
// Autograd's sum of the gradients of one tensor read by one more consumer, per element.
OpList grad_accumulate_ops(const OpContext& c);

// PEFT's LoRA glue of one adapted module (tuners/lora/layer.py Linear.forward): per input element
// (`in` basis) the casts of x and the dropout, per output element (`out` basis) the scaling and the add.
struct LoraGlue {
  OpList per_in;
  OpList per_out;
  double fixed_kernels = 0;  // the adapters' weight casts under autocast (tiny tensors)
};
// cast: PEFT casts x to the fp32 adapters' dtype; dropout_bytes: element size the dropout works on (0: no
// dropout); weight_casts: autocast casts the fp32 adapter weights to the compute dtype each forward.
LoraGlue lora_glue_ops(const OpContext& c, bool cast, double dropout_bytes, bool weight_casts);

// DoRA's ops of one adapted module beyond LoRA's (peft tuners/lora/dora.py DoraLinearLayer.forward), per
// element of each basis: in x in (the identity get_lora_weight pushes through the adapters), in x out (the
// weight norm), tokens x out (the magnitude products). The weight norm is detached and runs in forward (and
// recompute) only. tb: lora_A's dtype; xd: x's dtype at the adapter; copy_from: bytes per element that
// weight.to(x.dtype) reads (0: no copy).
struct DoraOps {
  OpList per_eye, per_weight, per_out;
};
DoraOps dora_ops(const OpContext& c, double tb, double xd, double copy_from);

// transformers 5's grouped_mm experts (integrations/moe.py grouped_mm_experts_forward, the default
// experts_implementation) around its two torch._grouped_mm GEMMs and act(gate) * up (mlp_act_ops), per
// element of three bases: tokens x hidden (the result's zero fill and index_add_'s writes; in backward the
// zero-filled gradient of the gathered input), routed pairs x hidden (the gathers, the routing-weight
// product, the un-permutation, the cast back, index_add_'s reads, and their backward), routed pairs (the
// int64 index work: two argsorts, the permutation gathers, histc, cumsum; in backward the four sorted
// index_put_ calls of the gathers' gradients). weight_bytes: the routing weights' element size (4:
// Qwen3MoeTopKRouter returns softmax's fp32 top-k); routed: routed pairs (the radix sorts' passes).
struct MoeGroupedOps {
  OpList per_token, per_pair, per_route;
};
MoeGroupedOps moe_grouped_mm_ops(const OpContext& c, double weight_bytes, double routed);

// transformers 5's top-k router after its linear (Qwen3MoeTopKRouter.forward): per router logit (tokens x
// experts) the fp32 softmax and top-k's read (in backward top-k's zero-filled gradient and the softmax
// backward), per routed pair (tokens x k) top-k's outputs, the renormalisation and the cast back.
struct MoeRouterOps {
  OpList per_logit, per_choice;
};
MoeRouterOps moe_router_ops(const OpContext& c);

// The loss per logit (token x vocabulary entry) after the lm_head GEMM.
//   full:  transformers ForCausalLMLoss: logits.float(), log_softmax + nll (cross_entropy), backward
//   chunk: the same per chunk under torch.utils.checkpoint (TRL chunked_nll): its backward recomputes
OpList loss_ops(const OpContext& c, bool chunked);

// torch's AdamW step over `params` parameters in `tensors` tensors, with gradient-norm clipping.
struct OptimizerShape {
  double params = 0;
  double tensors = 0;
  double param_bytes = 4;  // bytes of a parameter and its gradient (4: fp32 master weights)
  double state_bytes = 4;  // bytes of each AdamW moment
  bool fused = false;      // torch _fused_adamw (one kernel), else the foreach path (_multi_tensor_adam)
  bool weight_decay = false;
  bool clip = true;  // Trainer max_grad_norm 1.0: clip_grad_norm_ (foreach norm + scale)
};
OpList optimizer_ops(const OptimizerShape& o);

}  // namespace ftcost
