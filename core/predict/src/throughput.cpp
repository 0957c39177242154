#include "ftcost/throughput.hpp"

#include "ftcost/calibration.hpp"
#include "ftcost/memory.hpp"
#include "ftcost/model_constants.hpp"
#include "ftcost/ops.hpp"
#include "step_rates.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace ftcost {

using step_detail::Rates;

namespace {

double d(std::int64_t v) { return static_cast<double>(v); }

// Mean number of keys a query attends under a causal mask over sequences of `span` tokens, each query
// seeing at most `window` keys (window <= span): query i sees min(i, window), so the sum over a sequence is
// window(window+1)/2 + (span-window)·window. Without a window that is (span+1)/2: half the L x L scores.
double causal_mean_keys(double span, double window) {
  if (span <= 0) return 0;
  return (window * (window + 1) / 2 + (span - window) * window) / span;
}

class Builder {
 public:
  Builder(const ModelSpec& m, const Workload& w, const StackProfile& s, const Rates& r, std::int64_t batch,
          double len, const std::vector<double>& shares)
      : m_(m), w_(w), s_(s), r_(r), N_(d(batch) * len), L_(len), shares_(shares) {
    a_ = w.compute_bytes();
    qlora_ = w.method == Method::qlora;
    full_ = w.method == Method::full;
    fp8_ = full_ && w.fp8 != "off" && r.fp8_peak > 0;
    te_ = fp8_ && w.fp8_te();
    own_code_ = m.own_training_code;
    lora_ = !full_;
    r_lora_ = lora_ ? d(w.lora_rank) : 0;
    // PEFT's cast of x for fp32 adapters (peft_casts_lora_input): x.to(fp32), then autocast's cast back to
    // the compute dtype for the matmul; in backward both casts again on the gradient of x. Dropout then
    // works on the fp32 copy.
    const bool cast = peft_casts_lora_input(s, w);
    drop_bytes_ = cast ? s.trainable_param_bytes : a_;
    cast_bytes_ = cast ? 2 * (a_ + s.trainable_param_bytes) : 0;
    dora_ = lora_ && w.lora_variant == LoraVariant::dora;
    fa_ = lora_ && w.lora_variant == LoraVariant::lora_fa;
    if (dora_) dora_t_ = dora_dtypes(s, w);
    floor_s_ = s.kernel_floor_us * 1e-6;
    if (r.cal != nullptr && r.cal->derived.launch_overhead_us)
      floor_s_ = *r.cal->derived.launch_overhead_us * 1e-6;
    init_eager();
    // Identical layer types are summed: time is additive over layers (their order does not matter). A
    // (mixer, ffn) pair is one of kLayerKinds, in the order of first appearance.
    for (const auto& g : m.groups) {
      auto* end = kinds_.begin() + n_kinds_;
      auto* it = std::find_if(kinds_.begin(), end,
                              [&](const LayerGroup& k) { return k.mixer == g.mixer && k.ffn == g.ffn; });
      if (it != end)
        it->count += g.count;
      else
        kinds_[n_kinds_++] = g;
    }
  }

  StepTime run() {
    ops_.reserve(256);
    for (Stage st : {Stage::forward, Stage::recompute, Stage::backward}) {
      if (st == Stage::recompute && !w_.checkpointing) continue;
      pass(st);
    }
    optimizer();
    StepTime t;
    t.model = "step-model";
    for (const auto& op : ops_) {
      t.by_layer[static_cast<int>(op.layer)] += op.gpu_s;
      t.by_class[static_cast<int>(op.kclass)] += op.gpu_s;
      t.gpu_s += op.gpu_s;
      t.flops += op.flops;
      t.bytes += op.bytes;
      t.kernels += op.kernels;
    }
    for (int i = 0; i < kStages; ++i) {
      t.by_stage[static_cast<std::size_t>(i)] = stage_wall_[i];
      t.host_issue_by_stage[static_cast<std::size_t>(i)] = host_issue_[i];
    }
    t.total_s = 0;
    for (double v : stage_wall_) t.total_s += v;
    t.host_s = std::max(0.0, t.total_s - t.gpu_s);
    t.ops = std::move(ops_);
    return t;
  }

 private:
  const ModelSpec& m_;
  const Workload& w_;
  const StackProfile& s_;
  const Rates& r_;
  double N_, L_;
  const std::vector<double>& shares_;
  double a_ = 2;
  bool qlora_ = false, full_ = false, lora_ = false;
  bool fp8_ = false;       // FP8 linears (--fp8: torchao float8 or Transformer Engine)
  bool te_ = false;        // Transformer Engine te.Linear (--fp8 te-delayed / te-current)
  bool own_code_ = false;  // BlackMamba / mamba_ssm training code, not transformers modules
  double r_lora_ = 0;
  double drop_bytes_ = 2;  // element size lora_dropout works on: x cast to the adapters' dtype
  double cast_bytes_ = 0;  // bytes per adapted input element of PEFT's two casts of x (0: no cast)
  bool dora_ = false;      // --lora-variant dora
  bool fa_ = false;        // --lora-variant lora-fa: lora_A frozen, no dA
  DoraDtypes dora_t_;
  std::vector<Op> ops_;
  // The model's layer groups with identical (mixer, ffn) summed: at most one per pair.
  static constexpr std::size_t kLayerKinds = 9;  // Mixer {attention, mamba, none} x Ffn {mlp, moe, none}
  std::array<LayerGroup, kLayerKinds> kinds_{};
  std::size_t n_kinds_ = 0;
  double stage_wall_[kStages] = {0, 0, 0, 0};
  double host_issue_[kStages] = {0, 0, 0, 0};
  // segment accumulators (between host syncs)
  double seg_gpu_ = 0, seg_host_ = 0;
  double expert_kernel_scale_ = 1;
  double floor_s_ = 0;  // grouped GEMM: one launch per projection for all experts

  // Ops with the same stage, layer type, kernel class and name are summed as they come (a step has a few
  // dozen distinct ones but emits hundreds: one per expert, layer kind and projection).
  static constexpr int kBuckets = kStages * kLayerTypes * kKernelClasses;
  static constexpr int kPerBucket = 12;
  std::array<std::array<std::int16_t, kPerBucket>, kBuckets> index_{};
  std::array<std::uint8_t, kBuckets> used_{};
  void merge(const Op& op) {
    const int b = (static_cast<int>(op.stage) * kLayerTypes + static_cast<int>(op.layer)) * kKernelClasses +
                  static_cast<int>(op.kclass);
    auto& slots = index_[static_cast<std::size_t>(b)];
    auto& n = used_[static_cast<std::size_t>(b)];
    // Names are string literals: the same pointer is the same name, and equal text under another pointer
    // (a literal of another translation unit) is the same name too. A bucket holds each name once, so one
    // pass with either test finds the slot; the first character screens the text comparison.
    int found = -1;
    for (int i = 0; i < n && found < 0; ++i) {
      const char* name = ops_[static_cast<std::size_t>(slots[static_cast<std::size_t>(i)])].name;
      if (name == op.name || (name[0] == op.name[0] && std::strcmp(name, op.name) == 0)) found = i;
    }
    if (found >= 0) {
      Op& o = ops_[static_cast<std::size_t>(slots[static_cast<std::size_t>(found)])];
      o.flops += op.flops;
      o.bytes += op.bytes;
      o.kernels += op.kernels;
      o.gpu_s += op.gpu_s;
      o.compute_bound = o.compute_bound || op.compute_bound;
      return;
    }
    if (n < kPerBucket) slots[n++] = static_cast<std::int16_t>(ops_.size());
    ops_.push_back(op);
  }

