// The field lists of the database formats (core/spec/include/ftcost/fields.hpp) and the reader the GPU and
// price loaders use: errors name the full JSON path and the problem, with the range and unit from the list.
#include "ftcost/calibration.hpp"
#include "ftcost/database.hpp"
#include "ftcost/dataset.hpp"
#include "ftcost/fields.hpp"
#include "ftcost/gpu.hpp"
#include "ftcost/prices.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <set>
#include <string>

using namespace ftcost;

namespace {

json shipped(const std::string& suffix) {
  for (const auto& [name, text] : Database::embedded_files())
    if (name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      return json::parse(text);
  return json();
}

}  // namespace

TEST_CASE("field lists: every list is well formed") {
  for (const auto& name : field_list_names()) {
    CAPTURE(name);
    const FieldList* l = field_list(name);
    REQUIRE(l != nullptr);
    CHECK(l->name == name);
    CHECK(l->format.rfind("ftcost.", 0) == 0);
    std::set<std::string> keys;
    for (const auto& f : l->fields) {
      CAPTURE(f.key);
      CHECK(keys.insert(f.key).second);  // each key once
      CHECK(!f.help.empty());
      if (f.needed) CHECK(f.required);  // what the loader needs, a database file must have
      if (f.kind == FieldKind::choice) CHECK(!f.values.empty());
      if (f.has_min() && f.has_max()) CHECK(f.min < f.max);
      if (!f.members.empty()) {
        CHECK(field_list(f.members) != nullptr);
        CHECK((f.kind == FieldKind::object || (f.kind == FieldKind::array && f.items == FieldKind::object)));
      }
    }
  }
  CHECK(field_list("no-such-format") == nullptr);
}

TEST_CASE("field lists: value problems name the kind, the range with its unit, the allowed values") {
  const FieldList& gpu = *field_list("gpu");
  const Field& bw = *gpu.find("memory_bandwidth_gbps");
  CHECK(field_value_problem(bw, json(696)).empty());
  CHECK(field_value_problem(bw, json(-696)) == "must be between 10 and 100000 GB/s, got -696");
  CHECK(field_value_problem(bw, json("696")) == "must be a number, got string");
  CHECK(field_value_problem(bw, json()) == "must be a number, got null");
  const Field& sms = *gpu.find("sm_count");
  CHECK(field_value_problem(sms, json()).empty());  // nullable
  CHECK(field_value_problem(sms, json(84.5)) == "must be a whole number, got 84.5");
  CHECK(field_value_problem(sms, json("84")) == "must be a whole number or null, got string");
  const Field& topo = *field_list("gpu.interconnect")->find("nvlink_topology");
  CHECK(field_value_problem(topo, json("ring")) ==
        R"(must be "switch", "mesh", "bridge" or null, got "ring")");
  const Field& od = *field_list("prices.offers[]")->find("on_demand_usd_per_gpu_hour");
  CHECK(field_value_problem(od, json(0)) == "must be > 0 and at most 1000 USD per GPU-hour, got 0");
  CHECK(field_value_problem(od, json(0.01)).empty());
}

TEST_CASE("GPU loader: errors name the full JSON path and come from the field list") {
  const json base = shipped("gpus/a40.json");
  REQUIRE(base.is_object());
  REQUIRE(parse_gpu(base, "a40.json").ok());
  struct Case {
    const char* what;
    json value;
    std::vector<std::string> at;  // the JSON path to change
    const char* field;
    Errc code;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"bandwidth below range",
       -696,
       {"memory_bandwidth_gbps"},
       "memory_bandwidth_gbps",
       Errc::out_of_range,
       "must be between 10 and 100000 GB/s, got -696"},
      {"a peak as text",
       "150",
       {"dense_tflops", "bf16"},
       "dense_tflops.bf16",
       Errc::wrong_type,
       "must be a number or null, got string"},
      {"a fractional SM count", 84.5, {"sm_count"}, "sm_count", Errc::wrong_type, "must be a whole number"},
      {"an unknown topology",
       "ring",
       {"interconnect", "nvlink_topology"},
       "interconnect.nvlink_topology",
       Errc::invalid_value,
       "\"switch\", \"mesh\", \"bridge\" or null"},
      {"PCIe lanes above range",
       64,
       {"interconnect", "pcie_lanes"},
       "interconnect.pcie_lanes",
       Errc::out_of_range,
       "must be between 1 and 32, got 64"},
      {"peer-to-peer as text",
       "yes",
       {"interconnect", "pcie_p2p"},
       "interconnect.pcie_p2p",
       Errc::wrong_type,
       "true, false or null"},
      {"no memory", nullptr, {"memory_gib"}, "memory_gib", Errc::missing_field, "required field is missing"},
      {"no peaks",
       nullptr,
       {"dense_tflops"},
       "dense_tflops",
       Errc::missing_field,
       "required field is missing"},
      {"sources empty", json::array(), {"sources"}, "sources", Errc::missing_field, "at least 1 item"},
      {"a source not text",
       json::array({"https://x.example/a", 3}),
       {"sources"},
       "sources[1]",
       Errc::wrong_type,
       "must be a string, got number"},
      {"another format",
       "ftcost.gpu/2",
       {"schema"},
       "schema",
       Errc::schema_mismatch,
       "expected \"ftcost.gpu/1\""},
  };
  for (const auto& c : cases) {
    CAPTURE(c.what);
    json g = base;
    json* at = &g;
    for (const auto& k : c.at) at = &(*at)[k];
    *at = c.value;
    auto r = parse_gpu(g, "a40.json");
    REQUIRE_FALSE(r.ok());
    CAPTURE(r.error().to_string());
    CHECK(r.error().field == c.field);
    CHECK(r.error().code == c.code);
    CHECK(r.error().message.find(c.message) != std::string::npos);
    CHECK(r.error().exit_code() == 2);
  }
  // What the loader does not need may be left out (a user's own GPU file): the fallbacks are unchanged.
  json minimal = {{"id", "my-gpu"},
                  {"name", "My GPU"},
                  {"memory_gib", 24},
                  {"memory_bandwidth_gbps", 900},
                  {"dense_tflops", {{"bf16", 100}}},
                  {"sources", {"my own measurements"}}};
  auto m = parse_gpu(minimal, "my.json");
  REQUIRE(m.ok());
  CHECK(m->interconnect.pcie_lanes == 16);
  CHECK(m->interconnect.pcie_p2p == -1);
  CHECK(m->sm_count == 0);
  CHECK(m->usable_memory_estimated());
}

