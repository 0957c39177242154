// The option table's declarations, group by group (issue 40): one function per option, declared with what it
// stores and what it reads (Option::reads, checked by tests/unit/test_option_order.cpp), and one
// add_*_options per group; build_options (options.cpp) lists the groups in the order they apply. A
// declarative table, kept in one file: options.cpp holds the interpreter and the helpers the groups share
// (options_internal.hpp), options_objective.cpp the preference and RL objectives.

#include "ftcost/calibration.hpp"
#include "ftcost/parallel.hpp"
#include "ftcost/run.hpp"
#include "ftcost/suggest.hpp"
#include "ftcost/units.hpp"
#include "options_internal.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>

// ---- The model, GPU and method groups of the option table (options_internal.hpp): --model, --gpu, --method
// and the PEFT settings.
namespace ftcost {

namespace {

// A model name as Hugging Face ids write it, for matching a preset: lower case, without the organisation
// ("meta-llama/"), Meta's "meta-" prefix (Meta-Llama-3.1-8B is Llama-3.1-8B) and the "-hf" suffix of the
// converted Llama 2 repos (Llama-2-7b-hf is Llama-2-7b).
std::string hf_model_key(const std::string& name) {
  std::string k = name.substr(name.find_last_of('/') == std::string::npos ? 0 : name.find_last_of('/') + 1);
  for (char& c : k) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (k.rfind("meta-", 0) == 0) k = k.substr(5);
  if (k.size() > 3 && k.compare(k.size() - 3, 3, "-hf") == 0) k.resize(k.size() - 3);
  return k;
}

// An organisation/name id as the Hub writes it ("Qwen/Qwen2.5-7B"), not a file path: one '/', no .json, not
// starting with '.', '/' or '~'.
bool looks_like_hf_id(const std::string& v) {
  return std::count(v.begin(), v.end(), '/') == 1 && v.find(".json") == std::string::npos && !v.empty() &&
         v[0] != '.' && v[0] != '/' && v[0] != '~' && v.back() != '/';
}

// The preset a --model value names by its Hugging Face repo id or a common spelling of it (case-insensitive,
// with or without the organisation: Qwen/Qwen2.5-7B, meta-llama/Llama-3.1-8B, Meta-Llama-3.1-8B), before any
// file is read. Empty when no preset, or more than one, matches.
std::string preset_for_hf_name(const Database& db, const std::string& v) {
  const std::string key = hf_model_key(v);
  std::string found;
  for (const auto& [id, m] : db.models()) {
    if (hf_model_key(m.hf_repo) != key && hf_model_key(id) != key) continue;
    if (!found.empty() && found != id) return {};
    found = id;
  }
  return found;
}

// A Hub id that names no preset: ftcost does not download configs, so say which preset is close.
Error unknown_hf_model(const Database& db, const std::string& v) {
  std::vector<std::string> repos;
  for (const auto& [id, m] : db.models()) repos.push_back(m.hf_repo);
  const std::string near = closest_id(hf_model_key(v), db.model_ids());
  return make_error(
      Errc::unknown_id, "--model",
      "\"" + v + "\" is no preset's Hugging Face id" +
          (near.empty() ? did_you_mean(v, repos) : " (did you mean \"" + near + "\"?)") +
          "; ftcost reads no config from the Hub: give a preset (see `ftcost models`) or the path "
          "to the model's config.json");
}

// --model: a preset by its id or its Hugging Face id (preset_for_hf_name), else a config.json path.
Status apply_model(ResolveState& st, const std::string& v) {
  const std::string preset = st.db.model(v) != nullptr ? v : preset_for_hf_name(st.db, v);
  if (const ModelSpec* m = st.db.model(preset)) {
    st.in.model = *m;
  } else if (looks_like_hf_id(v)) {
    return unknown_hf_model(st.db, v);
  } else if (looks_like_path(v)) {
    FTCOST_TRY(doc, read_doc(st, v, "--model"));
    auto m2 = parse_model_file(doc, v);
    if (!m2.ok()) return in_file(v, m2.error());
    st.in.model = m2.value();
  } else {
    return make_error(Errc::unknown_id, "--model",
                      "unknown model \"" + v + "\"" + known_ids_hint(v, st.db.model_ids(), "presets") +
                          " (or a path to a config.json)");
  }
  for (const auto& w : st.in.model.warnings) st.in.warnings.push_back(w);
  return Ok{};
}

std::string only_lora(const ResolveState& st) {
  return st.in.workload.method == Method::full ? "applies only to --method lora or qlora" : "";
}

// --lora-variant, --rslora, --modules-to-save (docs/sources/peft-variants.md).
Status apply_rslora(ResolveState& st, const std::string& v) {
  st.in.workload.rslora = v == "on";
  if (st.in.workload.rslora)
    st.in.warnings.emplace_back(
        "--rslora: rank-stabilised LoRA changes only the adapter scale (lora_alpha/sqrt(r)); memory and step "
        "time are those of LoRA");
  return Ok{};
}

Status apply_modules_to_save(ResolveState& st, const std::string& v) {
  FTCOST_TRY(m, parse_modules_to_save(v, "--modules-to-save"));
  st.in.workload.modules_to_save = m;
  return Ok{};
}

Option model_option() {
  Option o = declare_option("model", OptionKind::id_or_path, "model", "Model");
  o.help = "Model preset id (see `ftcost models`) or path to a Hugging Face config.json";
  o.details =
      "The model to fine-tune: a preset (Hugging Face config.json shipped with ftcost) or your own "
      "config.json. Parameters are counted from the config's structure. A model_type ftcost has no reader "
      "for is read as a Llama-style decoder only when the config also carries its parameter count "
      "(\"num_parameters\": N, or \"safetensors_index\": the model.safetensors.index.json with "
      "torch_dtype) "
      "and the reading agrees with it within 1%; otherwise it is refused.";
  o.id_list = "models";
  o.required = true;
  o.required_message = "is required: a preset id (see `ftcost models`) or a config.json path";
  o.invalidates = {"moe", "top-k", "routing"};
  o.apply = apply_model;
  return o;
}

Option gpu_option() {
  Option o = declare_option("gpu", OptionKind::id_or_path, "gpu", "GPU");
  o.help = "GPU id (see `ftcost gpus`) or path to a GPU spec JSON";
  o.details =
      "The GPU to run on: every GPU in ftcost's database (spec sheets with sources), or your own GPU spec "
      "JSON.";
  o.id_list = "gpus";
  o.required = true;
  o.required_message = "is required: an id (see `ftcost gpus`) or a GPU spec JSON path";
  o.invalidates = {"provider", "calibration"};
  o.apply = [](ResolveState& st, const std::string& v) -> Status {
    if (const GpuSpec* g = st.db.gpu(v)) {
      st.in.gpu = *g;
      return Ok{};
    }
    if (!looks_like_path(v))
      return make_error(
          Errc::unknown_id, "--gpu",
          "unknown GPU \"" + v + "\"" + known_ids_hint(v, st.db.gpu_ids()) + " (or a path to a GPU JSON)");
    FTCOST_TRY(doc, read_doc(st, v, "--gpu"));
    auto g2 = parse_gpu(doc, v);
    if (!g2.ok()) return in_file(v, g2.error());
    st.in.gpu = g2.value();
    return Ok{};
  };
  return o;
}

Option method_option() {
  Option o = declare_option("method", OptionKind::choice, "method", "Method");
  o.help = "Fine-tuning method";
  o.details =
      "full: every weight is trained (16-bit weights, gradients and optimizer states for all parameters).\n"
      "lora: the base model is frozen in 16 bits; small low-rank adapters are trained.\n"
      "qlora: the frozen base is stored quantized (4-bit NF4 by default) and dequantized on the fly; LoRA "
      "adapters are trained.";
  o.values = {{"full", "Full", "Full fine-tuning: all parameters trained"},
              {"lora", "LoRA", "LoRA: 16-bit frozen base + trained low-rank adapters"},
              {"qlora", "QLoRA", "QLoRA: quantized frozen base (bitsandbytes) + trained LoRA adapters"}};
  o.required = true;
  o.required_message = "is required: full, lora or qlora";
  o.invalidates = {"quant", "lora-rank", "lora-targets", "lora-variant", "rslora", "modules-to-save"};
  o.apply = [](ResolveState& st, const std::string& v) -> Status {
    st.in.workload.method = v == "full" ? Method::full : v == "lora" ? Method::lora : Method::qlora;
    st.in.workload.quant = Quant::none;
    return Ok{};
  };
  return o;
}

Option quant_option() {
  Option o = declare_option("quant", OptionKind::choice, "method", "Quantization");
  o.help = "QLoRA quantization of the frozen base weights";
  o.details =
      "How the frozen base weights are stored (bitsandbytes): nf4-dq = 4-bit NormalFloat with "
      "double-quantized block scales (QLoRA default, ~0.52 bytes/parameter); nf4 = without double "
      "quantization; int8 = LLM.int8 (1 byte/parameter).";
  o.values = {{"nf4-dq", "NF4 + double quant", "4-bit NormalFloat, double-quantized block scales"},
              {"nf4", "NF4", "4-bit NormalFloat"},
              {"int8", "int8", "LLM.int8, 1 byte per parameter"}};
  o.default_help = "nf4-dq";
  o.reads = {"method"};
  o.default_rule = [](const ResolveState&) {
    return fixed_default("nf4-dq", "QLoRA default: NF4 with double quantization, bitsandbytes");
  };
  o.applies = [](const ResolveState& st) -> std::string {
    return st.in.workload.method == Method::qlora ? "" : "applies only to --method qlora";
  };
  o.apply = stores_choice(&Workload::quant,
                          {{"nf4-dq", Quant::nf4_dq}, {"nf4", Quant::nf4}, {"int8", Quant::int8}});
  return o;
}

Option lora_rank_option() {
  Option o = declare_option("lora-rank", OptionKind::count, "method", "LoRA rank");
  o.help = "LoRA rank r";
  o.details =
      "Rank r of the adapter matrices (A: r x in, B: out x r). Adapter parameters grow linearly with r.";
  o.unit = "dimensions";
  o.lo = 1;
  o.hi = 65536;
  o.default_help = "16";
  o.reads = {"method"};
  o.default_rule = [](const ResolveState&) { return fixed_default("16"); };
  o.applies = only_lora;
  o.apply = stores(&Workload::lora_rank, count_value);
  return o;
}

Option lora_targets_option() {
  Option o = declare_option("lora-targets", OptionKind::text, "method", "LoRA targets");
  o.help =
      "PEFT module names (q_proj,v_proj,w1,w2,w3,gate,...) or groups (attention, experts, router, mlp, "
      "mamba, all-linear), comma-separated";
  o.details =
      "Which linear layers get adapters (PEFT target_modules): groups (all-linear, attention, experts, "
      "mlp, router, mamba) or module names (q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, "
      "down_proj, w1, w2, w3, ...), comma-separated.";
  o.values = {{"all-linear", "all linear layers", "Every linear layer except lm_head"},
              {"attention", "attention", "q_proj, k_proj, v_proj, o_proj"},
              {"attention,experts", "attention + experts", ""},
              {"attention,mlp", "attention + dense MLP", ""},
              {"experts", "experts", "MoE expert FFNs (w1, w2, w3)"},
              {"q_proj,v_proj", "q_proj, v_proj", "The original LoRA paper's choice"}};
  o.default_help = "all-linear";
  o.reads = {"method"};
  o.default_rule = [](const ResolveState&) {
    return fixed_default("all-linear", "every linear layer except lm_head");
  };
  o.applies = only_lora;
  o.apply = [](ResolveState& st, const std::string& v) -> Status {
    FTCOST_TRY(t, parse_lora_targets(v, "--lora-targets"));
    st.in.workload.lora_targets = t;
    return Ok{};
  };
  return o;
}

Option lora_dropout_option() {
  Option o = declare_option("lora-dropout", OptionKind::real, "method", "LoRA dropout");
  o.help = "PEFT lora_dropout: dropout probability on each adapter's input";
  o.details =
      "Dropout on the input of every LoRA adapter (PEFT LoraConfig.lora_dropout). Above 0 each adapted "
      "layer keeps its own dropped copy of the input and a mask for backward, and runs one more "
      "elementwise kernel in forward and in backward; at 0 PEFT uses nn.Identity (no cost).";
  o.unit = "probability";
  o.lo = 0;
  o.hi = 1;  // torch.nn.Dropout's own range
  o.default_help = "0";
  o.reads = {"method"};
  o.default_rule = [](const ResolveState&) {
    DefaultValue d = fixed_default("0", "PEFT LoraConfig default");
    d.listed = false;
    return d;
  };
  o.applies = only_lora;
  o.apply = stores(&Workload::lora_dropout, real_value);
  return o;
}

Option lora_variant_option() {
  Option o = declare_option("lora-variant", OptionKind::choice, "method", "LoRA variant");
  o.help = "PEFT LoRA variant: lora, dora (use_dora) or lora-fa (frozen lora_A)";
  o.details =
      "lora: plain LoRA. dora: PEFT use_dora=True, a trained magnitude vector per adapted layer "
      "(out_features "
      "values) and the norm of W + s*BA computed every forward (a temporary the size of the largest "
      "adapted "
      "weight; QLoRA dequantizes the weight for it), the base and adapter outputs kept for backward. "
      "lora-fa: peft's create_lorafa_optimizer freezes lora_A and trains lora_B only (gradients and "
      "optimizer "
      "states for B; the adapters no longer keep their input for A's gradient). "
      "docs/sources/peft-variants.md.";
  o.values = {{"lora", "LoRA", "Plain LoRA"},
              {"dora", "DoRA", "Weight-decomposed LoRA (PEFT use_dora)"},
              {"lora-fa", "LoRA-FA", "lora_A frozen, lora_B trained (peft create_lorafa_optimizer)"}};
  o.default_help = "lora";
  o.reads = {"method"};
  o.default_rule = unlisted_default("lora");
  o.applies = only_lora;
  o.apply = stores_choice(
      &Workload::lora_variant,
      {{"dora", LoraVariant::dora}, {"lora-fa", LoraVariant::lora_fa}, {"lora", LoraVariant::lora}});
  return o;
}

Option rslora_option() {
  Option o = declare_option("rslora", OptionKind::toggle, "method", "rsLoRA");
  o.help = "PEFT use_rslora: adapter scale lora_alpha/sqrt(r); changes no memory or time";
  o.details =
      "Rank-stabilised LoRA (PEFT use_rslora=True) sets the adapter scale to lora_alpha/sqrt(r) instead of "
      "lora_alpha/r (peft tuners/lora/layer.py LoraLayer.update_layer). The scale is a Python float: the "
      "same kernels, tensors and bytes, so the estimate is that of LoRA. Exported configs carry it.";
  o.values = {{"on", "on", ""}, {"off", "off", ""}};
  o.default_help = "off";
  o.reads = {"method"};
  o.default_rule = unlisted_default("off");
  o.applies = only_lora;
  o.apply = apply_rslora;
  return o;
}

Option modules_to_save_option() {
  Option o = declare_option("modules-to-save", OptionKind::text, "method", "Modules to save");
  o.help =
      "PEFT modules_to_save trained in full beside the adapters: embed_tokens, lm_head (comma-separated)";
  o.details =
      "PEFT modules_to_save: each listed module is copied (peft utils/other.py "
      "ModulesToSaveWrapper.update, "
      "copy.deepcopy of the original, which stays frozen) and the copy is trained in full: its weights, "
      "gradients and optimizer states in the base weights' dtype. embed_tokens and lm_head are vocab x "
      "hidden "
      "each (a tied model gets two untied copies: ensure_weight_tying defaults to False).";
  o.values = {{"lm_head", "lm_head", ""},
              {"embed_tokens", "embed_tokens", ""},
              {"embed_tokens,lm_head", "embed_tokens, lm_head", "e.g. new tokens added to the vocabulary"}};
  o.default_help = "none";
  o.reads = {"method"};
  o.applies = only_lora;
  o.apply = apply_modules_to_save;
  return o;
}

}  // namespace

// The model and the GPU: nearly every option below reads them.
void add_model_options(std::vector<Option>& table) {
  table.push_back(model_option());
  table.push_back(gpu_option());
}

// The method and its PEFT settings.
void add_peft_options(std::vector<Option>& table) {
  table.push_back(method_option());
  table.push_back(quant_option());
  table.push_back(lora_rank_option());
  table.push_back(lora_targets_option());
  table.push_back(lora_dropout_option());
  table.push_back(lora_variant_option());
  table.push_back(rslora_option());
  table.push_back(modules_to_save_option());
}

}  // namespace ftcost

