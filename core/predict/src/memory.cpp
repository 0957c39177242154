#include "ftcost/memory.hpp"

#include "ftcost/model_constants.hpp"
#include "ftcost/objective.hpp"
#include "ftcost/units.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace ftcost {

namespace {

// bitsandbytes NF4: 4 bits + one fp32 absmax per 64 values; with double quantization the absmax is
// stored as 8-bit with one fp32 scale per 256 blocks (stack-facts 2.1): 0.5 + 1/64 + 4/(64*256) bytes.
constexpr double kNf4DqBytes = 0.5 + 1.0 / 64.0 + 4.0 / (64.0 * 256.0);
constexpr double kNf4Bytes = 0.5 + 4.0 / 64.0;
// bitsandbytes' 32-bit optimizers keep their states in fp32 whatever the parameter dtype
// (optim/optimizer.py Optimizer2State.init_state: get_state_buffer(p, dtype=torch.float32) for state1 and
// state2; bitsandbytes @ 95f9af30).
constexpr double kAdam32bitBytes = 8.0;
// bitsandbytes 8-bit AdamW: two blockwise 8-bit states, one fp32 absmax per 256 values
// (bitsandbytes optim/optimizer.py, blocksize = 256; docs/sources/stacks/bitsandbytes.md).
constexpr double kAdam8bitBytes = 2.0 * (1.0 + 4.0 / 256.0);

double d(std::int64_t v) { return static_cast<double>(v); }

// Linear weights of a Mamba layer (in, x, dt, out projections), excluding conv, A_log, D and biases.
double mamba_linear(const ModelSpec& m) {
  const MambaSpec& s = m.mamba;
  return d(m.hidden * 2 * s.d_inner + s.d_inner * (s.dt_rank + 2 * s.d_state) + s.dt_rank * s.d_inner +
           s.d_inner * m.hidden);
}

// The largest single parameter tensor: the (input or output) embedding or the largest linear weight.
double largest_param_tensor(const ModelSpec& m) {
  return std::max(d(m.vocab) * d(m.hidden), d(m.largest_linear()));
}

// Linear (quantizable) parameters: bitsandbytes replaces every nn.Linear except lm_head (stack-facts 2.2),
// the router included.
double quantizable_params(const ModelSpec& m) {
  ParamCounts c = m.params();
  double q = d(c.attention) + d(c.mlp) + d(c.experts) + d(c.shared_experts) + d(c.router);
  q += d(m.layers_with(Mixer::mamba)) * mamba_linear(m);
  return q;
}

bool liger(const Workload& w) { return w.loss_kernel == LossKernel::liger; }

// What an RMSNorm over `width` features keeps per token: its input (HF's eager norm its fp32 upcast;
// Liger's RMSNorm the 16-bit input and an fp32 rstd per row, docs/sources/stacks/liger.md; a model's own
// code its input) and, when what reads it keeps it, its output (`a` bytes per feature).
double norm_bytes(const ModelSpec& m, const StackProfile& s, const Workload& w, double a, double width,
                  bool output_kept = true) {
  const double in = (s.norm_saves_fp32_input && !m.own_training_code && !liger(w)) ? 4.0 : a;
  return (in + (output_kept ? a : 0.0)) * width;
}

// Qwen3 / OLMoE q_norm and k_norm (transformers Qwen3RMSNorm: x.to(float32), pow, mean, rsqrt, mul, then
// weight * x.to(dtype)) over q and k: the normalised output is kept only for the norm weight's gradient
// (full fine-tuning), since what follows (rotary, then attention, whose saved q and k attention_act counts)
// does not keep it.
double qk_norm_bytes(const ModelSpec& m, const StackProfile& s, const Workload& w, double a) {
  if (!m.attn.qk_norm) return 0.0;
  return norm_bytes(m, s, w, a, d(m.attn.q_dim() + m.attn.kv_dim()), w.method == Method::full);
}

// LoRA on frozen 16-bit linear modules through PEFT-style layers: not QLoRA, and not a stack's fused LoRA
// kernel.
// Transformer Engine's te.Linear modules train (--fp8 te-*, full fine-tuning: --fp8 refuses the rest).
bool te_linears(const Workload& w) { return w.fp8_te() && w.method == Method::full; }

bool plain_lora(const StackProfile& s, const Workload& w) {
  return w.method == Method::lora && !fused_lora(s, w);
}

struct LayerAct {
  double attention = 0, mamba = 0, mlp = 0, moe = 0;
  double mlp_inner = 0;  // the dense MLP's activations within its norm (what a TiledMLP shard holds)
  double mlp_tiled = 0;  // the dense MLP's activations under TiledMLP (tiled_mlp_act)
};

// What the activation blocks of one layer share: the compute dtype, the LoRA adapters and their dropout.
struct ActCtx {
  const ModelSpec& m;
  const Workload& w;
  const StackProfile& s;
  double a = 2;        // compute dtype bytes
  double an = 2;       // norm output bytes (fp32 with the kbit upcast)
  double H = 0;        // hidden size
  double r = 0;        // LoRA rank (0: full fine-tuning)
  bool lora = false;   // adapters on
  double drop = 0;     // bytes lora_dropout adds per adapted input feature (0: no dropout)
  double cast = 0;     // bytes of the 16-bit copy of x lora_A saves after PEFT's cast (peft_casts_lora_input)
  bool plain = false;  // plain_lora(): LoRA on frozen 16-bit nn.Linear modules
  bool fa = false;     // LoRA-FA: lora_A frozen
  double dora_out = 0;  // bytes DoRA keeps per adapted output feature (0: not DoRA)
  bool te = false;      // Transformer Engine te.Linear (--fp8 te-*): each linear keeps its own FP8 input
  const LoraTargets& t;

