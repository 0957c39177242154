#include "ftcost/api.hpp"

#include "ftcost/compare.hpp"
#include "ftcost/database.hpp"
#include "ftcost/estimate.hpp"
#include "ftcost/job.hpp"
#include "ftcost/paper.hpp"
#include "ftcost/parallel.hpp"
#include "ftcost/plan.hpp"
#include "ftcost/plan_config.hpp"
#include "ftcost/run.hpp"
#include "ftcost/scaling.hpp"
#include "ftcost/validate.hpp"

#include <ctime>
#include <exception>

namespace ftcost::api {

namespace {

std::string error_json(const Error& e) {
  return json{{"error", {{"code", errc_name(e.code)}, {"field", e.field}, {"message", e.to_string()}}}}
      .dump();
}

// Runs one API call: its JSON, or the error object (also for an exception: the browser must get an answer).
template <class Body>
std::string answer(Body&& body) {
  try {
    Result<json> j = body();
    if (!j.ok()) return error_json(j.error());
    return j.value().dump();
  } catch (const std::exception& ex) {
    return error_json(make_error(Errc::internal, "", ex.what()));
  }
}

long today_or_now(long today_days) {
  return today_days >= 0 ? today_days : static_cast<long>(std::time(nullptr) / 86400);
}

// The request text as JSON (at most 1 MiB, nested at most 16 deep).
Result<json> request_doc(const std::string& text) { return parse_json_text(text, "request", 1u << 20, 16); }

// The request text as a JSON object, for calls that take keys out of it before the job's own keys are read.
Result<json> request_object(const std::string& text) {
  FTCOST_TRY(doc, request_doc(text));
  if (!doc.is_object()) return make_error(Errc::wrong_type, "request", "must be a JSON object");
  return doc;
}

// The request text as the job's request (the `ftcost estimate` keys).
Result<Request> job_request(const std::string& text) {
  FTCOST_TRY(doc, request_doc(text));
  return request_from_json(doc);
}

// A JSON array in the CLI's comma-separated form: elements `item_ok` accepts, strings as they are, numbers
// as JSON writes them; `item_error(x)` says what is wrong with one it does not.
template <class ItemOk, class ItemError>
Result<std::string> list_text(const json& list, const std::string& field, ItemOk item_ok,
                              ItemError item_error) {
  std::string text;
  for (const auto& x : list) {
    if (!item_ok(x)) return make_error(Errc::wrong_type, field, item_error(x));
    if (!text.empty()) text += ",";
    text += x.is_string() ? x.get<std::string>() : x.dump();
  }
  return text;
}

// A plan constraint's value as text (the CLI's form).
Result<std::string> constraint_text(const json& v, const std::string& key) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number()) return v.dump();
  if (v.is_boolean() && key == "spot") return std::string(v.get<bool>() ? "on" : "off");
  if (v.is_array())
    return list_text(
        v, "--" + key, [](const json& x) { return x.is_string(); },
        [](const json&) { return std::string("must be a list of strings"); });
  return make_error(Errc::wrong_type, "--" + key, "must be a string, number or list");
}

// The GPU counts of a scaling series: "1,2,4,8" or [1, 2, 4, 8].
Result<std::vector<int>> counts_of(const json& v) {
  std::string text;
  if (v.is_string()) {
    text = v.get<std::string>();
  } else if (v.is_array()) {
    FTCOST_TRY(joined, list_text(
                           v, "counts", [](const json& c) { return c.is_number_integer(); },
                           [](const json& c) { return "must hold whole numbers, got " + c.dump(); }));
    text = joined;
  } else {
    return make_error(Errc::wrong_type, "counts", "must be \"1,2,4,8\" or [1, 2, 4, 8]");
  }
  return parse_counts(text);
}

}  // namespace

std::string estimate_json(const std::string& request_json, long today_days) {
  return estimate_json(request_json, FileReader(), today_days);
}

std::string estimate_json(const std::string& request_json, const FileReader& reader, long today_days) {
  today_days = today_or_now(today_days);
  return answer([&]() -> Result<json> {
    FTCOST_TRY(req, job_request(request_json));
    const Database& db = Database::embedded();
    FTCOST_TRY(in, resolve_request(req, db, reader, today_days));
    return estimate_job_json(in, db);
  });
}

std::string plan_json(const std::string& request_json, long today_days) {
  return plan_json(request_json, FileReader(), today_days);
}

std::string plan_json(const std::string& request_json, const FileReader& reader, long today_days) {
  today_days = today_or_now(today_days);
  return answer([&]() -> Result<json> {
    FTCOST_TRY(doc, request_object(request_json));
    // The constraint keys as text (the CLI's form), the rest through the estimate's request parser.
    Request all;
    for (const auto& k : plan_constraint_keys()) {
      if (!doc.contains(k.key)) continue;
      FTCOST_TRY(text, constraint_text(doc.at(k.key), k.key));
      all[k.key] = text;
      doc.erase(k.key);
    }
    for (const auto& k : plan_chosen_keys())
      if (doc.contains(k))
        return make_error(Errc::invalid_value, "--" + k, "is chosen by the plan (the search picks it)");
    FTCOST_TRY(req, request_from_json(doc));
    for (const auto& [k, v] : req) all[k] = v;
    const Database& db = Database::embedded();
    FTCOST_TRY(pr, parse_plan_request(all, db));
    FTCOST_TRY(r, plan(pr.job, pr.constraints, db, reader, today_days));
    return plan_to_json(r);
  });
}

