#include "ftcost/compare.hpp"

#include "ftcost/job.hpp"
#include "ftcost/paper.hpp"
#include "ftcost/parallel.hpp"
#include "ftcost/shapes.hpp"

#include <algorithm>
#include <exception>
#include <set>

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

namespace {

// The job on one instance shape, before pricing.
struct ShapeResult {
  std::string error;
  std::string stack_warning;
  bool fits = false;
  double max_batch = 0, qps = 0, hours = 0;
  double hours_low = 0, hours_high = 0;  // at the throughput range's high / low end
  std::int64_t batch = 0;                // micro-batch per GPU
  std::string strategy = "single";
  double peak_gib = 0;
  long stale_days = 365;
  // --electricity: the GPU's board power at that price per GPU-hour, and how it was computed (-1: not given)
  double electricity_usd_per_gpu_hour = -1;
  std::string electricity_source;
};

// A shape's numbers from the job's answer (job.hpp).
void take_answer(ShapeResult& out, const JobAnswer& a) {
  out.fits = a.fits;
  out.max_batch = static_cast<double>(a.max_batch);
  out.qps = a.qps;
  out.hours = a.hours;
  out.hours_low = a.hours_low;
  out.hours_high = a.hours_high;
  out.strategy = a.strategy;
  out.peak_gib = a.peak_gib;
  out.batch = a.batch;
}

ShapeResult evaluate_shape(const Request& r, const InstanceShape* shape, const Database& db,
                           const FileReader& reader, long today_days, const std::string& vendor,
                           const std::string& gpu_id) {
  ShapeResult out;
  Request rq = r;
  const json keys = shape ? shape->request_keys() : json::object();
  for (auto it = keys.begin(); it != keys.end(); ++it)
    rq[it.key()] = it.value().is_string() ? it.value().get<std::string>() : it.value().dump();
  const bool several = shape && shape->gpus() > 1;
  if (several && rq.count("parallel") == 0) rq["parallel"] = "auto";
  if (!several) rq.erase("parallel");  // one GPU: no strategy (an offload still goes through the plan)
  try {
    auto in = resolve_request(rq, db, reader, today_days);
    if (!in.ok()) {
      out.error = in.error().to_string();
      return out;
    }
    const Inputs& inputs = in.value();
    out.stack_warning = stack_vendor_warning(inputs.stack, gpu_id, vendor);
    out.stale_days = inputs.stale_days;
    if (inputs.electricity_usd_per_kwh >= 0) {
      // A GPU you own, as estimate --electricity prices it (estimate.cpp estimate_costs): board power x
      // $/kWh.
      out.electricity_usd_per_gpu_hour = inputs.gpu.tdp_w / 1000.0 * inputs.electricity_usd_per_kwh;
      out.electricity_source = json(inputs.gpu.tdp_w).dump() + " W board power x $" +
                               json(inputs.electricity_usd_per_kwh).dump() + "/kWh";
    }
    // The job's answer on this shape (job.hpp): what `ftcost estimate` gives for it.
    auto job = make_job(inputs, db);
    auto je = job.ok() ? estimate_job(job.value(), db) : Result<JobEstimate>(job.error());
    if (!je.ok()) {
      out.error = je.error().to_string();
      return out;
    }
    take_answer(out, je->answer);
  } catch (const std::exception& ex) {
    out.error = std::string("internal error: ") + ex.what();
  }
  return out;
}

void set_shape(CompareRow& row, const InstanceShape* shape, const ShapeResult& res) {
  row.fits = res.error.empty() && res.fits;
  row.max_batch = res.max_batch;
  row.batch = res.batch;
  row.qps = res.qps;
  row.hours = res.hours;
  row.strategy = res.strategy;
  row.per_rank_peak_gib = res.peak_gib;
  row.stack_warning = res.stack_warning;
  row.error = res.error;
  if (shape) {
    row.gpus_per_node = shape->gpus_per_node;
    row.nodes = shape->nodes;
    row.network = shape->nodes > 1 ? shape->offer.network : "none";
    row.gpu_count = shape->offer.gpu_count;
  }
}
// compare takes each row's hardware from its offer: a node preset or network is refused, and so is a
// --max-gpus out of range.
Status check_compare_request(const Request& req, int max_gpus) {
  // The hardware of each row comes from its offer (shapes.hpp): a node preset or network is one shape.
  for (const char* k : {"node", "network", "network-gbit-per-gpu", "host-memory-gbps"})
    if (req.count(k) != 0)
      return make_error(Errc::invalid_value, std::string("--") + k,
                        "compare takes each offer's hardware (GPUs per instance, network between instances); "
                        "use `ftcost estimate` with --" +
                            std::string(k) + " for one node type");
  if (max_gpus < 0 || max_gpus > 4096)
    return make_error(Errc::out_of_range, "--max-gpus",
                      "must be a whole number from 1 to 4096, got " + std::to_string(max_gpus));
  return Ok{};
}

// One row per price (on-demand, spot) of a shape that fits; false when the offer has none.
bool add_priced_rows(const CompareRow& base, const InstanceShape& shape, const ShapeResult& res,
                     long today_days, std::vector<CompareRow>& rows) {
  bool any = false;
  const PriceOffer& o = shape.offer;
  for (int spot = 0; spot < 2; ++spot) {
    const double per_gpu = spot ? o.spot_usd_per_gpu_hour : o.on_demand_usd_per_gpu_hour;
    if (per_gpu <= 0) continue;
    CompareRow row = base;
    set_shape(row, &shape, res);
    row.has_price = true;
    row.provider = o.provider;
    row.spot = spot == 1;
    row.date = o.date;
    row.stale = o.date_days >= 0 && today_days >= 0 && today_days - o.date_days > res.stale_days;
    row.instance_type = o.instance_type;
    row.region = o.region;
    row.usd_per_hour = per_gpu;
    row.shape_usd_per_hour = per_gpu * shape.gpus();
    row.cost = res.hours * row.shape_usd_per_hour;
    row.cost_low = res.hours_low > 0 ? res.hours_low * row.shape_usd_per_hour : row.cost;
    row.cost_high = res.hours_high > 0 ? res.hours_high * row.shape_usd_per_hour : row.cost;
    rows.push_back(row);
    any = true;
  }
  return any;
}

// With --electricity, the one row of a shape that fits: your GPUs at their board power, no rental offer.
CompareRow electricity_row(const CompareRow& base, const InstanceShape* shape, const ShapeResult& res) {
  CompareRow row = base;
  set_shape(row, shape, res);
  row.has_price = true;
  row.provider = "your GPU (electricity)";
  row.usd_per_hour = res.electricity_usd_per_gpu_hour;
  row.shape_usd_per_hour = res.electricity_usd_per_gpu_hour * row.gpus();
  row.price_source = res.electricity_source;
  row.cost = res.hours * row.shape_usd_per_hour;
  row.cost_low = res.hours_low > 0 ? res.hours_low * row.shape_usd_per_hour : row.cost;
  row.cost_high = res.hours_high > 0 ? res.hours_high * row.shape_usd_per_hour : row.cost;
  return row;
}

// The rows of one GPU type: one per priced shape that fits, else the largest shape's answer.
struct GpuRows {
  const Database& db;
  const FileReader& reader;
  long today_days;
  const ShapeFilter& filter;
  bool filtered;
  const std::map<std::string, std::string>& calibration_for;

