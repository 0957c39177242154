// Requests: defaults, bad input (each gives a message naming the flag), the JSON contract.
#include "ftcost/api.hpp"
#include "ftcost/database.hpp"
#include "ftcost/estimate.hpp"
#include "ftcost/stack.hpp"
#include "resolved_inputs.hpp"

#include <doctest/doctest.h>

#include <string>
#include <utility>

using namespace ftcost;

namespace {
Error bad(Request r) {
  auto in = resolve_request(r, Database::embedded(), nullptr);
  REQUIRE_FALSE(in.ok());
  return in.error();
}
const Request kBase = {{"model", "mixtral-8x7b"}, {"gpu", "a40"}, {"method", "qlora"}};
Request with(const char* k, const char* v) {
  Request r = kBase;
  r[k] = v;
  return r;
}
}  // namespace

TEST_CASE("bad input names the flag and what is allowed") {
  CHECK(bad({{"gpu", "a40"}, {"method", "qlora"}}).field == "--model");
  CHECK(bad(with("model", "gpt-5")).code == Errc::unknown_id);
  CHECK(bad(with("method", "dpo")).message.find("full, lora, qlora") != std::string::npos);
  CHECK(bad(with("batch", "4000000000")).code == Errc::out_of_range);
  // each of these values is refused, and the error names its option
  const std::pair<const char*, const char*> refused[] = {{"model", "gpt-5"},
                                                         {"gpu", "tpu-v9"},
                                                         {"batch", "0"},
                                                         {"batch", "-3"},
                                                         {"batch", "nan"},
                                                         {"batch", "4GB"},
                                                         {"seq", "1.5"},
                                                         {"epochs", "nan"},
                                                         {"epochs", "inf"},
                                                         {"epochs", "0"},
                                                         {"queries", "4 GB"},
                                                         {"price-per-hour", "-1"},
                                                         {"lora-targets", "q_proj,bogus"},
                                                         {"lora-rank", "0"},
                                                         {"moe", "half"},
                                                         {"dataset", "alpaca"},
                                                         {"stack", "jax"},
                                                         {"top-k", "9"}};
  for (const auto& kv : refused) {
    const std::string option = kv.first, value = kv.second;
    CAPTURE(option);
    CAPTURE(value);
    CHECK(bad(with(kv.first, kv.second)).field == "--" + option);
  }
  Request both = with("seq", "128");
  both["dataset"] = "cs15k";
  CHECK(bad(both).field == "--seq");
  Request full = kBase;
  full["method"] = "full";
  full["lora-rank"] = "8";
  CHECK(bad(full).field == "--lora-rank");
  // a path needs a file system; the web build has none
  CHECK(bad(with("model", "/tmp/config.json")).code == Errc::io_error);
}

TEST_CASE("defaults are applied and reported") {
  auto in = resolve_request(kBase, Database::embedded(), nullptr);
  REQUIRE(in.ok());
  CHECK(in->workload.quant == Quant::nf4_dq);
  CHECK(in->workload.checkpointing);
  CHECK(in->workload.attention == Attention::flash);
  CHECK(in->workload.lora_rank == 16);
  CHECK(in->defaults.size() >= 8);
}

TEST_CASE("precision: bf16 by default, fp16 on a GPU without bf16 tensor cores (T4, V100)") {
  auto a40 = resolve_request(kBase, Database::embedded(), nullptr);
  REQUIRE(a40.ok());
  CHECK(a40->workload.precision == "bf16");
  for (const char* gpu : {"t4", "v100-sxm2-16gb"}) {
    CAPTURE(gpu);
    auto in = resolve_request(with("gpu", gpu), Database::embedded(), nullptr);
    REQUIRE(in.ok());
    CHECK(in->workload.precision == "fp16");
    bool listed = false;
    for (const auto& d : in->defaults) listed = listed || d.rfind("precision=fp16 (", 0) == 0;
    CHECK(listed);
    // bf16 asked for there: computed at the spec's other peak, with a warning that names the way out
    Request r = with("gpu", gpu);
    r["precision"] = "bf16";
    auto bf = resolve_request(r, Database::embedded(), nullptr);
    REQUIRE(bf.ok());
    bool warned = false;
    for (const auto& w : bf->warnings) warned = warned || w.find("--precision fp16") != std::string::npos;
    CHECK(warned);
  }
}

