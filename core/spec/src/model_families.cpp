// The config.json readers of the model families ftcost knows, each read from its modeling code's structure
// (docs/sources/model-families.md): model_type -> reader (family_parser), and the readers the rule for
// unknown architectures (model.cpp) reuses for its generic reading.
#include "model_families.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

namespace ftcost::model_families {

#define FTCOST_GET(var, expr) FTCOST_TRY(var, expr)

namespace {

// Adds `count` layers, merging with the previous group when identical.
void push_layers(std::vector<LayerGroup>& groups, Mixer m, Ffn f, std::int64_t count) {
  if (count <= 0) return;
  if (!groups.empty() && groups.back().mixer == m && groups.back().ffn == f) {
    groups.back().count += count;
  } else {
    groups.push_back(LayerGroup{m, f, count});
  }
}

// Adds `layers` attention layers; layer i's FFN is the experts where is_moe(i), else the dense MLP.
template <class IsMoe>
void push_attention_layers(ModelSpec& m, std::int64_t layers, IsMoe is_moe) {
  for (std::int64_t i = 0; i < layers; ++i)
    push_layers(m.groups, Mixer::attention, is_moe(i) ? Ffn::moe : Ffn::mlp, 1);
}

}  // namespace

// rope_theta and rope_scaling: the estimate does not use them (RoPE costs no memory and a negligible share
// of the step), but a config transformers would refuse is not a model to price. The rules of transformers'
// rope_config_validation (modeling_rope_utils.py): rope_scaling is null or an object whose rope_type (or the
// legacy `type`) names an implemented RoPE, and linear, dynamic, yarn and llama3 need a float factor >= 1
// (optional for longrope). "su" and "mrope" are the names older Phi-3 and Qwen2-VL configs use (read as
// longrope and default). A factor above 1024 would stretch a 4,096-token context past the 4M-token --seq
// limit: not a real config.
Status check_rope(const json& c, const std::string& p) {
  if (has(c, "rope_theta")) {
    FTCOST_GET(theta, get_number(c, "rope_theta", p));
    if (!(theta > 0) || !std::isfinite(theta))
      return make_error(Errc::out_of_range, join_path(p, "rope_theta"),
                        "must be a positive number (the RoPE base, e.g. 10000 or 500000), got " +
                            c.at("rope_theta").dump());
  }
  if (!has(c, "rope_scaling")) return Ok{};
  const json& rs = c.at("rope_scaling");
  const std::string rp = join_path(p, "rope_scaling");
  if (!rs.is_object())
    return make_error(
        Errc::wrong_type, rp,
        "must be null or an object such as {\"rope_type\": \"llama3\", \"factor\": 8.0}, got " + rs.dump());
  const char* type_key = has(rs, "rope_type") ? "rope_type" : "type";
  FTCOST_GET(type, get_string(rs, type_key, rp));
  static const std::vector<std::string> types = {"default",  "linear", "dynamic", "yarn",
                                                 "longrope", "llama3", "su",      "mrope"};
  if (std::find(types.begin(), types.end(), type) == types.end())
    return make_error(
        Errc::invalid_value, join_path(rp, type_key),
        "must be one of default, linear, dynamic, yarn, longrope, llama3, su, mrope (transformers' RoPE "
        "types), got \"" +
            type + "\"");
  const bool needs_factor = type == "linear" || type == "dynamic" || type == "yarn" || type == "llama3";
  if (needs_factor && !has(rs, "factor"))
    return make_error(Errc::missing_field, join_path(rp, "factor"), "required with rope_type " + type);
  if (has(rs, "factor")) {
    FTCOST_GET(factor, get_number(rs, "factor", rp));
    if (!(factor >= 1 && factor <= 1024))
      return make_error(Errc::out_of_range, join_path(rp, "factor"),
                        "must be a number from 1 to 1024 (how far RoPE stretches the context), got " +
                            rs.at("factor").dump());
  }
  return Ok{};
}

namespace {

// Which decoder layers use the sliding window: transformers' `layer_types` ("sliding_attention" /
// "full_attention" per layer, e.g. gpt-oss). Without it Gemma-2 alternates, starting with a sliding layer
// (models/gemma2/configuration_gemma2.py @ 008e5743, Gemma2Config.__post_init__), and every other model
// with a window uses it in every layer (Mistral v0.1).
Status read_sliding_layers(const json& c, ModelSpec& m, const std::string& p) {
  m.attn.sliding_fraction = 1.0;
  const auto it = c.find("layer_types");
  if (it != c.end() && !it->is_null()) {
    const std::string path = join_path(p, "layer_types");
    if (!it->is_array() || it->empty())
      return make_error(Errc::wrong_type, path,
                        "must be a non-empty array such as [\"sliding_attention\", ...]");
    std::size_t sliding = 0;
    for (std::size_t i = 0; i < it->size(); ++i) {
      const json& e = (*it)[i];
      if (!e.is_string())
        return make_error(Errc::wrong_type, join_path(p, "layer_types[" + std::to_string(i) + "]"),
                          "must be a string such as \"sliding_attention\" or \"full_attention\"");
      if (e.get<std::string>() == "sliding_attention") ++sliding;
    }
    m.attn.sliding_fraction = static_cast<double>(sliding) / static_cast<double>(it->size());
  } else if (m.family == "gemma2") {
    FTCOST_GET(layers, opt_count(c, "num_hidden_layers", p, 2, 1, 100000));
    const std::int64_t sliding = (layers + 1) / 2;  // layers 0, 2, 4, ...
    m.attn.sliding_fraction = static_cast<double>(sliding) / static_cast<double>(layers);
  }
  return Ok{};
}

// Standard decoder-only attention fields (Llama family naming).
Status read_attention(const json& c, ModelSpec& m, const std::string& p) {
  FTCOST_GET(heads, get_count(c, "num_attention_heads", p, 1, 4096));
  FTCOST_GET(kv, opt_count(c, "num_key_value_heads", p, heads, 1, 4096));
  if (heads % kv != 0) {
    return make_error(
        Errc::invalid_value, join_path(p, "num_key_value_heads"),
        "must divide num_attention_heads (" + std::to_string(heads) + "), got " + std::to_string(kv));
  }
  std::int64_t default_hd = m.hidden / heads;
  FTCOST_GET(hd, opt_count(c, "head_dim", p, default_hd, 1, 4096));
  m.attn.heads = heads;
  m.attn.kv_heads = kv;
  m.attn.head_dim = hd;
  FTCOST_GET(bias, opt_bool(c, "attention_bias", p, false));
  m.attn.qkv_bias = bias;
  m.attn.o_bias = bias;
  FTCOST_GET(sw, opt_count(c, "sliding_window", p, 0, 0, std::int64_t{1} << 32));
  FTCOST_GET(use_sw, opt_bool(c, "use_sliding_window", p, true));
  m.attn.sliding_window = use_sw ? sw : 0;
  return read_sliding_layers(c, m, p);
}

Status read_common(const json& c, ModelSpec& m, const std::string& p, const char* hidden_key = "hidden_size",
                   const char* vocab_key = "vocab_size") {
  FTCOST_GET(hidden, get_count(c, hidden_key, p, 1, 1 << 20));
  FTCOST_GET(vocab, get_count(c, vocab_key, p, 1, 1 << 24));
  m.hidden = hidden;
  m.vocab = vocab;
  FTCOST_GET(tied, opt_bool(c, "tie_word_embeddings", p, false));
  m.tied_embeddings = tied;
  return Ok{};
}

Status read_mlp(const json& c, ModelSpec& m, const std::string& p) {
  FTCOST_GET(f, get_count(c, "intermediate_size", p, 1, 1 << 22));
  m.mlp.intermediate = f;
  m.mlp.gated = true;
  FTCOST_GET(bias, opt_bool(c, "mlp_bias", p, false));
  m.mlp.bias = bias;
  return Ok{};
}

Result<std::int64_t> read_top_k(const json& c, const std::string& p, std::int64_t experts) {
  const char* key = has(c, "num_experts_per_tok") ? "num_experts_per_tok"
                    : has(c, "experts_per_token") ? "experts_per_token"
                                                  : nullptr;
  if (key == nullptr)
    return make_error(Errc::missing_field, join_path(p, "num_experts_per_tok"),
                      "MoE config needs the experts per token");
  FTCOST_GET(k, get_count(c, key, p, 1, 1 << 12));
  if (k > experts) {
    return make_error(
        Errc::invalid_value, join_path(p, "num_experts_per_tok"),
        "is " + std::to_string(k) + " but the model has only " + std::to_string(experts) + " experts");
  }
  return k;
}

// What every decoder config states: read_common, num_hidden_layers (the result), read_attention and, with
// `mlp`, the dense MLP (read_mlp).
Result<std::int64_t> read_decoder(const json& c, ModelSpec& m, const std::string& p, bool mlp) {
  FTCOST_CHECK(read_common(c, m, p));
  FTCOST_GET(layers, get_count(c, "num_hidden_layers", p, 1, 100000));
  FTCOST_CHECK(read_attention(c, m, p));
  if (!mlp) return layers;
  FTCOST_CHECK(read_mlp(c, m, p));
  return layers;
}

// The routed experts: how many (`experts_key`), how many a token takes (read_top_k) and their width
// (`width_key`).
Status read_experts(const json& c, ModelSpec& m, const std::string& p, const char* experts_key,
                    const char* width_key) {
  FTCOST_GET(experts, get_count(c, experts_key, p, 1, 1 << 12));
  FTCOST_GET(k, read_top_k(c, p, experts));
  FTCOST_GET(width, get_count(c, width_key, p, 1, 1 << 22));
  m.moe.experts = experts;
  m.moe.top_k = k;
  m.moe.expert_intermediate = width;
  return Ok{};
}

}  // namespace

Status parse_llama_like(const json& c, ModelSpec& m, const std::string& p) {
  FTCOST_GET(layers, read_decoder(c, m, p, true));
  const std::string& f = m.family;
  if (f == "qwen2") {
    m.attn.qkv_bias = true;  // Qwen2 has biases on q, k, v (not o)
    m.attn.o_bias = false;
  }
  if (f == "gemma2" || f == "gemma") {
    if (!has(c, "tie_word_embeddings")) m.tied_embeddings = true;  // Gemma configs default to tied
    if (f == "gemma2") m.norms_per_attention_layer = 4;
  }
  if (f == "qwen3") {
    m.attn.qk_norm = true;
    m.attn.qk_norm_params = 2 * m.attn.head_dim;
  }
  if (f == "olmo2") {  // Olmo2Attention: q_norm / k_norm over the whole projection (model-families.md §7)
    m.attn.qk_norm = true;
    m.attn.qk_norm_params = m.attn.q_dim() + m.attn.kv_dim();
  }
  push_layers(m.groups, Mixer::attention, Ffn::mlp, layers);
  return Ok{};
}

Status parse_mixtral_like(const json& c, ModelSpec& m, const std::string& p) {
  FTCOST_GET(layers, read_decoder(c, m, p, false));
  FTCOST_CHECK(read_experts(c, m, p, "num_local_experts", "intermediate_size"));
  m.moe.gated = true;
  if (m.family == "phimoe") {
    m.norm = NormKind::layer;
    m.lm_head_bias = true;  // PhiMoE: lm_head_bias true in the config
    FTCOST_GET(lmb, opt_bool(c, "lm_head_bias", p, true));
    m.lm_head_bias = lmb;
  }
  if (m.family == "gpt_oss") {
    m.moe.expert_bias = true;
    m.moe.router_bias = true;
    m.attn.qkv_bias = true;
    m.attn.o_bias = true;
    m.attn.sinks = m.attn.heads;
  }
  push_layers(m.groups, Mixer::attention, Ffn::moe, layers);
  return Ok{};
}

namespace {

Status parse_qwen_moe(const json& c, ModelSpec& m, const std::string& p) {
  FTCOST_GET(layers, read_decoder(c, m, p, true));
  FTCOST_CHECK(read_experts(c, m, p, "num_experts", "moe_intermediate_size"));
  FTCOST_GET(step, opt_count(c, "decoder_sparse_step", p, 1, 1, 100000));
  if (m.family == "qwen2_moe") {
    m.attn.qkv_bias = true;
    m.attn.o_bias = false;
    FTCOST_GET(shared, opt_count(c, "shared_expert_intermediate_size", p, 0, 0, 1 << 22));
    if (shared > 0) {
      m.moe.shared_experts = 1;
      m.moe.shared_intermediate = shared;
      m.moe.shared_gate = true;
    }
  } else {  // qwen3_moe: per-head q/k RMSNorm, no shared expert
    m.attn.qk_norm = true;
    m.attn.qk_norm_params = 2 * m.attn.head_dim;
  }
  std::vector<std::int64_t> mlp_only;
  if (has(c, "mlp_only_layers")) {
    const json& a = c.at("mlp_only_layers");
    if (!a.is_array())
      return make_error(Errc::wrong_type, join_path(p, "mlp_only_layers"),
                        "must be an array of layer indices");
    for (const auto& v : a) {
      if (!v.is_number_integer())
        return make_error(Errc::wrong_type, join_path(p, "mlp_only_layers"), "must hold integers");
      mlp_only.push_back(v.get<std::int64_t>());
    }
  }
  push_attention_layers(m, layers, [&](std::int64_t i) {
    return std::find(mlp_only.begin(), mlp_only.end(), i) == mlp_only.end() && (i + 1) % step == 0;
  });
  return Ok{};
}

Status parse_deepseek(const json& c, ModelSpec& m, const std::string& p) {
  FTCOST_GET(layers, read_decoder(c, m, p, true));
  FTCOST_CHECK(read_experts(c, m, p, "n_routed_experts", "moe_intermediate_size"));
  FTCOST_GET(shared, opt_count(c, "n_shared_experts", p, 0, 0, 1 << 12));
  FTCOST_GET(first_dense, opt_count(c, "first_k_dense_replace", p, 0, 0, 100000));
  FTCOST_GET(freq, opt_count(c, "moe_layer_freq", p, 1, 1, 100000));
  m.moe.shared_experts = shared;
  m.moe.shared_intermediate = m.moe.expert_intermediate;  // each shared expert has the routed expert's width
  if (m.family == "deepseek_v2" || m.family == "deepseek_v3") {
    m.attn.mla = true;
    FTCOST_GET(ql, opt_count(c, "q_lora_rank", p, 0, 0, 1 << 20));
    FTCOST_GET(kvl, get_count(c, "kv_lora_rank", p, 1, 1 << 20));
    FTCOST_GET(nope, get_count(c, "qk_nope_head_dim", p, 1, 4096));
    FTCOST_GET(rope, get_count(c, "qk_rope_head_dim", p, 1, 4096));
    FTCOST_GET(vh, get_count(c, "v_head_dim", p, 1, 4096));
    m.attn.q_lora_rank = ql;
    m.attn.kv_lora_rank = kvl;
    m.attn.qk_nope_head_dim = nope;
    m.attn.qk_rope_head_dim = rope;
    m.attn.v_head_dim = vh;
    m.attn.kv_heads = m.attn.heads;
    m.attn.head_dim = nope + rope;
  }
  push_attention_layers(m, layers, [&](std::int64_t i) { return i >= first_dense && i % freq == 0; });
  return Ok{};
}

Status parse_olmoe(const json& c, ModelSpec& m, const std::string& p) {
  FTCOST_GET(layers, read_decoder(c, m, p, false));
  FTCOST_CHECK(read_experts(c, m, p, "num_experts", "intermediate_size"));
  m.attn.qk_norm = true;  // OLMoE normalises full q and k (not per head)
  m.attn.qk_norm_params = m.attn.q_dim() + m.attn.kv_dim();
  push_layers(m.groups, Mixer::attention, Ffn::moe, layers);
  return Ok{};
}

Status parse_dbrx(const json& c, ModelSpec& m, const std::string& p) {
  FTCOST_CHECK(read_common(c, m, p, "d_model"));
  FTCOST_GET(layers, get_count(c, "n_layers", p, 1, 100000));
  FTCOST_GET(heads, get_count(c, "n_heads", p, 1, 4096));
  if (!has(c, "attn_config") || !c.at("attn_config").is_object())
    return make_error(Errc::missing_field, join_path(p, "attn_config"), "DBRX config needs attn_config");
  if (!has(c, "ffn_config") || !c.at("ffn_config").is_object())
    return make_error(Errc::missing_field, join_path(p, "ffn_config"), "DBRX config needs ffn_config");
  const json& ac = c.at("attn_config");
  const json& fc = c.at("ffn_config");
  FTCOST_GET(kv, opt_count(ac, "kv_n_heads", join_path(p, "attn_config"), heads, 1, 4096));
  FTCOST_GET(ffn, get_count(fc, "ffn_hidden_size", join_path(p, "ffn_config"), 1, 1 << 22));
  FTCOST_GET(experts, get_count(fc, "moe_num_experts", join_path(p, "ffn_config"), 1, 1 << 12));
  FTCOST_GET(k, get_count(fc, "moe_top_k", join_path(p, "ffn_config"), 1, experts));
  m.attn.heads = heads;
  m.attn.kv_heads = kv;
  m.attn.head_dim = m.hidden / heads;
  m.norm = NormKind::layer_no_bias;
  m.moe.experts = experts;
  m.moe.top_k = k;
  m.moe.expert_intermediate = ffn;
  push_layers(m.groups, Mixer::attention, Ffn::moe, layers);
  return Ok{};
}

}  // namespace

Status parse_mamba(const json& c, ModelSpec& m, const std::string& p) {
  // mamba_ssm format (d_model, n_layer) or transformers' MambaConfig (hidden_size, num_hidden_layers).
  const bool ssm_format = has(c, "d_model");
  FTCOST_GET(hidden, get_count(c, ssm_format ? "d_model" : "hidden_size", p, 1, 1 << 20));
  FTCOST_GET(layers, get_count(c, ssm_format ? "n_layer" : "num_hidden_layers", p, 1, 100000));
  FTCOST_GET(vocab, get_count(c, "vocab_size", p, 1, 1 << 24));
  FTCOST_GET(pad, opt_count(c, "pad_vocab_size_multiple", p, 1, 1, 1 << 16));
  m.hidden = hidden;
  m.vocab = (vocab + pad - 1) / pad * pad;
  m.tied_embeddings = true;
  m.residual_fp32 = true;
  const json* ssm = &c;
  if (ssm_format && has(c, "ssm_cfg") && c.at("ssm_cfg").is_object()) ssm = &c.at("ssm_cfg");
  FTCOST_GET(expand, opt_count(*ssm, "expand", p, 2, 1, 64));
  FTCOST_GET(d_state, opt_count(*ssm, ssm_format ? "d_state" : "state_size", p, 16, 1, 4096));
  FTCOST_GET(d_conv, opt_count(*ssm, ssm_format ? "d_conv" : "conv_kernel", p, 4, 1, 64));
  std::int64_t default_dt = (hidden + 15) / 16;
  FTCOST_GET(dt_rank, opt_count(*ssm, ssm_format ? "dt_rank" : "time_step_rank", p, default_dt, 1, 1 << 20));
  m.mamba.d_inner = expand * hidden;
  m.mamba.d_state = d_state;
  m.mamba.d_conv = d_conv;
  m.mamba.dt_rank = dt_rank;
  m.mamba.conv_bias = true;
  m.mamba.proj_bias = false;
  push_layers(m.groups, Mixer::mamba, Ffn::none, layers);
  return Ok{};
}

Status parse_blackmamba(const json& c, ModelSpec& m, const std::string& p) {
  FTCOST_GET(hidden, get_count(c, "hidden_size", p, 1, 1 << 20));
  FTCOST_GET(vocab, get_count(c, "vocab_size", p, 1, 1 << 24));
  FTCOST_GET(num_layers, get_count(c, "num_layers", p, 1, 100000));
  FTCOST_GET(d_state, opt_count(c, "state_size", p, 16, 1, 4096));
  FTCOST_GET(d_conv, opt_count(c, "conv_dimension", p, 4, 1, 64));
  FTCOST_GET(expand, opt_count(c, "expansion_factor", p, 2, 1, 64));
  FTCOST_GET(ffn, get_count(c, "ffn_hidden_size", p, 1, 1 << 22));
  FTCOST_GET(swiglu, opt_bool(c, "swiglu", p, true));
  m.hidden = hidden;
  m.vocab = vocab;
  m.tied_embeddings = true;
  m.residual_fp32 = true;
  m.mamba.d_inner = expand * hidden;
  m.mamba.d_state = d_state;
  m.mamba.d_conv = d_conv;
  m.mamba.dt_rank = (hidden + 15) / 16;
  m.mamba.conv_bias = true;
  const json& pattern = c.at("mamba_moe_layers");
  if (!pattern.is_array())
    return make_error(Errc::wrong_type, join_path(p, "mamba_moe_layers"),
                      "must be an array such as [\"r\", \"8\", ...]");
  if (static_cast<std::int64_t>(pattern.size()) != num_layers) {
    return make_error(
        Errc::invalid_value, join_path(p, "mamba_moe_layers"),
        "has " + std::to_string(pattern.size()) + " entries but num_layers is " + std::to_string(num_layers));
  }
  std::int64_t experts = 0;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const json& e = pattern[i];
    std::string path = join_path(p, "mamba_moe_layers[" + std::to_string(i) + "]");
    if (!e.is_string())
      return make_error(Errc::wrong_type, path, "must be \"r\" (Mamba) or an expert count such as \"8\"");
    std::string s = e.get<std::string>();
    if (s == "r") {
      push_layers(m.groups, Mixer::mamba, Ffn::none, 1);
      continue;
    }
    std::int64_t n = 0;
    for (char ch : s) {
      if (ch < '0' || ch > '9' || n > 100000)
        return make_error(Errc::invalid_value, path, "must be \"r\" or an expert count, got \"" + s + "\"");
      n = n * 10 + (ch - '0');
    }
    if (n < 1) return make_error(Errc::invalid_value, path, "expert count must be at least 1");
    if (experts != 0 && experts != n)
      return make_error(Errc::invalid_value, path, "mixed expert counts are not supported");
    experts = n;
    push_layers(m.groups, Mixer::none, Ffn::moe, 1);
  }
  if (experts > 0) {
    // The pretrained model routes top-1 (Sinkhorn); a `topk` key, when present, sets it.
    FTCOST_GET(k, opt_count(c, "topk", p, 1, 1, experts));
    m.moe.experts = experts;
    m.moe.top_k = k;
    m.moe.expert_intermediate = ffn;
    m.moe.gated = swiglu;
    m.moe.router_bias = true;  // nn.Linear(hidden, experts) with torch's default bias
  }
  return Ok{};
}