// ---- The precision and training groups of the option table (options_internal.hpp): --precision, --fp8, the
// optimizer, checkpointing and the MoE mode.
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

// ---- The data and batch groups of the option table (options_internal.hpp): a fixed --seq or a dataset and
// its lengths, then the batch, gradient accumulation and epochs.
namespace ftcost {

namespace {

// --batch N | fastest | max into the workload (0: chosen by the rule).
Status apply_batch(ResolveState& st, const std::string& v) {
  st.in.workload.batch = v == "max" || v == "fastest" ? 0 : std::atoll(v.c_str());
  st.in.workload.batch_fastest = v == "fastest";
  return Ok{};
}

// --effective-batch E: excludes --grad-accum; with --batch b on one GPU the grad-accum is E / b (several GPUs
// divide by their replicas too: parallel.cpp's choose_micro).
Status apply_effective_batch(ResolveState& st, const std::string& v) {
  if (st.given("grad-accum"))
    return make_error(Errc::invalid_value, "--effective-batch",
                      "chooses the grad-accum itself: give --effective-batch or --grad-accum, not both");
  Workload& w = st.in.workload;
  w.effective_batch = std::atoll(v.c_str());
  if (w.batch > 0 && w.effective_batch % w.batch != 0)
    return make_error(Errc::invalid_value, "--effective-batch",
                      v + " is not a multiple of --batch " + std::to_string(w.batch));
  if (w.batch > 0) w.grad_accum = w.effective_batch / w.batch;
  return Ok{};
}

Option seq_option() {
  Option o = declare_option("seq", OptionKind::count, "data", "Seq. length");
  o.help = "Fixed sequence length (instead of --dataset), or max (the longest that fits at batch 1)";
  o.details =
      "Tokens per sample (prompt + answer); every sample has this length. \"max\": the longest sequence "
      "that fits at batch 1 on this GPU with this stack (the estimate is then for that length).";
  o.unit = "tokens";
  o.values = {{"max", "longest that fits", "the longest sequence that fits at batch 1"}};
  o.lo = 1;
  o.hi = 1 << 22;
  o.invalidates = {"dataset", "padding", "max-length", "template-tokens"};
  o.checks_given = {"dataset"};
  o.apply = [](ResolveState& st, const std::string& v) -> Status {
    if (st.given("dataset"))
      return make_error(Errc::invalid_value, "--seq", "give either --seq or --dataset, not both");
    Workload& w = st.in.workload;
    w.seq_max = v == "max";
    w.seq_len = w.seq_max ? 1.0 : std::atof(v.c_str());  // seq max: estimate() sets the length
    w.lengths = LengthDistribution::fixed(w.seq_len);
    w.max_length = w.seq_len;
    return Ok{};
  };
  return o;
}

Option dataset_option() {
  Option o = declare_option("dataset", OptionKind::id_or_path, "data", "Dataset");
  o.help =
      "Dataset preset, or your own token lengths: a file of one length per line, a CSV with a length "
      "column, "
      "or ftcost.dataset/1 JSON (tools/dataset_lengths.py writes it; docs/dataset.md)";
  o.details =
      "Dataset preset (its size and token-length distribution), or your own data: a file with the token "
      "length of every sample (one per line, a CSV with a length column, or the ftcost.dataset/1 JSON that "
      "tools/dataset_lengths.py writes from a Hugging Face dataset and tokenizer). No prompt-template "
      "tokens "
      "are added to your own lengths.";
  o.id_list = "datasets";
  o.default_help = "cs15k when no --seq";
  o.checks_given = {"seq"};
  o.default_rule = [](const ResolveState&) { return fixed_default("cs15k", "no --seq or --dataset given"); };
  o.applies = [](const ResolveState& st) -> std::string {
    return st.given("seq") ? "give either --seq or --dataset, not both" : "";
  };
  o.apply = [](ResolveState& st, const std::string& v) -> Status {
    if (const Dataset* d = st.db.dataset(v)) {
      st.in.dataset_id = v;
      st.in.dataset = std::make_shared<const Dataset>(*d);
      st.in.workload.lengths = d->lengths;
      return Ok{};
    }
    const bool path_like = v.find('/') != std::string::npos || v.find('.') != std::string::npos;
    if (!path_like || !st.reader)
      return make_error(Errc::unknown_id, "--dataset",
                        "unknown dataset \"" + v + "\"" + known_ids_hint(v, option_ids("datasets", st.db)) +
                            (st.reader ? " (or a path to your length file: one length per line, CSV or "
                                         "ftcost.dataset/1 JSON)"
                                       : " (load your own length file in the UI)"));
    FTCOST_TRY(text, st.reader(v));
    FTCOST_TRY(d, parse_dataset_file(text, v));
    st.in.dataset_id = v;
    st.in.workload.lengths = d.lengths;
    st.in.dataset = std::make_shared<const Dataset>(std::move(d));
    return Ok{};
  };
  return o;
}

Option template_tokens_option() {
  Option o = declare_option("template-tokens", OptionKind::count, "data", "Template");
  o.help = "Tokens the prompt template adds to every sample";
  o.details =
      "Tokens the prompt template adds to every query (chat/instruction wrapper), on top of the "
      "dataset's measured lengths.";
  o.unit = "tokens";
  o.lo = 0;
  o.hi = 100000;
  o.default_help = "the dataset preset's; 0 for your own length file unless it states template_tokens";
  o.reads = {"dataset"};
  o.checks_given = {"seq"};
  o.default_rule = [](const ResolveState& st) {
    const Dataset* d = st.in.dataset.get();
    const double tt = d != nullptr ? d->template_tokens : 0;
    DefaultValue dv =
        fixed_default(number_text(tt), d != nullptr && d->own_data
                                           ? "stated in your length file " + st.in.dataset_id
                                           : "prompt template, from the " + st.in.dataset_id + " preset");
    dv.listed = tt > 0;
    return dv;
  };
  o.applies = [](const ResolveState& st) -> std::string {
    return st.given("seq") ? "applies only with --dataset (include it in --seq)" : "";
  };
  o.apply = stores(&Workload::template_tokens, real_value);
  return o;
}

Option max_length_option() {
  Option o = declare_option("max-length", OptionKind::count, "data", "Max length");
  o.help = "Truncation length";
  o.details = "Samples longer than this are truncated (LLaMA-Factory cutoff_len).";
  o.unit = "tokens";
  o.lo = 1;  // as --seq and a length file's samples: the default (the longest sample) is always allowed
  o.hi = 1 << 22;
  o.default_help = "1024 for a preset; the longest sample of your own length file";
  o.reads = {"dataset", "template-tokens"};
  o.checks_given = {"seq"};
  o.default_rule = [](const ResolveState& st) {
    const Dataset* d = st.in.dataset.get();
    if (d != nullptr && d->own_data)
      return fixed_default(number_text(std::ceil(d->lengths.max() + st.in.workload.template_tokens)),
                           "the longest sample in " + st.in.dataset_id + ": no truncation");
    return fixed_default("1024", "LLaMA-Factory cutoff_len");
  };
  o.applies = [](const ResolveState& st) -> std::string {
    return st.given("seq") ? "applies only with --dataset" : "";
  };
  o.apply = stores(&Workload::max_length, real_value);
  return o;
}

Option padding_option() {
  Option o = declare_option("padding", OptionKind::choice, "data", "Padding");
  o.help = "How a batch is shaped";
  o.details =
      "How a batch is shaped: longest = padded to its longest sample (Hugging Face collator default); "
      "max-length = every sample padded to the maximum length; packing = samples concatenated into "
      "rows of the maximum length.";
  o.values = {{"longest", "to the longest in the batch", ""},
              {"max-length", "to the maximum length", ""},
              {"packing", "packing", ""}};
  o.default_help = "longest";
  o.checks_given = {"seq"};
  o.default_rule = [](const ResolveState&) {
    return fixed_default("longest", "pad each batch to its longest sample, the HF collator default");
  };
  o.applies = [](const ResolveState& st) -> std::string {
    return st.given("seq") ? "applies only with --dataset (a fixed --seq needs no padding)" : "";
  };
  o.apply = stores_choice(
      &Workload::padding,
      {{"longest", Padding::longest}, {"max-length", Padding::max_length}, {"packing", Padding::packing}});
  return o;
}

Option queries_option() {
  Option o = declare_option("queries", OptionKind::count, "data", "Queries");
  o.help = "Number of training samples per epoch";
  o.details = "Dataset size: samples (queries) per epoch.";
  o.unit = "samples";
  o.lo = 1;
  o.hi = static_cast<double>(std::int64_t{1} << 40);
  o.default_help = "the dataset's size, else 1000";
  o.reads = {"dataset"};
  o.default_rule = [](const ResolveState& st) {
    if (const Dataset* d = st.in.dataset.get())
      return fixed_default(number_text(d->queries), "size of " + st.in.dataset_id);
    DefaultValue dv = fixed_default("1000");
    return dv;
  };
  o.apply = stores(&Workload::queries, real_value);
  return o;
}

Option batch_option() {
  Option o = declare_option("batch", OptionKind::count, "data", "Batch size");
  o.help = "Micro-batch size N, fastest or max";
  o.details =
      "Samples per forward/backward pass on the GPU (the micro-batch). \"Fastest\" = the batch of the "
      "highest throughput among those whose memory range's upper end fits (with padding to the longest "
      "sample a larger batch can be slower); \"Largest\" = the largest batch that fits in memory (the "
      "paper's setting).";
  o.unit = "samples";
  o.values = {{"fastest", "fastest that fits",
               "the batch of the highest throughput whose memory range's upper end fits"},
              {"max", "largest that fits", "the largest batch that fits in the GPU's memory"}};
  o.lo = 1;
  o.hi = 1 << 24;
  o.default_help = "fastest";
  o.default_rule = [](const ResolveState&) {
    return fixed_default("fastest", "the fastest batch that fits");
  };
  o.apply = apply_batch;
  return o;
}

Option grad_accum_option() {
  Option o = declare_option("grad-accum", OptionKind::count, "data", "Grad. accum.");
  o.help = "Gradient accumulation: micro-batches per optimizer step";
  o.details =
      "Gradient accumulation steps: the optimizer steps once every N micro-batches, so the effective "
      "batch is N x the micro-batch. The gradient buffer is kept between micro-batches; the optimizer's "
      "time is spread over N micro-batches.";
  o.unit = "micro-batches";
  o.lo = 1;
  o.hi = 65536;
  o.default_help = "1";
  o.default_rule = unlisted_default("1");
  o.apply = stores(&Workload::grad_accum, count_value);
  return o;
}

Option effective_batch_option() {
  Option o = declare_option("effective-batch", OptionKind::count, "data", "Effective batch");
  o.help =
      "Samples per optimizer step to keep (micro-batch x grad-accum x data-parallel GPUs): the "
      "grad-accum follows, and the fastest micro-batch that divides it is chosen";
  o.details =
      "The batch the optimizer sees (a training hyper-parameter): micro-batch x gradient accumulation x "
      "data-parallel GPUs. With it, ftcost chooses the micro-batch (the fastest that fits and divides it) "
      "and the gradient accumulation; leave it out to keep --grad-accum as given.";
  o.unit = "samples";
  o.lo = 1;
  o.hi = 1 << 24;
  o.default_help = "none: --grad-accum as given";
  o.reads = {"batch", "grad-accum"};
  o.checks_given = {"grad-accum"};
  o.apply = apply_effective_batch;
  return o;
}

Option epochs_option() {
  Option o = declare_option("epochs", OptionKind::real, "data", "Epochs");
  o.help = "Number of epochs (may be fractional)";
  o.details = "Passes over the dataset (may be fractional).";
  o.unit = "epochs";
  o.lo = 0.001;
  o.hi = 1e6;
  o.default_help = "1";
  o.default_rule = [](const ResolveState&) { return fixed_default("1"); };
  o.apply = stores(&Workload::epochs, real_value);
  return o;
}

}  // namespace

// The sequences: a fixed --seq, or a dataset with its template, truncation, padding and size.
void add_data_options(std::vector<Option>& table) {
  table.push_back(seq_option());
  table.push_back(dataset_option());
  table.push_back(template_tokens_option());
  table.push_back(max_length_option());
  table.push_back(padding_option());
  table.push_back(queries_option());
}

// The batch, gradient accumulation and epochs.
void add_batch_options(std::vector<Option>& table) {
  table.push_back(batch_option());
  table.push_back(grad_accum_option());
  table.push_back(effective_batch_option());
  table.push_back(epochs_option());
}

}  // namespace ftcost

