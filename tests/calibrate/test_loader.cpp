// The calibration loader (core/src/calibration.cpp): accepts the fixture, rejects each kind of
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

TEST_CASE("wrong schema version") {
  json j = fixture();
  j["meta"]["schema"] = "ftcost.calibration/2";
  ftcost::Error e = reject(j);
  CHECK(e.code == ftcost::Errc::schema_mismatch);
  CHECK(e.field == "meta.schema");
}

TEST_CASE("above-peak GEMM is rejected against the spec, with 5% tolerance") {
  ftcost::Calibration c = ftcost::test::synthetic_calibration();
  CHECK(ftcost::check_against_spec(c, 989.4, 3350).ok());
  // a bf16 row at 1.04x the peak passes (boost), at 1.06x fails
  c.measurements.gemm[2].tflops.median = 989.4 * 1.04;
  CHECK(ftcost::check_against_spec(c, 989.4, 3350).ok());
  c.measurements.gemm[2].tflops.median = 989.4 * 1.06;
  auto s = ftcost::check_against_spec(c, 989.4, 3350);
  REQUIRE(!s.ok());
  CHECK(s.error().code == ftcost::Errc::out_of_range);
  CHECK(s.error().field == "measurements.gemm[2].tflops_median");
  // tf32 is held to half the bf16 peak, fp8 to twice
  ftcost::Calibration t = ftcost::test::synthetic_calibration();
  for (auto& r : t.measurements.gemm) {
    if (r.dtype == "tf32") r.tflops.median = 989.4 * 0.6;
  }
  CHECK(!ftcost::check_against_spec(t, 989.4, 3350).ok());
  // unknown spec (<= 0) skips the check
  CHECK(ftcost::check_against_spec(c, 0, 0).ok());
}

TEST_CASE("above-spec bandwidth is rejected") {
  ftcost::Calibration c = ftcost::test::synthetic_calibration();
  CHECK(!ftcost::check_against_spec(c, 989.4, 2000).ok());
  auto s = ftcost::check_against_spec(c, 989.4, 2000);
  CHECK(s.error().field == "measurements.bandwidth[0].gbps_median");
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
