// The rule for unknown architectures (issue 41): a config.json whose model_type has no reader is read
// generically only when a parameter count confirms the reading (core/spec/src/model.cpp, parse_generic;
// docs/sources/model-families.md §1), and the readers added with it: Qwen-1, Phi, StarCoder2, Gemma-3.
#include "ftcost/database.hpp"
#include "ftcost/model.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace ftcost;

namespace {

// A Llama-shaped config under a model_type ftcost has no reader for. Its generic reading:
// embeddings 2 x 100 x 64, per layer attention 4 x 64 x 64 + MLP 3 x 64 x 128 + 2 norms x 64, final norm.
json unknown_dense() {
  return {{"model_type", "newarch"},  {"hidden_size", 64},        {"num_hidden_layers", 2},
          {"num_attention_heads", 4}, {"intermediate_size", 128}, {"vocab_size", 100}};
}
constexpr std::int64_t kGenericCount = 2 * 100 * 64 + 2 * (4 * 64 * 64 + 3 * 64 * 128 + 2 * 64) + 64;

bool mentions(const Error& e, const std::string& s) { return e.message.find(s) != std::string::npos; }

}  // namespace

TEST_CASE("unknown model_type with no parameter count: refused, saying what is missing and how to go on") {
  auto r = parse_model_config(unknown_dense(), "x");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == Errc::unsupported_architecture);
  CHECK(r.error().field == "config.model_type");
  CHECK(mentions(r.error(), "'newarch'"));
  CHECK(mentions(r.error(), "\"num_parameters\""));
  CHECK(mentions(r.error(), "safetensors_index"));
  CHECK(mentions(r.error(), "llama"));  // the supported list
}

TEST_CASE("unknown model_type confirmed by num_parameters within 1%: read generically, with a warning") {
  REQUIRE(kGenericCount == 95040);
  json c = unknown_dense();
  c["num_parameters"] = 95000;  // 0.04% below the generic reading
  auto r = parse_model_config(c, "x");
  REQUIRE(r.ok());
  CHECK(r->params().total() == kGenericCount);
  CHECK(r->family == "newarch");
  REQUIRE(r->warnings.size() == 1);
  CHECK(r->warnings[0].find("generic dense decoder") != std::string::npos);
  CHECK(r->warnings[0].find("num_parameters") != std::string::npos);
  c.erase("num_parameters");
  c["total_params"] = kGenericCount;
  CHECK(parse_model_config(c, "x").ok());
}

TEST_CASE("unknown model_type whose count disagrees with the generic reading: refused with both counts") {
  json c = unknown_dense();
  c["num_parameters"] = 2 * 100 * 64 + 2 * (4 * 64 * 64 + 2 * 64 * 128 + 2 * 64) + 64;  // a non-gated MLP
  auto r = parse_model_config(c, "x");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == Errc::unsupported_architecture);
  CHECK(mentions(r.error(), "0.000B"));  // both counts in billions, e.g. 0.000B vs 0.000B for a tiny model
  CHECK(mentions(r.error(), "more than 1.0%"));
  c["num_parameters"] = -5;
  auto bad = parse_model_config(c, "x");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().field == "config.num_parameters");
}

TEST_CASE("unknown model_type confirmed by a pasted safetensors index and torch_dtype") {
  json c = unknown_dense();
  c["safetensors_index"] = {{"metadata", {{"total_size", 2 * kGenericCount}}},
                            {"weight_map", json::object()}};
  auto missing_dtype = parse_model_config(c, "x");
  REQUIRE_FALSE(missing_dtype.ok());
  CHECK(missing_dtype.error().field == "config.torch_dtype");
  c["torch_dtype"] = "bfloat16";
  auto r = parse_model_config(c, "x");
  REQUIRE(r.ok());
  CHECK(r->warnings[0].find("safetensors index") != std::string::npos);
  c["torch_dtype"] = "float32";  // the same bytes are half as many fp32 parameters: 50% off
  CHECK_FALSE(parse_model_config(c, "x").ok());
  c["torch_dtype"] = "int8";
  auto bad_dtype = parse_model_config(c, "x");
  REQUIRE_FALSE(bad_dtype.ok());
  CHECK(bad_dtype.error().field == "config.torch_dtype");
  c["safetensors_index"] = json::array();
  auto bad_index = parse_model_config(c, "x");
  REQUIRE_FALSE(bad_index.ok());
  CHECK(bad_index.error().field == "config.safetensors_index.metadata");
}