TEST_CASE("price loader: errors name the offer and the key") {
  const json base = shipped("prices/aws.json");
  REQUIRE(base.is_object());
  REQUIRE(parse_prices(base, "aws.json").ok());
  auto error_of = [&](const std::function<void(json&)>& change) {
    json p = base;
    change(p);
    auto r = parse_prices(p, "aws.json");
    REQUIRE_FALSE(r.ok());
    return r.error();
  };
  Error e = error_of([](json& p) { p["offers"][0]["network"]["kind"] = "token-ring"; });
  CHECK(e.field == "offers[0].network.kind");
  CHECK(e.message == R"(must be "infiniband", "roce" or "ethernet", got "token-ring")");
  e = error_of([](json& p) { p["offers"][1]["on_demand_usd_per_gpu_hour"] = -1.1; });
  CHECK(e.field == "offers[1].on_demand_usd_per_gpu_hour");
  CHECK(e.code == Errc::out_of_range);
  e = error_of([](json& p) { p["offers"][1]["gpu_count"] = 2.5; });
  CHECK(e.field == "offers[1].gpu_count");
  CHECK(e.message == "must be a whole number, got 2.5");
  e = error_of([](json& p) { p["currency"] = "EUR"; });
  CHECK(e.field == "currency");
  CHECK(e.message == R"(must be "USD", got "EUR": only USD prices are supported)");
  e = error_of([](json& p) { p["offers"][2].erase("source"); });
  CHECK(e.field == "offers[2].source");
  CHECK(e.code == Errc::missing_field);
  e = error_of([](json& p) { p["offers"][0]["date"] = "2025/02/10"; });
  CHECK(e.field == "offers[0].date");
}

TEST_CASE("field reader: a key outside the list is a programming error, not a silent default") {
  const json obj = {{"x", 1}};
  const FieldReader r(obj, *field_list("gpu.interconnect"), "interconnect");
  auto n = r.number("nvlink_speed");
  REQUIRE_FALSE(n.ok());
  CHECK(n.error().code == Errc::internal);
  auto s = r.string("pcie_gen");  // a number field read as a string
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().code == Errc::internal);
}

TEST_CASE(
    "calibration writer: the meta, device and conditions sections have their field lists' keys, in order") {
  Calibration cal;
  cal.conditions.other_processes = 0;
  const json j = to_json(cal);
  const std::vector<std::pair<const char*, const json*>> sections = {
      {"calibration.meta", &j.at("meta")},
      {"calibration.device", &j.at("device")},
      {"calibration.conditions", &j.at("conditions")},
      {"calibration.conditions.sample", &j.at("conditions").at("start")},
      {"calibration.conditions.sample", &j.at("conditions").at("end")}};
  for (const auto& section : sections) {
    // Not a structured binding: doctest's CAPTURE lambda may not capture one in C++17 (em++'s clang 14
    // refuses).
    const char* list = section.first;
    const json* obj = section.second;
    CAPTURE(list);
    const FieldList* l = field_list(list);
    REQUIRE(l != nullptr);
    std::vector<std::string> want;
    for (const auto& f : l->fields) want.push_back(f.key);
    std::vector<std::string> got;
    // to_json returns a plain (sorted) json; the text keeps the writer's order
    for (const auto& [k, v] : obj->items()) got.push_back(k);
    std::vector<std::string> want_sorted = want;
    std::sort(want_sorted.begin(), want_sorted.end());
    CHECK(got == want_sorted);
  }
  // The text the calibrator writes keeps the list's order.
  const std::string text = to_json_text(cal);
  const FieldList& meta = *field_list("calibration.meta");
  std::size_t last = 0;
  for (const auto& f : meta.fields) {
    const std::size_t at = text.find("\"" + f.key + "\":", text.find("\"meta\""));
    CAPTURE(f.key);
    REQUIRE(at != std::string::npos);
    CHECK(at > last);
    last = at;
  }
}

TEST_CASE("dataset loader: reads through its field list") {
  const json base = shipped("datasets/cs15k.json");
  REQUIRE(base.is_object());
  REQUIRE(parse_dataset(base, "cs15k.json").ok());
  auto error_of = [&](const char* key, const json& value) {
    json d = base;
    d[key] = value;
    auto r = parse_dataset(d, "cs15k.json");
    REQUIRE_FALSE(r.ok());
    return r.error();
  };
  Error e = error_of("queries", 10.5);
  CHECK(e.field == "queries");
  CHECK(e.message == "must be a whole number, got 10.5");
  e = error_of("template_tokens", 200000);
  CHECK(e.field == "template_tokens");
  CHECK(e.message == "must be between 0 and 100000 tokens, got 200000");
  e = error_of("quantiles", json::array({json::array({0, 10})}));
  CHECK(e.field == "quantiles");
  CHECK(e.message == "needs at least 2 items");
  e = error_of("schema", "ftcost.dataset/2");
  CHECK(e.code == Errc::schema_mismatch);
}
