// Issue 14, calibrator part, CPU side: nccl-tests' element counts and bus-bandwidth arithmetic, the
// calibration rows of the `collectives` and `p2p` sections (schema 2), and how an mpirun rank finds its GPU.
// Expected values are nccl-tests' own formulas (src/*.cu *GetCollByteCount / *GetBw, HEAD a0b82b2; copied in
// docs/sources/nccl-tests-bandwidth.md), computed by hand here.
#include "ftcost/calibrate/collectives.hpp"
#include "ftcost/calibrate/output.hpp"
#include "ftcost/calibration.hpp"
#include "synthetic.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <map>

using namespace ftcost::calib;
using nlohmann::json;

TEST_CASE("bus-bandwidth factors are nccl-tests'") {
  using ftcost::collective_bus_factor;
  CHECK(*collective_bus_factor("all_reduce", 8) == doctest::Approx(2.0 * 7 / 8));  // 1.75
  CHECK(*collective_bus_factor("all_reduce", 2) == doctest::Approx(1.0));
  CHECK(*collective_bus_factor("all_gather", 8) == doctest::Approx(7.0 / 8));
  CHECK(*collective_bus_factor("reduce_scatter", 4) == doctest::Approx(3.0 / 4));
  CHECK(*collective_bus_factor("all_to_all", 16) == doctest::Approx(15.0 / 16));
  CHECK(*collective_bus_factor("send_recv", 8) == doctest::Approx(1.0));
  CHECK_FALSE(collective_bus_factor("broadcast", 8).has_value());
  CHECK_FALSE(collective_bus_factor("all_reduce", 0).has_value());
}

TEST_CASE("element counts and the reported size follow nccl-tests' GetCollByteCount") {
  // 1 GiB of floats over 8 ranks
  const std::uint64_t S = 1ull << 30;
  auto ar = *collective_counts("all_reduce", S, 8, 4);
  CHECK(ar.param_count == S / 4);
  CHECK(ar.bytes == S);
  auto ag = *collective_counts("all_gather", S, 8, 4);
  CHECK(ag.send_count == S / 4 / 8);
  CHECK(ag.recv_count == S / 4);
  CHECK(ag.bytes == S);  // the gathered buffer
  auto rs = *collective_counts("reduce_scatter", S, 8, 4);
  CHECK(rs.send_count == S / 4);
  CHECK(rs.recv_count == S / 4 / 8);
  CHECK(rs.bytes == S);  // the send buffer
  auto a2a = *collective_counts("all_to_all", S, 8, 4);
  CHECK(a2a.param_count == S / 4 / 8);
  CHECK(a2a.bytes == S);
  auto sr = *collective_counts("send_recv", S, 8, 4);
  CHECK(sr.bytes == S);
  // sizes that do not divide: per-rank chunks are whole 16-byte units (count/nranks & ~(16/eltSize-1))
  auto odd = *collective_counts("all_gather", 1000, 3, 4);  // count 250, /3 = 83, & ~3 = 80
  CHECK(odd.param_count == 80);
  CHECK(odd.bytes == 80 * 3 * 4);
  // too small to give every rank a 16-byte chunk: nothing to measure
  CHECK_FALSE(collective_counts("all_gather", 8, 8, 4).has_value());
  CHECK(collective_counts("all_reduce", 8, 8, 4)->bytes == 8);
  CHECK_FALSE(collective_counts("gather", 1024, 8, 4).has_value());
}

TEST_CASE("a row: algbw = size / time, busbw = algbw x factor; the loader checks both") {
  // 8 GPUs, 1 GiB all-reduce in 5 ms: algbw 214.7 GB/s, busbw 375.8 GB/s (nccl-tests would print the same)
  ftcost::CollectiveRow r = collective_row("all_reduce", 8, 1ull << 30, 5e-3);
  CHECK(r.time_us == doctest::Approx(5000));
  CHECK(r.algbw_gbps == doctest::Approx(1073741824.0 / 5e-3 / 1e9));
  CHECK(r.busbw_gbps == doctest::Approx(r.algbw_gbps * 1.75));

  ftcost::Calibration c = ftcost::test::synthetic_calibration();
  for (const auto& op : collective_ops())
    c.measurements.collectives.push_back(collective_row(op, 8, 1ull << 24, 1e-4));
  ftcost::P2pRow p;
  p.src = 0;
  p.dst = 1;
  p.peer_access = true;
  p.bytes = 256ull << 20;
  p.time_us = 700;
  p.gbps = static_cast<double>(p.bytes) / 700 / 1e3;
  c.measurements.p2p.push_back(p);
  c.derived = ftcost::derive_calibration(c.measurements);
  const std::string text = ftcost::to_json_text(c);
  auto back = ftcost::parse_calibration(text, "v2.json");
  REQUIRE_MESSAGE(back.ok(), (back.ok() ? "" : back.error().to_string()));
  REQUIRE(back.value().measurements.collectives.size() == 5);
  CHECK(back.value().measurements.collectives[0].busbw_gbps ==
        doctest::Approx(c.measurements.collectives[0].busbw_gbps));
  CHECK(back.value().measurements.p2p.size() == 1);
  CHECK(back.value().meta.schema == "ftcost.calibration/3");
  const std::string table = summary_table(c);
  CHECK(table.find("all_reduce x8 (16 MiB)") != std::string::npos);
  CHECK(table.find("busbw") != std::string::npos);
  CHECK(table.find("GPU-to-GPU copies (1 pairs)") != std::string::npos);
  // exactly the six fields the multi-GPU model consumes
  json j = json::parse(text);
  const json& row = j["measurements"]["collectives"][0];
  CHECK(row.size() == 6);
  for (const char* k : {"op", "ranks", "bytes", "time_us", "algbw_gbps", "busbw_gbps"})
    CHECK(row.contains(k));

  SUBCASE("busbw with the wrong factor is rejected") {
    j["measurements"]["collectives"][0]["busbw_gbps"] =
        row["algbw_gbps"].get<double>();  // factor 1, not 1.75
    auto e = ftcost::parse_calibration(j, "x");
    REQUIRE_FALSE(e.ok());
    CHECK(e.error().field == "measurements.collectives[0].busbw_gbps");
  }
  SUBCASE("algbw not size / time is rejected") {
    j["measurements"]["collectives"][1]["algbw_gbps"] = 1.0;
    auto e = ftcost::parse_calibration(j, "x");
    REQUIRE_FALSE(e.ok());
    CHECK(e.error().field == "measurements.collectives[1].algbw_gbps");
  }
  SUBCASE("an unknown op and a one-rank row are rejected") {
    j["measurements"]["collectives"][2]["op"] = "broadcast";
    CHECK(ftcost::parse_calibration(j, "x").error().field == "measurements.collectives[2].op");
    json k = json::parse(text);
    k["measurements"]["collectives"][2]["ranks"] = 1;
    CHECK(ftcost::parse_calibration(k, "x").error().field == "measurements.collectives[2].ranks");
  }
  SUBCASE("p2p src == dst is rejected") {
    j["measurements"]["p2p"][0]["dst"] = 0;
    CHECK(ftcost::parse_calibration(j, "x").error().field == "measurements.p2p[0].dst");
  }
}