  double host_per_kernel(Stage st) const {
    if (eager_) return st == Stage::backward ? dispatch_s_ : dispatch_s_ + python_s_;
    return s_.host_us_per_kernel * 1e-6 * (st == Stage::backward ? s_.backward_host_factor : 1.0);
  }

  // ---- the eager op inventory (ops.hpp) ----
  bool eager_ = false;
  double dispatch_s_ = 0;  // host: dispatcher + launch per op (backward: all the host does per op)
  double python_s_ = 0;    // host: Python per op of the forward, recompute and optimizer
  FusedOps fused_;
  double lora_modules_ = 0;  // adapted modules (2 trainable tensors each), counted in the forward
  double lora_params_ = 0;   // their parameters
  void init_eager() {
    eager_ = s_.ops_inventory == "eager";
    if (!eager_) return;
    // The calibration's host_op_overhead_us is not read: its compact form (calibration_share) does not keep
    // the host rows, and an estimate from a shared link must equal the file's.
    dispatch_s_ = s_.dispatch_us_per_op * 1e-6;
    python_s_ = s_.python_us_per_op * 1e-6;
    for (const auto& g : s_.ops_fused) {
      fused_.rmsnorm = fused_.rmsnorm || g == "rmsnorm";
      fused_.rope = fused_.rope || g == "rope";
      fused_.swiglu = fused_.swiglu || g == "swiglu";
      fused_.residual = fused_.residual || g == "residual";
    }
    // Liger (use_liger_kernel) patches RMSNorm, RoPE and SwiGLU besides the loss
    // (liger_kernel/transformers/monkey_patch.py apply_liger_kernel_to_llama defaults).
    if (w_.loss_kernel == LossKernel::liger) fused_.rmsnorm = fused_.rope = fused_.swiglu = true;
  }
  OpContext ctx(Stage st) const {
    OpContext c;
    c.a = a_;
    c.backward = st == Stage::backward;
    c.weight_grad = full_;
    c.fused = fused_;
    return c;
  }
  static KernelClass class_of(OpKind k) {
    if (k == OpKind::cross_entropy) return KernelClass::loss;
    if (k == OpKind::optimizer) return KernelClass::optimizer;
    return KernelClass::elementwise;
  }
  // Each op of `ops` (already scaled to its elements) `reps` times: bytes at its class's bandwidth plus one
  // launch latency per kernel (the calibration's elementwise rows fit bytes / bandwidth + launch overhead).
  // `elements`: the ops' basis (their counts are per element).
  void emit(const OpList& ops, double elements, Stage st, LayerType l, double reps) {
    for (const auto& o : ops) {
      const double bytes = o.bytes * elements;
      add(o.name, st, l, class_of(o.kind), o.flops * elements, bytes, o.kernels,
          bytes / r_.op_bw(o.kind) + o.kernels * floor_s_, false, reps);
    }
  }
  void flush(Stage st) {
    // host_device_overlap 1: the device runs while the host launches (async); 0: they alternate (an eager
    // loop with a host sync per expert drains the queue, so launch time adds to device time).
    const double ov = s_.host_device_overlap;
    host_issue_[static_cast<int>(st)] += seg_host_;
    stage_wall_[static_cast<int>(st)] +=
        ov * std::max(seg_gpu_, seg_host_) + (1 - ov) * (seg_gpu_ + seg_host_);
    seg_gpu_ = seg_host_ = 0;
  }
  void add(const char* name, Stage st, LayerType l, KernelClass k, double flops, double bytes, double kernels,
           double gpu_s, bool compute_bound, double reps) {
    Op op;
    op.name = name;
    op.stage = st;
    op.layer = l;
    op.kclass = k;
    op.flops = flops * reps;
    op.bytes = bytes * reps;
    op.kernels = kernels * reps * (k == KernelClass::expert_gemm ? expert_kernel_scale_ : 1.0);
    // every launched kernel occupies the device for at least the floor (launch latency, tail effects)
    op.gpu_s = std::max(gpu_s, kernels * floor_s_) * reps;
    op.compute_bound = compute_bound;
    seg_gpu_ += op.gpu_s;
    seg_host_ += op.kernels * host_per_kernel(st);
    merge(op);
  }
  // A GEMM [M x K] @ [K x N]; bytes read/written at 16-bit.
  // torchao float8 (pytorch/ao @ 36027d82d torchao/float8/float8_linear.py matmul_with_hp_or_float8_args):
  // the GEMM on e4m3/e5m2 operands (1 B) with a bf16 output, and the casts hp_tensor_to_float8_dynamic makes
  // around it: the input and the weight in the forward; grad_output twice (dim0 for dX, dim1 for dW), the
  // weight and the input again in the backward (it saved the high-precision input and weight, not FP8 ones).
  // Each dynamic cast reads the tensor for its amax, then reads it again and writes 1 B per element: 5 B per
  // bf16 element in two kernels (eager; torch.compile fuses them, not modelled).
  void gemm_fp8(const char* name, Stage st, LayerType l, KernelClass k, double M, double N, double K,
                double reps, double kernels) {
    if (M <= 0 || N <= 0 || K <= 0 || reps <= 0) return;
    const double flops = 2 * M * N * K;
    const double bytes = M * K + K * N + 2.0 * M * N;
    const double tc = flops / r_.gemm_compute_rate_fp8(M, N, K);
    const double tm = bytes / r_.stream_bw(r_.eta_gm);
    add(name, st, l, k, flops, bytes, kernels, std::max(tc, tm), tc >= tm, reps);
  }
  void fp8_casts(Stage st, LayerType l, double M, double in, double out, double reps) {
    const bool bwd = st == Stage::backward;
    const double elems = bwd ? 2 * M * out + in * out + M * in : M * in + in * out;
    stream("fp8_cast", st, l, KernelClass::elementwise, 5.0 * elems, bwd ? 8 : 4, reps);
  }
  // Transformer Engine's casts around a te.Linear (transformer_engine/pytorch/module/linear.py @ d0067d0,
  // 2.20.0.dev0): the forward quantizes the input and the weight (update_workspace every forward: accelerate
  // passes no is_first_microbatch), each with row- and column-wise usage in one fused cast-transpose kernel;
  // the backward quantizes grad_output the same way and reuses the saved FP8 input and weight. Per element:
  // the bf16 read plus 1 B per usage written (2 usages on TN-only GPUs, one buffer on Blackwell); current
  // scaling first reads the tensor for its amax (Float8CurrentScalingQuantizer: amax, scale, cast kernels).
  // `inputs`: the te.Linear modules this linear stands for (gate and up modelled as one: each quantizes x).
  void te_casts(Stage st, LayerType l, double M, double in, double out, double reps, double inputs) {
    const bool current = w_.fp8 == "te-current";
    const double per_elem = a_ + (w_.fp8_te_transpose ? 2.0 : 1.0) + (current ? a_ : 0.0);
    const double kernels_per_tensor = current ? 3.0 : 1.0;
    const bool bwd = st == Stage::backward;
    const double elems = bwd ? M * out : inputs * M * in + in * out;
    stream("fp8_cast", st, l, KernelClass::elementwise, per_elem * elems,
           kernels_per_tensor * (bwd ? inputs : 2 * inputs), reps);
  }
  void gemm(const char* name, Stage st, LayerType l, KernelClass k, double M, double N, double K, double reps,
            double kernels = 1) {
    if (M <= 0 || N <= 0 || K <= 0 || reps <= 0) return;
    const GemmTimes& g = gemm_times(M, N, K);
    add(name, st, l, k, g.flops, g.bytes, kernels, std::max(g.tc, g.tm), g.tc >= g.tm, reps);
  }
  // A GEMM's FLOPs, bytes and compute / memory times depend only on (M, N, K) within one step (the rates are
  // fixed for the step), and a step repeats shapes: every expert of an eager expert loop, equal projections.
  // So they are computed once per shape (a direct-mapped cache on the shape; a miss computes them).
  struct GemmTimes {
    double M = -1, N = -1, K = -1;
    double flops = 0, bytes = 0, tc = 0, tm = 0;
  };
  static constexpr std::size_t kGemmCacheBits = 6;
  std::array<GemmTimes, std::size_t{1} << kGemmCacheBits> gemm_cache_{};
  static std::uint64_t bits_of(double v) {
    std::uint64_t u = 0;
    std::memcpy(&u, &v, sizeof u);
    return u;
  }
  const GemmTimes& gemm_times(double M, double N, double K) {
    const std::uint64_t h = (bits_of(M) * 0x9E3779B97F4A7C15ULL) ^ (bits_of(N) * 0xC2B2AE3D27D4EB4FULL) ^
                            (bits_of(K) * 0x165667B19E3779F9ULL);
    GemmTimes& g = gemm_cache_[static_cast<std::size_t>(h >> (64 - kGemmCacheBits))];
    if (g.M == M && g.N == N && g.K == K) return g;
    g.M = M;
    g.N = N;
    g.K = K;
    g.flops = 2 * M * N * K;
    g.bytes = 2.0 * (M * K + K * N + M * N);
    g.tc = g.flops / r_.gemm_compute_rate(M, N, K);
    g.tm = g.bytes / r_.stream_bw(r_.eta_gm);
    return g;
  }
  void stream(const char* name, Stage st, LayerType l, KernelClass k, double bytes, double kernels,
              double reps, double flops = 0) {
    if (reps <= 0) return;
    add(name, st, l, k, flops, bytes, kernels, bytes / r_.stream_bw(r_.eta_m), false, reps);
  }
  void dequant(const char* name, Stage st, LayerType l, double params, double reps) {
    if (!qlora_ || reps <= 0) return;
    const double bytes =
        params * s_.dequant_bytes_per_param * (w_.quant == Quant::int8 ? constants::kInt8DequantBytes : 1.0);
    add(name, st, l, KernelClass::dequant, 0, bytes, s_.kernels_per_quantized_linear_extra,
        bytes / r_.dequant_bw(), false, reps);
  }