namespace {

Status parse_jamba(const json& c, ModelSpec& m, const std::string& p) {
  FTCOST_GET(layers, read_decoder(c, m, p, true));
  FTCOST_GET(experts, get_count(c, "num_experts", p, 1, 1 << 12));
  FTCOST_GET(k, read_top_k(c, p, experts));
  FTCOST_GET(ap, get_count(c, "attn_layer_period", p, 1, 100000));
  // Defaults as JambaConfig.__init__'s: attn_layer_offset=4, expert_layer_offset=1.
  FTCOST_GET(ao, opt_count(c, "attn_layer_offset", p, 4, 0, 100000));
  FTCOST_GET(ep, get_count(c, "expert_layer_period", p, 1, 100000));
  FTCOST_GET(eo, opt_count(c, "expert_layer_offset", p, 1, 0, 100000));
  // transformers' JambaConfig._check_supported_offset (configuration_jamba.py; docs/sources/
  // transformers-jamba-config.md) raises ValueError when an
  // offset is not smaller than its period: layer i has attention iff i % period == offset, so such a
  // config would have no attention (or no expert) layer at all.
  if (ao >= ap)
    return make_error(
        Errc::invalid_value, join_path(p, "attn_layer_offset"),
        "must be smaller than attn_layer_period (" + std::to_string(ap) + "), got " + std::to_string(ao));
  if (eo >= ep)
    return make_error(
        Errc::invalid_value, join_path(p, "expert_layer_offset"),
        "must be smaller than expert_layer_period (" + std::to_string(ep) + "), got " + std::to_string(eo));
  FTCOST_GET(expand, opt_count(c, "mamba_expand", p, 2, 1, 64));
  FTCOST_GET(d_state, opt_count(c, "mamba_d_state", p, 16, 1, 4096));
  FTCOST_GET(d_conv, opt_count(c, "mamba_d_conv", p, 4, 1, 64));
  FTCOST_GET(dt_rank, opt_count(c, "mamba_dt_rank", p, (m.hidden + 15) / 16, 1, 1 << 20));
  FTCOST_GET(conv_bias, opt_bool(c, "mamba_conv_bias", p, true));
  FTCOST_GET(proj_bias, opt_bool(c, "mamba_proj_bias", p, false));
  m.moe.experts = experts;
  m.moe.top_k = k;
  m.moe.expert_intermediate = m.mlp.intermediate;
  m.mamba = MambaSpec{expand * m.hidden, d_state, d_conv, dt_rank, conv_bias, proj_bias};
  for (std::int64_t i = 0; i < layers; ++i) {
    Mixer mix = (i % ap == ao) ? Mixer::attention : Mixer::mamba;
    Ffn f = (i % ep == eo) ? Ffn::moe : Ffn::mlp;
    push_layers(m.groups, mix, f, 1);
  }
  return Ok{};
}

// Qwen-1 (model_type "qwen", QWenLMHeadModel): the checkpoint's own modeling_qwen.py (docs/sources/
// model-families.md §2). QWenAttention's c_attn is one [H, 3·heads·kv_channels] linear that always has a bias
// (nn.Linear's default), c_proj's bias follows no_bias; QWenMLP's w1, w2 and c_proj are intermediate_size //
// 2 wide: the config's intermediate_size counts both halves of the gated MLP.
Status parse_qwen1(const json& c, ModelSpec& m, const std::string& p) {
  FTCOST_CHECK(read_common(c, m, p));
  FTCOST_GET(layers, get_count(c, "num_hidden_layers", p, 1, 100000));
  FTCOST_GET(heads, get_count(c, "num_attention_heads", p, 1, 4096));
  FTCOST_GET(kv_channels, opt_count(c, "kv_channels", p, m.hidden / heads, 1, 4096));
  FTCOST_GET(f, get_count(c, "intermediate_size", p, 2, 1 << 23));
  FTCOST_GET(no_bias, opt_bool(c, "no_bias", p, true));
  m.attn.heads = heads;
  m.attn.kv_heads = heads;
  m.attn.head_dim = kv_channels;
  m.attn.qkv_bias = true;
  m.attn.o_bias = !no_bias;
  m.mlp.intermediate = f / 2;
  m.mlp.gated = true;
  m.mlp.bias = !no_bias;
  push_layers(m.groups, Mixer::attention, Ffn::mlp, layers);
  return Ok{};
}

// Phi's and StarCoder2's layers: Llama-style attention, a non-gated MLP of `width` (fc -> gelu -> proj) and
// LayerNorm, with biases on q/k/v/o, the MLP and the norms where `bias`.
void gelu_layers(ModelSpec& m, std::int64_t layers, std::int64_t width, bool bias) {
  m.attn.qkv_bias = bias;
  m.attn.o_bias = bias;
  m.mlp = MlpSpec{width, false, bias};
  m.norm = bias ? NormKind::layer : NormKind::layer_no_bias;
  push_layers(m.groups, Mixer::attention, Ffn::mlp, layers);
}

// Phi-1/1.5/2 (model_type "phi", transformers models/phi/modeling_phi.py; model-families.md §3): a parallel
// block (one input_layernorm feeds attention and MLP), LayerNorm with bias, q/k/v/dense with biases, a
// non-gated MLP (fc1 -> gelu -> fc2, both with biases), lm_head with a bias; qk_layernorm adds a LayerNorm of
// head_dim (weight and bias) on q and on k.
Status parse_phi(const json& c, ModelSpec& m, const std::string& p) {
  FTCOST_GET(layers, read_decoder(c, m, p, false));
  FTCOST_GET(f, get_count(c, "intermediate_size", p, 1, 1 << 22));
  FTCOST_GET(qk_ln, opt_bool(c, "qk_layernorm", p, false));
  gelu_layers(m, layers, f, true);
  m.attn.qk_norm = qk_ln;
  m.attn.qk_norm_params = qk_ln ? 4 * m.attn.head_dim : 0;
  m.norms_per_attention_layer = 1;
  m.lm_head_bias = true;
  return Ok{};
}

// StarCoder2 (model_type "starcoder2", transformers models/starcoder2/modeling_starcoder2.py;
// model-families.md §3): Llama-style attention and layer order, but LayerNorm (with bias), biases on q/k/v/o
// and on the MLP when use_bias (default true), and a non-gated MLP: c_fc -> gelu -> c_proj.
Status parse_starcoder2(const json& c, ModelSpec& m, const std::string& p) {
  FTCOST_GET(layers, read_decoder(c, m, p, false));
  FTCOST_GET(f, get_count(c, "intermediate_size", p, 1, 1 << 22));
  FTCOST_GET(bias, opt_bool(c, "use_bias", p, true));
  gelu_layers(m, layers, f, bias);
  return Ok{};
}

// The decoder's part of a multimodal config: text_config when the config has one (Gemma-3, Llama-4), else the
// config itself.
struct TextPart {
  const json* config = nullptr;
  std::string path;
};

Result<TextPart> text_part(const json& config, const std::string& top) {
  if (!has(config, "text_config")) return TextPart{&config, top};
  if (!config.at("text_config").is_object())
    return make_error(Errc::wrong_type, join_path(top, "text_config"),
                      "must be an object (the decoder's config)");
  return TextPart{&config.at("text_config"), join_path(top, "text_config")};
}

// A multimodal checkpoint's vision tower is not counted: said, not hidden.
void warn_vision_tower(const json& config, ModelSpec& m, const char* family) {
  if (has(config, "text_config") && has(config, "vision_config"))
    m.warnings.push_back(
        std::string(family) + "'s vision tower (vision_config) is not counted: ftcost prices the " +
        "text decoder of " + m.id +
        " (a text-only fine-tune that loads the whole checkpoint also holds the frozen vision " + "weights)");
}

// Llama-4's vision tower and projector, counted from transformers models/llama4/modeling_llama4.py
// (commit 63210d0e): Llama4VisionModel = Llama4UnfoldConvolution (nn.Linear(C*P*P, V), no bias),
// class_embedding [V], positional_embedding_vlm [(I/P)^2 + 1, V], layernorm_pre and layernorm_post
// (nn.LayerNorm: 2V each), num_hidden_layers Llama4VisionEncoderLayers (q/k/v/o nn.Linear(V, V) with bias,
// Llama4VisionMLP fc1 nn.Linear(V, F) and fc2 nn.Linear(F, V) with bias, two LayerNorms) and the
// Llama4VisionPixelShuffleMLP adapter (Llama4VisionMLP2: fc1 nn.Linear(F, projector_input_dim) and fc2
// nn.Linear(projector_output_dim, projector_output_dim), no bias); Llama4MultiModalProjector.linear_1
// nn.Linear(vision_output_dim, text hidden_size, bias=False). 0 when a field it needs is missing.
Result<std::int64_t> llama4_vision_params(const json& config, std::int64_t text_hidden) {
  if (!has(config, "vision_config") || !config.at("vision_config").is_object()) return std::int64_t{0};
  const json& v = config.at("vision_config");
  const std::string p = "config.vision_config";
  for (const char* key :
       {"hidden_size", "intermediate_size", "num_hidden_layers", "num_channels", "patch_size", "image_size",
        "projector_input_dim", "projector_output_dim", "vision_output_dim"})
    if (!has(v, key)) return std::int64_t{0};
  FTCOST_GET(V, get_count(v, "hidden_size", p, 1, 1 << 20));
  FTCOST_GET(F, get_count(v, "intermediate_size", p, 1, 1 << 22));
  FTCOST_GET(L, get_count(v, "num_hidden_layers", p, 0, 10000));
  FTCOST_GET(C, get_count(v, "num_channels", p, 1, 64));
  FTCOST_GET(P, get_count(v, "patch_size", p, 1, 4096));
  FTCOST_GET(I, get_count(v, "image_size", p, 1, 1 << 16));
  FTCOST_GET(pin, get_count(v, "projector_input_dim", p, 1, 1 << 20));
  FTCOST_GET(pout, get_count(v, "projector_output_dim", p, 1, 1 << 20));
  FTCOST_GET(out, get_count(v, "vision_output_dim", p, 1, 1 << 20));
  const std::int64_t side = I / P;
  const std::int64_t embed = C * P * P * V + V + (side * side + 1) * V + 2 * (2 * V);
  const std::int64_t layer = 4 * (V * V + V) + (V * F + F) + (F * V + V) + 2 * (2 * V);
  return embed + L * layer + F * pin + pout * pout + out * text_hidden;
}

// Gemma-3 (transformers models/gemma3, configuration_gemma3.py Gemma3TextConfig and modeling_gemma3.py;
// docs/sources/model-families.md §4). Text-only checkpoints (model_type "gemma3_text", Gemma3ForCausalLM)
// have the decoder's fields at the top, the multimodal ones (model_type "gemma3",
// Gemma3ForConditionalGeneration) in text_config. Gemma-2's layer (four norms, tied embeddings by default)
// plus per-head q_norm and k_norm (Gemma3RMSNorm(head_dim)); without layer_types, every
// sliding_window_pattern-th layer (6) is global: layer i slides unless (i + 1) % pattern == 0.
Status parse_gemma3(const json& config, ModelSpec& m, const std::string& top) {
  FTCOST_GET(part, text_part(config, top));
  const json& c = *part.config;
  const std::string& p = part.path;
  FTCOST_GET(layers, read_decoder(c, m, p, true));
  if (!has(c, "tie_word_embeddings") && !has(config, "tie_word_embeddings")) m.tied_embeddings = true;
  m.norms_per_attention_layer = 4;
  m.attn.qk_norm = true;
  m.attn.qk_norm_params = 2 * m.attn.head_dim;
  if (!has(c, "layer_types")) {
    const char* key =
        has(c, "_sliding_window_pattern") ? "_sliding_window_pattern" : "sliding_window_pattern";
    FTCOST_GET(pattern, opt_count(c, key, p, 6, 1, 100000));
    const std::int64_t sliding = layers - layers / pattern;
    m.attn.sliding_fraction = static_cast<double>(sliding) / static_cast<double>(layers);
  }
  warn_vision_tower(config, m, "Gemma-3");
  push_layers(m.groups, Mixer::attention, Ffn::mlp, layers);
  return Ok{};
}

// Which of Llama-4's layers are MoE: moe_layers when the config lists them, else every
// interleave_moe_layer_step-th layer starting at step - 1 (Llama4TextConfig.__post_init__); the others are
// dense Llama4TextMLP(intermediate_size_mlp).
Status read_llama4_layers(const json& c, ModelSpec& m, const std::string& p, std::int64_t layers) {
  FTCOST_GET(step, opt_count(c, "interleave_moe_layer_step", p, 1, 1, 100000));
  std::vector<char> moe(static_cast<std::size_t>(layers), 0);
  if (has(c, "moe_layers")) {
    const json& a = c.at("moe_layers");
    const std::string ap = join_path(p, "moe_layers");
    if (!a.is_array()) return make_error(Errc::wrong_type, ap, "must be an array of layer indices");
    for (const auto& v : a) {
      if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() >= layers)
        return make_error(
            Errc::invalid_value, ap,
            "must hold layer indices from 0 to " + std::to_string(layers - 1) + ", got " + v.dump());
      moe[static_cast<std::size_t>(v.get<std::int64_t>())] = 1;
    }
  } else {
    for (std::int64_t i = step - 1; i < layers; i += step) moe[static_cast<std::size_t>(i)] = 1;
  }
  push_attention_layers(m, layers, [&](std::int64_t i) { return moe[static_cast<std::size_t>(i)] != 0; });
  return Ok{};
}

