#include "ftcost/model.hpp"

#include "ftcost/enum_names.hpp"
#include "model_families.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

namespace ftcost {

constexpr EnumName<Mixer> kMixerNames[] = {
    {Mixer::none, "none"}, {Mixer::attention, "attention"}, {Mixer::mamba, "mamba"}};
const char* mixer_name(Mixer m) { return enum_name(kMixerNames, m); }

constexpr EnumName<Ffn> kFfnNames[] = {{Ffn::none, "none"}, {Ffn::mlp, "mlp"}, {Ffn::moe, "moe"}};
const char* ffn_name(Ffn f) { return enum_name(kFfnNames, f); }

std::int64_t AttentionSpec::q_dim() const {
  return mla ? heads * (qk_nope_head_dim + qk_rope_head_dim) : heads * head_dim;
}
std::int64_t AttentionSpec::kv_dim() const {
  return mla ? heads * (qk_nope_head_dim + qk_rope_head_dim) : kv_heads * head_dim;
}
std::int64_t AttentionSpec::v_dim() const { return mla ? heads * v_head_dim : heads * head_dim; }

std::int64_t ModelSpec::checkpoint_params() const { return params().total() + vision_params; }

std::int64_t ParamCounts::total() const {
  return embedding + lm_head + attention + mamba + mlp + experts + shared_experts + router + norms;
}

json ParamCounts::to_json() const {
  return json_object({"embedding", embedding}, {"lm_head", lm_head}, {"attention", attention},
                     {"mamba", mamba}, {"mlp", mlp}, {"experts", experts}, {"shared_experts", shared_experts},
                     {"router", router}, {"norms", norms}, {"total", total()});
}

std::int64_t ModelSpec::layers() const {
  std::int64_t n = 0;
  for (const auto& g : groups) n += g.count;
  return n;
}

std::int64_t ModelSpec::layers_with(Ffn f) const {
  std::int64_t n = 0;
  for (const auto& g : groups)
    if (g.ffn == f) n += g.count;
  return n;
}

std::int64_t ModelSpec::layers_with(Mixer m) const {
  std::int64_t n = 0;
  for (const auto& g : groups)
    if (g.mixer == m) n += g.count;
  return n;
}

std::string ModelSpec::kind() const {
  bool has_mamba = layers_with(Mixer::mamba) > 0;
  bool has_attn = layers_with(Mixer::attention) > 0;
  if (has_mamba && has_attn) return "hybrid";
  if (has_mamba) return is_moe() ? "mamba-moe" : "mamba";
  return is_moe() ? "moe" : "dense";
}

std::int64_t ModelSpec::norm_params() const { return norm == NormKind::layer ? 2 * hidden : hidden; }

std::int64_t ModelSpec::attention_params_per_layer() const {
  const AttentionSpec& a = attn;
  const std::int64_t H = hidden;
  std::int64_t p = 0;
  if (a.mla) {
    const std::int64_t qk_head = a.qk_nope_head_dim + a.qk_rope_head_dim;
    if (a.q_lora_rank > 0) {
      p += H * a.q_lora_rank + a.q_lora_rank + a.q_lora_rank * a.heads * qk_head;
    } else {
      p += H * a.heads * qk_head;
    }
    p += H * (a.kv_lora_rank + a.qk_rope_head_dim) + a.kv_lora_rank;
    p += a.kv_lora_rank * a.heads * (a.qk_nope_head_dim + a.v_head_dim);
    p += a.heads * a.v_head_dim * H;
    return p;
  }
  const std::int64_t q = a.heads * a.head_dim;
  const std::int64_t kv = a.kv_heads * a.head_dim;
  p += H * q + 2 * H * kv + q * H;
  if (a.qkv_bias) p += q + 2 * kv;
  if (a.o_bias) p += H;
  p += a.qk_norm_params + a.sinks;
  return p;
}

std::int64_t ModelSpec::mamba_params_per_layer() const {
  const MambaSpec& m = mamba;
  const std::int64_t H = hidden;
  std::int64_t p = H * 2 * m.d_inner;  // in_proj
  if (m.proj_bias) p += 2 * m.d_inner;
  p += m.d_inner * m.d_conv + (m.conv_bias ? m.d_inner : 0);  // depthwise conv
  p += m.d_inner * (m.dt_rank + 2 * m.d_state);               // x_proj
  p += m.dt_rank * m.d_inner + m.d_inner;                     // dt_proj (+bias)
  p += m.d_inner * m.d_state + m.d_inner;                     // A_log, D
  p += m.d_inner * H + (m.proj_bias ? H : 0);                 // out_proj
  if (family == "jamba") p += m.dt_rank + 2 * m.d_state;      // dt/B/C layernorms
  return p;
}

namespace {

// An MLP of width F on hidden size H: gate, up and down projections (up and down when not gated), with their
// biases where `bias`.
std::int64_t ffn_params(std::int64_t H, std::int64_t F, bool gated, bool bias) {
  std::int64_t p = (gated ? 3 : 2) * H * F;
  if (bias) p += (gated ? 2 * F : F) + H;
  return p;
}

}  // namespace

std::int64_t ModelSpec::mlp_params_per_layer() const {
  return ffn_params(hidden, mlp.intermediate, mlp.gated, mlp.bias);
}

std::int64_t ModelSpec::expert_params() const {
  return ffn_params(hidden, moe.expert_intermediate, moe.gated, moe.expert_bias);
}

std::int64_t ModelSpec::shared_expert_params_per_layer() const {
  const std::int64_t H = hidden;
  std::int64_t p = moe.shared_experts * 3 * H * moe.shared_intermediate;
  if (moe.shared_gate) p += H;
  return p;
}

std::int64_t ModelSpec::router_params_per_layer() const {
  return hidden * moe.experts + (moe.router_bias ? moe.experts : 0);
}

std::int64_t ModelSpec::largest_linear() const {
  const std::int64_t H = hidden;
  std::int64_t m = 0;
  if (layers_with(Mixer::attention) > 0) m = std::max(m, H * std::max(attn.q_dim(), attn.v_dim()));
  if (layers_with(Mixer::mamba) > 0) m = std::max(m, H * 2 * mamba.d_inner);
  if (layers_with(Ffn::mlp) > 0) m = std::max(m, H * mlp.intermediate * (fused_gate_up ? 2 : 1));
  if (layers_with(Ffn::moe) > 0) {
    std::int64_t fused = fused_gate_up ? 2 : 1;
    m = std::max(m, H * moe.expert_intermediate * fused);
    m = std::max(m, H * moe.shared_intermediate);
  }
  return m;
}

ParamCounts ModelSpec::params() const {
  ParamCounts c;
  c.embedding = vocab * hidden;
  c.lm_head = tied_embeddings ? 0 : vocab * hidden + (lm_head_bias ? vocab : 0);
  const std::int64_t np = norm_params();
  for (const auto& g : groups) {
    std::int64_t norms_per_layer = 0;
    if (g.mixer == Mixer::attention) {
      c.attention += g.count * attention_params_per_layer();
      norms_per_layer += norms_per_attention_layer;
    } else if (g.mixer == Mixer::mamba) {
      c.mamba += g.count * mamba_params_per_layer();
      norms_per_layer += 1;
      if (g.ffn != Ffn::none) norms_per_layer += 1;  // pre-FFN norm of hybrid layers
    } else {
      norms_per_layer += 1;  // MoE-only block (BlackMamba): one pre-norm
    }
    if (g.ffn == Ffn::mlp) {
      c.mlp += g.count * mlp_params_per_layer();
    } else if (g.ffn == Ffn::moe) {
      c.experts += g.count * moe.experts * expert_params();
      c.shared_experts += g.count * shared_expert_params_per_layer();
      c.router += g.count * router_params_per_layer();
    }
    c.norms += g.count * norms_per_layer * np;
  }
  c.norms += family == "blackmamba" ? 2 * hidden : np;  // final norm (BlackMamba: LayerNorm with bias)
  return c;
}

std::int64_t ModelSpec::active_params(std::int64_t top_k) const {
  ParamCounts c = params();
  std::int64_t active = c.total() - c.experts;
  if (moe.experts > 0) active += layers_with(Ffn::moe) * std::min(top_k, moe.experts) * expert_params();
  return active;
}

namespace {

#define FTCOST_GET(var, expr) FTCOST_TRY(var, expr)

using model_families::check_rope;
using model_families::family_parser;
using model_families::FamilyParser;
using model_families::parse_blackmamba;
using model_families::parse_llama_like;
using model_families::parse_mamba;
using model_families::parse_mixtral_like;
using model_families::supported_list;

// ---------------------------------------------------------------- the rule for unknown architectures
// A config whose model_type has no reader above is read generically (Llama-style layers, Mixtral-style
// experts) only when a parameter count confirms the reading; otherwise it is refused. docs/sources/
// model-families.md §1 says why these tolerances: an exact count (the config's num_parameters/total_params,
// or a safetensors index's total_size / bytes per parameter) must be met within 1%, which still catches an
// untied lm_head read as tied (>= 1.8% of a 7B model with a 32K vocabulary), a non-gated MLP read as gated
// and a halved intermediate_size (Qwen-1: 56%); a published size rounded to 2-3 significant digits (a
// preset's `published.total_params`) within 2.5%, the rounding tolerance of db check and
// tests/unit/test_models.cpp.
constexpr double kExactCountTolerance = 0.01;
constexpr double kRoundedCountTolerance = 0.025;

struct CountClaim {
  double params = 0;  // 0: no count to confirm with
  std::string source;
  double tolerance = kExactCountTolerance;
};

std::string billions(double n) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3fB", n / 1e9);
  return buf;
}

std::string percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", fraction * 100.0);
  return buf;
}