// ---- The software groups of the option table (options_internal.hpp): --headroom, --stack and --attention,
// the modern-stack kernels and memory savers (issue 13), and the step-time model's --model-kind and
// --routing.
namespace ftcost {

namespace {

// --stack's value: a profile of the database, or a profile file (a user's refit: the database's loader, less
// the aliases it resolves there).
Result<StackProfile> stack_of(const ResolveState& st, const std::string& v) {
  if (const StackProfile* sp = st.db.stack(v)) return *sp;
  if (!looks_like_path(v))
    return make_error(
        Errc::unknown_id, "--stack",
        "unknown stack \"" + v + "\"" + known_ids_hint(v, option_ids("stacks", st.db)) +
            " (or a path to a stack profile JSON, e.g. one `ftcost fit-stack --run R --write FILE` "
            "wrote)");
  FTCOST_TRY(doc, read_doc(st, v, "--stack"));
  if (doc.is_object() && doc.contains("alias_of"))
    return make_error(
        Errc::invalid_value, "--stack",
        v + ": alias_of: an alias profile is read only from the database (gpu-db/stacks/); give "
            "its id, or a complete profile file");
  auto sp = parse_stack(doc, v);
  if (!sp.ok()) return in_file(v, sp.error());
  return sp.value();
}

// --stack: the profile, and a warning when its software does not run on the GPU's vendor.
Status apply_stack(ResolveState& st, const std::string& v) {
  FTCOST_TRY(stack, stack_of(st, v));
  st.in.stack = stack;
  const std::string vendor_warning = stack_vendor_warning(st.in.stack, st.in.gpu.id, st.in.gpu.vendor);
  if (!vendor_warning.empty()) st.in.warnings.push_back(vendor_warning);
  return Ok{};
}

// --attention when the job names none: what the stack's default install runs (Unsloth's: xformers).
DefaultValue attention_default(const ResolveState& st) {
  const bool xformers = st.in.stack.default_attention == "xformers";
  // FlashAttention-2 needs compute capability 8.0; below it the flash class is SDPA's memory-efficient kernel
  const auto cc = parse_compute_capability(st.in.gpu.compute_capability);
  const bool fa2 = !cc || cc->first >= 8;
  DefaultValue d =
      xformers ? fixed_default("xformers",
                               "as " + st.in.stack.id + "'s default install runs: xformers, not flash-attn")
               : fixed_default("flash", fa2 ? "FlashAttention-2"
                                            : "SDPA's memory-efficient kernel: FlashAttention-2 needs "
                                              "compute capability 8.0");
  d.listed = st.in.model.layers_with(Mixer::attention) > 0;
  return d;
}

// xformers only where the stack runs it: transformers has no xformers backend.
Status apply_attention(ResolveState& st, const std::string& v) {
  if (v == "xformers" && st.in.stack.default_attention != "xformers")
    return make_error(Errc::invalid_value, "--attention",
                      "xformers is Unsloth's attention backend (unsloth-* stacks); " + st.in.stack.id +
                          " runs flash, sdpa or eager");
  // SDPA's flash and memory-efficient backends are fused kernels that keep no score matrix: flash's model
  st.in.workload.attention = v == "flash" || v == "sdpa" ? Attention::flash
                             : v == "eager"              ? Attention::eager
                                                         : Attention::xformers;
  return Ok{};
}

std::string only_torch_adamw(const ResolveState& st) {
  const Optimizer opt = st.in.workload.optimizer;
  if (opt == Optimizer::adamw || opt == Optimizer::adamw_mixed) return "";
  return "applies only to torch's AdamW (--optimizer adamw or adamw-mixed)";
}

// --tiled-mlp off | on | N: ALST's TiledMLP with its own shard count (on) or N shards.
Status apply_tiled_mlp(ResolveState& st, const std::string& v) {
  Workload& w = st.in.workload;
  w.tiled_mlp = v == "off" ? 0 : v == "on" ? Workload::kTiledMlpAuto : std::atoll(v.c_str());
  return Ok{};
}

Option headroom_option() {
  Option o = declare_option("headroom", OptionKind::real, "gpu", "Headroom");
  o.help = "GPU memory to keep free for other processes (a desktop display, a second job)";
  o.details =
      "Memory the job must leave free, taken off the GPU's usable memory before the maximum batch is "
      "computed. A GPU that also drives a display typically holds 0.3-1.5 GiB for it (check nvidia-smi). "
      "Independently of this, a job above 92% of the usable memory is marked tight.";
  o.unit = "GiB";
  o.lo = 0;
  o.hi = 1024;
  o.default_help = "0 (the usable memory is the driver-reported total)";
  o.reads = {"gpu"};
  o.apply = [](ResolveState& st, const std::string& v) -> Status {
    const double gib = std::strtod(v.c_str(), nullptr);
    if (gib * kGiB >= st.in.gpu.usable_bytes())
      return make_error(Errc::out_of_range, "--headroom",
                        "keeps " + v + " GiB free, but " + st.in.gpu.id + " has only " +
                            number_text(std::floor(st.in.gpu.usable_bytes() / kGiB * 10) / 10) +
                            " GiB usable");
    st.in.gpu.reserved_mib = gib * 1024.0;
    return Ok{};
  };
  return o;
}

Option stack_option() {
  Option o = declare_option("stack", OptionKind::id_or_path, "gpu", "Software");
  o.help = "Software stack profile: an id, or a profile JSON file (e.g. from fit-stack --run --write)";
  o.details =
      "Software stack profile: how the training software behaves (per-kernel and per-expert host "
      "overheads, MoE execution as a loop over experts or grouped GEMM, memory overheads). Its constants "
      "are fitted from reference measurements; hover an entry to see them.";
  o.id_list = "stacks";
  o.default_help =
      std::string(kDefaultStackId) + " (today's HF/TRL stack; the paper's is " + kPaperStackId + ")";
  o.reads = {"gpu"};
  o.default_rule = [](const ResolveState&) {
    return fixed_default(kDefaultStackId,
                         "today's Hugging Face stack (transformers + PEFT + TRL SFTTrainer), what most users "
                         "run; the paper's is " +
                             std::string(kPaperStackId));
  };
  o.apply = apply_stack;
  return o;
}

// After --stack: the default is the stack's (Unsloth's default install runs xformers).
Option attention_option() {
  Option o = declare_option("attention", OptionKind::choice, "method", "Attention");
  o.help = "Attention implementation";
  o.details =
      "Attention implementation: flash (FlashAttention-2: no seq x seq score matrix kept), sdpa "
      "(torch's scaled_dot_product_attention, transformers' default attn_implementation: its flash or "
      "memory-efficient backend, fused like FlashAttention-2 and modelled as flash), eager (PyTorch matmul "
      "+ softmax: stores the scores, memory grows with the square of the length) or xformers (Unsloth "
      "without flash-attn installed, its default: memory_efficient_attention, with grouped-query K/V "
      "copied to every query head for the backward pass).";
  o.values = {{"flash", "FlashAttention-2", ""},
              {"sdpa", "SDPA", "torch SDPA, modelled as flash"},
              {"eager", "eager", ""},
              {"xformers", "xformers", ""}};
  o.default_help = "the stack's: flash (xformers for unsloth-*)";
  o.reads = {"model", "gpu", "stack"};
  o.default_rule = attention_default;
  o.apply = apply_attention;
  return o;
}

Option liger_option() {
  Option o = declare_option("liger", OptionKind::toggle, "gpu", "Liger kernels");
  o.help = "Liger kernels (use_liger_kernel): fused linear cross-entropy, RMSNorm, SwiGLU";
  o.details =
      "Liger-Kernel (TRL/LLaMA-Factory/axolotl use_liger_kernel): the fused linear cross-entropy never "
      "materialises the logits (chunks of about N x H elements), RMSNorm saves its 16-bit input, SwiGLU "
      "recomputes its product in backward. docs/sources/stacks/liger.md.";
  o.values = {{"on", "on", ""}, {"off", "off", ""}};
  o.default_help = "off";
  o.reads = {"model"};
  o.default_rule = unlisted_default("off");
  o.applies = [](const ResolveState& st) -> std::string {
    return own_code_without_checkpointing(st.in.model)
               ? "applies only to transformers models (BlackMamba/Mamba run their own training code)"
               : "";
  };
  o.apply = stores_choice(&Workload::loss_kernel, {{"on", LossKernel::liger}, {"off", LossKernel::stack}});
  return o;
}

Option offload_activations_option() {
  Option o = declare_option("offload-activations", OptionKind::choice, "gpu", "Offload act.");
  o.help = "Gradient checkpoints in host RAM (Unsloth 'unsloth' checkpointing, torchtune/TRL offloading)";
  o.details =
      "Activation offloading: the per-layer checkpoints live in pinned host RAM and cross PCIe twice a "
      "step, overlapped with compute. 'stack' takes the stack profile's default (on for unsloth-*, off "
      "otherwise). The host RAM used is reported; --host-ram checks it.";
  o.values = {{"stack", "stack default", "as the stack profile runs by default"},
              {"on", "on", "checkpoints in host RAM"},
              {"off", "off", "checkpoints on the GPU"}};
  o.default_help = "stack";
  o.reads = {"checkpointing", "stack"};
  o.default_rule = [](const ResolveState& st) {
    DefaultValue d = fixed_default(
        "stack", st.in.stack.offload_checkpoints
                     ? "checkpoints offloaded to host RAM, as " + st.in.stack.id + " does by default"
                     : "checkpoints on the GPU, as " + st.in.stack.id + " runs");
    d.listed = st.in.stack.offload_checkpoints;
    return d;
  };
  o.applies = [](const ResolveState& st) -> std::string {
    return st.in.workload.checkpointing
               ? ""
               : "applies only with --checkpointing on (it offloads the checkpoints)";
  };
  o.apply =
      stores_choice(&Workload::offload, {{"stack", Switch::stack}, {"on", Switch::on}, {"off", Switch::off}});
  return o;
}

Option host_ram_option() {
  Option o = declare_option("host-ram", OptionKind::real, "gpu", "Host RAM");
  o.help = "Host RAM available for offloading, per node (checked: a job that needs more does not fit)";
  o.details =
      "Host RAM the offloaded checkpoints and, with --offload, the offloaded model states of all the "
      "node's GPUs may use (a --node preset's RAM otherwise). With more than one GPU or --offload a "
      "job that needs more does not fit (no time, no cost); one GPU's offloaded checkpoints get a "
      "warning. With nothing offloaded it applies to nothing, and a warning says so.";
  o.unit = "GiB";
  o.lo = 0.5;
  o.hi = 1e5;
  o.default_help = "not checked";
  o.apply = stores(&Workload::host_ram_gib, real_value);
  return o;
}

Option tiled_mlp_option() {
  Option o = declare_option("tiled-mlp", OptionKind::count, "gpu", "Tiled MLP");
  o.help = "ALST's TiledMLP: each dense MLP computed in sequence shards (on: ceil(tokens / hidden) shards)";
  o.details =
      "Arctic Long Sequence Training's TiledMLP (DeepSpeed runtime/sequence_parallel/ulysses_sp.py, as "
      "ArcticTraining and ms-swift's --use_tiled_mlp run it): the MLP runs shard by shard without "
      "gradients and saves only its input; backward re-runs each shard with gradients. The MLP's "
      "intermediate (gate, up, product) is then held for one shard, not the sequence. 'on' takes the "
      "code's shard count, ceil(tokens per GPU / hidden_size); a number sets it (ms-swift's "
      "tiled_mlp_num_shards). The step time has the MLP's forward once more in the backward, as TiledMLP "
      "re-runs each shard there.";
  o.unit = "shards";
  o.values = {{"off", "off", "the MLP as the model runs it"},
              {"on", "on", "ALST's shard count, ceil(tokens / hidden_size)"}};
  o.lo = 1;
  o.hi = 1 << 20;
  o.default_help = "off";
  o.default_rule = unlisted_default("off");
  o.apply = apply_tiled_mlp;
  return o;
}

Option tiled_loss_option() {
  Option o = declare_option("tiled-loss", OptionKind::toggle, "gpu", "Tiled loss");
  o.help = "ALST's tiled logits + loss: about 1 GiB of fp32 logits at a time (a fused loss is kept)";
  o.details =
      "ArcticTraining's SFTTrainer.loss (DeepSpeed's sequence_tiled_compute): the lm_head and the loss run "
      "on tiles of the sequence sized to about 1 GiB of fp32 logits, each tile's forward re-run in its "
      "backward, so the full logits never exist. With --liger on, or a stack whose loss is already fused, "
      "the fused loss is used instead, as ArcticTraining does with Liger models.";
  o.values = {{"off", "off", ""}, {"on", "on", ""}};
  o.default_help = "off";
  o.default_rule = unlisted_default("off");
  o.apply = stores(&Workload::tiled_loss, on_value);
  return o;
}

Option optimizer_in_backward_option() {
  Option o = declare_option("optimizer-in-backward", OptionKind::toggle, "method", "Opt. in bwd");
  o.help = "Step each parameter in the backward pass (torchtune optimizer_in_bwd): no full gradient buffer";
  o.details =
      "torchtune optimizer_in_bwd: each parameter is stepped and its gradient freed as soon as it is "
      "accumulated (post-accumulate-grad hooks), so only the largest tensor's gradient exists at a time. "
      "Needs --grad-accum 1.";
  o.values = {{"on", "on", ""}, {"off", "off", ""}};
  o.default_help = "off";
  o.reads = {"grad-accum", "effective-batch"};
  o.default_rule = unlisted_default("off");
  o.apply = [](ResolveState& st, const std::string& v) -> Status {
    if (v == "on" && st.in.workload.grad_accum > 1)
      return make_error(Errc::invalid_value, "--optimizer-in-backward",
                        "needs --grad-accum 1: the optimizer steps inside every micro-batch's backward "
                        "(torchtune raises the same)");
    st.in.workload.optimizer_in_backward = v == "on";
    return Ok{};
  };
  return o;
}

Option adamw_impl_option() {
  Option o = declare_option("adamw-impl", OptionKind::choice, "method", "AdamW impl.");
  o.help =
      "torch AdamW: foreach (adamw_torch, a state-sized temporary at the step) or fused "
      "(adamw_torch_fused)";
  o.details =
      "torch.optim.AdamW's implementation. foreach (_multi_tensor_adam, the HF Trainer's optim adamw_torch "
      "and torch's default on CUDA) builds sqrt(exp_avg_sq) for every parameter at once: one state-sized "
      "temporary list at the optimizer step. fused (_fused_adamw: optim adamw_torch_fused, torchtune's "
      "fused: True, the default of transformers 5 on PyTorch 2.8+) updates in one kernel without it. "
      "Changes the step's peak memory; the step time uses the stack's fitted optimizer efficiency either "
      "way.";
  o.values = {{"stack", "stack default", "as the stack profile does"},
              {"foreach", "foreach", "adamw_torch"},
              {"fused", "fused", "adamw_torch_fused"}};
  o.default_help = "stack";
  o.reads = {"optimizer"};
  o.default_rule = unlisted_default("stack");
  o.applies = only_torch_adamw;
  o.apply = stores_choice(
      &Workload::adamw_impl,
      {{"foreach", AdamwImpl::foreach}, {"fused", AdamwImpl::fused}, {"stack", AdamwImpl::stack}});
  return o;
}

Option kbit_upcast_option() {
  Option o = declare_option("kbit-upcast", OptionKind::choice, "method", "k-bit upcast");
  o.help = "QLoRA: peft prepare_model_for_kbit_training (fp32 embeddings, lm_head, norms and activations)";
  o.details =
      "peft's prepare_model_for_kbit_training casts every unquantized parameter to fp32, which makes the "
      "norm outputs, the 4-bit MLP outputs and the residual stream fp32 too. TRL's SFTTrainer called it "
      "from 2024-03 to 2025-08 (hf-trl-2024q1/q4: on); LLaMA-Factory prepares the model itself (off).";
  o.values = {{"stack", "stack default", "as the stack profile does"},
              {"on", "on", "fp32 upcast"},
              {"off", "off", "no upcast (LLaMA-Factory)"}};
  o.default_help = "stack";
  o.reads = {"method"};
  o.default_rule = unlisted_default("stack");
  o.applies = [](const ResolveState& st) -> std::string {
    return st.in.workload.method == Method::qlora ? "" : "applies only to --method qlora";
  };
  o.apply = stores_choice(&Workload::kbit_upcast,
                          {{"stack", Switch::stack}, {"on", Switch::on}, {"off", Switch::off}});
  return o;
}

Option packed_doc_len_option() {
  Option o = declare_option("packed-doc-len", OptionKind::real, "data", "Doc. length");
  o.help = "Packing with document masking: mean length of the documents inside a packed row";
  o.details =
      "With packing and document masking (TRL padding_free / position_ids, torchtune packed datasets) a "
      "token attends within its own document, so attention costs the document length, not the row "
      "length. Default: the dataset's mean length with --padding packing; without it, the row length.";
  o.unit = "tokens";
  o.lo = 1;
  o.hi = 1 << 22;
  o.default_help = "the dataset's mean length with --padding packing, else the row length";
  o.apply = stores(&Workload::packed_doc_len, real_value);
  return o;
}

Option model_kind_option() {
  Option o = declare_option("model-kind", OptionKind::choice, "gpu", "Step model");
  o.help = "How step time is predicted";
  o.details =
      "How step time is predicted: step (ftcost's model: every op's FLOPs and bytes on the GPU's "
      "peaks, or on your calibration, plus the stack profile's host overheads; any GPU) or paper (the "
      "paper's Eq. (2) fitted to its A40 sweeps; A40 only).";
  o.values = {{"step", "ftcost step model (any GPU)", "the step-time model"},
              {"paper", "paper's Eq. (2) (A40 only)", "Eq. (2), A40 only"}};
  o.default_help = "step";
  o.default_rule = unlisted_default("step");
  o.apply = stores(&Inputs::model_kind, text_value);
  return o;
}

Option routing_option() {
  Option o = declare_option("routing", OptionKind::text, "method", "Routing");
  o.help = "Expert load: uniform | paper-mixtral | paper-blackmamba (Fig. 11) | skew:S (Zipf exponent)";
  o.details =
      "How tokens spread over the experts (expert load): uniform; the paper's measured distributions "
      "for Mixtral or BlackMamba (Fig. 11, 8 experts); or skewed (Zipf exponent S: larger = more "
      "imbalanced). The busiest expert sets the pace of the per-expert loop.";
  o.values = {{"uniform", "uniform", "every expert gets the same share"},
              {"paper-mixtral", "paper: Mixtral (Fig. 11)", "measured before fine-tuning, 8 experts"},
              {"paper-blackmamba", "paper: BlackMamba (Fig. 11)", "measured before fine-tuning, 8 experts"},
              {"skew:0.5", "skewed, S = 0.5", "Zipf exponent 0.5"},
              {"skew:1", "skewed, S = 1", "Zipf exponent 1"},
              {"skew:2", "skewed, S = 2", "Zipf exponent 2"}};
  o.default_help = "uniform";
  o.reads = {"model"};
  o.default_rule = [](const ResolveState& st) {
    DefaultValue d = fixed_default("uniform", "tokens spread evenly over the experts");
    d.listed = st.in.model.is_moe();
    return d;
  };
  o.apply = [](ResolveState& st, const std::string& v) -> Status {
    if (st.in.model.is_moe()) {
      FTCOST_TRY(shares, expert_shares(v, st.in.model.moe.experts));
      st.in.expert_shares = shares;
    } else if (v != "uniform") {
      return make_error(Errc::invalid_value, "--routing", "applies only to MoE models");
    }
    st.in.routing = v;
    return Ok{};
  };
  return o;
}

}  // namespace

// The GPU memory kept free, the software stack and the attention kernel (its default is the stack's).
void add_stack_options(std::vector<Option>& table) {
  table.push_back(headroom_option());
  table.push_back(stack_option());
  table.push_back(attention_option());
}

// The modern-stack options (issue 13): kernels, offloading and memory savers.
void add_kernel_options(std::vector<Option>& table) {
  table.push_back(liger_option());
  table.push_back(offload_activations_option());
  table.push_back(host_ram_option());
  table.push_back(tiled_mlp_option());
  table.push_back(tiled_loss_option());
  table.push_back(optimizer_in_backward_option());
  table.push_back(adamw_impl_option());
  table.push_back(kbit_upcast_option());
  table.push_back(packed_doc_len_option());
}

// How step time is predicted, and the expert load.
void add_step_model_options(std::vector<Option>& table) {
  table.push_back(model_kind_option());
  table.push_back(routing_option());
}

}  // namespace ftcost

