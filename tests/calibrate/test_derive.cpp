// derive_calibration (efficiency curves, effective bandwidths) and the model-side queries.
#include "ftcost/calibrate/plan.hpp"
#include "ftcost/calibration.hpp"
#include "synthetic.hpp"

#include <doctest/doctest.h>

#include <cmath>

namespace {
ftcost::GemmRow row(const std::string& dtype, std::int64_t m, std::int64_t n, std::int64_t k, double tflops) {
  // a forward GEMM: m = out, n = tokens, k = in (TN)
  ftcost::GemmRow r = ftcost::calib::make_gemm("square", dtype, "fwd", n, k, m).row();
  r.tflops = {tflops, tflops, tflops};
  r.time_us_median =
      2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) / (tflops * 1e6);
  r.iterations = 1;
  r.algos_tried = 1;
  return r;
}
}  // namespace

TEST_CASE("efficiency curve: one point per FLOP octave, median efficiency, peak = best row") {
  ftcost::CalMeasurements m;
  m.gemm.push_back(row("bf16", 1024, 1024, 1024, 200));  // 2^31 flops
  m.gemm.push_back(row("bf16", 2048, 2048, 2048, 500));  // 2^34
  m.gemm.push_back(row("bf16", 4096, 4096, 4096, 700));  // 2^37
  m.gemm.push_back(row("bf16", 8192, 8192, 8192, 800));  // 2^40
  auto d = ftcost::derive_calibration(m);
  REQUIRE(d.gemm_efficiency.size() == 1);
  const auto& c = d.gemm_efficiency[0];
  CHECK(c.dtype == "bf16");
  CHECK(c.peak_measured_tflops == doctest::Approx(800));
  REQUIRE(c.points.size() == 4);
  CHECK(c.points[0].flops == doctest::Approx(std::exp2(31.0)));
  CHECK(c.points[0].efficiency == doctest::Approx(0.25));
  CHECK(c.points[3].efficiency == doctest::Approx(1.0));
}

TEST_CASE(
    "framework curve: the heuristic's first choice (what PyTorch's matmul gets) against the same peak") {
  ftcost::CalMeasurements m;
  m.gemm.push_back(row("bf16", 4096, 4096, 4096, 800));  // 2^37
  m.gemm.push_back(row("bf16", 8192, 8192, 8192, 840));  // 2^40
  m.gemm[0].tflops_heuristic = 800;                      // the heuristic picked the best
  m.gemm[1].tflops_heuristic = 735;                      // the best of 8 candidates was not the heuristic's
  auto d = ftcost::derive_calibration(m);
  REQUIRE(d.framework_gemm_efficiency.size() == 1);
  const auto& f = d.framework_gemm_efficiency[0];
  CHECK(f.peak_measured_tflops == doctest::Approx(840));
  // 800/840 then 735/840 violate monotonicity: pooled to their mean
  CHECK(f.points[1].efficiency == doctest::Approx((800.0 + 735.0) / 2 / 840));
  CHECK(*ftcost::gemm_tflops(d, "bf16", std::exp2(40.0)) == doctest::Approx(840));
  CHECK(*ftcost::framework_gemm_tflops(d, "bf16", std::exp2(40.0)) == doctest::Approx(767.5));
  // rows without the heuristic's time (schema 1) count their best
  m.gemm[1].tflops_heuristic.reset();
  CHECK(*ftcost::framework_gemm_tflops(ftcost::derive_calibration(m), "bf16", std::exp2(40.0)) ==
        doctest::Approx(840));
}

TEST_CASE("efficiency curve is made non-decreasing (pool adjacent violators)") {
  ftcost::CalMeasurements m;
  m.gemm.push_back(row("fp16", 1024, 1024, 1024, 300));  // eff .375
  m.gemm.push_back(row("fp16", 2048, 2048, 2048, 200));  // eff .25  -> pooled with the one before: .3125
  m.gemm.push_back(row("fp16", 4096, 4096, 4096, 800));  // eff 1
  auto c = ftcost::derive_calibration(m).gemm_efficiency.at(0);
  REQUIRE(c.points.size() == 3);
  CHECK(c.points[0].efficiency == doctest::Approx(0.3125));
  CHECK(c.points[1].efficiency == doctest::Approx(0.3125));
  CHECK(c.points[2].efficiency == doctest::Approx(1.0));
  for (std::size_t i = 1; i < c.points.size(); ++i) {
    CHECK(c.points[i].flops > c.points[i - 1].flops);
    CHECK(c.points[i].efficiency >= c.points[i - 1].efficiency);
  }
}

