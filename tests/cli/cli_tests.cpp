// Golden tests of the `ftcost` command line: JSON shape, exit codes and messages for bad input.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include "ftcost/api.hpp"
#include "ftcost/options.hpp"
#include "ftcost/paper.hpp"
#include "option_samples.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

using json = nlohmann::json;

namespace {

struct Run {
  int code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// `prefix` goes before the binary (e.g. "timeout 30 " where a regression would hang).
Run run(const std::string& args, const std::string& prefix = "") {
  static int n = 0;
  const std::string err_file = std::string(FTCOST_TEST_TMP) + "/stderr_" + std::to_string(n++) + ".txt";
  const std::string cmd = prefix + std::string(FTCOST_BIN) + " " + args + " 2>" + err_file;
  Run r;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::array<char, 4096> buf{};
  std::size_t got = 0;
  while ((got = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), got);
  int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (FILE* f = fopen(err_file.c_str(), "r")) {
    while ((got = fread(buf.data(), 1, buf.size(), f)) > 0) r.err.append(buf.data(), got);
    fclose(f);
  }
  return r;
}

// `ftcost ARGS`, which must succeed: its standard output, parsed as JSON.
json run_json(const std::string& args) {
  Run r = run(args);
  REQUIRE_MESSAGE(r.code == 0, "ftcost " << args << ": " << r.err);
  return json::parse(r.out);
}

const std::string kData = std::string(FTCOST_SOURCE_DIR) + "/tests/data";

void expect_bad(const std::string& args, const std::string& must_mention) {
  CAPTURE(args);
  Run r = run(args);
  CHECK(r.code == 2);
  CHECK(r.err.find(must_mention) != std::string::npos);
  CHECK(r.err.find("ftcost: error:") == 0);
  CHECK(r.out.empty());
}

}  // namespace

TEST_CASE("estimate --json: the contracted fields") {
  json j = run_json(
      "estimate --model mixtral-8x7b --gpu a40 --method qlora --moe sparse --dataset math14k --batch max "
      "--queries 15000 --epochs 10 --stack hf-transformers-2024 --json");
  for (const char* key :
       {"max_batch_size", "batch_size", "memory_gib", "step_time_s", "throughput_queries_per_s",
        "throughput_tokens_per_s", "time_hours", "cost_usd", "model", "gpu", "warnings"}) {
    CAPTURE(key);
    CHECK(j.contains(key));
  }
  CHECK(std::abs(j["max_batch_size"].get<int>() - 4) <= 1);
  CHECK(j["memory_gib"]["total"].get<double>() < 45.0);
  CHECK(j["gpu"]["id"] == "a40");
  CHECK(j["model"]["id"] == "mixtral-8x7b");
  CHECK(j["costs"].size() >= 2);
  // the ops list agrees with the kernel-class breakdown: one op per (stage, layer, name, class), and a QLoRA
  // linear's dequantization stays apart from its GEMM
  std::map<std::string, double> by_class;
  std::set<std::string> keys;
  for (const auto& op : j["ops"]) {
    const std::string cls = op["class"].get<std::string>();
    by_class[cls] += op["time_s"].get<double>();
    const std::string key = op["stage"].get<std::string>() + "/" + op["layer"].get<std::string>() + "/" +
                            op["name"].get<std::string>() + "/" + cls;
    CAPTURE(key);
    CHECK(keys.insert(key).second);
    if (cls == "dequant") CHECK(op["flops"].get<double>() == 0);
  }
  for (const auto& item : j["kernel_classes_s"].items()) {
    const std::string cls =
        item.key();  // not a structured binding: CAPTURE's lambda cannot capture one in C++17
    CAPTURE(cls);
    CHECK(by_class[cls] == doctest::Approx(item.value().get<double>()).epsilon(1e-9));
  }
}

TEST_CASE("estimate: human output is a table with units and lists the defaults") {
  Run r = run("estimate --model blackmamba-2.8b --gpu a40 --method full --dataset cs15k");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("max batch size:") != std::string::npos);
  CHECK(r.out.find("GiB") != std::string::npos);
  CHECK(r.out.find("samples/s") != std::string::npos);
  CHECK(r.out.find("tokens/s of data") != std::string::npos);
  CHECK(r.out.find("defaults:") != std::string::npos);
  CHECK(r.out.find("checkpointing=off") != std::string::npos);
}

TEST_CASE("estimate reads a Hugging Face config.json from a path") {
  json j = run_json("estimate --model " + std::string(FTCOST_SOURCE_DIR) +
                    "/tests/data/tiny-llama-config.json --gpu rtx-4090 --method lora --seq 256 --json");
  CHECK(j["model"]["total_params"].get<long long>() > 0);
}

TEST_CASE("paper table4 --json reproduces Table IV to the cent") {
  json j = run_json("paper table4 --json");
  REQUIRE(j["rows"].size() == 3);
  const double published[] = {32.7, 25.4, 17.9};
  for (int i = 0; i < 3; ++i) {
    CHECK(j["rows"][i]["cost_usd"].get<double>() == doctest::Approx(published[i]).epsilon(1e-9));
    CHECK(std::fabs(j["rows"][i]["cost_usd_unrounded"].get<double>() - published[i]) < 0.05);
  }
}

TEST_CASE("paper eq1 and eq2") {
  Run r = run("paper eq1 --gpu-mem 120 --seq 512 --json");
  REQUIRE(r.code == 0);
  CHECK(std::lround(json::parse(r.out)["raw"].get<double>()) == 35);
  Run r2 = run("paper eq2 --json");
  REQUIRE(r2.code == 0);
  CHECK(json::parse(r2.out)["fits"].size() == 4);
}

// The paper's Mixtral commonsense sparse sweep as a --points CSV, written from the embedded reference data
// (the only copy of the paper's measurements) rather than kept as a third copy under tests/data.
std::string mixtral_cs_sparse_csv() {
  const std::string path = std::string(FTCOST_TEST_TMP) + "/a40-mixtral-cs-sparse.csv";
  std::ofstream f(path);
  f << "batch,throughput,sparsity\n";
  for (const auto& sw : ftcost::paper::a40_sweeps())
    if (std::string(sw.id) == "mixtral-cs")
      for (const auto& p : sw.points)
        if (p.sparsity < 1) f << p.batch << ',' << p.throughput << ',' << p.sparsity << '\n';
  return path;
}

TEST_CASE("fit --points") {
  json j = run_json("fit --points " + mixtral_cs_sparse_csv() + " --json");
  CHECK(j["points"] == 8);
  CHECK(j["rmse"].get<double>() < 0.1);
  expect_bad("fit --points " + kData + "/bad/points-nan.csv", "points-nan.csv:3");
  expect_bad("fit --points /nonexistent.csv", "--points");
}

TEST_CASE("models and gpus list the presets") {
  Run m = run("models --json");
  REQUIRE(m.code == 0);
  CHECK(json::parse(m.out).size() >= 20);
  Run g = run("gpus");
  REQUIRE(g.code == 0);
  CHECK(g.out.find("h200-sxm-141gb") != std::string::npos);
}

TEST_CASE("models --json and gpus --json print the JavaScript API's lists (one core function)") {
  Run m = run("models --json");
  REQUIRE(m.code == 0);
  CHECK(json::parse(m.out) == json::parse(ftcost::api::models_json()));
  Run g = run("gpus --json");
  REQUIRE(g.code == 0);
  CHECK(json::parse(g.out) == json::parse(ftcost::api::gpus_json()));
}

