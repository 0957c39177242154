// The objective options (issue 42): --objective and the settings of the DPO family and GRPO, one group of the
// option table (options.hpp). What each stands for in TRL: docs/sources/trl-preference.md.
#include "ftcost/objective.hpp"
#include "ftcost/options.hpp"
#include "ftcost/units.hpp"
#include "options_internal.hpp"

#include <cstdlib>

namespace ftcost {

namespace {

ObjectiveConfig& objective(ResolveState& st) { return st.in.workload.objective; }
Objective objective_of(const ResolveState& st) { return st.in.workload.objective.objective; }

std::string only_grpo(const ResolveState& st) {
  return objective_of(st) == Objective::grpo ? "" : "applies only to --objective grpo";
}
std::string only_reference_objectives(const ResolveState& st) {
  const Objective o = objective_of(st);
  return o == Objective::dpo || o == Objective::kto ? "" : "applies only to --objective dpo or kto";
}
std::string only_vllm(const ResolveState& st) {
  if (!only_grpo(st).empty()) return only_grpo(st);
  return st.in.workload.objective.generation == Generation::hf
             ? "applies only to --generation vllm-colocate or vllm-server"
             : "";
}
std::string only_vllm_server(const ResolveState& st) {
  if (!only_grpo(st).empty()) return only_grpo(st);
  return st.in.workload.objective.generation == Generation::vllm_server
             ? ""
             : "applies only to --generation vllm-server";
}

Status apply_objective(ResolveState& st, const std::string& v) {
  static const std::pair<const char*, Objective> kByName[] = {
      {"sft", Objective::sft},     {"dpo", Objective::dpo}, {"orpo", Objective::orpo},
      {"simpo", Objective::simpo}, {"kto", Objective::kto}, {"grpo", Objective::grpo}};
  for (const auto& entry : kByName)
    if (v == entry.first) objective(st).objective = entry.second;
  // a dataset's completion lengths (ftcost.dataset/1 completion_histogram), for GRPO
  if (st.in.dataset && st.in.dataset->has_completions) {
    objective(st).has_completion_lengths = true;
    objective(st).completion_lengths = st.in.dataset->completions;
  }
  return Ok{};
}

// --vllm-gpu-memory-utilization (colocated): vLLM's share of the GPU is kept from the training process, as
// --headroom keeps memory for another process (GpuSpec::reserved_mib).
Status apply_vllm_share(ResolveState& st, const std::string& v) {
  const double frac = std::strtod(v.c_str(), nullptr);
  objective(st).vllm_memory_fraction = frac;
  if (objective(st).generation != Generation::vllm_colocate) return Ok{};
  const Workload& w = st.in.workload;
  const VllmMemory vm = vllm_memory(st.in.model, w, st.in.gpu, frac, w.memory_seq_len());
  st.in.gpu.reserved_mib += vm.pool / kMiB;
  return Ok{};
}

Option choice_option(const char* key, const char* label) {
  return declare_option(key, OptionKind::choice, "method", label);
}

Option number_option(const char* key, OptionKind kind, const char* label, double lo, double hi) {
  Option o = declare_option(key, kind, "method", label);
  o.lo = lo;
  o.hi = hi;
  return o;
}

void add_objective_choice(std::vector<Option>& table) {
  Option o = choice_option("objective", "Objective");
  o.help =
      "Training objective: sft, the preference family (dpo, orpo, simpo, kto) or grpo (RL with generation)";
  o.details =
      "sft: supervised fine-tuning. dpo: TRL DPOTrainer, chosen and rejected sequences of each pair "
      "through the model together, and a frozen reference (a copy with full fine-tuning; the base with the "
      "adapters disabled with LoRA). orpo, simpo: pairs, no reference. kto: one completion per sample, a "
      "mismatched KL completion through the policy without gradients, a reference. grpo: TRL GRPOTrainer, "
      "completions generated per prompt (model.generate or vLLM) and trained on; throughput counts prompts. "
      "--seq is the whole sequence for the preference objectives and the prompt for grpo. "
      "docs/sources/trl-preference.md.";
  o.values = {{"sft", "SFT", "Supervised fine-tuning"},
              {"dpo", "DPO", "Direct preference optimisation (TRL DPOTrainer)"},
              {"orpo", "ORPO", "Odds-ratio preference optimisation, no reference"},
              {"simpo", "SimPO", "Simple preference optimisation (CPOTrainer), no reference"},
              {"kto", "KTO", "Kahneman-Tversky optimisation, unpaired, with a reference"},
              {"grpo", "GRPO", "Group relative policy optimisation with generation (TRL GRPOTrainer)"}};
  o.default_help = "sft";
  o.default_rule = unlisted_default("sft");
  o.invalidates = {"precompute-ref",
                   "beta",
                   "num-generations",
                   "completion-len",
                   "num-iterations",
                   "generation",
                   "vllm-gpu-memory-utilization",
                   "vllm-gpus",
                   "reward-s"};
  o.reads = {"dataset"};  // a dataset's completion lengths
  o.apply = apply_objective;
  table.push_back(std::move(o));
}

void add_preference_options(std::vector<Option>& table) {
  Option o = declare_option("precompute-ref", OptionKind::toggle, "method", "Precompute ref.");
  o.help = "DPO/KTO precompute_ref_log_probs: reference log-probs computed once before training";
  o.details =
      "TRL's precompute_ref_log_probs=True: one reference pass over the dataset before training (in the "
      "job's hours), then no reference model in memory and no reference forward per step.";
  o.values = {{"on", "on", ""}, {"off", "off", ""}};
  o.default_help = "off";
  o.default_rule = unlisted_default("off");
  o.reads = {"objective"};
  o.applies = only_reference_objectives;
  o.apply = stores(&ObjectiveConfig::precompute_ref, on_value);
  table.push_back(std::move(o));
}

void add_grpo_counts(std::vector<Option>& table) {
  {
    Option o = number_option("num-generations", OptionKind::count, "Generations", 2, 4096);
    o.help = "GRPO num_generations: completions sampled per prompt";
    o.details =
        "GRPOConfig num_generations (TRL default 8). Micro-batch x grad-accum must hold whole groups.";
    o.unit = "completions";
    o.default_help = "8 (TRL's default)";
    o.default_rule = listed_default("8", "TRL GRPOConfig's default");
    o.reads = {"objective"};
    o.applies = only_grpo;
    o.apply = stores(&ObjectiveConfig::generations, count_value);
    table.push_back(std::move(o));
  }
  {
    Option o = number_option("completion-len", OptionKind::count, "Completion", 1, 1 << 20);
    o.help = "GRPO max_completion_length: tokens generated per completion (decoded to this length)";
    o.details =
        "GRPOConfig max_completion_length (TRL default 512). Every completion is counted at this length: "
        "a generation batch decodes until its longest completion ends, and the training batch is padded to "
        "it.";
    o.unit = "tokens";
    o.default_help = "512 (TRL's default)";
    o.default_rule = listed_default("512", "TRL GRPOConfig's default");
    o.reads = {"objective"};
    o.applies = only_grpo;
    o.apply = stores(&ObjectiveConfig::completion_len, real_value);
    table.push_back(std::move(o));
  }
  {
    Option o = number_option("num-iterations", OptionKind::count, "Iterations", 1, 64);
    o.help = "GRPO num_iterations (mu): optimisation passes over each generation batch";
    o.details = "GRPOConfig num_iterations (default 1). More than 1 adds the old policy's log-prob forward.";
    o.unit = "passes";
    o.default_help = "1";
    o.default_rule = unlisted_default("1");
    o.reads = {"objective"};
    o.applies = only_grpo;
    o.apply = stores(&ObjectiveConfig::iterations, count_value);
    table.push_back(std::move(o));
  }
}

void add_grpo_reals(std::vector<Option>& table) {
  {
    Option o = number_option("beta", OptionKind::real, "KL beta", 0, 100);
    o.help = "GRPO beta: KL coefficient; 0 (TRL's default) loads no reference model";
    o.details = "GRPOConfig beta. Above 0 the reference model's log-probs are computed for every generation.";
    o.unit = "coefficient";
    o.default_help = "0 (TRL's default: no reference)";
    o.default_rule = unlisted_default("0");
    o.reads = {"objective"};
    o.applies = only_grpo;
    o.apply = stores(&ObjectiveConfig::beta, real_value);
    table.push_back(std::move(o));
  }
  {
    Option o = number_option("reward-s", OptionKind::real, "Reward time", 0, 3600);
    o.help = "GRPO reward functions' time per completion, seconds (run on the host, not overlapped)";
    o.details = "Time your reward functions take per completion (a verifier, a sandbox run, a reward model).";
    o.unit = "s";
    o.default_help = "0";
    o.default_rule = unlisted_default("0");
    o.reads = {"objective"};
    o.applies = only_grpo;
    o.apply = stores(&ObjectiveConfig::reward_s, real_value);
    table.push_back(std::move(o));
  }
}

void add_generation_options(std::vector<Option>& table) {
  {
    Option o = choice_option("generation", "Generation");
    o.help = "GRPO generation: hf (model.generate), vllm-colocate or vllm-server";
    o.details =
        "hf: the policy's own model.generate (TRL use_vllm=False). vllm-colocate: vLLM in the training "
        "process "
        "on the same GPU, with --vllm-gpu-memory-utilization of its memory. vllm-server: `trl vllm-serve` "
        "on --vllm-gpus more GPUs (rented and priced with the job); the weights are sent to it every step.";
    o.values = {{"hf", "model.generate", "the policy's own generate (use_vllm=False)"},
                {"vllm-colocate", "vLLM colocated", "vLLM on the training GPU (vllm_mode=colocate)"},
                {"vllm-server", "vLLM server", "vLLM on GPUs of its own (vllm_mode=server)"}};
    o.default_help = "hf (TRL's default, use_vllm=False)";
    o.default_rule = listed_default("hf", "TRL's default: use_vllm=False");
    o.reads = {"objective"};
    o.applies = only_grpo;
    o.invalidates = {"vllm-gpu-memory-utilization", "vllm-gpus"};
    o.apply = stores_choice(&ObjectiveConfig::generation, {{"vllm-colocate", Generation::vllm_colocate},
                                                           {"vllm-server", Generation::vllm_server},
                                                           {"hf", Generation::hf}});
    table.push_back(std::move(o));
  }
  {
    Option o = number_option("vllm-gpu-memory-utilization", OptionKind::real, "vLLM share", 0.01, 0.95);
    o.help = "Colocated vLLM's share of the GPU's memory (vllm_gpu_memory_utilization)";
    o.details =
        "GRPOConfig vllm_gpu_memory_utilization (default 0.3): vLLM takes this share of the GPU's total "
        "memory "
        "for its weights, buffers and KV cache; training gets the rest.";
    o.unit = "of the GPU's memory";
    o.default_help = "0.3 (TRL's default)";
    o.default_rule = listed_default("0.3", "TRL GRPOConfig's default");
    // vllm_memory: the weights as vLLM loads them, the KV cache of one sequence (prompt and completion), the
    // GPU's memory and what --headroom keeps
    o.reads = {"objective",    "generation",   "completion-len",  "model", "gpu",
               "headroom",     "precision",    "method",          "quant", "lora-rank",
               "lora-targets", "lora-variant", "modules-to-save", "seq",   "dataset",
               "max-length",   "padding"};
    o.applies = only_vllm;
    o.apply = apply_vllm_share;
    table.push_back(std::move(o));
  }
  {
    Option o = number_option("vllm-gpus", OptionKind::count, "vLLM GPUs", 1, 64);
    o.help = "GPUs the vLLM server runs on (data parallel), rented beside the training GPU";
    o.details = "trl vllm-serve --data_parallel_size: each server GPU decodes its share of the completions.";
    o.unit = "GPUs";
    o.default_help = "1";
    o.default_rule = unlisted_default("1");
    o.reads = {"objective", "generation"};
    o.applies = only_vllm_server;
    o.apply = stores(&ObjectiveConfig::vllm_gpus, count_value);
    table.push_back(std::move(o));
  }
}

}  // namespace

void add_objective_options(std::vector<Option>& table) {
  add_objective_choice(table);
  add_preference_options(table);
  add_grpo_counts(table);
  add_grpo_reals(table);
  add_generation_options(table);
}

}  // namespace ftcost
