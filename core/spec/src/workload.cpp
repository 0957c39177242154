#include "ftcost/workload.hpp"

#include "ftcost/enum_names.hpp"

#include <algorithm>
#include <cmath>

namespace ftcost {

constexpr EnumName<Method> kMethodNames[] = {
    {Method::full, "full"}, {Method::lora, "lora"}, {Method::qlora, "qlora"}};
const char* method_name(Method m) { return enum_name(kMethodNames, m); }

constexpr EnumName<Quant> kQuantNames[] = {
    {Quant::none, "none"}, {Quant::nf4_dq, "nf4-dq"}, {Quant::nf4, "nf4"}, {Quant::int8, "int8"}};
const char* quant_name(Quant q) { return enum_name(kQuantNames, q); }

constexpr EnumName<Optimizer> kOptimizerNames[] = {{Optimizer::adamw, "adamw"},
                                                   {Optimizer::adamw_mixed, "adamw-mixed"},
                                                   {Optimizer::adamw_8bit, "adamw-8bit"},
                                                   {Optimizer::sgd, "sgd"},
                                                   {Optimizer::sgd_momentum, "sgd-momentum"},
                                                   {Optimizer::paged_adamw_8bit, "paged-adamw-8bit"},
                                                   {Optimizer::paged_adamw, "paged-adamw"}};
const char* optimizer_name(Optimizer o) { return enum_name(kOptimizerNames, o); }

constexpr EnumName<Padding> kPaddingNames[] = {
    {Padding::longest, "longest"}, {Padding::max_length, "max-length"}, {Padding::packing, "packing"}};
const char* padding_name(Padding p) { return enum_name(kPaddingNames, p); }

constexpr EnumName<Attention> kAttentionNames[] = {
    {Attention::flash, "flash"}, {Attention::eager, "eager"}, {Attention::xformers, "xformers"}};
const char* attention_name(Attention a) { return enum_name(kAttentionNames, a); }

constexpr EnumName<LoraVariant> kLoraVariantNames[] = {
    {LoraVariant::lora, "lora"}, {LoraVariant::dora, "dora"}, {LoraVariant::lora_fa, "lora-fa"}};
const char* lora_variant_name(LoraVariant v) { return enum_name(kLoraVariantNames, v); }

bool LoraTargets::any() const {
  return q || k || v || o || mlp || mlp_down || mlp_gate_up || expert_gate_up || expert_down || shared ||
         router || mamba || lm_head;
}

namespace {

// Sets the flags of one PEFT module name or group; false when the name is not one ftcost knows.
bool add_lora_target(const std::string& name, LoraTargets& t) {
  if (name == "q_proj" || name == "q_a_proj" || name == "q_b_proj") {
    t.q = true;
  } else if (name == "k_proj" || name == "kv_a_proj_with_mqa") {
    t.k = true;
  } else if (name == "v_proj" || name == "kv_b_proj") {
    t.v = true;
  } else if (name == "o_proj" || name == "Wqkv") {
    if (name == "Wqkv")
      t.q = t.k = t.v = true;
    else
      t.o = true;
  } else if (name == "gate_proj" || name == "up_proj") {
    // PEFT matches by suffix: dense MLP, routed experts and shared experts with these names.
    t.mlp_gate_up = true;
    t.expert_gate_up = true;
    t.shared = true;
  } else if (name == "down_proj") {
    t.mlp_down = true;
    t.expert_down = true;
    t.shared = true;
  } else if (name == "w1" || name == "w3" || name == "v1" || name == "fc1") {
    t.expert_gate_up = true;
  } else if (name == "w2" || name == "fc2") {
    t.expert_down = true;
  } else if (name == "gate" || name == "router") {
    t.router = true;
  } else if (name == "in_proj" || name == "x_proj" || name == "dt_proj" || name == "out_proj" ||
             name == "mamba") {
    t.mamba = true;
  } else if (name == "lm_head") {
    t.lm_head = true;
  } else if (name == "attention") {
    t.q = t.k = t.v = t.o = true;
  } else if (name == "experts") {
    t.expert_gate_up = t.expert_down = true;
  } else if (name == "mlp") {
    t.mlp = t.shared = true;
  } else if (name == "all-linear" || name == "all") {
    t.q = t.k = t.v = t.o = t.mlp = t.expert_gate_up = t.expert_down = t.shared = t.router = t.mamba = true;
  } else {
    return false;
  }
  return true;
}

// The next item of a comma-separated list from `start`, blanks trimmed; `start` moves past its comma (past
// the end after the last item).
std::string next_list_item(const std::string& list, std::size_t& start) {
  std::size_t end = list.find(',', start);
  if (end == std::string::npos) end = list.size();
  std::string name = list.substr(start, end - start);
  name.erase(0, name.find_first_not_of(" \t"));
  name.erase(name.find_last_not_of(" \t") + 1);
  start = end + 1;
  return name;
}

}  // namespace

Result<LoraTargets> parse_lora_targets(const std::string& list, const std::string& field) {
  LoraTargets t;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::string name = next_list_item(list, start);
    if (name.empty()) {
      if (start > list.size()) break;
      return make_error(Errc::invalid_value, field, "empty module name in \"" + list + "\"");
    }
    t.names.push_back(name);
    if (!add_lora_target(name, t)) {
      return make_error(
          Errc::invalid_value, field,
          "unknown module \"" + name +
              "\"; use PEFT names (q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj,w1,w2,w3,"
              "gate,router,in_proj,x_proj,dt_proj,out_proj,lm_head) or groups (attention, experts, "
              "router, mlp, mamba, all-linear)");
    }
  }
  if (t.mlp_gate_up && t.mlp_down) t.mlp = true;
  if (!t.any()) return make_error(Errc::invalid_value, field, "no LoRA target modules given");
  return t;
}