std::string plan_config_json(const std::string& request_json, const std::string& stack, long today_days) {
  return plan_config_json(request_json, stack, FileReader(), today_days);
}

std::string plan_config_json(const std::string& request_json, const std::string& stack,
                             const FileReader& reader, long today_days) {
  today_days = today_or_now(today_days);
  return answer([&]() -> Result<json> {
    FTCOST_TRY(req, job_request(request_json));
    FTCOST_TRY(pc, plan_config(req, stack, Database::embedded(), reader, today_days));
    return plan_config_to_json(pc);
  });
}

std::string scaling_json(const std::string& request_json, long today_days) {
  return scaling_json(request_json, FileReader(), today_days);
}

std::string scaling_json(const std::string& request_json, const FileReader& reader, long today_days) {
  today_days = today_or_now(today_days);
  return answer([&]() -> Result<json> {
    FTCOST_TRY(doc, request_object(request_json));
    std::vector<int> counts;  // a constraint of the series, not a job option
    if (doc.contains("counts")) {
      FTCOST_TRY(parsed, counts_of(doc.at("counts")));
      counts = parsed;
      doc.erase("counts");
    }
    FTCOST_TRY(req, request_from_json(doc));
    FTCOST_TRY(s, scaling_series(req, Database::embedded(), reader, today_days, counts));
    return scaling_to_json(s);
  });
}

std::string fit_run_json(const std::string& run_text, const std::string& stack_id) {
  return answer([&]() -> Result<json> {
    const Database& db = Database::embedded();
    const StackProfile* stack = db.stack(stack_id);
    if (stack == nullptr) return make_error(Errc::unknown_id, "stack", "unknown stack \"" + stack_id + "\"");
    FTCOST_TRY(run, parse_run(run_text, "run", db));
    FTCOST_TRY(fit, fit_stack_to_runs({run}, db, *stack));
    return fit.to_json();
  });
}

std::string compare_json(const std::string& request_json, long today_days) {
  return compare_json(request_json, FileReader(), today_days);
}

std::string compare_json(const std::string& request_json, const FileReader& reader, long today_days) {
  today_days = today_or_now(today_days);
  return answer([&]() -> Result<json> {
    FTCOST_TRY(doc, request_object(request_json));
    for (const char* k : {"gpu", "provider", "price-per-hour", "calibration", "run"})
      if (doc.contains(k))
        return make_error(Errc::invalid_value, k, "is not a compare option (every GPU and offer is shown)");
    CompareView view;
    // on/off switches of the view (they are not estimate keys; "spot" is, but means "include spot" here)
    auto take_switch = [&doc](const char* key, bool& dst) -> Status {
      if (!doc.contains(key)) return Ok{};
      const json& v = doc.at(key);
      if (v.is_boolean()) {
        dst = v.get<bool>();
      } else if (v.is_string() && (v.get<std::string>() == "on" || v.get<std::string>() == "off")) {
        dst = v.get<std::string>() == "on";
      } else {
        return make_error(Errc::invalid_value, key, "must be true/false or \"on\"/\"off\"");
      }
      doc.erase(key);
      return Ok{};
    };
    for (const auto& sw : {std::pair<const char*, bool*>{"spot", &view.spot},
                           {"offers", &view.offers},
                           {"fits-only", &view.fits_only}}) {
      auto st = take_switch(sw.first, *sw.second);
      if (!st.ok()) return st.error();
    }
    FTCOST_TRY(req, request_from_json(doc));
    FTCOST_TRY(rows, compare_gpus(req, Database::embedded(), reader, today_days));
    return compare_to_json(compare_view(rows, view), view);
  });
}

json models_list(const Database& db) {
  json a = json::array();
  for (const auto& [id, m] : db.models()) {
    a.push_back(json_object({"id", id}, {"name", m.display_name}, {"kind", m.kind()}, {"hf_repo", m.hf_repo},
                            {"total_params", m.params().total()},
                            {"active_params", m.active_params(m.moe.top_k)}, {"experts", m.moe.experts},
                            {"top_k", m.moe.top_k}, {"layers", m.layers()}));
  }
  return a;
}

json gpus_list(const Database& db) {
  json a = json::array();
  for (const auto& [id, g] : db.gpus()) {
    json j = g.to_json();
    j["sources"] = g.sources;
    j["price_offers"] = db.offers_for(id).size();
    a.push_back(j);
  }
  return a;
}

std::string models_json() { return models_list(Database::embedded()).dump(); }

std::string gpus_json() { return gpus_list(Database::embedded()).dump(); }

std::string datasets_json() {
  json a = json::array();
  for (const auto& [id, d] : Database::embedded().datasets()) a.push_back(d.to_json());
  return a.dump();
}

std::string prices_json() {
  json a = json::array();
  for (const auto& p : Database::embedded().providers()) {
    for (const auto& o : p.offers) {
      a.push_back(json_object({"provider", o.provider}, {"provider_id", o.provider_id}, {"gpu_id", o.gpu_id},
                              {"on_demand_usd_per_gpu_hour", o.on_demand_usd_per_gpu_hour},
                              {"spot_usd_per_gpu_hour", o.spot_usd_per_gpu_hour}, {"date", o.date},
                              {"source", o.source}));
    }
  }
  return a.dump();
}

std::string paper_table4_json() {
  return paper_table4_with_predictions_json(Database::embedded(), 15000, 10).dump();
}

}  // namespace ftcost::api