  // A linear layer in FP8 (--fp8), its casts and its three GEMMs; false when this linear stays in the compute
  // dtype. torchao converts the decoder's nn.Linear layers; the router and lm_head stay in the compute dtype
  // (torchtitan's float8 converter filters "output"; a router's few outputs fail the divisible-by-16 rule).
  // Transformer Engine through accelerate's convert_model: every nn.Linear whose dimensions are multiples
  // of 16 (utils/transformer_engine.py), lm_head included where the model's forward calls it (a chunked or
  // fused loss multiplies by lm_head.weight itself: TRL's chunked_nll, Liger).
  bool fp8_linear(const char* name, Stage st, LayerType l, KernelClass k, double M, double in, double out,
                  double reps, double base_kernels, double lora_inputs) {
    if (!fp8_) return false;
    const bool lm_head = std::strncmp(name, "lm_head", 7) == 0;
    if (te_) {
      if (std::fmod(in, 16.0) != 0 || std::fmod(out, 16.0) != 0) return false;
      if (lm_head && effective_loss_path(s_, w_) != "full") return false;
      te_casts(st, l, M, in, out, reps, m_.fused_gate_up ? 1.0 : lora_inputs);
    } else {
      if (k == KernelClass::routing || lm_head) return false;
      fp8_casts(st, l, M, in, out, reps);
    }
    if (st != Stage::backward) {
      gemm_fp8(name, st, l, k, M, out, in, reps, base_kernels);
    } else {
      gemm_fp8(name, st, l, k, M, in, out, reps, base_kernels);
      gemm_fp8(name, st, l, k, out, in, M, reps, base_kernels);
    }
    return true;
  }

  // A linear layer applied to M tokens (in -> out), its QLoRA dequantization, LoRA adapter and backward.
  // lora_inputs: PEFT modules this linear stands for (2 for a gate/up pair modelled as one H -> 2F
  // linear): each has its own lora_dropout.
  void linear(const char* name, Stage st, LayerType l, KernelClass k, double M, double in, double out,
              double reps, bool lora_here, bool quantized = true, double lora_inputs = 1.0) {
    const bool bwd = st == Stage::backward;
    // the eager inventory launches a gate/up pair modelled as one linear as its two GEMMs
    const double base_kernels = s_.kernels_per_linear * (eager_ && !m_.fused_gate_up ? lora_inputs : 1.0);
    if (quantized) dequant(name, st, l, in * out, reps);
    if (fp8_linear(name, st, l, k, M, in, out, reps, base_kernels, lora_inputs)) return;
    if (!bwd) {
      gemm(name, st, l, k, M, out, in, reps, base_kernels);
    } else {
      gemm(name, st, l, k, M, in, out, reps, base_kernels);             // dX = dY W
      if (full_) gemm(name, st, l, k, out, in, M, reps, base_kernels);  // dW = dY^T X
    }
    if (dora_ && lora_here && r_lora_ > 0) dora_module(st, l, M, in, out, reps, lora_inputs, quantized);
    if (lora_ && lora_here && r_lora_ > 0 && eager_) {
      lora_eager(st, l, M, in, out, reps, lora_inputs);
    } else if (lora_ && lora_here && r_lora_ > 0) {
      const double r = r_lora_;
      if (!bwd) {
        gemm("lora", st, l, KernelClass::gemm, M, r, in, reps, 1);
        gemm("lora", st, l, KernelClass::gemm, M, out, r, reps, 1);
        stream("lora", st, l, KernelClass::elementwise, 3 * a_ * M * out, s_.kernels_per_lora_module - 2,
               reps);
        if (cast_bytes_ > 0)
          stream("lora_cast", st, l, KernelClass::elementwise, lora_inputs * cast_bytes_ * M * in,
                 2 * lora_inputs, reps);
        // lora_dropout > 0: native_dropout reads x, writes the dropped copy and a bool mask (on the fp32 copy
        // of x PEFT makes for fp32 adapters)
        if (w_.lora_dropout > 0)
          stream("lora_dropout", st, l, KernelClass::elementwise,
                 lora_inputs * (2 * drop_bytes_ + 1) * M * in, lora_inputs, reps);
      } else {
        gemm("lora", st, l, KernelClass::gemm, M, r, out, reps, 1);           // dH = dY B
        gemm("lora", st, l, KernelClass::gemm, r, out, M, reps, 1);           // dB
        gemm("lora", st, l, KernelClass::gemm, M, in, r, reps, 1);            // dX += dH A
        if (!fa_) gemm("lora", st, l, KernelClass::gemm, r, in, M, reps, 1);  // dA
        stream("lora", st, l, KernelClass::elementwise, 2 * a_ * M * out, 2, reps);
        if (cast_bytes_ > 0)  // the gradient of x through both casts
          stream("lora_cast", st, l, KernelClass::elementwise, lora_inputs * cast_bytes_ * M * in,
                 2 * lora_inputs, reps);
        // dropout backward: reads the gradient and the mask, writes the input gradient
        if (w_.lora_dropout > 0)
          stream("lora_dropout", st, l, KernelClass::elementwise,
                 lora_inputs * (2 * drop_bytes_ + 1) * M * in, lora_inputs, reps);
      }
    }
  }

