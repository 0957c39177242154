#include "ftcost/compare.hpp"

#include <algorithm>
#include <exception>

namespace ftcost {

namespace {
// The job on one GPU: the GPU is set, and the per-GPU choices (calibration, provider, price) are dropped.
Request request_for_gpu(const Request& req, const std::string& gpu_id) {
  Request r = req;
  r["gpu"] = gpu_id;
  r.erase("provider");
  r.erase("price-per-hour");
  r.erase("calibration");
  r.erase("run");  // a run is of one GPU
  return r;
}

// Fails when the request is wrong whatever the GPU (an unknown model, a bad flag): the job is checked once
// on a GPU the database always has before the table is built.
Status check_request(const Request& req, const Database& db, const FileReader& reader, long today_days) {
  FTCOST_TRY(in, resolve_request(request_for_gpu(req, db.gpus().begin()->first), db, reader, today_days));
  (void)in;
  return Ok{};
}

PriceChoice row_price(const CompareRow& r) {
  PriceChoice p;
  p.date = r.date;
  p.stale = r.stale;
  p.spot = r.spot;
  return p;
}
// The one price rule (price_better) between two priced rows.
bool row_price_better(const CompareRow& a, const CompareRow& b) {
  return price_better(row_price(a), a.cost, row_price(b), b.cost);
}
}  // namespace

Result<std::vector<CompareRow>> compare_gpus(const Request& req, const Database& db, const FileReader& reader,
                                             long today_days,
                                             const std::map<std::string, std::string>& calibration_for) {
  if (db.gpus().empty()) return make_error(Errc::invalid_value, "gpu", "the database has no GPUs");
  // Ranking multi-GPU instance shapes is not built yet: say so instead of ranking single GPUs silently.
  for (const char* k : {"gpus", "nodes", "parallel", "offload", "node", "network", "network-gbit-per-gpu"})
    if (req.count(k) != 0)
      return make_error(
          Errc::invalid_value, std::string("--") + k,
          "compare ranks single GPUs; multi-GPU shapes are not ranked yet (use `ftcost estimate` "
          "with --gpus/--parallel for one shape)");
  FTCOST_TRY(ok, check_request(req, db, reader, today_days));
  (void)ok;
  std::vector<CompareRow> rows;
  for (const auto& [id, gpu] : db.gpus()) {
    Request r = request_for_gpu(req, id);
    auto cal = calibration_for.find(id);
    if (cal != calibration_for.end() && !cal->second.empty()) r["calibration"] = cal->second;
    CompareRow base;
    base.gpu_id = id;
    base.gpu_name = gpu.name;
    base.memory_gib = gpu.memory_gib;
    base.calibrated = r.count("calibration") > 0;
    try {
      // Estimate structs directly (no JSON): the calculator recomputes this table on every input change.
      auto in = resolve_request(r, db, reader, today_days);
      if (!in.ok()) {
        base.error = in.error().to_string();
        rows.push_back(base);
        continue;
      }
      base.stack_warning = stack_vendor_warning(in.value().stack, id, gpu.vendor);
      auto e = estimate(in.value(), db);
      if (!e.ok()) {
        base.error = e.error().to_string();
        rows.push_back(base);
        continue;
      }
      const Estimate& est = e.value();
      base.max_batch = static_cast<double>(est.max_batch.batch);
      base.fits = est.batch > 0 && est.batch <= est.max_batch.batch;
      base.qps = est.throughput_qps;
      base.hours = est.time_hours;
      bool any = false;
      if (base.fits) {
        for (const auto& c : est.costs) {
          CompareRow row = base;
          row.has_price = true;
          row.provider = c.price.provider;
          row.spot = c.price.spot;
          row.stale = c.price.stale;
          row.date = c.price.date;
          row.instance_type = c.price.instance_type;
          row.region = c.price.region;
          row.gpu_count = c.price.gpu_count;
          row.usd_per_hour = c.price.usd_per_hour;
          row.cost = c.cost_usd;
          row.cost_low = c.cost_low > 0 ? c.cost_low : c.cost_usd;
          row.cost_high = c.cost_high > 0 ? c.cost_high : c.cost_usd;
          rows.push_back(row);
          any = true;
        }
      }
      if (!any) rows.push_back(base);
    } catch (const std::exception& ex) {
      base.error = std::string("internal error: ") + ex.what();
      rows.push_back(base);
    }
  }
  return rows;
}

int cheapest_row(const std::vector<CompareRow>& rows, bool include_spot) {
  int best = -1;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& c = rows[i];
    if (!c.fits || !c.has_price || (!include_spot && c.spot) || !c.stack_warning.empty()) continue;
    if (best < 0 || row_price_better(c, rows[static_cast<std::size_t>(best)])) best = static_cast<int>(i);
  }
  return best;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string compare_to_csv(const std::vector<CompareRow>& rows) {
  std::string out =
      "gpu,gpu_name,memory_gib,fits,max_batch,throughput_queries_per_s,time_hours,provider,spot,price_date,"
      "stale,usd_per_gpu_hour,cost_usd,cost_usd_low,cost_usd_high,calibrated,stack_warning,error\n";
  auto n = [](double v) { return json(v).dump(); };
  for (const auto& r : rows) {
    out += csv_field(r.gpu_id) + "," + csv_field(r.gpu_name) + "," + n(r.memory_gib) + "," +
           (r.fits ? "yes" : "no") + "," + std::to_string(static_cast<long long>(r.max_batch)) + "," +
           (r.fits ? n(r.qps) : "") + "," + (r.fits ? n(r.hours) : "") + "," + csv_field(r.provider) + "," +
           (r.has_price ? (r.spot ? "spot" : "on-demand") : "") + "," + csv_field(r.date) + "," +
           (r.has_price ? (r.stale ? "yes" : "no") : "") + "," + (r.has_price ? n(r.usd_per_hour) : "") +
           "," + (r.has_price ? n(r.cost) : "") + "," + (r.has_price ? n(r.cost_low) : "") + "," +
           (r.has_price ? n(r.cost_high) : "") + "," + (r.calibrated ? "yes" : "no") + "," +
           csv_field(r.stack_warning) + "," + csv_field(r.error) + "\n";
  }
  return out;
}

namespace {
std::string scalar_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "";
  return v.dump();
}

void flatten(const json& v, const std::string& path, std::string& out) {
  if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it)
      flatten(it.value(), path.empty() ? it.key() : path + "." + it.key(), out);
  } else if (v.is_array()) {
    const bool scalars = std::all_of(v.begin(), v.end(), [](const json& x) { return !x.is_structured(); });
    if (scalars) {
      std::string joined;
      for (const auto& x : v) joined += (joined.empty() ? "" : ";") + scalar_text(x);
      out += csv_field(path) + "," + csv_field(joined) + "\n";
    } else {
      for (std::size_t i = 0; i < v.size(); ++i) flatten(v[i], path + "[" + std::to_string(i) + "]", out);
    }
  } else {
    out += csv_field(path) + "," + csv_field(scalar_text(v)) + "\n";
  }
}
}  // namespace