  ActCtx(const ModelSpec& model, const Workload& wl, const StackProfile& stack)
      : m(model), w(wl), s(stack), t(wl.lora_targets) {
    a = w.compute_bytes();
    // fp32 norms (kbit upcast): the norm output and what the 4-bit MLP linears produce from it are fp32.
    an = kbit_upcast(s, w) ? 4.0 : a;
    H = d(m.hidden);
    lora = w.method != Method::full;
    r = lora ? d(w.lora_rank) : 0.0;
    // PEFT's cast of x for fp32 adapters (peft_casts_lora_input): lora_A saves autocast's 16-bit copy of
    // the fp32 x, one per adapted module (q, k and v each cast the same x).
    if (peft_casts_lora_input(s, w)) cast = a;
    // lora_dropout > 0 (PEFT tuners/lora/layer.py Linear.forward: lora_B(lora_A(dropout(x))), nn.Dropout
    // instead of nn.Identity; peft @ 5d602fdb): the dropout saves a bool mask per adapted input feature
    // (torch native_dropout). lora_A then saves the dropped input instead of x: a new copy (a bytes) unless
    // lora_A already saves the cast copy above, so then only the mask is added. Checked on an H200
    // (transformers 5.17, peft 0.21, fp32 adapters, no checkpointing, Llama-3.2-3B, 4 x 1024 tokens, p =
    // 0.1): +2.81 GiB allocated measured, +2.84 GiB from the masks.
    if (lora && w.lora_dropout > 0) drop = cast > 0 ? 1.0 : a + 1.0;
    plain = plain_lora(s, w);
    // LoRA-FA (lora_A frozen, peft optimizers/lorafa.py create_lorafa_optimizer): lora_A's matmul needs its
    // input only for A's gradient, so neither x, its cast copy nor the dropped copy is kept; the dropout
    // mask stays (the input's gradient needs it) and lora_A's output (r wide) stays for B's gradient.
    fa = lora && w.lora_variant == LoraVariant::lora_fa;
    if (fa) {
      cast = 0;
      drop = drop > 0 ? 1.0 : 0.0;
    }
    // DoRA (peft tuners/lora/dora.py DoraLinearLayer.forward): result_dora = (m/||W + sBA|| - 1) *
    // base_result + m/||W + sBA|| * lora_result * s, and the magnitude m is trained: the two products keep
    // base_result and lora_result (out_features each, compute dtype) for m's gradient.
    if (lora && w.lora_variant == LoraVariant::dora) dora_out = 2.0 * a;
    te = te_linears(w);
  }
  // Whether the 16-bit input of the linear layers that read it stays saved for backward. PyTorch saves a
  // matmul's input only for its weight's gradient (autograd codegen, tools/autograd/gen_variable_type.py
  // guard_for: a saved input that one derivative uses is saved only when that derivative is needed; mm's
  // `self` feeds only `mat2`'s), so a frozen nn.Linear keeps nothing of x. Under plain LoRA x is then kept
  // only by an adapter that reads it unchanged; after PEFT's cast or a dropout the adapter keeps its own
  // copy instead (counted in `adapters`). Full fine-tuning keeps x for dW; bitsandbytes' MatMul4Bit keeps A
  // whenever A needs a gradient (QLoRA); a fused LoRA kernel (Unsloth) keeps X itself.
  // Transformer Engine's te.Linear saves its own FP8 copy of x instead (te_inputs).
  bool keeps_input(bool adapted) const {
    return !te && (!plain || (adapted && cast == 0 && drop == 0 && !fa));
  }
  // What te.Linear modules keep of their inputs for the backward, per token: `features` summed over the
  // linears (q, k and v each quantize the same x: three copies). transformer_engine/pytorch/module/linear.py
  // (@ d0067d0) _Linear forward: the input is quantized with row- and column-wise usage, then
  // `inputmat.update_usage(rowwise_usage=False, columnwise_usage=True)` keeps only the column-wise data
  // (the transpose on TN-only GPUs, the data itself on Blackwell) for wgrad: 1 B per element.
  double te_inputs(double features) const { return te ? 1.0 * features : 0.0; }
  // LoRA's saved tensors for `n` adapted modules (lora_A's output, r wide), on their `in_features` the cast
  // copy and the dropout, and on their `out_features` what DoRA keeps.
  double adapters(double n, double in_features, double out_features) const {
    return lora ? a * r * n + (cast + drop) * in_features + dora_out * out_features : 0.0;
  }
};

double on(bool b) { return b ? 1.0 : 0.0; }

// What multi-head latent attention keeps beyond q, k and v (transformers models/deepseek_v2/
// modeling_deepseek_v2.py DeepseekV2Attention.forward @ 03eac6f6; the checkpoints' own modeling_deepseek.py
// does the same): kv_a_layernorm over k_nope's kv_lora_rank slice of kv_a_proj_with_mqa's output (the
// norm's input as the stack's norms keep it, its output kv_b_proj's input), q_a_layernorm over q_lora_rank
// likewise when the query is compressed; kv_a_proj_with_mqa's output itself is only read through casts
// (.to(float32), .float() for the rotary), which keep nothing. FlashAttention-2 pads v from v_head_dim to
// qk_head_dim (F.pad) and keeps its padded output, of which o_proj keeps a sliced contiguous copy
// (attn_output[..., :v_head_dim].reshape(...).contiguous()), not a view.
double mla_extra_act(const ActCtx& c, bool flash) {
  const AttentionSpec& at = c.m.attn;
  double v = norm_bytes(c.m, c.s, c.w, c.a, d(at.kv_lora_rank));
  if (at.q_lora_rank > 0) v += norm_bytes(c.m, c.s, c.w, c.a, d(at.q_lora_rank));
  if (flash && at.v_head_dim != at.qk_nope_head_dim + at.qk_rope_head_dim)
    v += c.a * d(at.q_dim()) + (on(c.keeps_input(c.t.o)) - 1.0) * c.a * d(at.v_dim());
  return v;
}

// Attention block: norm, q/k/v after rotary, attention output (o_proj input), softmax LSE.
double attention_act(const ActCtx& c, double seq_len) {
  const AttentionSpec& at = c.m.attn;
  const double a = c.a;
  const LoraTargets& t = c.t;
  // the norm's input, its output if q, k or v keep it, q/k/v after rotary, the attention output (kept by
  // the flash kernel for its backward; eager leaves it to o_proj), the softmax LSE. xformers'
  // memory_efficient_attention saves the same (q, k, v, out, lse: xformers ops/fmha _fMHA.forward).
  const bool flash = c.w.attention != Attention::eager;
  double v = norm_bytes(c.m, c.s, c.w, c.an, c.H, c.keeps_input(t.q || t.k || t.v)) +
             qk_norm_bytes(c.m, c.s, c.w, a) + a * d(at.q_dim() + 2 * at.kv_dim()) +
             on(flash || c.keeps_input(t.o)) * a * d(at.v_dim()) + 4.0 * d(at.heads);
  if (at.mla) v += mla_extra_act(c, flash);
  v += c.te_inputs(3.0 * c.H + d(at.v_dim()));  // q, k, v (each its own copy) and o_proj
  // Unsloth's xformers path under autograd reshapes the expanded grouped-query K and V into copies as wide
  // as q, which xformers saves instead of the kv-head tensors (unsloth/models/llama.py
  // LlamaAttention_fast_forward, `K.reshape(bsz, kv_seq_len, n_heads, head_dim)` when
  // hidden_states.requires_grad; unsloth @ 6181fb71).
  if (c.w.attention == Attention::xformers && at.kv_heads < at.heads && !at.mla)
    v += 2.0 * a * d((at.heads - at.kv_heads) * at.head_dim);
  if (c.w.attention == Attention::eager) {
    if (at.kv_heads < at.heads) v += 2.0 * a * d(at.heads * at.head_dim);  // repeat_kv copies
    v += (4.0 + a) * d(at.heads) * seq_len;  // fp32 softmax + its 16-bit copy, per query row
  }
  v += c.adapters(on(t.q) + on(t.k) + on(t.v) + on(t.o),
                  c.H * (on(t.q) + on(t.k) + on(t.v)) + on(t.o) * d(at.v_dim()),
                  on(t.q) * d(at.q_dim()) + (on(t.k) + on(t.v)) * d(at.kv_dim()) + on(t.o) * c.H);
  return v;
}

// Mamba block: norm, xz, scan output, x_dbl, B/C copies, chunk states (fp32, 2048-token chunks).
double mamba_act(const ActCtx& c, double seq_len) {
  const MambaSpec& ms = c.m.mamba;
  const double a = c.a;
  double v = norm_bytes(c.m, c.s, c.w, a, c.H) + a * d(3 * ms.d_inner) + a * d(ms.dt_rank + 2 * ms.d_state) +
             a * d(4 * ms.d_state);
  if (seq_len > 0) v += 4.0 * d(ms.d_inner * 2 * ms.d_state) * std::ceil(seq_len / 2048.0) / seq_len;
  // in_proj (H), x_proj (d_inner), dt_proj (dt_rank), out_proj (d_inner)
  if (c.t.mamba)
    v += c.adapters(4, c.H + d(ms.d_inner) + d(ms.dt_rank) + d(ms.d_inner),
                    d(3 * ms.d_inner + ms.dt_rank + 2 * ms.d_state) + c.H);
  return v;
}

// Dense FFN without its norm: gate/up outputs, activation, product (down_proj input), the adapters' inputs.
double mlp_inner_act(const ActCtx& c) {
  const double F = d(c.m.mlp.intermediate);
  // Saved intermediates of a gated MLP: the stack's count (HF 4; fused kernels 2); Liger's SwiGLU keeps
  // gate and up only and recomputes the product in backward.
  // A stack whose fused LoRA MLP needs lora_dropout 0 (Unsloth) runs the PEFT modules otherwise.
  const double stack_saved = c.lora && c.s.fused_lora_needs_zero_dropout && !fused_lora(c.s, c.w)
                                 ? std::max(c.s.mlp_saved_intermediates, constants::kHfMlpSavedIntermediates)
                                 : c.s.mlp_saved_intermediates;
  const bool gate_up = c.t.mlp || c.t.mlp_gate_up;
  const bool down = c.t.mlp || c.t.mlp_down;
  // The last of HF's intermediates (and of the 2 of a non-gated MLP) is the product down_proj reads: kept
  // only if down_proj keeps its input. Liger's SwiGLU function keeps gate and up and not its output, which
  // down_proj then keeps when it keeps its input.
  double saved = c.m.mlp.gated ? (liger(c.w) ? std::min(2.0, stack_saved) : stack_saved) : 2.0;
  if (c.m.mlp.gated && liger(c.w))
    saved += on(c.keeps_input(down));
  else if (!c.keeps_input(down))
    saved -= 1;
  // te.Linear inputs: gate and up (one input if fused) or fc1, and down / fc2
  const double te_in = c.te_inputs((c.m.mlp.gated && !c.m.fused_gate_up ? 2.0 : 1.0) * c.H + F);
  return saved * c.an * F + te_in +
         c.adapters(2 * on(gate_up) + on(down), 2 * c.H * on(gate_up) + F * on(down),
                    (c.m.mlp.gated ? 2.0 : 1.0) * F * on(gate_up) + c.H * on(down));
}

// Dense FFN: norm, gate/up outputs, activation, product (down_proj input).
double mlp_act(const ActCtx& c) {
  const bool gate_up = c.t.mlp || c.t.mlp_gate_up;
  return norm_bytes(c.m, c.s, c.w, c.an, c.H, c.keeps_input(gate_up)) + mlp_inner_act(c);
}

// ALST's TiledMLP (DeepSpeed runtime/sequence_parallel/ulysses_sp.py TiledMLP, @ 5db0c450): the forward runs
// the MLP shard by shard under torch.no_grad() and saves only its input x (ctx.save_for_backward(x)), the
// norm's output, which is then kept whatever the MLP's linears need; nothing F wide outlives a shard.
double tiled_mlp_act(const ActCtx& c) { return norm_bytes(c.m, c.s, c.w, c.an, c.H, true); }

// MoE: norm, router logits + fp32 softmax, top-k; per routed (token, expert) pair: the gathered input,
// gate/up outputs, activation, product and the expert output kept for the routing-weight product.
double moe_act(const ActCtx& c) {
  const ModelSpec& m = c.m;
  const double a = c.a;
  const double H = c.H;
  const double E = d(m.moe.experts);
  const double F = d(m.moe.expert_intermediate);
  const double k = d(c.w.active_experts(m));
  const double gate_up = on(c.t.expert_gate_up) * (m.fused_gate_up ? 1.0 : 2.0);
  const double down = on(c.t.expert_down);
  const double pair = a * (2.0 * H + (m.moe.gated ? 4.0 : 2.0) * F) +
                      c.adapters(gate_up + down, gate_up * H + down * F,
                                 on(c.t.expert_gate_up) * (m.moe.gated ? 2.0 : 1.0) * F + down * H);
  double v = norm_bytes(m, c.s, c.w, a, H) + a * E + 4.0 * E + 12.0 * k + k * pair;
  if (m.moe.shared_experts > 0) {
    const double Fs = d(m.moe.shared_intermediate);
    v += d(m.moe.shared_experts) * a * 4.0 * Fs + (m.moe.shared_gate ? 2.0 * a : 0.0);
    if (c.t.shared) v += d(m.moe.shared_experts) * c.adapters(3, 2 * H + Fs, 2 * Fs + H);
  }
  return v;
}

LayerAct layer_activations(const ModelSpec& m, const Workload& w, const StackProfile& s, double seq_len) {
  const ActCtx c(m, w, s);
  LayerAct out;
  out.attention = attention_act(c, seq_len);
  out.mamba = mamba_act(c, seq_len);
  out.mlp = mlp_act(c);
  out.mlp_inner = mlp_inner_act(c);
  out.mlp_tiled = tiled_mlp_act(c);
  if (m.moe.experts > 0) out.moe = moe_act(c);
  return out;
}

const std::string kFull = "full", kFused = "fused_linear", kChunked = "chunked";

// ALST's TiledMLP shard count for a sample of `seq_len` tokens: its rule (ulysses_sp.py's tiled_mlp_forward
// example, which ArcticTraining and ms-swift's tiled_mlp run: num_shards = ceil(seqlen / hidden_size),
// all-reduced to the ranks' max) or the count given (ms-swift's tiled_mlp_num_shards); never more shards than
// tokens.
double tiled_mlp_shards(const ModelSpec& m, const Workload& w, double seq_len) {
  if (seq_len <= 1) return 1.0;
  const double n = w.tiled_mlp == Workload::kTiledMlpAuto ? std::ceil(seq_len / d(m.hidden)) : d(w.tiled_mlp);
  return std::max(1.0, std::min(n, seq_len));
}

// What TiledMLP adds per token of the batch while a dense MLP runs its backward (TiledMLP.backward): one
// shard (torch.chunk: ceil(L / shards) tokens of each sample) re-run under enable_grad with its gradients in
// flight, and x_grad = torch.zeros_like(x) over the whole sequence in x's dtype.
double tiled_mlp_transient(const ModelSpec& m, const Workload& w, const StackProfile& s, const LayerAct& la,
                           double seq_len) {
  if (w.tiled_mlp == 0 || m.layers_with(Ffn::mlp) == 0 || seq_len <= 0) return 0.0;
  const double shard_share = std::ceil(seq_len / tiled_mlp_shards(m, w, seq_len)) / seq_len;
  const double x_bytes = kbit_upcast(s, w) ? 4.0 : w.compute_bytes();
  return shard_share * constants::kRecomputedLayerPeak * la.mlp_inner + x_bytes * d(m.hidden);
}

// ArcticTraining's tiled logits + loss (sft_trainer.py SFTTrainer.loss, @ 9c40ab97): num_shards =
// ceil(bs x seqlen x vocab x 4 B / 1 GiB), so a tile holds the logits of about 2^30 / (4 x vocab) tokens.
double tiled_loss_tile_tokens(const ModelSpec& m) { return std::floor(1073741824.0 / (4.0 * d(m.vocab))); }

}  // namespace

