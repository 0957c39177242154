// The validator on the shipped database and on one-field corruptions of shipped files.
#include "ftcost/database.hpp"
#include "ftcost/embedded_db.hpp"
#include "ftcost/fields.hpp"
#include "helpers.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <set>

using namespace dbtest;
using ftcost::check_db_files;
using ftcost::DbCheckOptions;
using nlohmann::json;

namespace {

// Checks one file (given by its gpu-db-relative path) against the shipped database.
std::vector<DbCheckProblem> check_text(const std::string& rel, const std::string& text,
                                       const DbCheckOptions& opt = {}) {
  return check_db_files({{"pr/" + rel, text}}, shipped(), opt).problems;
}

// A shipped file with one change.
std::vector<DbCheckProblem> mutated(const std::string& rel, const std::function<void(json&)>& change,
                                    const std::string& as = "", const DbCheckOptions& opt = {}) {
  json doc = shipped_json(rel);
  change(doc);
  return check_text(as.empty() ? rel : as, dump(doc), opt);
}

#define EXPECT_PROBLEM(problems, file, field, part) \
  do {                                              \
    const auto& ps_ = (problems);                   \
    INFO(listing(ps_));                             \
    CHECK(find(ps_, file, field, part) != nullptr); \
  } while (false)

}  // namespace

TEST_CASE("the shipped database passes db check") {
  const auto r = check_db_files(shipped());
  INFO(listing(r.problems));
  CHECK(r.ok());
  CHECK(r.files_by_kind.at("gpu") >= 25);
  CHECK(r.files_by_kind.at("prices") >= 6);
  CHECK(r.files_by_kind.at("model") >= 20);
  CHECK(r.files_by_kind.at("dataset") >= 2);
}

TEST_CASE("the embedded database passes db check and loads") {
  const auto r = check_db_files(ftcost::Database::embedded_files());
  INFO(listing(r.problems));
  CHECK(r.ok());
  CHECK(ftcost::Database::embedded().problems().empty());
}

TEST_CASE("issue 6 bars: >= 25 GPUs with sources, >= 6 providers with dated prices") {
  const auto& db = ftcost::Database::embedded();
  CHECK(db.gpus().size() >= 25);
  for (const auto& [id, g] : db.gpus()) {
    CAPTURE(id);
    CHECK(!g.sources.empty());
  }
  // Every GPU the issue names.
  for (const char* id : {"v100-pcie-16gb",
                         "v100-sxm2-32gb",
                         "a100-pcie-40gb",
                         "a100-sxm4-80gb",
                         "h100-pcie-80gb",
                         "h100-sxm5-80gb",
                         "h100-nvl",
                         "h200-sxm-141gb",
                         "h200-nvl",
                         "b200",
                         "a10",
                         "a10g",
                         "l4",
                         "l40",
                         "l40s",
                         "a40",
                         "t4",
                         "rtx-3090",
                         "rtx-4090",
                         "rtx-5090",
                         "mi250x",
                         "mi300x",
                         "mi325x"}) {
    CAPTURE(id);
    CHECK(db.gpu(id) != nullptr);
  }
  std::set<std::string> dated;
  for (const auto& p : db.providers())
    for (const auto& o : p.offers)
      if (o.date_days >= 0) dated.insert(p.id);
  CHECK(db.providers().size() >= 6);
  CHECK(dated.size() >= 6);
  // Where sources disagree, the chosen value and why.
  for (const auto& [path, text] : shipped()) {
    if (ftcost::db_file_kind(path) != "gpu") continue;
    const json g = json::parse(text);
    if (g.contains("disagreements") && g["disagreements"].is_string()) {
      CAPTURE(path);
      REQUIRE(g.contains("chosen_values"));
      CHECK(!g["chosen_values"].empty());
    }
  }
}