TEST_CASE("curves come in dtype order and rows of one octave share a point") {
  ftcost::CalMeasurements m;
  m.gemm.push_back(row("tf32", 4096, 4096, 4096, 300));
  m.gemm.push_back(row("bf16", 4096, 4096, 4096, 600));
  m.gemm.push_back(row("bf16", 4096, 4096, 6000, 700));  // same octave as 4096^3 (2^37..2^38)
  m.gemm.push_back(row("bf16", 4096, 4096, 7000, 650));
  auto d = ftcost::derive_calibration(m);
  REQUIRE(d.gemm_efficiency.size() == 2);
  CHECK(d.gemm_efficiency[0].dtype == "bf16");
  CHECK(d.gemm_efficiency[1].dtype == "tf32");
  REQUIRE(d.gemm_efficiency[0].points.size() == 1);
  CHECK(d.gemm_efficiency[0].points[0].efficiency == doctest::Approx(650.0 / 700.0));
}

TEST_CASE("interpolation over the curve") {
  ftcost::CalMeasurements m;
  m.gemm.push_back(row("bf16", 1024, 1024, 1024, 400));  // 2^31, eff .5
  m.gemm.push_back(row("bf16", 8192, 8192, 8192, 800));  // 2^40, eff 1
  auto d = ftcost::derive_calibration(m);
  CHECK(*ftcost::gemm_efficiency(d, "bf16", std::exp2(31.0)) == doctest::Approx(0.5));
  CHECK(*ftcost::gemm_efficiency(d, "bf16", std::exp2(35.5)) == doctest::Approx(0.75));  // halfway in log
  CHECK(*ftcost::gemm_efficiency(d, "bf16", std::exp2(45.0)) == doctest::Approx(1.0));   // flat above
  CHECK(*ftcost::gemm_efficiency(d, "bf16", std::exp2(30.0)) ==
        doctest::Approx(0.25));  // constant time below
  CHECK(*ftcost::gemm_tflops(d, "bf16", std::exp2(35.5)) == doctest::Approx(600));
  CHECK(!ftcost::gemm_efficiency(d, "fp8_e4m3", 1e12));
}

TEST_CASE("bandwidth-type derived values") {
  ftcost::Calibration c = ftcost::test::synthetic_calibration();
  const auto& d = c.derived;
  CHECK(*d.memory_bandwidth_gbps == doctest::Approx(3010 + 1024.0 / 20));  // best of copy/triad
  CHECK(*d.nf4_dequant_gbps == doctest::Approx(2700));
  CHECK(*d.adamw_fused_gbps == doctest::Approx(2900));
  CHECK(*d.adamw_unfused_gbps == doctest::Approx(2800));
  CHECK(*d.elementwise_gbps == doctest::Approx((2750.0 + 2800.0) / 2));  // median of 2300 2750 2800 2850
  CHECK(*d.launch_overhead_us == doctest::Approx(2.2));
  CHECK(*d.host_op_overhead_us == doctest::Approx(5.6));
  CHECK(*d.cpu_score == doctest::Approx(41));
  CHECK(*d.grouped_over_loop_speedup == doctest::Approx(610.0 / 540.0).epsilon(1e-6));
}

TEST_CASE("measured_gemm_tflops finds an exact row") {
  ftcost::Calibration c = ftcost::test::synthetic_calibration();
  auto s = ftcost::calib::make_gemm("mixtral-8x7b.w1", "bf16", "dgrad", 4096, 4096, 14336);
  auto v = ftcost::measured_gemm_tflops(c, "bf16", "dgrad", s.m, s.n, s.k);
  REQUIRE(v);
  CHECK(*v > 100);
  CHECK(!ftcost::measured_gemm_tflops(c, "bf16", "dgrad", 1, 2, 3));
}

TEST_CASE("op-class rates (schema 3): medians over their rows, by hand") {
  ftcost::Calibration c = ftcost::test::synthetic_calibration();
  const auto& d = c.derived;
  CHECK(*d.norm_gbps == doctest::Approx(2100));            // of 2000 2100 2200
  CHECK(*d.cast_gbps == doctest::Approx(2800));            // of 2700 2900
  CHECK(*d.pointwise_gbps == doctest::Approx(2900));       // of 2850 2950
  CHECK(*d.cross_entropy_gbps == doctest::Approx(2550));   // of 2400 2500 2600 2700
  CHECK(*d.attention_fwd_tflops == doctest::Approx(385));  // of 350 420
  CHECK(*d.attention_bwd_tflops == doctest::Approx(315));  // of 300 330
  REQUIRE(d.lora_gemm_roofline_fraction.has_value());
  CHECK(*d.lora_gemm_roofline_fraction > 0);
  CHECK(*d.lora_gemm_roofline_fraction <= 1);
  ftcost::CalMeasurements none;
  auto e = ftcost::derive_calibration(none);
  CHECK_FALSE(e.norm_gbps.has_value());
  CHECK_FALSE(e.attention_fwd_tflops.has_value());
  CHECK_FALSE(e.lora_gemm_roofline_fraction.has_value());
}

