// The calibration loader (core/spec/src/calibration.cpp): accepts the fixture, rejects each kind of
// corruption with an error that names the JSON path.
#include "ftcost/calibration.hpp"
#include "synthetic.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>
#include <string>

using nlohmann::json;

namespace {
std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}
const std::string kData = std::string(FTCOST_SOURCE_DIR) + "/tests/data/calibration/";

json fixture() { return json::parse(ftcost::to_json_text(ftcost::test::synthetic_calibration())); }

ftcost::Error reject(const json& j) {
  auto r = ftcost::parse_calibration(j, "test.json");
  REQUIRE_MESSAGE(!r.ok(), "expected a rejection");
  return r.error();
}
}  // namespace

TEST_CASE("the committed fixture is accepted") {
  std::string text = read_file(kData + "h100-sxm-synthetic.json");
  REQUIRE(!text.empty());
  auto r = ftcost::parse_calibration(text, "h100-sxm-synthetic.json");
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().to_string()));
  const ftcost::Calibration& c = r.value();
  CHECK(c.device.sm_count == 132);
  CHECK(c.device.cc_major == 9);
  CHECK(c.measurements.gemm.size() == 16);
  CHECK(c.measurements.expert_gemm.size() == 24);
  CHECK(c.derived.memory_bandwidth_gbps.has_value());
  // regenerate with: calibration_fixture_tool --write tests/data/calibration/h100-sxm-synthetic.json
  CHECK(c.meta.notes.at(0).find("synthetic") != std::string::npos);
}

TEST_CASE("round trip: to_json then parse gives the same document") {
  ftcost::Calibration c = ftcost::test::synthetic_calibration();
  std::string a = ftcost::to_json_text(c);
  auto back = ftcost::parse_calibration(a, "");
  REQUIRE(back.ok());
  CHECK(ftcost::to_json_text(back.value()) == a);
  CHECK(ftcost::to_json(c) == json::parse(a));
}

TEST_CASE("missing field names its path") {
  json j = fixture();
  j["measurements"]["gemm"][3].erase("tflops_p10");
  ftcost::Error e = reject(j);
  CHECK(e.code == ftcost::Errc::missing_field);
  CHECK(e.field == "measurements.gemm[3].tflops_p10");
  CHECK(e.message.find("test.json") != std::string::npos);

  json k = fixture();
  k.erase("conditions");
  CHECK(reject(k).field == "conditions");
}

TEST_CASE("negative bandwidth is out of range") {
  json j = fixture();
  j["measurements"]["bandwidth"][1]["gbps_median"] = -5.0;
  ftcost::Error e = reject(j);
  CHECK(e.code == ftcost::Errc::out_of_range);
  CHECK(e.field == "measurements.bandwidth[1].gbps_median");
  CHECK(e.to_string().rfind("measurements.bandwidth[1].gbps_median: must be > 0", 0) == 0);
}

TEST_CASE("non-positive GEMM rate is rejected with the example message") {
  json j = fixture();
  j["measurements"]["gemm"][3]["tflops_median"] = -1;
  ftcost::Error e = reject(j);
  CHECK(e.to_string().rfind("measurements.gemm[3].tflops_median: must be > 0", 0) == 0);
}