// Llama-4's chunked attention: the RoPE layers (no_rope_layers[i] == 1; by default all but every
// no_rope_layer_interval-th) attend within chunks of attention_chunk_size tokens, the NoPE layers see the
// whole sequence (layer_types "chunked_attention" / "full_attention"). ftcost has no chunked kernel: a chunk
// is read as a sliding window of its size, an upper bound (a token sees at most the chunk, on average half of
// it).
Status read_llama4_chunks(const json& c, ModelSpec& m, const std::string& p, std::int64_t layers) {
  const bool no_chunks = c.contains("attention_chunk_size") && c.at("attention_chunk_size").is_null();
  FTCOST_GET(chunk, opt_count(c, "attention_chunk_size", p, 8192, 1, std::int64_t{1} << 32));
  FTCOST_GET(interval, opt_count(c, "no_rope_layer_interval", p, 4, 1, 100000));
  std::int64_t chunked = layers - layers / interval;
  if (has(c, "no_rope_layers")) {
    const json& a = c.at("no_rope_layers");
    if (!a.is_array() || static_cast<std::int64_t>(a.size()) < layers)
      return make_error(Errc::wrong_type, join_path(p, "no_rope_layers"),
                        "must be an array of 1 (RoPE, chunked) or 0 (NoPE) with one entry per layer");
    chunked = 0;
    for (std::int64_t i = 0; i < layers; ++i) {
      const json& e = a[static_cast<std::size_t>(i)];
      if (!e.is_number_integer())
        return make_error(Errc::wrong_type, join_path(p, "no_rope_layers[" + std::to_string(i) + "]"),
                          "must be 1 (RoPE) or 0 (NoPE)");
      chunked += e.get<std::int64_t>() != 0 ? 1 : 0;
    }
  }
  m.attn.sliding_window = no_chunks ? 0 : chunk;
  m.attn.sliding_fraction = static_cast<double>(chunked) / static_cast<double>(layers);
  return Ok{};
}

