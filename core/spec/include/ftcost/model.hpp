// Model structure read from a Hugging Face config.json (and the mamba_ssm / BlackMamba formats):
// the layer stack, the shapes the memory and step models need, and parameter counts per component.
#pragma once

#include "ftcost/error.hpp"
#include "ftcost/json_util.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ftcost {

enum class Mixer { none, attention, mamba };
enum class Ffn { none, mlp, moe };
enum class NormKind { rms, layer, layer_no_bias };

struct AttentionSpec {
  std::int64_t heads = 0;
  std::int64_t kv_heads = 0;
  std::int64_t head_dim = 0;
  bool qkv_bias = false;
  bool o_bias = false;
  bool qk_norm = false;  // Qwen3 / OLMoE style per-head or full q/k norms
  std::int64_t qk_norm_params = 0;
  std::int64_t sinks = 0;           // gpt-oss learned attention sinks (one per head)
  std::int64_t sliding_window = 0;  // 0 = full attention
  double sliding_fraction = 1.0;    // share of the attention layers that use sliding_window (layer_types)
  // Multi-head latent attention (DeepSeek-V2)
  bool mla = false;
  std::int64_t q_lora_rank = 0;  // 0 = plain q_proj
  std::int64_t kv_lora_rank = 0;
  std::int64_t qk_nope_head_dim = 0;
  std::int64_t qk_rope_head_dim = 0;
  std::int64_t v_head_dim = 0;

  std::int64_t q_dim() const;   // width of the query projection output
  std::int64_t kv_dim() const;  // width of each of k and v as attention consumes them
  std::int64_t v_dim() const;   // width of the attention output (o_proj input)
};

struct MlpSpec {
  std::int64_t intermediate = 0;
  bool gated = true;  // SwiGLU/GeGLU: three matrices (gate, up, down); else two
  bool bias = false;
};

struct MoeSpec {
  std::int64_t experts = 0;
  std::int64_t top_k = 0;  // as configured (the "sparse" setting)
  std::int64_t expert_intermediate = 0;
  bool gated = true;
  bool expert_bias = false;
  bool router_bias = false;
  std::int64_t shared_experts = 0;       // number of always-active shared experts (DeepSeek) or 1 (Qwen2-MoE)
  std::int64_t shared_intermediate = 0;  // per shared expert
  bool shared_gate = false;              // Qwen2-MoE's sigmoid gate on the shared expert (H -> 1)
};

struct MambaSpec {
  std::int64_t d_inner = 0;
  std::int64_t d_state = 0;
  std::int64_t d_conv = 0;
  std::int64_t dt_rank = 0;
  bool conv_bias = true;
  bool proj_bias = false;
};

// A run of identical layers.
struct LayerGroup {
  Mixer mixer = Mixer::none;
  Ffn ffn = Ffn::none;
  std::int64_t count = 0;
};

// Parameter counts per component (whole model).
struct ParamCounts {
  std::int64_t embedding = 0;
  std::int64_t lm_head = 0;  // 0 when tied to the embedding
  std::int64_t attention = 0;
  std::int64_t mamba = 0;
  std::int64_t mlp = 0;      // dense FFN layers
  std::int64_t experts = 0;  // routed experts, all of them
  std::int64_t shared_experts = 0;
  std::int64_t router = 0;
  std::int64_t norms = 0;

  std::int64_t total() const;
  json to_json() const;
};

struct ModelSpec {
  std::string id;  // preset id or the file it came from
  std::string display_name;
  std::string family;  // mixtral, llama, qwen2_moe, deepseek_v2, mamba, blackmamba, ...
  // Traits of the family, set once where the config is parsed (parse_model_config); memory, step and option
  // code reads these instead of testing family names.
  // Trained with the model's own reference code (BlackMamba, Mamba): its own norms and loss (no fp32
  // upcast of the logits, no transformers gradient checkpointing); see docs/sources/stack-facts.md §5.
  bool own_training_code = false;
  // Gate and up projections are one [H, 2F] weight (BlackMamba's fc1, gpt-oss's experts.gate_up_proj): one
  // GEMM and one LoRA adapter on it, instead of two.
  bool fused_gate_up = false;
  std::string hf_repo;
  std::int64_t hidden = 0;
  std::int64_t vocab = 0;
  bool tied_embeddings = false;
  bool lm_head_bias = false;
  NormKind norm = NormKind::rms;
  std::int64_t norms_per_attention_layer = 2;  // Gemma-2 has 4
  bool residual_fp32 = false;                  // BlackMamba / Mamba keep the residual stream in fp32
  std::vector<LayerGroup> groups;
  AttentionSpec attn;
  MlpSpec mlp;
  MoeSpec moe;
  MambaSpec mamba;
  std::vector<std::string> warnings;
  // The context window: config.json's max_position_embeddings (DBRX: max_seq_len, BlackMamba:
  // max_sequence_length). 0: the config gives none (Mamba: a recurrent model with no position limit).
  std::int64_t max_position_embeddings = 0;
  std::string max_position_field;  // the config field it was read from
  // A multimodal checkpoint's vision tower and projector (Llama-4), counted from vision_config: part of the
  // checkpoint's size, not of params() (ftcost prices the text decoder; see parse_llama4).
  std::int64_t vision_params = 0;

  // Published sizes from the preset file (0 when unknown).
  double published_total = 0;
  double published_exact = 0;  // published.exact_params: an exact count (safetensors metadata), 0 when none
  double published_active = 0;
  std::int64_t published_top_k = 0;

  std::int64_t layers() const;
  std::int64_t layers_with(Ffn f) const;
  std::int64_t layers_with(Mixer m) const;
  bool is_moe() const { return moe.experts > 0 && layers_with(Ffn::moe) > 0; }
  std::string kind() const;  // "dense", "moe", "mamba", "hybrid"

  ParamCounts params() const;
  // Every parameter of the checkpoint: params() plus vision_params; what published sizes count.
  std::int64_t checkpoint_params() const;
  // Parameters touched per token with `top_k` routed experts active.
  std::int64_t active_params(std::int64_t top_k) const;

  // Per-layer parameter counts of single modules (used by the memory and step models).
  std::int64_t attention_params_per_layer() const;
  std::int64_t mamba_params_per_layer() const;
  std::int64_t mlp_params_per_layer() const;
  std::int64_t expert_params() const;  // one routed expert
  std::int64_t shared_expert_params_per_layer() const;
  std::int64_t router_params_per_layer() const;
  std::int64_t norm_params() const;  // one norm
  // The largest single linear weight (elements): sizes the QLoRA dequantization buffer.
  std::int64_t largest_linear() const;
};

// Reads a config.json object. `id` names the model in messages.
Result<ModelSpec> parse_model_config(const json& config, const std::string& id);

// Reads a preset file of gpu-db/models/ ({"schema": "ftcost.model/1", "config": {...}, ...}) or, when the
// object has no "config" key, a bare config.json.
Result<ModelSpec> parse_model_file(const json& doc, const std::string& source);

// How far a preset's count may be from a published size with no exact count (the bar of issue 41): 0.5% for
// a size published to 3 or more significant digits; half a unit of the last digit for one published to 2
// (2.8B: 1.8%), the size's own rounding.
double published_size_tolerance(double published_total);

const char* mixer_name(Mixer m);
const char* ffn_name(Ffn f);

}  // namespace ftcost