std::string json_to_field_csv(const json& result) {
  std::string out = "field,value\n";
  flatten(result, "", out);
  return out;
}

json compare_row_to_json(const CompareRow& r) {
  json j{{"gpu", r.gpu_id},
         {"gpu_name", r.gpu_name},
         {"memory_gib", r.memory_gib},
         {"fits", r.fits},
         {"max_batch_size", static_cast<long long>(r.max_batch)},
         {"calibrated", r.calibrated}};
  if (r.fits) {
    j["throughput_queries_per_s"] = r.qps;
    j["time_hours"] = r.hours;
  }
  if (r.has_price)
    j["price"] = json{{"provider", r.provider},
                      {"kind", r.spot ? "spot" : "on-demand"},
                      {"usd_per_gpu_hour", r.usd_per_hour},
                      {"date", r.date.empty() ? json(nullptr) : json(r.date)},
                      {"stale", r.stale},
                      {"instance_type", r.instance_type},
                      {"region", r.region},
                      {"gpu_count", r.gpu_count},
                      {"cost_usd", r.cost},
                      {"cost_usd_range", json::array({r.cost_low, r.cost_high})}};
  if (!r.stack_warning.empty()) j["stack_warning"] = r.stack_warning;
  if (!r.error.empty()) j["error"] = r.error;
  return j;
}

namespace {
int display_rank(const CompareRow& r) {
  if (!r.error.empty()) return 4;
  if (!r.fits) return 3;
  if (!r.has_price) return 2;
  return r.stack_warning.empty() ? 0 : 1;
}
bool display_before(const CompareRow& a, const CompareRow& b) {
  const int ra = display_rank(a), rb = display_rank(b);
  if (ra != rb) return ra < rb;
  if (ra <= 1) return row_price_better(a, b);
  if (ra == 2) return a.hours < b.hours;
  if (ra == 3) return a.memory_gib > b.memory_gib;
  return a.gpu_id < b.gpu_id;
}
}  // namespace

bool compare_row_before(const CompareRow& a, const CompareRow& b) { return display_before(a, b); }

std::vector<CompareRow> compare_view(const std::vector<CompareRow>& all, const CompareView& view) {
  std::vector<CompareRow> rows;
  for (const auto& r : all) {
    if (r.spot && !view.spot) continue;
    if (view.fits_only && !r.fits) continue;
    rows.push_back(r);
  }
  if (!view.offers) {
    // each GPU's cheapest offer (or its one row when it has none)
    std::vector<CompareRow> one;
    for (const auto& r : rows) {
      auto it =
          std::find_if(one.begin(), one.end(), [&](const CompareRow& o) { return o.gpu_id == r.gpu_id; });
      if (it == one.end())
        one.push_back(r);
      else if (r.has_price && (!it->has_price || row_price_better(r, *it)))
        *it = r;
    }
    rows.swap(one);
  }
  std::stable_sort(rows.begin(), rows.end(), display_before);
  return rows;
}

json compare_to_json(const std::vector<CompareRow>& shown, const CompareView& view) {
  const int cheapest = cheapest_row(shown, view.spot);
  json out = json::array();
  for (std::size_t i = 0; i < shown.size(); ++i) {
    json j = compare_row_to_json(shown[i]);
    j["cheapest"] = static_cast<int>(i) == cheapest;
    out.push_back(j);
  }
  return json{{"rows", out}, {"spot_included", view.spot}};
}

}  // namespace ftcost
