// Preference and RL objectives (objective.hpp). Sources, with file and function:
// docs/sources/trl-preference.md.
#include "ftcost/objective.hpp"

#include "ftcost/calibration.hpp"
#include "ftcost/memory.hpp"
#include "ftcost/units.hpp"

#include <algorithm>
#include <cmath>

namespace ftcost {

namespace {

double d(std::int64_t x) { return static_cast<double>(x); }

// TRL computes the log-probs of the preference and GRPO losses itself (selective_log_softmax over the model's
// logits), not through the stack's SFT loss; with --liger on it runs Liger's fused losses
// (LigerFusedLinearDPOLoss, LigerFusedLinearGRPOLoss), which never materialise the logits.
bool trl_logps(const Workload& w) { return w.loss_kernel != LossKernel::liger; }

// A frozen reference copy is kept on the GPU: full fine-tuning with a reference pass during training (with
// PEFT the reference is the base model with the adapters disabled: DPOTrainer.__init__ `ref_model = None`
// when is_peft_model(model) or precompute_ref_log_probs; GRPOTrainer.__init__ likewise, or beta == 0).
bool reference_copy(const Workload& w) { return w.method == Method::full && w.objective.reference_pass(); }

// Decode-time vLLM constants [assumed, not fitted]: the profile run's token budget (vLLM V1's
// max_num_batched_tokens for the offline LLM class is 8192 to 16384 by GPU), CUDA graphs and non-torch
// allocations, and the scheduler/sampler time of one decode step with CUDA graphs.
constexpr double kVllmProfileTokens = 8192;
constexpr double kVllmGraphBytes = 0.5 * kGiB;
constexpr double kVllmStepHostS = 1.0e-3;
constexpr double kVllmMaxNumSeqs = 256;  // vLLM's default max_num_seqs (server mode)
// model.generate's own ops per decode step outside the layers (logits processors, sampling, the stopping
// criteria's sync, cache bookkeeping) [assumed].
constexpr double kGenerateOpsPerStep = 40;
// Host time per weight tensor pushed to vLLM (model.load_weights per named parameter) [assumed].
constexpr double kSyncHostSPerTensor = 20e-6;

double vllm_total_bytes(const GpuSpec& g) {
  return g.usable_memory_mib > 0 ? g.usable_memory_mib * kMiB : g.memory_gib * kGiB * 0.975;
}

}  // namespace

double kv_bytes_per_token(const ModelSpec& m, const Workload& w, bool vllm) {
  const double a = w.compute_bytes();
  const double layers = d(m.layers_with(Mixer::attention));
  if (vllm && m.attn.mla) return layers * d(m.attn.kv_lora_rank + m.attn.qk_rope_head_dim) * a;
  return layers * 2.0 * d(m.attn.kv_dim()) * a;
}

ObjectiveMemory objective_memory(const ModelSpec& m, const Workload& w, const StackProfile& s,
                                 double seq_len) {
  ObjectiveMemory o;
  const ObjectiveConfig& c = w.objective;
  if (c.objective == Objective::sft) return o;
  (void)s;
  const double a = w.compute_bytes();
  o.sequences = c.train_sequences();
  if (reference_copy(w)) o.reference_weights = d(m.params().total()) * a;
  if (trl_logps(w)) {
    // The policy's logits (a) and selective_log_softmax's per-row log_softmax outputs, which autograd keeps
    // for backward (a): 2a per token and vocabulary entry (trl/trainer/utils.py selective_log_softmax; GRPO's
    // logits.div_(temperature) is in place).
    o.logits_bytes_per_token = 2.0 * a * d(m.vocab);
    // DPO and KTO run the reference forward inside compute_loss after the policy's: its logits (a per entry)
    // exist beside the policy's graph (DPOTrainer._compute_loss, KTOTrainer._compute_loss). GRPO computes its
    // reference log-probs before training (_generate_and_score_completions), so nothing of it is alive then.
    if (c.preference() && c.reference_pass()) o.reference_logits_per_token = a * d(m.vocab);
  }
  if (c.grpo()) {
    // logits_to_keep: only the completion's tokens get logits
    // (GRPOTrainer._get_per_token_logps_and_entropies).
    o.logits_share = seq_len > 0 ? std::min(1.0, c.completion_len / seq_len) : 1.0;
    if (c.generation == Generation::hf) {
      // model.generate: the DynamicCache of every sequence at its full length, the prefill's largest
      // transient (the MLP's intermediate of the prompt tokens) and the sampler's fp32 probabilities.
      const double prompt = std::max(0.0, seq_len - c.completion_len);
      const double inter = d(std::max(m.mlp.intermediate, m.moe.expert_intermediate));
      o.generation_per_row =
          seq_len * kv_bytes_per_token(m, w, false) + prompt * (3.0 * inter) * a + 2.0 * 4.0 * d(m.vocab);
    }
  }
  return o;
}

double vllm_weight_bytes(const ModelSpec& m, const Workload& w) {
  // vLLM loads the checkpoint in the compute dtype; with QLoRA the bitsandbytes 4-bit one (vLLM's
  // `quantization="bitsandbytes"`, what a pre-quantized -bnb-4bit repo loads as), at the training's 4-bit
  // bytes.
  const double a = w.compute_bytes();
  if (w.method != Method::qlora) return d(m.params().total()) * a;
  const ParamBreakdown p = param_breakdown(m, w);
  return p.quantized * quantized_bytes_per_param(m, w) + (d(m.params().total()) - p.quantized) * a;
}

double vllm_share(const ObjectiveConfig& c) {
  return c.generation == Generation::vllm_server ? kVllmServerMemoryFraction : c.vllm_memory_fraction;
}

VllmMemory vllm_memory(const ModelSpec& m, const Workload& w, const GpuSpec& g, double fraction,
                       double seq_len) {
  VllmMemory v;
  const double a = w.compute_bytes();
  v.pool = vllm_total_bytes(g) * fraction;
  v.weights = vllm_weight_bytes(m, w);
  const double inter = d(std::max(m.mlp.intermediate, m.moe.expert_intermediate));
  v.overhead = kVllmProfileTokens * (4.0 * d(m.hidden) + 3.0 * inter) * a +
               kVllmMaxNumSeqs * 4.0 * d(m.vocab) + kVllmGraphBytes;
  v.kv_cache = v.pool - v.weights - v.overhead;
  const double per_seq = seq_len * kv_bytes_per_token(m, w, true);
  v.max_sequences = v.kv_cache > 0 && per_seq > 0 ? std::floor(v.kv_cache / per_seq) : 0;
  return v;
}

namespace {

// The decode rates: the calibration's streaming bandwidth (else the datasheet's at the stack's share for
// memory-bound GEMMs) and the GEMM peak at the stack's share.
struct DecodeRates {
  double bw = 0, flops = 0;
};
DecodeRates decode_rates(const StackProfile& s, const GpuSpec& g, const Calibration* cal, const Workload& w) {
  DecodeRates r;
  r.bw = g.memory_bandwidth_gbps * 1e9 * s.gemm_memory_efficiency;
  if (cal != nullptr && cal->derived.memory_bandwidth_gbps) r.bw = *cal->derived.memory_bandwidth_gbps * 1e9;
  r.flops = std::max(g.peak_tflops(w.precision), g.fp32_tflops) * 1e12 * s.gemm_efficiency;
  return r;
}

// Experts of one MoE layer that `n` tokens route to at least once (uniform routing: E x (1 - (1 - k/E)^n)).
double experts_touched(const ModelSpec& m, const Workload& w, double n) {
  if (!m.is_moe()) return 0;
  const double E = d(m.moe.experts);
  const double k = d(w.active_experts(m));
  return E * (1.0 - std::pow(1.0 - k / E, std::max(1.0, n)));
}

// Weight bytes one decode step reads for `n` sequences: every dense parameter once, and of each MoE layer's
// experts those the n tokens route to (uniform routing: E x (1 - (1 - k/E)^n)).
double weight_bytes_per_step(const ModelSpec& m, const Workload& w, const StackProfile& s, double n) {
  const double total = d(m.params().total());
  double expert_total = 0;
  double expert_read = 0;
  if (m.is_moe()) {
    const double per_layer = d(m.layers_with(Ffn::moe)) * d(m.expert_params());
    expert_total = d(m.moe.experts) * per_layer;
    expert_read = experts_touched(m, w, n) * per_layer;
  }
  const double params_read = total - expert_total + expert_read;
  const double a = w.compute_bytes();
  if (w.method != Method::qlora) return params_read * a;
  // bitsandbytes' 4-bit layers dequantize each weight for every forward of more than one row
  // (MatMul4Bit: dequantize_4bit, then the GEMM reads the 16-bit copy); vLLM's bitsandbytes layers likewise.
  return params_read * (s.dequant_bytes_per_param + a);
}

// Kernels one decode step of model.generate launches: the layers' modules and generate's own ops.
double generate_ops_per_step(const ModelSpec& m, const StackProfile& s, double experts_touched) {
  const double linears = 7.0 * s.kernels_per_linear;
  double per_layer = 2.0 * s.kernels_per_norm + s.kernels_per_attention_block + linears + 4.0;
  double moe = 0;
  if (m.is_moe())
    moe = d(m.layers_with(Ffn::moe)) *
          (s.kernels_per_router + experts_touched * (3.0 + s.kernels_per_expert_overhead));
  return d(m.layers()) * per_layer + moe + kGenerateOpsPerStep;
}

double host_s_per_op(const StackProfile& s) {
  if (s.ops_inventory == "eager") return (s.python_us_per_op + s.dispatch_us_per_op) * 1e-6;
  return s.host_us_per_kernel * 1e-6;
}

// One decode step of `n` sequences at context `ctx`: device time (the larger of bytes over bandwidth and
// FLOPs over the GEMM rate) and the bytes read.
struct DecodeStep {
  double device_s = 0, bytes = 0;
  bool compute = false;
};
DecodeStep decode_step(const ModelSpec& m, const Workload& w, const StackProfile& s, const DecodeRates& r,
                       double n, double ctx, bool vllm) {
  DecodeStep st;
  const double attn_layers = d(m.layers_with(Mixer::attention));
  st.bytes = weight_bytes_per_step(m, w, s, n) + n * ctx * kv_bytes_per_token(m, w, vllm);
  const double q_dim = d(m.attn.heads * m.attn.head_dim);
  const double flops =
      2.0 * d(m.active_params(w.active_experts(m))) * n + 4.0 * n * ctx * q_dim * attn_layers;
  const double t_bw = st.bytes / r.bw;
  const double t_c = flops / r.flops;
  st.compute = t_c > t_bw;
  st.device_s = std::max(t_bw, t_c);
  return st;
}

// Pushing the policy's weights into vLLM before a generation (VLLMGeneration.sync_weights: with PEFT
// merge_adapter, one load_weights per named parameter, unmerge_adapter): colocated, a device copy of every
// weight (read and write); in server mode, an NCCL broadcast to the server over the GPUs' link.
double weight_sync_s(const ModelSpec& m, const Workload& w, const GpuSpec& g, const DecodeRates& r) {
  const double bytes = d(m.params().total()) * w.compute_bytes();
  const double tensors = d(m.layers()) * (m.is_moe() ? 4.0 + 3.0 * d(m.moe.experts) : 9.0) + 3.0;
  double link_s = 2.0 * bytes / r.bw;
  if (w.objective.generation == Generation::vllm_server) {
    const double nvlink = g.interconnect.nvlink_gbps_bidirectional * 0.5e9;
    link_s = bytes / (nvlink > 0 ? nvlink : host_link_bytes_per_s(g)) * d(w.objective.vllm_gpus);
  }
  return link_s + tensors * kSyncHostSPerTensor;
}

}  // namespace

GenerationTime generation_time(const ModelSpec& m, const Workload& w, const StackProfile& s, const GpuSpec& g,
                               const Calibration* cal, double completions, double prompt_len) {
  GenerationTime t;
  const ObjectiveConfig& c = w.objective;
  const bool vllm = c.generation != Generation::hf;
  const DecodeRates r = decode_rates(s, g, cal, w);
  // Sequences decoded at once on one engine: server mode splits the batch over its GPUs (data parallel); a
  // vLLM engine holds what its KV cache fits (waves when it holds fewer).
  double n = completions;
  if (c.generation == Generation::vllm_server) n = std::ceil(completions / d(c.vllm_gpus));
  if (vllm) {
    const VllmMemory vm = vllm_memory(m, w, g, vllm_share(c), prompt_len + c.completion_len);
    const double cap =
        std::min(vm.max_sequences, c.generation == Generation::vllm_server ? kVllmMaxNumSeqs : n);
    t.waves = cap >= 1 ? std::ceil(n / cap) : 1;
    n = std::min(n, std::max(1.0, cap));
  }
  // Decode steps: a batch decodes until its longest completion ends (the cap without a length distribution).
  const double Lc = w.completion_padded(n);
  // Prefill: the prompts' tokens through every layer, compute-bound.
  const double active = d(m.active_params(w.active_experts(m)));
  const double prefill_flops = 2.0 * active * n * prompt_len;
  t.prefill_s =
      t.waves * std::max(prefill_flops / r.flops, weight_bytes_per_step(m, w, s, n * prompt_len) / r.bw);
  // Decode: Lc steps per wave, the context growing from the prompt; integrated over 8 segments.
  constexpr int kSegments = 8;
  double dev = 0;
  double bytes = 0;
  int compute_steps = 0;
  for (int i = 0; i < kSegments; ++i) {
    const double ctx = prompt_len + Lc * (i + 0.5) / kSegments;
    const DecodeStep st = decode_step(m, w, s, r, n, ctx, vllm);
    dev += st.device_s / kSegments;
    bytes += st.bytes / kSegments;
    compute_steps += st.compute ? 1 : 0;
  }
  double host = kVllmStepHostS;
  if (!vllm) {
    host = generate_ops_per_step(m, s, experts_touched(m, w, n)) * host_s_per_op(s);
  }
  t.device_step_s = dev;
  t.host_step_s = host;
  t.bytes_per_step = bytes;
  t.decode_steps = Lc * t.waves;
  // vLLM's CUDA graphs replay a step with one launch: the host's scheduling overlaps the device but adds; the
  // eager model.generate issues every op and syncs on the stopping criteria each step: the larger of the two.
  const double step = vllm ? dev + host : std::max(dev, host);
  t.decode_s = t.decode_steps * step;
  t.bound = host > dev ? "host" : compute_steps * 2 > kSegments ? "compute" : "bandwidth";
  if (vllm) t.sync_s = weight_sync_s(m, w, g, r);
  t.total_s = t.prefill_s + t.decode_s + t.sync_s;
  return t;
}

namespace {

double forward_s(const StepTime& t) { return t.by_stage[static_cast<std::size_t>(Stage::forward)]; }

// The step over the sequences a batch of `batch` samples trains (two per pair).
StepTime trained_step(const ModelSpec& m, const Workload& w, const StackProfile& s, const GpuSpec& g,
                      const Calibration* cal, std::int64_t batch, double padded_len,
                      const std::vector<double>& shares) {
  const auto seqs = static_cast<std::int64_t>(std::llround(d(batch) * w.objective.train_sequences()));
  return step_model(m, w, s, g, cal, seqs, padded_len, shares);
}

}  // namespace

StepTime objective_step(const ModelSpec& m, const Workload& w, const StackProfile& s, const GpuSpec& g,
                        const Calibration* cal, std::int64_t batch, double padded_len,
                        const std::vector<double>& shares) {
  const ObjectiveConfig& c = w.objective;
  StepTime t = trained_step(m, w, s, g, cal, batch, padded_len, shares);
  if (c.objective == Objective::sft) return t;
  ObjectiveTime& o = t.objective;
  o.train_s = t.total_s;
  const double fwd = forward_s(t);  // a forward of the trained sequences (the loss's logits included)
  switch (c.objective) {
    case Objective::dpo:
      o.reference_s = c.reference_pass() ? fwd : 0.0;
      break;
    case Objective::kto:
      // The KL completions' policy forward (no gradients), and the reference over both completion sets.
      o.policy_forward_s = fwd;
      o.reference_s = c.reference_pass() ? 2.0 * fwd : 0.0;
      break;
    case Objective::grpo: {
      // One generation per steps_per_generation (= gradient_accumulation_steps) x num_iterations
      // micro-batches: GRPOTrainer._prepare_inputs. Its completions: batch x grad-accum on this GPU.
      const double ga = d(std::max<std::int64_t>(1, w.grad_accum));
      const double share = ga * d(c.iterations);
      const double n = d(batch) * ga;
      o.round_completions = n;
      // Reference and old log-probs: forwards over the generation batch in micro-batch chunks
      // (_get_per_token_logps_and_entropies batch_size), so ga forwards of this micro-batch.
      const double ref = c.reference_pass() ? ga * fwd : 0.0;
      // Old log-probs: when a generation serves more than one optimisation pass, or with vLLM's importance
      // sampling correction (vllm_importance_sampling_correction, default True).
      const bool old = c.iterations > 1 || c.generation != Generation::hf;
      const double pol = old ? ga * fwd : 0.0;
      const double prompt = std::max(1.0, padded_len - w.completion_padded(d(batch)));
      o.generation = generation_time(m, w, s, g, cal, n, prompt);
      const double reward = n * c.reward_s;
      o.round_s = o.generation.total_s + ref + pol + reward + share * o.train_s;
      o.generation_s = o.generation.total_s / share;
      o.reference_s = ref / share;
      o.policy_forward_s = pol / share;
      o.reward_s = reward / share;
      break;
    }
    default:
      break;
  }
  t.total_s += o.reference_s + o.policy_forward_s + o.generation_s + o.reward_s;
  return t;
}

double reference_precompute_s(const ModelSpec& m, const Workload& w, const StackProfile& s, const GpuSpec& g,
                              const Calibration* cal, std::int64_t batch, double padded_len,
                              const std::vector<double>& shares, double rows) {
  const ObjectiveConfig& c = w.objective;
  if (!c.precompute_ref || (c.objective != Objective::dpo && c.objective != Objective::kto) || batch <= 0)
    return 0;
  const StepTime t = trained_step(m, w, s, g, cal, batch, padded_len, shares);
  const double per_batch = forward_s(t) * (c.objective == Objective::kto ? 2.0 : 1.0);
  return per_batch * rows / d(batch);
}

}  // namespace ftcost