TEST_CASE("GPU spec sheets: units, plausibility, sources") {
  SUBCASE("bandwidth written in TB/s into the GB/s key") {
    auto ps = mutated("gpus/a100-sxm4-80gb.json", [](json& g) { g["memory_bandwidth_gbps"] = 2.039; });
    EXPECT_PROBLEM(ps, "gpus/a100-sxm4-80gb.json", "memory_bandwidth_gbps",
                   "looks like TB/s; in GB/s that is: 2039");
  }
  SUBCASE("memory in a GB key") {
    auto ps = mutated("gpus/a40.json", [](json& g) {
      g["memory_gb"] = 48;
      g.erase("memory_gib");
    });
    EXPECT_PROBLEM(ps, "gpus/a40.json", "memory_gb", "wrong unit");
    EXPECT_PROBLEM(ps, "gpus/a40.json", "memory_gib", "required field is missing");
  }
  SUBCASE("a misspelt key") {
    auto ps = mutated("gpus/a40.json", [](json& g) { g["sm_cout"] = 84; });
    EXPECT_PROBLEM(ps, "gpus/a40.json", "sm_cout", "did you mean \"sm_count\"");
  }
  SUBCASE("a string where a number belongs") {
    auto ps = mutated("gpus/l4.json", [](json& g) { g["tdp_w"] = "72 W"; });
    EXPECT_PROBLEM(ps, "gpus/l4.json", "tdp_w", "must be a number or null, got string");
  }
  SUBCASE("BF16 on Volta") {
    auto ps = mutated("gpus/v100-sxm2-32gb.json", [](json& g) { g["dense_tflops"]["bf16"] = 125; });
    EXPECT_PROBLEM(ps, "gpus/v100-sxm2-32gb.json", "dense_tflops.bf16", "no BF16");
  }
  SUBCASE("compute capability of another architecture") {
    auto ps = mutated("gpus/a40.json", [](json& g) { g["compute_capability"] = "9.0"; });
    EXPECT_PROBLEM(ps, "gpus/a40.json", "architecture", "does not match compute capability 9.0");
  }
  SUBCASE("a sparsity-doubled peak is caught per SM and clock") {
    auto ps = mutated("gpus/l4.json", [](json& g) { g["dense_tflops"]["bf16"] = 242; });
    // 242 TFLOP/s is inside Ada's range but twice what 58 SMs can do at 2040 MHz
    EXPECT_PROBLEM(ps, "gpus/l4.json", "dense_tflops.bf16", "FLOP per SM per clock");
  }
  SUBCASE("fp8 sparsity-doubled") {
    auto ps = mutated("gpus/h100-sxm5-80gb.json", [](json& g) { g["dense_tflops"]["fp8"] = 3957.8; });
    EXPECT_PROBLEM(ps, "gpus/h100-sxm5-80gb.json", "dense_tflops.fp8", "more than twice the 16-bit peak");
  }
  SUBCASE("usable memory above the label") {
    auto ps = mutated("gpus/t4.json", [](json& g) { g["usable_memory_mib_nvidia_smi"] = 20000; });
    EXPECT_PROBLEM(ps, "gpus/t4.json", "usable_memory_mib_nvidia_smi", "more than memory_gib");
  }
  SUBCASE("memory size in the id") {
    auto ps = mutated("gpus/a100-pcie-40gb.json", [](json& g) { g["memory_gib"] = 80; });
    EXPECT_PROBLEM(ps, "gpus/a100-pcie-40gb.json", "memory_gib", "the id says 40 GB");
  }
  SUBCASE("no sources") {
    auto ps = mutated("gpus/a40.json", [](json& g) { g["sources"] = json::array(); });
    EXPECT_PROBLEM(ps, "gpus/a40.json", "sources", "at least one source");
  }
  SUBCASE("a placeholder source") {
    auto ps = mutated("gpus/a40.json", [](json& g) { g["sources"][1] = "TODO"; });
    EXPECT_PROBLEM(ps, "gpus/a40.json", "sources[1]", "placeholder");
  }
  SUBCASE("disagreements without the chosen value") {
    auto ps = mutated("gpus/t4.json", [](json& g) { g.erase("chosen_values"); });
    EXPECT_PROBLEM(ps, "gpus/t4.json", "chosen_values", "chosen value and why");
  }
  SUBCASE("a chosen value that is not the file's") {
    auto ps = mutated("gpus/t4.json", [](json& g) { g["memory_bandwidth_gbps"] = 300; });
    EXPECT_PROBLEM(ps, "gpus/t4.json", "chosen_values[0].value", "memory_bandwidth_gbps is 300");
  }
  SUBCASE("upper-case id") {
    auto ps = mutated("gpus/a40.json", [](json& g) { g["id"] = "A40"; });
    EXPECT_PROBLEM(ps, "gpus/a40.json", "id", "lower-case");
  }
  SUBCASE("a second file for the same GPU") {
    auto ps = mutated(
        "gpus/a40.json", [](json& g) { g["id"] = "nvidia-a40"; }, "gpus/nvidia-a40.json");
    EXPECT_PROBLEM(ps, "gpus/nvidia-a40.json", "name", "is already in");
  }
  SUBCASE("a broken GPU file is reported once, not again by every price that refers to it") {
    json g = shipped_json("gpus/a40.json");
    g["memory_bandwidth_gbps"] = -696;
    const auto broken = check_db_files(
        {{"pr/gpus/a40.json", dump(g)}, {"pr/gpus/l4.json", "{\"name\": \"\xFF\"}"}}, shipped());
    INFO(listing(broken.problems));
    for (const auto& p : broken.problems) CHECK(p.file.find("/gpus/") != std::string::npos);
  }
  SUBCASE("types, ranges and allowed values come from the field list (ftcost/fields.hpp)") {
    auto ps = mutated("gpus/a40.json", [](json& g) {
      g["interconnect"]["pcie_lanes"] = 64;
      g["interconnect"]["pcie_p2p"] = "yes";
      g["sm_count"] = 84.5;
      g["l2_cache_mb"] = 2048;
      g["dense_tflops"]["fp8"] = -1;
    });
    EXPECT_PROBLEM(ps, "gpus/a40.json", "interconnect.pcie_lanes", "must be between 1 and 32, got 64");
    EXPECT_PROBLEM(ps, "gpus/a40.json", "interconnect.pcie_p2p", "must be true, false or null, got string");
    EXPECT_PROBLEM(ps, "gpus/a40.json", "sm_count", "must be a whole number, got 84.5");
    EXPECT_PROBLEM(ps, "gpus/a40.json", "l2_cache_mb", "must be between 0.1 and 1024 MiB, got 2048");
    EXPECT_PROBLEM(ps, "gpus/a40.json", "dense_tflops.fp8", "must be between 0.1 and 40000 TFLOP/s, got -1");
    auto topo =
        mutated("gpus/h100-sxm5-80gb.json", [](json& g) { g["interconnect"]["nvlink_topology"] = "ring"; });
    EXPECT_PROBLEM(topo, "gpus/h100-sxm5-80gb.json", "interconnect.nvlink_topology",
                   R"(must be "switch", "mesh", "bridge" or null, got "ring")");
  }
  SUBCASE("release year outside the architecture") {
    auto ps = mutated("gpus/h100-pcie-80gb.json", [](json& g) { g["release_year"] = 2019; });
    EXPECT_PROBLEM(ps, "gpus/h100-pcie-80gb.json", "release_year", "Hopper");
  }
}

