// The eager op inventory (ops.hpp). Counts per element, read from the code named at each function; the
// same text with the versions is in docs/sources/stacks/ops.md. "r X w Y": bytes read and written per
// element; a = bytes of the compute dtype (2 for bf16), 4 for fp32.
#include "ftcost/ops.hpp"

#include "ftcost/enum_names.hpp"

#include <algorithm>
#include <cmath>

namespace ftcost {

constexpr EnumName<OpKind> kOpKindNames[] = {{OpKind::norm, "norm"},
                                             {OpKind::cast, "cast"},
                                             {OpKind::pointwise, "pointwise"},
                                             {OpKind::cross_entropy, "cross_entropy"},
                                             {OpKind::optimizer, "optimizer"}};
const char* op_kind_name(OpKind k) { return enum_name(kOpKindNames, k, "pointwise"); }

void OpList::add(const char* name, OpKind kind, double bytes, double kernels, double flops) {
  if (n >= kMax) return;
  v[n++] = OpCount{name, kind, bytes, flops, kernels};
}

double OpList::bytes() const {
  double t = 0;
  for (const auto& o : *this) t += o.bytes;
  return t;
}

double OpList::kernels() const {
  double t = 0;
  for (const auto& o : *this) t += o.kernels;
  return t;
}

OpList OpList::scaled(double elements) const {
  OpList out = *this;
  for (std::size_t i = 0; i < out.n; ++i) {
    out.v[i].bytes *= elements;
    out.v[i].flops *= elements;
  }
  return out;
}

// LlamaRMSNorm.forward (transformers models/llama/modeling_llama.py; the same body in Qwen2/Qwen3/Mistral/
// Qwen3-MoE): h = x.to(fp32) [r a w 4]; h.pow(2) [r4 w4]; .mean(-1) [r4]; + eps, rsqrt [per row]; h * rs
// [r4 w4]; .to(a) [r4 w a]; weight * [r a w a]: 8 kernels, 28 + 4a bytes.
// Backward (autograd of the same ops, frozen weight): grad*weight [2a]; to() backward, a -> fp32 [a+4];
// mul backward: g*rs [8] and (g*h).sum(-1) [mul 12 + sum 4]; rsqrt/add backward [per row]; mean backward's
// expanded division [w4]; pow backward 2*h*g [two kernels, 20]; the two gradients of h summed [12]; to()
// backward fp32 -> a [4+a]: 12 kernels, 68 + 4a bytes. The weight's gradient (full fine-tuning) adds
// (g*x16) and its sum over tokens [3a + a]: 2 kernels.
// Fused (Liger LigerRMSNormFunction, Unsloth fast_rms_layernorm, a compiled norm): forward reads x, writes y
// and a per-row rstd [2a]; backward reads dy and x, writes dx [3a]; one kernel each (the weight gradient's
// partial sums one more).
OpList norm_ops(const OpContext& c) {
  OpList o;
  const double a = c.a;
  if (c.fused.rmsnorm) {
    o.add("norm", OpKind::norm, c.backward ? 3 * a : 2 * a, c.backward && c.weight_grad ? 2 : 1, 4);
    return o;
  }
  if (!c.backward) {
    o.add("norm", OpKind::norm, 28 + 4 * a, 8, 4);
    return o;
  }
  o.add("norm", OpKind::norm, 68 + 4 * a + (c.weight_grad ? 4 * a : 0), c.weight_grad ? 14 : 12, 8);
  return o;
}

// apply_rotary_pos_emb (modeling_llama.py): q*cos [2a], rotate_half = cat(-x2, x1) [neg a, cat 2a],
// *sin [2a], + [3a]: 5 kernels, 10a per element of q (and of k). Backward: grad*sin [2a], neg backward [a],
// the two slices' backward into zero-filled full tensors [4a], grad*cos [2a], the three gradients summed
// [two adds, 6a]: 9 kernels, 15a. Bytes per element of q plus k; launches for both tensors (10 and 18).
// Fused (Liger liger_rotary_pos_emb, Unsloth fast_rope_embedding): q and k in one kernel each way, r a w a.
OpList rope_ops(const OpContext& c) {
  OpList o;
  const double a = c.a;
  if (c.fused.rope)
    o.add("rope", OpKind::pointwise, 2 * a, 1, 6);
  else
    o.add("rope", OpKind::pointwise, c.backward ? 15 * a : 10 * a, c.backward ? 18 : 10, 6);
  return o;
}

// residual = residual + h (LlamaDecoderLayer.forward, twice per layer): r 2a w a. Backward: add passes the
// gradient through; the stream's gradient is summed where it branches (the layer input feeds the norm and
// the residual): r 2a w a. A compiled layer folds the add into the next norm's kernel (no launch, the
// norm reads one more input): a.
OpList residual_ops(const OpContext& c) {
  OpList o;
  if (c.fused.residual)
    o.add("residual", OpKind::pointwise, c.a, 0, 1);
  else
    o.add("residual", OpKind::pointwise, 3 * c.a, 1, 1);
  return o;
}

// sdpa_attention_forward (transformers integrations/sdpa_attention.py): attn_output.transpose(1, 2)
// .contiguous(), a strided copy r a w a; its backward copies the gradient back, r a w a.
OpList attention_output_ops(const OpContext& c) {
  OpList o;
  o.add("attention_transpose", OpKind::cast, 2 * c.a, 1);
  return o;
}

// LlamaMLP.forward: down(act_fn(gate(x)) * up(x)): silu [r a w a], mul [r 2a w a]: 2 kernels, 5a per
// intermediate element. Backward: mul backward grad*up and grad*act [2 x 3a], silu_backward [r 2a w a]:
// 3 kernels, 9a. Not gated (GELU MLP): act [2a] forward, gelu_backward [3a]. Fused SwiGLU (Liger
// LigerSiLUMulFunction, Unsloth swiglu_fg_kernel): forward r 2a w a, backward r 3a w 2a, one kernel each.
OpList mlp_act_ops(const OpContext& c, bool gated) {
  OpList o;
  const double a = c.a;
  if (!gated) {
    o.add("mlp_act", OpKind::pointwise, c.backward ? 3 * a : 2 * a, 1, 8);
  } else if (c.fused.swiglu) {
    o.add("mlp_act", OpKind::pointwise, c.backward ? 5 * a : 3 * a, 1, 8);
  } else {
    o.add("mlp_act", OpKind::pointwise, c.backward ? 9 * a : 5 * a, c.backward ? 3 : 2, 8);
  }
  return o;
}

// The autograd engine sums the gradients a tensor receives from each consumer (InputBuffer::add): one add,
// r 2a w a, per consumer beyond the first (q/k/v read the same normed input; gate/up theirs; every LoRA
// branch reads x once more).
OpList grad_accumulate_ops(const OpContext& c) {
  OpList o;
  o.add("grad_accumulate", OpKind::pointwise, 3 * c.a, 1, 1);
  return o;
}

// PEFT tuners/lora/layer.py Linear.forward: result = base(x); x = self._cast_input_dtype(x, lora_A.weight
// .dtype); result = result + lora_B(lora_A(dropout(x))) * scaling.
//   per input element: x.to(fp32) [r a w 4] and autocast's cast back for lora_A [r 4 w a] when PEFT casts;
//     nn.Dropout (p > 0): native_dropout r d w d + a bool mask [2d + 1] on the d-byte element;
//   per output element: * scaling [r a w a], + result [r 2a w a];
//   autocast casts lora_A.weight and lora_B.weight (fp32) to the compute dtype: 2 tiny kernels.
// Backward: mul backward [2a per out]; the two casts' backward [a+4, 4+a per in]; dropout backward reads the
// gradient and the mask, writes [2d + 1]; the weight casts' backward [2 tiny kernels]. The gradient of x
// from this branch is summed with the base layer's (grad_accumulate_ops, counted by the caller).
LoraGlue lora_glue_ops(const OpContext& c, bool cast, double dropout_bytes, bool weight_casts) {
  LoraGlue g;
  const double a = c.a;
  if (cast) g.per_in.add("lora_cast", OpKind::cast, 2 * (a + 4), 2);
  if (dropout_bytes > 0) g.per_in.add("lora_dropout", OpKind::pointwise, 2 * dropout_bytes + 1, 1);
  if (c.backward)
    g.per_out.add("lora_scale_add", OpKind::pointwise, 2 * a, 1, 1);
  else
    g.per_out.add("lora_scale_add", OpKind::pointwise, 5 * a, 2, 2);
  g.fixed_kernels = weight_casts ? 2 : 0;
  return g;
}

// DoRA beyond LoRA's glue (peft tuners/lora/dora.py DoraLinearLayer.forward, peft @ 5d602fdb), p = the
// products' dtype (the fp32 magnitude promotes them: max(tb, a)):
//   per in x in: get_lora_weight's torch.eye(in) in tb [w tb], autocast's copy for lora_A when tb > a
//     [r tb w a];
//   per in x out: lora_weight.to(x.dtype) when x is wider than a [r a w xd]; weight.to(x.dtype) (QLoRA's
//     dequantized weight or the base weight) when it copies [r copy_from w xd]; get_weight_norm: scaling *
//     lora_weight [r xd w xd], weight + that [r 2xd w xd], torch.linalg.norm(dim=1) [r xd]: detached, so
//     backward has none of them;
//   per token x out, forward: (m/n - 1) * base_result [r a w p], m/n * lora_result [r a w p], * scaling
//     [r p w p], their sum [r 2p w p], result + result_dora [r a+p w p], .to(result dtype) [r p w a], in
//     place of LoRA's * scaling and + result (2a + 3a): 10p - a bytes, 4 more kernels;
//     backward: the cast back [p+a], the scalar product [2p], the two products' input gradients
//     [2 x 2p] and their magnitude gradients (grad * tensor summed over tokens) [2 x (2p + a)], the casts of
//     the two input gradients to a [2 x (p + a)], base_result's gradient summed with result's [3a], in place
//     of LoRA's mul backward (2a): 6a + 13p bytes, 9 more kernels.
DoraOps dora_ops(const OpContext& c, double tb, double xd, double copy_from) {
  DoraOps o;
  const double a = c.a;
  const double p = std::max(tb, a);
  if (!c.backward) {
    o.per_eye.add("dora_eye", OpKind::cast, tb + (tb > a ? tb + a : 0.0), tb > a ? 2 : 1);
    if (xd != a) o.per_weight.add("dora_weight_cast", OpKind::cast, a + xd, 1);
    if (copy_from > 0) o.per_weight.add("dora_weight_cast", OpKind::cast, copy_from + xd, 1);
    o.per_weight.add("dora_weight_norm", OpKind::norm, 6 * xd, 3, 3);
    o.per_out.add("dora_scale", OpKind::pointwise, 10 * p - a, 4, 5);
  } else {
    o.per_out.add("dora_scale", OpKind::pointwise, 6 * a + 13 * p, 9, 6);
  }
  return o;
}

namespace {

// A CUB radix sort of (int64 key, int64 value) pairs over `bits` key bits (cub/device/dispatch/
// dispatch_radix_sort.cuh, DeviceRadixSortPolicy from Policy800: ONESWEEP for keys of 4 bytes or more,
// ONESWEEP_RADIX_BITS 8): a histogram kernel, an exclusive-sum kernel, one onesweep kernel per 8 bits.
// Bytes per item: the histogram reads the keys [8]; each pass reads and writes keys and values [32].
struct RadixSort {
  double kernels = 0, bytes = 0;
};
RadixSort radix_sort_pairs(double bits) {
  const double passes = std::max(1.0, std::ceil(bits / 8.0));
  return RadixSort{2 + passes, 8 + 32 * passes};
}

}  // namespace

// transformers integrations/moe.py grouped_mm_experts_forward (@ 0261a467; transformers 5 modeling_utils
// get_correct_experts_implementation: "grouped_mm" unless asked otherwise), S routed pairs, p = the product
// dtype max(w, a) (a bf16 product with fp32 routing weights promotes to fp32):
//   per token x hidden: final = zeros_like(hidden_states) [w a]; index_add_'s writes of it [w a]: 1 kernel.
//   per pair x hidden: hidden_states[token_idx] and current_hidden_states[perm] [r a w a each]; out *
//     sample_weights_g [r a w p]; out[inv_perm] [r p w p]; .to(a) [r p w a, when p != a]; index_add_ reads
//     the rows [r a]: 5 or 6 kernels.
//   per pair (int64 index work): token_idx = arange(N).expand().reshape(-1) [w 8, r 8 w 8]; perm =
//     argsort(expert_ids, stable=True) and inv_perm = argsort(perm, stable=True), each PyTorch's
//     launch_stable_sort_kernel (aten/src/ATen/native/cuda/SortStable.cu: a fill kernel [w 8], then a CUB
//     radix sort over the 64 key bits); expert_ids[perm] [r 8 + 8 w 8]; sample_weights[perm] [r 8 + w w w];
//     histc(expert_ids_g.float()) [cast r 8 w 4; zero-fill and count r 4]; cumsum over the experts.
// Backward (autograd; the experts' weights frozen or not, their gradients are the GEMMs'):
//   per token x hidden: the zero-filled gradient of hidden_states[token_idx] [w a]: 1 kernel.
//   per pair x hidden: index_add_'s source gradient grad.index_select(0, token_idx) [r a w a]; .to()
//     backward [r a w p, when p != a]; out[inv_perm]'s IndexBackward (zeros [w p], then
//     index_put_(accumulate=True) [r p, read-modify-write 2p]); the product's gradients: to the rows
//     grad * w [r p w p] and back to a [r p w a, when p != a], to the routing weights grad * out [r p + a
//     w p] summed over hidden [r p]; current_hidden_states[perm]'s IndexBackward (zeros [w a],
//     index_put_ [r a, 2a]) and hidden_states[token_idx]'s index_put_ [r a, 2a]: 9 or 11 kernels.
//   per pair (int64): the four index_put_(accumulate=True) calls (out[inv_perm], current[perm],
//     hidden_states[token_idx], sample_weights[perm]) each take aten/src/ATen/native/cuda/Indexing.cu
//     index_put_with_sort_kernel: the linear index [r 8 w 8], .divide_(sliceSize) [r 8 w 8], arange [w 8],
//     a CUB radix sort over the bits of the largest row index; sample_weights[perm]'s zeros and index_put_
//     [4w]: 2 kernels more.
MoeGroupedOps moe_grouped_mm_ops(const OpContext& c, double weight_bytes, double routed) {
  MoeGroupedOps o;
  const double a = c.a;
  const double w = weight_bytes;
  const double p = std::max(w, a);
  const bool cast = p != a;
  const double row_bits = std::ceil(std::log2(std::max(routed, 2.0)));
  if (!c.backward) {
    o.per_token.add("moe_scatter", OpKind::pointwise, 2 * a, 1);
    o.per_pair.add("moe_gather", OpKind::cast, 4 * a, 2);
    o.per_pair.add("moe_combine", OpKind::pointwise, (a + p) + 2 * p + (cast ? p + a : 0.0) + a,
                   cast ? 4 : 3);
    const RadixSort full = radix_sort_pairs(64);
    o.per_route.add("moe_sort", OpKind::pointwise, 24 + 2 * (8 + full.bytes) + 24 + (8 + 2 * w) + 16,
                    2 + 2 * (1 + full.kernels) + 2 + 3 + 1);
    return o;
  }
  o.per_token.add("moe_scatter", OpKind::pointwise, a, 1);
  o.per_pair.add("moe_gather", OpKind::cast, 7 * a, 3);
  o.per_pair.add("moe_combine", OpKind::pointwise, 3 * a + 9 * p + (cast ? 2 * (a + p) : 0.0), cast ? 8 : 6);
  const RadixSort rows = radix_sort_pairs(row_bits);
  o.per_route.add("moe_sort", OpKind::pointwise, 4 * (16 + 16 + 8 + rows.bytes) + 4 * w,
                  4 * (3 + rows.kernels) + 2);
  return o;
}

// transformers models/qwen3_moe Qwen3MoeTopKRouter.forward (5.x; Mixtral's and Qwen2-MoE's routers are the
// same ops): router_logits = F.linear(x, weight); softmax(router_logits, dtype=float) [r a w 4 per logit];
// topk(k) [r 4 per logit; w 4 + 8 per choice; its sorted k-slice one kernel more]; router_top_value /=
// sum(-1) [sum r 4, div r 4 w 4 per choice] (norm_topk_prob, true for Qwen3-MoE); .to(router_logits.dtype)
// [r 4 w a]: 6 kernels. Backward: the cast's [r a w 4]; the in-place division's two gradients (grad / sum
// [r 4 w 4]; -grad * top / sum^2 summed over k [r 8 w 4, r 4]); the sum's gradient added to the top values'
// [r 8 w 4]; topk's value_selecting_reduction_backward (zeros [w 4 per logit], scatter [r 12 w 4]); the
// softmax backward into the logits' dtype [r 8 w a per logit]: 8 kernels.
MoeRouterOps moe_router_ops(const OpContext& c) {
  MoeRouterOps o;
  const double a = c.a;
  if (!c.backward) {
    o.per_logit.add("router_topk", OpKind::pointwise, a + 8, 2);
    o.per_choice.add("router_topk", OpKind::pointwise, 12 + 4 + 8 + (4 + a), 4);
    return o;
  }
  o.per_logit.add("router_topk", OpKind::pointwise, 4 + 8 + a, 2);
  o.per_choice.add("router_topk", OpKind::pointwise, (a + 4) + 8 + 16 + 12 + 16, 6);
  return o;
}

// transformers loss/loss_utils.py ForCausalLMLoss (>= 4.46): logits.float() [r a w 4];
// nn.functional.cross_entropy(reduction="sum"): log_softmax reads the row twice (max, sum) and writes it
// [r 8 w 4], nll_loss gathers one value per row; / num_items_in_batch: 4 kernels, 16 + a bytes per logit.
// Backward: nll_loss_backward zero-fills the [N, V] fp32 gradient and scatters [w 4]; _log_softmax_backward
// reads the gradient and the output, writes [12]; .float() backward to the compute dtype [r 4 w a]:
// 4 kernels, 20 + a. Chunked (TRL chunked_nll: torch.utils.checkpoint per 256-token chunk): the backward
// runs the chunk's forward again first.
OpList loss_ops(const OpContext& c, bool chunked) {
  OpList o;
  const double a = c.a;
  if (!c.backward) {
    o.add("cross_entropy", OpKind::cross_entropy, 16 + a, 4);
    return o;
  }
  if (chunked) o.add("cross_entropy_recompute", OpKind::cross_entropy, 16 + a, 4);
  o.add("cross_entropy", OpKind::cross_entropy, 20 + a, 4);
  return o;
}

namespace {

// Launches of one multi_tensor_apply call over `tensors` tensors of `params` elements in all
// (aten/src/ATen/native/cuda/MultiTensorApply.cuh: a launch fills up at depth_to_max_tensors[depth - 1]
// tensors {110, 64, 48, 36, 30} or 320 blocks of 65536 elements, whichever first).
double mta_launches(double tensors, double params, int depth) {
  static const double kMaxTensors[5] = {110, 64, 48, 36, 30};
  const double by_tensors = std::ceil(tensors / kMaxTensors[std::clamp(depth, 1, 5) - 1]);
  const double by_blocks = std::ceil(params / (65536.0 * 320.0));
  return std::max({1.0, by_tensors, by_blocks});
}

}  // namespace

// torch/optim/adam.py _multi_tensor_adam (AdamW is Adam with decoupled weight decay from torch 2.6;
// capturable off: the step counts and bias corrections stay on the host):
//   [weight decay] _foreach_mul_(params)                r p w p      depth 1
//   _foreach_lerp_(exp_avgs, grads, 1 - beta1)          r s+p w s    depth 2
//   _foreach_mul_(exp_avg_sqs, beta2)                   r s w s      depth 1
//   _foreach_addcmul_(exp_avg_sqs, grads, grads)        r s+p w s    depth 3
//   exp_avg_sq_sqrt = _foreach_sqrt(exp_avg_sqs)        r s w s      depth 2 (out of place)
//   _foreach_div_(exp_avg_sq_sqrt, bias_correction2)    r s w s      depth 1
//   _foreach_add_(exp_avg_sq_sqrt, eps)                 r s w s      depth 1
//   _foreach_addcdiv_(params, exp_avgs, sqrt, step)     r p+2s w p   depth 3
// _fused_adamw: one kernel over params, grads, exp_avgs, exp_avg_sqs (depth 4), r 2p+2s w p+2s.
// torch/nn/utils/clip_grad.py clip_grad_norm_ (foreach): _foreach_norm(grads) [r p], the norms stacked and
// reduced, clip coefficient and clamp [4 tiny kernels], _foreach_mul_(grads, coef) [r p w p].
OpList optimizer_ops(const OptimizerShape& o) {
  OpList l;
  const double T = o.tensors;
  const double P = o.params;
  const double p = o.param_bytes;
  const double s = o.state_bytes;
  if (o.clip) l.add("clip_grad_norm", OpKind::optimizer, P * 3 * p, 2 * mta_launches(T, P, 1) + 4);
  if (o.fused) {
    l.add("adamw", OpKind::optimizer, P * (3 * p + 4 * s), mta_launches(T, P, 4), P * 12);
    return l;
  }
  double bytes = P * ((s + p + s) * 2 + 2 * s * 4 + (p + 2 * s + p));
  double launches = 2 * mta_launches(T, P, 2) + 3 * mta_launches(T, P, 1) + 2 * mta_launches(T, P, 3);
  if (o.weight_decay) {
    bytes += P * 2 * p;
    launches += mta_launches(T, P, 1);
  }
  l.add("adamw", OpKind::optimizer, bytes, launches, P * 12);
  return l;
}

}  // namespace ftcost
