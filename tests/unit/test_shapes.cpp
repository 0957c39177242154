// Instance shapes: every offer is a whole instance, multi-node only where the offer names a network,
// the shape's price is the whole instance x nodes, and the filters of `ftcost compare`.
#include "ftcost/api.hpp"
#include "ftcost/database.hpp"
#include "ftcost/parallel.hpp"
#include "ftcost/scaling.hpp"
#include "ftcost/shapes.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace ftcost;

namespace {

PriceOffer offer(const std::string& gpu, int count, double od, double spot = 0) {
  PriceOffer o;
  o.provider_id = "test";
  o.provider = "Test";
  o.gpu_id = gpu;
  o.gpu_count = count;
  o.on_demand_usd_per_gpu_hour = od;
  o.spot_usd_per_gpu_hour = spot;
  o.source = "test";
  return o;
}

}  // namespace

TEST_CASE("a single-GPU offer is one 1-GPU shape: no invented 2/4/8-GPU sizes, no nodes without a network") {
  const Database& db = Database::embedded();
  auto s = offer_shapes(offer("rtx-4090", 1, 0.4), db);
  REQUIRE(s.size() == 1);
  CHECK(s[0].gpus() == 1);
  CHECK(s[0].nodes == 1);
  CHECK(s[0].intra == "none");
  CHECK(s[0].usd_per_hour(false) == doctest::Approx(0.4));
  CHECK(s[0].usd_per_hour(true) == 0);
  CHECK(s[0].request_keys().empty());
}

TEST_CASE("an 8-GPU instance is rented whole: 8 GPUs at 8x the per-GPU price, joined as the GPU file says") {
  const Database& db = Database::embedded();
  auto s = offer_shapes(offer("h100-sxm5-80gb", 8, 3.99), db);
  REQUIRE(s.size() == 1);  // no network: one node only
  CHECK(s[0].gpus() == 8);
  CHECK(s[0].usd_per_hour(false) == doctest::Approx(8 * 3.99));
  CHECK(s[0].intra == "nvswitch");
  CHECK(s[0].request_keys() == json{{"gpus", 8}, {"nodes", 1}});
  // PCIe cards: the link from the GPU's PCIe fields
  auto l = offer_shapes(offer("l40s", 8, 1.0), db);
  REQUIRE(l.size() == 1);
  CHECK(l[0].intra.rfind("pcie", 0) == 0);
}

TEST_CASE("an offer with a network gives 1, 2, 4... nodes up to the GPU cap, each priced whole") {
  const Database& db = Database::embedded();
  PriceOffer o = offer("a100-sxm4-80gb", 8, 4.1, 1.64);
  o.network = "ethernet";
  o.network_gbit_per_gpu = 50;
  auto s = offer_shapes(o, db);
  REQUIRE(s.size() == 4);  // 8, 16, 32, 64 GPUs under the default cap of 64
  CHECK(s[1].nodes == 2);
  CHECK(s[1].gpus() == 16);
  CHECK(s[1].usd_per_hour(false) == doctest::Approx(16 * 4.1));
  CHECK(s[1].usd_per_hour(true) == doctest::Approx(16 * 1.64));
  CHECK(s[1].request_keys() ==
        json{{"gpus", 8}, {"nodes", 2}, {"network", "ethernet"}, {"network-gbit-per-gpu", 50.0}});
  ShapeFilter f;
  f.max_gpus = 16;
  CHECK(offer_shapes(o, db, f).size() == 2);
  f.nodes = 2;
  REQUIRE(offer_shapes(o, db, f).size() == 1);
  CHECK(offer_shapes(o, db, f)[0].gpus() == 16);
  ShapeFilter g;
  g.gpus_per_node = 4;
  CHECK(offer_shapes(o, db, g).empty());
}

TEST_CASE("the database's shapes: the shipped offer with a documented network (AWS p4d) spans nodes") {
  const Database& db = Database::embedded();
  auto all = instance_shapes(db);
  std::size_t offers = 0;
  for (const auto& p : db.providers()) offers += p.offers.size();
  CHECK(all.size() >= offers);  // every offer has its whole-instance shape
  bool p4d_two_nodes = false;
  for (const auto& s : all) {
    CHECK(s.gpus_per_node == s.offer.gpu_count);
    if (s.nodes > 1) {
      CHECK(s.offer.network != "none");
      p4d_two_nodes = p4d_two_nodes || (s.offer.instance_type == "p4d.24xlarge" && s.nodes == 2);
    }
  }
  CHECK(p4d_two_nodes);
  for (const auto& s : instance_shapes(db, "rtx-4090")) CHECK(s.gpus() == 1);
  json j = shape_to_json(instance_shapes(db, "a100-sxm4-80gb", ShapeFilter{8, 2, 0}).at(0));
  CHECK(j["gpus"] == 16);
  CHECK(j["network"]["kind"] == "ethernet");
  CHECK(j["usd_per_hour"]["on_demand"].get<double>() == doctest::Approx(16 * 4.1));
}

// ---- scaling series (scaling.hpp)

