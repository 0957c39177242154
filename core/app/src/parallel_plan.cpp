// The typed multi-GPU plan and its parsing: strategy and offload names, --parallel, --nvme-gbps, --zero3, the
// plan's keys of a request (plan_from_json) and the plan of resolved inputs (plan_from_inputs).
#include "ftcost/calibration.hpp"
#include "ftcost/enum_names.hpp"
#include "ftcost/parallel.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <utility>

namespace ftcost {

namespace {

// ---- Constants with their provenance (docs/sources/parallel.md). "code" = read from the library's source,
// "assumed" = an engineering estimate the docs say is one.
// assumed default NVMe rates of a node, GB/s: DeepSpeed's DeepNVMe blog (blogs/deepnvme/08-2024/README.md
// @ edaa722) measures 10 GB/s reads and 5 GB/s writes between 4 PCIe 4.0 NVMe SSDs in RAID-0 and CPU memory
// (Azure NC96ads_A100_v4, libaio); --nvme-gbps gives the user's own drives.
constexpr double kDefaultNvmeReadGbps = 10, kDefaultNvmeWriteGbps = 5;

}  // namespace

constexpr EnumName<Strategy> kStrategyNames[] = {
    {Strategy::single, "single"}, {Strategy::ddp, "ddp"},
    {Strategy::fsdp, "fsdp"},     {Strategy::fsdp_grad_op, "fsdp-grad-op"},
    {Strategy::hsdp, "hsdp"},     {Strategy::zero1, "zero1"},
    {Strategy::zero2, "zero2"},   {Strategy::zero3, "zero3"},
    {Strategy::tp, "tp"},         {Strategy::ep, "ep"},
    {Strategy::cp, "cp"}};
const char* strategy_name(Strategy s) { return enum_name(kStrategyNames, s, "?"); }

constexpr EnumName<Offload> kOffloadNames[] = {{Offload::none, "none"},
                                               {Offload::optimizer, "optimizer"},
                                               {Offload::params, "params"},
                                               {Offload::optimizer_nvme, "optimizer-nvme"},
                                               {Offload::params_nvme, "params-nvme"}};
const char* offload_name(Offload o) { return enum_name(kOffloadNames, o, "?"); }

bool offloads_params(Offload o) { return o == Offload::params || o == Offload::params_nvme; }
bool offload_on_nvme(Offload o) { return o == Offload::optimizer_nvme || o == Offload::params_nvme; }

Result<ParallelPlan> parse_parallel(const std::string& text, const std::string& field, ParallelPlan base) {
  const std::string allowed = "ddp, fsdp, fsdp-grad-op, hsdp, zero1, zero2, zero3, tp:N, ep:N, cp:N or auto";
  base.choose = false;
  base.degree = 1;
  static const std::map<std::string, Strategy> plain = {
      {"ddp", Strategy::ddp},    {"fsdp", Strategy::fsdp},   {"fsdp-grad-op", Strategy::fsdp_grad_op},
      {"hsdp", Strategy::hsdp},  {"zero1", Strategy::zero1}, {"zero2", Strategy::zero2},
      {"zero3", Strategy::zero3}};
  if (text == "auto") {
    base.choose = true;
    base.strategy = Strategy::ddp;
    return base;
  }
  auto it = plain.find(text);
  if (it != plain.end()) {
    base.strategy = it->second;
    return base;
  }
  const std::size_t colon = text.find(':');
  if (colon != std::string::npos) {
    const std::string head = text.substr(0, colon);
    const std::string num = text.substr(colon + 1);
    Strategy s = head == "tp"   ? Strategy::tp
                 : head == "ep" ? Strategy::ep
                 : head == "cp" ? Strategy::cp
                                : Strategy::single;
    bool digits = !num.empty() && num.size() <= 4;
    for (char c : num) digits = digits && c >= '0' && c <= '9';
    if (s != Strategy::single && digits) {
      const int deg = std::stoi(num);
      if (deg < 2 || deg > 512)
        return make_error(Errc::out_of_range, field, head + ":N needs N between 2 and 512, got " + num);
      base.strategy = s;
      base.degree = deg;
      return base;
    }
  }
  return make_error(Errc::invalid_value, field, "must be one of " + allowed + ", got \"" + text + "\"");
}

// "READ[,WRITE]" decimal GB/s of the node's NVMe (one number: both); absent: the assumed default.
Result<std::pair<double, double>> parse_nvme_gbps(const json& obj) {
  if (!has(obj, "nvme-gbps")) return std::make_pair(kDefaultNvmeReadGbps, kDefaultNvmeWriteGbps);
  const json& v = obj.at("nvme-gbps");
  const std::string text = v.is_string() ? v.get<std::string>() : v.dump();
  const std::size_t comma = text.find(',');
  const std::string parts[2] = {text.substr(0, comma),
                                comma == std::string::npos ? text.substr(0, comma) : text.substr(comma + 1)};
  double rates[2] = {0, 0};
  for (int i = 0; i < 2; ++i) {
    char* end = nullptr;
    rates[i] = std::strtod(parts[i].c_str(), &end);
    if (parts[i].empty() || end == nullptr || *end != '\0' || !(rates[i] >= 0.01 && rates[i] <= 10000))
      return make_error(Errc::invalid_value, "--nvme-gbps",
                        "must be READ or READ,WRITE in GB/s between 0.01 and 10000 (the node's NVMe drives "
                        "together), got \"" +
                            text + "\"");
  }
  return std::make_pair(rates[0], rates[1]);
}

Status check_parallel_for_model(Strategy s, int degree, const ModelSpec& m) {
  if (s == Strategy::tp && m.attn.heads > 0 && m.attn.heads % degree != 0)
    return make_error(Errc::invalid_value, "--parallel",
                      "tp:" + std::to_string(degree) + " must divide the attention heads (" +
                          std::to_string(m.attn.heads) + ")");
  if (s == Strategy::ep && (!m.is_moe() || m.moe.experts % degree != 0))
    return make_error(Errc::invalid_value, "--parallel",
                      m.is_moe() ? "ep:" + std::to_string(degree) + " must divide the experts (" +
                                       std::to_string(m.moe.experts) + ")"
                                 : "ep:N applies only to MoE models; " + m.id + " has no experts");
  return Ok{};
}

namespace {

// What a plan offloads and where to: "offload", the node's NVMe rates ("nvme-gbps", else the assumed default,
// with where they come from) and its host RAM ("host-ram", overriding a node preset's).
Status read_offload_keys(const json& obj, ParallelPlan& p) {
  if (has(obj, "offload")) {
    const std::string o =
        obj.at("offload").is_string() ? obj.at("offload").get<std::string>() : obj.at("offload").dump();
    bool known = false;
    for (Offload x :
         {Offload::none, Offload::optimizer, Offload::params, Offload::optimizer_nvme, Offload::params_nvme})
      if (o == offload_name(x)) {
        p.offload = x;
        known = true;
      }
    if (!known)
      return make_error(Errc::invalid_value, "--offload",
                        "must be none, optimizer, params, optimizer-nvme or params-nvme, got " + o);
  }
  FTCOST_TRY(nvme, parse_nvme_gbps(obj));
  p.nvme_read_gbps = nvme.first;
  p.nvme_write_gbps = nvme.second;
  const bool given = has(obj, "nvme-gbps");
  p.nvme_note = (given ? std::string("given (--nvme-gbps): ")
                       : std::string("assumed (--nvme-gbps gives your drives'): ")) +
                json(nvme.first).dump() + " GB/s read, " + json(nvme.second).dump() + " GB/s write per node" +
                (given ? "" : " (DeepSpeed's DeepNVMe measurement of 4 PCIe 4.0 SSDs in RAID-0)");
  if (has(obj, "host-ram")) {
    FTCOST_TRY(x, get_number_in(obj, "host-ram", "", 0.001, 1e6));
    p.host_ram_gib = x;
  }
  if (has(obj, "host-memory-gbps")) {
    FTCOST_TRY(x, get_number_in(obj, "host-memory-gbps", "", 1, 100000));
    p.host_memory_gbps = x;
  }
  return Ok{};
}

// --network-gbit-per-gpu as given; else the --node preset's rate, or none under --network none (which over a
// preset's network means no network, not a kind without its rate).
Result<double> network_rate(const json& obj, const std::string& net, double preset_rate) {
  if (has(obj, "network-gbit-per-gpu")) return get_number_in(obj, "network-gbit-per-gpu", "", 0.1, 10000);
  return net == "none" ? 0.0 : preset_rate;
}
}  // namespace

Result<Zero3Settings> parse_zero3(const std::string& text, const std::string& field) {
  Zero3Settings z;
  z.given = true;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, end - start);
    start = end + 1;
    if (item.empty()) continue;
    const std::size_t eq = item.find('=');
    std::string key = item.substr(0, std::min(eq, item.size()));
    if (key.rfind("stage3_", 0) == 0) key = key.substr(7);
    const std::string val = eq == std::string::npos ? "" : item.substr(eq + 1);
    if (eq == std::string::npos || val.empty())
      return make_error(Errc::invalid_value, field, "\"" + item + "\" is not KEY=VALUE");
    char* stop = nullptr;
    const double x = val == "auto" ? 0.0 : std::strtod(val.c_str(), &stop);
    if (val != "auto" && (stop == val.c_str() || *stop != '\0' || !std::isfinite(x) || x < 0 || x > 1e15)) {
      std::string msg = key;
      msg += " must be a number of elements (e.g. 1e9) or auto, got \"";
      msg += val;
      msg += '"';
      return make_error(Errc::invalid_value, field, msg);
    }
    const bool auto_ok = key == "prefetch_bucket_size" || key == "param_persistence_threshold";
    if (val == "auto" && !auto_ok)
      return make_error(Errc::invalid_value, field, key + " has no \"auto\" value; give a number");
    if (key == "max_live_parameters") {
      z.max_live_parameters = x;
    } else if (key == "max_reuse_distance") {
      z.max_reuse_distance = x;
    } else if (key == "prefetch_bucket_size") {
      z.prefetch_bucket_size = x;
    } else if (key == "param_persistence_threshold") {
      z.param_persistence_threshold = x;
    } else if (key == "zero_hpz_partition_size") {
      if (x < 1 || std::floor(x) != x || x > 4096)
        return make_error(Errc::invalid_value, field, "zero_hpz_partition_size must be a whole number >= 1");
      z.hpz_partition_size = static_cast<int>(x);
    } else {
      static const std::vector<std::string> keys = {"max_live_parameters", "max_reuse_distance",
                                                    "prefetch_bucket_size", "param_persistence_threshold",
                                                    "zero_hpz_partition_size"};
      return make_error(Errc::unknown_key, field,
                        "\"" + key + "\" is not a ZeRO-3 setting ftcost models" + known_ids_hint(key, keys));
    }
  }
  return z;
}

