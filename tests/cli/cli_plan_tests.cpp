// Golden tests of the `ftcost` command line (cli_tests.cpp says which file has what): more than one GPU
// (estimate, compare's instance shapes, scale), plan (its JSON, CSV and text, constraints, --config) and
// one answer across estimate, compare and plan.
#include "cli_run.hpp"

#include <doctest/doctest.h>

#include <cstddef>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/stat.h>

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
