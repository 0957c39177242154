// The model, GPU and method groups of the option table (options_internal.hpp): --model, --gpu, --method and
// the PEFT settings.
#include "ftcost/suggest.hpp"
#include "options_internal.hpp"

#include <algorithm>
#include <cctype>

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