namespace {
// "zero3": DeepSpeed ZeRO-3's cache settings (parse_zero3) into the plan.
Status read_zero3_key(const json& obj, ParallelPlan& p) {
  if (!has(obj, "zero3")) return Ok{};
  if (!obj.at("zero3").is_string()) return make_error(Errc::wrong_type, "--zero3", "must be a string");
  FTCOST_TRY(z, parse_zero3(obj.at("zero3").get<std::string>(), "--zero3"));
  p.zero3 = z;
  return Ok{};
}
Status read_offload_and_zero3_keys(const json& obj, ParallelPlan& p) {
  if (auto host = read_offload_keys(obj, p); !host.ok()) return host.error();
  return read_zero3_key(obj, p);
}
}  // namespace

Result<ParallelPlan> plan_from_json(const json& obj, const Inputs& in, const Database& db) {
  if (!obj.is_object())
    return make_error(Errc::wrong_type, "parallel", "must be an object of multi-GPU options");
  static const std::vector<std::string> keys = {
      "gpus",        "nodes",       "parallel", "offload",          "nvme-gbps",
      "host-ram",    "grad-accum",  "node",     "network",          "network-gbit-per-gpu",
      "nvlink-gbps", "collectives", "zero3",    "host-memory-gbps", "sequence-parallel"};
  for (auto it = obj.begin(); it != obj.end(); ++it)
    if (std::find(keys.begin(), keys.end(), it.key()) == keys.end())
      return make_error(Errc::unknown_key, "--" + it.key(),
                        "is not a multi-GPU option" + known_ids_hint(it.key(), keys));
  auto whole = [&](const char* key, double lo, double hi, double dflt) -> Result<int> {
    if (!has(obj, key)) return static_cast<int>(dflt);
    const json& v = obj.at(key);
    if (!v.is_number() || std::floor(v.get<double>()) != v.get<double>())
      return make_error(Errc::invalid_value, std::string("--") + key, "must be a whole number");
    const double x = v.get<double>();
    if (x < lo || x > hi)
      return make_error(
          Errc::out_of_range, std::string("--") + key,
          "must be between " + json(lo).dump() + " and " + json(hi).dump() + ", got " + v.dump());
    return static_cast<int>(x);
  };
  ParallelPlan p;
  GpuSpec g = in.gpu;
  int p2p = -1;
  std::string net = "none";
  double gbit = 0;
  if (has(obj, "node")) {
    if (!obj.at("node").is_string())
      return make_error(Errc::wrong_type, "--node", "must be a node preset id");
    const std::string id = obj.at("node").get<std::string>();
    const NodeShape* n = db.node(id);
    if (n == nullptr) {
      std::vector<std::string> ids;
      for (const auto& [k, v] : db.nodes()) ids.push_back(k);
      return make_error(Errc::unknown_id, "--node",
                        "unknown node preset \"" + id + "\"" + known_ids_hint(id, ids));
    }
    if (n->gpu != in.gpu.id)
      return make_error(Errc::invalid_value, "--node",
                        id + " holds " + n->gpu + " GPUs, but --gpu is " + in.gpu.id);
    p.node_id = id;
    p.gpus_per_node = n->gpus;
    p2p = n->pcie_p2p;
    net = n->network;
    gbit = n->network_gbit_per_gpu;
    p.host_ram_gib = n->host_ram_gib;
    p.host_memory_gbps = n->host_memory_gbps;
  }
  FTCOST_TRY(gpus, whole("gpus", 1, 72, p.gpus_per_node));
  if (!p.node_id.empty() && gpus > p.gpus_per_node)
    return make_error(Errc::out_of_range, "--gpus",
                      "node " + p.node_id + " has " + std::to_string(p.gpus_per_node) + " GPUs, got " +
                          std::to_string(gpus));
  p.gpus_per_node = gpus;
  FTCOST_TRY(nodes, whole("nodes", 1, 4096, 1));
  p.nodes = nodes;
  p.grad_accum = static_cast<int>(std::max<std::int64_t>(1, in.workload.grad_accum));
  if (has(obj, "parallel")) {
    if (!obj.at("parallel").is_string())
      return make_error(Errc::wrong_type, "--parallel", "must be a string");
    FTCOST_TRY(pp, parse_parallel(obj.at("parallel").get<std::string>(), "--parallel", p));
    p = pp;
  } else if (p.ranks() > 1) {
    p.strategy = Strategy::ddp;
  }
  if (auto read = read_offload_and_zero3_keys(obj, p); !read.ok()) return read.error();
  if (has(obj, "network")) {
    if (!obj.at("network").is_string()) return make_error(Errc::wrong_type, "--network", "must be a string");
    net = obj.at("network").get<std::string>();
    if (net != "infiniband" && net != "roce" && net != "ethernet" && net != "none")
      return make_error(Errc::invalid_value, "--network",
                        "must be infiniband, roce, ethernet or none, got " + net);
  }
  FTCOST_TRY(rate, network_rate(obj, net, gbit));
  gbit = rate;
  if ((net == "none") != (gbit <= 0) && (has(obj, "network") || has(obj, "network-gbit-per-gpu")))
    return make_error(Errc::invalid_value, "--network-gbit-per-gpu",
                      "give a network kind and its Gbit/s per GPU together");
  if (has(obj, "nvlink-gbps")) {
    FTCOST_TRY(x, get_number_in(obj, "nvlink-gbps", "", 1, 20000));
    if (g.interconnect.nvlink_gbps_bidirectional <= 0)
      return make_error(Errc::invalid_value, "--nvlink-gbps", in.gpu.id + " has no NVLink to override");
    g.interconnect.nvlink_gbps_bidirectional = x;
  }
  if (has(obj, "collectives")) {
    FTCOST_TRY(rows, parse_collectives(obj.at("collectives"), "collectives"));
    p.collectives = rows;
  }
  FTCOST_TRY(sp, whole("sequence-parallel", 1, 64, 1));
  p.sp = sp;
  if (p.gpus_per_node > 1) p.intra = intra_node_link(g, p.gpus_per_node, p2p, p.host_memory_gbps);
  p.inter = network_link(net, gbit);
  return p;
}

