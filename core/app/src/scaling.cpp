#include "ftcost/scaling.hpp"

#include "ftcost/job.hpp"
#include "ftcost/parallel.hpp"

#include <algorithm>
#include <exception>

namespace ftcost {

std::vector<int> default_scaling_counts(int node_gpus, bool networked) {
  std::vector<int> out;
  for (int c = 1; c < node_gpus; c *= 2) out.push_back(c);
  out.push_back(node_gpus);
  if (networked) {
    out.push_back(2 * node_gpus);
    out.push_back(4 * node_gpus);
  }
  return out;
}

Result<std::vector<int>> parse_counts(const std::string& text) {
  std::vector<int> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t comma = text.find(',', pos);
    const std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (item.empty() || item.size() > 4 || item.find_first_not_of("0123456789") != std::string::npos)
      return make_error(Errc::invalid_value, "--counts",
                        "must be GPU counts separated by commas (e.g. 1,2,4,8,16), got \"" + text + "\"");
    const int c = std::stoi(item);
    if (c < 1 || c > 4096)
      return make_error(Errc::out_of_range, "--counts", "each GPU count must be 1 to 4096, got " + item);
    if (!out.empty() && c <= out.back())
      return make_error(Errc::invalid_value, "--counts", "GPU counts must increase, got \"" + text + "\"");
    out.push_back(c);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  if (out.size() > 32) return make_error(Errc::out_of_range, "--counts", "at most 32 GPU counts");
  return out;
}

namespace {

// Every count above a node is a whole number of nodes, joined by a network.
Status check_counts(const std::vector<int>& counts, int node_gpus, bool networked) {
  for (int c : counts) {
    if (c > node_gpus && c % node_gpus != 0)
      return make_error(Errc::invalid_value, "--counts",
                        std::to_string(c) + " GPUs is not a whole number of nodes of " +
                            std::to_string(node_gpus) + " GPUs (--gpus sets the GPUs per node)");
    if (c > node_gpus && !networked)
      return make_error(Errc::invalid_value, "--counts",
                        std::to_string(c) + " GPUs need " + std::to_string(c / node_gpus) +
                            " nodes: give the network between them (--node with a network, or --network and "
                            "--network-gbit-per-gpu)");
  }
  return Ok{};
}

// A point from the job's answer (job.hpp): the same numbers `ftcost estimate` gives for that count, priced
// by the one price rule for the point's shape. The series' price is the first point's.
void answer_point(const JobEstimate& je, ScalingPoint& p, ScalingSeries& s) {
  const JobAnswer& a = je.answer;
  p.strategy = a.strategy;
  p.fits = a.fits;
  p.micro_batch = a.batch;
  p.global_batch = a.global_batch;
  p.per_rank_peak_gib = a.peak_gib;
  p.step_s = a.step_s;
  p.comm_exposed_s = je.pe.is_single ? 0 : je.pe.comm_exposed_s;
  p.qps = a.qps;
  p.tps = a.tokens_per_s;
  p.data_tps = a.data_tokens_per_s;
  p.hours = a.hours;
  p.global_batch_exceeds_data =
      !je.pe.is_single && static_cast<double>(a.global_batch) > je.job.in.workload.rows_per_epoch();
  if (!a.has_price) return;
  p.cost_usd = a.cost;
  p.usd_per_gpu_hour = a.price.usd_per_hour;
  p.price_provider = a.price.provider;
  p.price_basis = a.price.basis;
  if (s.price_provider.empty()) {
    s.price_provider = a.price.provider;
    s.usd_per_gpu_hour = a.price.usd_per_hour;
  }
}

// The job on c GPUs (whole nodes above s.node_gpus): an error of that count is the point's error, not
// the series'.
ScalingPoint scaling_point(const Request& base, int c, ScalingSeries& s, const Database& db,
                           const FileReader& reader, long today_days) {
  ScalingPoint p;
  p.gpus = c;
  p.gpus_per_node = c > s.node_gpus ? s.node_gpus : c;
  p.nodes = c > s.node_gpus ? c / s.node_gpus : 1;
  Request r = base;
  r["gpus"] = std::to_string(p.gpus_per_node);
  r["nodes"] = std::to_string(p.nodes);
  if (c == 1)
    r.erase("parallel");  // one GPU: no strategy
  else if (r.count("parallel") == 0)
    r["parallel"] = "auto";
  try {
    auto je = estimate_request(r, db, reader, today_days);
    if (!je.ok())
      p.error = je.error().to_string();
    else
      answer_point(je.value(), p, s);
  } catch (const std::exception& ex) {
    p.error = std::string("internal error: ") + ex.what();
  }
  return p;
}

}  // namespace

Result<ScalingSeries> scaling_series(const Request& job, const Database& db, const FileReader& reader,
                                     long today_days, const std::vector<int>& counts_in) {
  if (job.count("gpu") == 0)
    return make_error(Errc::missing_field, "--gpu", "the scaling series is of one GPU");
  Request base = job;
  base.erase("nodes");
  FTCOST_TRY(in0, resolve_request(base, db, reader, today_days));
  const FileReader summarised = summarised_reader(in0, reader);  // one binning of the user's lengths
  ScalingSeries s;
  s.gpu = in0.gpu.id;
  s.node_gpus = 8;
  const NodeShape* node = in0.multi.node.empty() ? nullptr : db.node(in0.multi.node);
  if (job.count("gpus") != 0)
    s.node_gpus = in0.multi.gpus;
  else if (node)
    s.node_gpus = node->gpus;
  // The network between nodes: --network as given (in0 is resolved on one node, where the flag does not
  // apply yet and is only checked: in0.multi.network stays empty), else the node preset's.
  const auto given_network = job.find("network");
  s.network = given_network != job.end() ? given_network->second : node ? node->network : std::string("none");
  const bool networked = s.network != "none";
  const std::vector<int> counts =
      counts_in.empty() ? default_scaling_counts(s.node_gpus, networked) : counts_in;
  if (auto st = check_counts(counts, s.node_gpus, networked); !st.ok()) return st.error();
  // Speedup of the job's time, not of the throughput: a global batch beyond the data still takes a whole
  // optimizer step (estimate_parallel), so more GPUs than the data fills do not shorten it.
  double base_hours = 0;
  for (int c : counts) {
    ScalingPoint p = scaling_point(base, c, s, db, summarised, today_days);
    if (p.fits && p.error.empty() && p.hours > 0) {
      if (s.base_gpus == 0) {
        s.base_gpus = c;
        base_hours = p.hours;
      }
      p.speedup = base_hours / p.hours;
      p.efficiency = p.speedup * s.base_gpus / c;
    }
    s.points.push_back(p);
  }
  return s;
}

json scaling_to_json(const ScalingSeries& s) {
  json pts = json::array();
  for (const auto& p : s.points) {
    json j{{"gpus", p.gpus},
           {"gpus_per_node", p.gpus_per_node},
           {"nodes", p.nodes},
           {"strategy", p.strategy},
           {"fits", p.fits}};
    if (!p.error.empty()) {
      j["error"] = p.error;
    } else {
      j["micro_batch_size"] = p.micro_batch;
      j["global_batch_size"] = p.global_batch;
      j["per_rank_peak_gib"] = p.per_rank_peak_gib;
    }
    if (p.fits && p.error.empty()) {
      j["step_time_s"] = p.step_s;
      j["comm_exposed_s"] = p.comm_exposed_s;
      j["throughput_queries_per_s"] = p.qps;
      j["throughput_tokens_per_s"] = p.tps;
      j["throughput_data_tokens_per_s"] = p.data_tps;
      j["time_hours"] = p.hours;
      j["cost_usd"] = p.cost_usd > 0 ? json(p.cost_usd) : json(nullptr);
      if (p.usd_per_gpu_hour > 0)
        j["price"] = {{"provider", p.price_provider},
                      {"usd_per_gpu_hour", p.usd_per_gpu_hour},
                      {"basis", p.price_basis}};
      j["speedup"] = p.speedup;
      j["scaling_efficiency"] = p.efficiency;
      j["global_batch_exceeds_data"] = p.global_batch_exceeds_data;
    }
    pts.push_back(j);
  }
  json price = nullptr;
  if (s.usd_per_gpu_hour > 0)
    price = json{{"provider", s.price_provider}, {"usd_per_gpu_hour", s.usd_per_gpu_hour}};
  return json{{"gpu", s.gpu},         {"node_gpus", s.node_gpus},
              {"network", s.network}, {"base_gpus", s.base_gpus},
              {"price", price},       {"points", pts}};
}

std::string scaling_to_csv(const ScalingSeries& s) {
  std::string out =
      "gpus,gpus_per_node,nodes,strategy,fits,micro_batch,global_batch,per_rank_peak_gib,step_s,"
      "comm_exposed_s,throughput_queries_per_s,throughput_tokens_per_s,time_hours,cost_usd,speedup,"
      "scaling_efficiency,error\n";
  auto n = [](double v) { return json(v).dump(); };
  for (const auto& p : s.points) {
    const bool ok = p.fits && p.error.empty();
    std::string err = p.error;
    if (err.find_first_of(",\"\n") != std::string::npos) {
      std::string q = "\"";
      for (char ch : err) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
      err = q + "\"";
    }
    out +=
        std::to_string(p.gpus) + "," + std::to_string(p.gpus_per_node) + "," + std::to_string(p.nodes) + "," +
        p.strategy + "," + (p.fits ? "yes" : "no") + "," +
        (p.error.empty() ? std::to_string(p.micro_batch) + "," + std::to_string(p.global_batch) + "," +
                               n(p.per_rank_peak_gib)
                         : std::string(",,")) +
        "," +
        (ok ? n(p.step_s) + "," + n(p.comm_exposed_s) + "," + n(p.qps) + "," + n(p.tps) + "," + n(p.hours) +
                  "," + (p.cost_usd > 0 ? n(p.cost_usd) : "") + "," + n(p.speedup) + "," + n(p.efficiency)
            : std::string(",,,,,,,")) +
        "," + err + "\n";
  }
  return out;
}

}  // namespace ftcost