TEST_CASE("scaling series: 1 GPU is the single-GPU estimate, counts above a node need a network") {
  const Database& db = Database::embedded();
  Request job{{"model", "llama-3.1-8b"}, {"gpu", "h100-sxm5-80gb"}, {"method", "full"}, {"seq", "2048"}};
  auto s = scaling_series(job, db, nullptr, 20790);
  REQUIRE(s.ok());
  REQUIRE(s->points.size() == 4);  // 1, 2, 4, 8: no network, one node of 8 (assumed)
  CHECK(s->node_gpus == 8);
  auto in = resolve_request(job, db, nullptr, 20790);
  REQUIRE(in.ok());
  auto e = estimate(in.value(), db);
  REQUIRE(e.ok());
  const ScalingPoint& one = s->points[0];
  CHECK(one.strategy == "single");
  CHECK(one.qps == e->throughput_qps);  // identical, not approximately
  CHECK(one.hours == e->time_hours);
  CHECK(one.cost_usd == e->chosen.cost_usd);
  CHECK(s->base_gpus == 1);
  CHECK(one.efficiency == 1.0);
  for (std::size_t i = 1; i < s->points.size(); ++i) {
    const ScalingPoint& p = s->points[i];
    CAPTURE(p.gpus);
    REQUIRE(p.error.empty());
    CHECK(p.fits);
    CHECK(p.strategy != "single");
    CHECK(p.speedup == doctest::Approx(one.hours / p.hours));  // of the job's time (issue 39 W3)
    CHECK(p.efficiency == doctest::Approx(p.speedup / p.gpus));
    // cost = GPUs x the point's price per GPU-hour (the price rule for its shape) x hours
    CHECK(p.usd_per_gpu_hour > 0);
    CHECK(p.cost_usd == doctest::Approx(p.gpus * p.usd_per_gpu_hour * p.hours));
  }
  // with a node preset: its size and network; 16 = 2 nodes
  Request dgx = job;
  dgx["node"] = "dgx-h100";
  auto d = scaling_series(dgx, db, nullptr, 20790, {1, 8, 16});
  REQUIRE(d.ok());
  CHECK(d->network == "infiniband");
  REQUIRE(d->points.size() == 3);
  CHECK(d->points[2].nodes == 2);
  CHECK(d->points[2].gpus_per_node == 8);
  CHECK(d->points[2].fits);
  // no network: 16 GPUs are refused by name; a count that is not whole nodes too
  auto bad = scaling_series(job, db, nullptr, 20790, {1, 16});
  REQUIRE(!bad.ok());
  CHECK(bad.error().field == "--counts");
  auto odd = scaling_series(dgx, db, nullptr, 20790, {12});
  REQUIRE(!odd.ok());
  CHECK(odd.error().field == "--counts");
  CHECK(!parse_counts("1,2,x").ok());
  CHECK(!parse_counts("4,2").ok());
  CHECK(!parse_counts("0").ok());
  CHECK(parse_counts("1,2,4,8,16").value() == std::vector<int>{1, 2, 4, 8, 16});
}

TEST_CASE("scaling series: a job that does not fit on one GPU has its base at the first count that fits") {
  const Database& db = Database::embedded();
  Request job{{"model", "llama-3.1-70b"}, {"gpu", "a100-sxm4-80gb"}, {"method", "lora"}, {"seq", "1024"}};
  auto s = scaling_series(job, db, nullptr, 20790, {1, 2, 4, 8});
  REQUIRE(s.ok());
  CHECK(!s->points[0].fits);
  REQUIRE(s->base_gpus > 1);
  for (const auto& p : s->points)
    if (p.gpus == s->base_gpus) CHECK(p.efficiency == 1.0);
  // a strategy that cannot run on a count is that point's error
  job["parallel"] = "tp:4";
  auto t = scaling_series(job, db, nullptr, 20790, {2, 4});
  REQUIRE(t.ok());
  CHECK(t->points[0].error.find("--parallel") != std::string::npos);
  CHECK(t->points[1].error.empty());
}

TEST_CASE("scaling_json: what window.ftcost.scaling returns; counts as text or array; errors name the key") {
  json j = json::parse(api::scaling_json(
      R"({"model": "llama-3.1-8b", "gpu": "h100-sxm5-80gb", "method": "lora", "counts": [1, 2, 4]})", 20790));
  REQUIRE(j.contains("points"));
  CHECK(j["points"].size() == 3);
  CHECK(j["points"][2]["gpus"] == 4);
  CHECK(j["points"][0]["scaling_efficiency"] == 1.0);
  json t = json::parse(api::scaling_json(
      R"({"model": "llama-3.1-8b", "gpu": "h100-sxm5-80gb", "method": "lora", "counts": "1,2"})"));
  CHECK(t["points"].size() == 2);
  json bad =
      json::parse(api::scaling_json(R"({"model": "llama-3.1-8b", "method": "lora", "counts": [3, 1]})"));
  CHECK(bad["error"]["field"] == "--counts");
  json nogpu = json::parse(api::scaling_json(R"({"model": "llama-3.1-8b", "method": "lora"})"));
  CHECK(nogpu["error"]["field"] == "--gpu");
}

TEST_CASE("ZeRO-3 fetches per sub-module above DeepSpeed's persistence threshold: counted from the config") {
  const Database& db = Database::embedded();
  // Qwen1.5-MoE-A2.7B: 24 x (q, k, v, o + 60 experts x 3 + 3 shared-expert linears + the 2048x60 router) +
  // embedding + lm_head; the H->1 shared-expert gate and the norms stay resident (<= 1e5 elements).
  const ModelSpec* moe = db.model("qwen1.5-moe-a2.7b");
  REQUIRE(moe != nullptr);
  CHECK(zero3_fetch_module_count(*moe) == 24 * (4 + 180 + 3 + 1) + 2);
  // Qwen2.5-14B: 48 x 7 linears + embedding + lm_head
  const ModelSpec* dense = db.model("qwen2.5-14b");
  REQUIRE(dense != nullptr);
  CHECK(zero3_fetch_module_count(*dense) == 48 * 7 + 2);
  for (const auto& f : zero3_fetch_modules(*moe)) CHECK(f.elems > kZero3PersistenceThreshold);
}