TEST_CASE("estimate --json has the contracted fields") {
  Request r = kBase;
  r["dataset"] = "math14k";
  r["queries"] = "15000";
  r["epochs"] = "10";
  auto in = resolve_request(r, Database::embedded(), nullptr, 20790);
  REQUIRE(in.ok());
  auto e = estimate(in.value(), Database::embedded());
  REQUIRE(e.ok());
  json j = estimate_to_json(e.value());
  for (const char* key :
       {"max_batch_size", "batch_size", "memory_gib", "step_time_s", "throughput_queries_per_s",
        "throughput_tokens_per_s", "time_hours", "cost_usd", "model", "gpu", "warnings"}) {
    CAPTURE(key);
    CHECK(j.contains(key));
  }
  CHECK(j["memory_gib"].contains("total"));
  CHECK(j["memory_gib"].contains("weights"));
  CHECK(j["memory_gib"].contains("activations"));
  CHECK(j["warnings"].is_array());
  CHECK(j["max_batch_size"].get<int>() >= 3);
  CHECK(j["cost_usd"].get<double>() > 0);
  CHECK(j["time_hours"].get<double>() ==
        doctest::Approx(15000.0 * 10 / j["throughput_queries_per_s"].get<double>() / 3600));
  // components add up
  double sum = 0;
  for (auto it = j["memory_gib"].begin(); it != j["memory_gib"].end(); ++it)
    if (it.key() != "total") sum += it.value().get<double>();
  CHECK(sum == doctest::Approx(j["memory_gib"]["total"].get<double>()));
}

TEST_CASE("throughput sanity: faster GPU is not slower; more experts is not faster") {
  auto qps = [](Request r) {
    auto in = resolve_request(r, Database::embedded(), nullptr);
    REQUIRE(in.ok());
    return estimate(in.value(), Database::embedded()).value().step.total_s;
  };
  Request r = {{"model", "mixtral-8x7b"}, {"method", "qlora"}, {"seq", "512"}, {"batch", "2"}};
  r["gpu"] = "a100-sxm4-80gb";
  double a100 = qps(r);
  r["gpu"] = "h100-sxm5-80gb";
  double h100 = qps(r);
  CHECK(h100 <= a100);
  r["moe"] = "dense";
  CHECK(qps(r) >= h100);
}

TEST_CASE("JS/web API: estimate_json returns the CLI's JSON or an error object, never throws") {
  std::string ok = api::estimate_json(
      R"({"model": "mixtral-8x7b", "gpu": "a40", "method": "qlora", "moe": "sparse", "dataset": "math14k", "batch": "max"})");
  json j = json::parse(ok);
  CHECK_FALSE(j.contains("error"));
  CHECK(j["max_batch_size"].get<int>() >= 3);
  json e1 = json::parse(api::estimate_json("{not json"));
  CHECK(e1["error"]["code"] == "malformed_json");
  json e2 = json::parse(
      api::estimate_json(R"({"model": "mixtral-8x7b", "gpu": "a40", "method": "qlora", "batchsize": 4})"));
  CHECK(e2["error"]["field"] == "batchsize");
  json e3 = json::parse(
      api::estimate_json(R"({"model": "mixtral-8x7b", "gpu": "a40", "method": "qlora", "batch": -1})"));
  CHECK(e3["error"]["field"] == "--batch");
  json e4 = json::parse(api::estimate_json(R"([1,2,3])"));
  CHECK(e4.contains("error"));
  std::string deep(100, '[');
  json e5 = json::parse(api::estimate_json(deep));
  CHECK(e5["error"]["code"] == "too_large");
  // compare_json: every GPU, the same rows the core's compare view gives, errors naming the key
  json c =
      json::parse(api::compare_json(R"({"model": "mixtral-8x7b", "method": "qlora", "dataset": "math14k"})"));
  REQUIRE(c.contains("rows"));
  CHECK(c["rows"].size() == Database::embedded().gpus().size());  // each GPU's cheapest offer, one row each
  CHECK(c["spot_included"] == false);
  json c_all = json::parse(api::compare_json(
      R"({"model": "mixtral-8x7b", "method": "qlora", "dataset": "math14k", "offers": true, "spot": "on"})"));
  CHECK(c_all["rows"].size() > c["rows"].size());
  CHECK(json::parse(api::compare_json(
            R"({"model": "mixtral-8x7b", "method": "qlora", "gpu": "a40"})"))["error"]["field"] == "gpu");
  CHECK(json::parse(api::compare_json(
            R"({"model": "mixtral-8x7b", "method": "qlora", "offers": 3})"))["error"]["field"] == "offers");
  CHECK(json::parse(api::compare_json(
            R"({"model": "mixtral-8x7b", "method": "qlora", "batch": 0})"))["error"]["field"] == "--batch");
  CHECK(json::parse(api::models_json()).size() >= 20);
  CHECK(json::parse(api::gpus_json()).size() >= 25);
  CHECK(json::parse(api::paper_table4_json())["rows"].size() == 3);
}

