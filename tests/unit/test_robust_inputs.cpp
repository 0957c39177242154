// Regression tests for the core's part of issue #15 (input-handling defects): Jamba offsets (item 5), `fit`
// points and results (items 6, 7), the GPU JSON loader's id and text rules (item 8), reference rows
// (item 11). The command line's part (files, outputs, stdout) is in tests/cli and tests/robust.
#include "ftcost/database.hpp"
#include "ftcost/gpu.hpp"
#include "ftcost/model.hpp"
#include "ftcost/paper.hpp"
#include "ftcost/validate.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

using namespace ftcost;

namespace {

json jamba_config() {
  const auto files = Database::embedded_files();
  for (const auto& [name, text] : files)
    if (name.find("jamba-v0.1.json") != std::string::npos) return json::parse(text).at("config");
  FAIL("jamba-v0.1.json is not in the embedded database");
  return json();
}

}  // namespace

TEST_CASE("Jamba: an offset not smaller than its period is refused, as transformers' JambaConfig does") {
  // transformers JambaConfig._check_supported_offset (docs/sources/transformers-jamba-config.md)
  const json base = jamba_config();
  REQUIRE(parse_model_config(base, "jamba").ok());
  for (const auto& keys : {std::pair<std::string, std::string>{"attn_layer_offset", "attn_layer_period"},
                           {"expert_layer_offset", "expert_layer_period"}}) {
    const std::string key = keys.first,
                      period_key = keys.second;  // (doctest's CAPTURE cannot take a binding)
    CAPTURE(key);
    const std::int64_t period = base.at(period_key).get<std::int64_t>();
    for (std::int64_t off : {period, period + 1, 3 * period}) {
      json c = base;
      c[key] = off;
      auto r = parse_model_config(c, "jamba");
      REQUIRE_FALSE(r.ok());
      CHECK(r.error().field == "config." + key);
      CHECK(r.error().message.find(period_key) != std::string::npos);
    }
    json ok = base;
    ok[key] = period - 1;
    CHECK(parse_model_config(ok, "jamba").ok());
  }
}

TEST_CASE("Jamba: missing offsets take transformers' defaults (attention 4, expert 1)") {
  // 3 layers tell the defaults apart: offsets 4 and 1 give no attention layer and one expert layer (layer 1);
  // offsets 0 and 0 would give one attention layer (0) and two expert layers (0, 2).
  json explicit_offsets = jamba_config();  // the preset gives 4 and 1 explicitly
  explicit_offsets["num_hidden_layers"] = 3;
  json c = explicit_offsets;
  c.erase("attn_layer_offset");
  c.erase("expert_layer_offset");
  auto a = parse_model_config(c, "jamba");
  auto b = parse_model_config(explicit_offsets, "jamba");
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(a->layers_with(Mixer::attention) == 0);
  CHECK(a->layers_with(Ffn::moe) == 1);
  CHECK(a->layers_with(Mixer::attention) == b->layers_with(Mixer::attention));
  CHECK(a->layers_with(Ffn::moe) == b->layers_with(Ffn::moe));
  CHECK(a->params().total() == b->params().total());
  // with period 2 a missing attention offset (4) is refused, as in transformers
  c["attn_layer_period"] = 2;
  CHECK_FALSE(parse_model_config(c, "jamba").ok());
}

TEST_CASE("fit points: batch follows --batch's rule; a byte-order mark is skipped") {
  using paper::parse_points_csv;
  for (const char* b :
       {"18446744073709551616", "1e300", "0x10", "2.5", "-2", "+2", "0", "16777217", " ", "1e3"}) {
    CAPTURE(b);
    auto r = parse_points_csv(std::string("batch,throughput\n1,0.3\n") + b + ",0.6\n", "p.csv");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().field.find("batch") != std::string::npos);
  }
  CHECK(parse_points_csv("batch,throughput\n1,0.3\n16777216,0.6\n", "p.csv").ok());
  CHECK(parse_points_csv("batch,throughput\n1,0.3\n0000000000002,0.6\n", "p.csv").ok());  // as --batch
  auto bom = parse_points_csv(
      "\xEF\xBB\xBF"
      "batch,throughput\r\n1,0.3\r\n2,0.6\r\n",
      "p.csv");
  REQUIRE(bom.ok());
  CHECK(bom->size() == 2);
  // a BOM anywhere else is not skipped
  CHECK_FALSE(parse_points_csv("batch,throughput\n\xEF\xBB\xBF"
                               "1,0.3\n2,0.6\n",
                               "p.csv")
                  .ok());
  for (const char* t : {"1e308", "1e7", "0x1p3", "inf", "nan", "0", "-1"}) {
    CAPTURE(t);
    auto r = parse_points_csv(std::string("batch,throughput\n1,0.3\n2,") + t + "\n", "p.csv");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().to_string().find("throughput") != std::string::npos);
  }
}