  // DoRA's work beyond LoRA for `inputs` adapted modules modelled as one linear (in -> out): in forward and
  // recompute the weight norm (get_lora_weight's two GEMMs through torch.eye(in), QLoRA's dequantization,
  // the ops of dora_ops), every pass the magnitude products; with lora_dropout the base layer once more on
  // the dropped input (variants.py DoraLinearVariant.forward: base_result = None).
  void dora_module(Stage st, LayerType l, double M, double in, double out, double reps, double inputs,
                   bool quantized) {
    const bool bwd = st == Stage::backward;
    const DoraOps o = dora_ops(ctx(st), dora_t_.tb, dora_t_.xd, dora_t_.copy_from);
    if (!bwd) {
      gemm("dora_norm", st, l, KernelClass::gemm, in, r_lora_, in, reps * inputs);
      gemm("dora_norm", st, l, KernelClass::gemm, in, out / inputs, r_lora_, reps * inputs);
      if (quantized) dequant("dora_dequant", st, l, in * out, reps);
      emit(o.per_eye, in * in, st, l, reps * inputs);
      emit(o.per_weight, in * out, st, l, reps);
    }
    emit(o.per_out, M * out, st, l, reps);
    if (w_.lora_dropout > 0)
      gemm("dora_base", st, l, KernelClass::gemm, M, bwd ? in : out, bwd ? out : in, reps);
  }

  // One PEFT adapter (or `inputs` of them modelled as one linear): its small GEMMs (two forward, four
  // backward, summed into one op) and the glue of lora_glue_ops; in backward its input's gradient is summed
  // with the base layer's (one more consumer of x).
  void lora_eager(Stage st, LayerType l, double M, double in, double out, double reps, double inputs) {
    const double r = r_lora_;
    const double o = out / inputs;
    const double n = reps * inputs;
    LoraGemms sum;
    if (st == Stage::forward) {
      lora_modules_ += n;
      lora_params_ += n * r * (in + o);
    }
    if (st != Stage::backward) {
      sum.add(*this, M, r, in);
      sum.add(*this, M, o, r);
    } else {
      sum.add(*this, M, r, o);             // dH = dY B
      sum.add(*this, r, o, M);             // dB
      sum.add(*this, M, in, r);            // dX = dH A
      if (!fa_) sum.add(*this, r, in, M);  // dA
      emit(grad_accumulate_ops(ctx(st)), M * in, st, l, n);
    }
    add("lora", st, l, KernelClass::gemm, sum.flops, sum.bytes, sum.kernels, sum.time, sum.compute_bound, n);
    const LoraGlue g = lora_glue_ops(ctx(st), cast_bytes_ > 0, w_.lora_dropout > 0 ? drop_bytes_ : 0,
                                     s_.trainable_param_bytes > a_);
    emit(g.per_in, M * in, st, l, n);
    // the adapter weights' casts (tiny tensors) launch with the scaling and the add
    OpList per_out = g.per_out;
    per_out.v[0].kernels += g.fixed_kernels;
    emit(per_out, M * o, st, l, n);
  }
  // The LoRA GEMMs of one adapter and stage. With a calibration that measured LoRA shapes, each takes its
  // roofline (FLOPs at the measured peak, bytes at the measured bandwidth) over the measured fraction of it;
  // otherwise it is a GEMM like any other. Each is at least one launch latency.
  struct LoraGemms {
    double flops = 0, bytes = 0, kernels = 0, time = 0;
    bool compute_bound = false;
    void add(Builder& b, double M, double N, double K) {
      const GemmTimes& g = b.gemm_times(M, N, K);
      double t = std::max(g.tc, g.tm);
      const Calibration* cal = b.r_.cal;
      if (cal != nullptr && cal->derived.lora_gemm_roofline_fraction) {
        const double peak = b.r_.gemm_peak();
        t = std::max(g.flops / peak, g.bytes / b.r_.stream_bw(b.r_.eta_m)) /
            *cal->derived.lora_gemm_roofline_fraction;
      }
      flops += g.flops;
      bytes += g.bytes;
      kernels += 1;
      time += std::max(t, b.floor_s_);
      compute_bound = compute_bound || g.tc >= g.tm;
    }
  };

  // RMSNorm over `width` features per token in `modules` norm modules (default: the hidden state, one).
  void norm(Stage st, double reps, double width = 0, double modules = 1) {
    const double W = width > 0 ? width : d(m_.hidden);
    if (eager_) {
      emit(norm_ops(ctx(st)), N_ * W / modules, st, LayerType::norm, reps * modules);
      return;
    }
    const double f = st == Stage::backward ? 2.0 : 1.0;
    stream("norm", st, LayerType::norm, KernelClass::elementwise, f * N_ * W * (2 * a_ + 4),
           modules * (own_code_ ? s_.own_code_kernels_per_norm : s_.kernels_per_norm), reps);
  }

