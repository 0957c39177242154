// Golden tests of the `ftcost` command line: JSON shape, exit codes and messages for bad input.
//   cli_tests.cpp        the one-GPU commands (estimate, paper, fit, models, gpus, bench, sweep, compare),
//                        the option table, prices and memory states
//   cli_plan_tests.cpp   more than one GPU, scale, plan
//   cli_files_tests.cpp  files read and written, write errors, --json errors, Hugging Face ids
//   cli_run.hpp          the harness (run, run_json, expect_bad)
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include "cli_run.hpp"
#include "ftcost/api.hpp"
#include "ftcost/options.hpp"
#include "option_samples.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <string>

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
