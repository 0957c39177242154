// Runnable configs from a plan's request, with the expected numbers of the trainer's own stack profile
// (trainer_job). Key names, read from each stack's source (snapshots fetched 2026-12;
// docs/sources/plan-configs.md lists commit, file and function for each):
// - TRL `trl sft --config FILE`: TrlParser fills ScriptArguments + SFTConfig + ModelConfig from the YAML.
//   trl/trainer/model_config.py ModelConfig (model_name_or_path, dtype, attn_implementation, use_peft,
//   lora_r, lora_alpha, lora_target_modules, load_in_4bit, load_in_8bit, bnb_4bit_quant_type,
//   use_bnb_nested_quant, bnb_4bit_quant_storage); trl/trainer/sft_config.py SFTConfig (max_length, packing)
//   on transformers' TrainingArguments (per_device_train_batch_size, gradient_accumulation_steps,
//   num_train_epochs, gradient_checkpointing, bf16, fp16, optim, use_liger_kernel; optimizer names:
//   training_args.py OptimizerNames adamw_torch, adamw_bnb_8bit, paged_adamw_8bit, paged_adamw_32bit, sgd).
// - accelerate config: trl/accelerate_configs/{single_gpu,multi_gpu,fsdp1,fsdp2,zero1..3}.yaml and
//   accelerate/utils/dataclasses.py FullyShardedDataParallelPlugin (fsdp_version, reshard_after_forward:
//   bool for FSDP2, FULL_SHARD / SHARD_GRAD_OP / HYBRID_SHARD for FSDP1; offload_params) and DeepSpeedPlugin
//   (zero_stage, deepspeed_config_file, zero3_init_flag).
// - DeepSpeed JSON: deepspeed/runtime/constants.py (train_batch_size, train_micro_batch_size_per_gpu,
//   gradient_accumulation_steps, bf16, fp16, gradient_clipping), deepspeed/runtime/zero/config.py
//   DeepSpeedZeroConfig (zero_optimization.stage, offload_optimizer, offload_param,
//   stage3_gather_16bit_weights_on_model_save for ZeRO-3: transformers' Trainer.save_model saves the model
//   only with it, through accelerate's Accelerator.get_state_dict).
// - torchtune: recipes/configs/llama3_1/8B_qlora_single_device.yaml and 8B_lora.yaml (model._component_,
//   lora_attn_modules, apply_lora_to_mlp, apply_lora_to_output, lora_rank, lora_alpha, batch_size,
//   gradient_accumulation_steps, epochs, dtype, enable_activation_checkpointing,
//   enable_activation_offloading, optimizer_in_bwd, tokenizer.max_seq_len, dataset.packed), model builders in
//   torchtune/models/<family>/__init__.py; recipes lora_finetune_{single_device,distributed},
//   full_finetune_{single_device,distributed} (FSDP2 only, no DeepSpeed).
// - axolotl: src/axolotl/utils/schemas/{model,peft,training,config,fsdp}.py (base_model, adapter,
//   load_in_4bit, lora_r, lora_alpha, lora_target_linear, lora_target_modules, sequence_len, sample_packing,
//   micro_batch_size, gradient_accumulation_steps, num_epochs, optimizer, gradient_checkpointing, bf16,
//   flash_attention, deepspeed, fsdp_version, fsdp_config.reshard_after_forward / offload_params /
//   auto_wrap_policy).
// - LLaMA-Factory: src/llamafactory/hparams/{model_args,data_args,finetuning_args}.py (model_name_or_path,
//   quantization_bit, quantization_method bnb, double_quantization, flash_attn fa2|sdpa|disabled
//   (extras/constants.py AttentionFunction), disable_gradient_checkpointing, enable_liger_kernel, cutoff_len,
//   packing, dataset, template, stage, finetuning_type, lora_rank, lora_alpha, lora_target) + transformers'
//   TrainingArguments; template from extras/constants.py register_model_group (llamafactory_template).
// - Unsloth (train_unsloth.py, the sequence of unsloth-cli.py run): unsloth/models/loader.py
//   FastLanguageModel.from_pretrained (model_name, max_seq_length, dtype, load_in_4bit, load_in_8bit,
//   full_finetuning, use_gradient_checkpointing), unsloth/models/llama.py FastLlamaModel.get_peft_model (r,
//   target_modules, lora_alpha, lora_dropout, use_gradient_checkpointing), then TRL's SFTTrainer + SFTConfig.
#include "ftcost/duration.hpp"
#include "ftcost/enum_names.hpp"
#include "ftcost/job.hpp"
#include "ftcost/memory.hpp"
#include "ftcost/parallel.hpp"
#include "plan_config_internal.hpp"

