// ftcost plan: the search (core/app/src/plan.cpp) and the runnable configs (core/app/src/plan_config.cpp).
#include "ftcost/api.hpp"
#include "ftcost/compare.hpp"
#include "ftcost/job.hpp"
#include "ftcost/parallel.hpp"
#include "ftcost/plan.hpp"
#include "ftcost/plan_config.hpp"
#include "resolved_inputs.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

using namespace ftcost;

namespace {
constexpr long kToday = 20790;  // 2026-12-03: fixed, so that price ages do not move under the tests

Request llama_full_8gpu(const std::string& parallel) {
  return {{"model", "llama-3.1-8b"},
          {"method", "full"},
          {"dataset", "math14k"},
          {"gpu", "h100-sxm5-80gb"},
          {"gpus", "8"},
          {"parallel", parallel},
          {"batch", "2"},
          {"grad-accum", "4"},
          {"epochs", "1"},
          {"stack", "hf-trl-2026"}};
}
}  // namespace

TEST_CASE("plan configs: the DeepSpeed JSON of a ZeRO plan parses and matches the request") {
  const Database& db = Database::embedded();
  for (const char* stage : {"zero1", "zero2", "zero3"}) {
    CAPTURE(stage);
    auto pc = plan_config(llama_full_8gpu(stage), "trl", db, nullptr, kToday);
    REQUIRE(pc.ok());
    const ConfigFile* ds = nullptr;
    const ConfigFile* acc = nullptr;
    for (const auto& f : pc->files) {
      if (f.role == "deepspeed") ds = &f;
      if (f.role == "accelerate") acc = &f;
    }
    REQUIRE(ds != nullptr);
    REQUIRE(acc != nullptr);
    const json j = json::parse(ds->text);
    CHECK(j["train_micro_batch_size_per_gpu"] == 2);
    CHECK(j["gradient_accumulation_steps"] == 4);
    CHECK(j["train_batch_size"] == 2 * 4 * 8);
    CHECK(j["zero_optimization"]["stage"] == std::string(stage).back() - '0');
    CHECK(j["bf16"]["enabled"] == true);
    // ZeRO-3 only: Trainer.save_model writes the model's (adapter's) safetensors, not a DeepSpeed checkpoint
    const json& zero = j["zero_optimization"];
    const char* gather = "stage3_gather_16bit_weights_on_model_save";
    CHECK((zero.contains(gather) && zero[gather] == true) == (std::string(stage) == "zero3"));
    CHECK(acc->text.find("distributed_type: DEEPSPEED") != std::string::npos);
    CHECK(acc->text.find("num_processes: 8") != std::string::npos);
    CHECK(pc->files.front().text.find("deepspeed: \"deepspeed.json\"") != std::string::npos);
  }
}

TEST_CASE("plan configs: FlashAttention-2 only on compute capability 8.0+, SDPA on a T4 or V100") {
  const Database& db = Database::embedded();
  auto text = [&](const char* gpu, const char* stack) {
    const Request r = {{"model", "llama-3.1-8b"}, {"method", "qlora"}, {"gpu", gpu},
                       {"seq", "1024"},           {"batch", "1"},      {"epochs", "1"}};
    auto pc = plan_config(r, stack, db, nullptr, kToday);
    REQUIRE(pc.ok());
    return pc->files.front().text;
  };
  CHECK(text("a100-sxm4-80gb", "trl").find("attn_implementation: flash_attention_2") != std::string::npos);
  CHECK(text("t4", "trl").find("attn_implementation: sdpa") != std::string::npos);
  CHECK(text("v100-sxm2-16gb", "llamafactory").find("flash_attn: sdpa") != std::string::npos);
  CHECK(text("a100-sxm4-80gb", "llamafactory").find("flash_attn: fa2") != std::string::npos);
  CHECK(text("t4", "axolotl").find("flash_attention: false") != std::string::npos);
  CHECK(text("a100-sxm4-80gb", "axolotl").find("flash_attention: true") != std::string::npos);
}