TEST_CASE("issue 37: GPU variants are in the database and db check holds each to its parent") {
  const auto& db = ftcost::Database::embedded();
  for (const char* id : {"h100-sxm5-96gb", "h800-sxm5", "h20", "a800-sxm4-80gb"}) {
    CAPTURE(id);
    REQUIRE(db.gpu(id) != nullptr);
    CHECK(!db.gpu(id)->variant_of.empty());
    CHECK(db.gpu(db.gpu(id)->variant_of) != nullptr);
  }
  const std::string f = "gpus/h100-sxm5-96gb.json";
  SUBCASE("the SXM5 80GB spec cloned as Meta's 96 GB HBM2e 500 W part") {
    auto ps = mutated(f, [](json& g) {
      const json sxm = shipped_json("gpus/h100-sxm5-80gb.json");
      g["dense_tflops"] = sxm["dense_tflops"];
      g["memory_bandwidth_gbps"] = sxm["memory_bandwidth_gbps"];
      g.erase("disagreements");
      g.erase("chosen_values");
    });
    EXPECT_PROBLEM(ps, f, "dense_tflops.bf16",
                   "is the parent's peak at 500 W (h100-sxm5-80gb: 989.4 at 700 W)");
    EXPECT_PROBLEM(ps, f, "memory_bandwidth_gbps", "more than HBM2e can carry on 6144 bits");
  }
  SUBCASE("the parent's bandwidth under another memory type") {
    auto ps = mutated(f, [](json& g) {
      g["memory_bus_bits"] = 8192;
      g["memory_bandwidth_gbps"] = 3350;
    });
    EXPECT_PROBLEM(ps, f, "memory_bandwidth_gbps", "h100-sxm5-80gb's HBM3 bandwidth, but this is HBM2e");
  }
  SUBCASE("the parent's peak at a lower power is accepted with a chosen value that says why") {
    auto ps = mutated(f, [](json& g) {
      g["dense_tflops"]["fp32"] = 67;
      g["chosen_values"].push_back({{"field", "dense_tflops.fp32"},
                                    {"value", 67},
                                    {"alternatives", {"62.3 (interpolated)"}},
                                    {"why", "a measured rate says so, for the test"}});
    });
    INFO(listing(ps));
    CHECK(ps.empty());
  }
  SUBCASE("the parent's peak at a lower power without a chosen value") {
    auto ps = mutated(f, [](json& g) { g["dense_tflops"]["fp32"] = 67; });
    EXPECT_PROBLEM(ps, f, "dense_tflops.fp32", "a power-capped variant runs at lower clocks");
  }
  SUBCASE("a peak above the parent's at the same power") {
    auto ps = mutated("gpus/h800-sxm5.json", [](json& g) { g["dense_tflops"]["bf16"] = 1000; });
    EXPECT_PROBLEM(ps, "gpus/h800-sxm5.json", "dense_tflops.bf16", "above its parent's peak");
  }
  SUBCASE("an export variant with more NVLink than its parent") {
    auto ps = mutated("gpus/a800-sxm4-80gb.json",
                      [](json& g) { g["interconnect"]["nvlink_gbps_bidirectional"] = 900; });
    EXPECT_PROBLEM(ps, "gpus/a800-sxm4-80gb.json", "interconnect.nvlink_gbps_bidirectional",
                   "more than its parent a100-sxm4-80gb's 600");
  }
  SUBCASE("a variant of another die") {
    auto ps = mutated("gpus/a800-sxm4-80gb.json", [](json& g) { g["variant_of"] = "h100-sxm5-80gb"; });
    EXPECT_PROBLEM(ps, "gpus/a800-sxm4-80gb.json", "compute_capability", "a variant has its parent's die");
    EXPECT_PROBLEM(ps, "gpus/a800-sxm4-80gb.json", "interconnect.nvlink_generation", "NVLink 3 but");
  }
  SUBCASE("a parent that is not in gpus/, or is itself a variant") {
    auto none = mutated("gpus/h20.json", [](json& g) { g["variant_of"] = "h100-sxm9"; });
    EXPECT_PROBLEM(none, "gpus/h20.json", "variant_of", "\"h100-sxm9\" is not a GPU in gpus/");
    auto chain = mutated("gpus/h20.json", [](json& g) { g["variant_of"] = "h800-sxm5"; });
    EXPECT_PROBLEM(chain, "gpus/h20.json", "variant_of", "h800-sxm5 is itself a variant of h100-sxm5-80gb");
  }
  SUBCASE("an HBM variant states its bus width; capacity fits it") {
    auto bus = mutated("gpus/h20.json", [](json& g) { g.erase("memory_bus_bits"); });
    EXPECT_PROBLEM(bus, "gpus/h20.json", "memory_bus_bits", "states its memory bus width");
    auto cap = mutated("gpus/h20.json", [](json& g) { g["memory_gib"] = 150; });
    EXPECT_PROBLEM(cap, "gpus/h20.json", "memory_gib", "more than HBM3 holds on 6144 bits (144 GiB at most)");
  }
  SUBCASE("variant_of follows the id rule and is not the file's own id") {
    auto own = mutated("gpus/h20.json", [](json& g) { g["variant_of"] = "h20"; });
    EXPECT_PROBLEM(own, "gpus/h20.json", "variant_of", "names the file's own id");
    auto bad = mutated("gpus/h20.json", [](json& g) { g["variant_of"] = "H100 SXM"; });
    EXPECT_PROBLEM(bad, "gpus/h20.json", "variant_of", "lower-case");
  }
}