  // The job on `filter.gpus_per_node` GPUs of a type that has no instance of that size: estimate's answer,
  // priced by the one price rule's fallback (per-GPU prices).
  CompareRow per_gpu_row(const Request& job, const std::string& gpu_id, const GpuSpec& gpu) const {
    CompareRow row;
    row.gpu_id = gpu_id;
    row.gpu_name = gpu.name;
    row.memory_gib = gpu.memory_gib;
    row.gpus_per_node = filter.gpus_per_node;
    Request r = request_for_gpu(job, gpu_id);
    r["gpus"] = std::to_string(filter.gpus_per_node);
    if (filter.gpus_per_node > 1 && r.count("parallel") == 0) r["parallel"] = "auto";
    auto je = estimate_request(r, db, reader, today_days);
    if (!je.ok()) {
      row.error = je.error().to_string();
      return row;
    }
    const JobAnswer& a = je->answer;
    ShapeResult res;
    take_answer(res, a);
    res.stack_warning = stack_vendor_warning(je->job.in.stack, gpu_id, gpu.vendor);
    set_shape(row, nullptr, res);
    if (!a.fits || !a.has_price) return row;
    row.has_price = true;
    row.provider = a.price.provider;
    row.spot = a.price.spot;
    row.date = a.price.date;
    row.stale = a.price.stale;
    row.instance_type = a.price.instance_type;
    row.region = a.price.region;
    row.gpu_count = a.price.gpu_count;
    row.usd_per_hour = a.price.usd_per_hour;
    row.shape_usd_per_hour = a.usd_per_hour;
    row.price_basis = a.price.basis;
    row.cost = a.cost;
    row.cost_low = a.cost_low;
    row.cost_high = a.cost_high;
    return row;
  }