TEST_CASE("schema versions: 3 is written, 2 and 1 still load, others are rejected") {
  json j = fixture();
  CHECK(j["meta"]["schema"] == "ftcost.calibration/3");
  j["meta"]["schema"] = "ftcost.calibration/4";
  ftcost::Error e = reject(j);
  CHECK(e.code == ftcost::Errc::schema_mismatch);
  CHECK(e.field == "meta.schema");
  // a version-2 document (no op-class rows, no op-class derived rates) loads; what it lacks is empty / null
  json v2 = fixture();
  v2["meta"]["schema"] = "ftcost.calibration/2";
  for (const char* k : {"norm", "cast", "pointwise", "cross_entropy", "lora_gemm", "attention"})
    v2["measurements"].erase(k);
  for (const char* k : {"norm_gbps", "cast_gbps", "pointwise_gbps", "cross_entropy_gbps",
                        "attention_fwd_tflops", "attention_bwd_tflops", "lora_gemm_roofline_fraction"})
    v2["derived"].erase(k);
  auto r2 = ftcost::parse_calibration(v2, "v2.json");
  REQUIRE_MESSAGE(r2.ok(), (r2.ok() ? "" : r2.error().to_string()));
  CHECK(r2.value().meta.schema == "ftcost.calibration/2");
  CHECK(r2.value().measurements.attention.empty());
  CHECK_FALSE(r2.value().derived.norm_gbps.has_value());
  CHECK_FALSE(r2.value().derived.lora_gemm_roofline_fraction.has_value());
  // a version-1 document (no collectives, p2p or fast_accum either) loads; what it lacks is empty
  json v1 = v2;
  v1["meta"]["schema"] = "ftcost.calibration/1";
  v1["measurements"].erase("collectives");
  v1["measurements"].erase("p2p");
  for (auto& row : v1["measurements"]["gemm"]) row.erase("fast_accum");
  auto r = ftcost::parse_calibration(v1, "v1.json");
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().to_string()));
  CHECK(r.value().meta.schema == "ftcost.calibration/1");
  CHECK(r.value().measurements.collectives.empty());
  CHECK_FALSE(r.value().measurements.gemm[0].fast_accum);
}

TEST_CASE("the shipped H200 calibration (schema 2) still loads and derives no op-class rates") {
  const std::string text =
      read_file(std::string(FTCOST_SOURCE_DIR) +
                "/gpu-db/calibrations/h200-sxm-141gb/firecracker-h200-2026-12-04-full.json");
  REQUIRE(!text.empty());
  auto r = ftcost::parse_calibration(text, "h200");
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().to_string()));
  CHECK(r.value().meta.schema == "ftcost.calibration/2");
  CHECK_FALSE(r.value().derived.attention_fwd_tflops.has_value());
}

TEST_CASE("op-class rows (schema 3): each corruption is refused with the field's path") {
  struct Case {
    const char* section;
    const char* key;
    json value;
    const char* field;
  };
  const Case cases[] = {
      {"norm", "bytes_moved", 12345, "measurements.norm[0].bytes_moved"},
      {"norm", "direction", "sideways", "measurements.norm[0].direction"},
      {"norm", "time_us_median", 1.0, "measurements.norm[0].time_us_median"},
      {"cast", "dst_dtype", "bf16", "measurements.cast[0].dst_dtype"},  // bf16 -> bf16 is no cast
      {"cast", "elements", 0, "measurements.cast[0].elements"},
      {"pointwise", "op", "div", "measurements.pointwise[0].op"},
      {"pointwise", "bytes_moved", 6, "measurements.pointwise[0].bytes_moved"},
      {"cross_entropy", "logits_dtype", "bf16", "measurements.cross_entropy[0].logits_dtype"},
      {"cross_entropy", "vocab", 32001, "measurements.cross_entropy[0].bytes_moved"},
      {"lora_gemm", "rank", 8, "measurements.lora_gemm[0].rank"},
      {"lora_gemm", "m", 17, "measurements.lora_gemm[0].m"},
      {"lora_gemm", "transa", "N", "measurements.lora_gemm[0].transa"},
      {"lora_gemm", "bytes_moved", 100, "measurements.lora_gemm[0].bytes_moved"},
      {"lora_gemm", "tflops_p10", 1000, "measurements.lora_gemm[0].tflops_p10"},
      {"attention", "causal", false, "measurements.attention[0].causal"},
      {"attention", "kv_heads", 5, "measurements.attention[0].kv_heads"},
      {"attention", "flops", 1e12, "measurements.attention[0].flops"},
      {"attention", "time_us_median", 1.0, "measurements.attention[0].time_us_median"},
      {"attention", "extra", 1, "measurements.attention[0].extra"},
  };
  for (const Case& c : cases) {
    json j = fixture();
    j["measurements"][c.section][0][c.key] = c.value;
    ftcost::Error e = reject(j);
    const std::string what = std::string(c.section) + "." + c.key + ": " + e.to_string();
    CHECK_MESSAGE(e.field == c.field, what);
  }
  json stale = fixture();
  stale["derived"]["norm_gbps"] = 1234.0;
  CHECK(reject(stale).field == "derived.norm_gbps");
  json missing = fixture();
  missing["derived"]["attention_bwd_tflops"] = nullptr;
  CHECK(reject(missing).field == "derived.attention_bwd_tflops");
}