TEST_CASE("bench reports estimates per second") {
  Run r = run("bench --iterations 200 --json");
  REQUIRE(r.code == 0);
  CHECK(json::parse(r.out)["estimates_per_s"].get<double>() > 0);
}

TEST_CASE("sweep: batch 1 to beyond the maximum, each point what estimate gives; estimate --csv") {
  const std::string job = "--model mixtral-8x7b --gpu a40 --method qlora --dataset math14k";
  json j = run_json("sweep " + job + " --json");
  const int max_b = j["max_batch_size"].get<int>();
  REQUIRE(max_b >= 1);
  const json& pts = j["points"];
  REQUIRE(pts.size() >= 3);
  CHECK(pts[0]["batch_size"].get<int>() == 1);
  CHECK(pts[pts.size() - 1]["batch_size"].get<int>() >
        max_b);  // goes past the maximum, marked as not fitting
  int last_batch = 0;
  for (const auto& p : pts) {
    const int b = p["batch_size"].get<int>();
    CHECK(b > last_batch);
    last_batch = b;
    CHECK(p["fits"].get<bool>() == (b <= max_b));
  }
  Run e = run("estimate " + job + " --batch 2 --json");
  REQUIRE(e.code == 0);
  json ej = json::parse(e.out);
  CHECK(pts[1]["batch_size"].get<int>() == 2);
  CHECK(pts[1]["throughput_queries_per_s"].get<double>() == ej["throughput_queries_per_s"].get<double>());
  CHECK(pts[1]["step_time_s"].get<double>() == ej["step_time_s"].get<double>());
  Run text = run("sweep " + job);
  REQUIRE(text.code == 0);
  CHECK(text.out.find("maximum batch " + std::to_string(max_b)) != std::string::npos);
  Run csv = run("sweep " + job + " --csv");
  REQUIRE(csv.code == 0);
  CHECK(csv.out.rfind("batch_size,fits,", 0) == 0);
  expect_bad("sweep --model mixtral-8x7b --gpu rtx-4090 --method qlora", "does not fit");
  expect_bad("sweep " + job + " --points 1", "--points");
  // estimate --csv: the JSON's fields as field,value rows
  Run ecsv = run("estimate " + job + " --csv");
  REQUIRE(ecsv.code == 0);
  CHECK(ecsv.out.rfind("field,value\n", 0) == 0);
  CHECK(ecsv.out.find("\nmax_batch_size," + std::to_string(max_b) + "\n") != std::string::npos);
  CHECK(ecsv.out.find("\nmemory_gib.total,") != std::string::npos);
}

TEST_CASE(
    "compare: every GPU, cheapest first, the same numbers as estimate; CUDA-only stacks flag other vendors") {
  const std::string job = "--model mixtral-8x7b --method qlora --dataset math14k --queries 15000";
  json j = run_json("compare " + job + " --json");
  REQUIRE(j.at("rows").is_array());
  const json& rows = j.at("rows");
  int gpus = 0, cheapest = 0, flagged = 0;
  double last_cost = 0;
  int last_tier = 0;
  bool priced_part = true;
  for (const auto& row : rows) {
    ++gpus;
    const bool priced = row.contains("price") && !row.contains("stack_warning");
    if (!priced) priced_part = false;
    CHECK((priced || !priced_part) == true);  // priced rows come first ...
    if (priced && priced_part) {
      // ... by the one price rule: dated and fresh, then stale, then undated; cheapest first within each
      const json& p = row["price"];
      const int tier = p["date"].is_null() ? 2 : p["stale"].get<bool>() ? 1 : 0;
      CHECK(tier >= last_tier);
      if (tier == last_tier) CHECK(p["cost_usd"].get<double>() >= last_cost);
      last_tier = tier;
      last_cost = p["cost_usd"].get<double>();
    }
    cheapest += row["cheapest"].get<bool>() ? 1 : 0;
    if (row.contains("stack_warning")) {
      ++flagged;
      CHECK_FALSE(row["cheapest"].get<bool>());
    }
  }
  CHECK(gpus >= 30);  // one row per GPU of the database by default
  CHECK(cheapest == 1);
  CHECK(rows[0]["cheapest"].get<bool>());
  CHECK(flagged >= 4);  // AMD Instinct and Intel Gaudi under the paper's CUDA-only stack
  // the numbers of a row are those `estimate` gives for that GPU
  const json& first = rows[0];
  Run e = run("estimate " + job + " --gpu " + first["gpu"].get<std::string>() + " --json");
  REQUIRE(e.code == 0);
  json ej = json::parse(e.out);
  CHECK(first["max_batch_size"].get<double>() == ej["max_batch_size"].get<double>());
  CHECK(first["throughput_queries_per_s"].get<double>() == ej["throughput_queries_per_s"].get<double>());
  CHECK(first["time_hours"].get<double>() == ej["time_hours"].get<double>());
  // --spot on can only make the cheapest cheaper; --offers lists more rows; human output and CSV
  Run spot = run("compare " + job + " --spot on --json");
  REQUIRE(spot.code == 0);
  CHECK(json::parse(spot.out)["rows"][0]["price"]["cost_usd"].get<double>() <=
        rows[0]["price"]["cost_usd"].get<double>());
  Run offers = run("compare " + job + " --offers --json");
  REQUIRE(offers.code == 0);
  CHECK(json::parse(offers.out)["rows"].size() > rows.size());
  Run text = run("compare " + job);
  REQUIRE(text.code == 0);
  CHECK(text.out.find("cheapest") != std::string::npos);
  CHECK(text.out.find("does not fit at batch 1") != std::string::npos);
  CHECK(text.out.find("stack n/a") != std::string::npos);
  Run csv = run("compare " + job + " --csv");
  REQUIRE(csv.code == 0);
  CHECK(csv.out.rfind("gpu,gpu_name,memory_gib,fits,", 0) == 0);
  // bad input names the flag; --gpu is not a compare flag
  expect_bad("compare --model no-such-model --method qlora", "--model");
  expect_bad("compare --model mixtral-8x7b --method qlora --batch 0", "--batch");
  expect_bad("compare --model mixtral-8x7b", "--method");
  expect_bad("compare --model mixtral-8x7b --spot maybe", "--spot");
  expect_bad("compare --model mixtral-8x7b --gpu a40", "--gpu");
}

TEST_CASE(
    "an unknown model_type whose config carries its parameter count is read generically, with a warning") {
  Run r = run("estimate --model " + kData + "/confirmed-arch.json --gpu a40 --method lora --json");
  REQUIRE(r.code == 0);
  const json j = json::parse(r.out);
  CHECK(j.at("model").at("total_params").get<std::int64_t>() == 44372480);
  CHECK(j.dump().find("model_type 'newarch' is not one ftcost knows") != std::string::npos);
}

