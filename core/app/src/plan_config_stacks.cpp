// The per-stack config writers of `ftcost plan --config` (ftcost/plan_config.hpp): TRL, axolotl,
// LLaMA-Factory, torchtune and Unsloth, each from the resolved, estimated job (config_detail::Job). The key
// names and the stacks' source files and functions they come from are listed at the top of plan_config.cpp
// and in docs/sources/plan-configs.md; the plumbing they share (the job, YAML writing, PEFT keys, the HF
// Trainer's common keys, accelerate and DeepSpeed files) is in plan_config.cpp.
#include "ftcost/enum_names.hpp"
#include "ftcost/memory.hpp"
#include "plan_config_internal.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <utility>

namespace ftcost::config_detail {

namespace {

const PeftKeys kTrlPeft{"use_dora", "use_rslora", "lora_modules_to_save"};
const PeftKeys kAxolotlPeft{"peft_use_dora", "peft_use_rslora", "lora_modules_to_save"};
const PeftKeys kLlamafactoryPeft{"use_dora", "use_rslora", "additional_target", true};
const PeftKeys kTorchtunePeft{"use_dora", nullptr, nullptr};
const PeftKeys kUnslothPeft{"use_dora", "use_rslora", "modules_to_save"};

std::vector<std::string> expand_all_linear(const std::vector<std::string>& t) {
  if (t.size() == 1 && t[0] == "all-linear")
    return {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"};
  return t;
}

// The TRL CLI command of the job's objective (trl/scripts/{sft,dpo,kto,grpo}.py, `trl <command> --config`);
// ORPO and SimPO live in trl.experimental, with no CLI command.
Result<std::string> trl_command(const Job& j) {
  const Objective o = j.in.workload.objective.objective;
  if (o == Objective::orpo || o == Objective::simpo)
    return refuse("trl",
                  std::string(objective_name(o)) +
                      " runs from trl.experimental (ORPOTrainer, CPOTrainer with loss_type=\"simpo\") in a "
                      "script of your own; the trl CLI has no command for it (sft, dpo, kto, grpo)");
  return std::string(o == Objective::sft ? "sft" : objective_name(o));
}

// The objective's keys (DPOConfig, KTOConfig, GRPOConfig; docs/sources/trl-preference.md).
void trl_objective_keys(Yaml& y, const Job& j) {
  const ObjectiveConfig& c = j.in.workload.objective;
  if (c.preference()) {
    y.kv("precompute_ref_log_probs", yb(c.precompute_ref));
    return;
  }
  if (!c.grpo()) return;
  y.comment("GRPO: reward functions of trl/scripts/grpo.py, or your own in a script");
  y.kv("reward_funcs", ylist({"REPLACE_WITH_YOUR_REWARD_FUNCS"}));
  y.kv("num_generations", yi(c.generations));
  y.kv("max_completion_length", yi(static_cast<std::int64_t>(std::llround(c.completion_len))));
  y.kv("num_iterations", yi(c.iterations));
  y.kv("beta", yn(c.beta));
  y.kv("use_vllm", yb(c.generation != Generation::hf));
  if (c.generation == Generation::hf) return;
  y.kv("vllm_mode", yq(c.generation == Generation::vllm_server ? "server" : "colocate"));
  if (c.generation == Generation::vllm_colocate)
    y.kv("vllm_gpu_memory_utilization", yn(c.vllm_memory_fraction));
  else
    y.comment("start the server first on its own GPUs: trl vllm-serve --model MODEL --data_parallel_size " +
              std::to_string(c.vllm_gpus));
}

Result<PlanConfig> trl_config(const Job& j) {
  PlanConfig pc;
  Yaml y;
  FTCOST_TRY(command, trl_command(j));
  const bool sft = command == "sft";
  const std::string config = sft                ? "SFTConfig"
                             : command == "dpo" ? "DPOConfig"
                             : command == "kto" ? "KTOConfig"
                                                : "GRPOConfig";
  FTCOST_CHECK(hf_begin(
      j, "trl",
      "TRL: trl " + command + " --config THIS_FILE (ScriptArguments + " + config + " + ModelConfig keys)", pc,
      y));
  y.kv("model_name_or_path", yq(j.model_repo));
  y.kv("dtype", hf_dtype(j));
  y.kv("attn_implementation", hf_attention(j));
  y.comment("your data: a Hugging Face dataset id or local path");
  y.kv("dataset_name", yq("REPLACE_WITH_YOUR_DATASET"));
  y.kv("output_dir", yq("out/" + j.in.model.id + "-" + method_of(j)));
  if (is_lora(j)) {
    FTCOST_TRY(t, peft_targets(j, "trl"));
    y.kv("use_peft", "true");
    y.kv("lora_r", yi(j.in.workload.lora_rank));
    y.comment("lora_alpha does not change memory or speed; 2 x r is a common choice");
    y.kv("lora_alpha", yi(2 * j.in.workload.lora_rank));
    y.comment(
        "TRL's ModelConfig defaults lora_dropout to 0.05 (trl/trainer/model_config.py); the estimate's "
        "value:");
    y.kv("lora_dropout", json(j.in.workload.lora_dropout).dump());
    y.kv("lora_target_modules", ylist(t));
    FTCOST_CHECK(peft_variant_supported(j, "trl", kTrlPeft));
    kv_peft_variant(y, j, kTrlPeft);
  }
  if (is_qlora(j)) {
    if (j.in.workload.quant == Quant::int8) {
      y.kv("load_in_8bit", "true");
    } else {
      y.kv("load_in_4bit", "true");
      y.kv("bnb_4bit_quant_type", "nf4");
      y.kv("use_bnb_nested_quant", yb(j.in.workload.quant == Quant::nf4_dq));
      // FSDP / ZeRO-3 shard the quantized weights only when they are stored in the compute dtype
      if (j.ranks > 1 && (is_fsdp(j) || j.strategy == "hsdp" || j.strategy == "zero3"))
        y.kv("bnb_4bit_quant_storage", hf_dtype(j));
    }
  }
  y.kv("per_device_train_batch_size", yi(j.micro));
  y.kv("gradient_accumulation_steps", yi(j.accum));
  y.kv("num_train_epochs", yn(j.in.workload.epochs));
  if (j.in.workload.objective.grpo()) {
    y.comment("GRPOConfig (TRL 1.10) has no max_prompt_length: the estimate's prompts are " +
              std::to_string(std::llround(j.seq)) + " tokens");
  } else {
    y.kv("max_length", yi(static_cast<std::int64_t>(std::llround(j.seq))));
  }
  if (sft) y.kv("packing", yb(j.packing));
  trl_objective_keys(y, j);
  y.kv("gradient_checkpointing", yb(j.in.workload.checkpointing));
  hf_precision(y, j);
  y.kv("optim", hf_optim(j, "trl"));
  if (j.in.workload.loss_kernel == LossKernel::liger) y.kv("use_liger_kernel", "true");
  hf_deepspeed(y, j);
  y.kv("report_to", "none");
  const std::string file = "trl_" + command + ".yaml";
  pc.files.push_back({"trl", file, "yaml", y.text});
  pc.files.push_back(accelerate_file(j, "deepspeed.json"));
  if (is_zero(j)) pc.files.push_back(deepspeed_file(j));
  pc.command = "accelerate launch --config_file accelerate.yaml -m trl.cli " + command + " --config " + file;
  return pc;
}

Result<PlanConfig> axolotl_config(const Job& j) {
  PlanConfig pc;
  Yaml y;
  FTCOST_CHECK(hf_begin(j, "axolotl", "axolotl: axolotl train THIS_FILE", pc, y));
  if (j.strategy == "hsdp")
    return refuse("axolotl", "hybrid sharding is not an axolotl fsdp_config setting here");
  y.kv("base_model", yq(j.model_repo));
  if (is_qlora(j)) {
    if (j.in.workload.quant == Quant::int8)
      y.kv("load_in_8bit", "true");
    else
      y.kv("load_in_4bit", "true");
    y.kv("adapter", j.in.workload.quant == Quant::int8 ? "lora" : "qlora");
  } else if (is_lora(j)) {
    y.kv("adapter", "lora");
  }
  if (is_lora(j)) {
    FTCOST_TRY(t, peft_targets(j, "axolotl"));
    y.kv("lora_r", yi(j.in.workload.lora_rank));
    y.kv("lora_alpha", yi(2 * j.in.workload.lora_rank));
    y.kv("lora_dropout", j.in.workload.lora_dropout > 0 ? json(j.in.workload.lora_dropout).dump() : "0.0");
    if (t.size() == 1 && t[0] == "all-linear")
      y.kv("lora_target_linear", "true");
    else
      y.kv("lora_target_modules", ylist(t));
    FTCOST_CHECK(peft_variant_supported(j, "axolotl", kAxolotlPeft));
    kv_peft_variant(y, j, kAxolotlPeft);
  }
  y.section("datasets");
  y.text += "  - path: \"REPLACE_WITH_YOUR_DATASET\"\n    type: alpaca\n";
  y.kv("output_dir", yq("out/" + j.in.model.id + "-" + method_of(j)));
  y.kv("sequence_len", yi(static_cast<std::int64_t>(std::llround(j.seq))));
  y.kv("sample_packing", yb(j.packing));
  y.kv("micro_batch_size", yi(j.micro));
  y.kv("gradient_accumulation_steps", yi(j.accum));
  y.kv("num_epochs", yn(j.in.workload.epochs));
  y.kv("optimizer", hf_optim(j, "axolotl"));
  y.kv("learning_rate", "0.0002");
  y.kv("gradient_checkpointing", yb(j.in.workload.checkpointing));
  hf_precision(y, j);
  // without flash_attention axolotl leaves transformers' default attention, SDPA
  y.kv("flash_attention", yb(flash_attention(j) && fa2_runs(j)));
  hf_deepspeed(y, j);
  if (j.ranks > 1 && is_fsdp(j)) {
    y.kv("fsdp_version", "2");
    y.section("fsdp_config");
    y.kv("reshard_after_forward", yb(j.strategy == "fsdp"), 2);
    y.kv("offload_params", yb(j.offload == "params"), 2);
    y.kv("auto_wrap_policy", "TRANSFORMER_BASED_WRAP", 2);
    y.kv("state_dict_type", "SHARDED_STATE_DICT", 2);
  }
  pc.files.push_back({"axolotl", "axolotl.yaml", "yaml", y.text});
  if (is_zero(j)) pc.files.push_back(deepspeed_file(j));
  pc.command = j.ranks > 1 ? "axolotl train axolotl.yaml --num-processes " + std::to_string(j.ranks)
                           : "axolotl train axolotl.yaml";
  return pc;
}

// LLaMA-Factory's chat template of a model: src/llamafactory/extras/constants.py register_model_group (its
// model registry: registry name, Hugging Face repo, the group's template) for the presets it lists. The
// function puts a group's template into DEFAULT_TEMPLATE only for names with -Chat, -Distill, -Instruct or
// -Thinking: a base model has no chat template there, and the README's note on templates lets a base model
// train with default (or alpaca, vicuna); an Instruct / Chat model needs its own.
struct LfModel {
  const char* name;  // LLaMA-Factory's registry name
  const char* tmpl;  // the group's template (data/template.py register_template)
};
const LfModel* llamafactory_model(const std::string& repo) {
  static const std::map<std::string, LfModel> m = {
      {"meta-llama/Llama-3.3-70B-Instruct", {"Llama-3.3-70B-Instruct", "llama3"}},
      {"meta-llama/Meta-Llama-3.1-8B", {"Llama-3.1-8B", "llama3"}},
      {"meta-llama/Meta-Llama-3.1-70B", {"Llama-3.1-70B", "llama3"}},
      {"meta-llama/Meta-Llama-3.1-405B", {"Llama-3.1-405B", "llama3"}},
      {"meta-llama/Llama-3.2-3B", {"Llama-3.2-3B", "llama3"}},
      {"meta-llama/Llama-2-7b-hf", {"Llama-2-7B", "llama2"}},
      {"meta-llama/Llama-2-13b-hf", {"Llama-2-13B", "llama2"}},
      {"meta-llama/Llama-2-70b-hf", {"Llama-2-70B", "llama2"}},
      {"mistralai/Mistral-7B-v0.1", {"Mistral-7B-v0.1", "mistral"}},
      {"mistralai/Mixtral-8x7B-v0.1", {"Mixtral-8x7B-v0.1", "mistral"}},
      {"mistralai/Mixtral-8x22B-v0.1", {"Mixtral-8x22B-v0.1", "mistral"}},
      {"Qwen/Qwen2.5-7B", {"Qwen2.5-7B", "qwen"}},
      {"Qwen/Qwen2.5-14B", {"Qwen2.5-14B", "qwen"}},
      {"Qwen/Qwen2.5-32B", {"Qwen2.5-32B", "qwen"}},
      {"Qwen/Qwen2.5-72B", {"Qwen2.5-72B", "qwen"}},
      {"Qwen/Qwen2-57B-A14B", {"Qwen2-MoE-57B-A14B", "qwen"}},
      {"Qwen/Qwen3-8B", {"Qwen3-8B-Thinking", "qwen3"}},
      {"Qwen/Qwen3-30B-A3B", {"Qwen3-30B-A3B-Thinking", "qwen3"}},
      {"google/gemma-2-9b", {"Gemma-2-9B", "gemma2"}},
      {"openai/gpt-oss-20b", {"GPT-OSS-20B-Thinking", "gpt_oss"}},
      {"openai/gpt-oss-120b", {"GPT-OSS-120B-Thinking", "gpt_oss"}},
      {"microsoft/Phi-3.5-MoE-instruct", {"Phi-3.5-MoE-42B-A6.6B-instruct", "phi"}},
      {"deepseek-ai/deepseek-moe-16b-base", {"DeepSeek-MoE-16B-Base", "deepseek"}},
      {"deepseek-ai/DeepSeek-V2-Lite", {"DeepSeek-V2-16B-Base", "deepseek"}},
      {"databricks/dbrx-base", {"DBRX-132B-Base", "dbrx"}}};
  auto it = m.find(repo);
  return it == m.end() ? nullptr : &it->second;
}

// The `template` line (or none) and the comment that says why.
void llamafactory_template(Yaml& y, const Job& j) {
  const LfModel* lf = llamafactory_model(j.model_repo);
  if (lf != nullptr && contains_any(lf->name, {"-Chat", "-Distill", "-Instruct", "-Thinking", "-instruct"})) {
    y.comment(std::string("the model's chat template (LLaMA-Factory's registry: ") + lf->name + ")");
    y.kv("template", lf->tmpl);
    return;
  }
  if (lf != nullptr) {
    y.comment(
        std::string("a base model: default (or alpaca, vicuna); to train it as a chat model served with its "
                    "family's chat template, use ") +
        lf->tmpl);
    y.kv("template", "default");
    return;
  }
  std::string lower = j.model_repo;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (contains_any(lower, {"instruct", "chat"})) {
    // data/template.py get_template_and_fix_tokenizer: no template parses the tokenizer's chat template
    y.comment(
        "a chat model LLaMA-Factory's registry does not list: no template, so LLaMA-Factory parses the "
        "tokenizer's chat template");
    return;
  }
  y.comment("a base model: default (or alpaca, vicuna)");
  y.kv("template", "default");
}

Result<PlanConfig> llamafactory_config(const Job& j) {
  PlanConfig pc;
  Yaml y;
  FTCOST_CHECK(hf_begin(j, "llamafactory", "LLaMA-Factory: llamafactory-cli train THIS_FILE", pc, y));
  y.kv("model_name_or_path", yq(j.model_repo));
  if (is_qlora(j)) {
    y.kv("quantization_bit", j.in.workload.quant == Quant::int8 ? "8" : "4");
    y.kv("quantization_method", "bnb");
    if (j.in.workload.quant != Quant::int8)
      y.kv("double_quantization", yb(j.in.workload.quant == Quant::nf4_dq));
  }
  y.kv("flash_attn", !flash_attention(j) ? "disabled" : fa2_runs(j) ? "fa2" : "sdpa");
  y.kv("disable_gradient_checkpointing", yb(!j.in.workload.checkpointing));
  if (j.in.workload.loss_kernel == LossKernel::liger) y.kv("enable_liger_kernel", "true");
  y.kv("stage", "sft");
  y.kv("do_train", "true");
  y.kv("finetuning_type", is_lora(j) ? "lora" : "full");
  if (is_lora(j)) {
    FTCOST_TRY(t, peft_targets(j, "llamafactory"));
    y.kv("lora_rank", yi(j.in.workload.lora_rank));
    y.kv("lora_alpha", yi(2 * j.in.workload.lora_rank));
    kv_lora_dropout(y, j);
    std::string joined;
    for (const auto& s : t) joined += (joined.empty() ? "" : ",") + s;
    y.kv("lora_target", t.size() == 1 && t[0] == "all-linear" ? "all" : joined);
    FTCOST_CHECK(peft_variant_supported(j, "llamafactory", kLlamafactoryPeft));
    kv_peft_variant(y, j, kLlamafactoryPeft);
  }
  y.kv("dataset", "REPLACE_WITH_YOUR_DATASET");
  llamafactory_template(y, j);
  y.kv("cutoff_len", yi(static_cast<std::int64_t>(std::llround(j.seq))));
  y.kv("packing", yb(j.packing));
  y.kv("output_dir", yq("out/" + j.in.model.id + "-" + method_of(j)));
  y.kv("per_device_train_batch_size", yi(j.micro));
  y.kv("gradient_accumulation_steps", yi(j.accum));
  y.kv("num_train_epochs", yn(j.in.workload.epochs));
  y.kv("optim", hf_optim(j, "llamafactory"));
  hf_precision(y, j);
  hf_deepspeed(y, j);
  y.kv("report_to", "none");
  pc.files.push_back({"llamafactory", "llamafactory.yaml", "yaml", y.text});
  if (is_zero(j)) pc.files.push_back(deepspeed_file(j));
  if (j.ranks > 1 && !is_zero(j) && j.strategy != "ddp") {
    pc.files.push_back(accelerate_file(j, "deepspeed.json"));
    pc.command = "accelerate launch --config_file accelerate.yaml src/train.py llamafactory.yaml";
  } else {
    pc.command =
        std::string(j.ranks > 1 ? "FORCE_TORCHRUN=1 " : "") + "llamafactory-cli train llamafactory.yaml";
  }
  return pc;
}

// torchtune model builders (torchtune/models/<family>/__init__.py) for the presets it has.
struct TtModel {
  std::string family, base;
  bool qlora;
};
const TtModel* torchtune_model(const std::string& id) {
  static const std::map<std::string, TtModel> m = {{"llama-3.1-8b", {"llama3_1", "llama3_1_8b", true}},
                                                   {"llama-3.1-70b", {"llama3_1", "llama3_1_70b", true}},
                                                   {"llama-3.1-405b", {"llama3_1", "llama3_1_405b", true}},
                                                   {"llama-3.2-3b", {"llama3_2", "llama3_2_3b", true}},
                                                   {"llama-3.3-70b", {"llama3_3", "llama3_3_70b", true}},
                                                   {"llama-2-7b", {"llama2", "llama2_7b", true}},
                                                   {"llama-2-13b", {"llama2", "llama2_13b", true}},
                                                   {"llama-2-70b", {"llama2", "llama2_70b", true}},
                                                   {"mistral-7b", {"mistral", "mistral_7b", true}},
                                                   {"qwen2.5-7b", {"qwen2_5", "qwen2_5_7b_base", false}},
                                                   {"qwen2.5-14b", {"qwen2_5", "qwen2_5_14b_base", false}},
                                                   {"qwen2.5-32b", {"qwen2_5", "qwen2_5_32b_base", false}},
                                                   {"qwen2.5-72b", {"qwen2_5", "qwen2_5_72b_base", false}},
                                                   {"qwen3-8b", {"qwen3", "qwen3_8b_base", false}}};
  auto it = m.find(id);
  return it == m.end() ? nullptr : &it->second;
}

// torchtune's optimizer components; the others are torch's AdamW (adamw_8bit is refused before: torchtune's
// configs have no bnb AdamW8bit).
constexpr EnumName<Optimizer> kTorchtuneOptimizers[] = {
    {Optimizer::paged_adamw_8bit, "bitsandbytes.optim.PagedAdamW8bit"},
    {Optimizer::paged_adamw, "bitsandbytes.optim.PagedAdamW"},
    {Optimizer::sgd, "torch.optim.SGD"}};

std::string torchtune_optimizer(const Job& j) {
  return enum_name(kTorchtuneOptimizers, j.in.workload.optimizer, "torch.optim.AdamW");
}

// The optimizer section; torch's AdamW fused as torchtune's own recipe configs set it (recipes/configs/*/
// *_full.yaml, *_lora.yaml): one kernel, no foreach temporary at the step (the torchtune profile's
// adamw_implementation), unless --adamw-impl foreach asked for the temporary.
void torchtune_optimizer_section(Yaml& y, const Job& j) {
  const std::string component = torchtune_optimizer(j);
  y.section("optimizer");
  y.kv("_component_", component, 2);
  if (component == "torch.optim.AdamW") y.kv("fused", yb(adamw_fused(j.in.stack, j.in.workload)), 2);
}

// torchtune's distributed recipes offload through FSDP2's CPUOffloadPolicy (parameters, gradients and the
// optimizer step together, fsdp_cpu_offload): no optimizer-only or NVMe offload.
bool torchtune_offload_supported(const std::string& offload) {
  return offload == "none" || offload == "params";
}

// What torchtune's recipes cannot run (tm: the model's builder, or nullptr).
Status torchtune_checks(const Job& j, const TtModel* tm) {
  if (tm == nullptr) return refuse("torchtune", "torchtune has no model builder for " + j.in.model.id);
  if (j.ranks > 1 && j.strategy != "fsdp")
    return refuse("torchtune", "its distributed recipes shard with FSDP2 only (no " + j.strategy + ")");
  if (!torchtune_offload_supported(j.offload))
    return refuse("torchtune", "no DeepSpeed-style optimizer or NVMe offload (FSDP's CPU offload: params)");
  if (is_qlora(j) && !tm->qlora) return refuse("torchtune", "no QLoRA builder for " + j.in.model.id);
  if (is_qlora(j) && j.in.workload.quant != Quant::nf4_dq)
    return refuse("torchtune", "its QLoRA is torchao NF4 (scalers quantized); give --quant nf4-dq");
  if (j.in.workload.optimizer == Optimizer::sgd_momentum || j.in.workload.optimizer == Optimizer::adamw_8bit)
    return refuse("torchtune",
                  "its configs use torch.optim.AdamW / SGD or bitsandbytes PagedAdamW(8bit) (give "
                  "--optimizer adamw, sgd, paged-adamw or paged-adamw-8bit)");
  if (j.in.workload.optimizer_in_backward && j.accum > 1)
    return refuse("torchtune", "optimizer_in_bwd requires gradient_accumulation_steps=1");
  const LoraTargets& t = j.in.workload.lora_targets;
  const bool all_linear = std::find(t.names.begin(), t.names.end(), "all-linear") != t.names.end();
  if (is_lora(j) && all_linear && j.in.model.is_moe()) return refuse("torchtune", "no MoE model builders");
  if (is_lora(j) && !all_linear &&
      (t.mlp_down || t.mlp_gate_up || t.expert_gate_up || t.expert_down || t.router || t.mamba))
    return refuse("torchtune", "LoRA on the MLP is all of it or none (apply_lora_to_mlp)");
  if (std::floor(j.in.workload.epochs) != j.in.workload.epochs)
    return refuse("torchtune", "its epochs are whole numbers (give --epochs as a whole number)");
  return Ok{};
}

Result<PlanConfig> torchtune_config(const Job& j) {
  const TtModel* tm = torchtune_model(j.in.model.id);
  FTCOST_CHECK(torchtune_checks(j, tm));
  const LoraTargets& t = j.in.workload.lora_targets;
  const bool all_linear = std::find(t.names.begin(), t.names.end(), "all-linear") != t.names.end();
  PlanConfig pc;
  pc.stack = "torchtune";
  Yaml y;
  const std::string recipe = std::string(is_lora(j) ? "lora_finetune_" : "full_finetune_") +
                             (j.ranks > 1 ? "distributed" : "single_device");
  header(y, j, "torchtune overrides for recipe " + recipe + ": merge into a copied config (tune cp)");
  y.section("model");
  const std::string builder = std::string(is_qlora(j) ? "qlora_" : is_lora(j) ? "lora_" : "") + tm->base;
  y.kv("_component_", "torchtune.models." + tm->family + "." + builder, 2);
  if (is_lora(j)) {
    const bool all = all_linear;
    std::vector<std::string> attn;
    if (all || t.q) attn.emplace_back("q_proj");
    if (all || t.k) attn.emplace_back("k_proj");
    if (all || t.v) attn.emplace_back("v_proj");
    if (all || t.o) attn.emplace_back("output_proj");
    y.kv("lora_attn_modules", ylist(attn), 2);
    y.kv("apply_lora_to_mlp", yb(all || t.mlp), 2);
    y.kv("apply_lora_to_output", yb(t.lm_head), 2);
    y.kv("lora_rank", yi(j.in.workload.lora_rank), 2);
    y.kv("lora_alpha", yi(2 * j.in.workload.lora_rank), 2);
    kv_lora_dropout(y, j, 2);
    FTCOST_CHECK(peft_variant_supported(j, "torchtune", kTorchtunePeft));
    kv_peft_variant(y, j, kTorchtunePeft, 2);
  }
  y.section("tokenizer");
  y.kv("max_seq_len", yi(static_cast<std::int64_t>(std::llround(j.seq))), 2);
  y.section("dataset");
  y.kv("packed", yb(j.packing), 2);
  y.kv("batch_size", yi(j.micro));
  y.kv("gradient_accumulation_steps", yi(j.accum));
  y.kv("epochs", yi(static_cast<std::int64_t>(j.in.workload.epochs)));
  y.kv("dtype", j.in.workload.precision == "fp16"   ? "fp16"
                : j.in.workload.precision == "fp32" ? "fp32"
                                                    : "bf16");
  y.kv("enable_activation_checkpointing", yb(j.in.workload.checkpointing));
  y.kv("enable_activation_offloading", yb(j.in.workload.offloads(j.in.stack.offload_checkpoints)));
  torchtune_optimizer_section(y, j);
  if (j.in.workload.optimizer_in_backward) y.kv("optimizer_in_bwd", "true");
  pc.files.push_back({"torchtune", "torchtune_overrides.yaml", "yaml", y.text});
  pc.command = "tune run " +
               (j.ranks > 1 ? "--nproc_per_node " + std::to_string(j.ranks) + " " : std::string()) + recipe +
               " --config YOUR_CONFIG.yaml (with these overrides merged)";
  return pc;
}

// A Python script (unsloth-cli.py's sequence at the cited commit): FastLanguageModel.from_pretrained,
// FastLanguageModel.get_peft_model for (Q)LoRA, TRL's SFTTrainer with an SFTConfig, train, save.
struct PyCall {
  std::string indent, text;
  explicit PyCall(const std::string& head, std::string in = "") : indent(std::move(in)) {
    text = indent + head + "(\n";
  }
  void arg(const std::string& v) { text += indent + "    " + v + ",\n"; }
  void kw(const std::string& k, const std::string& v) { text += indent + "    " + k + "=" + v + ",\n"; }
  std::string done(const char* after = "") const { return text + indent + ")" + after + "\n"; }
};
std::string pystr(const std::string& s) { return json(s).dump(); }  // a JSON string is a Python literal
std::string pybool(bool b) { return b ? "True" : "False"; }
std::string pylist(const std::vector<std::string>& xs) { return json(xs).dump(); }

Status unsloth_checks(const Job& j) {
  if (j.ranks > 1)
    return refuse("unsloth",
                  "Unsloth trains on one GPU (unsloth/__init__.py: \"Currently only supports 1 GPU\")");
  if (j.in.workload.optimizer == Optimizer::sgd_momentum)
    return refuse("unsloth", "optimizer sgd-momentum has no OptimizerNames entry");
  if (j.in.workload.optimizer_in_backward)
    return refuse("unsloth", "optimizer-in-backward is a torchtune feature");
  return Ok{};
}

// get_peft_model's (and, for full fine-tuning, from_pretrained's) use_gradient_checkpointing: "unsloth" is
// Unsloth's checkpointing with the checkpoints offloaded to host RAM, True the plain one, False none.
std::string unsloth_checkpointing(const Job& j) {
  if (!j.in.workload.checkpointing) return "False";
  return j.in.workload.offloads(j.in.stack.offload_checkpoints) ? pystr("unsloth") : "True";
}

std::string unsloth_load(const Job& j) {
  const std::string dtype = j.in.workload.precision == "fp32"   ? "torch.float32"
                            : j.in.workload.precision == "fp16" ? "torch.float16"
                                                                : "torch.bfloat16";
  PyCall c("model, tokenizer = FastLanguageModel.from_pretrained");
  c.kw("model_name", pystr(j.model_repo));
  c.kw("max_seq_length", yi(static_cast<std::int64_t>(std::llround(j.seq))));
  c.kw("dtype", dtype);
  // load_in_4bit defaults to True in from_pretrained: a 16-bit LoRA says False
  c.kw("load_in_4bit", pybool(is_qlora(j) && j.in.workload.quant != Quant::int8));
  c.kw("load_in_8bit", pybool(is_qlora(j) && j.in.workload.quant == Quant::int8));
  c.kw("full_finetuning", pybool(!is_lora(j)));
  if (!is_lora(j)) c.kw("use_gradient_checkpointing", unsloth_checkpointing(j));
  return c.done();
}

Result<std::string> unsloth_peft(const Job& j) {
  if (!is_lora(j)) return std::string();
  FTCOST_TRY(t, peft_targets(j, "unsloth"));
  PyCall c("model = FastLanguageModel.get_peft_model");
  c.arg("model");
  c.kw("r", yi(j.in.workload.lora_rank));
  c.kw("target_modules", pylist(expand_all_linear(t)));
  c.kw("lora_alpha", yi(2 * j.in.workload.lora_rank));
  c.kw("lora_dropout", j.in.workload.lora_dropout > 0 ? yn(j.in.workload.lora_dropout) : "0.0");
  c.kw("use_gradient_checkpointing", unsloth_checkpointing(j));
  FTCOST_CHECK(peft_variant_supported(j, "unsloth", kUnslothPeft));
  const Workload& w = j.in.workload;
  if (w.lora_variant == LoraVariant::dora) c.kw("use_dora", "True");
  if (w.rslora) c.kw("use_rslora", "True");
  if (w.modules_to_save.any()) c.kw("modules_to_save", pylist(saved_module_names(w)));
  return c.done();
}

std::string unsloth_trainer(const Job& j) {
  PyCall a("args=SFTConfig", "    ");
  std::string out = "out/" + j.in.model.id + "-" + method_of(j);
  a.kw("per_device_train_batch_size", yi(j.micro));
  a.kw("gradient_accumulation_steps", yi(j.accum));
  a.kw("num_train_epochs", yn(j.in.workload.epochs));
  a.kw("learning_rate", "2e-4");
  a.kw("max_length", yi(static_cast<std::int64_t>(std::llround(j.seq))));
  a.kw("packing", pybool(j.packing));
  a.kw("bf16", pybool(j.in.workload.precision == "bf16"));
  a.kw("fp16", pybool(j.in.workload.precision == "fp16"));
  a.kw("optim", pystr(hf_optim(j, "unsloth")));
  a.kw("output_dir", pystr(out));
  a.kw("report_to", pystr("none"));
  PyCall t("trainer = SFTTrainer");
  t.kw("model", "model");
  t.kw("processing_class", "tokenizer");
  t.kw("train_dataset", "dataset");
  return t.text + a.done(",") + ")\ntrainer.train()\n" +
         "# the LoRA adapter (or the full model) and the tokenizer\n" + "model.save_pretrained(" +
         pystr(out) + ")\ntokenizer.save_pretrained(" + pystr(out) + ")\n";
}

Result<PlanConfig> unsloth_config(const Job& j) {
  FTCOST_CHECK(unsloth_checks(j));
  FTCOST_TRY(peft, unsloth_peft(j));
  PlanConfig pc;
  pc.stack = "unsloth";
  Yaml y;  // the header as Python comments
  header(y, j, "Unsloth: python THIS_FILE");
  std::string py = y.text;
  py += "import torch\n";
  py += "from unsloth import FastLanguageModel  # first: Unsloth patches transformers and TRL as it loads\n";
  py += "from datasets import load_dataset\nfrom trl import SFTConfig, SFTTrainer\n\n";
  py += unsloth_load(j) + peft;
  py += "# your data: a Hugging Face dataset id or local path, with a \"text\" or \"messages\" column\n";
  py += "dataset = load_dataset(" + pystr("REPLACE_WITH_YOUR_DATASET") + ", split=\"train\")\n";
  py += unsloth_trainer(j);
  pc.files.push_back({"unsloth", "train_unsloth.py", "python", py});
  pc.command = "python train_unsloth.py";
  return pc;
}

}  // namespace

Result<PlanConfig> stack_config(const Job& j, const std::string& stack) {
  return stack == "trl"            ? trl_config(j)
         : stack == "torchtune"    ? torchtune_config(j)
         : stack == "axolotl"      ? axolotl_config(j)
         : stack == "llamafactory" ? llamafactory_config(j)
                                   : unsloth_config(j);
}

}  // namespace ftcost::config_detail

namespace ftcost {

bool torchtune_builds(const std::string& model_id, bool qlora) {
  const config_detail::TtModel* tm = config_detail::torchtune_model(model_id);
  return tm != nullptr && (!qlora || tm->qlora);
}

}  // namespace ftcost