Result<ModulesToSave> parse_modules_to_save(const std::string& list, const std::string& field) {
  ModulesToSave m;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::string name = next_list_item(list, start);
    if (name == "embed_tokens") {
      m.embed_tokens = true;
    } else if (name == "lm_head") {
      m.lm_head = true;
    } else {
      return make_error(Errc::invalid_value, field,
                        name.empty() ? "empty module name in \"" + list + "\""
                                     : "unknown module \"" + name +
                                           "\"; ftcost counts embed_tokens and lm_head (comma-separated)");
    }
  }
  return m;
}

double Workload::compute_bytes() const { return precision == "fp32" ? 4.0 : 2.0; }

std::int64_t Workload::active_experts(const ModelSpec& m) const {
  if (m.moe.experts <= 0) return 0;
  if (moe == MoeMode::dense) return m.moe.experts;
  return top_k_override > 0 ? std::min(top_k_override, m.moe.experts) : m.moe.top_k;
}

namespace {
double round_up8(double x) { return std::ceil(x / 8.0) * 8.0; }
}  // namespace

constexpr EnumName<Objective> kObjectiveNames[] = {{Objective::sft, "sft"},   {Objective::dpo, "dpo"},
                                                   {Objective::orpo, "orpo"}, {Objective::simpo, "simpo"},
                                                   {Objective::kto, "kto"},   {Objective::grpo, "grpo"}};
const char* objective_name(Objective o) { return enum_name(kObjectiveNames, o); }

constexpr EnumName<Generation> kGenerationNames[] = {{Generation::hf, "hf"},
                                                     {Generation::vllm_colocate, "vllm-colocate"},
                                                     {Generation::vllm_server, "vllm-server"}};
const char* generation_name(Generation g) { return enum_name(kGenerationNames, g); }

bool ObjectiveConfig::paired() const {
  return objective == Objective::dpo || objective == Objective::orpo || objective == Objective::simpo;
}
bool ObjectiveConfig::preference() const { return paired() || objective == Objective::kto; }
bool ObjectiveConfig::reference_pass() const {
  if (objective == Objective::dpo || objective == Objective::kto) return !precompute_ref;
  return objective == Objective::grpo && beta > 0;
}

double Workload::memory_seq_len() const { return prompt_memory_seq_len() + completion_tokens(); }

double Workload::prompt_memory_seq_len() const {
  if (seq_len > 0) return seq_len;
  if (padding != Padding::longest) return max_length;  // max-length, packing: every row is max_length
  // DataCollatorForSeq2Seq pads to the longest sample, rounded up to a multiple of 8; over an epoch
  // some batch holds the longest (truncated) sample, and that batch sets the peak.
  // The worst batch is padded to the longest sample of the length distribution. The prompt template's
  // tokens are not added here: the presets' maxima are where the paper's histograms stop (CS: 512),
  // not measured longest templated samples (see the note in docs/validation.md).
  return std::min(round_up8(lengths.max()), round_up8(max_length));
}

double Workload::queries_per_row() const {
  // GRPO: a row is one completion; a prompt yields `generations` of them and is trained on `iterations`
  // times.
  if (objective.grpo()) return 1.0 / static_cast<double>(objective.generations * objective.iterations);
  if (seq_len <= 0 && padding == Padding::packing)
    return max_length / std::max(1.0, lengths.truncated_mean(max_length));
  return 1.0;
}

double Workload::mean_completion_tokens() const {
  const ObjectiveConfig& c = objective;
  if (!c.grpo()) return 0;
  return c.has_completion_lengths ? c.completion_lengths.truncated_mean(c.completion_len) : c.completion_len;
}

double Workload::mean_data_len() const { return mean_prompt_data_len() + mean_completion_tokens(); }

double Workload::mean_prompt_data_len() const {
  if (seq_len > 0) return seq_len;
  const double body = std::max(1.0, max_length - template_tokens);
  return std::min(max_length, template_tokens + lengths.truncated_mean(body));
}

double Workload::completion_padded(double n) const {
  if (!objective.grpo()) return 0;
  const ObjectiveConfig& c = objective;
  if (!c.has_completion_lengths) return c.completion_len;
  return std::min(c.completion_len, c.completion_lengths.expected_max(std::max(1.0, n), c.completion_len));
}

double Workload::mean_padded_len(std::int64_t b) const {
  return mean_prompt_padded_len(b) + completion_padded(static_cast<double>(std::max<std::int64_t>(b, 1)));
}

double Workload::mean_prompt_padded_len(std::int64_t b) const {
  if (seq_len > 0) return seq_len;
  if (padding != Padding::longest) return max_length;  // max-length, packing
  return std::min(
      round_up8(template_tokens + lengths.expected_max(static_cast<double>(std::max<std::int64_t>(b, 1)),
                                                       std::max(1.0, max_length - template_tokens))),
      round_up8(max_length));
}

double Workload::attention_len(double padded_len) const {
  if (packed_doc_len > 0) return std::min(packed_doc_len, padded_len);
  if (seq_len <= 0 && padding == Padding::packing)
    return std::min(padded_len, std::max(1.0, lengths.truncated_mean(max_length)));
  return padded_len;
}

}  // namespace ftcost