TEST_CASE("plan configs: LLaMA-Factory's template is the model's chat template for an Instruct model") {
  const Database& db = Database::embedded();
  auto lf = [&](const char* model) {
    const Request r = {
        {"model", model},
        {"method", "qlora"},
        {"dataset", "math14k"},
        {"gpu", "h200-sxm-141gb"},
        {"batch", "1"},
        {"lora-targets", "q_proj,k_proj,v_proj,o_proj"},  // phi-3.5-moe: no all-linear on an MoE
        {"stack", "llamafactory-2025"}};
    auto pc = plan_config(r, "llamafactory", db, nullptr, kToday);
    REQUIRE(pc.ok());
    return pc->files.front().text;
  };
  // extras/constants.py register_model_group: Instruct / Thinking names get their group's template
  CHECK(lf("llama-3.3-70b").find("\ntemplate: llama3\n") != std::string::npos);
  CHECK(lf("qwen3-8b").find("\ntemplate: qwen3\n") != std::string::npos);
  CHECK(lf("phi-3.5-moe").find("\ntemplate: phi\n") != std::string::npos);
  // base models: default, the family's template named in the comment
  const std::string base = lf("llama-3.1-8b");
  CHECK(base.find("\ntemplate: default\n") != std::string::npos);
  CHECK(base.find("use llama3") != std::string::npos);
  CHECK(lf("qwen2.5-7b").find("\ntemplate: default\n") != std::string::npos);
  // a chat model the registry does not list: no template line (LLaMA-Factory parses the tokenizer's)
  const std::string tiny = lf("tinyllama-1.1b");
  CHECK(tiny.find("\ntemplate:") == std::string::npos);
  CHECK(tiny.find("tokenizer's chat template") != std::string::npos);
}

namespace {
// The 70B LoRA plan of issue 36: 8x B200, ZeRO-3, checkpointing off, micro-batch 2 (planned with
// hf-trl-2026).
Request llama70_zero3() {
  return test::request(
      "model=llama-3.3-70b method=lora seq=2048 queries=50000 gpu=b200 gpus=8 parallel=zero3 batch=2 "
      "grad-accum=1 checkpointing=off provider=nebius stack=hf-trl-2026");
}
// The header's expected line, as `ftcost estimate` of `r` gives it.
std::string expected_line(const Request& r) {
  auto in = resolve_request(r, Database::embedded(), nullptr, kToday);
  REQUIRE(in.ok());
  auto ej = estimate_job_json(in.value(), Database::embedded());
  REQUIRE(ej.ok());
  char buf[200];
  std::snprintf(
      buf, sizeof buf, "expected: peak %.1f GiB per GPU of %.1f GiB usable; step %.3f s; %.2f h; $%.2f",
      (*ej)["memory_gib"]["total"].get<double>(), (*ej)["memory_model"]["usable_gib"].get<double>(),
      (*ej)["step_time_s"].get<double>(), (*ej)["time_hours"].get<double>(), (*ej)["cost_usd"].get<double>());
  return buf;
}
}  // namespace