TEST_CASE("price files") {
  SUBCASE("negative price") {
    auto ps =
        mutated("prices/lambda.json", [](json& p) { p["offers"][2]["on_demand_usd_per_gpu_hour"] = -1.1; });
    EXPECT_PROBLEM(ps, "prices/lambda.json", "offers[2].on_demand_usd_per_gpu_hour", "must be > 0");
  }
  SUBCASE("a network kind outside the field list") {
    auto ps = mutated("prices/aws.json", [](json& p) { p["offers"][0]["network"]["kind"] = "token-ring"; });
    EXPECT_PROBLEM(ps, "prices/aws.json", "offers[0].network.kind",
                   R"(must be "infiniband", "roce" or "ethernet", got "token-ring")");
  }
  SUBCASE("instance price instead of GPU-hour price") {
    auto ps = mutated("prices/aws.json", [](json& p) {
      p["offers"][1]["on_demand_usd_per_gpu_hour"] = 98.32;
      p["offers"][1]["gpu_count"] = 8;
    });
    EXPECT_PROBLEM(ps, "prices/aws.json", "offers[1].on_demand_usd_per_gpu_hour", "divide by gpu_count");
  }
  SUBCASE("a date in the future") {
    DbCheckOptions opt;
    opt.today_days = ftcost::days_from_civil(2025, 3, 1);
    auto ps = mutated(
        "prices/crusoe.json", [](json&) {}, "", opt);
    EXPECT_PROBLEM(ps, "prices/crusoe.json", "offers[0].date", "in the future");
  }
  SUBCASE("a malformed date") {
    auto ps = mutated("prices/gcp.json", [](json& p) { p["offers"][0]["date"] = "2025/02/10"; });
    EXPECT_PROBLEM(ps, "prices/gcp.json", "offers[0].date", "YYYY-MM");
  }
  SUBCASE("an undated price without a note") {
    auto ps = mutated("prices/nebius.json", [](json& p) { p["offers"][0]["date_note"] = nullptr; });
    EXPECT_PROBLEM(ps, "prices/nebius.json", "offers[0].date_note", "undated price needs a date_note");
  }
  SUBCASE("a price dated before the GPU existed") {
    auto ps = mutated("prices/gcp.json", [](json& p) {
      for (auto& o : p["offers"])
        if (o["gpu_id"] == "l4") o["date"] = "2019-05";
    });
    bool found = false;
    for (const auto& p : ps) found = found || (p.message.find("before l4 was released") != std::string::npos);
    INFO(listing(ps));
    CHECK(found);
  }
  SUBCASE("the same offer twice") {
    auto ps = mutated("prices/modal.json", [](json& p) { p["offers"].push_back(p["offers"][0]); });
    const std::string last =
        "offers[" + std::to_string(shipped_json("prices/modal.json")["offers"].size()) + "]";
    EXPECT_PROBLEM(ps, "prices/modal.json", last, "duplicate offer");
  }
  SUBCASE("another currency") {
    auto ps = mutated("prices/vast-ai.json", [](json& p) { p["currency"] = "EUR"; });
    EXPECT_PROBLEM(ps, "prices/vast-ai.json", "currency", "only USD");
  }
  SUBCASE("a price per hour under another name") {
    auto ps = mutated("prices/runpod.json", [](json& p) { p["offers"][0]["usd_per_hour"] = 2.0; });
    EXPECT_PROBLEM(ps, "prices/runpod.json", "offers[0].usd_per_hour", "USD per GPU-hour");
  }
  SUBCASE("file name is not the id") {
    auto ps = mutated(
        "prices/azure.json", [](json&) {}, "prices/microsoft-azure.json");
    EXPECT_PROBLEM(ps, "prices/microsoft-azure.json", "id", "does not match the file name");
  }
}