Result<double> bytes_per_param(const json& c, const std::string& p) {
  if (!has(c, "torch_dtype"))
    return make_error(Errc::missing_field, join_path(p, "torch_dtype"),
                      "needed to turn safetensors_index.metadata.total_size (bytes) into a parameter count: "
                      "bfloat16, float16 or float32, as the checkpoint stores its weights");
  FTCOST_GET(dtype, get_string(c, "torch_dtype", p));
  if (dtype == "bfloat16" || dtype == "float16") return 2.0;
  if (dtype == "float32") return 4.0;
  return make_error(
      Errc::invalid_value, join_path(p, "torch_dtype"),
      "must be bfloat16, float16 or float32 to read a safetensors index's total_size, got \"" + dtype + "\"");
}

// The count a config.json itself carries: num_parameters / total_params (what transformers'
// PreTrainedModel.num_parameters() returns, or a model card's exact count), else a pasted safetensors index.
Result<CountClaim> config_count_claim(const json& c, const std::string& p) {
  for (const char* key : {"num_parameters", "total_params"}) {
    if (!has(c, key)) continue;
    FTCOST_GET(n, get_count(c, key, p, 1, std::int64_t{1} << 50));
    return CountClaim{static_cast<double>(n),
                      std::string(key) + " (" + billions(static_cast<double>(n)) + ")", kExactCountTolerance};
  }
  if (!has(c, "safetensors_index")) return CountClaim{};
  const std::string ip = join_path(p, "safetensors_index");
  const json& idx = c.at("safetensors_index");
  if (!idx.is_object() || !has(idx, "metadata") || !idx.at("metadata").is_object())
    return make_error(Errc::wrong_type, join_path(ip, "metadata"),
                      "must be the contents of the model's model.safetensors.index.json: {\"metadata\": "
                      "{\"total_size\": BYTES}, \"weight_map\": {...}}");
  FTCOST_GET(bytes, get_count(idx.at("metadata"), "total_size", join_path(ip, "metadata"), 1,
                              std::int64_t{1} << 52));
  FTCOST_GET(b, bytes_per_param(c, p));
  const double n = static_cast<double>(bytes) / b;
  return CountClaim{n,
                    "the safetensors index (" + std::to_string(bytes) + " bytes / " + (b > 2 ? "4" : "2") +
                        " bytes per parameter = " + billions(n) + ")",
                    kExactCountTolerance};
}