TEST_CASE("bad input: exit code 2 and a message naming the flag or field, never a crash") {
  const std::string base = "estimate --model mixtral-8x7b --gpu a40 --method qlora ";
  expect_bad("estimate --model nope --gpu a40 --method qlora", "--model");
  expect_bad("estimate --model mixtral-8x7b --gpu h900 --method qlora", "--gpu");
  expect_bad(base + "--batch 0", "--batch");
  expect_bad(base + "--batch -4", "--batch");
  expect_bad(base + "--batch nan", "--batch");
  expect_bad(base + "--batch 4GB", "--batch");
  expect_bad(base + "--queries 4000000000000000", "--queries");
  expect_bad(base + "--epochs NaN", "--epochs");
  expect_bad(base + "--seq 0", "--seq");
  expect_bad(base + "--lora-targets q_proj,nope", "--lora-targets");
  expect_bad(base + "--price-per-hour -2", "--price-per-hour");
  expect_bad(base + "--frobnicate 3", "frobnicate");
  expect_bad("estimate --gpu a40 --method qlora", "--model");
  expect_bad("estimate --model " + kData + "/bad/malformed.json --gpu a40 --method qlora", "malformed.json");
  expect_bad("estimate --model " + kData + "/bad/missing-hidden.json --gpu a40 --method qlora",
             "hidden_size");
  expect_bad("estimate --model " + kData + "/bad/layers-string.json --gpu a40 --method qlora",
             "num_hidden_layers");
  expect_bad("estimate --model " + kData + "/bad/unknown-arch.json --gpu a40 --method qlora", "model_type");
  // a model_type with no reader and no parameter count to confirm a generic reading (issue 41)
  expect_bad("estimate --model " + kData + "/bad/unconfirmed-arch.json --gpu a40 --method qlora",
             "\"num_parameters\"");
  expect_bad("estimate --model /nonexistent/config.json --gpu a40 --method qlora", "no such file");
  expect_bad(
      "estimate --model mixtral-8x7b --gpu " + kData + "/bad/gpu-negative-bandwidth.json --method qlora",
      "memory_bandwidth_gbps");
  expect_bad("paper eq1 --gpu-mem -5", "gpu-mem");
  expect_bad("nonsense", "nonsense");
}

// ---- the option table: every job option is a CLI flag, listed in --help, and gives what the JSON API gives
TEST_CASE("one price rule: estimate's headline and compare's row for a GPU name the same offer") {
  for (const char* gpu : {"h100-sxm5-80gb", "a100-sxm4-80gb", "h200-sxm-141gb", "rtx-4090", "l40s"}) {
    CAPTURE(gpu);
    const std::string job = " --model llama-3.1-8b --method qlora --seq 1024";
    const Run e = run(std::string("estimate --gpu ") + gpu + job + " --json");
    const Run c = run("compare" + job + " --json");
    REQUIRE(e.code == 0);
    REQUIRE(c.code == 0);
    const json ej = json::parse(e.out), cj = json::parse(c.out);
    for (const auto& row : cj["rows"]) {
      if (row["gpu"] != gpu || !row.contains("price")) continue;
      CHECK(row["price"]["provider"] == ej["price"]["provider"]);
      CHECK(row["price"]["usd_per_gpu_hour"] == ej["price"]["usd_per_gpu_hour"]);
      CHECK(row["price"]["kind"] == ej["price"]["kind"]);
    }
  }
}

TEST_CASE("a GPU you own: price 0 or electricity at the board power") {
  const std::string job = "estimate --model llama-3.1-8b --gpu rtx-4090 --method qlora --seq 1024 --json";
  Run r = run(job + " --price-per-hour 0");
  REQUIRE(r.code == 0);
  json j = json::parse(r.out);
  CHECK(j["cost_usd"] == 0.0);
  r = run(job + " --electricity 0.30");
  REQUIRE(r.code == 0);
  j = json::parse(r.out);
  // RTX 4090: 450 W board power (gpu-db/gpus/rtx-4090.json) x $0.30/kWh = $0.135 per hour
  CHECK(j["price"]["usd_per_gpu_hour"].get<double>() == doctest::Approx(0.135));
  for (const auto& w : j["warnings"]) CHECK(w.get<std::string>().find("older than") == std::string::npos);
  // under --json the error is the API's object on stdout (issue 36)
  Run both = run(job + " --electricity 0.3 --price-per-hour 1");
  CHECK(both.code == 2);
  CHECK(json::parse(both.out).at("error").at("field") == "--electricity");
}

TEST_CASE("memory state: fits, tight or does not fit, with needed vs available") {
  const std::string job = "estimate --model llama-3.1-8b --gpu rtx-4090 --method qlora --seq 1024 --json";
  json fit = json::parse(run(job + " --batch 1").out);
  CHECK(fit["memory_state"] == "fits");
  json mx = json::parse(run(job).out);  // the largest batch: above 92% of the usable memory or close to it
  CHECK((mx["memory_state"] == "tight" || mx["memory_fraction"].get<double>() <= 0.92));
  json no = json::parse(run(job + " --batch 4096").out);
  CHECK(no["memory_state"] == "does_not_fit");
  CHECK(no["memory_fraction"].get<double>() > 1.0);  // needed vs available at the asked batch
  json none = json::parse(run("estimate --model llama-3.1-405b --gpu t4 --method full --seq 512 --json").out);
  CHECK(none["memory_state"] == "does_not_fit");
  CHECK(none["memory_fraction"].get<double>() > 1.0);  // batch 1's need, not only the fixed part
}

TEST_CASE("host-bound: the warning names the cause and prices the alternative stack") {
  // the paper's stack runs the experts as a Python loop
  json j = run_json(
      "estimate --model qwen3-30b-a3b --gpu h100-sxm5-80gb --method lora --dataset math14k "
      "--stack hf-transformers-2024 --json");
  // on the default stack (grouped experts) a loop stack would be slower: it is not offered as advice
  Run g = run("estimate --model qwen3-30b-a3b --gpu h100-sxm5-80gb --method lora --dataset math14k --json");
  REQUIRE(g.code == 0);
  const json parsed_g_out = json::parse(g.out);  // kept alive: a range-for over a temporary's member dangles
  for (const auto& w : parsed_g_out["warnings"])
    CHECK(w.get<std::string>().find("instead of") == std::string::npos);
  bool found = false;
  for (const auto& w : j["warnings"]) {
    const std::string s = w.get<std::string>();
    if (s.rfind("host-bound", 0) != 0) continue;
    found = true;
    CHECK(s.find("kernels") != std::string::npos);
    CHECK(s.find("grouped-gemm-2025") != std::string::npos);
    CHECK(s.find(" h instead of ") != std::string::npos);
  }
  CHECK(found);
}

TEST_CASE("option table: every job option round-trips through its CLI flag") {
  const ftcost::Database& db = ftcost::Database::embedded();
  const Run help = run("estimate --help");
  REQUIRE(help.code == 0);
  for (const auto& o : ftcost::job_options()) {
    CAPTURE(o.key);
    CHECK(help.out.find(o.flag() + " ") != std::string::npos);
    CHECK(help.out.find(o.help) != std::string::npos);
    const ftcost::test::OptionSample s = ftcost::test::option_sample(o, db);
    if (o.key == "run") continue;  // run files: tests/unit/test_run.cpp, tests/probe
    std::string args = "estimate --json";
    json req = json::object();
    for (const auto& [k, v] : s.request) {
      args += " --" + k + " '" + v + "'";
      req[k] = v;
    }
    const Run r = run(args);
    REQUIRE(r.code == 0);
    const json cli = json::parse(r.out);
    if (o.key == "calibration") {
      CHECK(cli["calibrated"] == true);  // the JSON API takes no file paths
      continue;
    }
    const json api = json::parse(ftcost::api::estimate_json(req.dump()));
    REQUIRE(!api.contains("error"));
    CHECK(cli == api);
    // an empty value is an error naming the flag (issue #15 item 9), never "not given"
    const Run e = run("estimate --" + o.key + " '' --model mixtral-8x7b --gpu a40 --method qlora");
    CHECK(e.code == 2);
    CHECK(e.err.find(o.flag()) != std::string::npos);
  }
}

