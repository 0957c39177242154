// Issue 36 item 5: stack profiles say which model types their software loads (model_support) and a job on a
// profile whose pinned versions predate the model is warned (stack_supports, estimate's warnings).
#include "ftcost/database.hpp"
#include "ftcost/estimate.hpp"
#include "ftcost/options.hpp"
#include "ftcost/stack.hpp"
#include "ftcost/suggest.hpp"
#include "resolved_inputs.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>

using namespace ftcost;

namespace {

StackSupport supports(const std::string& stack, const std::string& model) {
  const Database& db = Database::embedded();
  REQUIRE(db.stack(stack) != nullptr);
  REQUIRE(db.model(model) != nullptr);
  return stack_supports(*db.stack(stack), *db.model(model));
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("stack_supports: the pinned versions against the first version that loads the model_type") {
  SUBCASE("Qwen3-MoE on Unsloth 2024.12 (transformers 4.46-4.47): neither loads it") {
    const StackSupport s = supports("unsloth-2024q4", "qwen3-30b-a3b");
    CHECK_FALSE(s.ok);
    CHECK(has(s.message,
              "Qwen3-30B-A3B (model_type qwen3_moe) needs transformers >= 4.51.0; this profile "
              "(unsloth-2024q4) pins 4.46-4.47: it cannot load this model"));
    CHECK(has(s.message, "; and it is not loaded by unsloth 2024.12"));
  }
  SUBCASE("today's stacks load it") {
    CHECK(supports("hf-trl-2026", "qwen3-30b-a3b").ok);
    CHECK(supports("hf-trl-2026", "qwen3-30b-a3b").message.empty());
    CHECK(supports("grouped-gemm-2025", "gpt-oss-20b").message.empty());
  }
  SUBCASE(
      "an alias's own transformers versions: axolotl-2025 (4.49.0-4.55.2) loads gpt-oss only from 4.55.0") {
    const StackSupport s = supports("axolotl-2025", "gpt-oss-20b");
    CHECK(s.ok);
    CHECK(has(s.message,
              "needs transformers >= 4.55.0; this profile (axolotl-2025) spans 4.49.0-4.55.2: only its "
              "versions from 4.55.0 on load it"));
    CHECK_FALSE(supports("axolotl-2024q4", "gpt-oss-20b").ok);  // its base's 4.46-4.48 would say the same
  }
  SUBCASE("torchtune 0.3-0.4: builders for Llama and Qwen2, none for Mixtral, Gemma 2 only from 0.5.0") {
    CHECK(supports("torchtune-2024", "llama-3.2-3b").message.empty());
    CHECK(supports("torchtune-2024", "qwen2.5-7b").message.empty());
    CHECK_FALSE(supports("torchtune-2024", "mixtral-8x7b").ok);
    const StackSupport g = supports("torchtune-2024", "gemma-2-9b");
    CHECK_FALSE(g.ok);
    CHECK(has(g.message, "needs torchtune >= 0.5.0; this profile (torchtune-2024) pins 0.3-0.4"));
  }
  SUBCASE("not judged: models trained with their own code, model types a profile does not list") {
    CHECK(supports("unsloth-2024q4", "blackmamba-2.8b").ok);
    CHECK(supports("unsloth-2024q4", "blackmamba-2.8b").message.empty());
    CHECK(supports("hf-transformers-2024", "deepseek-moe-16b").message.empty());  // trust_remote_code
  }
}

TEST_CASE("every shipped profile states model_support, and the paper's rows' jobs are all loadable") {
  const Database& db = Database::embedded();
  for (const auto& kv : db.stacks()) {
    const std::string& id = kv.first;  // not a structured binding: INFO's lambda cannot capture one in C++17
    INFO(id);
    CHECK_FALSE(kv.second.model_support.empty());
  }
  CHECK(supports("hf-transformers-2024", "mixtral-8x7b").message.empty());
  CHECK(supports("unsloth-2024q2", "llama-2-7b").message.empty());
}

TEST_CASE("model_support versions: dotted numbers, a range, an open end") {
  CHECK(model_support_version_problem("4.46-4.47", true).empty());
  CHECK(model_support_version_problem("5.x", true).empty());
  CHECK(model_support_version_problem("2024.4-2024.10", true).empty());
  CHECK_FALSE(model_support_version_problem("5.x", false).empty());
  CHECK_FALSE(model_support_version_problem("4.47-4.46", true).empty());
  CHECK_FALSE(model_support_version_problem("v4.46", true).empty());
  CHECK_FALSE(model_support_version_problem("4..46", true).empty());
  CHECK_FALSE(model_support_version_problem("", true).empty());
}

TEST_CASE("the estimate warns when the stack cannot load the model") {
  Request r = test::request(
      "model=qwen3-30b-a3b gpu=h100-sxm5-80gb method=lora dataset=math14k stack=unsloth-2024q4");
  auto in = resolve_request(r, Database::embedded(), nullptr);
  REQUIRE(in.ok());
  auto e = estimate(in.value(), Database::embedded());
  REQUIRE(e.ok());
  const auto& w = e->warnings;
  CHECK(std::any_of(w.begin(), w.end(), [](const std::string& x) {
    return x.rfind("stack: Qwen3-30B-A3B (model_type qwen3_moe) needs transformers >= 4.51.0", 0) == 0;
  }));
}

namespace {

Estimate qwen3_moe_lora(const std::string& stack) {
  Request r = test::request("model=qwen3-30b-a3b gpu=h100-sxm5-80gb method=lora dataset=math14k");
  if (!stack.empty()) r["stack"] = stack;
  auto in = resolve_request(r, Database::embedded(), nullptr);
  REQUIRE(in.ok());
  auto e = estimate(in.value(), Database::embedded());
  REQUIRE(e.ok());
  return e.value();
}

std::string host_bound(const Estimate& e) {
  for (const auto& w : e.warnings)
    if (w.rfind("host-bound:", 0) == 0) return w;
  return {};
}

}  // namespace

TEST_CASE(
    "host-bound advice: the other stack at its own batch, the cause, the alternative (issue 36 4.1, 4.2)") {
  SUBCASE(
      "unsloth-2024q4's hint prices grouped-gemm-2025 at its max batch, as --stack grouped-gemm-2025 does") {
    const Estimate loop = qwen3_moe_lora("unsloth-2024q4");
    const Estimate grouped = qwen3_moe_lora("grouped-gemm-2025");
    const std::string w = host_bound(loop);
    INFO(w);
    CHECK(grouped.batch < loop.batch);
    const std::string at = "at its max batch " + std::to_string(grouped.batch) + " the same job takes ";
    REQUIRE(has(w, at));
    const double hinted = std::stod(w.substr(w.find(at) + at.size()));
    CHECK(hinted == doctest::Approx(std::round(grouped.time_hours * 100) / 100));
    CHECK(has(w, "(grouped experts: " + Database::embedded().stack("grouped-gemm-2025")->version + ")"));
    CHECK(has(w, "unsloth-2024q4 runs the experts as a Python loop"));
  }
  SUBCASE("hf-trl-2026 (grouped): the cause is the adapters on the experts, and without them it is faster") {
    const Estimate e = qwen3_moe_lora("");
    const std::string w = host_bound(e);
    INFO(w);
    CHECK(has(w, "are the LoRA adapters on the 128 experts, launched once per expert hit"));
    CHECK(has(w, "--lora-targets attention"));
  }
}

TEST_CASE("did-you-mean by a unique part of an id (issue 36 7.2)") {
  CHECK(did_you_mean("4090", Database::embedded().gpu_ids()) == " (did you mean \"rtx-4090\"?)");
}