TEST_CASE("database: required GPUs present with sources; loader rejects corrupted files naming the field") {
  const Database& db = Database::embedded();
  CHECK(db.problems().empty());
  for (const char* id : {"a40", "a100-sxm4-40gb", "a100-sxm4-80gb", "a100-pcie-80gb", "h100-sxm5-80gb",
                         "h100-pcie-80gb", "h200-sxm-141gb", "l40s", "rtx-4090"}) {
    CAPTURE(id);
    const GpuSpec* g = db.gpu(id);
    REQUIRE(g != nullptr);
    CHECK_FALSE(g->sources.empty());
  }
  CHECK(db.providers().size() >= 6);
  const std::string good =
      R"({"schema":"ftcost.gpu/1","id":"x","name":"X","memory_gib":48,"memory_bandwidth_gbps":696,
    "dense_tflops":{"bf16":150},"sources":["s"]})";
  auto load = [](const std::string& file, const std::string& text) {
    return Database::from_files({{file, text}});
  };
  CHECK(load("gpus/x.json", good).problems().empty());
  auto expect_problem = [&](const std::string& file, const std::string& text, const std::string& field) {
    Database d = load(file, text);
    REQUIRE(d.problems().size() == 1);
    CHECK(d.problems()[0].error.field.find(field) != std::string::npos);
  };
  std::string neg = good;
  neg.replace(neg.find("696"), 3, "-5");
  expect_problem("gpus/x.json", neg, "memory_bandwidth_gbps");
  std::string nosrc = good;
  nosrc.replace(nosrc.find(R"(["s"])"), 5, "[]");
  expect_problem("gpus/x.json", nosrc, "sources");
  expect_problem("gpus/y.json", good, "id");
  expect_problem("gpus/x.json", "{\"schema\": \"ftcost.gpu/1\", \"id\": \"x\"\xff}", "gpus/x.json");
  Database dup = Database::from_files({{"gpus/x.json", good}, {"gpus/x.json", good}});
  CHECK(dup.problems().size() == 1);
  std::string big(9u * 1024 * 1024, ' ');
  expect_problem("gpus/x.json", big, "gpus/x.json");
}

TEST_CASE("stack profiles: optional throughput fields default sensibly and are range-checked by name") {
  const StackProfile* shipped = Database::embedded().stack("hf-transformers-2024");
  REQUIRE(shipped != nullptr);
  json doc = json::parse(R"({"schema":"ftcost.stack/1","id":"s","display_name":"S","moe_execution":"loop"})");
  doc["memory"] = {{"cuda_context_gib", 0.5},
                   {"allocator_overhead_fraction", 0.1},
                   {"logits_bytes_per_vocab_entry", 14},
                   {"own_code_logits_bytes_per_vocab_entry", 6},
                   {"trainable_param_bytes", 4},
                   {"autocast_weight_copy_bytes", 2},
                   {"dequant_temp_bytes_per_param", 4},
                   {"gc_retained_fraction", 0}};
  json t = json::object();
  for (const char* k : {"host_us_per_kernel",
                        "backward_host_factor",
                        "host_sync_us",
                        "kernel_floor_us",
                        "host_device_overlap",
                        "kernels_per_linear",
                        "kernels_per_quantized_linear_extra",
                        "kernels_per_lora_module",
                        "kernels_per_expert_overhead",
                        "kernels_per_attention_block",
                        "kernels_per_mamba_block",
                        "kernels_per_router",
                        "kernels_per_norm",
                        "gemm_efficiency",
                        "attention_efficiency_factor",
                        "memory_efficiency",
                        "dequant_efficiency",
                        "optimizer_efficiency",
                        "dequant_bytes_per_param",
                        "optimizer_bytes_per_param_fp32",
                        "optimizer_bytes_per_param_16bit",
                        "loss_bytes_per_vocab_entry"})
    t[k] = 0.5;
  doc["throughput"] = t;
  auto ok = parse_stack(doc, "stacks/s.json");
  REQUIRE_MESSAGE(ok.ok(), (ok.ok() ? std::string() : ok.error().to_string()));
  CHECK(ok->hopper_tensor_peak_fraction == 1.0);                     // no instruction-set limit unless stated
  CHECK(ok->gemm_memory_efficiency == ok->memory_efficiency);        // falls back to the streaming efficiency
  CHECK(ok->own_code_kernels_per_router == ok->kernels_per_router);  // and to the transformers counts
  CHECK(ok->kernels_per_gather_backward == 0);
  CHECK(shipped->hopper_tensor_peak_fraction < 1.0);
  for (const auto& bad : {std::pair<const char*, double>{"hopper_tensor_peak_fraction", 2.0},
                          std::pair<const char*, double>{"gemm_memory_efficiency", -0.1},
                          std::pair<const char*, double>{"kernels_per_gather_backward", 1e9}}) {
    json d = doc;
    d["throughput"][bad.first] = bad.second;
    auto r = parse_stack(d, "stacks/s.json");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().field == std::string("throughput.") + bad.first);
  }
  // vendors: optional (any vendor when absent), else a non-empty array of names
  CHECK(ok->vendors.empty());
  CHECK(stack_vendor_warning(ok.value(), "mi300x", "AMD").empty());
  for (const auto& bad : {std::pair<json, const char*>{json("NVIDIA"), "vendors"},
                          std::pair<json, const char*>{json::array(), "vendors"},
                          std::pair<json, const char*>{json::array({"NVIDIA", 3}), "vendors[1]"}}) {
    json d = doc;
    d["vendors"] = bad.first;
    auto r = parse_stack(d, "stacks/s.json");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().field == bad.second);
  }
}