// ---- The price and measurement group of the option table (options_internal.hpp): your price or electricity,
// the staleness of offers, a calibration, a recorded run, and the provider and spot offers.
namespace ftcost {

namespace {

Option price_per_hour_option() {
  Option o = declare_option("price-per-hour", OptionKind::real, "price", "$/GPU-hour");
  o.help = "Your price in USD per GPU-hour (instead of the database's offers)";
  o.details = "Your price per GPU-hour, in US dollars.";
  o.unit = "USD per GPU-hour";
  o.lo = 0;
  o.hi = 10000;
  o.default_help = "the database's offers by the price rule; 0 = a GPU you own";
  o.invalidates = {"provider", "spot"};
  o.apply = stores(&Inputs::price_per_hour, real_value);
  return o;
}

Option electricity_option() {
  Option o = declare_option("electricity", OptionKind::real, "price", "Electricity");
  o.help = "A GPU you own: your electricity price, costed at the GPU's board power (TDP)";
  o.details =
      "For a GPU you own: the job's cost is its board power (TDP, from the GPU's spec sheet) times your "
      "electricity price. Leave it out to price the job with the database's cloud offers.";
  o.unit = "USD per kWh";
  o.lo = 0;
  o.hi = 10;
  o.reads = {"gpu"};
  o.checks_given = {"price-per-hour"};
  o.applies = [](const ResolveState& st) -> std::string {
    return st.given("price-per-hour") ? "cannot be combined with --price-per-hour (give one price)" : "";
  };
  o.apply = [](ResolveState& st, const std::string& v) -> Status {
    if (st.in.gpu.tdp_w <= 0)
      return make_error(
          Errc::invalid_value, "--electricity",
          st.in.gpu.id + " has no board power (TDP) in its spec; give --price-per-hour instead");
    st.in.electricity_usd_per_kwh = std::strtod(v.c_str(), nullptr);
    return Ok{};
  };
  return o;
}

Option stale_days_option() {
  Option o = declare_option("stale-days", OptionKind::count, "price", "Stale after");
  o.help = "Prices older than this many days are flagged stale";
  o.details = "Prices older than this are flagged as stale.";
  o.unit = "days";
  o.lo = 1;
  o.hi = 100000;
  o.default_help = "365";
  o.apply = stores(&Inputs::stale_days, count_value);
  return o;
}

Option calibration_option() {
  Option o = declare_option("calibration", OptionKind::id_or_path, "gpu", "Calibration");
  o.help = "Calibration JSON from ftcost-calibrate";
  o.details = "Measured kernel speeds of your GPU (ftcost-calibrate); estimates for that GPU use them.";
  o.id_list = "files";  // a path only: calibrations are files the user has (or uploaded to the page)
  o.in_url = false;
  o.reads = {"gpu"};
  o.apply = [](ResolveState& st, const std::string& v) -> Status {
    if (!st.reader)
      return make_error(Errc::io_error, "--calibration",
                        "file paths are not available here; load the file in the UI");
    FTCOST_TRY(text, st.reader(v));
    auto cal = parse_calibration(text, v);
    if (!cal.ok()) return cal.error();
    FTCOST_CHECK(check_against_spec(cal.value(), st.in.gpu.bf16_tflops, st.in.gpu.memory_bandwidth_gbps));
    const double cal_gib = static_cast<double>(cal->device.memory_bytes) / kGiB;
    if (std::fabs(cal_gib - st.in.gpu.memory_gib) > 0.1 * st.in.gpu.memory_gib)
      st.in.warnings.push_back("calibration " + v + " was measured on \"" + cal->device.name + "\" (" +
                               std::to_string(static_cast<int>(cal_gib)) +
                               " GiB), which does not look like " + st.in.gpu.id);
    st.in.calibration = std::make_shared<const Calibration>(std::move(cal).value());
    st.in.calibration_source = v;
    return Ok{};
  };
  return o;
}

// What --run reads (apply_runs, run.cpp): the GPU and --model-kind it checks, then max_batch_size and
// step_model at the estimate's batch, with the stack refitted: the model, the GPU, the stack, the
// calibration, the expert load and every workload setting. Every option above it but the prices.
std::vector<std::string> run_reads() {
  return {"model",
          "gpu",
          "method",
          "quant",
          "lora-rank",
          "lora-targets",
          "lora-dropout",
          "lora-variant",
          "rslora",
          "modules-to-save",
          "precision",
          "fp8",
          "optimizer",
          "checkpointing",
          "moe",
          "top-k",
          "seq",
          "dataset",
          "template-tokens",
          "max-length",
          "padding",
          "queries",
          "batch",
          "grad-accum",
          "effective-batch",
          "epochs",
          "headroom",
          "stack",
          "attention",
          "liger",
          "offload-activations",
          "host-ram",
          "tiled-mlp",
          "tiled-loss",
          "optimizer-in-backward",
          "adamw-impl",
          "kbit-upcast",
          "packed-doc-len",
          "objective",
          "precompute-ref",
          "num-generations",
          "completion-len",
          "num-iterations",
          "beta",
          "reward-s",
          "generation",
          "vllm-gpu-memory-utilization",
          "vllm-gpus",
          "model-kind",
          "routing",
          "calibration"};
}

Option run_option() {
  Option o = declare_option("run", OptionKind::id_or_path, "gpu", "Your run");
  o.help = "A recorded training run (ftcost.run/1, tools/ftcost_probe.py): refit the stack to it";
  o.details =
      "A short run of your own job recorded with tools/ftcost_probe.py (or imported from "
      "trainer_state.json): "
      "the stack profile's step-time (and, with memory figures, memory) parameters are refitted to it, and "
      "the "
      "estimate's range is the run's residual. The run must be on the GPU being estimated.";
  o.id_list = "files";
  o.in_url = false;
  o.reads = run_reads();
  o.applies = [](const ResolveState& st) -> std::string {
    return st.in.model_kind == "step" ? "" : "applies only to --model-kind step";
  };
  o.apply = [](ResolveState& st, const std::string& v) -> Status {
    FTCOST_TRY(run, load_run_for(st.in, v, st.db, st.reader));
    if (st.runs != nullptr) st.runs->push_back(std::move(run));
    return Ok{};
  };
  return o;
}

Option provider_option() {
  Option o = declare_option("provider", OptionKind::id_or_path, "price", "Provider");
  o.help = "Take the price from this provider id";
  o.details = "Take the price from this provider's offers for the GPU.";
  o.id_list = "providers";
  o.checks_given = {"price-per-hour", "electricity"};
  o.applies = [](const ResolveState& st) -> std::string {
    if (st.given("price-per-hour"))
      return "cannot be combined with --price-per-hour (your price replaces the provider's offers)";
    return st.given("electricity") ? "cannot be combined with --electricity (your GPU replaces the offers)"
                                   : "";
  };
  o.apply = [](ResolveState& st, const std::string& v) -> Status {
    const auto ids = option_ids("providers", st.db);
    if (std::find(ids.begin(), ids.end(), v) == ids.end())
      return make_error(Errc::unknown_id, "--provider",
                        "unknown provider \"" + v + "\"" + known_ids_hint(v, ids));
    st.in.provider = v;
    return Ok{};
  };
  return o;
}

Option spot_option() {
  Option o = declare_option("spot", OptionKind::toggle, "price", "Spot");
  o.help = "Also consider spot (interruptible) offers; the price rule picks among them and on-demand";
  o.details = "Use the provider's spot (interruptible) price instead of on-demand.";
  o.values = {{"on", "on", ""}, {"off", "off", ""}};
  o.default_help = "off";
  o.checks_given = {"price-per-hour", "electricity"};
  o.applies = [](const ResolveState& st) -> std::string {
    if (st.given("price-per-hour")) return "cannot be combined with --price-per-hour (your price is used)";
    return st.given("electricity") ? "cannot be combined with --electricity (your GPU is used)" : "";
  };
  o.apply = stores(&Inputs::spot, on_value);
  return o;
}

}  // namespace

// Prices, calibration and a recorded run.
void add_price_options(std::vector<Option>& table) {
  table.push_back(price_per_hour_option());
  table.push_back(electricity_option());
  table.push_back(stale_days_option());
  table.push_back(calibration_option());
  table.push_back(run_option());
  table.push_back(provider_option());
  table.push_back(spot_option());
}

}  // namespace ftcost