TEST_CASE("fit-stack --run: bad run files exit 2 naming the file and the field") {
  const std::string dir = FTCOST_TEST_TMP;
  auto write = [&](const std::string& name, const std::string& text) {
    const std::string path = dir + "/" + name;
    FILE* f = fopen(path.c_str(), "w");
    REQUIRE(f != nullptr);
    fputs(text.c_str(), f);
    fclose(f);
    return path;
  };
  expect_bad("fit-stack --run " + dir + "/no-such-run.json", "--run");
  expect_bad("fit-stack --run " + write("run-garbage.json", "{not json"), "run-garbage.json");
  expect_bad("fit-stack --run " + write("run-schema.json", R"({"schema": "ftcost.run/0"})"), "schema");
  const json good = {{"schema", "ftcost.run/1"},
                     {"gpu", {{"id", "a40"}}},
                     {"model", {{"preset", "llama-2-7b"}}},
                     {"training", {{"method", "lora"}}},
                     {"steps",
                      {{{"wall_s", 1.2}, {"micro_batches", {{{"batch_size", 4}, {"seq_len", 512}}}}},
                       {{"wall_s", 1.3}, {"micro_batches", {{{"batch_size", 4}, {"seq_len", 512}}}}}}}};
  json other = good;
  other["gpu"] = {{"id", "h100-sxm5-80gb"}};
  const std::string a = write("run-a40.json", good.dump()), h = write("run-h100.json", other.dump());
  expect_bad("fit-stack --run " + a + " --run " + h, "fit one GPU's runs at a time");
  json nogpu = good;
  nogpu["gpu"] = nullptr;
  nogpu["gpu_null_reason"] = "no CUDA device (CPU run)";
  expect_bad("fit-stack --run " + write("run-cpu.json", nogpu.dump()),
             "run-cpu.json: gpu: the run names no GPU");
  json badmethod = good;
  badmethod["training"]["method"] = "dpo";
  expect_bad("fit-stack --run " + write("run-dpo.json", badmethod.dump()), "training.method");
  Run ok = run("fit-stack --run " + a + " --json");
  CHECK(ok.code == 0);
  const json j = json::parse(ok.out);
  CHECK(j["time_points"] == 2);
  CHECK(j["points"].size() == 2);
}

// ---- more than one GPU (issue #14)
TEST_CASE(
    "multi-GPU: estimate reports per-rank memory and communication; compare and sweep refuse a node by "
    "name") {
  const Run j = run(
      "estimate --json --model llama-3.1-8b --gpu h100-sxm5-80gb --method full --seq 2048 --node dgx-h100 "
      "--nodes 2 --parallel fsdp");
  REQUIRE(j.code == 0);
  const json e = json::parse(j.out);
  CHECK(e["gpus"] == 16);
  CHECK(e["parallel"]["strategy"] == "fsdp");
  CHECK(e["parallel"]["network_link"]["kind"] == "infiniband");
  CHECK(e["memory_gib"]["total"].get<double>() > 0);
  CHECK(e["parallel"]["communication"].size() == 3);
  for (const auto& c : e["parallel"]["communication"])
    CHECK(c["exposed_s"].get<double>() + c["overlapped_s"].get<double>() ==
          doctest::Approx(c["time_s"].get<double>()));
  const Run t =
      run("estimate --model mixtral-8x7b --gpu h100-sxm5-80gb --method qlora --gpus 8 --parallel ep:8");
  REQUIRE(t.code == 0);
  CHECK(t.out.find("expert dispatch / combine all-to-all") != std::string::npos);
  CHECK(t.out.find("memory per rank") != std::string::npos);
  const Run bad =
      run("estimate --model llama-3.1-8b --gpu h100-sxm5-80gb --method lora --gpus 8 --parallel tp:3");
  CHECK(bad.code == 2);
  CHECK(bad.err.find("--parallel") != std::string::npos);
  const Run c = run("compare --model llama-3.1-8b --method lora --node dgx-h100");
  CHECK(c.code == 2);
  CHECK(c.err.find("--node") != std::string::npos);
  const Run s = run("sweep --model llama-3.1-8b --gpu h100-sxm5-80gb --method lora --gpus 8");
  CHECK(s.code == 2);
  CHECK(s.err.find("--gpus") != std::string::npos);
  const Run b = run("bench --iterations 40 --json");
  REQUIRE(b.code == 0);
  CHECK(json::parse(b.out)["multi_gpu_estimate_us"].get<double>() > 0);
}

TEST_CASE("compare ranks instance shapes: whole instances, several only with a network, costed whole") {
  const std::string job = " --model llama-3.1-70b --method lora --seq 1024";
  // --gpus 8 is one node of 8, as in `estimate`; --nodes 2 two of them
  const Run eight = run("compare" + job + " --gpus 8 --offers --json");
  REQUIRE(eight.code == 0);
  const Run two = run("compare" + job + " --gpus 8 --nodes 2 --offers --json");
  REQUIRE(two.code == 0);
  json rows = json::parse(eight.out)["rows"];
  for (const auto& r : rows) CHECK(r["nodes"] == 1);
  const json parsed_two = json::parse(two.out);  // kept alive: a range-for over a temporary's member dangles
  for (const auto& r : parsed_two["rows"]) rows.push_back(r);
  REQUIRE(rows.size() > 3);
  bool multi_node = false;
  for (const auto& r : rows) {
    CAPTURE(r.dump());
    CHECK(r["gpus_per_node"] == 8);
    CHECK(r["gpus"] == r["gpus_per_node"].get<int>() * r["nodes"].get<int>());
    if (r["nodes"].get<int>() > 1) {
      multi_node = true;
      CHECK(r["network"] != "none");  // only an offer with a network spans nodes
    }
    if (!r.contains("price")) continue;
    CHECK(r["strategy"] != "single");
    CHECK(r["per_rank_peak_gib"].get<double>() <= r["memory_gib"].get<double>());
    const json& p = r["price"];
    // an 8-GPU instance, or (no such instance priced) 8 x the per-GPU price of another size, as `estimate`
    if (p["basis"] == "instance")
      CHECK(p["gpu_count"] == 8);
    else
      CHECK(p["basis"] == "per-gpu");
    CHECK(p["usd_per_hour"].get<double>() ==
          doctest::Approx(p["usd_per_gpu_hour"].get<double>() * r["gpus"].get<int>()));
    CHECK(p["cost_usd"].get<double>() ==
          doctest::Approx(p["usd_per_hour"].get<double>() * r["time_hours"].get<double>()));
  }
  CHECK(multi_node);
  // the row of one shape is `ftcost estimate` of that shape, with the strategy compare chose
  for (const auto& r : rows) {
    if (!r.contains("price") || r["nodes"] != 1) continue;
    const Run e = run("estimate" + job + " --gpu " + r["gpu"].get<std::string>() + " --gpus 8 --parallel " +
                      r["strategy"].get<std::string>() + " --json");
    REQUIRE(e.code == 0);
    CHECK(json::parse(e.out)["throughput_queries_per_s"].get<double>() ==
          doctest::Approx(r["throughput_queries_per_s"].get<double>()));
    break;
  }
  const Run one = run("compare" + job + " --max-gpus 8 --offers --json");
  REQUIRE(one.code == 0);
  const json parsed_one_out =
      json::parse(one.out);  // kept alive: a range-for over a temporary's member dangles
  for (const auto& r : parsed_one_out["rows"]) CHECK(r["gpus"].get<int>() <= 8);
  const Run nodes = run("compare" + job + " --nodes 2 --json");
  REQUIRE(nodes.code == 0);
  const json parsed_nodes_out =
      json::parse(nodes.out);  // kept alive: a range-for over a temporary's member dangles
  for (const auto& r : parsed_nodes_out["rows"]) CHECK(r["nodes"] == 2);
  const Run text =
      run("compare" + job + " --gpus 8 --nodes 2 --offers");  // every offer, not each GPU's cheapest
  REQUIRE(text.code == 0);
  CHECK(text.out.find("peak/rank") != std::string::npos);
  CHECK(text.out.find("2x8") != std::string::npos);
  const Run csv = run("compare" + job + " --gpus 8 --csv");
  REQUIRE(csv.code == 0);
  CHECK(csv.out.find(",gpus,gpus_per_node,nodes,network,strategy,per_rank_peak_gib,usd_per_hour\n") !=
        std::string::npos);
  expect_bad("compare" + job + " --max-gpus 0", "--max-gpus");
  expect_bad("compare" + job + " --network infiniband --network-gbit-per-gpu 400", "--network");
  // a strategy that does not apply to a shape is that row's error, named (2 nodes could take hsdp)
  const Run hsdp = run("compare" + job + " --gpus 8 --nodes 1 --parallel hsdp --json");
  REQUIRE(hsdp.code == 0);
  const json parsed_hsdp_out =
      json::parse(hsdp.out);  // kept alive: a range-for over a temporary's member dangles
  REQUIRE_FALSE(parsed_hsdp_out["rows"].empty());
  for (const auto& r : parsed_hsdp_out["rows"])
    CHECK(r["error"].get<std::string>().find("--parallel") != std::string::npos);
  // one the model rules out on every shape is the request's error, as in estimate (tp:3 on 64 heads; issue
  // 39 W10)
  expect_bad("compare" + job + " --gpus 8 --parallel tp:3", "--parallel");
}