#include <algorithm>
#include <map>

namespace ftcost::config_detail {

std::string yq(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    if (c == '\n') {
      o += "\\n";
      continue;
    }
    o += c;
  }
  return o + "\"";
}
std::string ylist(const std::vector<std::string>& xs) {
  std::string o = "[";
  for (std::size_t i = 0; i < xs.size(); ++i) o += (i ? ", " : "") + yq(xs[i]);
  return o + "]";
}

Error refuse(const std::string& stack, const std::string& why) {
  return make_error(Errc::invalid_value, "--config", stack + " cannot run this plan: " + why);
}

void kv_lora_dropout(Yaml& y, const Job& j, int indent) {
  if (j.in.workload.lora_dropout > 0) y.kv("lora_dropout", json(j.in.workload.lora_dropout).dump(), indent);
}

Status peft_variant_supported(const Job& j, const std::string& stack, const PeftKeys& k) {
  if (!is_lora(j)) return Ok{};
  const Workload& w = j.in.workload;
  if (w.lora_variant == LoraVariant::lora_fa)
    return refuse(
        stack,
        "LoRA-FA is peft's create_lorafa_optimizer (peft/optimizers/lorafa.py), which no config key "
        "sets: call it in your own training script");
  if (w.lora_variant == LoraVariant::dora && k.dora == nullptr)
    return refuse(stack, "it has no DoRA setting");
  if (w.rslora && k.rslora == nullptr) return refuse(stack, "it has no rank-stabilised LoRA setting");
  if (w.modules_to_save.any() && k.modules_to_save == nullptr)
    return refuse(stack, "it has no modules_to_save setting");
  return Ok{};
}

std::vector<std::string> saved_module_names(const Workload& w) {
  std::vector<std::string> out;
  if (w.modules_to_save.embed_tokens) out.emplace_back("embed_tokens");
  if (w.modules_to_save.lm_head) out.emplace_back("lm_head");
  return out;
}

void kv_peft_variant(Yaml& y, const Job& j, const PeftKeys& k, int indent) {
  const Workload& w = j.in.workload;
  if (w.lora_variant == LoraVariant::dora) y.kv(k.dora, "true", indent);
  if (w.rslora) y.kv(k.rslora, "true", indent);
  if (!w.modules_to_save.any()) return;
  const std::vector<std::string> names = saved_module_names(w);
  std::string joined;
  for (const auto& n : names) joined += (joined.empty() ? "" : ",") + n;
  y.kv(k.modules_to_save, k.comma_string ? joined : ylist(names), indent);
}

Result<std::vector<std::string>> peft_targets(const Job& j, const std::string& stack) {
  const LoraTargets& t = j.in.workload.lora_targets;
  if (std::find(t.names.begin(), t.names.end(), "all-linear") != t.names.end() && !j.in.model.is_moe())
    return std::vector<std::string>{"all-linear"};
  if (t.expert_gate_up || t.expert_down || t.shared || t.router || t.mamba || t.lm_head ||
      std::find(t.names.begin(), t.names.end(), "all-linear") != t.names.end())
    return refuse(
        stack,
        "the config generator maps attention and dense-MLP LoRA targets to module names; "
        "expert, router, Mamba and lm_head targets (and all-linear on an MoE model) are model-specific "
        "(give --lora-targets q_proj,k_proj,v_proj,o_proj or mlp)");
  std::vector<std::string> out;
  if (t.q) out.emplace_back("q_proj");
  if (t.k) out.emplace_back("k_proj");
  if (t.v) out.emplace_back("v_proj");
  if (t.o) out.emplace_back("o_proj");
  if (t.mlp || t.mlp_gate_up) {
    out.emplace_back("gate_proj");
    out.emplace_back("up_proj");
  }
  if (t.mlp || t.mlp_down) out.emplace_back("down_proj");
  if (out.empty()) return refuse(stack, "no LoRA target modules");
  return out;
}