  void add(const Request& job, const std::string& gpu_id, const GpuSpec& gpu,
           std::vector<CompareRow>& rows) const {
    const std::vector<InstanceShape> shapes = instance_shapes(db, gpu_id, filter);
    if (filtered && shapes.empty()) {
      // No instance of that size is priced: the job as `estimate` prices it (that many GPUs at the
      // per-GPU price of another instance size, basis "per-gpu"), when the GPUs can be joined without a
      // network (one node).
      if (filter.gpus_per_node > 0 && filter.nodes <= 1) rows.push_back(per_gpu_row(job, gpu_id, gpu));
      return;
    }
    Request r = request_for_gpu(job, gpu_id);
    auto cal = calibration_for.find(gpu_id);
    if (cal != calibration_for.end() && !cal->second.empty()) r["calibration"] = cal->second;
    CompareRow base;
    base.gpu_id = gpu_id;
    base.gpu_name = gpu.name;
    base.memory_gib = gpu.memory_gib;
    base.calibrated = r.count("calibration") > 0;
    // One estimate per distinct shape (offers of one GPU share their instance sizes).
    std::map<std::string, ShapeResult> cache;
    auto result_for = [&](const InstanceShape* shape) -> const ShapeResult& {
      const std::string key = shape ? shape->request_keys().dump() : std::string("{}");
      auto it = cache.find(key);
      if (it == cache.end())
        it = cache.emplace(key, evaluate_shape(r, shape, db, reader, today_days, gpu.vendor, gpu_id)).first;
      return it->second;
    };
    bool any = false;
    const InstanceShape* largest = nullptr;
    std::set<std::string> owned;  // --electricity: one row per distinct shape (offers share their sizes)
    for (const auto& shape : shapes) {
      if (!largest || shape.gpus() > largest->gpus()) largest = &shape;
      const ShapeResult& res = result_for(&shape);
      if (!res.error.empty() || !res.fits) continue;
      if (res.electricity_usd_per_gpu_hour >= 0) {
        if (owned.insert(shape.request_keys().dump()).second)
          rows.push_back(electricity_row(base, &shape, res));
        any = true;
      } else {
        any = add_priced_rows(base, shape, res, today_days, rows) || any;
      }
    }
    if (!any) {
      // No priced shape fits: the largest shape's answer (one GPU when the GPU has no offer), priced at your
      // electricity when it fits.
      const ShapeResult& res = result_for(largest);
      CompareRow row = base;
      set_shape(row, largest, res);
      if (row.fits && res.electricity_usd_per_gpu_hour >= 0) row = electricity_row(base, largest, res);
      rows.push_back(row);
    }
  }
};
}  // namespace