TEST_CASE("scale: time, cost and scaling efficiency against the GPU count") {
  const std::string job = " --model llama-3.1-8b --gpu h100-sxm5-80gb --method full --seq 2048";
  const Run j = run("scale" + job + " --node dgx-h100 --counts 1,2,8,16 --json");
  REQUIRE(j.code == 0);
  const json s = json::parse(j.out);
  REQUIRE(s["points"].size() == 4);
  CHECK(s["points"][3]["nodes"] == 2);
  CHECK(s["network"] == "infiniband");
  // the 1-GPU point is `ftcost estimate` of the job
  const Run e = run("estimate" + job + " --json");
  REQUIRE(e.code == 0);
  CHECK(s["points"][0]["throughput_queries_per_s"] == json::parse(e.out)["throughput_queries_per_s"]);
  const Run t = run("scale" + job);
  REQUIRE(t.code == 0);
  CHECK(t.out.find("efficiency") != std::string::npos);
  const Run c = run("scale" + job + " --csv");
  REQUIRE(c.code == 0);
  CHECK(c.out.rfind("gpus,gpus_per_node,nodes,strategy,fits,", 0) == 0);
  expect_bad("scale" + job + " --counts 1,16", "--counts");
  expect_bad("scale" + job + " --counts 2,1", "--counts");
  expect_bad("scale --model llama-3.1-8b --method full", "--gpu");
}

// Issue #15: files, output targets and stdout. tests/robust/robust.py runs many more cases of each kind.
TEST_CASE("issue #15: inputs that are not regular files are named, never read or waited on") {
  const std::string dir = std::string(FTCOST_TEST_TMP) + "/issue15";
  (void)std::system(("rm -rf " + dir + " && mkdir -p " + dir + "/folder").c_str());
  const std::string fifo = dir + "/points.csv";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // a FIFO hung forever before; `timeout` turns a regression into exit 124 instead of a stuck test
  Run r = run("fit --points " + fifo, "timeout 30 ");
  CHECK(r.code == 2);
  CHECK(r.err.find("FIFO") != std::string::npos);
  r = run("estimate --model " + fifo + " --gpu a40 --method qlora", "timeout 30 ");
  CHECK(r.code == 2);
  CHECK(r.err.find("FIFO") != std::string::npos);
  expect_bad("estimate --model " + dir + "/folder --gpu a40 --method qlora", "is a folder");
  expect_bad("fit --points /dev/zero", "character device");
  expect_bad("fit --points " + mixtral_cs_sparse_csv() + " --c3 1e308", "between 1e-9 and 1e12");
  expect_bad("fit-stack --write " + dir + "/missing.json", "no such file");
}

TEST_CASE("issue #15: outputs replace neither device nodes nor symlinks, and write errors are reported") {
  const std::string dir = std::string(FTCOST_TEST_TMP) + "/issue15-out";
  (void)std::system(("rm -rf " + dir + " && mkdir -p " + dir).c_str());
  // As root the old rename replaced device nodes: use private ones (mknod) so /dev is never at risk.
  std::string null_dev = "/dev/null", full_dev = "/dev/full";
  if (::geteuid() == 0 && ::mknod((dir + "/null").c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0 &&
      ::mknod((dir + "/full").c_str(), S_IFCHR | 0666, makedev(1, 7)) == 0) {
    null_dev = dir + "/null";
    full_dev = dir + "/full";
  }
  Run r = run("validate --svg " + null_dev + " --markdown " + null_dev);
  CHECK(r.code == 0);
  struct stat st {};
  REQUIRE(::lstat(null_dev.c_str(), &st) == 0);
  CHECK(S_ISCHR(st.st_mode));
  r = run("validate --markdown " + full_dev);
  CHECK(r.code == 2);
  CHECK(r.err.find("--markdown") != std::string::npos);
  CHECK(r.err.find("No space left on device") != std::string::npos);
  REQUIRE(::lstat(full_dev.c_str(), &st) == 0);
  CHECK(S_ISCHR(st.st_mode));
  // a symlink stays a symlink; its target gets the report
  { std::ofstream(dir + "/target.md") << "old\n"; }
  REQUIRE(::symlink("target.md", (dir + "/link.md").c_str()) == 0);
  r = run("validate --markdown " + dir + "/link.md");
  CHECK(r.code == 0);
  REQUIRE(::lstat((dir + "/link.md").c_str(), &st) == 0);
  CHECK(S_ISLNK(st.st_mode));
  std::ifstream t(dir + "/target.md");
  std::stringstream text;
  text << t.rdbuf();
  CHECK(text.str().rfind("| group", 0) == 0);
}

TEST_CASE("issue #15: a write error on stdout is an error, not exit 0 with an empty file") {
  Run r = run("models --json >/dev/full");
  CHECK(r.code == 2);
  CHECK(r.err.find("cannot write to stdout: No space left on device") != std::string::npos);
  r = run("estimate --model mixtral-8x7b --gpu a40 --method qlora --json >&-");
  CHECK(r.code == 2);
  CHECK(r.err.find("cannot write to stdout") != std::string::npos);
}

TEST_CASE("issue #15: an explicit batch that does not fit prints no time or cost as a result") {
  Run r = run("estimate --model mixtral-8x7b --gpu a40 --method qlora --dataset math14k --batch 64");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("does not fit at batch 64") != std::string::npos);
  CHECK(r.out.find("cost: $") == std::string::npos);
  CHECK(r.out.find("throughput:") == std::string::npos);
}