TEST_CASE("fast_accum is an fp8 option") {
  json j = fixture();
  std::size_t bf16 = 0, fp8 = 99;
  for (std::size_t i = 0; i < j["measurements"]["gemm"].size(); ++i) {
    if (j["measurements"]["gemm"][i]["dtype"] == "fp8_e4m3") fp8 = i;
    if (j["measurements"]["gemm"][i]["dtype"] == "bf16") bf16 = i;
  }
  REQUIRE(fp8 != 99);
  json ok = j;
  ok["measurements"]["gemm"][fp8]["fast_accum"] = true;
  auto r = ftcost::parse_calibration(ok, "x");
  REQUIRE(r.ok());
  CHECK(r.value().measurements.gemm[fp8].fast_accum);
  j["measurements"]["gemm"][bf16]["fast_accum"] = true;
  ftcost::Error e = reject(j);
  CHECK(e.field == "measurements.gemm[" + std::to_string(bf16) + "].fast_accum");
}

TEST_CASE(
    "a datasheet is not a ceiling: above the vendor peak is flagged, above the hardware ceiling rejected") {
  ftcost::Calibration c = ftcost::test::synthetic_calibration();  // H100 SXM: 132 SMs, 1980 MHz, cc 9.0
  // hardware ceiling bf16: 132 x 1980 MHz x 4096 FLOP/clock/SM = 1070.5 TFLOP/s
  REQUIRE(ftcost::hardware_ceiling_tflops(c.device, "bf16").has_value());
  CHECK(*ftcost::hardware_ceiling_tflops(c.device, "bf16") == doctest::Approx(132 * 1980e6 * 4096 / 1e12));
  CHECK(*ftcost::hardware_ceiling_tflops(c.device, "fp8_e4m3") ==
        doctest::Approx(2 * 132 * 1980e6 * 4096 / 1e12));
  CHECK(*ftcost::hardware_ceiling_tflops(c.device, "tf32") == doctest::Approx(132 * 1980e6 * 2048 / 1e12));
  // memory: 2619 MHz x 2 x 5120 bit / 8 = 3352 GB/s
  CHECK(*ftcost::hardware_ceiling_gbps(c.device) == doctest::Approx(2619e6 * 2 * 5120 / 8 / 1e9));
  std::vector<std::string> review;
  CHECK(ftcost::check_against_spec(c, 989.4, 3350, &review).ok());
  CHECK(review.empty());
  // 1.06x the datasheet, under the ceiling: accepted, listed for review
  c.measurements.gemm[2].tflops.median = 989.4 * 1.06;
  CHECK(ftcost::check_against_spec(c, 989.4, 3350, &review).ok());
  REQUIRE(review.size() == 1);
  CHECK(review[0].find("measurements.gemm[2].tflops_median") == 0);
  CHECK(review[0].find("above the datasheet") != std::string::npos);
  // above the ceiling (+2%): rejected, naming the ceiling's arithmetic
  c.measurements.gemm[2].tflops.median = 1070.5 * 1.03;
  auto s = ftcost::check_against_spec(c, 989.4, 3350);
  REQUIRE(!s.ok());
  CHECK(s.error().code == ftcost::Errc::out_of_range);
  CHECK(s.error().field == "measurements.gemm[2].tflops_median");
  CHECK(s.error().message.find("hardware ceiling") != std::string::npos);
  CHECK(s.error().message.find("132 SMs") != std::string::npos);
  // no clock known: the bound is 2.1x the datasheet
  ftcost::Calibration n = ftcost::test::synthetic_calibration();
  n.device.sm_clock_max_mhz.reset();
  n.measurements.gemm[2].tflops.median = 989.4 * 2.0;
  CHECK(ftcost::check_against_spec(n, 989.4, 3350).ok());
  n.measurements.gemm[2].tflops.median = 989.4 * 2.2;
  CHECK(!ftcost::check_against_spec(n, 989.4, 3350).ok());
  // another GPU's calibration (this H100's against an A40's 149.7 datasheet): under the H100's own ceiling,
  // but far above 2.1x the A40's figure
  auto other = ftcost::check_against_spec(ftcost::test::synthetic_calibration(), 149.7, 696);
  REQUIRE_FALSE(other.ok());
  CHECK(other.error().message.find("another GPU") != std::string::npos);
  // unknown spec (<= 0): only the ceiling applies
  CHECK(ftcost::check_against_spec(ftcost::test::synthetic_calibration(), 0, 0).ok());
}