bool kbit_upcast(const StackProfile& s, const Workload& w) {
  if (w.method != Method::qlora || w.precision == "fp32") return false;
  if (w.kbit_upcast != Switch::stack) return w.kbit_upcast == Switch::on;
  return s.qlora_unquantized_param_bytes >= 4;
}

bool adamw_fused(const StackProfile& s, const Workload& w) {
  if (w.adamw_impl != AdamwImpl::stack) return w.adamw_impl == AdamwImpl::fused;
  return s.adamw_implementation == "fused";
}

bool fused_lora(const StackProfile& s, const Workload& w) {
  // Unsloth patches its fused LoRA kernels only onto modules without a DoRA magnitude vector
  // (unsloth/models/llama.py FastLlamaModel.patch_peft_model, `len(getattr(q_proj, "lora_magnitude_vector",
  // [])) == 0`; unsloth @ 015bdef0): DoRA runs PEFT's modules.
  return w.method != Method::full && s.fused_lora_needs_zero_dropout && w.lora_dropout <= 0 &&
         w.lora_variant != LoraVariant::dora;
}

bool peft_casts_lora_input(const StackProfile& s, const Workload& w) {
  return plain_lora(s, w) && s.trainable_param_bytes > w.compute_bytes();
}

const std::string& effective_loss_path(const StackProfile& s, const Workload& w) {
  if (liger(w)) return kFused;
  // --tiled-loss: DeepSpeed's sequence_tiled_compute runs the logits and loss tile by tile and re-runs each
  // tile's forward in its backward, as a checkpointed chunked loss does. A fused loss (Liger's, or a stack's
  // own) is kept: ArcticTraining takes Liger's when the model is Liger's (SFTTrainer.loss).
  if (w.tiled_loss && s.loss_path != kFused) return kChunked;
  return s.loss_path;
}

