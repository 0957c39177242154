// NCCL's algorithm choice (core/app/src/parallel_nccl.cpp) against times counted by hand from NVIDIA/nccl
// src/graph/tuning.cc @ 5067397c (docs/sources/parallel.md "NCCL's algorithm choice").
#include "ftcost/node.hpp"
#include "ftcost/parallel.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace ftcost;

namespace {

// An A100 node: NVSwitch at 240 GB/s bus bandwidth, InfiniBand at 21.25 GB/s per GPU (200 Gbit/s x 0.85).
ParallelPlan a100_plan() {
  ParallelPlan p;
  p.intra.kind = LinkKind::nvswitch;
  p.intra.busbw_gbps = 240;
  p.inter.kind = LinkKind::infiniband;
  p.inter.busbw_gbps = 21.25;
  p.nccl_arch = 1;  // Ampere
  return p;
}

}  // namespace

TEST_CASE("NCCL's choice: 1 GiB all-gather on 8 A100s is ring/Simple, time counted from tuning.cc") {
  // ring Simple: latency 8.4 + 7 x 3.4 = 32.2 us; algorithm bandwidth 240 x 8/7 GB/s;
  // 2^30 / (1000 x 274.2857) = 3914.67 us; LL (87.7 x 8/7) and LL128 (min(220.8, 6 x 20) x 8/7) are slower.
  const NcclTime t = nccl_time(CollOp::all_gather, 1073741824.0, 8, 1, a100_plan());
  CHECK(std::string(t.algorithm) == "ring");
  CHECK(std::string(t.protocol) == "Simple");
  CHECK(t.time_s * 1e6 == doctest::Approx(32.2 + 1073741824.0 / (1000.0 * 240.0 * 8.0 / 7.0)).epsilon(1e-9));
  CHECK_FALSE(t.network_bound);
}

TEST_CASE("NCCL's choice: a 64 KiB all-reduce on 8 A100s is ring/LL (latency-bound)") {
  // ring LL: latency 6.6 + 14 x 0.6 = 15.0 us, bandwidth min(87.7, 240 x 0.5) x 8/14 = 50.114 GB/s:
  // 15.0 + 65536 / 50114.3 = 16.308 us. Tree LL: 6.8 + 2 x 7 x 0.6 = 15.2 us, bandwidth min(min(220.8, 6 x
  // 24) / 3.8, 87.7) x 0.5 x 0.6 (treeCorrectionFactor[LL][10]) = 11.37 GB/s: 20.96 us. Ring Simple: 56 us of
  // latency.
  const NcclTime t = nccl_time(CollOp::all_reduce, 65536.0, 8, 1, a100_plan());
  CHECK(std::string(t.algorithm) == "ring");
  CHECK(std::string(t.protocol) == "LL");
  CHECK(t.time_s * 1e6 == doctest::Approx(15.0 + 65536.0 / (1000.0 * 87.7 * 8.0 / 14.0)).epsilon(1e-9));
}

TEST_CASE("NCCL's choice: a flat all-gather over 4 nodes x 8 A100s is bound by the node's NICs") {
  // bus bandwidth min(240, 8 x 21.25 = 170) = 170 GB/s; ring over 32 ranks: latency 8.4 + 28 x max(3.4, 3
  // x 1.0)
  // + 3 x 14 = 145.6 us; (N-1)/N of the data through the NICs: 2^30 / (1000 x 170 x 32/31) us.
  ParallelPlan p = a100_plan();
  const NcclTime t = nccl_time(CollOp::all_gather, 1073741824.0, 8, 4, p);
  CHECK(std::string(t.algorithm) == "ring");
  CHECK(std::string(t.protocol) == "Simple");
  CHECK(t.network_bound);
  CHECK(t.busbw_gbps == doctest::Approx(170.0));
  CHECK(t.time_s * 1e6 ==
        doctest::Approx(145.6 + 1073741824.0 / (1000.0 * 170.0 * 32.0 / 31.0)).epsilon(1e-9));
  CHECK(nccl_label(t) == "ring/Simple, network-bound");
  // group_collective_time_s is NCCL's choice for the data-parallel collectives
  CHECK(group_collective_time_s(CollOp::all_gather, 1073741824.0, 8, 4, p) == doctest::Approx(t.time_s));
}

TEST_CASE("NCCL's choice: NVLS serves small all-reduces on an H100 NVSwitch node, not on A100") {
  ParallelPlan p = a100_plan();
  p.intra.busbw_gbps = 360;
  p.nccl_arch = 2;  // Hopper: nvlsEfficiency 0.85
  // NVLS latency 25 us (hwLatencies NVLINK NVLS Simple); algorithm bandwidth 360 x 0.85 x 5/6 x 2 x 8/14
  // GB/s.
  const double bytes = 256.0 * 1048576.0;
  const NcclTime h = nccl_time(CollOp::all_reduce, bytes, 8, 1, p);
  CHECK(std::string(h.algorithm) == "nvls");
  CHECK(h.time_s * 1e6 ==
        doctest::Approx(25.0 + bytes / (1000.0 * 360.0 * 0.85 * 5.0 / 6.0 * 2.0 * 8.0 / 14.0)).epsilon(1e-9));
  p.nccl_arch = 1;
  CHECK(std::string(nccl_time(CollOp::all_reduce, bytes, 8, 1, p).algorithm) != "nvls");
}

TEST_CASE("a node's NICs: nics x nic_gbit / gpus must be gbit_per_gpu, the two go together") {
  json doc = {{"schema", "ftcost.node/1"},
              {"id", "x"},
              {"name", "x"},
              {"gpu", "a100-sxm4-80gb"},
              {"gpus", 8},
              {"intra_node", "nvswitch"},
              {"network", {{"kind", "infiniband"}, {"gbit_per_gpu", 100}, {"nics", 4}, {"nic_gbit", 200}}},
              {"sources", {"test"}}};
  auto ok = parse_node(doc, "x.json");
  REQUIRE(ok.ok());
  CHECK(ok->nics == 4);
  CHECK(ok->nic_gbit == 200);
  doc["network"]["gbit_per_gpu"] = 200;
  auto bad = parse_node(doc, "x.json");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().field == "network.gbit_per_gpu");
  doc["network"]["gbit_per_gpu"] = 100;
  doc["network"].erase("nic_gbit");
  auto half = parse_node(doc, "x.json");
  REQUIRE_FALSE(half.ok());
  CHECK(half.error().field == "network.nic_gbit");
}
