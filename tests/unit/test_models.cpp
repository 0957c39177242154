// Model presets: parsing and parameter counts against published sizes.
#include "ftcost/database.hpp"

#include <doctest/doctest.h>

#include <cmath>

using namespace ftcost;

TEST_CASE("every model preset parses and matches its published size within 0.5% (issue 41)") {
  const Database& db = Database::embedded();
  REQUIRE(db.problems().empty());
  REQUIRE(db.models().size() >= 20);
  int exact = 0;
  for (const auto& entry : db.models()) {
    const std::string& id = entry.first;
    const ModelSpec& m = entry.second;
    CAPTURE(id);
    REQUIRE(m.published_total > 0);
    const double total = static_cast<double>(m.checkpoint_params());
    if (m.published_exact > 0) {
      // An exact published count (safetensors metadata, num_parameters()): the bar of issue 41, 0.5%.
      ++exact;
      CHECK(std::fabs(total - m.published_exact) / m.published_exact < 0.005);
    } else if (id == "blackmamba-2.8b") {
      // The one preset whose only published size has 2 significant digits (the paper's and the Hub's
      // "2.8B"; no safetensors, no exact count): within that rounding (docs/validation.md).
      CHECK(published_size_tolerance(m.published_total) == doctest::Approx(0.05e9 / 2.8e9));
      CHECK(std::fabs(total - m.published_total) / m.published_total <
            published_size_tolerance(m.published_total));
    } else {
      // A size published to 3 significant digits: 0.5%, as for an exact count.
      CHECK(published_size_tolerance(m.published_total) == doctest::Approx(0.005));
      CHECK(std::fabs(total - m.published_total) / m.published_total < 0.005);
    }
    if (m.published_active > 0) {
      const std::int64_t k = m.published_top_k > 0 ? m.published_top_k : m.moe.top_k;
      const double active = static_cast<double>(m.active_params(k));
      // Some vendors leave the input embedding out of "active" (DeepSeek-V2-Lite, gpt-oss).
      const double active_no_embed = active - static_cast<double>(m.params().embedding);
      const double err =
          std::min(std::fabs(active - m.published_active), std::fabs(active_no_embed - m.published_active));
      CHECK(err / m.published_active < 0.05);
    }
  }
  CHECK(exact >= 33);  // every preset but a few whose makers publish only a rounded size
}

TEST_CASE("Llama-4-Scout: the vision tower counted by hand reproduces the Hub's count to the parameter") {
  const ModelSpec* m = Database::embedded().model("llama-4-scout");
  REQUIRE(m != nullptr);
  // transformers models/llama4/modeling_llama4.py, vision_config of the preset: V 1408, F 5632, 34 layers,
  // 3 channels, patch 14, image 336 (24 x 24 patches + the class token), projector 4096 -> 4096, output
  // 4096 -> the text hidden size 5120.
  const std::int64_t V = 1408, F = 5632;
  const std::int64_t embed = 3 * 14 * 14 * V + V + (24 * 24 + 1) * V + 2 * 2 * V;  // patch, cls, pos, 2 LN
  const std::int64_t layer = 4 * (V * V + V) + (V * F + F) + (F * V + V) + 2 * 2 * V;
  const std::int64_t adapter = F * 4096 + 4096 * 4096;  // Llama4VisionMLP2 fc1, fc2 (no bias)
  const std::int64_t projector = 4096 * 5120;           // Llama4MultiModalProjector.linear_1
  CHECK(m->vision_params == embed + 34 * layer + adapter + projector);
  CHECK(m->vision_params == 871932416);
  CHECK(m->params().total() == 107769861120);  // the text decoder, what is priced
  CHECK(m->checkpoint_params() == 108641793536);
}