TEST_CASE(
    "RTX 5090: 224 TFLOP/s bf16 (torch.matmul) and 735 fp8 are accepted, flagged against the 209.5 "
    "datasheet") {
  ftcost::Calibration c = ftcost::test::synthetic_calibration();
  c.device.cc_major = 12;
  c.device.cc_minor = 0;
  c.device.sm_count = 170;
  c.device.sm_clock_max_mhz = 2407;  // ceiling bf16: 170 x 2407 MHz x 1024 = 419 TFLOP/s; fp8 838
  c.device.memory_clock_max_mhz.reset();
  c.measurements.bandwidth.clear();
  c.measurements.elementwise.clear();
  c.measurements.nf4_dequant.clear();
  c.measurements.adamw.clear();
  for (auto& r : c.measurements.gemm) {
    if (r.dtype == "bf16") r.tflops.median = 150;
    if (r.dtype == "fp16") r.tflops.median = 150;
    if (r.dtype == "tf32") r.tflops.median = 80;
    if (r.dtype == "fp8_e4m3") r.tflops.median = 300;
  }
  for (auto& r : c.measurements.expert_gemm) r.tflops_median = 150;
  c.measurements.gemm[2].tflops.median = 224;
  REQUIRE(c.measurements.gemm[2].dtype == "bf16");
  std::vector<std::string> review;
  CHECK(ftcost::check_against_spec(c, 209.5, 1792, &review).ok());
  REQUIRE(review.size() == 1);
  CHECK(review[0].find("224 TFLOP/s bf16 is above the datasheet's dense 209.5") != std::string::npos);
  for (auto& r : c.measurements.gemm) {
    if (r.dtype == "fp8_e4m3") r.tflops.median = 735;
  }
  review.clear();
  CHECK(ftcost::check_against_spec(c, 209.5, 1792, &review).ok());
  CHECK(review.size() > 1);
}