double lora_params(const ModelSpec& m, const Workload& w) {
  if (w.method == Method::full) return 0;
  const LoraTargets& t = w.lora_targets;
  const double r = d(w.lora_rank);
  const double H = d(m.hidden);
  double per_rank = 0;
  const double A = d(m.layers_with(Mixer::attention));
  if (A > 0) {
    const AttentionSpec& at = m.attn;
    double q = 0;
    double k = 0;
    double v = 0;
    double o = 0;
    if (at.mla) {
      const double qk_head = d(at.qk_nope_head_dim + at.qk_rope_head_dim);
      q = at.q_lora_rank > 0 ? (H + d(at.q_lora_rank)) + (d(at.q_lora_rank) + d(at.heads) * qk_head)
                             : H + d(at.heads) * qk_head;
      k = H + d(at.kv_lora_rank + at.qk_rope_head_dim);
      v = d(at.kv_lora_rank) + d(at.heads * (at.qk_nope_head_dim + at.v_head_dim));
      o = d(at.heads * at.v_head_dim) + H;
    } else {
      q = H + d(at.q_dim());
      k = H + d(at.kv_dim());
      v = H + d(at.kv_dim());
      o = d(at.q_dim()) + H;
    }
    per_rank += A * ((t.q ? q : 0) + (t.k ? k : 0) + (t.v ? v : 0) + (t.o ? o : 0));
  }
  const double Lm = d(m.layers_with(Ffn::mlp));
  if (Lm > 0) {
    const double F = d(m.mlp.intermediate);
    const double gate_up = m.mlp.gated ? 2 * (H + F) : (H + F);
    per_rank += Lm * ((t.mlp || t.mlp_gate_up ? gate_up : 0) + (t.mlp || t.mlp_down ? F + H : 0));
  }
  const double Le = d(m.layers_with(Ffn::moe));
  if (Le > 0 && m.moe.experts > 0) {
    const double F = d(m.moe.expert_intermediate);
    const double E = d(m.moe.experts);
    double gate_up = m.moe.gated ? 2 * (H + F) : (H + F);
    if (m.fused_gate_up && m.moe.gated) gate_up = H + 2 * F;  // fused fc1: H -> 2F
    per_rank += Le * E * ((t.expert_gate_up ? gate_up : 0) + (t.expert_down ? F + H : 0));
    if (t.router) per_rank += Le * (H + E);
    if (t.shared && m.moe.shared_experts > 0) {
      const double Fs = d(m.moe.shared_intermediate);
      per_rank += Le * d(m.moe.shared_experts) * (2 * (H + Fs) + Fs + H);
    }
  }
  const double Lmb = d(m.layers_with(Mixer::mamba));
  if (Lmb > 0 && t.mamba) {
    const MambaSpec& s = m.mamba;
    per_rank += Lmb * ((H + 2 * d(s.d_inner)) + (d(s.d_inner) + d(s.dt_rank + 2 * s.d_state)) +
                       (d(s.dt_rank) + d(s.d_inner)) + (d(s.d_inner) + H));
  }
  if (t.lm_head) per_rank += H + d(m.vocab);
  return r * per_rank;
}

