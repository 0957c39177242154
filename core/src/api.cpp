#include "ftcost/api.hpp"

#include "ftcost/compare.hpp"
#include "ftcost/database.hpp"
#include "ftcost/estimate.hpp"
#include "ftcost/paper.hpp"
#include "ftcost/parallel.hpp"
#include "ftcost/plan.hpp"
#include "ftcost/plan_config.hpp"
#include "ftcost/run.hpp"
#include "ftcost/scaling.hpp"

#include <ctime>
#include <exception>

namespace ftcost::api {

namespace {
std::string error_json(const Error& e) {
  return json{{"error", {{"code", errc_name(e.code)}, {"field", e.field}, {"message", e.to_string()}}}}
      .dump();
}
}  // namespace

std::string estimate_json(const std::string& request_json, long today_days) {
  if (today_days < 0) today_days = static_cast<long>(std::time(nullptr) / 86400);
  try {
    auto req_doc = parse_json_text(request_json, "request", 1u << 20, 16);
    if (!req_doc.ok()) return error_json(req_doc.error());
    auto req = request_from_json(req_doc.value());
    if (!req.ok()) return error_json(req.error());
    const Database& db = Database::embedded();
    auto in = resolve_request(req.value(), db, nullptr, today_days);
    if (!in.ok()) return error_json(in.error());
    auto j = estimate_job_json(in.value(), db);
    if (!j.ok()) return error_json(j.error());
    return j.value().dump();
  } catch (const std::exception& ex) {
    return error_json(make_error(Errc::internal, "", ex.what()));
  }
}

std::string plan_json(const std::string& request_json, long today_days) {
  if (today_days < 0) today_days = static_cast<long>(std::time(nullptr) / 86400);
  try {
    auto req_doc = parse_json_text(request_json, "request", 1u << 20, 16);
    if (!req_doc.ok()) return error_json(req_doc.error());
    json doc = req_doc.value();
    if (!doc.is_object()) return error_json(make_error(Errc::wrong_type, "request", "must be a JSON object"));
    // The constraint keys as text (the CLI's form), the rest through the estimate's request parser.
    Request all;
    for (const auto& k : plan_constraint_keys()) {
      if (!doc.contains(k.key)) continue;
      const json& v = doc.at(k.key);
      std::string text;
      if (v.is_string()) {
        text = v.get<std::string>();
      } else if (v.is_number()) {
        text = v.dump();
      } else if (v.is_boolean() && k.key == "spot") {
        text = v.get<bool>() ? "on" : "off";
      } else if (v.is_array()) {
        for (const auto& x : v) {
          if (!x.is_string())
            return error_json(make_error(Errc::wrong_type, "--" + k.key, "must be a list of strings"));
          text += (text.empty() ? "" : ",") + x.get<std::string>();
        }
      } else {
        return error_json(make_error(Errc::wrong_type, "--" + k.key, "must be a string, number or list"));
      }
      all[k.key] = text;
      doc.erase(k.key);
    }
    for (const auto& k : plan_chosen_keys())
      if (doc.contains(k))
        return error_json(
            make_error(Errc::invalid_value, "--" + k, "is chosen by the plan (the search picks it)"));
    auto req = request_from_json(doc);
    if (!req.ok()) return error_json(req.error());
    for (const auto& [k, v] : req.value()) all[k] = v;
    const Database& db = Database::embedded();
    auto pr = parse_plan_request(all, db);
    if (!pr.ok()) return error_json(pr.error());
    auto r = plan(pr->job, pr->constraints, db, nullptr, today_days);
    if (!r.ok()) return error_json(r.error());
    return plan_to_json(r.value()).dump();
  } catch (const std::exception& ex) {
    return error_json(make_error(Errc::internal, "", ex.what()));
  }
}

std::string plan_config_json(const std::string& request_json, const std::string& stack, long today_days) {
  if (today_days < 0) today_days = static_cast<long>(std::time(nullptr) / 86400);
  try {
    auto req_doc = parse_json_text(request_json, "request", 1u << 20, 16);
    if (!req_doc.ok()) return error_json(req_doc.error());
    auto req = request_from_json(req_doc.value());
    if (!req.ok()) return error_json(req.error());
    auto pc = plan_config(req.value(), stack, Database::embedded(), nullptr, today_days);
    if (!pc.ok()) return error_json(pc.error());
    return plan_config_to_json(pc.value()).dump();
  } catch (const std::exception& ex) {
    return error_json(make_error(Errc::internal, "", ex.what()));
  }
}

std::string scaling_json(const std::string& request_json, long today_days) {
  if (today_days < 0) today_days = static_cast<long>(std::time(nullptr) / 86400);
  try {
    auto req_doc = parse_json_text(request_json, "request", 1u << 20, 16);
    if (!req_doc.ok()) return error_json(req_doc.error());
    json doc = req_doc.value();
    if (!doc.is_object()) return error_json(make_error(Errc::wrong_type, "request", "must be a JSON object"));
    std::vector<int> counts;  // a constraint of the series, not a job option
    if (doc.contains("counts")) {
      const json& v = doc.at("counts");
      std::string text;
      if (v.is_string()) {
        text = v.get<std::string>();
      } else if (v.is_array()) {
        for (const auto& c : v) {
          if (!c.is_number_integer())
            return error_json(
                make_error(Errc::wrong_type, "counts", "must hold whole numbers, got " + c.dump()));
          text += (text.empty() ? "" : ",") + c.dump();
        }
      } else {
        return error_json(make_error(Errc::wrong_type, "counts", "must be \"1,2,4,8\" or [1, 2, 4, 8]"));
      }
      auto parsed = parse_counts(text);
      if (!parsed.ok()) return error_json(parsed.error());
      counts = parsed.value();
      doc.erase("counts");
    }
    auto req = request_from_json(doc);
    if (!req.ok()) return error_json(req.error());
    auto s = scaling_series(req.value(), Database::embedded(), nullptr, today_days, counts);
    if (!s.ok()) return error_json(s.error());
    return scaling_to_json(s.value()).dump();
  } catch (const std::exception& ex) {
    return error_json(make_error(Errc::internal, "", ex.what()));
  }
}

std::string fit_run_json(const std::string& run_text, const std::string& stack_id) {
  try {
    const Database& db = Database::embedded();
    const StackProfile* stack = db.stack(stack_id);
    if (stack == nullptr)
      return error_json(make_error(Errc::unknown_id, "stack", "unknown stack \"" + stack_id + "\""));
    auto run = parse_run(run_text, "run", db);
    if (!run.ok()) return error_json(run.error());
    auto fit = fit_stack_to_runs({run.value()}, db, *stack);
    if (!fit.ok()) return error_json(fit.error());
    return fit->to_json().dump();
  } catch (const std::exception& ex) {
    return error_json(make_error(Errc::internal, "", ex.what()));
  }
}

std::string compare_json(const std::string& request_json, long today_days) {
  if (today_days < 0) today_days = static_cast<long>(std::time(nullptr) / 86400);
  try {
    auto req_doc = parse_json_text(request_json, "request", 1u << 20, 16);
    if (!req_doc.ok()) return error_json(req_doc.error());
    json doc = req_doc.value();
    if (!doc.is_object()) return error_json(make_error(Errc::wrong_type, "request", "must be a JSON object"));
    for (const char* k : {"gpu", "provider", "price-per-hour", "calibration", "run"})
      if (doc.contains(k))
        return error_json(
            make_error(Errc::invalid_value, k, "is not a compare option (every GPU and offer is shown)"));
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
      if (!st.ok()) return error_json(st.error());
    }
    auto req = request_from_json(doc);
    if (!req.ok()) return error_json(req.error());
    auto rows = compare_gpus(req.value(), Database::embedded(), nullptr, today_days);
    if (!rows.ok()) return error_json(rows.error());
    return compare_to_json(compare_view(rows.value(), view), view).dump();
  } catch (const std::exception& ex) {
    return error_json(make_error(Errc::internal, "", ex.what()));
  }
}