TEST_CASE("plan configs: the expected numbers are the trainer's own stack profile's") {
  const Database& db = Database::embedded();
  for (const auto& sp : std::vector<std::pair<std::string, std::string>>{
           {"trl", "hf-trl-2026"}, {"axolotl", "axolotl-2025"}, {"llamafactory", "llamafactory-2025"}}) {
    const std::string& stack = sp.first;  // not a structured binding: CAPTURE's lambda cannot capture one
    const std::string& profile = sp.second;
    CAPTURE(stack);
    auto pc = plan_config(llama70_zero3(), stack, db, nullptr, kToday);
    REQUIRE(pc.ok());
    const std::string& text = pc->files.front().text;
    Request own = llama70_zero3();
    own["stack"] = profile;
    CHECK(text.find("numbers from the stack profile " + profile + " [") != std::string::npos);
    CHECK(text.find("--stack " + profile + "\n") != std::string::npos);
    CHECK(text.find(expected_line(own)) != std::string::npos);
  }
  // the plan's stack is kept where it is the trainer's (TRL on an older HF profile)
  Request older = llama70_zero3();
  older["stack"] = "hf-trl-2025";
  auto trl = plan_config(older, "trl", db, nullptr, kToday);
  REQUIRE(trl.ok());
  CHECK(trl->files.front().text.find("--stack hf-trl-2025\n") != std::string::npos);
  // where the trainer's profile does not fit the plan's micro-batch: the plan's numbers, and by how much
  const Request tight = test::request(
      "model=llama-3.1-8b method=lora seq=2048 gpu=h100-sxm5-80gb batch=20 checkpointing=on "
      "stack=hf-trl-2026 price-per-hour=2");
  auto ax = plan_config(tight, "axolotl", db, nullptr, kToday);
  REQUIRE(ax.ok());
  const std::string& text = ax->files.front().text;
  CHECK(text.find(
            "numbers for hf-trl-2026 (the plan's stack); axolotl-2025, this trainer's profile, differs: it "
            "needs ") != std::string::npos);
  CHECK(text.find("at micro-batch 20, more than the") != std::string::npos);
  CHECK(text.find(expected_line(tight)) != std::string::npos);
  CHECK(text.find("--stack hf-trl-2026\n") != std::string::npos);
}

TEST_CASE("plan configs: Unsloth gets a runnable train_unsloth.py") {
  const Database& db = Database::embedded();
  auto script = [&](const char* method, const char* ckpt) {
    const Request r = {{"model", "llama-3.1-8b"}, {"method", method},      {"seq", "1024"},
                       {"gpu", "a100-sxm4-80gb"}, {"batch", "4"},          {"grad-accum", "8"},
                       {"epochs", "2"},           {"checkpointing", ckpt}, {"stack", "hf-trl-2026"}};
    auto pc = plan_config(r, "unsloth", db, nullptr, kToday);
    REQUIRE(pc.ok());
    CHECK(pc->command == "python train_unsloth.py");
    REQUIRE(pc->files.size() == 1);
    CHECK(pc->files.front().name == "train_unsloth.py");
    CHECK(pc->files.front().format == "python");
    return pc->files.front().text;
  };
  auto has = [](const std::string& text, const std::string& s) {
    CAPTURE(s);
    CHECK(text.find(s) != std::string::npos);
  };
  const std::string q = script("qlora", "on");
  for (const char* s :
       {"\nfrom unsloth import FastLanguageModel", "\nfrom trl import SFTConfig, SFTTrainer\n",
        "model, tokenizer = FastLanguageModel.from_pretrained(\n",
        "    model_name=\"meta-llama/Meta-Llama-3.1-8B\",\n", "    max_seq_length=1024,\n",
        "    load_in_4bit=True,\n", "model = FastLanguageModel.get_peft_model(\n", "    model,\n",
        "    r=16,\n", "    lora_alpha=32,\n",
        // the unsloth-2024q4 profile offloads the checkpoints: Unsloth's own checkpointing
        "    use_gradient_checkpointing=\"unsloth\",\n", "trainer = SFTTrainer(\n", "    args=SFTConfig(\n",
        "        per_device_train_batch_size=4,\n", "        gradient_accumulation_steps=8,\n",
        "        num_train_epochs=2.0,\n", "        max_length=1024,\n", "        bf16=True,\n",
        "\ntrainer.train()\n", "\nmodel.save_pretrained(", "--stack unsloth-2024q4\n"})
    has(q, s);
  CHECK(q.find("...") == std::string::npos);
  // a 16-bit LoRA says load_in_4bit=False (from_pretrained's default is True); no checkpointing: False
  const std::string l = script("lora", "off");
  has(l, "    load_in_4bit=False,\n");
  has(l, "    use_gradient_checkpointing=False,\n");
  // full fine-tuning: no adapter, the checkpointing switch on from_pretrained
  const std::string f = script("full", "on");
  has(f, "    full_finetuning=True,\n");
  CHECK(f.find("get_peft_model") == std::string::npos);
}