TEST_CASE("Qwen3-235B-A22B: 94 MoE layers of 128 experts, the Hub's count to the parameter") {
  const ModelSpec* m = Database::embedded().model("qwen3-235b-a22b");
  REQUIRE(m != nullptr);
  CHECK(m->layers_with(Ffn::moe) == 94);
  CHECK(m->moe.experts == 128);
  CHECK(m->moe.top_k == 8);
  CHECK(m->moe.shared_experts == 0);
  // per layer: q 4096 x 8192, k and v 4096 x 512, o 8192 x 4096, q/k norms 2 x 128, 128 experts x 3 x 4096 x
  // 1536, router 128 x 4096, 2 norms; untied embeddings 2 x 151,936 x 4096, final norm 4096.
  const std::int64_t layer =
      2 * 4096LL * 8192 + 2 * 4096LL * 512 + 256 + 128 * 3 * 4096LL * 1536 + 128 * 4096 + 2 * 4096;
  CHECK(m->params().total() == 94 * layer + 2 * 151936LL * 4096 + 4096);
  CHECK(m->params().total() == 235093634560);
  CHECK(m->active_params(8) == doctest::Approx(22e9).epsilon(0.01));  // the card's "22B activated"
}

TEST_CASE("Mixtral-8x7B parameter count is exact (stack-facts 1.1)") {
  const ModelSpec* m = Database::embedded().model("mixtral-8x7b");
  REQUIRE(m != nullptr);
  CHECK(m->params().total() == 46702792704);
  CHECK(m->active_params(2) == 12879925248);
  CHECK(m->attention_params_per_layer() == 41943040);
  CHECK(m->expert_params() == 176160768);
  CHECK(m->router_params_per_layer() == 32768);
  CHECK(m->kind() == "moe");
  CHECK(m->moe.top_k == 2);
}

TEST_CASE("BlackMamba-2.8B parameter count is exact (stack-facts 5.4)") {
  const ModelSpec* m = Database::embedded().model("blackmamba-2.8b");
  REQUIRE(m != nullptr);
  CHECK(m->params().total() == 2783213584);
  CHECK(m->active_params(1) == 628770832);
  CHECK(m->mamba_params_per_layer() + m->norm_params() == 13705792);
  CHECK(m->layers_with(Mixer::mamba) == 18);
  CHECK(m->layers_with(Ffn::moe) == 18);
  CHECK(m->moe.top_k == 2);  // the paper's sparse setting (preset override)
}

TEST_CASE("architecture details: shared experts, sparse steps, first_k_dense_replace, MLA") {
  const Database& db = Database::embedded();
  const ModelSpec* q = db.model("qwen1.5-moe-a2.7b");
  REQUIRE(q != nullptr);
  CHECK(q->moe.shared_experts == 1);
  CHECK(q->moe.shared_gate);
  const ModelSpec* ds = db.model("deepseek-v2-lite");
  REQUIRE(ds != nullptr);
  CHECK(ds->attn.mla);
  CHECK(ds->layers_with(Ffn::mlp) == 1);  // first_k_dense_replace = 1
  CHECK(ds->layers_with(Ffn::moe) == 26);
  CHECK(ds->moe.shared_experts == 2);
  // MLA without a compressed query (q_lora_rank null), kv_lora_rank 512, 64 rope dims; layer 0 dense
  // (first_k_dense_replace 1); 2 shared experts of 1408: the published exact count to the parameter.
  CHECK(ds->attn.q_lora_rank == 0);
  CHECK(ds->attn.kv_lora_rank == 512);
  CHECK(ds->attn.qk_rope_head_dim == 64);
  CHECK(ds->params().total() == 15706484224);
  const ModelSpec* j = db.model("jamba-v0.1");
  REQUIRE(j != nullptr);
  CHECK(j->layers_with(Mixer::attention) == 4);
  CHECK(j->layers_with(Mixer::mamba) == 28);
  CHECK(j->layers_with(Ffn::moe) == 16);
  CHECK(j->kind() == "hybrid");

  // decoder_sparse_step = 2 and mlp_only_layers on a Qwen2-MoE config
  json c = {{"model_type", "qwen2_moe"},   {"hidden_size", 64},        {"num_hidden_layers", 6},
            {"num_attention_heads", 4},    {"num_key_value_heads", 4}, {"intermediate_size", 128},
            {"vocab_size", 100},           {"num_experts", 4},         {"num_experts_per_tok", 2},
            {"moe_intermediate_size", 32}, {"decoder_sparse_step", 2}, {"mlp_only_layers", {3}}};
  auto m = parse_model_config(c, "tiny");
  REQUIRE(m.ok());
  CHECK(m->layers_with(Ffn::moe) == 2);  // layers 1 and 5 (3 is mlp-only)
  CHECK(m->layers_with(Ffn::mlp) == 4);
}