Status parse_generic(const json& c, ModelSpec& m, const std::string& mt, const std::string& p,
                     const CountClaim& outside) {
  const std::string what = "model_type '" + (mt.empty() ? std::string("(none)") : mt) + "'";
  if (!(has(c, "hidden_size") && has(c, "num_hidden_layers") && has(c, "num_attention_heads") &&
        has(c, "intermediate_size") && has(c, "vocab_size")))
    return make_error(Errc::unsupported_architecture, join_path(p, "model_type"),
                      what + " is not supported; supported: " + supported_list());
  const bool moe = has(c, "num_local_experts") || has(c, "num_experts");
  const std::string reading = std::string("generic ") + (moe ? "MoE" : "dense") +
                              " decoder (Llama-style layers" + (moe ? ", Mixtral-style experts)" : ")");
  FTCOST_GET(own, config_count_claim(c, p));
  const CountClaim claim = own.params > 0 ? own : outside;
  if (claim.params <= 0)
    return make_error(Errc::unsupported_architecture, join_path(p, "model_type"),
                      what + " is not one ftcost knows, and nothing confirms a " + reading +
                          " reading of it, so ftcost does not guess. Add \"num_parameters\": N (the exact "
                          "count from the model "
                          "card, or model.num_parameters()) to the config.json, or \"safetensors_index\": "
                          "{the contents of its "
                          "model.safetensors.index.json} with its torch_dtype; ftcost then reads it "
                          "generically if the count "
                          "agrees. Supported model_types: " +
                          supported_list());
  m.family = mt.empty() ? "generic" : mt;
  Status st = Ok{};
  if (moe) {
    json c2 = c;
    if (!has(c2, "num_local_experts")) c2["num_local_experts"] = c.at("num_experts");
    st = parse_mixtral_like(c2, m, p);
  } else {
    st = parse_llama_like(c, m, p);
  }
  if (!st.ok()) return st;
  const double total = static_cast<double>(m.params().total());
  const double off = std::fabs(total - claim.params) / claim.params;
  if (off > claim.tolerance)
    return make_error(
        Errc::unsupported_architecture, join_path(p, "model_type"),
        what + " is not one ftcost knows: read as a " + reading + " it has " + billions(total) +
            " parameters, but " + claim.source + " says " + billions(claim.params) + " (" + percent(off) +
            " apart, more than " + percent(claim.tolerance) +
            "): its layers are not Llama-style, so ftcost cannot price it. Supported model_types: " +
            supported_list());
  m.warnings.push_back(what + " is not one ftcost knows; read as a " + reading + ": " + billions(total) +
                       " parameters, " + percent(off) + " from " + claim.source);
  return Ok{};
}