TEST_CASE("plan configs: settings a stack lacks are refused naming --config") {
  const Database& db = Database::embedded();
  auto check_refused = [&](const Request& r, const std::string& stack, const std::string& why) {
    CAPTURE(stack);
    CAPTURE(why);
    auto pc = plan_config(r, stack, db, nullptr, kToday);
    REQUIRE_FALSE(pc.ok());
    CHECK(pc.error().field == "--config");
    CHECK(pc.error().message.find(why) != std::string::npos);
    CHECK(pc.error().exit_code() == 2);
  };
  check_refused(llama_full_8gpu("fsdp"), "unsloth", "one GPU");
  check_refused(llama_full_8gpu("zero2"), "torchtune", "FSDP2 only");
  check_refused(llama_full_8gpu("tp:2"), "trl", "Megatron");
  Request mixtral = test::request("model=mixtral-8x7b method=qlora dataset=math14k gpu=a100-sxm4-80gb");
  check_refused(mixtral, "torchtune", "no model builder");
  Request qwen_q = test::request("model=qwen2.5-7b method=qlora dataset=math14k gpu=a100-sxm4-80gb");
  check_refused(qwen_q, "torchtune", "no QLoRA builder");
  auto bad = plan_config(qwen_q, "megatron", db, nullptr, kToday);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().field == "--config");
}

TEST_CASE("plan: the strategies each stack runs") {
  const Database& db = Database::embedded();
  const ModelSpec& m = *db.model("llama-3.1-8b");
  CHECK(stack_strategies(*db.stack("unsloth-2024q4"), m, "qlora", 8).empty());
  CHECK(stack_strategies(*db.stack("torchtune-2024"), m, "lora", 8) == std::vector<std::string>{"fsdp"});
  const auto hf = stack_strategies(*db.stack("axolotl-2025"), m, "lora", 8);  // an alias of the HF stack
  CHECK(std::find(hf.begin(), hf.end(), "zero3") != hf.end());
  CHECK(std::find(hf.begin(), hf.end(), "ddp") != hf.end());
  // torchtune runs only the models it has builders for: the search leaves it out for the others
  CHECK(torchtune_builds("llama-3.1-8b", true));
  CHECK_FALSE(torchtune_builds("qwen2.5-7b", true));
  CHECK(torchtune_builds("qwen2.5-7b", false));
  CHECK_FALSE(torchtune_builds("mixtral-8x7b", false));
  PlanConstraints c;
  c.stacks = {"hf-trl-2026", "torchtune-2024"};
  c.max_gpus = 8;
  auto r =
      plan({{"model", "mixtral-8x7b"}, {"method", "lora"}, {"dataset", "math14k"}, {"stack", "hf-trl-2026"}},
           c, db, nullptr, kToday);
  REQUIRE(r.ok());
  CHECK(r->pruned.at("stack_lacks_model") > 0);
  for (const auto& e : r->front) CHECK(e.stack != "torchtune-2024");
}