  void attention_block(Stage st, double reps) {
    const AttentionSpec& at = m_.attn;
    const double H = d(m_.hidden);
    const LoraTargets& t = w_.lora_targets;
    const bool bwd = st == Stage::backward;
    norm(st, reps);
    if (at.mla) {
      const double qk = d(at.qk_nope_head_dim + at.qk_rope_head_dim);
      if (at.q_lora_rank > 0) {
        linear("q_proj", st, LayerType::attention, KernelClass::gemm, N_, H, d(at.q_lora_rank), reps, t.q);
        linear("q_proj", st, LayerType::attention, KernelClass::gemm, N_, d(at.q_lora_rank), d(at.heads) * qk,
               reps, t.q);
      } else {
        linear("q_proj", st, LayerType::attention, KernelClass::gemm, N_, H, d(at.heads) * qk, reps, t.q);
      }
      linear("kv_a_proj", st, LayerType::attention, KernelClass::gemm, N_, H,
             d(at.kv_lora_rank + at.qk_rope_head_dim), reps, t.k);
      linear("kv_b_proj", st, LayerType::attention, KernelClass::gemm, N_, d(at.kv_lora_rank),
             d(at.heads * (at.qk_nope_head_dim + at.v_head_dim)), reps, t.v);
      linear("o_proj", st, LayerType::attention, KernelClass::gemm, N_, d(at.v_dim()), H, reps, t.o);
    } else {
      linear("q_proj", st, LayerType::attention, KernelClass::gemm, N_, H, d(at.q_dim()), reps, t.q);
      linear("k_proj", st, LayerType::attention, KernelClass::gemm, N_, H, d(at.kv_dim()), reps, t.k);
      linear("v_proj", st, LayerType::attention, KernelClass::gemm, N_, H, d(at.kv_dim()), reps, t.v);
      linear("o_proj", st, LayerType::attention, KernelClass::gemm, N_, d(at.q_dim()), H, reps, t.o);
    }
    // Qwen3 / OLMoE q_norm and k_norm: two more RMSNorm modules on the q and k projections before rotary
    // (transformers models/qwen3/modeling_qwen3.py Qwen3Attention.forward, Qwen3RMSNorm), per head or over
    // the full width: the same elements either way.
    if (at.qk_norm) norm(st, reps, d(at.q_dim() + at.kv_dim()), 2);
    // rotary + residual adds
    if (eager_)
      attention_glue(st, reps);
    else
      stream("rotary_residual", st, LayerType::attention, KernelClass::elementwise,
             (bwd ? 2.0 : 1.0) * a_ * N_ * (3 * d(at.q_dim() + at.kv_dim()) + 3 * H),
             s_.kernels_per_attention_block - 2, reps);
    // the attention kernel itself: layers with the sliding window (layer_types) and layers without
    const double span = w_.attention_len(L_);  // packing with document masking: the document length
    if (at.sliding_window > 0) {
      const double sliding = reps * at.sliding_fraction;
      attention_kernel(st, std::min(span, d(at.sliding_window)), span, sliding);
      attention_kernel(st, span, span, reps - sliding);
    } else {
      attention_kernel(st, span, span, reps);
    }
  }

  // The eager kernels of an attention block besides its GEMMs and the attention kernel: RoPE on q and k, the
  // output's transpose copy, the residual add; in backward the gradient sums of the block input (read by
  // q, k, v and the residual; an MLA block reads it twice) and of the shared normed input.
  void attention_glue(Stage st, double reps) {
    const AttentionSpec& at = m_.attn;
    const double H = d(m_.hidden);
    const OpContext c = ctx(st);
    const double rope_dims = at.mla ? d(at.heads + 1) * d(at.qk_rope_head_dim) : d(at.q_dim() + at.kv_dim());
    emit(rope_ops(c), N_ * rope_dims, st, LayerType::attention, reps);
    emit(attention_output_ops(c), N_ * d(at.v_dim()), st, LayerType::attention, reps);
    emit(residual_ops(c), N_ * H, st, LayerType::attention, reps);
    if (st == Stage::backward)
      emit(grad_accumulate_ops(c), N_ * H, st, LayerType::attention, reps * (at.mla ? 1.0 : 2.0));
  }

  // One attention kernel per layer over causal spans of `span` tokens, each query attending at most
  // `window` keys.
  void attention_kernel(Stage st, double window, double span, double reps) {
    if (reps <= 0) return;
    const AttentionSpec& at = m_.attn;
    // QK^T and PV, 2 FLOPs per multiply-add over the keys each query attends: a causal kernel skips the
    // masked blocks, so that is the causal mean, not the span.
    double flops = 2.0 * N_ * causal_mean_keys(span, window) * (d(at.q_dim()) + d(at.v_dim()));
    double bytes = a_ * N_ * (2 * d(at.q_dim()) + 2 * d(at.kv_dim()));
    // Unsloth's xformers path copies K and V to q's width under autograd (the recompute, or the forward
    // without checkpointing; a checkpointed forward runs without gradients and keeps views), and the
    // backward sums the copies' gradients over the query groups. The kernel then reads the copies; its rate
    // is flash's (xformers dispatches to its FlashAttention-2 operator on sm80+).
    if (xformers_repeats_kv() && (st != Stage::forward || !w_.checkpointing)) {
      bytes = a_ * N_ * 4 * d(at.q_dim());
      stream("gqa_kv_repeat", st, LayerType::attention, KernelClass::elementwise,
             a_ * N_ * 2 * (d(at.q_dim()) + d(at.kv_dim())), 2, reps);
    }
    if (w_.attention == Attention::eager) {
      // the full L x L scores are computed and masked afterwards, whatever the window or documents
      flops = 2.0 * N_ * L_ * (d(at.q_dim()) + d(at.v_dim()));
      bytes += N_ * d(at.heads) * L_ *
               (4 + 4 + a_ + a_ + 4);  // scores fp32, softmax r/w, 16-bit probs, read for PV
    }
    if (st == Stage::backward) {
      flops *= constants::kAttentionBackwardFactor;
      bytes *= constants::kAttentionBackwardFactor;
    }
    const double measured = r_.attention_rate(st == Stage::backward);
    const double rate =
        measured > 0 && w_.attention != Attention::eager
            ? measured
            : r_.gemm_compute_rate(N_, d(at.q_dim()), window) * s_.attention_efficiency_factor;
    const double tc = flops / rate;
    const double tm = bytes / r_.stream_bw(r_.eta_m);
    const bool eager = w_.attention == Attention::eager;
    add(eager                                 ? "eager_attention"
        : w_.attention == Attention::xformers ? "xformers_attention"
                                              : "flash_attention",
        st, LayerType::attention, KernelClass::attention, flops, bytes, eager ? 6 : 2, std::max(tc, tm),
        tc >= tm, reps);
  }

  // Unsloth's xformers path repeats grouped-query K and V to every query head under autograd
  // (unsloth/models/llama.py LlamaAttention_fast_forward; unsloth @ 6181fb71).
  bool xformers_repeats_kv() const {
    const AttentionSpec& at = m_.attn;
    return w_.attention == Attention::xformers && at.kv_heads < at.heads && !at.mla;
  }