Status parse_structure(const json& c, ModelSpec& m, const std::string& mt, const std::string& p,
                       const CountClaim& outside) {
  if (has(c, "mamba_moe_layers")) {
    m.family = "blackmamba";
    return parse_blackmamba(c, m, p);
  }
  if (mt.empty() && has(c, "d_model") && has(c, "n_layer")) {
    m.family = "mamba";
    return parse_mamba(c, m, p);
  }
  if (FamilyParser parse = family_parser(mt)) {
    m.family = mt;
    return parse(c, m, p);
  }
  return parse_generic(c, m, mt, p, outside);
}

// The context window, under the name the config.json gives it: max_position_embeddings (Llama, Mistral,
// Mixtral, Qwen, DeepSeek, OLMoE, Jamba, gpt-oss configs in gpu-db/models), max_seq_len (DBRX:
// gpu-db/models/dbrx-base.json), max_sequence_length (BlackMamba: gpu-db/models/blackmamba-2.8b.json).
// Mamba's config has none: a recurrent model has no position limit.
Status read_context_window(const json& c, ModelSpec& m, const std::string& p) {
  for (const char* key : {"max_position_embeddings", "max_seq_len", "max_sequence_length"}) {
    if (!has(c, key)) continue;
    FTCOST_GET(ctx, get_count(c, key, p, 1, std::int64_t{1} << 40));
    m.max_position_embeddings = ctx;
    m.max_position_field = key;
    break;
  }
  return Ok{};
}