namespace {

// The adapted linear modules of a model, one entry per shape: in -> out, and how many the model has
// (layers x experts x modules of that shape). The same modules as lora_params().
struct AdaptedLinear {
  double in = 0, out = 0, count = 0;
};
struct AdaptedLinears {
  std::array<AdaptedLinear, 24> v{};
  std::size_t n = 0;
  void add(bool adapted, double in, double out, double count) {
    if (adapted && count > 0 && n < v.size()) v[n++] = AdaptedLinear{in, out, count};
  }
  const AdaptedLinear* begin() const { return v.data(); }
  const AdaptedLinear* end() const { return v.data() + n; }
};

void adapted_attention(const ModelSpec& m, const LoraTargets& t, AdaptedLinears& out) {
  const double A = d(m.layers_with(Mixer::attention));
  const AttentionSpec& at = m.attn;
  const double H = d(m.hidden);
  if (!at.mla) {
    out.add(t.q, H, d(at.q_dim()), A);
    out.add(t.k, H, d(at.kv_dim()), A);
    out.add(t.v, H, d(at.kv_dim()), A);
    out.add(t.o, d(at.q_dim()), H, A);
    return;
  }
  const double qk_head = d(at.qk_nope_head_dim + at.qk_rope_head_dim);
  if (at.q_lora_rank > 0) {
    out.add(t.q, H, d(at.q_lora_rank), A);
    out.add(t.q, d(at.q_lora_rank), d(at.heads) * qk_head, A);
  } else {
    out.add(t.q, H, d(at.heads) * qk_head, A);
  }
  out.add(t.k, H, d(at.kv_lora_rank + at.qk_rope_head_dim), A);
  out.add(t.v, d(at.kv_lora_rank), d(at.heads * (at.qk_nope_head_dim + at.v_head_dim)), A);
  out.add(t.o, d(at.heads * at.v_head_dim), H, A);
}

void adapted_ffn(const ModelSpec& m, const LoraTargets& t, AdaptedLinears& out) {
  const double H = d(m.hidden);
  const double Lm = d(m.layers_with(Ffn::mlp));
  out.add(t.mlp || t.mlp_gate_up, H, d(m.mlp.intermediate), Lm * (m.mlp.gated ? 2.0 : 1.0));
  out.add(t.mlp || t.mlp_down, d(m.mlp.intermediate), H, Lm);
  const double Le = m.moe.experts > 0 ? d(m.layers_with(Ffn::moe)) : 0.0;
  const double E = d(m.moe.experts);
  const double F = d(m.moe.expert_intermediate);
  if (m.fused_gate_up && m.moe.gated)
    out.add(t.expert_gate_up, H, 2 * F, Le * E);  // fused fc1: H -> 2F
  else
    out.add(t.expert_gate_up, H, F, Le * E * (m.moe.gated ? 2.0 : 1.0));
  out.add(t.expert_down, F, H, Le * E);
  out.add(t.router, H, E, Le);
  const double Fs = d(m.moe.shared_intermediate);
  const double S = Le * d(m.moe.shared_experts);
  out.add(t.shared, H, Fs, 2 * S);
  out.add(t.shared, Fs, H, S);
}

AdaptedLinears adapted_linears(const ModelSpec& m, const LoraTargets& t) {
  AdaptedLinears out;
  adapted_attention(m, t, out);
  adapted_ffn(m, t, out);
  const double Lmb = d(m.layers_with(Mixer::mamba));
  const MambaSpec& s = m.mamba;
  const double H = d(m.hidden);
  out.add(t.mamba, H, 2 * d(s.d_inner), Lmb);                         // in_proj
  out.add(t.mamba, d(s.d_inner), d(s.dt_rank + 2 * s.d_state), Lmb);  // x_proj
  out.add(t.mamba, d(s.dt_rank), d(s.d_inner), Lmb);                  // dt_proj
  out.add(t.mamba, d(s.d_inner), H, Lmb);                             // out_proj
  out.add(t.lm_head, H, d(m.vocab), 1);
  return out;
}

// The largest moment of one adapted module's weight norm (in -> out), DoraLinearLayer.forward:
// get_lora_weight: x_eye = torch.eye(in) (tb), autocast's copy of it (when tb > a: lora_A's graph keeps it
// while lora_weight lives), lora_B(lora_A(x_eye)) [in, out] in a; then lora_weight.to(x.dtype), weight =
// dequantize_module_weight(base).to(x.dtype) (a copy unless already that tensor), and get_weight_norm's
// `scaling * lora_weight` and `weight + ...` (xd each) before torch.linalg.norm reduces them to [out].
double dora_transient(const DoraDtypes& t, double in, double out) {
  const double eye16 = t.tb > t.a ? t.a : 0.0;
  const double lora_weight = (t.tb + eye16) * in * in + t.a * in * out;
  const double norm = eye16 * in * in + (t.weight_copy ? 4.0 : 3.0) * t.xd * in * out;
  return std::max(lora_weight, norm);
}

}  // namespace

double adapted_modules(const ModelSpec& m, const LoraTargets& t) {
  double n = 0;
  for (const AdaptedLinear& l : adapted_linears(m, t)) n += l.count;
  return n;
}

DoraDtypes dora_dtypes(const StackProfile& s, const Workload& w) {
  DoraDtypes t;
  t.tb = s.trainable_param_bytes;
  t.a = w.compute_bytes();
  t.xd = peft_casts_lora_input(s, w) ? t.tb : kbit_upcast(s, w) ? 4.0 : t.a;
  const double wbytes = w.precision == "fp32" ? 4.0 : 2.0;
  t.weight_copy = w.method == Method::qlora || t.xd != wbytes;
  // what weight.to(x.dtype) reads: QLoRA's dequantized weight (compute dtype) when x is wider, else the base
  t.copy_from = w.method == Method::qlora ? (t.xd != t.a ? t.a : 0.0) : (t.weight_copy ? wbytes : 0.0);
  return t;
}

// transformer_engine/pytorch/module/linear.py (@ d0067d0) _Linear forward: the weight is quantized every
// forward (accelerate passes no is_first_microbatch, so no cached workspace) with row-wise usage and, when
// grad is enabled, column-wise usage, and the quantized weight is saved for the backward (`wt_save =
// weightmat`; not under FSDP2): 2 B per parameter on TN-only GPUs (data + `_transpose`), 1 B on Blackwell.
// Kept from a layer's forward to its backward: every decoder layer without checkpointing, the recomputed
// layer with it (a checkpointed forward saves nothing), and lm_head's when the model's own forward runs it
// (a chunked or fused loss multiplies by lm_head.weight itself: TRL's chunked_nll, Liger; no te.Linear call).
double te_weight_copy_bytes(const ModelSpec& m, const Workload& w, const StackProfile& s) {
  if (!te_linears(w)) return 0;
  const ParamCounts pc = m.params();
  const double layers = std::max(1.0, d(m.layers()));
  const double kept_layers = w.checkpointing ? 1.0 : layers;
  const double lm_head = effective_loss_path(s, w) == "full" ? d(m.vocab) * d(m.hidden) : 0.0;
  const double linears = d(pc.attention + pc.mlp) * kept_layers / layers + lm_head;
  return (w.fp8_te_transpose ? 2.0 : 1.0) * linears;
}

double dora_weight_norm_bytes(const ModelSpec& m, const Workload& w, const StackProfile& s) {
  if (w.method == Method::full || w.lora_variant != LoraVariant::dora) return 0;
  const DoraDtypes t = dora_dtypes(s, w);
  double peak = 0;
  double weights = 0;
  for (const AdaptedLinear& l : adapted_linears(m, w.lora_targets)) {
    peak = std::max(peak, dora_transient(t, l.in, l.out));
    weights += l.in * l.out * l.count;
  }
  // lora_dropout > 0 (variants.py DoraLinearVariant.forward: base_result = None): DoRA runs the base layer
  // again, F.linear(dropout(x), weight), which keeps autocast's 16-bit copy of the (copied) weight for the
  // input's gradient: one layer's adapted weights with checkpointing (the recomputed layer), all without.
  if (w.lora_dropout > 0 && t.weight_copy)
    peak += t.a * weights / (w.checkpointing ? std::max(1.0, d(m.layers())) : 1.0);
  return peak;
}