std::string models_json() {
  json a = json::array();
  for (const auto& [id, m] : Database::embedded().models()) {
    a.push_back(json{{"id", id},
                     {"name", m.display_name},
                     {"kind", m.kind()},
                     {"hf_repo", m.hf_repo},
                     {"total_params", m.params().total()},
                     {"active_params", m.active_params(m.moe.top_k)},
                     {"experts", m.moe.experts},
                     {"top_k", m.moe.top_k}});
  }
  return a.dump();
}

std::string gpus_json() {
  json a = json::array();
  for (const auto& [id, g] : Database::embedded().gpus()) {
    json j = g.to_json();
    j["sources"] = g.sources;
    a.push_back(j);
  }
  return a.dump();
}

std::string datasets_json() {
  json a = json::array();
  for (const auto& [id, d] : Database::embedded().datasets()) a.push_back(d.to_json());
  return a.dump();
}

std::string prices_json() {
  json a = json::array();
  for (const auto& p : Database::embedded().providers()) {
    for (const auto& o : p.offers) {
      a.push_back(json{{"provider", o.provider},
                       {"provider_id", o.provider_id},
                       {"gpu_id", o.gpu_id},
                       {"on_demand_usd_per_gpu_hour", o.on_demand_usd_per_gpu_hour},
                       {"spot_usd_per_gpu_hour", o.spot_usd_per_gpu_hour},
                       {"date", o.date},
                       {"source", o.source}});
    }
  }
  return a.dump();
}

std::string paper_table4_json() { return paper::table4_json().dump(); }

}  // namespace ftcost::api