TEST_CASE("model presets, datasets and stacks") {
  SUBCASE("published parameter count far from the config") {
    auto ps =
        mutated("models/dbrx-base.json", [](json& m) { m["published"]["total_params"] = 170000000000; });
    EXPECT_PROBLEM(ps, "models/dbrx-base.json", "published.total_params", "differs from the config");
  }
  SUBCASE("a size published to 3 digits is held to 0.5%, one to 2 digits to its rounding (issue 41)") {
    // DBRX: the config gives 131,596,523,520; 133B is 1.1% off (0.5% allowed), 130B 1.2% (130B has 2
    // significant digits: 5B / 130B = 3.8% allowed).
    auto ps =
        mutated("models/dbrx-base.json", [](json& m) { m["published"]["total_params"] = 133000000000; });
    EXPECT_PROBLEM(ps, "models/dbrx-base.json", "published.total_params", "by more than 0.5%");
    auto ok =
        mutated("models/dbrx-base.json", [](json& m) { m["published"]["total_params"] = 130000000000; });
    CHECK(find(ok, "models/dbrx-base.json", "published.total_params", "differs from the config") == nullptr);
  }
  SUBCASE("exact published count off by more than 0.5%, or not the rounded count's model (issue 41)") {
    auto ps =
        mutated("models/mixtral-8x7b.json", [](json& m) { m["published"]["exact_params"] = 47200000000; });
    EXPECT_PROBLEM(ps, "models/mixtral-8x7b.json", "published.exact_params", "by more than 0.5%");
    auto ps2 =
        mutated("models/mixtral-8x7b.json", [](json& m) { m["published"]["exact_params"] = 56000000000; });
    EXPECT_PROBLEM(ps2, "models/mixtral-8x7b.json", "published.exact_params", "not total_params");
  }
  SUBCASE("kind disagrees with the config") {
    auto ps = mutated("models/llama-2-7b.json", [](json& m) {
      m["kind"] = "moe";
      m["published"]["active_params"] = 1000000000;
    });
    EXPECT_PROBLEM(ps, "models/llama-2-7b.json", "kind", "describes a dense model");
  }
  SUBCASE("active parameters for a dense model") {
    auto ps =
        mutated("models/mistral-7b.json", [](json& m) { m["published"]["active_params"] = 7000000000; });
    EXPECT_PROBLEM(ps, "models/mistral-7b.json", "published.active_params", "must be null for a dense model");
  }
  SUBCASE("a config field of the wrong type reaches the model loader") {
    auto ps = mutated("models/qwen2.5-7b.json", [](json& m) { m["config"]["num_hidden_layers"] = "28"; });
    INFO(listing(ps));
    REQUIRE(!ps.empty());
    CHECK(ps[0].field.rfind("config.", 0) == 0);
  }
  SUBCASE("dataset quantiles that do not contain the median") {
    auto ps = mutated("datasets/cs15k.json", [](json& d) { d["length_tokens"]["median"] = 90; });
    EXPECT_PROBLEM(ps, "datasets/cs15k.json", "quantiles", "length_tokens.median");
  }
  SUBCASE("a stack value out of range, through the stack loader") {
    auto ps =
        mutated("stacks/hf-transformers-2024.json", [](json& s) { s["memory"]["cuda_context_gib"] = 100; });
    EXPECT_PROBLEM(ps, "stacks/hf-transformers-2024.json", "memory.cuda_context_gib", "");
  }
  SUBCASE("a stack key outside its field list, a note that is not text, a value of the wrong kind") {
    auto ps = mutated("stacks/hf-transformers-2024.json", [](json& s) {
      s["memory"]["cuda_context_gb"] = 0.5;
      s["memory"]["allocator_note"] = 5;
      s["throughput"]["kernels_per_norm"] = "8";
      s["moe_execution"] = "fused";
    });
    EXPECT_PROBLEM(ps, "stacks/hf-transformers-2024.json", "memory.cuda_context_gb", "wrong unit");
    EXPECT_PROBLEM(ps, "stacks/hf-transformers-2024.json", "memory.allocator_note", "free text");
    EXPECT_PROBLEM(ps, "stacks/hf-transformers-2024.json", "throughput.kernels_per_norm",
                   "must be a number, got string");
    EXPECT_PROBLEM(ps, "stacks/hf-transformers-2024.json", "moe_execution",
                   R"(must be "loop" or "grouped", got "fused")");
    auto alias = mutated("stacks/axolotl-2025.json", [](json& s) { s["memory"] = json::object(); });
    EXPECT_PROBLEM(alias, "stacks/axolotl-2025.json", "memory", "not a field of");
  }
  SUBCASE("model_support: a model_type no preset has, a malformed version, a range that ends first") {
    auto ps = mutated("stacks/unsloth-2024q4.json", [](json& s) {
      s["model_support"]["transformers"]["model_types"]["qwen9_moe"] = "4.60.0";
    });
    EXPECT_PROBLEM(ps, "stacks/unsloth-2024q4.json", "model_support.transformers.model_types.qwen9_moe",
                   "not the config model_type of any model preset");
    auto bad = mutated("stacks/unsloth-2024q4.json",
                       [](json& s) { s["model_support"]["transformers"]["model_types"]["qwen3"] = "4.5x"; });
    EXPECT_PROBLEM(bad, "stacks/unsloth-2024q4.json", "model_support.transformers.model_types.qwen3",
                   "is not a version of dotted numbers");
    auto range = mutated("stacks/unsloth-2024q4.json",
                         [](json& s) { s["model_support"]["unsloth"]["versions"] = "2024.12-2024.4"; });
    EXPECT_PROBLEM(range, "stacks/unsloth-2024q4.json", "model_support.unsloth.versions",
                   "ends before it starts");
    auto alias = mutated("stacks/axolotl-2025.json", [](json& s) {
      s["overrides"]["model_support"]["transformers"]["versions"] = "4.49+";
    });
    EXPECT_PROBLEM(alias, "stacks/axolotl-2025.json", "model_support.transformers.versions",
                   "dotted numbers");
  }
  SUBCASE("software_versions: ranges of two profiles that overlap, a version that is not MAJOR.MINOR") {
    // hf-trl-2024q4 covers trl 0.12-1.4 with transformers below 4.49; hf-trl-2025 the same trl from 4.49.
    auto ps = mutated("stacks/hf-trl-2024q4.json",
                      [](json& s) { s["software_versions"][0].erase("transformers_to"); });
    EXPECT_PROBLEM(ps, "stacks/hf-trl-2024q4.json", "software_versions[0]",
                   "overlaps hf-trl-2025's trl 0.12-1.4, transformers 4.49-");
    auto alias = mutated("stacks/axolotl-2025.json", [](json& s) {
      s["overrides"]["software_versions"][0]["transformers_from"] = "4.40";
    });
    EXPECT_PROBLEM(alias, "stacks/axolotl-2025.json", "overrides.software_versions[0]",
                   "overlaps axolotl-2024q4's axolotl, transformers -4.49");
    auto bad =
        mutated("stacks/hf-trl-2026.json", [](json& s) { s["software_versions"][0]["from"] = "1.4.x"; });
    EXPECT_PROBLEM(bad, "stacks/hf-trl-2026.json", "software_versions[0].from", "MAJOR.MINOR");
  }
  SUBCASE("a schema file with another $id") {
    json s = shipped_json("schema/gpu.schema.json");
    s["$id"] = "ftcost.gpus/2";
    auto ps = check_text("schema/gpu.schema.json", dump(s));
    EXPECT_PROBLEM(ps, "schema/gpu.schema.json", "$id", "ftcost.gpu/1");
  }
}