TEST_CASE("the ceiling table is at or above every NVIDIA datasheet in gpu-db") {
  // structural check of tensor_flops_per_clock_per_sm: for each GPU file with SMs, boost clock and compute
  // capability, SMs x clock x rate >= the datasheet's dense fp16/bf16 (-1% for rounding of the clock), and
  // at most 2.1x it (GeForce datasheets give the half-rate fp32-accumulate figure)
  int checked = 0;
  for (const char* id : {"a10", "a100-sxm4-80gb", "a10g", "a40", "h100-sxm5-80gb", "h100-pcie-80gb",
                         "h200-sxm-141gb", "l4", "l40", "l40s", "rtx-3090", "rtx-4090", "rtx-5090",
                         "rtx-a6000", "t4", "v100-sxm2-32gb", "v100-pcie-32gb"}) {
    json g = json::parse(read_file(std::string(FTCOST_SOURCE_DIR) + "/gpu-db/gpus/" + id + ".json"));
    const std::string cc = g["compute_capability"];
    ftcost::CalDevice d;
    d.cc_major = cc[0] - '0';
    d.cc_minor = cc[2] - '0';
    if (cc.size() == 4) {  // "12.0"
      d.cc_major = std::stoi(cc.substr(0, 2));
      d.cc_minor = cc[3] - '0';
    }
    d.sm_count = g["sm_count"];
    d.sm_clock_max_mhz = g["boost_clock_mhz"].get<double>();
    const json& t = g["dense_tflops"];
    const double sheet = t["fp16"].get<double>();
    auto ceil = ftcost::hardware_ceiling_tflops(d, "fp16");
    REQUIRE_MESSAGE(ceil.has_value(), id);
    CHECK_MESSAGE(*ceil >= sheet * 0.99, id << ": ceiling " << *ceil << " < datasheet " << sheet);
    CHECK_MESSAGE(*ceil <= sheet * 2.1, id << ": ceiling " << *ceil << " > 2.1 x datasheet " << sheet);
    ++checked;
  }
  CHECK(checked == 17);
}

TEST_CASE("bandwidth: above the datasheet flagged, above memory clock x bus width rejected") {
  ftcost::Calibration c = ftcost::test::synthetic_calibration();
  std::vector<std::string> review;
  CHECK(ftcost::check_against_spec(c, 989.4, 2600, &review).ok());  // 1.15x a datasheet: review, not reject
  REQUIRE(!review.empty());
  CHECK(review[0].find("measurements.bandwidth[0].gbps_median") == 0);
  c.device.memory_clock_max_mhz = 1000;  // ceiling 1280 GB/s
  auto s = ftcost::check_against_spec(c, 989.4, 3350);
  REQUIRE(!s.ok());
  CHECK(s.error().field == "measurements.bandwidth[0].gbps_median");
  c.device.memory_clock_max_mhz.reset();  // unknown: the datasheet + 5% is the bound, as before
  CHECK(!ftcost::check_against_spec(c, 989.4, 2600).ok());
  ftcost::Calibration d = ftcost::test::synthetic_calibration();  // 1.5x the datasheet: another GPU's
  CHECK(!ftcost::check_against_spec(d, 989.4, 2000).ok());
}

TEST_CASE("type errors, unknown keys, enums") {
  {
    json j = fixture();
    j["device"]["sm_count"] = "132";
    ftcost::Error e = reject(j);
    CHECK(e.code == ftcost::Errc::wrong_type);
    CHECK(e.field == "device.sm_count");
  }
  {
    json j = fixture();
    j["measurements"]["gemm"][0]["tflop_median"] = 1.0;  // typo of a key
    ftcost::Error e = reject(j);
    CHECK(e.code == ftcost::Errc::unknown_key);
    CHECK(e.field == "measurements.gemm[0].tflop_median");
  }
  {
    json j = fixture();
    j["measurements"]["gemm"][0]["dtype"] = "int4";
    CHECK(reject(j).field == "measurements.gemm[0].dtype");
  }
  {
    json j = fixture();
    j["measurements"]["gemm"][0]["m"] = 4096.5;
    CHECK(reject(j).field == "measurements.gemm[0].m");
  }
  {
    json j = fixture();
    j["measurements"]["newthing"] = json::array();
    CHECK(reject(j).field == "measurements.newthing");
  }
}