// ---- The multi-GPU groups of the option table (options_internal.hpp), the calculator's "More than one GPU"
// section (group "multi-gpu"; parallel.hpp turns them into a plan).
namespace ftcost {

namespace {

// What an unknown --node value is told: a path gets how to describe another machine.
std::string node_path_hint(const std::string& v) {
  if (!looks_like_path(v)) return "";
  return " (--node takes the id of a preset in gpu-db/nodes/, not a file: give --gpus, --nodes, "
         "--network and --network-gbit-per-gpu for another machine)";
}

// The GPUs that train together, all nodes.
int ranks(const ResolveState& st) { return st.in.multi.gpus * st.in.multi.nodes; }

// Options of a node's network (--nodes 2 or more) and of a node's GPUs together (2 or more in all).
std::string only_several_nodes(const ResolveState& st) {
  return st.in.multi.nodes > 1 ? "" : "applies only with --nodes 2 or more";
}

std::string only_several_gpus(const ResolveState& st) {
  return ranks(st) > 1 ? "" : "applies only with --gpus 2 or more";
}

// --nvme-gbps: only with an NVMe offload (ZeRO-Infinity); the value is checked by the plan's own parser.
std::string nvme_gbps_applies(const ResolveState& st) {
  const std::string& off = st.in.multi.offload;
  if (off == "optimizer-nvme" || off == "params-nvme") return "";
  return "applies only with --offload optimizer-nvme or params-nvme";
}

Status apply_nvme_gbps(ResolveState& st, const std::string& v) {
  FTCOST_CHECK(parse_nvme_gbps(json{{"nvme-gbps", v}}));
  st.in.multi.nvme_gbps = v;
  return Ok{};
}

// --zero3: only with --parallel zero3 or auto; the value is checked by the plan's own parser.
std::string zero3_applies(const ResolveState& st) {
  const std::string& p = st.in.multi.parallel;
  return p == "zero3" || p == "auto" ? "" : "applies only with --parallel zero3 (or auto)";
}

Status apply_zero3(ResolveState& st, const std::string& v) {
  FTCOST_CHECK(parse_zero3(v, "--zero3"));
  st.in.multi.zero3 = v;
  return Ok{};
}

// --parallel: the strategy's syntax (the same parser the plan uses, so the message names the flag and lists
// the strategies), then what the model rules out whatever the GPU count (check_parallel_for_model: ep:N on a
// dense model), refused here so that scale and compare refuse it as estimate does rather than fail at every
// GPU count.
Status apply_parallel(ResolveState& st, const std::string& v) {
  static const std::vector<std::string> plain = {"auto", "ddp",   "fsdp",  "fsdp-grad-op",
                                                 "hsdp", "zero1", "zero2", "zero3"};
  bool ok = std::find(plain.begin(), plain.end(), v) != plain.end();
  const std::size_t colon = v.find(':');
  if (!ok && colon != std::string::npos) {
    const std::string head = v.substr(0, colon);
    const std::string num = v.substr(colon + 1);
    bool digits = !num.empty() && num.size() <= 3;
    for (char c : num) digits = digits && c >= '0' && c <= '9';
    if ((head == "tp" || head == "ep" || head == "cp") && digits) {
      const int deg = std::atoi(num.c_str());
      if (deg < 2 || deg > 512)
        return make_error(Errc::out_of_range, "--parallel",
                          head + ":N needs N between 2 and 512, got " + num);
      ok = true;
    }
  }
  if (!ok)
    return make_error(Errc::invalid_value, "--parallel",
                      "must be one of ddp, fsdp, fsdp-grad-op, hsdp, zero1, zero2, zero3, tp:N, ep:N, cp:N "
                      "or auto, got \"" +
                          v + "\"");
  FTCOST_TRY(parsed, parse_parallel(v, "--parallel", {}));
  if (auto fit = check_parallel_for_model(parsed.strategy, parsed.degree, st.in.model); !fit.ok())
    return fit.error();
  st.in.multi.parallel = v;
  return Ok{};
}

// --fp8-all-gather: only with --fp8 tensorwise (torchao float8/config.py: the FP8 all-gather casts the weight
// with one tensorwise scale) on several GPUs.
std::string fp8_all_gather_applies(const ResolveState& st) {
  if (st.in.workload.fp8 != "tensorwise")
    return "applies only with --fp8 tensorwise (torchao's FSDP2 float8 all-gather uses tensorwise scales)";
  return only_several_gpus(st);
}

Option node_option() {
  Option o = declare_option("node", OptionKind::id_or_path, "multi-gpu", "Node");
  o.help = "Node preset (gpu-db/nodes/): GPUs per node, how they are joined, network, host RAM";
  o.details =
      "A machine shape with sources: its GPU count sets --gpus, its NVLink/PCIe and network set the "
      "communication links, its host RAM bounds offload. Its GPU must be --gpu.";
  o.id_list = "nodes";
  o.reads = {"gpu"};
  o.apply = [](ResolveState& st, const std::string& v) -> Status {
    const NodeShape* n = st.db.node(v);
    if (n == nullptr) {
      std::vector<std::string> ids;
      for (const auto& [id, x] : st.db.nodes()) ids.push_back(id);
      return make_error(Errc::unknown_id, "--node",
                        "unknown node preset \"" + v + "\"" + known_ids_hint(v, ids) + node_path_hint(v));
    }
    if (n->gpu != st.in.gpu.id)
      return make_error(Errc::invalid_value, "--node",
                        v + " holds " + n->gpu + " GPUs, but --gpu is " + st.in.gpu.id);
    st.in.multi.node = v;
    st.in.multi.gpus = n->gpus;
    return Ok{};
  };
  return o;
}

Option gpus_option() {
  Option o = declare_option("gpus", OptionKind::count, "multi-gpu", "GPUs per node");
  o.help = "GPUs per node";
  o.details = "GPUs in each node that train together; with --node, at most the preset's count.";
  o.unit = "GPUs";
  o.lo = 1;
  o.hi = 72;
  o.reads = {"node"};
  o.hi_rule = [](const ResolveState& st) {
    const NodeShape* n = st.in.multi.node.empty() ? nullptr : st.db.node(st.in.multi.node);
    return n ? static_cast<double>(n->gpus) : 72.0;
  };
  o.default_help = "1, or the --node preset's GPU count";
  o.default_rule = [](const ResolveState& st) {
    DefaultValue d = fixed_default(std::to_string(st.in.multi.gpus));
    d.listed = false;
    return d;
  };
  o.apply = stores(&MultiGpuRequest::gpus, count_value);
  return o;
}

Option nodes_option() {
  Option o = declare_option("nodes", OptionKind::count, "multi-gpu", "Nodes");
  o.help = "Nodes (each with --gpus GPUs); more than one needs a network (--node or --network)";
  o.details =
      "Machines that train together; the gradient and parameter traffic between them crosses the network.";
  o.unit = "nodes";
  o.lo = 1;
  o.hi = 4096;
  o.default_help = "1";
  o.default_rule = unlisted_default("1");
  o.apply = stores(&MultiGpuRequest::nodes, count_value);
  return o;
}

Option offload_option() {
  Option o = declare_option("offload", OptionKind::choice, "multi-gpu", "Offload");
  o.help = "Move optimizer states (or parameters too) to host RAM or NVMe";
  o.details =
      "DeepSpeed ZeRO-Offload / FSDP CPU offload: optimizer states and fp32 gradients (optimizer), or "
      "parameters as well (params: zero3 or fsdp), live in host RAM; the optimizer step runs on the CPU. "
      "ZeRO-Infinity (zero3): the same on the node's NVMe drives (optimizer-nvme, params-nvme), host RAM "
      "keeping only swap buffers; every step reads and writes them (--nvme-gbps).";
  o.values = {{"none", "none", "everything on the GPU"},
              {"optimizer", "optimizer", "optimizer states and fp32 gradients in host RAM (zero1/2/3)"},
              {"params", "params", "parameters too (zero3, fsdp)"},
              {"optimizer-nvme", "optimizer-nvme", "optimizer states and fp32 gradients on NVMe (zero3)"},
              {"params-nvme", "params-nvme", "parameters too, beyond 1e9 per GPU (zero3)"}};
  o.default_help = "none";
  o.default_rule = unlisted_default("none");
  o.apply = stores(&MultiGpuRequest::offload, text_value);
  return o;
}

Option nvme_gbps_option() {
  Option o = declare_option("nvme-gbps", OptionKind::text, "multi-gpu", "NVMe GB/s");
  o.help = "The node's NVMe read[,write] rate for ZeRO-Infinity, GB/s (e.g. 10,5)";
  o.details =
      "Sequential read and write rates of the node's NVMe drives together, as DeepSpeed's async I/O "
      "reaches them (one number: both). Used with --offload optimizer-nvme / params-nvme.";
  o.unit = "GB/s";
  o.default_help = "10,5 (DeepSpeed's measurement of 4 PCIe 4.0 SSDs in RAID-0)";
  o.not_applicable_warns = true;
  o.reads = {"offload"};
  o.applies = nvme_gbps_applies;
  o.apply = apply_nvme_gbps;
  return o;
}

Option parallel_option() {
  Option o = declare_option("parallel", OptionKind::text, "multi-gpu", "Strategy");
  o.help = "Multi-GPU strategy";
  o.details =
      "How the GPUs share the job: data parallel (ddp), sharded data parallel (fsdp, fsdp-grad-op, hsdp "
      "across nodes; DeepSpeed zero1/zero2/zero3), tensor(+sequence) parallel tp:N, expert parallel ep:N "
      "(MoE), context parallel cp:N; auto picks the fastest that fits.";
  o.values = {{"auto", "auto", "the fastest strategy that fits, and why"},
              {"ddp", "ddp", "PyTorch DDP: replicas, gradient all-reduce in buckets"},
              {"fsdp", "fsdp", "FSDP full shard: parameters, gradients, optimizer states sharded"},
              {"fsdp-grad-op", "fsdp-grad-op", "FSDP SHARD_GRAD_OP: gradients and optimizer sharded"},
              {"hsdp", "hsdp", "FSDP sharded in a node, replicated across nodes"},
              {"zero1", "zero1", "DeepSpeed ZeRO-1: optimizer states sharded"},
              {"zero2", "zero2", "DeepSpeed ZeRO-2: + gradients"},
              {"zero3", "zero3", "DeepSpeed ZeRO-3: + parameters"},
              {"tp:N", "tp:N", "Megatron tensor + sequence parallelism over N GPUs of a node"},
              {"ep:N", "ep:N", "expert parallelism over N GPUs (MoE)"},
              {"cp:N", "cp:N", "context (ring attention) parallelism over N GPUs"}};
  o.default_help = "auto with more than one GPU or with --offload";
  o.reads = {"model", "gpus", "nodes", "offload"};
  o.default_rule = [](const ResolveState& st) {
    if (ranks(st) <= 1 && st.in.multi.offload == "none") return DefaultValue{};
    return fixed_default("auto", "the fastest strategy that fits on " + std::to_string(ranks(st)) +
                                     (ranks(st) == 1 ? " GPU" : " GPUs"));
  };
  o.apply = apply_parallel;
  return o;
}

Option zero3_option() {
  Option o = declare_option("zero3", OptionKind::text, "multi-gpu", "ZeRO-3 cache");
  o.help =
      "DeepSpeed ZeRO-3 cache settings, KEY=VALUE,... (e.g. "
      "max_live_parameters=1e9,prefetch_bucket_size=auto)";
  o.details =
      "The zero_optimization keys of your DeepSpeed config that decide what stays gathered on each GPU: "
      "stage3_max_live_parameters, stage3_max_reuse_distance, stage3_prefetch_bucket_size, "
      "stage3_param_persistence_threshold (elements; auto = the HF Trainer's 0.9 H^2 and 10 H) and "
      "zero_hpz_partition_size (ZeRO++ hpZ). Without it ftcost assumes DeepSpeed's defaults with the HF "
      "Trainer's auto values, and the memory range's upper end covers a look-ahead up to "
      "max_live_parameters.";
  o.default_help = "DeepSpeed's defaults, auto bucket and persistence (assumed)";
  o.not_applicable_warns = true;
  o.reads = {"parallel"};
  o.applies = zero3_applies;
  o.apply = apply_zero3;
  return o;
}

Option network_option() {
  Option o = declare_option("network", OptionKind::choice, "multi-gpu", "Network");
  o.help = "Network between nodes (overrides the --node preset's)";
  o.details = "The fabric between nodes: InfiniBand or RoCE (GPUDirect RDMA) or plain Ethernet (TCP).";
  o.values = {{"infiniband", "InfiniBand", ""},
              {"roce", "RoCE", ""},
              {"ethernet", "Ethernet", ""},
              {"none", "none", "a single node"}};
  o.default_help = "the --node preset's";
  o.not_applicable_warns = true;  // like --moe on a dense model: ignored with a warning
  o.reads = {"nodes"};
  o.applies = only_several_nodes;
  o.apply = stores(&MultiGpuRequest::network, text_value);
  return o;
}

Option network_gbit_per_gpu_option() {
  Option o = declare_option("network-gbit-per-gpu", OptionKind::real, "multi-gpu", "Net. per GPU");
  o.help = "NIC line rate available to each GPU, Gbit/s (with --nodes 2 or more)";
  o.details = "The node's network bandwidth divided by its GPUs (8 x 400 Gb/s InfiniBand on 8 GPUs: 400).";
  o.unit = "Gbit/s";
  o.lo = 0.1;
  o.hi = 10000;
  o.default_help = "the --node preset's";
  o.not_applicable_warns = true;  // like --moe on a dense model: ignored with a warning
  o.reads = {"nodes"};
  o.applies = only_several_nodes;
  o.apply = stores(&MultiGpuRequest::network_gbit_per_gpu, real_value);
  return o;
}

Option host_memory_gbps_option() {
  Option o = declare_option("host-memory-gbps", OptionKind::real, "multi-gpu", "Host memory");
  o.help =
      "The node's host memory bandwidth, GB/s (all channels at line rate): bounds PCIe GPUs without "
      "peer-to-peer";
  o.details =
      "Without PCIe peer-to-peer (GeForce cards) NCCL stages GPU-to-GPU traffic through host memory, "
      "which every GPU of the node then shares: 8 channels of DDR4-3200 are 204.8 GB/s.";
  o.unit = "GB/s";
  o.lo = 1;
  o.hi = 100000;
  o.default_help = "the --node preset's, else 204.8 (assumed)";
  o.not_applicable_warns = true;
  o.reads = {"gpus", "nodes"};
  o.applies = only_several_gpus;
  o.apply = stores(&MultiGpuRequest::host_memory_gbps, real_value);
  return o;
}

Option sequence_parallel_option() {
  Option o = declare_option("sequence-parallel", OptionKind::count, "multi-gpu", "Sequence parallel");
  o.help =
      "DeepSpeed Ulysses sequence parallelism: split each sample's sequence over N GPUs of a node "
      "(with --parallel zero1, zero2 or zero3)";
  o.details =
      "Each rank holds 1/N of the tokens; attention all-to-alls the sequence for 1/N of the heads "
      "(deepspeed/runtime/sequence_parallel/ulysses_sp.py), as ArcticTraining, ms-swift and "
      "LLaMA-Factory run it. N divides the GPUs and the attention heads.";
  o.unit = "GPUs";
  o.lo = 1;
  o.hi = 64;
  o.default_help = "1 (off)";
  o.reads = {"gpus", "nodes"};
  o.applies = only_several_gpus;
  o.apply = stores(&MultiGpuRequest::sequence_parallel, count_value);
  return o;
}

Option fp8_all_gather_option() {
  Option o = declare_option("fp8-all-gather", OptionKind::toggle, "multi-gpu", "FP8 all-gather");
  o.help = "FSDP2 all-gathers the float8 linears' weights in FP8, 1 byte per parameter (--fp8 tensorwise)";
  o.details =
      "torchao's Float8LinearConfig(enable_fsdp_float8_all_gather=True): each float8 linear's weight is a "
      "WeightWithDynamicFloat8CastTensor whose fsdp_pre_all_gather casts the local shard to FP8 with a "
      "tensorwise scale, so FSDP2's forward and backward all-gathers move 1 B per parameter of those "
      "weights instead of 2 (torchao float8/fsdp_utils.py). Only with --parallel fsdp or hsdp; the "
      "embeddings, norms, router and lm_head are gathered as before.";
  o.values = {{"off", "off", ""}, {"on", "on", ""}};
  o.default_help = "off";
  o.reads = {"fp8", "gpus", "nodes"};
  o.default_rule = unlisted_default("off");
  o.applies = fp8_all_gather_applies;
  o.apply = stores(&Workload::fp8_all_gather, on_value);
  return o;
}

}  // namespace

// The node, the GPUs and nodes, offloading and the strategy.
void add_parallel_options(std::vector<Option>& table) {
  table.push_back(node_option());
  table.push_back(gpus_option());
  table.push_back(nodes_option());
  table.push_back(offload_option());
  table.push_back(nvme_gbps_option());
  table.push_back(parallel_option());
  table.push_back(zero3_option());
}

// The links between GPUs and nodes, Ulysses sequence parallelism and FP8 all-gathers.
void add_network_options(std::vector<Option>& table) {
  table.push_back(network_option());
  table.push_back(network_gbit_per_gpu_option());
  table.push_back(host_memory_gbps_option());
  table.push_back(sequence_parallel_option());
  table.push_back(fp8_all_gather_option());
}

}  // namespace ftcost