ParamBreakdown param_breakdown(const ModelSpec& m, const Workload& w) {
  ParamBreakdown p;
  const double total = d(m.params().total());
  if (w.method == Method::full) {
    p.trainable = total;
    return p;
  }
  p.frozen = total;
  p.lora = lora_params(m, w);
  if (w.lora_variant != LoraVariant::lora) {
    for (const AdaptedLinear& l : adapted_linears(m, w.lora_targets)) {
      if (w.lora_variant == LoraVariant::dora) p.dora_magnitude += l.out * l.count;    // magnitude [out]
      if (w.lora_variant == LoraVariant::lora_fa) p.frozen_adapter += l.in * l.count;  // lora_A [r, in]
    }
  }
  p.frozen_adapter *= d(w.lora_rank);
  const double VH = d(m.vocab) * d(m.hidden);
  p.saved_modules = (w.modules_to_save.embed_tokens ? VH : 0.0) + (w.modules_to_save.lm_head ? VH : 0.0);
  p.trainable = p.lora + p.dora_magnitude - p.frozen_adapter + p.saved_modules;
  if (w.method == Method::qlora) p.quantized = quantizable_params(m);
  return p;
}

ActivationDetail activation_detail(const ModelSpec& m, const Workload& w, const StackProfile& s,
                                   double seq_len) {
  const LayerAct la = layer_activations(m, w, s, seq_len);
  const double a = w.compute_bytes();
  double sum = 0;
  double mx = 0;
  for (const auto& g : m.groups) {
    double layer = 0;
    if (g.mixer == Mixer::attention) layer += la.attention;
    if (g.mixer == Mixer::mamba) layer += la.mamba;
    if (g.ffn == Ffn::mlp) layer += w.tiled_mlp != 0 ? la.mlp_tiled : la.mlp;
    if (g.ffn == Ffn::moe) layer += la.moe;
    sum += d(g.count) * layer;
    mx = std::max(mx, layer);
  }
  ActivationDetail out;
  out.per_layer_max_bytes = mx;
  const bool own_code = m.own_training_code;
  const std::string& loss = own_code ? kFull : effective_loss_path(s, w);
  if (loss == "fused_linear") {
    // Liger / CCE: the input gradient [N, H] and one logits chunk of about N x H elements.
    out.logits_per_token_bytes = s.fused_ce_bytes_per_hidden * d(m.hidden);
  } else if (loss == "chunked") {
    // TRL chunked_nll / Unsloth fused loss: the hidden-state gradient per token, and one chunk's logits.
    out.logits_per_token_bytes = a * d(m.hidden);
    out.logits_fixed_tokens = w.tiled_loss ? tiled_loss_tile_tokens(m) : s.loss_chunk_tokens;
    out.logits_fixed_bytes_per_token = d(m.vocab) * s.logits_bytes_per_vocab_entry;
  } else {
    out.logits_per_token_bytes =
        d(m.vocab) * (own_code ? s.own_code_logits_bytes_per_vocab_entry : s.logits_bytes_per_vocab_entry);
  }
  if (w.checkpointing) {
    // Per-layer checkpoints (the hidden state entering each layer), what the stack keeps beyond them,
    // and one layer recomputed during backward with its gradients in flight (~half its activations).
    // Offloaded checkpoints live in host RAM; two are on the GPU at a time (the one being copied out in
    // the forward, the one copied back for the layer being recomputed).
    const double ckpt = (m.residual_fp32 || kbit_upcast(s, w) ? 4.0 : a) * d(m.hidden);
    const bool off = w.offloads(s.offload_checkpoints);
    const double resident = off ? std::min(2.0, d(m.layers())) * ckpt : d(m.layers()) * ckpt;
    out.per_token_bytes = resident + s.gc_retained_fraction * sum + constants::kRecomputedLayerPeak * mx;
    out.backward_per_token_bytes = constants::kRecomputedLayerPeak * mx;
    if (off) out.host_per_token_bytes = d(m.layers()) * ckpt;
  } else {
    out.per_token_bytes = sum + constants::kBackwardGradInFlight * mx;
    out.backward_per_token_bytes = constants::kBackwardGradInFlight * mx;
  }
  // At the end of backward one layer is left: its saved (or recomputed) activations and its gradients in
  // flight, the same 1.5 layers as a recomputed layer.
  out.last_layer_per_token_bytes = constants::kRecomputedLayerPeak * mx;
  // TiledMLP's shard and input gradient exist while a dense MLP runs its backward: in every backward moment.
  const double tile = tiled_mlp_transient(m, w, s, la, seq_len);
  out.per_token_bytes += tile;
  out.backward_per_token_bytes += tile;
  out.last_layer_per_token_bytes += tile;
  return out;
}

namespace {
// Bytes per parameter of a modules_to_save copy: the base weights' dtype (fp32 for QLoRA's upcast
// non-quantized parameters, peft prepare_model_for_kbit_training).
double saved_module_bytes(const StackProfile& s, const Workload& w) {
  if (w.method == Method::qlora && kbit_upcast(s, w)) return 4.0;
  return w.precision == "fp32" ? 4.0 : 2.0;
}

// Optimizer state bytes per trained parameter stored in `pbytes` (LoRA's adapters and modules_to_save): torch
// AdamW keeps two states like the parameter (adamw-mixed too: a trained adapter has no separate master);
// bitsandbytes' 8-bit two blockwise states, its 32-bit (paged) AdamW two fp32 states; SGD with momentum one.
double lora_state_bytes(Optimizer o, double pbytes) {
  switch (o) {
    case Optimizer::adamw:
    case Optimizer::adamw_mixed:
      return 2 * pbytes;
    case Optimizer::adamw_8bit:
    case Optimizer::paged_adamw_8bit:
      return kAdam8bitBytes;
    case Optimizer::paged_adamw:
      return kAdam32bitBytes;
    case Optimizer::sgd:
      return 0;
    case Optimizer::sgd_momentum:
      return pbytes;
  }
  return 2 * pbytes;
}

// torch's foreach AdamW (the HF Trainer's adamw_torch) steps every parameter at once through one state-sized
// temporary list (sqrt(exp_avg_sq)); optimizer-in-backward steps one tensor at a time. States are in the
// parameter dtype (adamw), fp32 beside fp32 master weights (adamw-mixed), the adapters' dtype (LoRA).
// bitsandbytes' 8-bit and paged optimizers update in place, fused AdamW in one kernel: none.
double optimizer_step_temp(const ModelSpec& m, const Workload& w, const StackProfile& s,
                           const ParamBreakdown& p) {
  if (adamw_fused(s, w) || (w.optimizer != Optimizer::adamw && w.optimizer != Optimizer::adamw_mixed))
    return 0;
  // LoRA-FA's LoraFAOptimizer (peft optimizers/lorafa.py) steps one lora_B at a time: no list temporary.
  if (w.method != Method::full && w.lora_variant == LoraVariant::lora_fa) return 0;
  if (w.method != Method::full)
    return (p.lora + p.dora_magnitude) * s.trainable_param_bytes + p.saved_modules * saved_module_bytes(s, w);
  const double total = d(m.params().total());
  const double stepped = w.optimizer_in_backward ? std::min(total, largest_param_tensor(m)) : total;
  const double state_bytes = w.optimizer == Optimizer::adamw_mixed ? 4.0 : w.precision == "fp32" ? 4.0 : 2.0;
  return stepped * state_bytes;
}
}  // namespace