TEST_CASE("message sizes: bytes to gigabytes, capped by memory") {
  CHECK(collective_sizes(8, 128, 2) == std::vector<std::uint64_t>{8, 16, 32, 64, 128});
  CHECK(collective_sizes(8, 100, 4) == std::vector<std::uint64_t>{8, 32, 100});
  CollectivePlan q = make_collective_plan(Mode::quick, 80ull << 30);
  CHECK(q.sizes.front() == 8);
  CHECK(q.sizes.back() == (1ull << 30));
  CHECK(q.ops.size() == 5);
  CollectivePlan f = make_collective_plan(Mode::full, 80ull << 30);
  CHECK(f.sizes.back() == (4ull << 30));
  CHECK(f.sizes.size() > q.sizes.size());
  // a 16 GiB card with 1 GiB to spare: send + receive of the largest size fit
  CollectivePlan small = make_collective_plan(Mode::quick, 1ull << 30);
  CHECK(2 * small.sizes.back() <= (1ull << 30));
  CHECK(make_collective_plan(Mode::smoke, 80ull << 30).sizes.back() == (1ull << 20));
}

TEST_CASE("mpirun rank handling") {
  std::map<std::string, std::string> env;
  auto get = [&](const char* n) -> const char* {
    auto it = env.find(n);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  SUBCASE("alone") {
    auto l = detect_launch(get);
    REQUIRE(l.ok());
    CHECK_FALSE(l.value().under_mpi());
    CHECK(l.value().world_size == 1);
  }
  SUBCASE("Open MPI, 2 nodes x 8 GPUs, rank 11") {
    env = {{"OMPI_COMM_WORLD_SIZE", "16"},
           {"OMPI_COMM_WORLD_RANK", "11"},
           {"OMPI_COMM_WORLD_LOCAL_RANK", "3"},
           {"OMPI_COMM_WORLD_LOCAL_SIZE", "8"}};
    auto l = detect_launch(get);
    REQUIRE(l.ok());
    CHECK(l.value().launcher == "openmpi");
    CHECK(l.value().world_size == 16);
    CHECK(l.value().rank == 11);
    CHECK(device_for_rank(l.value(), 8).value() == 3);
    auto too_many = device_for_rank(l.value(), 4);  // 8 ranks on a node with 4 GPUs
    REQUIRE_FALSE(too_many.ok());
    CHECK(too_many.error().message.find("one rank per GPU") != std::string::npos);
  }
  SUBCASE("MPICH/Hydra and Slurm") {
    env = {{"PMI_SIZE", "4"}, {"PMI_RANK", "2"}, {"MPI_LOCALRANKID", "0"}, {"MPI_LOCALNRANKS", "1"}};
    CHECK(detect_launch(get).value().launcher == "mpich/hydra");
    env = {{"SLURM_NTASKS", "2"}, {"SLURM_PROCID", "1"}, {"SLURM_LOCALID", "1"}};
    auto l = detect_launch(get);
    CHECK(l.value().launcher == "slurm");
    CHECK(device_for_rank(l.value(), 2).value() == 1);
  }
  SUBCASE("inconsistent variables are an error naming them") {
    env = {{"OMPI_COMM_WORLD_SIZE", "4"}, {"OMPI_COMM_WORLD_RANK", "4"}};
    auto l = detect_launch(get);
    REQUIRE_FALSE(l.ok());
    CHECK(l.error().field == "OMPI_COMM_WORLD_RANK");
    env = {{"OMPI_COMM_WORLD_SIZE", "four"}, {"OMPI_COMM_WORLD_RANK", "0"}};
    CHECK_FALSE(detect_launch(get).ok());
    env = {{"OMPI_COMM_WORLD_RANK", "0"}};
    CHECK_FALSE(detect_launch(get).ok());
  }
}