Result<ModelSpec> parse_config_with(const json& config, const std::string& id, const CountClaim& outside) {
  std::string p = "config";
  if (!config.is_object()) return make_error(Errc::wrong_type, id, "config.json must be a JSON object");
  ModelSpec m;
  m.id = id;
  m.display_name = id;
  std::string mt;
  if (has(config, "model_type")) {
    FTCOST_GET(v, get_string(config, "model_type", p));
    mt = v;
  }
  FTCOST_CHECK(parse_structure(config, m, mt, p, outside));
  m.own_training_code = m.family == "blackmamba" || m.family == "mamba";
  m.fused_gate_up = m.family == "blackmamba" || m.family == "gpt_oss" || m.family == "llama4" ||
                    m.family == "llama4_text";  // Llama4TextExperts.gate_up_proj
  if (m.layers() == 0) return make_error(Errc::invalid_value, p, "model has no layers");
  // Gemma-3's and Llama-4's multimodal configs keep the decoder's fields in text_config (text_part).
  const bool nested = (m.family == "gemma3" || m.family == "llama4") && has(config, "text_config");
  const json& c = nested ? config.at("text_config") : config;
  if (nested) p = join_path(p, "text_config");
  FTCOST_CHECK(read_context_window(c, m, p));
  if (m.layers_with(Mixer::attention) > 0 && m.attn.heads <= 0)
    return make_error(Errc::invalid_value, join_path(p, "num_attention_heads"), "must be positive");
  FTCOST_CHECK(check_rope(c, p));
  return m;
}

}  // namespace

double published_size_tolerance(double published_total) {
  auto n = static_cast<std::int64_t>(std::llround(published_total));
  if (n <= 0) return 0.005;
  std::int64_t unit = 1;
  while (n % 10 == 0) {
    n /= 10;
    unit *= 10;
  }
  if (n >= 100) return 0.005;
  return std::max(0.005, 0.5 * static_cast<double>(unit) / published_total);
}

Result<ModelSpec> parse_model_config(const json& c, const std::string& id) {
  return parse_config_with(c, id, CountClaim{});
}

Result<ModelSpec> parse_model_file(const json& doc, const std::string& source) {
  if (!doc.is_object()) return make_error(Errc::wrong_type, source, "must be a JSON object");
  if (!has(doc, "config")) return parse_model_config(doc, source);  // a bare config.json
  FTCOST_GET(schema, get_string(doc, "schema", ""));
  if (schema != "ftcost.model/1")
    return make_error(Errc::schema_mismatch, source + ": schema",
                      "expected \"ftcost.model/1\", got \"" + schema + "\"");
  FTCOST_GET(id, get_string(doc, "id", ""));
  CountClaim published;  // a preset's published size confirms the generic reading of an unknown model_type
  if (has(doc, "published") && doc.at("published").is_object()) {
    FTCOST_GET(total, opt_number(doc.at("published"), "total_params", "published", 0));
    FTCOST_GET(exact, opt_number(doc.at("published"), "exact_params", "published", 0));
    if (exact > 0)
      published = CountClaim{exact, "published.exact_params (" + billions(exact) + ")", kExactCountTolerance};
    else if (total > 0)
      published =
          CountClaim{total, "published.total_params (" + billions(total) + ")", kRoundedCountTolerance};
  }
  FTCOST_TRY(m, parse_config_with(doc.at("config"), id, published));
  ModelSpec out = std::move(m);
  FTCOST_GET(dn, opt_string(doc, "display_name", "", id));
  FTCOST_GET(repo, opt_string(doc, "hf_repo", "", ""));
  out.display_name = dn;
  out.hf_repo = repo;
  if (has(doc, "published")) {
    const json& pub = doc.at("published");
    FTCOST_GET(total, opt_number(pub, "total_params", "published", 0));
    FTCOST_GET(active, opt_number(pub, "active_params", "published", 0));
    FTCOST_GET(ptk, opt_count(pub, "top_k", "published", 0, 0, 1 << 12));
    FTCOST_GET(exact, opt_number(pub, "exact_params", "published", 0));
    out.published_exact = exact;
    out.published_total = total;
    out.published_active = active;
    out.published_top_k = ptk;
  }
  if (has(doc, "overrides")) {
    const json& ov = doc.at("overrides");
    if (has(ov, "top_k")) {
      FTCOST_GET(k, get_count(ov, "top_k", "overrides", 1, std::max<std::int64_t>(1, out.moe.experts)));
      out.moe.top_k = k;
    }
  }
  return out;
}

}  // namespace ftcost