  void mlp_block(Stage st, double reps) {
    const double H = d(m_.hidden);
    const double F = d(m_.mlp.intermediate);
    const LoraTargets& t = w_.lora_targets;
    const bool gu = t.mlp || t.mlp_gate_up;
    const bool dn = t.mlp || t.mlp_down;
    norm(st, reps);
    const double up = (m_.mlp.gated ? 2.0 : 1.0);
    linear("mlp_up", st, LayerType::mlp, KernelClass::gemm, N_, H, F * up, reps, gu, true, up);
    linear("mlp_down", st, LayerType::mlp, KernelClass::gemm, N_, F, H, reps, dn);
    if (st == Stage::backward && w_.tiled_mlp != 0) tiled_mlp_rerun(reps);
    if (eager_) {
      const OpContext c = ctx(st);
      emit(mlp_act_ops(c, m_.mlp.gated), N_ * F, st, LayerType::mlp, reps);
      emit(residual_ops(c), N_ * H, st, LayerType::mlp, reps);
      // the normed input feeds gate and up (one fused gate_up linear: one reader)
      if (st == Stage::backward && m_.mlp.gated && !m_.fused_gate_up)
        emit(grad_accumulate_ops(c), N_ * H, st, LayerType::mlp, reps);
      return;
    }
    stream("mlp_act", st, LayerType::mlp, KernelClass::elementwise,
           (st == Stage::backward ? 2.0 : 1.0) * a_ * N_ * F * 4, 3, reps);
  }

  // ALST's TiledMLP (--tiled-mlp; DeepSpeed runtime/sequence_parallel/ulysses_sp.py TiledMLP.backward @
  // 5db0c450: "this module re-computes `forward` in the `backward`"): each shard's MLP forward runs once more
  // with gradients inside the backward, on top of checkpointing's recompute. Its GEMMs and activation, in
  // the backward stage; the adapters' and dequantization's share of the re-run is left out (ALST trains in
  // full).
  void tiled_mlp_rerun(double reps) {
    const double H = d(m_.hidden);
    const double F = d(m_.mlp.intermediate);
    const double up = (m_.mlp.gated ? 2.0 : 1.0);
    gemm("mlp_up_rerun", Stage::backward, LayerType::mlp, KernelClass::gemm, N_, F * up, H, reps);
    gemm("mlp_down_rerun", Stage::backward, LayerType::mlp, KernelClass::gemm, N_, H, F, reps);
    if (eager_) {
      emit(mlp_act_ops(ctx(Stage::forward), m_.mlp.gated), N_ * F, Stage::backward, LayerType::mlp, reps);
      return;
    }
    stream("mlp_act_rerun", Stage::backward, LayerType::mlp, KernelClass::elementwise, a_ * N_ * F * 4, 3,
           reps);
  }

  // Tokens routed to expert `e` (every token in dense mode).
  double expert_tokens(std::size_t e) const {
    if (w_.moe == MoeMode::dense) return N_;
    const double k = d(w_.active_experts(m_));
    return N_ * k * (shares_.empty() ? 1.0 / d(m_.moe.experts) : shares_[e]);
  }

  // The eager expert loop: one segment per expert, since the loop syncs on torch.where/nonzero before each.
  // Experts given the same number of tokens are the same segment (the same ops, the same host sync): a run of
  // `c` of them is emitted once at c times the repetitions, as every op and the segment's wall time are
  // linear in the repetitions. Uniform routing is then one segment instead of one per expert (128 for
  // Qwen3-30B-A3B).
  void expert_loop(Stage st, double reps) {
    flush(st);
    const auto Eu = static_cast<std::size_t>(m_.moe.experts);
    for (std::size_t e = 0; e < Eu;) {
      const double n = expert_tokens(e);
      std::size_t c = 1;
      while (e + c < Eu && expert_tokens(e + c) == n) ++c;
      expert_segment(st, reps * d(static_cast<std::int64_t>(c)), n);
      flush(st);
      e += c;
    }
  }

  // One expert's segment of the loop, for an expert that receives `n` tokens (its gather, projections and
  // activation; in backward the gather's full-size gradient).
  void expert_segment(Stage st, double reps, double n) {
    const double H = d(m_.hidden);
    const double F = d(m_.moe.expert_intermediate);
    const LoraTargets& t = w_.lora_targets;
    const bool bwd = st == Stage::backward;
    const double up_mult = m_.moe.gated ? 2.0 : 1.0;
    // P(expert receives no token) ~ exp(-n): an empty expert skips dequant and GEMMs but still loops
    const double hit = 1.0 - std::exp(-n);
    const double ne = n > 0 ? n / std::max(hit, 1e-12) : 0;
    seg_host_ += reps * s_.host_sync_us * 1e-6 * (bwd ? 0.0 : 1.0);
    stream("expert_loop", st, LayerType::moe, KernelClass::routing, a_ * ne * H * 4 * hit,
           own_code_ ? s_.own_code_kernels_per_expert_overhead : s_.kernels_per_expert_overhead, reps);
    if (bwd) {
      // Backward of the gather x[idx]: autograd's IndexBackward builds a zero tensor the size of the
      // whole input [N, H] and index_put_s (accumulate) the expert's rows into it; the engine then adds
      // it to the input's gradient. So each expert that is hit costs a full-size fill and a full-size add
      // (read two, write one), whatever its share of tokens. The routing-weight gather of HF models is
      // [N, k]: its launches count, its bytes do not. Own code that writes `out[sel] = expert(h[sel])`
      // (BlackMamba's SwitchMLP) adds the backward of index_put_ into `out`: the gradient of `out` is
      // grad.index_put(sel, 0), a full-size copy per expert (HF's index_add_ passes it through).
      const double full_passes = own_code_ ? 6.0 : 4.0;
      stream("expert_gather_grad", st, LayerType::moe, KernelClass::routing, a_ * N_ * H * full_passes * hit,
             s_.kernels_per_gather_backward * hit * (own_code_ ? 1.0 : 2.0), reps);
    }
    if (m_.fused_gate_up) {
      linear("expert_up", st, LayerType::moe, KernelClass::expert_gemm, ne, H, up_mult * F, reps * hit,
             t.expert_gate_up);
    } else {
      linear("expert_gate", st, LayerType::moe, KernelClass::expert_gemm, ne, H, F, reps * hit,
             t.expert_gate_up);
      if (m_.moe.gated)
        linear("expert_up", st, LayerType::moe, KernelClass::expert_gemm, ne, H, F, reps * hit,
               t.expert_gate_up);
    }
    linear("expert_down", st, LayerType::moe, KernelClass::expert_gemm, ne, F, H, reps * hit, t.expert_down);
    stream("expert_act", st, LayerType::moe, KernelClass::elementwise,
           (bwd ? 2.0 : 1.0) * a_ * ne * (F * 4 + H * 3), 0, reps * hit);
  }