TEST_CASE("a stack whose software runs only on NVIDIA GPUs warns when the GPU is another vendor's") {
  const auto& db = Database::embedded();
  for (const char* stack : {"hf-transformers-2024", "grouped-gemm-2025"}) {
    CAPTURE(stack);
    REQUIRE(db.stack(stack) != nullptr);
    CHECK(db.stack(stack)->vendors == std::vector<std::string>{"NVIDIA"});
  }
  auto warns_about_stack = [&](const char* gpu) {
    Request r = {
        {"model", "mixtral-8x7b"}, {"gpu", gpu}, {"method", "qlora"}, {"seq", "512"}, {"batch", "1"}};
    auto in = resolve_request(r, db, nullptr);
    REQUIRE(in.ok());
    auto e = estimate(in.value(), db);
    REQUIRE(e.ok());
    int n = 0;
    for (const auto& w : e->warnings) n += w.find("runs on NVIDIA GPUs only") != std::string::npos;
    return n;
  };
  CHECK(warns_about_stack("mi300x") == 1);
  CHECK(warns_about_stack("gaudi3") == 1);
  CHECK(warns_about_stack("a40") == 0);
  CHECK(warns_about_stack("h100-sxm5-80gb") == 0);
}

TEST_CASE("a sequence longer than the model's context window warns, naming both lengths") {
  auto warns_ctx = [](Request r) {
    auto in = resolve_request(r, Database::embedded(), nullptr, 20790);
    REQUIRE(in.ok());
    auto e = estimate(in.value(), Database::embedded());
    REQUIRE(e.ok());
    for (const auto& w : e->warnings)
      if (w.find("context window") != std::string::npos) return w;
    return std::string();
  };
  Request r = {{"model", "tinyllama-1.1b"}, {"gpu", "h100-sxm5-80gb"}, {"method", "lora"}};
  r["seq"] = "2048";  // TinyLlama: max_position_embeddings 2048
  CHECK(warns_ctx(r).empty());
  r["seq"] = "4096";
  const std::string w = warns_ctx(r);
  CHECK(w.find("4096 tokens") != std::string::npos);
  CHECK(w.find("2048 tokens") != std::string::npos);
  CHECK(w.find("--seq") != std::string::npos);
  // a dataset truncated beyond the window: the rows of --padding max-length are that long
  Request d = test::request(
      "model=tinyllama-1.1b gpu=h100-sxm5-80gb method=lora dataset=cs15k padding=max-length max-length=3000");
  CHECK(warns_ctx(d).find("--max-length") != std::string::npos);
  d["max-length"] = "1024";
  CHECK(warns_ctx(d).empty());
}

// The default stack's chunked loss belongs to TRL's SFTTrainer; a plain Trainer keeps the full logits. The
// estimate says what that costs when the database has the plain-Trainer alias and the difference is material.
TEST_CASE("a chunked-loss estimate says what a plain Trainer's full logits need") {
  auto warnings_of = [](Request r) {
    auto in = resolve_request(r, Database::embedded(), nullptr);
    REQUIRE_MESSAGE(in.ok(), (in.ok() ? std::string() : in.error().to_string()));
    auto e = estimate(in.value(), Database::embedded());
    REQUIRE(e.ok());
    std::string all;
    for (const auto& w : e.value().warnings) all += w + "\n";
    return all;
  };
  const Request job =
      test::request("model=llama-3.1-8b gpu=h100-sxm5-80gb method=lora seq=2048 batch=4 stack=hf-trl-2026");
  CHECK(warnings_of(job).find("--stack hf-trainer-2026") != std::string::npos);
  Request plain = job;
  plain["stack"] = "hf-trainer-2026";
  CHECK(warnings_of(plain).find("chunked loss") == std::string::npos);
  Request liger = job;
  liger["liger"] = "on";  // Liger's fused linear cross-entropy replaces the loss either way
  CHECK(warnings_of(liger).find("chunked loss") == std::string::npos);
}
