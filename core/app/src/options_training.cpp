// The precision and training groups of the option table (options_internal.hpp): --precision, --fp8, the
// optimizer, checkpointing and the MoE mode.
#include "ftcost/parallel.hpp"
#include "options_internal.hpp"

#include <string>
#include <utility>

namespace ftcost {

namespace {

// --precision when the job names none: bf16, or fp16 on a GPU without bf16 tensor cores (Turing, Volta), as
// Unsloth's dtype=None picks (`torch.float16 if not SUPPORTS_BFLOAT16`, unsloth/models/llama.py
// FastLlamaModel.from_pretrained @ 6181fb71) and a Trainer user sets fp16=True there.
DefaultValue precision_default(const ResolveState& st) {
  const GpuSpec& g = st.in.gpu;
  if (g.peak_tflops("bf16") <= 0 && g.peak_tflops("fp16") > 0)
    return fixed_default("fp16", g.id + " has no bf16 tensor cores: fp16 mixed precision");
  return fixed_default("bf16");
}

Status apply_precision(ResolveState& st, const std::string& v) {
  st.in.workload.precision = v;
  const GpuSpec& g = st.in.gpu;
  if (g.peak_tflops(v) > 0) return Ok{};
  std::string w = g.id + " has no published dense " + v + " peak; step time uses what the spec gives";
  if (v == "bf16" && g.peak_tflops("fp16") > 0)
    w += " (PyTorch emulates bf16 there, without tensor cores): --precision fp16";
  st.in.warnings.push_back(w);
  return Ok{};
}

// --fp8: torchao float8 training converts the nn.Linear layers a full fine-tuning trains (a LoRA/QLoRA
// base is frozen: torchao's float8 training recipes are for trained weights), on GPUs with FP8 tensor cores
// (torch._scaled_mm: compute capability 8.9 and newer; the GPU file's fp8 peak).
// Transformer Engine (--fp8 te-*): modelled where accelerate's convert_model swaps every nn.Linear of a dense
// transformer for te.Linear; the FP8 tensors keep a transposed copy on GPUs whose FP8 GEMMs are TN-only.
Status apply_fp8_te(ResolveState& st) {
  const ModelSpec& m = st.in.model;
  if (m.is_moe() || m.layers_with(Mixer::mamba) > 0 || m.attn.mla)
    return make_error(
        Errc::invalid_value, "--fp8",
        "Transformer Engine FP8 is modelled for dense attention models only (accelerate's "
        "convert_model swaps nn.Linear modules; transformers' fused 3-D experts, Mamba mixers and "
        "MLA are not modelled with it): use --fp8 tensorwise or leave --fp8 off for " +
            m.id);
  // transformer_engine/pytorch/utils.py is_non_tn_fp8_gemm_supported: (10, 0) <= cc < (12, 0) or cc >= 13
  const auto cc = parse_compute_capability(st.in.gpu.compute_capability);
  st.in.workload.fp8_te_transpose = !cc || !((cc->first >= 10 && cc->first < 12) || cc->first >= 13);
  return Ok{};
}

Status apply_fp8(ResolveState& st, const std::string& v) {
  st.in.workload.fp8 = v;
  if (v == "off") return Ok{};
  const GpuSpec& g = st.in.gpu;
  const std::string who = st.in.workload.fp8_te() ? "Transformer Engine" : "torchao float8 training";
  if (g.peak_tflops("fp8") <= 0)
    return make_error(Errc::invalid_value, "--fp8",
                      g.id +
                          " has no FP8 tensor cores (FP8 GEMMs need compute capability 8.9 or newer: Ada, "
                          "Hopper, Blackwell); leave --fp8 off");
  if (st.in.workload.method != Method::full)
    return make_error(Errc::invalid_value, "--fp8",
                      who +
                          " converts the trained nn.Linear layers of a full fine-tuning; with --method lora "
                          "or qlora the base is frozen: leave --fp8 off");
  if (st.in.workload.precision != "bf16")
    return make_error(Errc::invalid_value, "--fp8",
                      who + " runs beside bf16 autocast, got --precision " + st.in.workload.precision);
  return st.in.workload.fp8_te() ? apply_fp8_te(st) : Status{Ok{}};
}

// --optimizer: the choice's name to the enum (the table's values list is checked before apply runs).
Status apply_optimizer(ResolveState& st, const std::string& v) {
  static const std::pair<const char*, Optimizer> kByName[] = {
      {"adamw", Optimizer::adamw},
      {"adamw-mixed", Optimizer::adamw_mixed},
      {"adamw-8bit", Optimizer::adamw_8bit},
      {"paged-adamw-8bit", Optimizer::paged_adamw_8bit},
      {"paged-adamw", Optimizer::paged_adamw},
      {"sgd", Optimizer::sgd},
      {"sgd-momentum", Optimizer::sgd_momentum},
  };
  // LoRA-FA is peft's create_lorafa_optimizer: its LoraFAOptimizer (optimizers/lorafa.py) is an AdamW over
  // lora_B with fp32 states; another optimizer would be another method.
  const bool fa =
      st.in.workload.method != Method::full && st.in.workload.lora_variant == LoraVariant::lora_fa;
  if (fa && v != "adamw" && v != "adamw-mixed")
    return make_error(
        Errc::invalid_value, "--optimizer",
        "--lora-variant lora-fa trains with peft's LoraFAOptimizer (create_lorafa_optimizer), an "
        "AdamW over lora_B: use adamw, got \"" +
            v + "\"");
  for (const auto& [name, opt] : kByName)
    if (v == name) {
      st.in.workload.optimizer = opt;
      return Ok{};
    }
  return make_error(Errc::invalid_value, "--optimizer", "unknown optimizer '" + v + "'");
}

std::string only_moe(const ResolveState& st) {
  return st.in.model.is_moe() ? "" : "applies only to MoE models";
}

Option precision_option() {
  Option o = declare_option("precision", OptionKind::choice, "method", "Precision");
  o.help = "Compute precision (autocast dtype)";
  o.details = "Compute precision of forward/backward (autocast dtype): bf16, fp16 or fp32.";
  o.values = {{"bf16", "bf16", "bfloat16 (Ampere and newer)"},
              {"fp16", "fp16", "float16"},
              {"fp32", "fp32", "float32 (no mixed precision)"}};
  o.default_help = "bf16 (fp16 on GPUs without bf16: T4, V100)";
  o.reads = {"gpu"};
  o.default_rule = precision_default;
  o.apply = apply_precision;
  return o;
}

Option fp8_option() {
  Option o = declare_option("fp8", OptionKind::choice, "method", "FP8 training");
  o.help = "FP8 training of the linear layers, torchao or Transformer Engine (full fine-tuning, FP8 GPUs)";
  o.details =
      "torchao's convert_to_float8_training: the decoder's nn.Linear GEMMs run in FP8 on the GPU's "
      "FP8 tensor cores with dynamic scaling (a cast of each input, weight and output gradient); the "
      "master weights, optimizer and the other kernels stay as they were. tensorwise: one scale per "
      "tensor (cuBLAS); rowwise: one per row (CUTLASS). With FSDP, tensorwise also all-gathers the "
      "weights in FP8. te-delayed / te-current: Transformer Engine's te.Linear in place of every "
      "nn.Linear (accelerate's convert_model, lm_head included), one GPU, dense models: each linear keeps "
      "its input and its weight in FP8 for the backward (not in bf16), and casts with fused "
      "cast-transpose kernels; delayed scaling takes the scale from the amax history, current scaling "
      "computes each tensor's amax first.";
  o.values = {
      {"off", "off", "bf16 GEMMs"},
      {"tensorwise", "tensorwise", "torchao Float8LinearRecipeName.TENSORWISE"},
      {"rowwise", "rowwise", "torchao Float8LinearRecipeName.ROWWISE"},
      {"te-delayed", "TE delayed", "Transformer Engine te.Linear, DelayedScaling (accelerate)"},
      {"te-current", "TE current", "Transformer Engine te.Linear, Float8CurrentScaling (accelerate)"}};
  o.default_help = "off";
  o.reads = {"gpu", "model", "method", "precision"};
  o.default_rule = unlisted_default("off");
  o.apply = apply_fp8;
  return o;
}

Option optimizer_option() {
  Option o = declare_option("optimizer", OptionKind::choice, "method", "Optimizer");
  o.help = "Optimizer of the trained parameters";
  o.details =
      "Optimizer of the trained parameters and its state size per parameter: adamw (two states in the "
      "parameter dtype), adamw-mixed (fp32 master weights + two fp32 states), adamw-8bit (bitsandbytes "
      "8-bit states), paged-adamw-8bit (the same, paged), paged-adamw (bitsandbytes PagedAdamW: two fp32 "
      "states, paged), sgd (none), sgd-momentum (one). Paged states live in CUDA unified memory: they "
      "yield "
      "to the other allocations and what does not fit crosses PCIe every step.";
  o.values = {{"adamw", "AdamW", "torch AdamW, states in the parameter dtype"},
              {"adamw-mixed", "AdamW, fp32 master", "fp32 master weights and states"},
              {"adamw-8bit", "AdamW 8-bit", "bitsandbytes / torchao blockwise 8-bit states"},
              {"paged-adamw-8bit", "Paged AdamW 8-bit",
               "bitsandbytes PagedAdamW8bit: 8-bit states in unified memory, paged to host when short"},
              {"paged-adamw", "Paged AdamW 32-bit",
               "bitsandbytes PagedAdamW: fp32 states in unified memory, paged to host when short"},
              {"sgd", "SGD", "no state"},
              {"sgd-momentum", "SGD + momentum", "one state"}};
  o.default_help = "adamw";
  o.reads = {"method", "lora-variant"};
  o.default_rule = [](const ResolveState&) {
    return fixed_default("adamw", "torch AdamW, states in the parameter dtype");
  };
  o.apply = apply_optimizer;
  return o;
}

Option checkpointing_option() {
  Option o = declare_option("checkpointing", OptionKind::toggle, "method", "Checkpointing");
  o.help = "Gradient checkpointing";
  o.details =
      "Gradient (activation) checkpointing: keep only layer inputs and recompute activations in the "
      "backward pass. Less memory (larger batches), about one extra forward pass of time.";
  o.values = {{"on", "on", ""}, {"off", "off", ""}};
  o.default_help = "on (off for BlackMamba/Mamba, whose training code has none)";
  o.reads = {"model"};
  o.default_rule = [](const ResolveState& st) {
    return own_code_without_checkpointing(st.in.model)
               ? fixed_default("off", "the BlackMamba/mamba_ssm training code has no checkpointing")
               : fixed_default("on", "LLaMA-Factory / common practice");
  };
  o.apply = stores(&Workload::checkpointing, on_value);
  return o;
}

Option moe_option() {
  Option o = declare_option("moe", OptionKind::choice, "method", "MoE experts");
  o.help = "MoE mode";
  o.details =
      "Mixture-of-Experts mode: sparse = each token goes to its top-k experts as the model is "
      "configured; dense = every expert is active for every token (the paper's dense runs).";
  o.values = {{"sparse", "sparse (top-k)", "the configured top-k experts per token"},
              {"dense", "dense (all experts)", "all experts active"}};
  o.default_help = "sparse";
  o.reads = {"model"};
  o.default_rule = [](const ResolveState& st) {
    return fixed_default("sparse", "top-" + std::to_string(st.in.model.moe.top_k) + " of " +
                                       std::to_string(st.in.model.moe.experts) + " experts per token");
  };
  o.applies = [](const ResolveState& st) -> std::string {
    return st.in.model.is_moe() ? "" : "ignored: " + st.in.model.id + " has no experts";
  };
  o.not_applicable_warns = true;
  o.apply = stores_choice(&Workload::moe, {{"sparse", MoeMode::sparse}, {"dense", MoeMode::dense}});
  return o;
}

Option top_k_option() {
  Option o = declare_option("top-k", OptionKind::count, "method", "Top-k");
  o.help = "Experts per token in sparse mode";
  o.details = "Experts per token (overrides the model's top-k).";
  o.unit = "experts";
  o.lo = 1;
  o.hi = 1e9;
  o.reads = {"model"};
  o.hi_rule = [](const ResolveState& st) { return static_cast<double>(st.in.model.moe.experts); };
  o.default_help = "the model's";
  o.applies = only_moe;
  o.apply = stores(&Workload::top_k_override, count_value);
  return o;
}

}  // namespace

// Compute precision and FP8 training.
void add_precision_options(std::vector<Option>& table) {
  table.push_back(precision_option());
  table.push_back(fp8_option());
}

// The optimizer, checkpointing and the experts.
void add_training_options(std::vector<Option>& table) {
  table.push_back(optimizer_option());
  table.push_back(checkpointing_option());
  table.push_back(moe_option());
  table.push_back(top_k_option());
}

}  // namespace ftcost