TEST_CASE("consistency checks between fields") {
  {
    json j = fixture();  // p10 above the median
    j["measurements"]["bandwidth"][0]["gbps_p10"] = 1e4;
    CHECK(reject(j).field == "measurements.bandwidth[0].gbps_p10");
  }
  {
    json j = fixture();  // time does not match the rate
    j["measurements"]["gemm"][0]["time_us_median"] = 1.0;
    CHECK(reject(j).field == "measurements.gemm[0].time_us_median");
  }
  {
    json j = fixture();  // fwd is TN
    j["measurements"]["gemm"][0]["transa"] = "N";
    CHECK(reject(j).field == "measurements.gemm[0].transa");
  }
  {
    json j = fixture();  // tokens per expert must sum to tokens x top_k
    j["measurements"]["expert_gemm"][0]["tokens_per_expert"][0] = 1;
    CHECK(reject(j).field == "measurements.expert_gemm[0].tokens_per_expert");
  }
  {
    json j = fixture();  // bytes moved of a copy = 2 x array
    j["measurements"]["bandwidth"][0]["bytes_moved"] = 1024;
    CHECK(reject(j).field == "measurements.bandwidth[0].bytes_moved");
  }
  {
    json j = fixture();  // a forward layer row needs its five stages
    j["measurements"]["moe_layer"][0]["stages_us"].erase("topk");
    CHECK(reject(j).field == "measurements.moe_layer[0].stages_us.topk");
  }
  {
    json j = fixture();  // readings without NVML
    j["conditions"]["nvml"] = false;
    CHECK(reject(j).field == "conditions.nvml");
  }
  {
    json j = fixture();
    j["meta"]["created_utc"] = "2025-13-01T00:00:00Z";
    CHECK(reject(j).field == "meta.created_utc");
  }
  {
    json j = fixture();
    j["device"]["uuid_hash"] = "GPU-5c5a4a3e-0000-0000-0000-000000000000";  // a raw UUID
    CHECK(reject(j).field == "device.uuid_hash");
  }
}

TEST_CASE("derived must match the measurements") {
  {
    json j = fixture();
    j["derived"]["memory_bandwidth_gbps"] = 9999.0;
    ftcost::Error e = reject(j);
    CHECK(e.field == "derived.memory_bandwidth_gbps");
  }
  {
    json j = fixture();
    j["derived"]["gemm_efficiency"][0]["points"][1]["efficiency"] = 0.99;
    CHECK(reject(j).field == "derived.gemm_efficiency[0].points[1].efficiency");
  }
  {
    json j = fixture();  // a value without rows behind it
    j["measurements"]["cpu"] = json::array();
    CHECK(reject(j).field == "derived.cpu_score");
  }
  {
    json j = fixture();  // rederive accepts stale derived and fixes it
    j["derived"]["memory_bandwidth_gbps"] = 9999.0;
    auto r = ftcost::parse_calibration_rederive(j, "");
    REQUIRE(r.ok());
    CHECK(*r.value().derived.memory_bandwidth_gbps < 4000);
  }
}

TEST_CASE("malformed text and non-object documents") {
  auto r = ftcost::parse_calibration(std::string("{\"meta\": "), "broken.json");
  REQUIRE(!r.ok());
  CHECK(r.error().code == ftcost::Errc::malformed_json);
  auto a = ftcost::parse_calibration(json::array(), "x.json");
  REQUIRE(!a.ok());
  CHECK(a.error().code == ftcost::Errc::wrong_type);
}

TEST_CASE("empty measurements (a run interrupted at once) are valid and derive nothing") {
  ftcost::Calibration c = ftcost::test::synthetic_calibration();
  c.measurements = ftcost::CalMeasurements{};
  c.meta.partial = true;
  c.derived = ftcost::derive_calibration(c.measurements);
  auto r = ftcost::parse_calibration(ftcost::to_json_text(c), "");
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().to_string()));
  CHECK(!r.value().derived.memory_bandwidth_gbps);
  CHECK(r.value().derived.gemm_efficiency.empty());
}

TEST_CASE("committed corrupted fixtures are rejected naming the field") {
  json expect = json::parse(read_file(kData + "invalid/expected.json"));
  REQUIRE(expect.size() >= 4);
  for (auto it = expect.begin(); it != expect.end(); ++it) {
    CAPTURE(it.key());
    auto r = ftcost::parse_calibration(read_file(kData + "invalid/" + it.key()), it.key());
    REQUIRE(!r.ok());
    CHECK(r.error().field == it.value()["field"].get<std::string>());
    CHECK(std::string(ftcost::errc_name(r.error().code)) == it.value()["code"].get<std::string>());
  }
}