TEST_CASE(
    "unknown model_type in a preset file: its published size confirms it within the rounding tolerance") {
  json doc = {{"schema", "ftcost.model/1"},
              {"id", "newarch-tiny"},
              {"config", unknown_dense()},
              {"published", {{"total_params", 97000}}}};  // 2.1% above: a rounded published size
  auto r = parse_model_file(doc, "newarch-tiny.json");
  REQUIRE(r.ok());
  CHECK(r->warnings[0].find("published.total_params") != std::string::npos);
  doc["published"]["total_params"] = 100000;  // 5.2% off
  CHECK_FALSE(parse_model_file(doc, "newarch-tiny.json").ok());
  doc["published"]["exact_params"] = kGenericCount;  // an exact count wins over the rounded one
  CHECK(parse_model_file(doc, "newarch-tiny.json").ok());
}

TEST_CASE("Qwen-1: intermediate_size counts both MLP halves; c_attn has a bias (modeling_qwen.py)") {
  const ModelSpec* q = Database::embedded().model("qwen-7b");
  REQUIRE(q != nullptr);
  CHECK(q->family == "qwen");
  CHECK(q->mlp.intermediate == 11008);  // 22016 / 2
  CHECK(q->mlp.gated);
  CHECK_FALSE(q->mlp.bias);  // no_bias: true
  CHECK(q->attn.qkv_bias);
  CHECK_FALSE(q->attn.o_bias);
  // per layer: c_attn 4096 x 12288 + 12288, c_proj 4096^2, w1/w2/c_proj 3 x 4096 x 11008, ln_1/ln_2
  CHECK(q->attention_params_per_layer() == 4096 * 12288 + 12288 + 4096 * 4096);
  CHECK(q->mlp_params_per_layer() == 3 * 4096 * 11008);
  // + wte and lm_head (untied) 2 x 151936 x 4096 and ln_f: 7,721,324,544
  CHECK(q->params().total() == 7721324544);
  CHECK(q->warnings.empty());
}

TEST_CASE("non-gated MLPs: two matrices (Phi-2 fc1/fc2, StarCoder2 c_fc/c_proj)") {
  const ModelSpec* phi = Database::embedded().model("phi-2");
  REQUIRE(phi != nullptr);
  CHECK_FALSE(phi->mlp.gated);
  CHECK(phi->mlp.bias);
  CHECK(phi->norms_per_attention_layer ==
        1);  // PhiDecoderLayer: one input_layernorm, parallel attention + MLP
  CHECK(phi->mlp_params_per_layer() == 2 * 2560 * 10240 + 10240 + 2560);
  CHECK(phi->attention_params_per_layer() == 4 * (2560 * 2560 + 2560));
  // embed 51200 x 2560, lm_head with bias, 32 x (attention + MLP + LayerNorm weight and bias), final
  // LayerNorm
  CHECK(phi->params().total() == 2779683840);
  json sc = {{"model_type", "starcoder2"}, {"hidden_size", 64},        {"num_hidden_layers", 2},
             {"num_attention_heads", 4},   {"num_key_value_heads", 2}, {"intermediate_size", 256},
             {"vocab_size", 100}};
  auto s = parse_model_config(sc, "sc");
  REQUIRE(s.ok());
  CHECK_FALSE(s->mlp.gated);
  CHECK(s->mlp_params_per_layer() == 2 * 64 * 256 + 256 + 64);
  CHECK(s->norm_params() == 2 * 64);  // LayerNorm with bias (use_bias defaults to true)
  sc["use_bias"] = false;
  auto s2 = parse_model_config(sc, "sc");
  REQUIRE(s2.ok());
  CHECK(s2->mlp_params_per_layer() == 2 * 64 * 256);
  CHECK(s2->largest_linear() == 64 * 256);
}