TEST_CASE("JS API: plan_json takes the job and constraint keys (lists as arrays, spot as a boolean)") {
  const std::string r = api::plan_json(
      R"({"model":"llama-3.1-8b","method":"lora","dataset":"math14k","queries":15000,"epochs":2,)"
      R"("gpus":["h100-sxm5-80gb","a100-sxm4-80gb"],"spot":false,"max-gpus":8,"effective-batch":32,)"
      R"("minimize":"time"})",
      kToday);
  const json j = json::parse(r);
  REQUIRE_FALSE(j.contains("error"));
  REQUIRE(j["front"].size() >= 1);
  CHECK(j["minimize"] == "time");
  CHECK(j["best"].get<int>() == static_cast<int>(j["front"].size()) - 1);
  for (const auto& e : j["front"]) {
    CHECK((e["gpu"] == "h100-sxm5-80gb" || e["gpu"] == "a100-sxm4-80gb"));
    CHECK(e["effective_batch"] == 32);
    CHECK(e["gpus_per_node"].get<int>() * e["nodes"].get<int>() <= 8);
  }
  // a plan's request gives its config through the second entry point
  const json cfg =
      json::parse(api::plan_config_json(j["front"][0]["request"].dump(), "llamafactory", kToday));
  REQUIRE_FALSE(cfg.contains("error"));
  CHECK(cfg["stack"] == "llamafactory");
  CHECK(cfg["files"][0]["text"].get<std::string>().find("finetuning_type: lora") != std::string::npos);
  // errors name the key
  const json bad = json::parse(api::plan_json(R"({"model":"llama-3.1-8b","gpu":"a40"})", kToday));
  CHECK(bad["error"]["field"] == "--gpu");
  const json bad2 = json::parse(api::plan_json(R"({"model":"llama-3.1-8b","deadline":"soon"})", kToday));
  CHECK(bad2["error"]["field"] == "--deadline");
  const json bad3 = json::parse(api::plan_config_json(R"({"model":"llama-3.1-8b"})", "nemo", kToday));
  CHECK(bad3["error"]["field"] == "--config");
}

namespace {
// Every plan on the front, re-run as a plain `ftcost estimate` of its request (resolve_request +
// estimate_job_json, the path of the CLI and the JS API), gives the same hours and cost.
void check_front_reproduces(const PlanResult& r, const Database& db) {
  REQUIRE_FALSE(r.front.empty());
  for (const auto& e : r.front) {
    CAPTURE(e.id);
    CAPTURE(e.shape.gpu_id);
    CAPTURE(e.parallel);
    auto in = resolve_request(e.request, db, nullptr, kToday);
    REQUIRE(in.ok());
    auto j = estimate_job_json(in.value(), db);
    REQUIRE(j.ok());
    REQUIRE(j.value()["time_hours"].is_number());
    REQUIRE(j.value()["cost_usd"].is_number());
    // same code path and inputs: equal to rounding of the last bit
    CHECK(j.value()["time_hours"].get<double>() == doctest::Approx(e.hours).epsilon(1e-12));
    CHECK(j.value()["cost_usd"].get<double>() == doctest::Approx(e.cost_usd).epsilon(1e-12));
    CHECK(j.value()["batch_size"].get<std::int64_t>() == e.micro_batch);
  }
}
}  // namespace

TEST_CASE(
    "plan bars (#18): the paper job's best single-GPU plan is no dearer than compare's cheapest row; "
    "every plan on the front is what estimate gives") {
  const Database& db = Database::embedded();
  // The paper's job: Mixtral-8x7B QLoRA (sparse), math14k, 15,000 queries x 10 epochs, on the paper's stack.
  const Request job = test::request(
      "model=mixtral-8x7b method=qlora moe=sparse dataset=math14k queries=15000 epochs=10 "
      "stack=hf-transformers-2024");
  auto r = plan(job, PlanConstraints{}, db, nullptr, kToday);
  REQUIRE(r.ok());
  check_front_reproduces(r.value(), db);
  // compare's cheapest row for the same settings (batch = max, on-demand prices)
  auto rows = compare_gpus(job, db, nullptr, kToday);
  REQUIRE(rows.ok());
  const int cheapest = cheapest_row(rows.value(), false);
  REQUIRE(cheapest >= 0);
  const double compare_cost = rows.value()[static_cast<std::size_t>(cheapest)].cost;
  REQUIRE(r->cheapest_single_gpu.micro_batch > 0);
  CHECK(r->cheapest_single_gpu.shape.ranks() == 1);
  CHECK(r->cheapest_single_gpu.cost_usd <= compare_cost);
  // and the best plan of the front is no dearer than the best single GPU
  REQUIRE(r->best >= 0);
  CHECK(r->front[static_cast<std::size_t>(r->best)].cost_usd <= r->cheapest_single_gpu.cost_usd);
  // the cheapest single-GPU plan is itself what estimate gives
  PlanResult one;
  one.front.push_back(r->cheapest_single_gpu);
  check_front_reproduces(one, db);
}