// transformers' TrainingArguments optim names of the optimizers with one; sgd_momentum has none ("").
constexpr EnumName<Optimizer> kHfOptimNames[] = {{Optimizer::adamw_8bit, "adamw_bnb_8bit"},
                                                 {Optimizer::paged_adamw_8bit, "paged_adamw_8bit"},
                                                 {Optimizer::paged_adamw, "paged_adamw_32bit"},
                                                 {Optimizer::sgd, "sgd"}};

std::string hf_optim(const Job& j, const std::string& stack) {
  (void)stack;
  const Optimizer o = j.in.workload.optimizer;
  // the AdamW implementation the estimate assumed (--adamw-impl, else the stack's): foreach or fused
  if (o == Optimizer::adamw || o == Optimizer::adamw_mixed)
    return adamw_fused(j.in.stack, j.in.workload) ? "adamw_torch_fused" : "adamw_torch";
  return enum_name(kHfOptimNames, o, "");
}

void header(Yaml& y, const Job& j, const std::string& what) {
  y.comment(what);
  for (const auto& h : j.header) y.comment(h);
}

namespace {

Status hf_common_checks(const Job& j, const std::string& stack) {
  if (j.strategy == "tp" || j.strategy == "ep" || j.strategy == "cp" || j.strategy.rfind("tp:", 0) == 0 ||
      j.strategy.rfind("ep:", 0) == 0 || j.strategy.rfind("cp:", 0) == 0)
    return refuse(stack, "the HF Trainer has no Megatron-style " + j.strategy +
                             " (use ddp, fsdp, fsdp-grad-op or zero1-3)");
  if (j.in.workload.optimizer == Optimizer::sgd_momentum)
    return refuse(stack,
                  "optimizer sgd-momentum has no OptimizerNames entry (give --optimizer sgd or adamw)");
  if (j.in.workload.optimizer_in_backward)
    return refuse(stack, "optimizer-in-backward is a torchtune feature");
  if (is_qlora(j) && j.in.workload.quant == Quant::int8 && is_fsdp(j))
    return refuse(stack, "8-bit bitsandbytes weights are not shardable with FSDP");
  return Ok{};
}

}  // namespace

ConfigFile accelerate_file(const Job& j, const std::string& ds_name) {
  Yaml y;
  header(y, j, "accelerate config: accelerate launch --config_file THIS_FILE ...");
  y.kv("compute_environment", "LOCAL_MACHINE");
  const std::string mp = j.in.workload.precision == "fp32" ? "no" : j.in.workload.precision;
  if (j.ranks <= 1) {
    y.kv("distributed_type", "\"NO\"");
  } else if (j.strategy == "ddp") {
    y.kv("distributed_type", "MULTI_GPU");
  } else if (is_zero(j)) {
    y.kv("distributed_type", "DEEPSPEED");
    y.section("deepspeed_config");
    y.kv("deepspeed_config_file", yq(ds_name), 2);
    y.kv("zero3_init_flag", yb(j.strategy == "zero3"), 2);
    y.kv("deepspeed_multinode_launcher", "standard", 2);
  } else {
    y.kv("distributed_type", "FSDP");
    y.section("fsdp_config");
    if (j.strategy == "hsdp") {
      y.kv("fsdp_version", "1", 2);
      y.kv("fsdp_reshard_after_forward", "HYBRID_SHARD", 2);
    } else {
      y.kv("fsdp_version", "2", 2);
      y.kv("fsdp_reshard_after_forward", yb(j.strategy == "fsdp"), 2);
    }
    y.kv("fsdp_auto_wrap_policy", "TRANSFORMER_BASED_WRAP", 2);
    y.kv("fsdp_offload_params", yb(j.offload == "params"), 2);
    y.kv("fsdp_cpu_ram_efficient_loading", "true", 2);
    y.kv("fsdp_state_dict_type", "SHARDED_STATE_DICT", 2);
    y.kv("fsdp_activation_checkpointing", "false", 2);
  }
  if (j.ranks > 1 && !is_zero(j)) y.kv("mixed_precision", yq(mp));
  y.kv("num_machines", std::to_string(j.nodes));
  y.kv("num_processes", std::to_string(j.ranks));
  y.kv("machine_rank", "0");
  y.kv("main_training_function", "main");
  y.kv("rdzv_backend", "static");
  y.kv("same_network", "true");
  y.kv("use_cpu", "false");
  return {"accelerate", "accelerate.yaml", "yaml", y.text};
}