TEST_CASE("fit: huge or tiny inputs never give a non-finite result") {
  using paper::Point;
  // Through the API (no CSV): finite but huge throughput is refused, not turned into NaN.
  auto huge = paper::fit_eq2({Point{1, 1e308, 0.25}, Point{2, 1e308, 0.25}}, 1.8);
  REQUIRE_FALSE(huge.ok());
  CHECK(huge.error().field == "points.throughput");
  for (double c3 : {0.0, -1.0, 1e-10, 1e308, std::nan("")}) {
    CAPTURE(c3);
    auto r = paper::fit_eq2({Point{1, 0.3, 0.25}, Point{2, 0.6, 0.25}}, c3);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().field == "c3");
    CHECK(r.error().message.find("1e12") != std::string::npos);
  }
  // Every valid input at the edges: finite or an error.
  for (double c3 : {paper::kMinC3, 1.8, paper::kMaxC3}) {
    for (double tp : {1e-300, 1e-9, 1.0, paper::kMaxPointThroughput}) {
      for (double b2 : {2.0, static_cast<double>(paper::kMaxPointBatch)}) {
        CAPTURE(c3);
        CAPTURE(tp);
        CAPTURE(b2);
        auto r = paper::fit_eq2({Point{1, tp / 2, 0.001}, Point{b2, tp, 1.0}}, c3);
        if (r.ok()) {
          CHECK(std::isfinite(r->c2));
          CHECK(std::isfinite(r->c4));
          CHECK(std::isfinite(r->rmse));
        } else {
          CHECK(r.error().code == Errc::fit_failed);
        }
      }
    }
  }
}

TEST_CASE("GPU JSON loader: the id pattern and printable text of db check") {
  const Database& db = Database::embedded();
  const GpuSpec* a40 = db.gpu("a40");
  REQUIRE(a40 != nullptr);
  json base;
  for (const auto& [name, text] : Database::embedded_files())
    if (name.find("gpus/a40.json") != std::string::npos) base = json::parse(text);
  REQUIRE(base.is_object());
  base["id"] = "my-a40";
  REQUIRE(parse_gpu(base, "g.json").ok());
  auto bad = [&](const char* key, const json& value, const std::string& field) {
    CAPTURE(key);
    json g = base;
    g[key] = value;
    auto r = parse_gpu(g, "g.json");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().field == field);
    CHECK(r.error().exit_code() == 2);
  };
  bad("id", "", "id");
  bad("id", "../../etc/passwd", "id");
  bad("id", std::string(100000, 'a'), "id");
  bad("id", "A40", "id");
  bad("id", "-a40", "id");
  bad("id", "a40\x1b[2J", "id");
  bad("name", "A40\x1b[2J\x1b[H", "name");
  bad("name",
      "A40\xC2\x9B"
      "2J",
      "name");  // C1 CSI
  bad("name", "A40\nwarning: fake", "name");
  bad("name", "", "name");
  bad("vendor", "NVIDIA\x07", "vendor");
  bad("sources", json::array({"https://example.com/\x1b]0;x\x07"}), "sources[0]");  // the item, by index
  json ok = base;
  ok["name"] = "A40 (48 GB, \xC3\xA9t\xC3\xA9)";  // UTF-8 text is fine
  CHECK(parse_gpu(ok, "g.json").ok());
}

TEST_CASE(
    "reference rows: empty rows, empty fields, unknown metrics, duplicate ids and huge values are refused") {
  const json row = {{"id", "r1"},
                    {"role", "training"},
                    {"group", "g"},
                    {"metric", "throughput_queries_per_s"},
                    {"measured", 0.5},
                    {"source", "a test row"},
                    {"request", {{"model", "mixtral-8x7b"}, {"gpu", "a40"}, {"method", "qlora"}}}};
  auto doc = [](const json& rows) { return json{{"schema", "ftcost.reference/1"}, {"rows", rows}}.dump(); };
  REQUIRE(parse_reference(doc(json::array({row})), "f.json").ok());
  auto bad = [&](const json& rows, const std::string& field_part) {
    auto r = parse_reference(doc(rows), "f.json");
    REQUIRE_FALSE(r.ok());
    CAPTURE(r.error().to_string());
    CHECK(r.error().exit_code() == 2);
    CHECK(r.error().field.find(field_part) != std::string::npos);
  };
  bad(json::array(), "rows");
  bad(json::array({json::object()}), "id");
  bad(json::array({json(1)}), "rows[0]");
  for (const char* k : {"id", "role", "group", "metric", "source"}) {
    json r = row;
    r[k] = " ";
    bad(json::array({r}), k);
  }
  for (double m : {1e308, 1e10, 0.0, -1.0}) {
    json r = row;
    r["measured"] = m;
    bad(json::array({r}), "measured");
  }
  bad(json::array({row, row}), "rows[1].id");
  // across files
  auto a = parse_reference(doc(json::array({row})), "a.json");
  auto b = parse_reference(doc(json::array({row})), "b.json");
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  std::vector<RefRow> both = a.value();
  both.insert(both.end(), b->begin(), b->end());
  CHECK_FALSE(check_unique_ids(both).ok());
  CHECK(check_unique_ids(a.value()).ok());
}

TEST_CASE("reference rows: a row whose request is wrong fails as bad input, not as an internal error") {
  RefRow r;
  r.id = "x";
  r.role = "training";
  r.metric = "throughput_queries_per_s";
  r.measured = 1;
  r.request = {{"model", "nope"}, {"gpu", "a40"}, {"method", "qlora"}};
  std::vector<RefRow> rows{r};
  auto res = evaluate(rows, Database::embedded());
  REQUIRE(res.size() == 1);
  CHECK_FALSE(res[0].error.empty());
  CHECK(res[0].code == Errc::unknown_id);
  // a metric ftcost does not predict is bad input too
  rows[0].request = {{"model", "mixtral-8x7b"}, {"gpu", "a40"}, {"method", "qlora"}};
  rows[0].metric = "bogus";
  auto res2 = evaluate(rows, Database::embedded());
  REQUIRE(res2.size() == 1);
  CHECK(res2[0].code == Errc::invalid_value);
  CHECK(res2[0].error.find("metric") != std::string::npos);
}