TEST_CASE("plan: a Llama-3.1-8B LoRA job with an effective batch, methods and stacks open, and a deadline") {
  const Database& db = Database::embedded();
  const Request job = test::request(
      "model=llama-3.1-8b method=lora dataset=math14k queries=15000 epochs=3 stack=hf-trl-2026");
  PlanConstraints c;
  c.effective_batch = 64;
  c.methods = {"lora", "qlora", "full"};
  c.stacks = {"hf-trl-2026", "unsloth-2024q4", "torchtune-2024"};
  c.deadline_hours = 2;
  auto r = plan(job, c, db, nullptr, kToday);
  REQUIRE(r.ok());
  check_front_reproduces(r.value(), db);
  for (const auto& e : r->front) {
    CHECK(e.hours <= 2.0);
    CHECK(e.effective_batch == 64);
    // a stack that runs one GPU never appears on more
    if (e.stack == "unsloth-2024q4") CHECK(e.shape.ranks() == 1);
    if (e.stack == "torchtune-2024" && e.shape.ranks() > 1) CHECK(e.parallel == "fsdp");
  }
  CHECK(r->pruned.at("deadline") > 0);
  // a budget below the cheapest plan leaves nothing and says why
  PlanConstraints poor = c;
  poor.budget_usd = 0.001;
  auto none = plan(job, poor, db, nullptr, kToday);
  REQUIRE(none.ok());
  CHECK(none->best == -1);
  CHECK(none->front.empty());
}

namespace {
// Issue 36's job: Llama-3.3-70B LoRA, 50k x 2,048 tokens, within 24 h; the best plan is 8x B200 ZeRO-3 with
// checkpointing off at micro-batch 2, which one B200 cannot hold.
Result<PlanResult> llama70_plan() {
  const Request job = {{"model", "llama-3.3-70b"}, {"method", "lora"}, {"seq", "2048"}, {"queries", "50000"}};
  PlanConstraints c;
  c.deadline_hours = 24;
  return plan(job, c, Database::embedded(), nullptr, kToday);
}
}  // namespace

TEST_CASE(
    "plan: a multi-GPU plan's bottleneck share comes from its step, also where one GPU cannot hold it") {
  auto r = llama70_plan();
  REQUIRE(r.ok());
  REQUIRE(r->best >= 0);
  const PlanEntry& b = r->front[static_cast<std::size_t>(r->best)];
  CHECK(b.shape.ranks() > 1);
  CHECK(b.checkpointing == "off");
  // the search's probe (no --batch: the largest micro-batch) carries a single-GPU estimate that does not fit
  // one B200 at any batch, so it has no step of its own
  Request probe = b.request;
  probe.erase("batch");
  auto in = resolve_request(probe, Database::embedded(), nullptr, kToday);
  REQUIRE(in.ok());
  auto shape = plan_from_inputs(in.value(), Database::embedded());
  REQUIRE(shape.ok());
  auto pe = estimate_parallel(in.value(), shape.value(), Database::embedded());
  REQUIRE(pe.ok());
  CHECK(pe->single.step.gpu_s == 0);
  for (const auto& e : r->front) {
    CAPTURE(e.id);
    CHECK(e.bottleneck_share > 0.05);
    CHECK(e.bottleneck_share <= 1.0);
    CHECK(e.why.find("(0% of") == std::string::npos);
  }
  CHECK(b.bottleneck == "gemm");  // a dense 70B LoRA step is GEMM-bound
}