ConfigFile deepspeed_file(const Job& j) {
  const int stage = j.strategy == "zero1" ? 1 : j.strategy == "zero2" ? 2 : 3;
  // ZeRO-Infinity (offload device nvme) needs nvme_path: DeepSpeed's own examples use /local_nvme
  // (runtime/zero/offload_config.py); edit it to the drives' mount point.
  const bool nvme = j.offload == "optimizer-nvme" || j.offload == "params-nvme";
  const auto device = [&](bool on) {
    json d = {{"device", !on ? "none" : nvme ? "nvme" : "cpu"}};
    if (on && nvme) d["nvme_path"] = "/local_nvme";
    return d;
  };
  json zero = {{"stage", stage},
               {"offload_optimizer", device(j.offload != "none")},
               {"overlap_comm", true},
               {"contiguous_gradients", true}};
  if (stage == 3) {
    zero["offload_param"] = device(j.offload == "params" || j.offload == "params-nvme");
    // ZeRO-3 partitions the weights: without this key (default false, DeepSpeedZeroConfig
    // gather_16bit_weights_on_model_save) accelerate's get_state_dict raises and Trainer.save_model falls
    // back to a DeepSpeed checkpoint for zero_to_fp32.py instead of the model's (or adapter's) safetensors.
    zero["stage3_gather_16bit_weights_on_model_save"] = true;
  }
  json ds = {{"train_micro_batch_size_per_gpu", j.micro},
             {"gradient_accumulation_steps", j.accum},
             {"train_batch_size", j.micro * j.accum * j.dp},
             {"gradient_clipping", 1.0},
             {"zero_optimization", zero}};
  ds["bf16"] = {{"enabled", j.in.workload.precision == "bf16"}};
  ds["fp16"] = {{"enabled", j.in.workload.precision == "fp16"}};
  // (JSON has no comments: the expected numbers are in the main config file's header)
  return {"deepspeed", "deepspeed.json", "json", ds.dump(2) + "\n"};
}

bool fa2_runs(const Job& j) {
  const auto cc = parse_compute_capability(j.in.gpu.compute_capability);
  return !cc || cc->first >= 8;
}

std::string hf_attention(const Job& j) {
  if (!flash_attention(j)) return "eager";
  return fa2_runs(j) ? "flash_attention_2" : "sdpa";
}
std::string hf_dtype(const Job& j) {
  return j.in.workload.precision == "bf16"   ? "bfloat16"
         : j.in.workload.precision == "fp16" ? "float16"
                                             : "float32";
}

Status hf_begin(const Job& j, const std::string& stack, const std::string& what, PlanConfig& pc, Yaml& y) {
  FTCOST_CHECK(hf_common_checks(j, stack));
  pc.stack = stack;
  header(y, j, what);
  return Ok{};
}

void hf_precision(Yaml& y, const Job& j) {
  y.kv("bf16", yb(j.in.workload.precision == "bf16"));
  y.kv("fp16", yb(j.in.workload.precision == "fp16"));
}

void hf_deepspeed(Yaml& y, const Job& j) {
  if (is_zero(j)) y.kv("deepspeed", yq("deepspeed.json"));
}