double quantized_bytes_per_param(const ModelSpec& m, const Workload& w) {
  if (w.quant == Quant::nf4) return kNf4Bytes;
  if (w.quant == Quant::int8) return 1.0 + 4.0 / d(m.hidden);  // LLM.int8: int8 + fp32 row scale
  return kNf4DqBytes;
}

BatchMemory::BatchMemory(const ModelSpec& m, const Workload& w, const StackProfile& s, double seq_len)
    : seq_len_(seq_len), allocator_fraction_(s.allocator_overhead_fraction) {
  MemoryBreakdown& mb = base_;
  const ParamBreakdown p = param_breakdown(m, w);
  const double total = d(m.params().total());
  const double wbytes = w.precision == "fp32" ? 4.0 : 2.0;  // storage dtype of the base weights
  switch (w.method) {
    case Method::full: {
      mb.weights = total * wbytes;
      // Optimizer in backward (torchtune optimizer_in_bwd): each parameter is stepped and its gradient
      // freed as soon as it is accumulated, so only the largest tensor's gradient exists at a time.
      mb.gradients = (w.optimizer_in_backward ? std::min(total, largest_param_tensor(m)) : total) * wbytes;
      switch (w.optimizer) {
        case Optimizer::adamw:
          mb.optimizer_states = 2 * wbytes * total;
          break;  // torch: states like the param
        case Optimizer::adamw_mixed:
          mb.optimizer_states = (wbytes < 4 ? 12.0 : 8.0) * total;
          break;
        case Optimizer::adamw_8bit:
        case Optimizer::paged_adamw_8bit:
          mb.optimizer_states = kAdam8bitBytes * total;
          break;
        case Optimizer::paged_adamw:
          mb.optimizer_states = kAdam32bitBytes * total;
          break;
        case Optimizer::sgd:
          mb.optimizer_states = 0;
          break;
        case Optimizer::sgd_momentum:
          mb.optimizer_states = wbytes * total;
          break;
      }
      break;
    }
    case Method::lora:
    case Method::qlora: {
      if (w.method == Method::qlora) {
        const double qbytes = quantized_bytes_per_param(m, w);
        const double ubytes = kbit_upcast(s, w) ? 4.0 : wbytes;
        mb.weights = p.quantized * qbytes + (total - p.quantized) * ubytes;
        double largest = d(m.largest_linear());
        mb.dequant_buffers = largest * s.dequant_temp_bytes_per_param + 4.0 * largest / 64.0;
      } else {
        mb.weights = total * wbytes;
      }
      const double tb = s.trainable_param_bytes;
      // Adapters stored (DoRA's magnitude in their dtype too: peft cast_adapter_dtype) and trained (LoRA-FA:
      // lora_A frozen, no gradient and no optimizer state); modules_to_save copies in the base weights' dtype
      // (ModulesToSaveWrapper is no BaseTunerLayer: cast_adapter_dtype leaves it as it is).
      const double stored = p.lora + p.dora_magnitude;
      const double trained = stored - p.frozen_adapter;
      const double sb = saved_module_bytes(s, w);
      mb.trainable_params = stored * tb + p.saved_modules * sb;
      // LoRA adapters are small: optimizer-in-backward saves little
      mb.gradients = trained * tb + p.saved_modules * sb;
      mb.optimizer_states =
          trained * lora_state_bytes(w.optimizer, tb) + p.saved_modules * lora_state_bytes(w.optimizer, sb);
      // Autocast caches its 16-bit copy of each fp32 adapter weight for the forward (and the matmuls save
      // it for backward). A fused LoRA kernel casts the weights itself, transiently: Unsloth's matmul_lora
      // and LoRA_MLP / LoRA_QKV / LoRA_W run `X @ A.to(dtype)` and save the fp32 A and B
      // (unsloth/kernels/utils.py matmul_lora, kernels/fast_lora.py, unsloth @ 6181fb71).
      if (w.precision != "fp32" && tb > s.autocast_weight_copy_bytes && !fused_lora(s, w))
        mb.autocast_copies = p.lora * s.autocast_weight_copy_bytes;
      break;
    }
  }
  mb.optimizer_step_temp = optimizer_step_temp(m, w, s, p);
  mb.dora_weight_norm = dora_weight_norm_bytes(m, w, s);
  mb.fp8_weight_copies = te_weight_copy_bytes(m, w, s);
  // accelerate's convert_model replaces a tied lm_head with a te.Linear holding a copy of the embedding
  // (`te_module.weight.copy_(module.weight)`, utils/transformer_engine.py @ 16cb6eb): a weight of its own,
  // which trains (its gradient exists) but which _prepare_te's parameter mapping leaves out of the optimizer
  // (it maps the named parameters from before the conversion, where the tied weight appears once).
  if (te_linears(w) && m.params().lm_head == 0) {
    const double copy = d(m.vocab) * d(m.hidden) * wbytes;
    mb.weights += copy;
    mb.gradients += copy;
  }
  ad_ = activation_detail(m, w, s, seq_len);
  apply_objective(objective_memory(m, w, s, seq_len), w);
  mb.phased = s.peak_model == "phases";
  // Gradients outlive the forward only when they accumulate over micro-batches (optimizer-in-backward
  // frees each one as it is produced and refuses accumulation: torchtune full_finetune_single_device).
  mb.gradients_kept = w.grad_accum > 1 && !w.optimizer_in_backward;
  mb.cuda_context = s.cuda_context_gib * kGiB;
  // bitsandbytes pages a state only for tensors of 1e5 elements or more (get_state_buffer: `p.numel() < 1e5`
  // gets a plain GPU tensor): every large weight of a full fine-tune, a LoRA adapter from rank x width 1e5.
  mb.paged_optimizer =
      (w.optimizer == Optimizer::paged_adamw || w.optimizer == Optimizer::paged_adamw_8bit) &&
      (w.method == Method::full || d(w.lora_rank) * d(m.hidden) >= 1e5);
}

void BatchMemory::apply_objective(const ObjectiveMemory& o, const Workload& w) {
  sequences_ = o.sequences;
  logits_share_ = o.logits_share;
  reference_logits_per_token_ = o.reference_logits_per_token;
  generation_per_row_ = o.generation_per_row;
  generation_rows_per_sample_ = d(std::max<std::int64_t>(1, w.grad_accum));
  base_.reference_weights = o.reference_weights;
  if (o.logits_bytes_per_token >= 0) {  // TRL's own log-probs replace the stack's SFT loss
    ad_.logits_per_token_bytes = o.logits_bytes_per_token;
    ad_.logits_fixed_tokens = 0;
    ad_.logits_fixed_bytes_per_token = 0;
  }
}

