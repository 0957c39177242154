#include "ftcost/api.hpp"

#include "ftcost/compare.hpp"
#include "ftcost/database.hpp"
#include "ftcost/estimate.hpp"
#include "ftcost/paper.hpp"
#include "ftcost/parallel.hpp"
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
    int max_gpus = 0;  // a constraint of compare, not a job option
    if (doc.contains("max-gpus")) {
      const json& v = doc.at("max-gpus");
      if (!v.is_number_integer() || v.get<long long>() < 1 || v.get<long long>() > 4096)
        return error_json(make_error(Errc::out_of_range, "max-gpus",
                                     "must be a whole number from 1 to 4096, got " + v.dump()));
      max_gpus = v.get<int>();
      doc.erase("max-gpus");
    }
    auto req = request_from_json(doc);
    if (!req.ok()) return error_json(req.error());
    auto rows = compare_gpus(req.value(), Database::embedded(), nullptr, today_days, {}, max_gpus);
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