TEST_CASE("calibrations") {
  const std::string good = synthetic_calibration();
  SUBCASE("the synthetic H100 calibration filed under h100-sxm5-80gb passes") {
    auto ps = check_text("calibrations/h100-sxm5-80gb/synthetic.json", good);
    INFO(listing(ps));
    CHECK(ps.empty());
  }
  SUBCASE("measurements above the GPU's peak") {
    const std::string fast = scaled_calibration(3.0);
    REQUIRE(fast.rfind("scaled_calibration failed", 0) != 0);
    auto ps = check_text("calibrations/h100-sxm5-80gb/fast.json", fast);
    INFO(listing(ps));
    REQUIRE(!ps.empty());
    CHECK(ps[0].field.rfind("measurements.gemm[", 0) == 0);
    CHECK(ps[0].message.find("above the hardware ceiling") != std::string::npos);
  }
  SUBCASE("filed under another GPU") {
    auto ps = check_text("calibrations/a100-sxm4-80gb/h100.json", good);
    EXPECT_PROBLEM(ps, "calibrations/a100-sxm4-80gb/h100.json", "device.name",
                   "it looks like calibrations/h100-sxm5-80gb/");
  }
  SUBCASE("same model, other form factor") {
    json c = json::parse(good);
    c["device"]["name"] = "NVIDIA H100 PCIe";
    auto ps = check_text("calibrations/h100-sxm5-80gb/pcie.json", dump(c));
    EXPECT_PROBLEM(ps, "calibrations/h100-sxm5-80gb/pcie.json", "device.name", "another form factor");
  }
  SUBCASE("same name, other memory size") {
    json c = json::parse(good);
    c["device"]["memory_bytes"] = 42505273344;  // 40 GiB-class
    auto ps = check_text("calibrations/h100-sxm5-80gb/small.json", dump(c));
    EXPECT_PROBLEM(ps, "calibrations/h100-sxm5-80gb/small.json", "device.memory_bytes", "does not match");
  }
  SUBCASE("a folder that is no GPU id") {
    auto ps = check_text("calibrations/h100/x.json", good);
    EXPECT_PROBLEM(ps, "calibrations/h100/x.json", "(file)", "no gpus/h100.json");
  }
  SUBCASE("not in a GPU folder") {
    auto ps = check_text("calibrations/x.json", good);
    EXPECT_PROBLEM(ps, "calibrations/x.json", "(file)", "calibrations/<gpu-id>/");
  }
  SUBCASE("a smoke run") {
    json c = json::parse(good);
    c["meta"]["mode"] = "smoke";
    auto ps = check_text("calibrations/h100-sxm5-80gb/smoke.json", dump(c));
    EXPECT_PROBLEM(ps, "calibrations/h100-sxm5-80gb/smoke.json", "meta.mode", "smoke");
  }
  SUBCASE("a loader error names the field") {
    json c = json::parse(good);
    c["measurements"]["bandwidth"][0]["gbps_median"] = -5;
    auto ps = check_text("calibrations/h100-sxm5-80gb/neg.json", dump(c));
    EXPECT_PROBLEM(ps, "calibrations/h100-sxm5-80gb/neg.json", "measurements.bandwidth[0].gbps_median", "");
  }
}