MemoryBreakdown BatchMemory::at(std::int64_t batch) const {
  MemoryBreakdown mb = base_;
  const ActivationDetail& ad = ad_;
  // Rows of the batch are samples; a paired objective trains two sequences per sample.
  const double tokens = d(batch) * sequences_ * seq_len_;
  mb.activations = tokens * ad.per_token_bytes;
  mb.activations_backward = tokens * ad.backward_per_token_bytes;
  mb.activations_last_layer = tokens * ad.last_layer_per_token_bytes;
  mb.logits = tokens * logits_share_ * ad.logits_per_token_bytes +
              std::min(tokens, ad.logits_fixed_tokens) * ad.logits_fixed_bytes_per_token +
              tokens * reference_logits_per_token_;
  mb.generation_temp = d(batch) * generation_rows_per_sample_ * generation_per_row_;
  mb.host_offload = tokens * ad.host_per_token_bytes;
  mb.allocator_overhead = allocator_fraction_ * (mb.activations + mb.logits + mb.dequant_buffers);
  return mb;
}

MemoryBreakdown memory_for_batch(const ModelSpec& m, const Workload& w, const StackProfile& s,
                                 std::int64_t batch, double seq_len) {
  return BatchMemory(m, w, s, seq_len).at(batch);
}

std::int64_t largest_batch_within(const std::function<double(std::int64_t)>& bytes, double usable, double m1,
                                  double m2) {
  if (m1 > usable) return 0;
  const double per_sample = m2 - m1;
  const double fixed = m1 - per_sample;
  auto clamp_batch = [](double b) {
    return static_cast<std::int64_t>(std::min(std::max(b, 1.0), static_cast<double>(kMaxSearchBatch)));
  };
  // Newton steps on the local slope: exact in one step for an affine peak, a few for a convex piecewise one
  // (none from a flat start: the bisection below).
  std::int64_t b = per_sample > 0 ? clamp_batch(std::floor((usable - fixed) / per_sample)) : 1;
  std::int64_t found = 0;
  for (int it = 0; it < 8 && found == 0 && per_sample > 0; ++it) {
    const double fb = bytes(b);
    const double fb1 = bytes(b + 1);
    const bool ok = fb <= usable;
    const bool ok1 = fb1 <= usable;
    if (ok && (!ok1 || b == kMaxSearchBatch)) {
      found = b;
      break;
    }
    if (!(fb1 > fb)) break;
    std::int64_t next = clamp_batch(static_cast<double>(b) + std::floor((usable - fb) / (fb1 - fb)));
    if (next == b) next = clamp_batch(static_cast<double>(ok ? b + 1 : b - 1));
    b = next;
  }
  std::int64_t lo = 1;  // fits
  std::int64_t hi = kMaxSearchBatch + 1;
  if (found > 0) {
    lo = found;
    hi = found + 1;
  }
  while (hi - lo > 1) {  // invariant: bytes(lo) fits, bytes(hi) does not (or is past the cap)
    const std::int64_t mid = lo + (hi - lo) / 2;
    (bytes(mid) <= usable ? lo : hi) = mid;
  }
  return lo;
}

MaxBatch max_batch_size(const ModelSpec& m, const Workload& w, const StackProfile& s, const GpuSpec& g) {
  MaxBatch out;
  out.seq_len = w.memory_seq_len();
  out.usable_bytes = g.usable_bytes();
  const BatchMemory bm(m, w, s, out.seq_len);
  auto mem = [&](std::int64_t b) { return bm.at(b).resident(); };
  // Memory is non-decreasing in the batch: affine beyond the first sample for a summed peak, convex and
  // piecewise affine for a phase peak or beside the optimizer step's constant moment (the largest of affine
  // moments): largest_batch_within searches it from batches 1 and 2.
  const MemoryBreakdown b1 = bm.at(1);
  const double m1 = b1.resident();
  const double m2 = mem(2);
  out.per_sample_bytes = m2 - m1;
  out.fixed_bytes = m1 - out.per_sample_bytes;
  if (m1 > out.usable_bytes) {
    out.fixed_bytes = std::max(out.fixed_bytes, mem(0));
    return out;
  }
  // The optimizer step's temporary is a moment that does not grow with the batch: the peak can be flat over
  // the first batches (the step's) and rise later (the activations').
  const bool piecewise = s.peak_model == "phases" || b1.optimizer_step_temp > 0;
  if ((out.per_sample_bytes <= 0 && !piecewise) || out.fixed_bytes >= out.usable_bytes) return out;
  const std::int64_t lo = largest_batch_within(mem, out.usable_bytes, m1, m2);
  out.batch = lo;
  // The per-sample cost where the answer lies (the phase peak's slope can change with the batch).
  if (lo >= 2 && piecewise) {
    out.per_sample_bytes = mem(lo) - mem(lo - 1);
    out.fixed_bytes = mem(lo) - static_cast<double>(lo) * out.per_sample_bytes;
  }
  return out;
}

MaxSeq max_seq_len(const ModelSpec& m, const Workload& w, const StackProfile& s, const GpuSpec& g,
                   double min_len, double max_len) {
  MaxSeq out;
  out.usable_bytes = g.usable_bytes();
  auto fits = [&](double len) { return memory_for_batch(m, w, s, 1, len).resident() <= out.usable_bytes; };
  double lo = std::floor(min_len);
  double hi = std::floor(max_len);
  if (!fits(lo)) return out;
  // Memory is affine in L beyond a chunked loss's chunk when attention keeps no L x L tensor: solve the
  // line through two long lengths, then check the answer and its successor. Eager attention (quadratic) or
  // a miss falls back to the bisection below.
  {
    const double l2 = std::max(lo + 1, std::min(hi, 65536.0));
    const double l1 = std::max(lo, l2 / 2);
    const double m1 = memory_for_batch(m, w, s, 1, l1).resident();
    const double m2 = memory_for_batch(m, w, s, 1, l2).resident();
    if (m2 > m1 && l2 > l1) {
      const double guess = std::floor(l1 + (out.usable_bytes - m1) * (l2 - l1) / (m2 - m1));
      if (guess >= lo && guess < hi) {
        const double at_guess = memory_for_batch(m, w, s, 1, guess).resident();
        if (at_guess <= out.usable_bytes && !fits(guess + 1)) {
          out.seq_len = guess;
          out.bytes_at_max = at_guess;
          return out;
        }
      }
    }
  }
  if (fits(hi)) {
    out.seq_len = hi;
  } else {
    while (hi - lo > 1) {  // invariant: fits(lo), !fits(hi)
      const double mid = std::floor((lo + hi) / 2);
      (fits(mid) ? lo : hi) = mid;
    }
    out.seq_len = lo;
  }
  out.bytes_at_max = memory_for_batch(m, w, s, 1, out.seq_len).resident();
  return out;
}

}  // namespace ftcost