TEST_CASE("an architecture with no reader and no readable fields is refused, naming model_type") {
  json bad = {{"model_type", "wavenet"}};
  auto b = parse_model_config(bad, "x");
  REQUIRE_FALSE(b.ok());
  CHECK(b.error().code == Errc::unsupported_architecture);
  CHECK(b.error().field == "config.model_type");
  CHECK(b.error().message.find("mixtral") != std::string::npos);
}

TEST_CASE("malformed configs name the field") {
  auto check = [](json c, const std::string& field) {
    auto r = parse_model_config(c, "x");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().field == field);
  };
  json base = {{"model_type", "llama"},    {"hidden_size", 64},        {"num_hidden_layers", 2},
               {"num_attention_heads", 4}, {"intermediate_size", 128}, {"vocab_size", 100}};
  json c1 = base;
  c1.erase("hidden_size");
  check(c1, "config.hidden_size");
  json c2 = base;
  c2["num_hidden_layers"] = -3;
  check(c2, "config.num_hidden_layers");
  json c3 = base;
  c3["vocab_size"] = "32000";
  check(c3, "config.vocab_size");
  json c4 = base;
  c4["num_key_value_heads"] = 3;
  check(c4, "config.num_key_value_heads");
  json c5 = base;
  c5["hidden_size"] = 4.5;
  check(c5, "config.hidden_size");
  json c6 = {{"model_type", "mixtral"},  {"hidden_size", 64},        {"num_hidden_layers", 2},
             {"num_attention_heads", 4}, {"intermediate_size", 128}, {"vocab_size", 100},
             {"num_local_experts", 4},   {"num_experts_per_tok", 6}};
  check(c6, "config.num_experts_per_tok");
  json c7 = base;
  c7["sliding_window"] = 16;
  c7["layer_types"] = "sliding_attention";
  check(c7, "config.layer_types");
  c7["layer_types"] = {"sliding_attention", 3};
  check(c7, "config.layer_types[1]");
  c7["layer_types"] = {"sliding_attention", "full_attention"};
  auto ok = parse_model_config(c7, "x");
  REQUIRE(ok.ok());
  CHECK(ok->attn.sliding_fraction == doctest::Approx(0.5));
  auto r = parse_model_config(json::array(), "x");
  CHECK_FALSE(r.ok());
}

TEST_CASE("every preset's context window comes from its config.json (max_position_embeddings or its name)") {
  const Database& db = Database::embedded();
  for (const auto& entry : db.models()) {
    const ModelSpec& m = entry.second;
    CAPTURE(entry.first);
    if (m.family == "mamba") {
      CHECK(m.max_position_embeddings == 0);  // recurrent: no position limit in the config
      continue;
    }
    CHECK(m.max_position_embeddings > 0);
    CHECK_FALSE(m.max_position_field.empty());
  }
  // values as the presets' configs give them (gpu-db/models/*.json, config.*)
  CHECK(db.model("mixtral-8x7b")->max_position_embeddings == 32768);
  CHECK(db.model("dbrx-base")->max_position_embeddings == 32768);
  CHECK(db.model("dbrx-base")->max_position_field == "max_seq_len");
  CHECK(db.model("blackmamba-2.8b")->max_position_embeddings == 2048);
  CHECK(db.model("blackmamba-2.8b")->max_position_field == "max_sequence_length");
}
