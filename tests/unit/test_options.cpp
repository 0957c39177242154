// The job option table (core/app/src/options_table.cpp): every option is declared completely, round-trips
// through the JSON request, resolves with a sample value, and rejects empty and non-applying values by name.
#include "ftcost/api.hpp"
#include "ftcost/options.hpp"
#include "ftcost/suggest.hpp"
#include "option_samples.hpp"
#include "resolved_inputs.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <set>

using namespace ftcost;

TEST_CASE("option table: every option is declared completely") {
  std::set<std::string> keys;
  for (const auto& o : job_options()) {
    CAPTURE(o.key);
    CHECK(keys.insert(o.key).second);  // unique
    CHECK(!o.label.empty());
    CHECK(!o.help.empty());
    CHECK(!o.details.empty());
    CHECK(!o.group.empty());
    CHECK(o.apply);
    if (o.kind == OptionKind::choice || o.kind == OptionKind::toggle) CHECK(o.values.size() >= 2);
    if (o.kind == OptionKind::count || o.kind == OptionKind::real) {
      CHECK(o.lo < o.hi);
      CHECK(!o.unit.empty());
    }
    if (o.kind == OptionKind::id_or_path) CHECK(!o.id_list.empty());  // "files" for a path only
    if (o.required) CHECK(!o.required_message.empty());
    for (const auto& k : o.invalidates) CHECK(find_option(k) != nullptr);
  }
  // request_keys() is the table, in its order
  const auto& rk = request_keys();
  REQUIRE(rk.size() == job_options().size());
  for (std::size_t i = 0; i < rk.size(); ++i) CHECK(rk[i] == job_options()[i].key);
}

TEST_CASE("option table: each option's sample value round-trips through the JSON request and resolves") {
  const Database& db = Database::embedded();
  for (const auto& o : job_options()) {
    CAPTURE(o.key);
    const test::OptionSample s = test::option_sample(o, db);
    if (s.skip_reason) continue;  // files: covered by the CLI tests
    // JSON request (what window.ftcost.estimate takes) -> Request
    json j = json::object();
    for (const auto& [k, v] : s.request) j[k] = v;
    auto back = request_from_json(j);
    REQUIRE(back.ok());
    CHECK(back.value() == s.request);
    // resolves, and the option's value is what the estimate reports back
    auto in = resolve_request(s.request, db, nullptr, 20000);
    if (!in.ok()) FAIL_CHECK(in.error().to_string());
  }
}

TEST_CASE("help text: the id lists from the embedded file names equal the parsed database's") {
  // `ftcost <command> --help` lists dataset and stack ids without parsing the database (issue 35)
  const Database& db = Database::embedded();
  for (const char* list : {"datasets", "stacks"}) {
    CAPTURE(list);
    auto parsed = option_ids(list, db);
    std::sort(parsed.begin(), parsed.end());
    CHECK(Database::embedded_ids(list) == parsed);
    CHECK_FALSE(parsed.empty());
  }
  for (const auto& o : job_options())
    if (option_help_lists_ids(o))
      CHECK(option_help_text(o, &db) == option_help_text(o, Database::embedded_ids(o.id_list)));
}

TEST_CASE("option table: defaults pass the option's own checks") {
  const Database& db = Database::embedded();
  for (const auto& o : job_options()) {
    CAPTURE(o.key);
    if (o.required) continue;
    const test::OptionSample s = test::option_sample(o, db);
    Request base = s.request;
    base.erase(o.key);
    Resolution r = resolve_partial(base, db, nullptr, 20000);
    REQUIRE(r.ok);
    if (!o.default_rule || !option_applies(o, r, base, db)) continue;
    Inputs in = r.in;
    const FileReader none;
    ResolveState st{in, base, db, none};
    const DefaultValue d = o.default_rule(st);
    if (d.value.empty()) continue;
    CHECK(check_option_value(o, st, d.value).ok());
  }
}

TEST_CASE("option table: an empty value is an error naming the flag, not 'not given'") {
  const Database& db = Database::embedded();
  for (const auto& o : job_options()) {
    CAPTURE(o.key);
    test::OptionSample s = test::option_sample(o, db);
    s.request[o.key] = "";
    auto in = resolve_request(s.request, db, nullptr, 20000);
    REQUIRE(!in.ok());
    CHECK(in.error().field == o.flag());
    CHECK(in.error().message.find("empty") != std::string::npos);
  }
}