// Llama-4 (model_type "llama4" with text_config, Llama4ForConditionalGeneration; "llama4_text",
// Llama4ForCausalLM): transformers models/llama4/modeling_llama4.py and configuration_llama4.py
// (docs/sources/model-families.md §6). A MoE layer (Llama4TextMoe) holds num_local_experts routed experts
// (Llama4TextExperts: one fused gate_up_proj [E, H, 2F] and down_proj [E, F, H], F = intermediate_size), a
// router nn.Linear(H, E) without bias and one shared expert Llama4TextMLP(intermediate_size); a dense layer
// one Llama4TextMLP(intermediate_size_mlp). The qk norm is a weightless L2 norm.
Status parse_llama4(const json& config, ModelSpec& m, const std::string& top) {
  FTCOST_GET(part, text_part(config, top));
  const json& c = *part.config;
  const std::string& p = part.path;
  FTCOST_GET(layers, read_decoder(c, m, p, false));
  FTCOST_CHECK(read_experts(c, m, p, "num_local_experts", "intermediate_size"));
  FTCOST_GET(fd, opt_count(c, "intermediate_size_mlp", p, 16384, 1, 1 << 22));
  m.moe.shared_experts = 1;
  m.moe.shared_intermediate = m.moe.expert_intermediate;
  m.mlp = MlpSpec{fd, true, false};
  FTCOST_CHECK(read_llama4_layers(c, m, p, layers));
  FTCOST_CHECK(read_llama4_chunks(c, m, p, layers));
  FTCOST_GET(vision, llama4_vision_params(config, m.hidden));
  m.vision_params = vision;
  if (vision > 0)
    m.warnings.push_back("Llama-4's vision tower and projector (" + std::to_string(vision) +
                         " parameters) are counted in the checkpoint's size, not in memory or time: ftcost "
                         "prices the text decoder of " +
                         m.id +
                         " (a text-only fine-tune that loads the whole checkpoint also holds them, frozen: " +
                         std::to_string(vision * 2 / (1 << 20)) + " MiB in 16 bits)");
  else
    warn_vision_tower(config, m, "Llama-4");
  return Ok{};
}