TEST_CASE("plan: the JSON contract, the best plan reproduced by estimate, CSV and text") {
  const std::string job =
      "--model mixtral-8x7b --method qlora --dataset math14k --queries 15000 --epochs 10 --stack "
      "hf-transformers-2024";
  json j = run_json("plan " + job + " --json");
  for (const char* key : {"front", "best", "minimize", "considered", "pruned", "alternatives", "search_ms"}) {
    CAPTURE(key);
    CHECK(j.contains(key));
  }
  REQUIRE(j["front"].size() >= 1);
  REQUIRE(j["best"].get<int>() >= 0);
  for (const char* key : {"does_not_fit", "deadline", "budget"}) CHECK(j["pruned"].contains(key));
  double last_hours = 1e300, last_cost = -1;
  for (const auto& e : j["front"]) {
    for (const char* key : {"id",
                            "gpu",
                            "gpu_name",
                            "gpus_per_node",
                            "nodes",
                            "provider",
                            "instance_type",
                            "spot",
                            "usd_per_hour",
                            "method",
                            "stack",
                            "parallel",
                            "micro_batch",
                            "grad_accum",
                            "effective_batch",
                            "hours",
                            "cost_usd",
                            "peak_gib_per_gpu",
                            "memory_gib",
                            "bottleneck",
                            "why",
                            "request"}) {
      CAPTURE(key);
      CHECK(e.contains(key));
    }
    // a Pareto front: cost rises, time falls
    CHECK(e["cost_usd"].get<double>() >= last_cost);
    CHECK(e["hours"].get<double>() < last_hours);
    last_cost = e["cost_usd"].get<double>();
    last_hours = e["hours"].get<double>();
    CHECK(e["effective_batch"].get<long>() == e["micro_batch"].get<long>() * e["grad_accum"].get<long>() *
                                                  e["gpus_per_node"].get<long>() * e["nodes"].get<long>());
  }
  // The best plan's request, run through `ftcost estimate`, gives the same hours and cost.
  const json& best = j["front"][static_cast<std::size_t>(j["best"].get<int>())];
  std::string args = "estimate --json";
  for (auto it = best["request"].begin(); it != best["request"].end(); ++it)
    args += " --" + it.key() + " " + it.value().get<std::string>();
  Run e = run(args);
  REQUIRE(e.code == 0);
  json ej = json::parse(e.out);
  CHECK(ej["time_hours"].get<double>() == doctest::Approx(best["hours"].get<double>()).epsilon(1e-9));
  CHECK(ej["cost_usd"].get<double>() == doctest::Approx(best["cost_usd"].get<double>()).epsilon(1e-9));

  Run c = run("plan " + job + " --csv");
  REQUIRE(c.code == 0);
  CHECK(c.out.rfind("id,best,gpu,gpus_per_node,nodes,provider", 0) == 0);
  Run t = run("plan " + job);
  REQUIRE(t.code == 0);
  CHECK(t.out.find("best (minimize cost)") != std::string::npos);
  CHECK(t.out.find("reproduce: ftcost estimate") != std::string::npos);

  // constraints prune: a deadline below the fastest plan leaves nothing, and says so
  Run none = run("plan " + job + " --deadline 0.01 --json");
  REQUIRE(none.code == 0);
  json nj = json::parse(none.out);
  CHECK(nj["best"].get<int>() == -1);
  CHECK(nj["pruned"]["deadline"].get<long>() > 0);
  // minimize time picks the last (fastest) plan of the front
  Run fast = run("plan " + job + " --minimize time --json");
  REQUIRE(fast.code == 0);
  json fj = json::parse(fast.out);
  CHECK(fj["best"].get<int>() == static_cast<int>(fj["front"].size()) - 1);
}

TEST_CASE("plan: a plan with checkpointing off near the memory limit is warned about; its bottleneck share") {
  const std::string job = "plan --model llama-3.3-70b --method lora --seq 2048 --queries 50000 --deadline 24";
  Run t = run(job);
  REQUIRE(t.code == 0);
  CHECK(
      t.out.find(
          "\nwarning: plan 0: checkpointing off at 90% of the usable memory (161.1 of 179.1 GiB per GPU)") !=
      std::string::npos);
  CHECK(t.out.find("(0% of device time)") == std::string::npos);
  Run j = run(job + " --json");
  REQUIRE(j.code == 0);
  const json best = json::parse(j.out)["front"][0];
  REQUIRE(best["warnings"].is_array());
  REQUIRE(best["warnings"].size() == 1);
  CHECK(best["warnings"][0].get<std::string>().rfind("checkpointing off at 90%", 0) == 0);
  CHECK(best["bottleneck_share"].get<double>() > 0.05);
}

TEST_CASE("plan: an effective batch is kept, constraints restrict the shapes") {
  json j = run_json(
      "plan --model llama-3.1-8b --method lora --dataset math14k --queries 15000 --epochs 3 "
      "--effective-batch 32 "
      "--max-gpus 1 --providers lambda,runpod --gpus a100-sxm4-80gb,h100-sxm5-80gb,a10 --json");
  REQUIRE(j["front"].size() >= 1);
  for (const auto& e : j["front"]) {
    CHECK(e["effective_batch"].get<long>() == 32);
    CHECK(e["gpus_per_node"].get<int>() == 1);
    const std::string p =
        e["request"].contains("provider") ? e["request"]["provider"].get<std::string>() : "";
    CHECK((e["provider_id"] == "lambda" || e["provider_id"] == "runpod"));
    CHECK((e["gpu"] == "a100-sxm4-80gb" || e["gpu"] == "h100-sxm5-80gb" || e["gpu"] == "a10"));
  }
}

TEST_CASE("plan: bad constraints exit 2 naming the flag") {
  const std::string job = "plan --model llama-3.1-8b --method lora --dataset math14k";
  expect_bad(job + " --deadline -1", "--deadline");
  expect_bad(job + " --deadline abc", "--deadline");
  expect_bad(job + " --budget 0", "--budget");
  expect_bad(job + " --max-gpus 1.5", "--max-gpus");
  expect_bad(job + " --minimize speed", "--minimize");
  expect_bad(job + " --spot maybe", "--spot");
  expect_bad(job + " --gpus h100,nope", "--gpus");
  expect_bad(job + " --providers nowhere", "--providers");
  expect_bad(job + " --methods lora,dpo", "--methods");
  expect_bad(job + " --stacks nope", "--stacks");
  expect_bad(job + " --effective-batch 0", "--effective-batch");
  expect_bad(job + " --methods qlora", "--methods");  // excludes the job's own --method
  expect_bad("plan --model nope --method lora", "--model");
}