bool contains_any(const std::string& s, std::initializer_list<const char*> parts) {
  return std::any_of(parts.begin(), parts.end(),
                     [&](const char* p) { return s.find(p) != std::string::npos; });
}

}  // namespace ftcost::config_detail

namespace ftcost {

namespace {

using config_detail::contains_any;
using config_detail::Job;
using config_detail::method_of;
using config_detail::refuse;

Result<Job> load_job(const Request& request, const Database& db, const FileReader& reader, long today) {
  Job j;
  FTCOST_TRY(in, resolve_request(request, db, reader, today));
  j.in = in;
  j.model_repo = in.model.hf_repo.empty() ? in.model.id : in.model.hf_repo;
  j.stack_profile = in.stack.id;
  const Workload& w = in.workload;
  j.packing = w.seq_len <= 0 && w.padding == Padding::packing;
  j.seq = w.seq_len > 0 ? w.seq_len : w.max_length;
  j.accum = std::max<std::int64_t>(1, w.grad_accum);
  FTCOST_TRY(ej, estimate_job_json(in, db));
  if (!ej.contains("batch_size") || !ej["batch_size"].is_number() ||
      ej["batch_size"].get<std::int64_t>() < 1 || !ej["fits"].is_boolean() || !ej["fits"].get<bool>())
    return make_error(Errc::does_not_fit, "--config", "the job does not fit as requested: no config for it");
  j.micro = ej["batch_size"].get<std::int64_t>();
  j.peak_gib = ej["memory_gib"]["total"].get<double>();
  j.usable_gib = ej["memory_model"]["usable_gib"].get<double>();
  j.step_s = ej["step_time_s"].is_number() ? ej["step_time_s"].get<double>() : 0;
  j.hours = ej["time_hours"].is_number() ? ej["time_hours"].get<double>() : 0;
  j.cost = ej["cost_usd"].is_number() ? ej["cost_usd"].get<double>() : -1;
  if (ej.contains("parallel")) {
    const json& p = ej["parallel"];
    j.strategy = p["strategy"].get<std::string>();
    j.gpus_per_node = p["gpus_per_node"].get<int>();
    j.nodes = p["nodes"].get<int>();
    j.ranks = j.gpus_per_node * j.nodes;
    j.dp = p["data_parallel"].get<int>();
    j.offload = p["offload"].get<std::string>();
  }
  j.header.push_back("generated by ftcost plan from the request below; numbers from the stack profile " +
                     in.stack.id + (in.stack.version.empty() ? "" : " [" + in.stack.version + "]"));
  j.header.push_back(in.model.id + " on " + std::to_string(j.ranks) + " x " + in.gpu.id +
                     (j.ranks > 1 ? " (" + j.strategy + ")" : "") + ", " + method_of(j) + ", micro-batch " +
                     std::to_string(j.micro) + " x grad-accum " + std::to_string(j.accum) +
                     (j.ranks > 1 ? " x " + std::to_string(j.dp) + " data-parallel ranks" : ""));
  j.header.push_back("expected: peak " + fixed(j.peak_gib, 1) + " GiB per GPU of " + fixed(j.usable_gib, 1) +
                     " GiB usable; step " + fixed(j.step_s, 3) + " s; " + fixed(j.hours, 2) + " h" +
                     (j.cost >= 0 ? "; $" + fixed(j.cost, 2) : std::string()));
  std::string cmd = "reproduce: ftcost estimate";
  for (const auto& [k, v] : request) cmd.append(" --").append(k).append(" ").append(v);
  j.header.push_back(cmd);
  return j;
}

// The stack profile whose numbers a trainer's file carries: the plan's own where it is one of that trainer's
// (TRL: any profile of another trainer's is not; a profile file is the user's own), else the trainer's
// newest profile (gpu-db/stacks: hf-trl-2026 for TRL 1.x, axolotl-2025, llamafactory-2025, unsloth-2024q4,
// torchtune-2024).
std::string trainer_profile(const std::string& stack, const Request& request, const Database& db) {
  static const std::map<std::string, std::string> newest = {{"trl", "hf-trl-2026"},
                                                            {"axolotl", "axolotl-2025"},
                                                            {"llamafactory", "llamafactory-2025"},
                                                            {"unsloth", "unsloth-2024q4"},
                                                            {"torchtune", "torchtune-2024"}};
  const auto it = request.find("stack");
  std::string planned = it == request.end() ? std::string() : it->second;
  if (!planned.empty() && db.stack(planned) == nullptr) return planned;  // a profile file
  const bool other = contains_any(planned, {"axolotl-", "llamafactory-", "unsloth-", "torchtune-"});
  const bool own = stack == "trl" ? !planned.empty() && !other : planned.rfind(stack + "-", 0) == 0;
  return own ? planned : newest.at(stack);
}

// Why the trainer's profile gave no numbers for the plan: the memory it needs where it estimates one, else
// its error.
std::string profile_difference(const Request& own, const Error& why, const Database& db,
                               const FileReader& reader, long today) {
  auto in = resolve_request(own, db, reader, today);
  auto ej = in.ok() ? estimate_job_json(in.value(), db) : Result<json>(in.error());
  if (!ej.ok() || !ej->contains("memory_gib") || !(*ej)["memory_gib"]["total"].is_number())
    return why.message;
  const auto gib = [](const json& v) { return fixed(v.get<double>(), 1); };
  const auto it = own.find("batch");
  return "it needs " + gib((*ej)["memory_gib"]["total"]) + " GiB per GPU at " +
         (it == own.end() ? std::string("this micro-batch") : "micro-batch " + it->second) +
         ", more than the " + gib((*ej)["memory_model"]["usable_gib"]) + " GiB usable";
}

// The job with the trainer's own stack profile, so that the expected numbers are that trainer's; where the
// profile cannot run the plan, the plan's numbers and a line saying how the trainer's profile differs.
Result<Job> trainer_job(const Request& request, const std::string& stack, const Database& db,
                        const FileReader& reader, long today) {
  Request own = request;
  own["stack"] = trainer_profile(stack, request, db);
  auto j = load_job(own, db, reader, today);
  if (j.ok() || own == request) return j;
  FTCOST_TRY(planned, load_job(request, db, reader, today));
  planned.header.insert(
      planned.header.begin() + 1,
      "numbers for " + planned.in.stack.id + " (the plan's stack); " + own["stack"] +
          ", this trainer's profile, differs: " + profile_difference(own, j.error(), db, reader, today));
  return planned;
}

}  // namespace

const std::vector<std::string>& config_stacks() {
  static const std::vector<std::string> s = {"trl", "torchtune", "axolotl", "llamafactory", "unsloth"};
  return s;
}

Result<PlanConfig> plan_config(const Request& request, const std::string& stack, const Database& db,
                               const FileReader& reader, long today_days) {
  const auto& ok = config_stacks();
  if (std::find(ok.begin(), ok.end(), stack) == ok.end())
    return make_error(Errc::invalid_value, "--config",
                      "must be one of " + join_ids(ok) + ", got \"" + stack + "\"");
  FTCOST_TRY(j, trainer_job(request, stack, db, reader, today_days));
  if (j.in.model_kind == "paper")
    return refuse(stack, "--model-kind paper is the paper's equation, not a run");
  if (j.in.workload.objective.objective != Objective::sft && stack != "trl")
    return refuse(stack,
                  std::string("--objective ") + objective_name(j.in.workload.objective.objective) +
                      " is exported as a TRL config here (DPOConfig, KTOConfig, GRPOConfig: --config trl)");
  return config_detail::stack_config(j, stack);
}

json plan_config_to_json(const PlanConfig& c) {
  json files = json::array();
  for (const auto& f : c.files)
    files.push_back(json{{"role", f.role}, {"name", f.name}, {"format", f.format}, {"text", f.text}});
  return json{{"stack", c.stack}, {"command", c.command}, {"files", files}};
}

}  // namespace ftcost