TEST_CASE("option table: a value that does not apply is checked first, then rejected or ignored by name") {
  const Database& db = Database::embedded();
  Request base = {{"model", "llama-3.1-8b"}, {"gpu", "a40"}, {"method", "full"}, {"seq", "512"}};
  struct Case {
    const char* key;
    const char* value;
    bool warns;
  };
  for (const Case& c :
       {Case{"quant", "nf4", false}, Case{"lora-rank", "8", false}, Case{"lora-targets", "attention", false},
        Case{"top-k", "1", false}, Case{"padding", "packing", false}, Case{"max-length", "2048", false},
        Case{"template-tokens", "4", false}, Case{"dataset", "cs15k", false}, Case{"moe", "dense", true}}) {
    const std::string key = c.key;
    CAPTURE(key);
    Request r = base;
    r[c.key] = c.value;
    auto in = resolve_request(r, db, nullptr, 20000);
    if (c.warns) {
      REQUIRE(in.ok());
      bool named = false;
      for (const auto& w : in->warnings) named = named || w.find(std::string("--") + c.key) == 0;
      CHECK(named);
    } else {
      REQUIRE(!in.ok());
      // --dataset with --seq: the pair is refused on --seq, which comes first
      CHECK(in.error().field == (key == "dataset" ? "--seq" : "--" + key));
    }
  }
  // a typo in a value that would not apply is reported as a typo
  Request r = base;
  r["moe"] = "bogus";
  auto in = resolve_request(r, db, nullptr, 20000);
  REQUIRE(!in.ok());
  CHECK(in.error().field == "--moe");
  CHECK(in.error().message.find("must be one of") != std::string::npos);
  // --provider with --price-per-hour: one price wins, so the pair is refused
  r = test::request("model=llama-3.1-8b gpu=a40 method=lora seq=512 provider=crusoe price-per-hour=2");
  in = resolve_request(r, db, nullptr, 20000);
  REQUIRE(!in.ok());
  CHECK(in.error().field == "--provider");
}

TEST_CASE("grad-accum: the optimizer's time is spread over the micro-batches, nothing else changes") {
  const Database& db = Database::embedded();
  Request r = test::request(
      "model=llama-3.1-8b gpu=a100-sxm4-80gb method=full seq=1024 batch=2 optimizer=adamw-mixed");
  auto one = estimate(resolve_request(r, db, nullptr, 20000).value(), db);
  r["grad-accum"] = "8";
  auto eight = estimate(resolve_request(r, db, nullptr, 20000).value(), db);
  REQUIRE(one.ok());
  REQUIRE(eight.ok());
  const auto opt = static_cast<std::size_t>(Stage::optimizer);
  const double opt1 = one->step.by_stage[opt];
  REQUIRE(opt1 > 0);
  CHECK(eight->step.by_stage[opt] == doctest::Approx(opt1 / 8));
  CHECK(eight->step.total_s == doctest::Approx(one->step.total_s - opt1 * 7.0 / 8.0));
  for (int s = 0; s < 3; ++s)
    CHECK(eight->step.by_stage[static_cast<std::size_t>(s)] ==
          one->step.by_stage[static_cast<std::size_t>(s)]);
  CHECK(eight->memory.total() == one->memory.total());
  CHECK(eight->throughput_qps > one->throughput_qps);
  const json j = estimate_to_json(eight.value());
  CHECK(j["inputs"]["grad_accum"] == 8);
  CHECK(j["effective_batch_size"] == 16);
}

TEST_CASE("an unknown id names the closest known one when one is close, and only then") {
  CHECK(closest_id("h100-sxm-80gb", {"h100-nvl", "h100-pcie-80gb", "h100-sxm5-80gb"}) == "h100-sxm5-80gb");
  CHECK(closest_id("Llama_3.1_8B", {"llama-3.1-70b", "llama-3.1-8b"}) == "llama-3.1-8b");  // spelling only
  CHECK(closest_id("mixtral", {"llama-3.1-8b", "mixtral-8x7b"}) == "mixtral-8x7b");        // unique prefix
  CHECK(closest_id("llama", {"llama-3.1-70b", "llama-3.1-8b"}).empty());                   // prefix of two
  CHECK(
      closest_id("a10", {"a100-pcie-40gb", "a10g", "a40"}).empty());  // too short to guess: a10g and a40 tie
  CHECK(closest_id("tpu-v5", {"a100-pcie-40gb", "h100-sxm5-80gb"}).empty());
  CHECK(closest_id("", {"a40"}).empty());
  CHECK(did_you_mean("zer03", {"zero2", "zero3"}) == " (did you mean \"zero3\"?)");
  CHECK(did_you_mean("unsloth", {"hf-trl-2025", "unsloth-2024q2", "unsloth-2024q4"}) ==
        " (did you mean one of \"unsloth-2024q2\", \"unsloth-2024q4\"?)");
  CHECK(did_you_mean("tpu", {"a40", "h100-nvl"}).empty());

  const Database& db = Database::embedded();
  Request r = {{"model", "llama-3.1-8b"}, {"gpu", "h100-sxm-80gb"}, {"method", "lora"}};
  auto in = resolve_request(r, db, nullptr, 20000);
  REQUIRE(!in.ok());
  CHECK(in.error().field == "--gpu");
  CHECK(
      in.error().message.find("unknown GPU \"h100-sxm-80gb\" (did you mean \"h100-sxm5-80gb\"?); known: ") !=
      std::string::npos);
  r = {{"model", "llama-3.1-8b"}, {"gpu", "a40"}, {"method", "lora"}, {"grad-acum", "4"}};
  in = resolve_request(r, db, nullptr, 20000);
  REQUIRE(!in.ok());
  CHECK(in.error().message.find("did you mean \"grad-accum\"?") != std::string::npos);
}