TEST_CASE(
    "plan --config: the config of a picked plan is written atomically; bad uses exit 2 naming the flag") {
  const std::string job =
      "plan --model llama-3.1-8b --method qlora --dataset math14k --queries 15000 --epochs 2";
  const std::string dir = std::string(FTCOST_TEST_TMP) + "/plan-config";
  mkdir(dir.c_str(), 0755);
  Run r = run(job + " --config trl --out " + dir + "/sft.yaml --pick 0");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("wrote " + dir + "/sft.yaml (trl)") != std::string::npos);
  CHECK(r.out.find("--config sft.yaml") != std::string::npos);  // the launch command names the file written
  std::ifstream f(dir + "/sft.yaml");
  std::stringstream text;
  text << f.rdbuf();
  CHECK(text.str().find("per_device_train_batch_size: ") != std::string::npos);
  CHECK(text.str().find("# expected: peak ") != std::string::npos);
  CHECK(text.str().find("# reproduce: ftcost estimate") != std::string::npos);
  std::ifstream acc(dir + "/accelerate.yaml");
  CHECK(acc.good());
  expect_bad(job + " --config nemo --out " + dir + "/x.yaml", "--config");
  expect_bad(job + " --config trl", "--out");
  expect_bad(job + " --config trl --out " + dir, "--out");
  expect_bad(job + " --config trl --out " + dir + "/y.yaml --pick 999", "--pick");
  expect_bad(job + " --pick 0", "--pick");
  expect_bad(job + " --out " + dir + "/z.yaml", "--out");
  expect_bad("plan --model mixtral-8x7b --method qlora --dataset math14k --config torchtune --out " + dir +
                 "/tt.yaml",
             "no model builder");
}

TEST_CASE("estimate --vs: two jobs side by side, the same numbers as two estimates") {
  const std::string job = "estimate --model mixtral-8x7b --gpu a40 --method qlora --dataset math14k";
  json j = run_json(job + " --vs gpu=h100-sxm5-80gb,lora-targets=w1,w2,w3,gate --json");
  Run a = run(job + " --json");
  Run b =
      run("estimate --model mixtral-8x7b --gpu h100-sxm5-80gb --method qlora --dataset math14k "
          "--lora-targets w1,w2,w3,gate --json");
  REQUIRE(a.code == 0);
  REQUIRE(b.code == 0);
  const json ja = json::parse(a.out), jb = json::parse(b.out);
  REQUIRE(j["rows"].is_array());
  int seen = 0;
  for (const auto& row : j["rows"]) {
    const std::string m = row["metric"].get<std::string>();
    CAPTURE(m);
    if (m == "peak_memory_gib") {
      CHECK(row["a"] == ja["memory_gib"]["total"]);
      CHECK(row["b"] == jb["memory_gib"]["total"]);
      ++seen;
    } else if (m == "time_hours" || m == "cost_usd" || m == "throughput_queries_per_s") {
      CHECK(row["a"] == ja[m]);
      CHECK(row["b"] == jb[m]);
      CHECK(row["difference"].get<double>() == doctest::Approx(jb[m].get<double>() - ja[m].get<double>()));
      ++seen;
    }
  }
  CHECK(seen == 4);
  // the options that differ, a list value kept whole
  REQUIRE(j["inputs"].size() == 2);
  CHECK(j["inputs"][0]["key"] == "gpu");
  CHECK(j["inputs"][1]["key"] == "lora-targets");
  CHECK(j["inputs"][1]["b"] == "w1,w2,w3,gate");
  Run text = run(job + " --vs method=lora");
  REQUIRE(text.code == 0);
  CHECK(text.out.find("method qlora -> lora") != std::string::npos);
  CHECK(text.out.find("peak memory") != std::string::npos);
  // bad --vs: exit 2 naming --vs
  Run bad = run(job + " --vs bogus=1");
  CHECK(bad.code == 2);
  CHECK(bad.err.find("--vs") != std::string::npos);
  Run bad2 = run(job + " --vs method");
  CHECK(bad2.code == 2);
  Run bad3 = run(job + " --vs batch=-4");
  CHECK(bad3.code == 2);
  CHECK(bad3.err.find("--batch") != std::string::npos);
}

TEST_CASE("estimate --calibration: the text names the calibration and flags a synthetic or partial one") {
  const std::string fixture = kData + "/calibration/h100-sxm-synthetic.json";
  Run r = run("estimate --model llama-3.1-8b --gpu h100-sxm5-80gb --method lora --seq 1024 --calibration " +
              fixture);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("calibration: " + fixture + " (NVIDIA H100 80GB HBM3 (synthetic fixture), fingerprint ") !=
        std::string::npos);
  CHECK(r.out.find("! calibration is synthetic (meta.notes says \"synthetic test fixture") !=
        std::string::npos);
  // a partial copy: the run was interrupted (meta.partial) and has no NF4 rows
  json doc = json::parse(std::ifstream(fixture));
  doc["meta"]["partial"] = true;
  doc["measurements"]["nf4_dequant"] = json::array();
  doc["derived"]["nf4_dequant_gbps"] = nullptr;
  const std::string partial = std::string(FTCOST_TEST_TMP) + "/partial-calibration.json";
  std::ofstream(partial) << doc.dump(2);
  Run p = run("estimate --model llama-3.1-8b --gpu h100-sxm5-80gb --method lora --seq 1024 --calibration " +
              partial);
  REQUIRE_MESSAGE(p.code == 0, p.err);
  CHECK(p.out.find(
            "partial (meta.partial: the run was interrupted; no fused NF4 dequantization rows (spec sheet "
            "used))") != std::string::npos);
  // without a calibration: no such lines
  Run s = run("estimate --model llama-3.1-8b --gpu h100-sxm5-80gb --method lora --seq 1024");
  REQUIRE(s.code == 0);
  CHECK(s.out.find("calibration: ") == std::string::npos);
}

TEST_CASE("fit-stack --write keeps the profile's key order and indent: a refit's diff shows only values") {
  const std::string dir = std::string(FTCOST_TEST_TMP) + "/fit-write-order";
  (void)std::system(("rm -rf " + dir + " && mkdir -p " + dir + "/rows").c_str());
  // torchtune-2024's own rows only (its fit frees one throughput parameter and one memory count: quick).
  (void)std::system(("cp " + kData + "/reference/stacks-torchtune.json " + dir + "/rows/").c_str());
  auto read_text = [](const std::string& path) {
    std::ifstream f(path);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
  };
  // The shipped profile with its top-level and memory keys in reverse order (an order no sorted writer
  // keeps).
  using ordered = nlohmann::ordered_json;
  const ordered shipped =
      ordered::parse(read_text(std::string(FTCOST_SOURCE_DIR) + "/gpu-db/stacks/torchtune-2024.json"));
  ordered reversed = ordered::object();
  std::vector<std::string> top;
  for (const auto& item : shipped.items()) top.insert(top.begin(), item.key());
  for (const auto& k : top) {
    if (k != "memory") {
      reversed[k] = shipped.at(k);
      continue;
    }
    std::vector<std::string> mk;
    for (const auto& item : shipped.at("memory").items()) mk.insert(mk.begin(), item.key());
    reversed["memory"] = ordered::object();
    for (const auto& m : mk) reversed["memory"][m] = shipped.at("memory").at(m);
  }
  const std::string before = reversed.dump(2) + "\n";
  const std::string out = dir + "/torchtune-2024.json";
  std::ofstream(out) << before;
  Run r = run("fit-stack --stack torchtune-2024 --dir " + dir + "/rows --write " + out);
  REQUIRE(r.code == 0);
  const std::string after = read_text(out);
  // The keys of the file appear in the same order as before (the refitted values may differ).
  auto keys = [](const std::string& text) {
    std::vector<std::string> k;
    const auto doc = nlohmann::ordered_json::parse(text);  // a named object: items() refers to it
    for (const auto& item : doc.items()) k.push_back(item.key());
    return k;
  };
  CHECK(keys(after) == keys(before));
  const auto mem = [](const std::string& text) {
    std::vector<std::string> k;
    const auto doc = nlohmann::ordered_json::parse(text);
    for (const auto& item : doc.at("memory").items()) k.push_back(item.key());
    return k;
  };
  CHECK(mem(after) == mem(before));
  CHECK(after.rfind("{\n  \"", 0) == 0);                                      // the file's 2-space indent
  CHECK(after.find("\"mlp_saved_intermediates\": 4,") != std::string::npos);  // a count stays whole
}

