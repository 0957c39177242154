// Instance shapes: every offer is a whole instance, multi-node only where the offer names a network,
// the shape's price is the whole instance x nodes, and the filters of `ftcost compare`.
#include "ftcost/database.hpp"
#include "ftcost/parallel.hpp"
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
