// The compact (link) form of a calibration, its fingerprint and the synthetic/partial flags
// (core/spec/include/ftcost/calibration_share.hpp).
#include "ftcost/calibration_share.hpp"
#include "ftcost/database.hpp"
#include "ftcost/estimate.hpp"

#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <utility>

using namespace ftcost;

namespace {

std::string fixture_text() {
  std::ifstream f(std::string(FTCOST_SOURCE_DIR) + "/tests/data/calibration/h100-sxm-synthetic.json");
  REQUIRE(f.good());
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

Calibration fixture() {
  auto c = parse_calibration(fixture_text(), "fixture.json");
  REQUIRE(c.ok());
  return c.value();
}

// The fixture made to look like a real, complete run: no synthetic markers.
Calibration real_looking() {
  Calibration c = fixture();
  c.meta.notes.clear();
  c.device.name = "NVIDIA H100 80GB HBM3";
  c.device.uuid_hash =
      "sha256:" + std::string("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
  return c;
}

Estimate estimate_with(const std::string& cal_text, const char* model, const char* method) {
  FileReader reader = [&](const std::string&) -> Result<std::string> { return cal_text; };
  Request r = {{"model", model},       {"gpu", "h100-sxm5-80gb"}, {"method", method},
               {"dataset", "math14k"}, {"batch", "max"},          {"calibration", "c.json"}};
  auto in = resolve_request(r, Database::embedded(), reader);
  REQUIRE_MESSAGE(in.ok(), (in.ok() ? std::string() : in.error().to_string()));
  auto e = estimate(in.value(), Database::embedded());
  REQUIRE(e.ok());
  return e.value();
}

}  // namespace

TEST_CASE("calibration flags: the synthetic fixture is flagged from its own fields, a complete run is not") {
  CalibrationFlags f = calibration_flags(fixture());
  CHECK(f.synthetic);
  CHECK_FALSE(f.partial);
  const std::string text = calibration_flags_text(f);
  CHECK(text.find("synthetic (meta.notes says \"synthetic test fixture") == 0);
  CHECK(text.find("device.name") != std::string::npos);
  CHECK(text.find("uuid_hash is a placeholder") != std::string::npos);

  CalibrationFlags clean = calibration_flags(real_looking());
  CHECK_FALSE(clean.synthetic);
  CHECK_FALSE(clean.partial);
  CHECK(calibration_flags_text(clean).empty());
}

TEST_CASE("calibration flags: interrupted, --only and missing families are partial") {
  Calibration c = real_looking();
  c.meta.partial = true;
  CHECK(calibration_flags_text(calibration_flags(c)) == "partial (meta.partial: the run was interrupted)");
  c = real_looking();
  c.measurements.nf4_dequant.clear();
  c.measurements.launch.clear();
  CalibrationFlags f = calibration_flags(c);
  CHECK(f.partial);
  CHECK_FALSE(f.synthetic);
  CHECK(calibration_flags_text(f) ==
        "partial (no fused NF4 dequantization rows (spec sheet used); no kernel launch rows (spec sheet "
        "used))");
  c = real_looking();
  c.meta.only = {"gemm"};
  CHECK(calibration_flags_text(calibration_flags(c)) == "partial (meta.only: gemm only)");
}

TEST_CASE("compact form: small, and a calibration rebuilt from it gives the same estimates") {
  const Calibration cal = fixture();
  const nlohmann::json compact = calibration_compact(cal);
  const std::string b64 = base64url_encode(compact.dump());
  // the fixture's 36 kB file fits in a link (the calculator embeds up to 6000 characters)
  CHECK(b64.size() < 6000);
  auto back = base64url_decode(b64, "cal");
  REQUIRE(back.ok());
  CHECK(back.value() == compact.dump());
  auto rebuilt = calibration_from_compact(nlohmann::json::parse(back.value()), "link");
  REQUIRE_MESSAGE(rebuilt.ok(), (rebuilt.ok() ? std::string() : rebuilt.error().to_string()));
  CHECK(calibration_fingerprint(rebuilt.value()) == calibration_fingerprint(cal));
  CHECK(calibration_flags_text(calibration_flags(rebuilt.value())) ==
        calibration_flags_text(calibration_flags(cal)));
  // the estimator's inputs are equal, so are the estimates (QLoRA reads the NF4 row too)
  const std::string rebuilt_text = to_json_text(rebuilt.value());
  const std::pair<const char*, const char*> jobs[] = {
      {"mixtral-8x7b", "qlora"}, {"llama-3.1-8b", "lora"}, {"llama-3.2-3b", "full"}};
  for (const auto& job : jobs) {
    const char* model = job.first;  // not a structured binding: C++17 lambdas (CAPTURE) cannot capture one
    const char* method = job.second;
    CAPTURE(method);
    Estimate a = estimate_with(fixture_text(), model, method);
    Estimate b = estimate_with(rebuilt_text, model, method);
    CHECK(a.step.calibrated);
    CHECK(a.max_batch.batch == b.max_batch.batch);
    CHECK(a.step.total_s == b.step.total_s);  // exactly: same numbers in, same arithmetic
    CHECK(a.throughput_low == b.throughput_low);
    CHECK(a.throughput_high == b.throughput_high);
  }
}

TEST_CASE("fingerprint: changes with what the estimator reads, not with what it ignores") {
  const Calibration cal = fixture();
  const std::string fp = calibration_fingerprint(cal);
  CHECK(fp.size() == 16);
  Calibration ignored = cal;
  ignored.meta.command_line = "something else";
  ignored.measurements.adamw.clear();
  ignored.measurements.moe_layer.clear();
  CHECK(calibration_fingerprint(ignored) == fp);
  Calibration used = cal;
  used.measurements.gemm[0].tflops.median *= 0.99;
  CHECK(calibration_fingerprint(used) != fp);
}

TEST_CASE("compact form and base64url: bad input is an error naming the field") {
  CHECK_FALSE(base64url_decode("ab$d", "cal").ok());
  CHECK(base64url_decode("ab$d", "cal").error().field == "cal");
  CHECK_FALSE(base64url_decode("abcde", "cal").ok());
  CHECK(base64url_encode("f") == "Zg");
  CHECK(base64url_encode("fo") == "Zm8");
  CHECK(base64url_encode("foo") == "Zm9v");
  CHECK(base64url_encode(std::string("\xfb\xff", 2)) == "-_8");
  nlohmann::json c = calibration_compact(fixture());
  nlohmann::json wrong = c;
  wrong["schema"] = "ftcost.calibration/2";
  CHECK(calibration_from_compact(wrong, "link").error().field == "schema");
  wrong = c;
  wrong["measurements"]["gemm"]["rows"][0].erase(0);
  auto e = calibration_from_compact(wrong, "link");
  REQUIRE_FALSE(e.ok());
  CHECK(e.error().field == "measurements.gemm.rows[0]");
  wrong = c;
  const auto& keys = c["measurements"]["gemm"]["keys"];
  std::size_t median = 0;
  while (median < keys.size() && keys[median] != "tflops_median") ++median;
  REQUIRE(median < keys.size());
  wrong["measurements"]["gemm"]["rows"][0][median] = -5.0;  // the file's checks apply
  auto neg = calibration_from_compact(wrong, "link");
  REQUIRE_FALSE(neg.ok());
  CAPTURE(neg.error().to_string());
  CHECK(neg.error().to_string().find("measurements.gemm[0]") != std::string::npos);
}