  void moe_block(Stage st, double reps) {
    const double H = d(m_.hidden);
    const double F = d(m_.moe.expert_intermediate);
    const double E = d(m_.moe.experts);
    const double k = d(w_.active_experts(m_));
    const LoraTargets& t = w_.lora_targets;
    const bool bwd = st == Stage::backward;
    norm(st, reps);
    // router GEMM (quantized in QLoRA: bitsandbytes converts every nn.Linear except lm_head) + softmax/top-k
    linear("router", st, LayerType::moe, KernelClass::routing, N_, H, E, reps, t.router);
    if (eager_) {
      const MoeRouterOps r = moe_router_ops(ctx(st));
      emit(r.per_logit, N_ * E, st, LayerType::moe, reps);
      emit(r.per_choice, N_ * k, st, LayerType::moe, reps);
    } else {
      stream("router_topk", st, LayerType::moe, KernelClass::routing, N_ * E * 16,
             own_code_ ? s_.own_code_kernels_per_router : s_.kernels_per_router, reps);
    }
    // shared experts (always active)
    if (m_.moe.shared_experts > 0) {
      const double Fs = d(m_.moe.shared_intermediate) * d(m_.moe.shared_experts);
      linear("shared_expert_up", st, LayerType::moe, KernelClass::gemm, N_, H, 2 * Fs, reps, t.shared, true,
             2.0);
      linear("shared_expert_down", st, LayerType::moe, KernelClass::gemm, N_, Fs, H, reps, t.shared);
      stream("shared_expert_act", st, LayerType::moe, KernelClass::elementwise,
             (bwd ? 2.0 : 1.0) * a_ * N_ * Fs * 4, 3, reps);
    }
    if (eager_) emit(residual_ops(ctx(st)), N_ * H, st, LayerType::moe, reps);
    const bool fused_up = m_.fused_gate_up;
    const double up_mult = m_.moe.gated ? 2.0 : 1.0;
    const bool dense_mode = w_.moe == MoeMode::dense;
    if (s_.moe_execution == "loop") {
      expert_loop(st, reps);
    } else {
      // Grouped GEMM over all experts: sort/permute, one GEMM per projection, unpermute; no host sync.
      const double pairs = dense_mode ? N_ * E : N_ * k;
      if (eager_)
        grouped_experts_glue(st, reps, pairs);
      else
        stream("permute", st, LayerType::moe, KernelClass::routing, (bwd ? 2.0 : 1.0) * a_ * pairs * H * 4, 6,
               reps);
      const double hit_experts = dense_mode ? E : E * (1.0 - std::exp(-pairs / E));
      const double ne = pairs / std::max(hit_experts, 1.0);
      // quantized expert weights are dequantized per expert that is hit; the grouped GEMM reads all of them
      const double reps_e = reps * hit_experts;
      expert_kernel_scale_ = 1.0 / std::max(hit_experts, 1.0);
      if (fused_up || !m_.moe.gated) {
        linear("expert_up", st, LayerType::moe, KernelClass::expert_gemm, ne, H, up_mult * F, reps_e,
               t.expert_gate_up);
      } else {
        linear("expert_gate_up", st, LayerType::moe, KernelClass::expert_gemm, ne, H, 2 * F, reps_e,
               t.expert_gate_up, true, 2.0);
      }
      linear("expert_down", st, LayerType::moe, KernelClass::expert_gemm, ne, F, H, reps_e, t.expert_down);
      expert_kernel_scale_ = 1;
      if (eager_)
        emit(mlp_act_ops(ctx(st), m_.moe.gated), pairs * F, st, LayerType::moe, reps);
      else
        stream("expert_act", st, LayerType::moe, KernelClass::elementwise,
               (bwd ? 2.0 : 1.0) * a_ * pairs * (F * 4 + H * 3), 4, reps);
    }
  }

  // The eager kernels of transformers 5's grouped_mm experts besides the two grouped GEMMs and the
  // activation (ops.hpp moe_grouped_mm_ops), over `pairs` routed (token, expert) pairs; the routing weights
  // reach the product in the compute dtype (transformers' Qwen3MoeTopKRouter casts its fp32 top-k back to
  // the router logits' dtype). In backward the block input's gradient is summed over its two consumers
  // (the router and the gather).
  void grouped_experts_glue(Stage st, double reps, double pairs) {
    const double H = d(m_.hidden);
    const OpContext c = ctx(st);
    const MoeGroupedOps o = moe_grouped_mm_ops(c, a_, pairs);
    emit(o.per_token, N_ * H, st, LayerType::moe, reps);
    emit(o.per_pair, pairs * H, st, LayerType::moe, reps);
    emit(o.per_route, pairs, st, LayerType::moe, reps);
    if (st == Stage::backward) emit(grad_accumulate_ops(c), N_ * H, st, LayerType::moe, reps);
  }

  void mamba_block(Stage st, double reps) {
    const MambaSpec& ms = m_.mamba;
    const double H = d(m_.hidden);
    const double Di = d(ms.d_inner);
    const bool lora_m = w_.lora_targets.mamba;
    const bool bwd = st == Stage::backward;
    norm(st, reps);
    linear("mamba_in_proj", st, LayerType::mamba, KernelClass::gemm, N_, H, 2 * Di, reps, lora_m);
    stream("mamba_conv", st, LayerType::mamba, KernelClass::elementwise, (bwd ? 3.0 : 1.0) * a_ * N_ * Di * 3,
           2, reps);
    linear("mamba_x_proj", st, LayerType::mamba, KernelClass::gemm, N_, Di, d(ms.dt_rank + 2 * ms.d_state),
           reps, lora_m);
    linear("mamba_dt_proj", st, LayerType::mamba, KernelClass::gemm, N_, d(ms.dt_rank), Di, reps, lora_m);
    // selective scan: memory-bound (constants::kScanBytes*: bytes and FLOPs per d_inner channel per token)
    const double scan_per = bwd ? constants::kScanBytesBackward : constants::kScanBytesForward;
    const double scan_bytes = N_ * Di * scan_per;
    const double scan_flops = N_ * Di * d(ms.d_state) * scan_per;
    stream("selective_scan", st, LayerType::mamba, KernelClass::scan, scan_bytes, 2, reps, scan_flops);
    linear("mamba_out_proj", st, LayerType::mamba, KernelClass::gemm, N_, Di, H, reps, lora_m);
    stream("mamba_misc", st, LayerType::mamba, KernelClass::elementwise,
           (bwd ? 2.0 : 1.0) * a_ * N_ * (Di * 2 + H * 3), s_.kernels_per_mamba_block, reps);
  }