TEST_CASE("Gemma-3: text config at the top or in text_config, q/k norms, 5 of 6 layers sliding") {
  json text = {{"model_type", "gemma3_text"},    {"hidden_size", 64},        {"num_hidden_layers", 12},
               {"num_attention_heads", 4},       {"num_key_value_heads", 1}, {"head_dim", 32},
               {"intermediate_size", 128},       {"vocab_size", 100},        {"sliding_window", 16},
               {"max_position_embeddings", 4096}};
  auto t = parse_model_config(text, "g");
  REQUIRE(t.ok());
  CHECK(t->tied_embeddings);
  CHECK(t->norms_per_attention_layer == 4);
  CHECK(t->attn.qk_norm_params == 2 * 32);
  CHECK(t->attn.sliding_fraction == doctest::Approx(10.0 / 12.0));
  CHECK(t->max_position_embeddings == 4096);
  json mm = {{"model_type", "gemma3"}, {"text_config", text}, {"vision_config", {{"hidden_size", 1152}}}};
  mm["text_config"]["model_type"] = "gemma3_text";
  auto m = parse_model_config(mm, "g");
  REQUIRE(m.ok());
  CHECK(m->params().total() == t->params().total());
  CHECK(m->max_position_embeddings == 4096);
  REQUIRE(m->warnings.size() == 1);
  CHECK(m->warnings[0].find("vision tower") != std::string::npos);
  mm["text_config"].erase("hidden_size");
  auto bad = parse_model_config(mm, "g");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().field == "config.text_config.hidden_size");
}

TEST_CASE("Llama-4: routed experts + a shared expert, interleaved dense layers, chunked attention") {
  const ModelSpec* s = Database::embedded().model("llama-4-scout");
  REQUIRE(s != nullptr);
  CHECK(s->layers_with(Ffn::moe) == 48);  // interleave_moe_layer_step 1
  CHECK(s->moe.experts == 16);
  CHECK(s->moe.top_k == 1);
  CHECK(s->moe.shared_experts == 1);
  CHECK(s->fused_gate_up);                                     // Llama4TextExperts.gate_up_proj [E, H, 2F]
  CHECK(s->expert_params() == 3 * std::int64_t{5120} * 8192);  // gate_up [5120, 16384] + down [8192, 5120]
  CHECK(s->router_params_per_layer() == 5120 * 16);
  CHECK(s->attention_params_per_layer() == 2 * 5120 * 5120 + 2 * 5120 * 1024);
  CHECK(s->attn.sliding_window == 8192);
  CHECK(s->attn.sliding_fraction == doctest::Approx(0.75));  // no_rope_layers [1, 1, 1, 0] x 12
  // 2 x 202048 x 5120 (untied) + 48 x (attention + 16 experts + shared expert + router + 2 norms) + final
  // norm
  CHECK(s->params().total() == 107769861120);
  CHECK(s->active_params(1) == 107769861120 - 48 * 15 * s->expert_params());
  REQUIRE(s->warnings.size() == 1);
  CHECK(s->warnings[0].find("vision tower") != std::string::npos);

  // interleave_moe_layer_step 2 (Maverick's layout): MoE at layers 1, 3; dense intermediate_size_mlp at 0, 2
  json t = {{"model_type", "llama4_text"}, {"hidden_size", 64},
            {"num_hidden_layers", 4},      {"num_attention_heads", 4},
            {"num_key_value_heads", 2},    {"head_dim", 16},
            {"intermediate_size", 32},     {"intermediate_size_mlp", 128},
            {"vocab_size", 100},           {"num_local_experts", 4},
            {"num_experts_per_tok", 1},    {"interleave_moe_layer_step", 2}};
  auto m = parse_model_config(t, "l4");
  REQUIRE(m.ok());
  CHECK(m->layers_with(Ffn::moe) == 2);
  CHECK(m->layers_with(Ffn::mlp) == 2);
  CHECK(m->mlp_params_per_layer() == 3 * 64 * 128);
  CHECK(m->groups.front().ffn == Ffn::mlp);
  t["moe_layers"] = {0, 9};
  auto bad = parse_model_config(t, "l4");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().field == "config.moe_layers");
  t["moe_layers"] = {0};
  t["attention_chunk_size"] = nullptr;  // no chunking
  auto full = parse_model_config(t, "l4");
  REQUIRE(full.ok());
  CHECK(full->layers_with(Ffn::moe) == 1);
  CHECK(full->attn.sliding_window == 0);
}

TEST_CASE("OLMo-2: q/k RMSNorms over the whole projection (Olmo2Attention), post-norm layers") {
  const ModelSpec* o = Database::embedded().model("olmo-2-7b");
  REQUIRE(o != nullptr);
  CHECK(o->attn.qk_norm);
  CHECK(o->attn.qk_norm_params == 4096 + 4096);  // q_norm(heads x head_dim) + k_norm(kv_heads x head_dim)
  // 2 x 100352 x 4096 + 32 x (4 x 4096^2 + 2 x 4096 + 3 x 4096 x 11008 + 2 x 4096) + 4096
  CHECK(o->params().total() == 7298617344);
  CHECK(o->warnings.empty());
}
