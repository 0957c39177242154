#include "engine.hpp"

#include "calibration_check.hpp"
#include "ftcost/job.hpp"
#include "ftcost/parallel.hpp"
#include "json_get.hpp"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <exception>

namespace ftcost::web {

namespace {

json error_json(const Error& e) {
  return json{{"error", {{"code", errc_name(e.code)}, {"field", e.field}, {"message", e.to_string()}}}};
}

std::vector<std::string> name_tokens(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char ch : s + " ") {
    char c = (ch >= 'A' && ch <= 'Z') ? static_cast<char>(ch - 'A' + 'a') : ch;
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
      cur += c;
    } else if (!cur.empty()) {
      if (cur != "nvidia" && cur != "geforce" && cur != "tesla" && cur != "amd" && cur != "instinct")
        out.push_back(cur);
      cur.clear();
    }
  }
  return out;
}

}  // namespace

std::string guess_gpu(const std::string& device_name, double memory_gib, const Database& db) {
  const auto dev = name_tokens(device_name);
  if (dev.empty()) return {};
  auto has = [&](const std::string& t) { return std::find(dev.begin(), dev.end(), t) != dev.end(); };
  std::string best;
  double best_score = 0;
  for (const auto& [id, g] : db.gpus()) {
    const auto ids = name_tokens(id);
    if (ids.empty() || !has(ids.front())) continue;  // the model number must match ("a100", "4090", ...)
    double score = 10;
    for (std::size_t i = 1; i < ids.size(); ++i) {
      const std::string& t = ids[i];
      // CUDA names say "PCIe" / "NVL" for those forms and often nothing for SXM ("NVIDIA H100 80GB HBM3")
      const bool form = t == "pcie" || t == "nvl";
      const bool sxm = t.rfind("sxm", 0) == 0;
      score += has(t) ? 2.0 : form ? -2.0 : sxm ? -0.5 : -1.0;
    }
    if (memory_gib > 0 && g.memory_gib > 0) score -= std::fabs(g.memory_gib - memory_gib) / 8;
    if (score > best_score) {
      best_score = score;
      best = id;
    }
  }
  return best;
}

Engine::Engine(const Database& db) : db_(db) {}

long Engine::today_days() { return static_cast<long>(std::time(nullptr) / 86400); }

FileReader Engine::reader() const {
  return [this](const std::string& path) -> Result<std::string> {
    auto it = files_.find(path);
    if (it == files_.end())
      return make_error(
          Errc::io_error, path,
          "is not loaded in this page (upload it again: files you give the calculator stay in this browser)");
    return it->second;
  };
}

Result<Inputs> Engine::resolve(const Request& req) const {
  return resolve_request(req, db_, reader(), today_days());
}

Resolution Engine::resolve_partial(const Request& req) const {
  try {
    return ftcost::resolve_partial(req, db_, reader(), today_days());
  } catch (const std::exception& ex) {
    Resolution r;
    r.ok = false;
    r.error = make_error(Errc::internal, "", ex.what());
    return r;
  }
}

json Engine::estimate(const Request& req, JobEstimate* typed) const {
  try {
    auto in = resolve(req);
    if (!in.ok()) return error_json(in.error());
    // one GPU or many: what `ftcost estimate --json` prints (estimate_job_json's steps, keeping the typed
    // estimate)
    auto job = make_job(in.value(), db_);
    if (!job.ok()) return error_json(job.error());
    auto e = estimate_job(job.value(), db_);
    if (!e.ok()) return error_json(e.error());
    json j = job_to_json(e.value());
    if (typed != nullptr) *typed = std::move(e).value();
    return j;
  } catch (const std::exception& ex) {
    return error_json(make_error(Errc::internal, "", ex.what()));
  }
}

Sweep Engine::sweep(const Request& req, int points) const {
  Sweep s;
  try {
    Request base = req;
    base["batch"] = "max";  // the sweep chooses the batch sizes
    auto in = resolve(base);
    if (!in.ok()) {
      s.error = in.error().to_string();
      return s;
    }
    return batch_sweep(in.value(), db_, points);
  } catch (const std::exception& ex) {
    s.error = std::string("internal error: ") + ex.what();
  }
  return s;
}

std::vector<CompareRow> Engine::compare(const Request& req,
                                        const std::map<std::string, std::string>& calibration_for) const {
  try {
    auto rows = compare_gpus(req, db_, reader(), today_days(), calibration_for);
    if (rows.ok()) return std::move(rows).value();
  } catch (const std::exception&) {
  }
  return {};
}

json Engine::plan(const Request& all) const {
  try {
    auto pr = parse_plan_request(all, db_);
    if (!pr.ok()) return error_json(pr.error());
    auto r = ftcost::plan(pr->job, pr->constraints, db_, reader(), today_days());
    if (!r.ok()) return error_json(r.error());
    return plan_to_json(r.value());
  } catch (const std::exception& ex) {
    return error_json(make_error(Errc::internal, "", ex.what()));
  }
}

json Engine::scaling(const Request& req) const {
  try {
    Request job = req;
    job.erase("nodes");  // the series chooses the node count
    auto s = scaling_series(job, db_, reader(), today_days());
    if (!s.ok()) return error_json(s.error());
    return scaling_to_json(s.value());
  } catch (const std::exception& ex) {
    return error_json(make_error(Errc::internal, "", ex.what()));
  }
}

}  // namespace ftcost::web