TEST_CASE("plan: checkpointing off at 90% or more of the usable memory is warned about (text and JSON)") {
  auto r = llama70_plan();
  REQUIRE(r.ok());
  const PlanEntry& b = r->front[static_cast<std::size_t>(r->best)];
  REQUIRE(b.warnings.size() == 1);
  CHECK(b.warnings[0].rfind("checkpointing off at 90% of the usable memory (161.1 of 179.1 GiB per GPU)",
                            0) == 0);
  const json j = plan_to_json(r.value());
  CHECK(j["front"][static_cast<std::size_t>(r->best)]["warnings"][0] == b.warnings[0]);
  // none where checkpointing is on or the plan leaves more than 10% free
  const Request job = test::request(
      "model=llama-3.1-8b method=lora dataset=math14k queries=15000 epochs=3 stack=hf-trl-2026");
  auto small = plan(job, PlanConstraints{}, Database::embedded(), nullptr, kToday);
  REQUIRE(small.ok());
  int off_roomy = 0;
  for (const auto& e : small->front) {
    const bool warned = e.checkpointing == "off" && std::round(100 * e.peak_gib_per_gpu / e.usable_gib) >= 90;
    CHECK(e.warnings.size() == (warned ? 1U : 0U));
    off_roomy += e.checkpointing == "off" && !warned ? 1 : 0;
  }
  MESSAGE("plans with checkpointing off and room: ", off_roomy);
  CHECK(plan_to_json(small.value())["front"][0]["warnings"].is_array());
}

TEST_CASE("plan: a single-GPU plan runs at a micro-batch whose memory range's upper end fits") {
  const Database& db = Database::embedded();
  // hf-trl-2026 states a +/-10% memory uncertainty: at the point estimate's largest batch on an H100 the
  // upper end exceeds the usable memory (estimate warns "fits only at the low end"), so the plan steps down.
  const Request job =
      test::request("model=llama-3.1-8b method=qlora dataset=math14k checkpointing=off stack=hf-trl-2026");
  PlanConstraints c;
  c.max_gpus = 1;
  auto r = plan(job, c, db, nullptr, kToday);
  REQUIRE(r.ok());
  REQUIRE_FALSE(r->front.empty());
  bool stepped_down = false;  // at least one plan is below the point estimate's largest batch
  for (const auto& e : r->front) {
    auto in = resolve_request(e.request, db, nullptr);
    REQUIRE(in.ok());
    auto est = estimate(in.value(), db);
    REQUIRE(est.ok());
    CHECK(est->memory_high <= est->max_batch.usable_bytes);
    CHECK(e.micro_batch <= est->max_batch_range_fit);
    CHECK(e.micro_batch <= est->max_batch.batch);
    // and it is the batch `estimate` chooses for the same job (--batch fastest, the default)
    Request free = e.request;
    free.erase("batch");
    free.erase("grad-accum");
    auto chosen = estimate(resolve_request(free, db, nullptr).value(), db);
    REQUIRE(chosen.ok());
    CHECK(e.micro_batch == chosen->batch);
    stepped_down |= e.micro_batch < est->max_batch.batch;
  }
  CHECK(stepped_down);
}

TEST_CASE("plan: a job modelled on one GPU only (--fp8 te-delayed) searches one-GPU shapes, and says so") {
  const Database& db = Database::embedded();
  const Request job = test::request("model=llama-3.2-3b method=full fp8=te-delayed seq=1024 queries=1000");
  auto r = plan(job, PlanConstraints{}, db, nullptr, kToday);
  REQUIRE(r.ok());
  REQUIRE_FALSE(r->front.empty());
  for (const auto& e : r->front) CHECK(e.shape.ranks() == 1);
  CHECK(std::find_if(r->notes.begin(), r->notes.end(), [](const std::string& n) {
          return n.rfind("--fp8 te-delayed: only one-GPU shapes", 0) == 0;
        }) != r->notes.end());
  check_front_reproduces(r.value(), db);
}