// config.json model_type -> its reader. Every model_type here is read from its modeling code's structure
// (docs/sources/model-families.md); any other one goes through the rule for unknown architectures.
using FamilyEntry = std::pair<const char*, FamilyParser>;

const std::vector<FamilyEntry>& family_table() {
  static const std::vector<FamilyEntry> table = {
      {"llama", parse_llama_like},
      {"mistral", parse_llama_like},
      {"qwen2", parse_llama_like},
      {"qwen3", parse_llama_like},
      {"gemma", parse_llama_like},
      {"gemma2", parse_llama_like},
      {"olmo2", parse_llama_like},
      {"gemma3_text", parse_gemma3},
      {"gemma3", parse_gemma3},
      {"llama4", parse_llama4},
      {"llama4_text", parse_llama4},
      {"qwen", parse_qwen1},
      {"phi", parse_phi},
      {"starcoder2", parse_starcoder2},
      {"mixtral", parse_mixtral_like},
      {"phimoe", parse_mixtral_like},
      {"gpt_oss", parse_mixtral_like},
      {"qwen2_moe", parse_qwen_moe},
      {"qwen3_moe", parse_qwen_moe},
      {"deepseek", parse_deepseek},
      {"deepseek_v2", parse_deepseek},
      {"deepseek_v3", parse_deepseek},
      {"olmoe", parse_olmoe},
      {"dbrx", parse_dbrx},
      {"jamba", parse_jamba},
      {"mamba", parse_mamba},
  };
  return table;
}

}  // namespace

FamilyParser family_parser(const std::string& model_type) {
  for (const auto& e : family_table())
    if (e.first == model_type) return e.second;
  return nullptr;
}

std::string supported_list() {
  std::string out;
  for (const auto& e : family_table()) out += std::string(e.first) + ", ";
  return out + "BlackMamba (mamba_moe_layers)";
}

}  // namespace ftcost::model_families