Result<std::vector<CompareRow>> compare_gpus(const Request& req, const Database& db, const FileReader& reader,
                                             long today_days,
                                             const std::map<std::string, std::string>& calibration_for,
                                             int max_gpus) {
  if (db.gpus().empty()) return make_error(Errc::invalid_value, "gpu", "the database has no GPUs");
  if (auto st = check_compare_request(req, max_gpus); !st.ok()) return st.error();
  // Fails when the request is wrong whatever the GPU (an unknown model, a bad flag); a GPU it is wrong for
  // (a --headroom above its memory) is a row with that error. The largest GPUs first: the likeliest to take
  // the job.
  std::vector<std::string> by_memory = db.gpu_ids();
  std::stable_sort(by_memory.begin(), by_memory.end(), [&db](const std::string& a, const std::string& b) {
    return db.gpu(a)->usable_bytes() > db.gpu(b)->usable_bytes();
  });
  FTCOST_TRY(probe, probe_gpus(request_for_gpu(req, ""), by_memory, db, reader, today_days));
  const Inputs& in0 = probe.in;
  const FileReader& summarised = probe.reader;  // one binning of the user's lengths
  ShapeFilter filter;
  if (req.count("gpus") != 0) filter.gpus_per_node = in0.multi.gpus;
  // --gpus N means N GPUs on one node, as in `estimate`; --nodes M asks for M of them.
  if (req.count("nodes") != 0 || req.count("gpus") != 0) filter.nodes = in0.multi.nodes;
  filter.max_gpus = max_gpus;
  const bool filtered = req.count("gpus") != 0 || req.count("nodes") != 0 || max_gpus > 0;
  Request job = req;
  job.erase("gpus");
  job.erase("nodes");
  const GpuRows gpu_rows{db, summarised, today_days, filter, filtered, calibration_for};
  std::vector<CompareRow> rows;
  for (const auto& [id, gpu] : db.gpus()) gpu_rows.add(job, id, gpu, rows);
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
      "stale,usd_per_gpu_hour,cost_usd,cost_usd_low,cost_usd_high,calibrated,stack_warning,error,gpus,"
      "gpus_per_node,nodes,network,strategy,per_rank_peak_gib,usd_per_hour\n";
  auto n = [](double v) { return json(v).dump(); };
  for (const auto& r : rows) {
    out += csv_field(r.gpu_id) + "," + csv_field(r.gpu_name) + "," + n(r.memory_gib) + "," +
           (r.fits ? "yes" : "no") + "," + std::to_string(static_cast<long long>(r.max_batch)) + "," +
           (r.fits ? n(r.qps) : "") + "," + (r.fits ? n(r.hours) : "") + "," + csv_field(r.provider) + "," +
           (r.has_price ? (r.spot ? "spot" : "on-demand") : "") + "," + csv_field(r.date) + "," +
           (r.has_price ? (r.stale ? "yes" : "no") : "") + "," + (r.has_price ? n(r.usd_per_hour) : "") +
           "," + (r.has_price ? n(r.cost) : "") + "," + (r.has_price ? n(r.cost_low) : "") + "," +
           (r.has_price ? n(r.cost_high) : "") + "," + (r.calibrated ? "yes" : "no") + "," +
           csv_field(r.stack_warning) + "," + csv_field(r.error) + "," + std::to_string(r.gpus()) + "," +
           std::to_string(r.gpus_per_node) + "," + std::to_string(r.nodes) + "," + csv_field(r.network) +
           "," + csv_field(r.strategy) + "," + (r.error.empty() ? n(r.per_rank_peak_gib) : "") + "," +
           (r.has_price ? n(r.shape_usd_per_hour) : "") + "\n";
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
         {"calibrated", r.calibrated},
         {"gpus", r.gpus()},
         {"gpus_per_node", r.gpus_per_node},
         {"nodes", r.nodes},
         {"network", r.network},
         {"strategy", r.strategy}};
  if (r.error.empty()) j["per_rank_peak_gib"] = r.per_rank_peak_gib;
  if (r.fits) {
    j["batch_size"] = r.batch;
    j["throughput_queries_per_s"] = r.qps;
    j["time_hours"] = r.hours;
  }
  if (r.has_price)
    j["price"] = json{{"provider", r.provider},
                      {"kind", r.spot ? "spot" : "on-demand"},
                      {"usd_per_gpu_hour", r.usd_per_hour},
                      {"date", r.date.empty() ? json(nullptr) : json(r.date)},
                      {"stale", r.stale},
                      {"class", price_class(r.date, r.stale)},
                      {"basis", r.price_basis},
                      {"instance_type", r.instance_type},
                      {"region", r.region},
                      {"gpu_count", r.gpu_count},
                      {"usd_per_hour", r.shape_usd_per_hour},
                      {"cost_usd", r.cost},
                      {"cost_usd_range", json::array({r.cost_low, r.cost_high})}};
  if (r.has_price && !r.price_source.empty()) j["price"]["source"] = r.price_source;
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
  const int ra = display_rank(a);
  const int rb = display_rank(b);
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
    if (!view.gpu_types.empty() &&
        std::find(view.gpu_types.begin(), view.gpu_types.end(), r.gpu_id) == view.gpu_types.end())
      continue;
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