TEST_CASE("hostile input: every problem names the file and a field, nothing crashes") {
  SUBCASE("10 MB file") {
    const std::string big = "{\"notes\": \"" + std::string(10u * 1024u * 1024u, 'x') + "\"}";
    auto ps = check_text("gpus/huge.json", big);
    EXPECT_PROBLEM(ps, "gpus/huge.json", "(file)",
                   "file is " + std::to_string(big.size()) + " bytes; the limit is 8388608 bytes");
  }
  SUBCASE("a million levels of nesting") {
    const std::string deep = "{\"notes\": " + std::string(1000000, '[') + std::string(1000000, ']') + "}";
    auto ps = check_text("gpus/deep.json", deep);
    EXPECT_PROBLEM(ps, "gpus/deep.json", "notes[0][0][0][0][0]...", "nested deeper than 64 levels");
  }
  SUBCASE("invalid UTF-8 in a key") {
    auto ps = check_text("prices/x.json", "{\"id\": \"x\", \"na\xC3\x28me\": 1}");
    INFO(listing(ps));
    REQUIRE(ps.size() == 1);
    CHECK(ps[0].field == "na");  // the key being read when the bad byte came
    CHECK(ps[0].message.find("invalid UTF-8") != std::string::npos);
  }
  SUBCASE("overlong and surrogate encodings are invalid UTF-8") {
    for (const std::string bad : {"\xC0\xAF", "\xE0\x80\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80", "\xFF"}) {
      auto ps = check_text("gpus/u.json", "{\"name\": \"" + bad + "\"}");
      REQUIRE(!ps.empty());
      CHECK(ps[0].message.find("invalid UTF-8") != std::string::npos);
    }
  }
  SUBCASE("empty and non-object files") {
    EXPECT_PROBLEM(check_text("gpus/e.json", ""), "gpus/e.json", "(file)", "empty");
    EXPECT_PROBLEM(check_text("gpus/e.json", "[1, 2]"), "gpus/e.json", "(top level)", "must be an object");
    EXPECT_PROBLEM(check_text("prices/e.json", "null"), "prices/e.json", "(top level)", "must be an object");
    EXPECT_PROBLEM(check_text("models/e.json", "\"text\""), "models/e.json", "(top level)",
                   "must be an object");
  }
  SUBCASE("numbers out of every range") {
    auto ps = mutated("gpus/a40.json", [](json& g) {
      g["sm_count"] = 1e300;
      g["release_year"] = -1e300;
      g["memory_gib"] = 1e-300;
    });
    EXPECT_PROBLEM(ps, "gpus/a40.json", "sm_count", "");
    EXPECT_PROBLEM(ps, "gpus/a40.json", "release_year", "");
    EXPECT_PROBLEM(ps, "gpus/a40.json", "memory_gib", "");
    auto inf = check_text("gpus/a40.json", "{\"memory_bandwidth_gbps\": 1e999}");
    EXPECT_PROBLEM(inf, "gpus/a40.json", "memory_bandwidth_gbps", "number overflow");
  }
  SUBCASE("files outside the folders") {
    EXPECT_PROBLEM(check_text("notes.json", "{}"), "notes.json", "(file)", "not in a folder of gpu-db/");
    auto ps = check_db_files({{"x/gpus/readme.txt", "hello"}}, shipped()).problems;
    EXPECT_PROBLEM(ps, "gpus/readme.txt", "(file)", "only .json files");
  }
  SUBCASE("truncations and byte flips of every shipped file") {
    std::uint64_t seed = 0x9E3779B97F4A7C15ull;
    auto next = [&seed] {
      seed ^= seed << 13;
      seed ^= seed >> 7;
      seed ^= seed << 17;
      return seed;
    };
    std::size_t runs = 0;
    for (const auto& [path, text] : shipped()) {
      for (int i = 0; i < 6; ++i) {
        const std::size_t cut = static_cast<std::size_t>(next() % (text.size() + 1));
        std::string t = text.substr(0, cut);
        std::string flipped = text;
        if (!flipped.empty())
          flipped[static_cast<std::size_t>(next() % flipped.size())] = static_cast<char>(next() & 0xFF);
        for (const std::string& input : {t, flipped}) {
          const auto r = check_db_files({{path, input}});
          ++runs;
          for (const auto& p : r.problems) {
            CHECK(!p.file.empty());
            CHECK(!p.field.empty());
            CHECK(!p.message.empty());
            CHECK_NOTHROW((void)json(p.to_string()).dump());  // valid UTF-8
          }
          if (cut + 1 < text.size() && input.size() == cut &&
              text.find_first_not_of(" \t\r\n", cut) != std::string::npos) {
            CHECK(!r.problems.empty());  // a strict prefix of a JSON document is never valid JSON
          }
        }
      }
    }
    CHECK(runs > 500);
  }
}

TEST_CASE("paths and kinds") {
  CHECK(ftcost::db_relative_path("gpus/a40.json") == "gpus/a40.json");
  CHECK(ftcost::db_relative_path("/x/gpu-db/gpus/a40.json") == "gpus/a40.json");
  CHECK(ftcost::db_relative_path("gpu-db/calibrations/a40/run1.json") == "calibrations/a40/run1.json");
  CHECK(ftcost::db_relative_path("a40.json").empty());
  CHECK(ftcost::db_file_kind("x/models/m.json") == "model");
  CHECK(ftcost::db_file_kind("x/calibrations/a40/c.json") == "calibration");
  CHECK(ftcost::db_file_kind("x/calibrations/c.json").empty());
  CHECK(ftcost::sanitize_utf8("a\xFF\nb\xC3\xA9") == "a\\xFF\\u000Ab\xC3\xA9");
}