Result<ParallelPlan> plan_from_inputs(const Inputs& in, const Database& db) {
  const MultiGpuRequest& m = in.multi;
  json j = {{"gpus", m.gpus}, {"nodes", m.nodes}, {"offload", m.offload}};
  if (!m.node.empty()) j["node"] = m.node;
  if (!m.parallel.empty()) j["parallel"] = m.parallel;
  if (!m.network.empty()) j["network"] = m.network;
  if (!m.nvme_gbps.empty()) j["nvme-gbps"] = m.nvme_gbps;
  if (!m.zero3.empty()) j["zero3"] = m.zero3;
  if (in.workload.host_ram_gib > 0) j["host-ram"] = in.workload.host_ram_gib;
  if (m.network_gbit_per_gpu > 0) j["network-gbit-per-gpu"] = m.network_gbit_per_gpu;
  if (m.host_memory_gbps > 0) j["host-memory-gbps"] = m.host_memory_gbps;
  if (m.sequence_parallel > 1) j["sequence-parallel"] = m.sequence_parallel;
  // A calibration with measured collectives (ftcost-calibrate --collectives) replaces the assumed link
  // efficiencies for the sizes and rank counts it measured.
  if (in.calibration && !in.calibration->measurements.collectives.empty()) {
    json rows = json::array();
    for (const auto& r : in.calibration->measurements.collectives)
      rows.push_back(json_object({"op", r.op}, {"ranks", r.ranks}, {"bytes", r.bytes}, {"time_us", r.time_us},
                                 {"algbw_gbps", r.algbw_gbps}, {"busbw_gbps", r.busbw_gbps}));
    j["collectives"] = rows;
  }
  return plan_from_json(j, in, db);
}

}  // namespace ftcost