TEST_CASE("attention FLOPs: FlashAttention-2's causal count") {
  // 4 b h L^2 d / 2 = 4 x 2 x 32 x 4096^2 x 128 / 2 = 274,877,906,944; backward 2.5x
  CHECK(ftcost::attention_causal_flops("fwd", 2, 32, 4096, 128) == doctest::Approx(274877906944.0));
  CHECK(ftcost::attention_causal_flops("bwd", 2, 32, 4096, 128) == doctest::Approx(687194767360.0));
}

namespace {
// A LoRA A-side forward, rank 16 on 4096 x 4096 with 4096 tokens: m 16, n 4096, k 4096;
// FLOPs 2 x 16 x 4096 x 4096 = 536,870,912; bytes 2 (16 x 4096 + 4096 x 4096 + 16 x 4096) = 33,816,576.
ftcost::LoraGemmRow lora_a_fwd(double time_us) {
  ftcost::LoraGemmRow r;
  r.shape = "test.q";
  r.side = "A";
  r.rank = 16;
  r.dtype = "bf16";
  r.pass = "fwd";
  r.transa = "T";
  r.transb = "N";
  r.tokens = 4096;
  r.in = 4096;
  r.out = 16;
  r.m = 16;
  r.n = 4096;
  r.k = 4096;
  r.bytes_moved = 33816576;
  r.time_us_median = time_us;
  r.tflops = {536870912.0 / (time_us * 1e6), 0, 0};
  r.iterations = 1;
  r.algos_tried = 1;
  return r;
}
ftcost::BandwidthRow copy_at(double gbps) {
  ftcost::BandwidthRow b;
  b.kernel = "copy";
  b.array_bytes = 1u << 30;
  b.bytes_moved = 2u << 30;
  b.gbps = {gbps, gbps, gbps};
  b.time_us_median = static_cast<double>(b.bytes_moved) / (gbps * 1e3);
  b.iterations = 1;
  return b;
}
}  // namespace

TEST_CASE("LoRA roofline fraction: max(FLOPs / bf16 peak, bytes / DRAM bandwidth) / time, median, by hand") {
  ftcost::CalMeasurements m;
  m.gemm.push_back(row("bf16", 8192, 8192, 8192, 500));  // bf16 peak_measured 500 TFLOP/s
  m.bandwidth.push_back(copy_at(2000));                  // 2000 GB/s
  // memory-bound: bytes / bandwidth = 33,816,576 / 2e12 s = 16.908288 us (FLOPs / peak = 1.0737 us)
  m.lora_gemm.push_back(lora_a_fwd(16.908288 / 0.5));  // fraction 0.5
  m.lora_gemm.push_back(lora_a_fwd(16.908288 / 0.8));  // 0.8
  m.lora_gemm.push_back(lora_a_fwd(16.908288 / 0.2));  // 0.2
  auto d = ftcost::derive_calibration(m);
  REQUIRE(d.lora_gemm_roofline_fraction.has_value());
  CHECK(*d.lora_gemm_roofline_fraction == doctest::Approx(0.5));
  // compute-bound when the bandwidth is high: FLOPs / peak = 536,870,912 / 500e12 s = 1.073741824 us
  m.bandwidth[0] = copy_at(100000);  // bytes / bandwidth = 0.338 us
  m.lora_gemm.resize(1);
  m.lora_gemm[0] = lora_a_fwd(1.073741824 * 4);
  CHECK(*ftcost::derive_calibration(m).lora_gemm_roofline_fraction == doctest::Approx(0.25));
  // without the bf16 GEMM peak or the DRAM bandwidth there is no roofline: null
  ftcost::CalMeasurements no_gemm = m;
  no_gemm.gemm.clear();
  CHECK_FALSE(ftcost::derive_calibration(no_gemm).lora_gemm_roofline_fraction.has_value());
  ftcost::CalMeasurements no_bw = m;
  no_bw.bandwidth.clear();
  CHECK_FALSE(ftcost::derive_calibration(no_bw).lora_gemm_roofline_fraction.has_value());
}
