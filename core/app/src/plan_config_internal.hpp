// Internal to `ftcost plan --config` (ftcost/plan_config.hpp): what its sources share.
//   plan_config.cpp         the job (resolved and estimated with the trainer's own stack profile), YAML
//   writing,
//                           the keys several stacks share (PEFT variants and targets, the HF Trainer's common
//                           keys, accelerate and DeepSpeed files), the public entry points
//   plan_config_stacks.cpp  one config writer per stack: TRL, axolotl, LLaMA-Factory, torchtune, Unsloth
#pragma once

#include "ftcost/plan_config.hpp"

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace ftcost::config_detail {

std::string yq(const std::string& s);  // a YAML double-quoted scalar
inline std::string yn(double v) { return json(v).dump(); }
inline std::string yi(std::int64_t v) { return std::to_string(v); }
inline std::string yb(bool b) { return b ? "true" : "false"; }
std::string ylist(const std::vector<std::string>& xs);

struct Yaml {
  std::string text;
  void comment(const std::string& c) { text += "# " + c + "\n"; }
  void kv(const std::string& k, const std::string& v, int indent = 0) {
    text += std::string(static_cast<std::size_t>(indent), ' ') + k + ": " + v + "\n";
  }
  void section(const std::string& k, int indent = 0) {
    text += std::string(static_cast<std::size_t>(indent), ' ') + k + ":\n";
  }
};

Error refuse(const std::string& stack, const std::string& why);

// What the generator needs of the resolved, estimated job.
struct Job {
  Inputs in;
  std::string model_repo;
  int ranks = 1, gpus_per_node = 1, nodes = 1;
  std::string strategy = "single";  // single, ddp, fsdp, fsdp-grad-op, hsdp, zero1..3, tp, ep, cp
  std::string offload = "none";
  std::int64_t micro = 0, accum = 1, dp = 1;
  double seq = 0;
  bool packing = false;
  double peak_gib = 0, usable_gib = 0, step_s = 0, hours = 0, cost = -1;
  std::string stack_profile;
  std::vector<std::string> header;  // comment lines shared by every file
};

inline std::string method_of(const Job& j) { return method_name(j.in.workload.method); }
inline bool is_lora(const Job& j) { return j.in.workload.method != Method::full; }
inline bool is_qlora(const Job& j) { return j.in.workload.method == Method::qlora; }
inline bool is_zero(const Job& j) { return j.strategy.rfind("zero", 0) == 0; }  // DeepSpeed ZeRO-1/2/3
inline bool is_fsdp(const Job& j) { return j.strategy.rfind("fsdp", 0) == 0; }  // fsdp, fsdp-grad-op

// `lora_dropout: P` where the job has one (frameworks whose default is 0 need no line at 0).
void kv_lora_dropout(Yaml& y, const Job& j, int indent = 0);

// A trainer's config keys for the PEFT variants (nullptr: it has none), read at the snapshots of
// docs/sources/peft-variants.md: TRL ModelConfig use_dora / use_rslora / lora_modules_to_save; axolotl
// schemas/peft.py peft_use_dora / peft_use_rslora / lora_modules_to_save; LLaMA-Factory finetuning_args.py
// use_dora / use_rslora / additional_target (a comma-separated string); torchtune's LoRA builders use_dora
// only; Unsloth FastLlamaModel.get_peft_model use_rslora / modules_to_save (use_dora through **kwargs to
// LoraConfig). None of them has LoRA-FA: peft's create_lorafa_optimizer is a call in one's own script.
struct PeftKeys {
  const char* dora = nullptr;
  const char* rslora = nullptr;
  const char* modules_to_save = nullptr;
  bool comma_string = false;  // modules_to_save as "a,b" rather than a list
};

Status peft_variant_supported(const Job& j, const std::string& stack, const PeftKeys& k);
std::vector<std::string> saved_module_names(const Workload& w);
// The variant's keys in a YAML config (after peft_variant_supported).
void kv_peft_variant(Yaml& y, const Job& j, const PeftKeys& k, int indent = 0);
// The LoRA targets as PEFT module names of a Llama-style dense model, or {"all-linear"}.
Result<std::vector<std::string>> peft_targets(const Job& j, const std::string& stack);

std::string hf_optim(const Job& j, const std::string& stack);
void header(Yaml& y, const Job& j, const std::string& what);
ConfigFile accelerate_file(const Job& j, const std::string& ds_name);
ConfigFile deepspeed_file(const Job& j);

// FlashAttention-2 runs on compute capability 8.0 and newer only (flash-attn refuses older GPUs:
// "FlashAttention only supports Ampere GPUs or newer."); on a T4 or V100 the flash-class attention a config
// can ask for is SDPA's memory-efficient kernel, which keeps no L x L scores either.
bool fa2_runs(const Job& j);
inline bool flash_attention(const Job& j) { return j.in.workload.attention == Attention::flash; }
std::string hf_attention(const Job& j);
std::string hf_dtype(const Job& j);

// The start of an HF Trainer stack's config (TRL, axolotl, LLaMA-Factory): the checks they share, the stack's
// name and the file's header.
Status hf_begin(const Job& j, const std::string& stack, const std::string& what, PlanConfig& pc, Yaml& y);
// The HF Trainer's mixed-precision switches.
void hf_precision(Yaml& y, const Job& j);
// Under ZeRO the trainer reads the DeepSpeed config written beside it (deepspeed_file).
void hf_deepspeed(Yaml& y, const Job& j);

bool contains_any(const std::string& s, std::initializer_list<const char*> parts);

// The stack's config files for the job (stack: one of config_stacks()); plan_config_stacks.cpp.
Result<PlanConfig> stack_config(const Job& j, const std::string& stack);

}  // namespace ftcost::config_detail