TEST_CASE("issue 36: --json errors are the API's error object on stdout, exit 2; one epoch is singular") {
  Run r = run("estimate --model qwen3-8b --gpu 4090 --method lora --json");
  CHECK(r.code == 2);
  CHECK(r.err.empty());
  const json j = json::parse(r.out);
  CHECK(j.at("error").at("code") == "unknown_id");
  CHECK(j.at("error").at("field") == "--gpu");
  CHECK(j.at("error").at("message").get<std::string>().find("did you mean \"rtx-4090\"") !=
        std::string::npos);
  expect_bad("estimate --model qwen3-8b --gpu 4090 --method lora", "did you mean \"rtx-4090\"");
  Run one = run("estimate --model qwen2.5-7b --gpu h100-sxm5-80gb --method lora --dataset math14k");
  CHECK(one.code == 0);
  CHECK(one.out.find("samples × 1 epoch\n") != std::string::npos);
}

TEST_CASE("issue 36: a preset's Hugging Face id names the preset; an unknown Hub id gets a did-you-mean") {
  for (const char* id : {"Qwen/Qwen2.5-7B", "qwen/qwen2.5-7b", "Qwen2.5-7B"}) {
    CAPTURE(id);
    Run r = run(std::string("estimate --model ") + id + " --gpu h100-sxm5-80gb --method lora --json");
    REQUIRE(r.code == 0);
    CHECK(json::parse(r.out).at("model").at("id") == "qwen2.5-7b");
  }
  for (const char* id : {"meta-llama/Llama-3.1-8B", "meta-llama/Meta-Llama-3.1-8B", "Meta-Llama-3.1-8B"}) {
    CAPTURE(id);
    Run r = run(std::string("estimate --model ") + id + " --gpu h100-sxm5-80gb --method lora --json");
    REQUIRE(r.code == 0);
    CHECK(json::parse(r.out).at("model").at("id") == "llama-3.1-8b");
  }
  expect_bad("estimate --model Qwen/Qwen2.5-8B --gpu h100-sxm5-80gb --method lora",
             "\"Qwen/Qwen2.5-8B\" is no preset's Hugging Face id (did you mean \"qwen2.5-7b\"?)");
}

TEST_CASE(
    "issue 36: one meaning per flag, --effective-batch, and one answer across estimate, compare, plan") {
  // plan: --gpu-types is the list of GPU types; --gpus as a count is refused, naming --max-gpus
  const std::string job = " --model llama-3.1-8b --method lora --dataset math14k";
  const Run p = run("plan" + job + " --gpu-types rtx-4090 --max-gpus 1 --json");
  REQUIRE(p.code == 0);
  const json pj = json::parse(p.out);
  CHECK(pj["constraints"]["gpu_types"] == json::array({"rtx-4090"}));
  for (const auto& e : pj["front"]) CHECK(e["gpu"] == "rtx-4090");
  expect_bad("plan" + job + " --gpus 8", "--max-gpus 8");
  // compare --gpu-types keeps those GPUs; an unknown one is an error naming the flag
  const Run c = run("compare" + job + " --gpu-types rtx-4090,l40s --json");
  REQUIRE(c.code == 0);
  const json cj = json::parse(c.out);
  REQUIRE(cj["rows"].size() == 2);
  for (const auto& r : cj["rows"]) CHECK((r["gpu"] == "rtx-4090" || r["gpu"] == "l40s"));
  expect_bad("compare" + job + " --gpu-types a100", "--gpu-types");
  // --effective-batch: the grad-accum follows from the micro-batch chosen; with --grad-accum it is refused
  const Run e = run("estimate" + job + " --gpu rtx-4090 --effective-batch 16 --json");
  REQUIRE(e.code == 0);
  const json ej = json::parse(e.out);
  CHECK(ej["batch_size"].get<long>() * ej["inputs"]["grad_accum"].get<long>() == 16);
  CHECK(ej["answer"]["global_batch"] == 16);
  expect_bad("estimate" + job + " --gpu rtx-4090 --effective-batch 16 --grad-accum 2", "--effective-batch");
  expect_bad("estimate" + job + " --gpu rtx-4090 --effective-batch 10 --batch 4", "--effective-batch");
  const Run m =
      run("estimate" + job + " --gpu h100-sxm5-80gb --gpus 4 --parallel ddp --effective-batch 64 --json");
  REQUIRE(m.code == 0);
  CHECK(json::parse(m.out)["answer"]["global_batch"] == 64);
  // the same 8-GPU job: estimate's cost is compare's row (same GPU and shape) and scale's point
  const std::string big = " --model llama-3.1-8b --method full --dataset math14k --parallel zero3";
  const json est = json::parse(run("estimate" + big + " --gpu h100-sxm5-80gb --gpus 8 --json").out);
  const json cmp = json::parse(run("compare" + big + " --gpus 8 --gpu-types h100-sxm5-80gb --json").out);
  const json scl = json::parse(run("scale" + big + " --gpu h100-sxm5-80gb --counts 8 --json").out);
  REQUIRE(cmp["rows"].size() == 1);
  const double cost = est["answer"]["cost_usd"].get<double>();
  CHECK(cmp["rows"][0]["price"]["cost_usd"].get<double>() == doctest::Approx(cost).epsilon(1e-12));
  CHECK(scl["points"][0]["cost_usd"].get<double>() == doctest::Approx(cost).epsilon(1e-12));
  CHECK(cmp["rows"][0]["batch_size"] == est["answer"]["batch"]);
}

TEST_CASE("issue 36: the memory table labels a peak that is not the sum of its rows") {
  // Qwen3-30B-A3B on unsloth-2024q4: the optimizer step's temporaries come after activations are freed, so
  // the rows sum to more than the peak; the table must not call the peak a "total".
  const Run r =
      run("estimate --model qwen3-30b-a3b --gpu h100-sxm5-80gb --method lora --stack unsloth-2024q4 "
          "--dataset math14k");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("peak (not the sum: see below)") != std::string::npos);
  CHECK(r.out.find("\ntotal ") == std::string::npos);
}

TEST_CASE("FTCOST_TODAY fixes the day price ages count from; a bad date is an error naming it") {
  const std::string job =
      "estimate --model llama-3.1-8b --gpu a100-sxm4-80gb --method lora --seq 1024 --json";
  const Run later = run(job, "FTCOST_TODAY=2030-01-01 ");
  const Run earlier = run(job, "FTCOST_TODAY=2025-03-01 ");
  REQUIRE(later.code == 0);
  REQUIRE(earlier.code == 0);
  CHECK(later.out != earlier.out);  // the same offer is older on the later day
  const Run bad = run("models", "FTCOST_TODAY=2026-13-01 ");
  CHECK(bad.code == 2);
  CHECK(bad.err.find("FTCOST_TODAY") != std::string::npos);
}