  void pass(Stage st) {
    const bool head = st != Stage::recompute;
    const double H = d(m_.hidden);
    const double V = d(m_.vocab);
    if (head && st == Stage::forward)
      stream("embedding", st, LayerType::other, KernelClass::elementwise, a_ * N_ * H * 2, 1, 1);
    for (std::size_t i = 0; i < n_kinds_; ++i) {
      const LayerGroup& g = kinds_[i];
      const double reps = d(g.count);
      if (g.mixer == Mixer::attention) attention_block(st, reps);
      if (g.mixer == Mixer::mamba) mamba_block(st, reps);
      if (g.ffn == Ffn::mlp) mlp_block(st, reps);
      if (g.ffn == Ffn::moe) moe_block(st, reps);
    }
    if (head) {
      norm(st, 1);
      // lm_head stays 16-bit in QLoRA (bitsandbytes skips the output embedding)
      linear("lm_head", st, LayerType::other, KernelClass::gemm, N_, H, V, 1, w_.lora_targets.lm_head, false);
      const bool own = m_.own_training_code;
      // A chunked loss checkpoints each chunk (TRL chunked_nll: torch.utils.checkpoint per chunk), so the
      // backward recomputes the lm_head projection once more. Liger computes the logits' gradient in the
      // forward (docs/sources/stacks/liger.md): its traffic is the chunk written and read once more.
      const std::string& loss = own ? s_.loss_path : effective_loss_path(s_, w_);
      if (!own && loss == "chunked" && st == Stage::backward)
        linear("lm_head_recompute", st, LayerType::other, KernelClass::gemm, N_, H, V, 1, false, false);
      const double per_vocab = own ? s_.loss_bytes_per_vocab_entry * constants::kOwnCodeLossBytes
                               : loss == "fused_linear" ? std::min(s_.loss_bytes_per_vocab_entry, 4.0 * a_)
                                                        : s_.loss_bytes_per_vocab_entry;
      const double loss_bytes = N_ * V * per_vocab;
      if (eager_ && !own && loss != "fused_linear") {
        // chunked: each chunk of loss_chunk_tokens launches the loss kernels once
        const double chunks = loss == "chunked" ? std::ceil(N_ / std::max(1.0, s_.loss_chunk_tokens)) : 1.0;
        OpList l = loss_ops(ctx(st), loss == "chunked");
        for (std::size_t i = 0; i < l.n; ++i) l.v[i].kernels *= chunks;
        emit(l, N_ * V, st, LayerType::other, 1);
      } else {
        stream("cross_entropy", st, LayerType::other, KernelClass::loss,
               loss_bytes *
                   (st == Stage::backward ? constants::kLossBackwardShare : constants::kLossForwardShare),
               6, 1);
      }
      if (st == Stage::backward && full_)
        stream("embedding_grad", st, LayerType::other, KernelClass::elementwise, N_ * H * 8, 2, 1);
    }
    flush(st);
  }

  // The eager optimizer step: torch AdamW (foreach or fused) with gradient-norm clipping over the trainable
  // tensors, and the Python work per tensor of the step, the clipping and zero_grad (the device idles while
  // the host issues them: the stage is the larger of the two).
  void optimizer_eager() {
    const Stage st = Stage::optimizer;
    OptimizerShape o;
    o.params = full_ ? d(m_.params().total()) : lora_params_ + variant_params();
    o.tensors = full_ ? d(m_.layers()) * 9 + 3 : 2 * lora_modules_ + variant_tensors();
    o.param_bytes = full_ && w_.precision != "fp32" && w_.optimizer != Optimizer::adamw_mixed ? a_ : 4;
    o.state_bytes = o.param_bytes;
    o.fused = r_.fused_adamw;
    emit(optimizer_ops(o), 1, st, LayerType::other, 1);
    seg_host_ += o.tensors * s_.optimizer_host_us_per_tensor * 1e-6;
    flush(st);
  }

  // Trained parameters beyond LoRA's A and B (DoRA's magnitudes, modules_to_save copies, minus LoRA-FA's
  // frozen A) and their tensors: one magnitude per adapted module, one per saved module, no lora_A.
  double variant_params() const {
    if (!dora_ && !fa_ && !w_.modules_to_save.any()) return 0;  // plain LoRA: none (and no work per step)
    const ParamBreakdown p = param_breakdown(m_, w_);
    return p.trainable - p.lora;
  }
  double variant_tensors() const {
    const ModulesToSave& ms = w_.modules_to_save;
    return (dora_ ? lora_modules_
            : fa_ ? -lora_modules_
                  : 0.0) +
           (ms.embed_tokens ? 1.0 : 0.0) + (ms.lm_head ? 1.0 : 0.0);
  }

  // LoRA-FA's optimizer (peft optimizers/lorafa.py LoraFAOptimizer.step, a Python loop): per lora_B, A @ A.T
  // [r x in x r GEMM], torch.eye(r), + delta * eye, torch.linalg.pinv (one launch counted: its SVD's own
  // launches and synchronisation are not), grad_B @ AA_T_inv under autocast, * 1/scaling^2, .to(fp32), then
  // AdamW's exp_avg mul_/add_, exp_avg_sq mul_/addcmul_, sqrt, add_(eps), addcdiv_ and the weight decay's
  // add_: 17 ops per module; bytes per B element (fp32 states): matmul out 6, scale 4, cast 6, the AdamW ops
  // 76.
  void optimizer_lorafa() {
    const Stage st = Stage::optimizer;
    const ParamBreakdown p = param_breakdown(m_, w_);
    const double modules = adapted_modules(m_, w_.lora_targets);
    const double b_params = p.trainable - p.saved_modules;
    add("lorafa_step", st, LayerType::other, KernelClass::optimizer, 2 * r_lora_ * p.frozen_adapter,
        b_params * 92 + p.frozen_adapter * a_, modules * 17,
        (b_params * 92 + p.frozen_adapter * a_) / r_.stream_bw(r_.eta_opt), false, 1);
    flush(st);
  }

  void optimizer() {
    const Stage st = Stage::optimizer;
    if (fa_) {
      optimizer_lorafa();
      return;
    }
    if (eager_ && (w_.optimizer == Optimizer::adamw || w_.optimizer == Optimizer::adamw_mixed)) {
      optimizer_eager();
      return;
    }
    double trainable = full_ ? d(m_.params().total()) : lora_params(m_, w_) + variant_params();
    const bool sixteen = full_ && w_.precision != "fp32" && w_.optimizer == Optimizer::adamw;
    double bpp = sixteen ? s_.optimizer_bytes_per_param_16bit : s_.optimizer_bytes_per_param_fp32;
    if (w_.optimizer == Optimizer::sgd) bpp *= constants::kSgdOptimizerBytes;
    if (w_.optimizer == Optimizer::sgd_momentum) bpp *= constants::kSgdMomentumOptimizerBytes;
    if (w_.optimizer == Optimizer::adamw_8bit || w_.optimizer == Optimizer::paged_adamw_8bit)
      bpp *= constants::kAdamW8bitOptimizerBytes;
    const double bytes = trainable * bpp;
    // multi-tensor (foreach) launches: ~a dozen passes over lists of up to 128 tensors, plus grad-norm
    // clipping
    const double tensors = full_ ? d(m_.layers()) * 12 : d(m_.layers()) * 20;
    stream("adamw", st, LayerType::other, KernelClass::optimizer, bytes, 14 * std::ceil(tensors / 128.0) + 10,
           1);
    ops_.back().gpu_s = bytes / r_.stream_bw(r_.eta_opt);
    seg_gpu_ = ops_.back().gpu_s;
    flush(st);
  }
};

}  // namespace

StepTime step_detail::build_step(const ModelSpec& m, const Workload& w, const StackProfile& s, const Rates& r,
                                 std::int64_t batch, double mean_len, const std::vector<double>& shares) {
  Builder b(m, w, s, r, batch, mean_len, shares);
  return b.run();
}

}  // namespace ftcost