namespace {

// A schema node with a local "$ref" ("#/$defs/x") resolved: the referenced node, then the node's own keys.
json resolved(const json& schema, const json& node) {
  if (!node.contains("$ref")) return node;
  const std::string ref = node.at("$ref").get<std::string>();
  REQUIRE(ref.rfind("#/$defs/", 0) == 0);
  json out = schema.at("$defs").at(ref.substr(8));
  for (const auto& [k, v] : node.items())
    if (k != "$ref") out[k] = v;
  return out;
}

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

const char* schema_type(ftcost::FieldKind k) {
  switch (k) {
    case ftcost::FieldKind::string:
      return "string";
    case ftcost::FieldKind::number:
      return "number";
    case ftcost::FieldKind::integer:
      return "integer";
    case ftcost::FieldKind::boolean:
      return "boolean";
    case ftcost::FieldKind::object:
      return "object";
    case ftcost::FieldKind::array:
      return "array";
    case ftcost::FieldKind::choice:
    case ftcost::FieldKind::any:
      break;
  }
  return "";
}

// One field against its schema property: type (with null), allowed values, range, array items.
void check_field_against_schema(const ftcost::Field& f, const json& prop) {
  CAPTURE(f.key);
  CAPTURE(prop.dump());
  if (f.kind == ftcost::FieldKind::choice) {
    json want = json::array();
    for (const auto& v : f.values) want.push_back(v);
    if (f.nullable) want.push_back(nullptr);
    if (prop.contains("const")) {
      CHECK(json::array({prop.at("const")}) == want);
    } else {
      REQUIRE(prop.contains("enum"));
      CHECK(prop.at("enum") == want);
    }
  } else if (f.kind != ftcost::FieldKind::any) {
    json want = f.nullable ? json::array({schema_type(f.kind), "null"}) : json(schema_type(f.kind));
    CHECK(prop.value("type", json()) == want);
  }
  const bool excl = prop.contains("exclusiveMinimum");
  CHECK(f.has_min() == (prop.contains("minimum") || excl));
  if (f.has_min()) {
    CHECK(f.min_exclusive == excl);
    CHECK(prop.value(excl ? "exclusiveMinimum" : "minimum", json()) == json(f.min));
  }
  CHECK(f.has_max() == prop.contains("maximum"));
  if (f.has_max()) CHECK(prop.value("maximum", json()) == json(f.max));
  CHECK(prop.value("minLength", json(0)) == json(f.min_length));
  CHECK(prop.value("maxLength", json(0)) == json(f.max_length));
  if (f.kind == ftcost::FieldKind::array) {
    CHECK(prop.value("minItems", json(0)) == json(f.min_items));
    const json& items = prop.at("items");
    if (f.items == ftcost::FieldKind::choice) {  // an array of allowed strings
      CHECK(items.value("type", json()) == json("string"));
      CHECK(sorted(items.value("enum", std::vector<std::string>{})) == sorted(f.values));
    } else {
      CHECK(items.value("type", json()) == json(schema_type(f.items)));
    }
  }
}

// A field list against a schema object node, and its member lists against the nested nodes. `full`: types,
// values and ranges too (the formats whose loaders read through the list); else keys and required set.
void check_list_against_schema(const std::string& list, const json& schema, const json& node, bool full) {
  CAPTURE(list);
  const ftcost::FieldList* l = ftcost::field_list(list);
  REQUIRE(l != nullptr);
  std::vector<std::string> required = node.value("required", std::vector<std::string>{});
  std::vector<std::string> allowed;
  for (const auto& [k, v] : node.at("properties").items()) allowed.push_back(k);
  CHECK(sorted(required) == sorted(ftcost::db_required_keys(list)));
  CHECK(sorted(allowed) == sorted(ftcost::db_allowed_keys(list)));
  const json additional = node.value("additionalProperties", json(true));
  CHECK(additional == json(false));
  // Free-text keys by suffix ("_note") are the schema's one patternProperties entry.
  if (l->free_text_suffix.empty()) {
    CHECK_FALSE(node.contains("patternProperties"));
  } else {
    REQUIRE(node.contains("patternProperties"));
    CHECK(node.at("patternProperties").size() == 1);
    CHECK(node.at("patternProperties").value(l->free_text_suffix + "$", json()).value("type", json()) ==
          json("string"));
  }
  for (const auto& f : l->fields) {
    if (!node.at("properties").contains(f.key)) continue;  // reported above
    const json prop = resolved(schema, node.at("properties").at(f.key));
    if (full) check_field_against_schema(f, prop);
    if (f.members.empty()) continue;
    const json& child = f.kind == ftcost::FieldKind::array ? prop.at("items") : prop;
    if (child.contains("properties")) check_list_against_schema(f.members, schema, child, full);
  }
}

}  // namespace

TEST_CASE("the JSON Schema files and the core's field lists (ftcost/fields.hpp) agree") {
  // GPU and price files: keys, required sets, types with null, allowed values, ranges, array items, nested
  // objects. The loaders read these through the lists, and db check takes its key/type/range checks from
  // them.
  for (const char* format : {"gpu", "prices"}) {
    const json schema = shipped_json(std::string("schema/") + format + ".schema.json");
    check_list_against_schema(format, schema, schema, true);
  }
  // Calibration files, every section and row (the calibration reader and writer use the lists).
  const json cal = shipped_json("schema/calibration.schema.json");
  check_list_against_schema("calibration", cal, cal, true);
  // Stack profiles and their thin aliases: one $defs entry each, the file is one of them.
  const json stack = shipped_json("schema/stack.schema.json");
  check_list_against_schema("stack", stack, stack.at("$defs").at("profile"), true);
  check_list_against_schema("stack.alias", stack, stack.at("$defs").at("alias"), true);
  // Datasets: the loader reads through the list.
  const json dataset = shipped_json("schema/dataset.schema.json");
  check_list_against_schema("dataset", dataset, dataset, true);
  // Models: db check's key lists (the model loader does not read through them yet).
  const std::map<std::string, std::pair<std::string, std::vector<std::string>>> kinds = {
      {"model", {"model", {}}},
      {"model.published", {"model", {"properties", "published"}}},
  };
  for (const auto& [kind, where] : kinds) {
    const json schema = shipped_json("schema/" + where.first + ".schema.json");
    json node = schema;
    for (const auto& step : where.second) node = node.at(step);
    check_list_against_schema(kind, schema, node, false);
  }
}
