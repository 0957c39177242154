#include "ftcost/parallel.hpp"

#include "ftcost/calibration.hpp"
#include "ftcost/paper.hpp"
#include "ftcost/units.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <utility>

namespace ftcost {

namespace {

// ---- Constants with their provenance (docs/sources/parallel.md). "code" = read from the library's source,
// "assumed" = an engineering estimate the docs say is one.
// code: torch/nn/parallel/distributed.py DistributedDataParallel(bucket_cap_mb=25).
constexpr double kDdpBucketBytes = 25.0 * kMiB;
// code: deepspeed/runtime/zero/config.py reduce_bucket_size = 5e8, prefetch_bucket_size = 5e7 (elements).
constexpr double kZeroReduceBucketElems = 5e8;
constexpr double kZeroPrefetchElems = 5e7;
// assumed: fraction of the NVLink/PCIe per-direction line rate a large NCCL collective reaches (bus bw).
constexpr double kNvlinkEfficiency = 0.80;
constexpr double kPcieEfficiency = 0.80;
// assumed: without PCIe peer-to-peer NCCL stages through host memory (SHM transport). NCCL's own topology
// model rates that GPU-CPU-GPU path at the PCIe link's speed (src/graph/topo.h, search.cc followPath); what
// costs is host memory and the root complex, shared by every GPU that stages through them, and the socket
// count. torchtune's 4090 rows bracket it: 2 GPUs reached ~0.9 of the line rate, 4 GPUs ~0.55
// (docs/validation.md, multi-GPU). One factor for both; a --collectives calibration replaces it.
constexpr double kPcieHostPenalty = 0.5;
// assumed: fraction of the NIC line rate NCCL reaches (IB/RoCE with GPUDirect RDMA; TCP sockets for
// Ethernet).
constexpr double kIbEfficiency = 0.85;
constexpr double kEthernetEfficiency = 0.5;
// assumed: fixed time of one NCCL collective call per link class (order of nccl-tests' small-message times).
constexpr double kLatencyNvlinkUs = 10, kLatencyPcieUs = 15, kLatencyPcieHostUs = 25, kLatencyIbUs = 20,
                 kLatencyEthernetUs = 60;
// assumed: NCCL communicator buffers per rank and communicator (NCCL_BUFFSIZE 4 MiB x channels x peers).
constexpr double kNcclBufferBytes = 0.25 * kGiB;
// assumed: host Adam (DeepSpeed CPUAdam) parameters updated per second per rank.
constexpr double kHostAdamParamsPerS = 1.0e9;
// assumed: how much slower torch.optim.AdamW steps host tensors than DeepSpeed's CPUAdam. FSDP's CPU offload
// runs the user's torch optimizer on the host shards; DeepSpeedCPUAdam's docstring claims "between 5x to 7x
// speedup over torch.optim.adam(W)" (deepspeed/ops/adam/cpu_adam.py @ edaa722): the middle, 6.
constexpr double kTorchCpuAdamSlowdown = 6.0;
// ZeRO-Infinity (DeepSpeed ZeRO-3, offload device nvme), structural: DeepSpeed's defaults @ edaa722.
// runtime/zero/config.py sub_group_size 1e9 elements: the optimizer steps (and swaps) its partition in
// sub-groups of at most that; runtime/zero/offload_config.py offload_optimizer.buffer_count 4 pinned fp32
// buffers of the largest sub-group (swap_tensor/optimizer_utils.py SwapBufferManager(largest_numel,
// buffer_count)); offload_param.max_in_cpu 1e9 elements stay in host RAM, the rest of the 16-bit partition
// on NVMe, through buffer_count 5 pinned buffers of buffer_size 1e8 elements.
constexpr double kDsSubGroupElems = 1e9;
constexpr double kDsOptimizerSwapBuffers = 4;
constexpr double kDsParamMaxInCpu = 1e9;
constexpr double kDsParamSwapBufferElems = 5 * 1e8;
// assumed default NVMe rates of a node, GB/s: DeepSpeed's DeepNVMe blog (blogs/deepnvme/08-2024/README.md
// @ edaa722) measures 10 GB/s reads and 5 GB/s writes between 4 PCIe 4.0 NVMe SSDs in RAID-0 and CPU memory
// (Azure NC96ads_A100_v4, libaio); --nvme-gbps gives the user's own drives.
constexpr double kDefaultNvmeReadGbps = 10, kDefaultNvmeWriteGbps = 5;

double d(std::int64_t v) { return static_cast<double>(v); }

double pcie_lane_gbps(int gen) {
  // PCI-SIG per-lane rate per direction after encoding, GB/s (gen3 8 GT/s 128b/130b onwards).
  switch (gen) {
    case 1:
      return 0.25;
    case 2:
      return 0.5;
    case 3:
      return 0.985;
    case 4:
      return 1.969;
    case 5:
      return 3.938;
    case 6:
      return 7.563;
    default:
      return gen > 6 ? 15.125 : 1.969;
  }
}

}  // namespace

const char* strategy_name(Strategy s) {
  switch (s) {
    case Strategy::single:
      return "single";
    case Strategy::ddp:
      return "ddp";
    case Strategy::fsdp:
      return "fsdp";
    case Strategy::fsdp_grad_op:
      return "fsdp-grad-op";
    case Strategy::hsdp:
      return "hsdp";
    case Strategy::zero1:
      return "zero1";
    case Strategy::zero2:
      return "zero2";
    case Strategy::zero3:
      return "zero3";
    case Strategy::tp:
      return "tp";
    case Strategy::ep:
      return "ep";
    case Strategy::cp:
      return "cp";
  }
  return "?";
}

const char* offload_name(Offload o) {
  switch (o) {
    case Offload::none:
      return "none";
    case Offload::optimizer:
      return "optimizer";
    case Offload::params:
      return "params";
    case Offload::optimizer_nvme:
      return "optimizer-nvme";
    case Offload::params_nvme:
      return "params-nvme";
  }
  return "?";
}

bool offloads_params(Offload o) { return o == Offload::params || o == Offload::params_nvme; }
bool offload_on_nvme(Offload o) { return o == Offload::optimizer_nvme || o == Offload::params_nvme; }

const char* coll_op_name(CollOp o) {
  switch (o) {
    case CollOp::all_reduce:
      return "all_reduce";
    case CollOp::all_gather:
      return "all_gather";
    case CollOp::reduce_scatter:
      return "reduce_scatter";
    case CollOp::all_to_all:
      return "all_to_all";
    case CollOp::send_recv:
      return "send_recv";
  }
  return "?";
}

const char* link_kind_name(LinkKind k) {
  switch (k) {
    case LinkKind::nvswitch:
      return "nvswitch";
    case LinkKind::nvlink_bridge:
      return "nvlink-bridge";
    case LinkKind::pcie_p2p:
      return "pcie-p2p";
    case LinkKind::pcie_host:
      return "pcie-via-host";
    case LinkKind::infiniband:
      return "infiniband";
    case LinkKind::roce:
      return "roce";
    case LinkKind::ethernet:
      return "ethernet";
    case LinkKind::none:
      return "none";
  }
  return "?";
}

double busbw_factor(CollOp op, int ranks) {
  const double n = static_cast<double>(std::max(ranks, 1));
  switch (op) {
    case CollOp::all_reduce:
      return 2.0 * (n - 1.0) / n;
    case CollOp::all_gather:
    case CollOp::reduce_scatter:
    case CollOp::all_to_all:
      return (n - 1.0) / n;
    case CollOp::send_recv:
      return 1.0;
  }
  return 1.0;
}

Result<std::vector<CollectivePoint>> parse_collectives(const json& rows, const std::string& field) {
  if (!rows.is_array()) return make_error(Errc::wrong_type, field, "must be an array of rows");
  std::vector<CollectivePoint> out;
  static const std::map<std::string, CollOp> ops = {{"all_reduce", CollOp::all_reduce},
                                                    {"all_gather", CollOp::all_gather},
                                                    {"reduce_scatter", CollOp::reduce_scatter},
                                                    {"all_to_all", CollOp::all_to_all},
                                                    {"send_recv", CollOp::send_recv}};
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::string p = field + "[" + std::to_string(i) + "]";
    const json& r = rows[i];
    if (!r.is_object()) return make_error(Errc::wrong_type, p, "must be an object");
    CollectivePoint c;
    FTCOST_TRY(op, get_string(r, "op", p));
    auto it = ops.find(op);
    if (it == ops.end())
      return make_error(
          Errc::invalid_value, p + ".op",
          "must be all_reduce, all_gather, reduce_scatter, all_to_all or send_recv, got \"" + op + "\"");
    c.op = it->second;
    FTCOST_TRY(ranks, get_number_in(r, "ranks", p, 2, 1 << 20));
    if (std::floor(ranks) != ranks) return make_error(Errc::invalid_value, p + ".ranks", "must be whole");
    c.ranks = static_cast<int>(ranks);
    FTCOST_TRY(bytes, get_number_in(r, "bytes", p, 1, 1e15));
    FTCOST_TRY(t, get_number_in(r, "time_us", p, 1e-3, 1e12));
    FTCOST_TRY(alg, get_number_in(r, "algbw_gbps", p, 0, 1e6));
    FTCOST_TRY(bus, get_number_in(r, "busbw_gbps", p, 0, 1e6));
    c.bytes = bytes;
    c.time_us = t;
    c.algbw_gbps = alg;
    c.busbw_gbps = bus;
    // nccl-tests' columns must agree: algbw = S / t, busbw = algbw * factor (1% for rounding in printouts).
    const double alg_expect = bytes / (t * 1e-6) / 1e9;
    if (std::fabs(alg - alg_expect) > 0.01 * alg_expect + 0.01)
      return make_error(Errc::invalid_value, p + ".algbw_gbps",
                        "is not bytes / time_us (" + json(alg_expect).dump() + " GB/s expected)");
    const double bus_expect = alg * busbw_factor(c.op, c.ranks);
    if (std::fabs(bus - bus_expect) > 0.01 * bus_expect + 0.01)
      return make_error(Errc::invalid_value, p + ".busbw_gbps",
                        "is not algbw x the nccl-tests factor for " + op + " on " + std::to_string(c.ranks) +
                            " ranks (" + json(bus_expect).dump() + " GB/s expected)");
    out.push_back(c);
  }
  return out;
}

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
      "gpus",        "nodes",       "parallel", "offload", "nvme-gbps",
      "host-ram",    "grad-accum",  "node",     "network", "network-gbit-per-gpu",
      "nvlink-gbps", "collectives", "zero3"};
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
  if (p.gpus_per_node > 1) p.intra = intra_node_link(g, p.gpus_per_node, p2p);
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
  // A calibration with measured collectives (ftcost-calibrate --collectives) replaces the assumed link
  // efficiencies for the sizes and rank counts it measured.
  if (in.calibration && !in.calibration->measurements.collectives.empty()) {
    json rows = json::array();
    for (const auto& r : in.calibration->measurements.collectives)
      rows.push_back(json{{"op", r.op},
                          {"ranks", r.ranks},
                          {"bytes", r.bytes},
                          {"time_us", r.time_us},
                          {"algbw_gbps", r.algbw_gbps},
                          {"busbw_gbps", r.busbw_gbps}});
    j["collectives"] = rows;
  }
  return plan_from_json(j, in, db);
}

Link intra_node_link(const GpuSpec& g, int gpus_per_node, int pcie_p2p_override) {
  const GpuInterconnect& ic = g.interconnect;
  Link l;
  if (ic.nvlink_gbps_bidirectional > 0 && !ic.nvlink_topology.empty() &&
      gpus_per_node <= ic.nvlink_max_gpus) {
    // "mesh" (DGX-1's hybrid cube-mesh) is treated like a switch: NCCL's rings use every GPU's links.
    l.kind = ic.nvlink_topology == "bridge" ? LinkKind::nvlink_bridge : LinkKind::nvswitch;
    l.busbw_gbps = ic.nvlink_gbps_bidirectional / 2.0 * kNvlinkEfficiency;
    l.latency_us = kLatencyNvlinkUs;
    l.note = g.id + " NVLink " +
             (ic.nvlink_generation > 0 ? std::to_string(ic.nvlink_generation) + " " : "") +
             json(ic.nvlink_gbps_bidirectional).dump() + " GB/s bidirectional per GPU, /2 per direction x " +
             json(kNvlinkEfficiency).dump() + " (assumed NCCL efficiency)";
    return l;
  }
  const int gen = ic.pcie_gen > 0 ? ic.pcie_gen : 4;
  const double raw = pcie_lane_gbps(gen) * ic.pcie_lanes;
  const int p2p = pcie_p2p_override >= 0 ? pcie_p2p_override : ic.pcie_p2p;
  std::string why = g.id + " PCIe gen" + std::to_string(gen) + " x" + std::to_string(ic.pcie_lanes) + " (" +
                    json(std::round(raw * 10) / 10).dump() + " GB/s per direction)";
  if (ic.nvlink_gbps_bidirectional > 0 && gpus_per_node > ic.nvlink_max_gpus)
    why += "; its NVLink joins only " + std::to_string(ic.nvlink_max_gpus) + " GPUs";
  if (p2p == 0) {
    l.kind = LinkKind::pcie_host;
    l.busbw_gbps = raw * kPcieEfficiency * kPcieHostPenalty;
    l.latency_us = kLatencyPcieHostUs;
    l.note = why + ", peer-to-peer blocked: staged through host memory (x" + json(kPcieHostPenalty).dump() +
             ", assumed)";
  } else {
    l.kind = LinkKind::pcie_p2p;
    l.busbw_gbps = raw * kPcieEfficiency;
    l.latency_us = kLatencyPcieUs;
    l.note = why + (p2p < 0 ? ", peer-to-peer assumed allowed (not stated)" : ", peer-to-peer") + " x " +
             json(kPcieEfficiency).dump() + " (assumed NCCL efficiency)";
  }
  return l;
}

Link network_link(const std::string& kind, double gbit_per_gpu) {
  Link l;
  if (kind == "none" || gbit_per_gpu <= 0) return l;
  const bool eth = kind == "ethernet";
  l.kind = kind == "infiniband" ? LinkKind::infiniband : kind == "roce" ? LinkKind::roce : LinkKind::ethernet;
  const double eff = eth ? kEthernetEfficiency : kIbEfficiency;
  l.busbw_gbps = gbit_per_gpu / 8.0 * eff;
  l.latency_us = eth ? kLatencyEthernetUs : kLatencyIbUs;
  l.note = kind + " " + json(gbit_per_gpu).dump() + " Gbit/s per GPU x " + json(eff).dump() +
           " (assumed NCCL efficiency)";
  return l;
}

double collective_time_s(CollOp op, double bytes, int ranks, const Link& link,
                         const std::vector<CollectivePoint>& curves) {
  if (ranks <= 1 || bytes <= 0) return 0;
  const double f = busbw_factor(op, ranks);
  std::vector<const CollectivePoint*> pts;
  for (const auto& c : curves)
    if (c.op == op && c.ranks == ranks && c.busbw_gbps > 0) pts.push_back(&c);
  if (!pts.empty()) {
    std::sort(pts.begin(), pts.end(),
              [](const CollectivePoint* a, const CollectivePoint* b) { return a->bytes < b->bytes; });
    if (bytes <= pts.front()->bytes) return pts.front()->time_us * 1e-6;  // latency-bound below the curve
    double bus = pts.back()->busbw_gbps;
    for (std::size_t i = 1; i < pts.size(); ++i) {
      if (bytes <= pts[i]->bytes) {
        const double x0 = std::log(pts[i - 1]->bytes);
        const double x1 = std::log(pts[i]->bytes);
        const double t = x1 > x0 ? (std::log(bytes) - x0) / (x1 - x0) : 1.0;
        bus = pts[i - 1]->busbw_gbps + t * (pts[i]->busbw_gbps - pts[i - 1]->busbw_gbps);
        break;
      }
    }
    return bytes * f / (bus * 1e9);
  }
  if (link.busbw_gbps <= 0) return 0;
  return link.latency_us * 1e-6 + bytes * f / (link.busbw_gbps * 1e9);
}

double group_collective_time_s(CollOp op, double bytes, int gpus_per_node, int nodes, const ParallelPlan& p) {
  const int gpn = gpus_per_node;
  const std::vector<CollectivePoint> none;
  if (gpn * nodes <= 1) return 0;
  if (nodes <= 1) return collective_time_s(op, bytes, gpn, p.intra, p.collectives);
  if (gpn <= 1) return collective_time_s(op, bytes, nodes, p.inter, none);
  const auto n = static_cast<double>(gpn * nodes);
  switch (op) {
    case CollOp::all_reduce:
      return collective_time_s(CollOp::reduce_scatter, bytes, gpn, p.intra, p.collectives) +
             collective_time_s(CollOp::all_reduce, bytes / gpn, nodes, p.inter, none) +
             collective_time_s(CollOp::all_gather, bytes, gpn, p.intra, p.collectives);
    case CollOp::all_gather:
    case CollOp::reduce_scatter:
      return collective_time_s(op, bytes / gpn, nodes, p.inter, none) +
             collective_time_s(op, bytes, gpn, p.intra, p.collectives);
    case CollOp::all_to_all: {
      // Each rank sends S/n to every rank: (nodes-1)/nodes of S leaves the node on the GPU's NIC share.
      const double inter =
          p.inter.busbw_gbps > 0 ? bytes * (nodes - 1.0) / nodes / (p.inter.busbw_gbps * 1e9) : 0;
      const double intra =
          collective_time_s(CollOp::all_to_all, bytes * gpn / n, gpn, p.intra, p.collectives);
      return p.inter.latency_us * 1e-6 + inter + intra;
    }
    case CollOp::send_recv:
      return collective_time_s(op, bytes, 2, p.inter, none);
  }
  return 0;
}

ZeroEstimate deepspeed_zero2_estimate(std::int64_t total_params, int gpus_per_node, int nodes,
                                      bool cpu_offload, double additional_buffer_factor) {
  // deepspeed/runtime/zero/stage_1_and_2.py estimate_zero2_model_states_mem_needs (commit edaa722), verbatim
  // in arithmetic order: Python ints stay exact, `/` is true division, int() truncates.
  const std::int64_t total_gpus = static_cast<std::int64_t>(nodes) * gpus_per_node;
  ZeroEstimate z;
  if (cpu_offload) {
    const std::int64_t gpu_mem = 2 * total_params;
    const double cpu_mem = static_cast<double>(total_params * std::max<std::int64_t>(4 * total_gpus, 16)) *
                           additional_buffer_factor;
    z.gpu_bytes = gpu_mem;
    z.cpu_bytes = static_cast<std::int64_t>(cpu_mem);
  } else {
    const std::int64_t gpu_mem =
        2 * total_params +
        static_cast<std::int64_t>(static_cast<double>(18 * total_params) / static_cast<double>(total_gpus));
    const double cpu_mem = static_cast<double>(total_params * 4 * gpus_per_node) * additional_buffer_factor;
    z.gpu_bytes = gpu_mem;
    z.cpu_bytes = static_cast<std::int64_t>(cpu_mem);
  }
  return z;
}

ZeroEstimate deepspeed_zero3_estimate(std::int64_t total_params, std::int64_t largest_layer_params,
                                      int gpus_per_node, int nodes, bool cpu_offload, bool cpu_offload_params,
                                      bool zero_init, double additional_buffer_factor) {
  // deepspeed/runtime/zero/stage3.py estimate_zero3_model_states_mem_needs (commit edaa722).
  const std::int64_t total_gpus = static_cast<std::int64_t>(nodes) * gpus_per_node;
  const double gpus_factor = 1.0 / static_cast<double>(nodes);
  const std::int64_t largest_layer_memory = 4 * largest_layer_params;
  const auto P = static_cast<double>(total_params);
  ZeroEstimate z;
  z.largest_layer_bytes = largest_layer_memory;
  double cpu_mem = 0;
  std::int64_t gpu_mem = 0;
  auto tdiv = [&](std::int64_t num) {
    return static_cast<std::int64_t>(static_cast<double>(num) / static_cast<double>(total_gpus));
  };
  if (cpu_offload) {
    if (cpu_offload_params) {
      gpu_mem = largest_layer_memory;
      if (zero_init)
        cpu_mem = static_cast<double>(total_params * 18) * gpus_factor * additional_buffer_factor;
      else
        cpu_mem =
            P * std::max(static_cast<double>(4 * gpus_per_node), 18 * gpus_factor) * additional_buffer_factor;
    } else {
      gpu_mem = largest_layer_memory + tdiv(2 * total_params);
      if (zero_init)
        cpu_mem = static_cast<double>(total_params * 16) * gpus_factor * additional_buffer_factor;
      else
        cpu_mem =
            P * std::max(static_cast<double>(4 * gpus_per_node), 16 * gpus_factor) * additional_buffer_factor;
    }
  } else {
    gpu_mem = largest_layer_memory + tdiv(18 * total_params);
    if (zero_init)
      cpu_mem = static_cast<double>(largest_layer_params * 4 * gpus_per_node) * additional_buffer_factor;
    else
      cpu_mem = static_cast<double>(total_params * 4 * gpus_per_node) * additional_buffer_factor;
  }
  z.gpu_bytes = gpu_mem;
  z.cpu_bytes = static_cast<std::int64_t>(cpu_mem);
  return z;
}

std::int64_t largest_module_params(const ModelSpec& m) {
  const ParamCounts c = m.params();
  std::int64_t mx = std::max(c.embedding, c.lm_head);
  return std::max(mx, m.largest_linear());
}

std::vector<FetchModules> zero3_fetch_modules(const ModelSpec& m) {
  std::vector<FetchModules> out;
  auto add = [&out](std::int64_t elems, std::int64_t count) {
    if (elems > kZero3PersistenceThreshold && count > 0) out.push_back({elems, count});
  };
  const std::int64_t H = m.hidden;
  const ParamCounts pc = m.params();
  add(pc.embedding, 1);
  if (!m.tied_embeddings) add(pc.lm_head, 1);
  const std::int64_t att = m.layers_with(Mixer::attention);
  if (att > 0) {
    const AttentionSpec& a = m.attn;
    if (a.mla) {
      add(m.attention_params_per_layer() / 4, 4 * att);
    } else {
      const std::int64_t q = a.heads * a.head_dim;
      const std::int64_t kv = a.kv_heads * a.head_dim;
      add(H * q + (a.qkv_bias ? q : 0), att);
      add(H * kv + (a.qkv_bias ? kv : 0), 2 * att);
      add(q * H + (a.o_bias ? H : 0), att);
    }
  }
  const std::int64_t mam = m.layers_with(Mixer::mamba);
  if (mam > 0) {
    const MambaSpec& b = m.mamba;
    add(H * 2 * b.d_inner, mam);                        // in_proj
    add(b.d_inner * b.d_conv, mam);                     // conv1d
    add(b.d_inner * (b.dt_rank + 2 * b.d_state), mam);  // x_proj
    add(b.dt_rank * b.d_inner, mam);                    // dt_proj
    add(b.d_inner * H, mam);                            // out_proj
  }
  const std::int64_t dense = m.layers_with(Ffn::mlp);
  if (dense > 0) add(H * m.mlp.intermediate, (m.mlp.gated ? 3 : 2) * dense);
  const std::int64_t moe = m.layers_with(Ffn::moe);
  if (moe > 0) {
    const MoeSpec& e = m.moe;
    add(H * e.expert_intermediate, (e.gated ? 3 : 2) * e.experts * moe);
    add(m.router_params_per_layer(), moe);
    if (e.shared_experts > 0 && e.shared_intermediate > 0)
      add(H * e.shared_intermediate, (e.gated ? 3 : 2) * e.shared_experts * moe);
    if (e.shared_gate) add(H, moe);  // H -> 1: persistent below 1e5 elements
  }
  return out;
}

std::int64_t zero3_fetch_module_count(const ModelSpec& m) {
  std::int64_t n = 0;
  for (const auto& f : zero3_fetch_modules(m)) n += f.count;
  return n;
}

namespace {

// The modules of the last decoder layer in forward order, elements each (DeepSpeed fetches per sub-module
// with parameters of its own; those at or under the persistence threshold stay resident and are left out).
std::vector<double> last_layer_modules(const ModelSpec& m, double persist) {
  std::vector<double> out;
  auto add = [&out, persist](std::int64_t elems, std::int64_t count) {
    if (d(elems) > persist)
      for (std::int64_t i = 0; i < count; ++i) out.push_back(d(elems));
  };
  if (m.groups.empty()) return out;
  const LayerGroup& g = m.groups.back();
  const std::int64_t H = m.hidden;
  if (g.mixer == Mixer::attention) {
    const AttentionSpec& a = m.attn;
    if (a.mla) {
      add(m.attention_params_per_layer() / 4, 4);
    } else {
      add(H * a.heads * a.head_dim, 1);
      add(H * a.kv_heads * a.head_dim, 2);
      add(a.heads * a.head_dim * H, 1);
    }
  } else if (g.mixer == Mixer::mamba) {
    add(m.mamba_params_per_layer(), 1);
  }
  if (g.ffn == Ffn::mlp) add(H * m.mlp.intermediate, m.mlp.gated ? 3 : 2);
  if (g.ffn == Ffn::moe) {
    const MoeSpec& e = m.moe;
    add(m.router_params_per_layer(), 1);
    add(H * e.expert_intermediate, (e.gated ? 3 : 2) * e.experts);
    if (e.shared_experts > 0) add(H * e.shared_intermediate, (e.gated ? 3 : 2) * e.shared_experts);
  }
  return out;
}

}  // namespace

double Zero3Settings::prefetch_elems(const ModelSpec& m) const {
  return prefetch_bucket_size > 0 ? prefetch_bucket_size : std::floor(0.9 * d(m.hidden) * d(m.hidden));
}

double Zero3Settings::persistence_elems(const ModelSpec& m) const {
  return param_persistence_threshold > 0 ? param_persistence_threshold : 10.0 * d(m.hidden);
}

double zero3_retained_elems(const ModelSpec& m, double reuse_distance, bool checkpointing) {
  if (reuse_distance <= 0) return 0;
  const ParamCounts pc = m.params();
  const double lm = d(m.tied_embeddings ? pc.embedding : pc.lm_head);
  const std::vector<double> layer = last_layer_modules(m, d(kZero3PersistenceThreshold));
  double layer_total = 0;
  for (const double x : layer) layer_total += x;
  double kept = lm;  // lm_head: its backward follows its forward at once
  if (layer_total <= 0) return kept;
  double after = lm;  // forward elements after the module (its own layer's, later layers', lm_head)
  double later = 0;   // whole decoder layers after the module's layer
  const std::int64_t n = m.layers();
  for (std::int64_t l = 0; l < n; ++l) {
    double in_layer_after = 0;
    for (auto it = layer.rbegin(); it != layer.rend(); ++it) {
      const double before = layer_total - in_layer_after - *it;
      // the trace from this module's release to its next use: the rest of the forward, lm_head's backward,
      // then (checkpointed) each later layer's recompute and backward and this layer's recompute up to it,
      // or (not checkpointed) the later modules' backward
      const double dist = checkpointing ? after + lm + 2.0 * later + before : 2.0 * after;
      if (dist < reuse_distance) kept += *it;
      after += *it;
      in_layer_after += *it;
      if ((checkpointing ? after + lm : 2.0 * after) >= reuse_distance) return kept;
    }
    later += layer_total;
  }
  return kept;
}

std::string rank_memory_state(const ParallelEstimate& e) {
  if (!e.fits) return "does_not_fit";
  if (e.usable_bytes > 0 && e.memory_high > e.usable_bytes) return "may_not_fit";
  const double need = e.usable_bytes > 0 ? e.memory.resident() / e.usable_bytes : 0;  // paged states yield
  return need > kTightMemoryFraction ? "tight" : "fits";
}

double RankMemory::model_state_bytes() const {
  return base.weights + base.trainable_params + base.gradients + base.optimizer_states + fp32_grad_partition +
         gather_buffers;
}

double RankMemory::total() const {
  return base.total() + fp32_grad_partition + gather_buffers + bucket_buffers + nccl_buffers + live_params;
}

double RankMemory::resident() const { return total() - (base.paged_optimizer ? base.optimizer_states : 0.0); }

double RankMemory::on_gpu(double usable) const {
  return base.paged_optimizer ? std::min(total(), std::max(resident(), usable)) : total();
}

double RankMemory::paged_out(double usable) const { return total() - on_gpu(usable); }

namespace {

bool is_sharded_dp(Strategy s) {
  return s == Strategy::fsdp || s == Strategy::fsdp_grad_op || s == Strategy::hsdp || s == Strategy::zero1 ||
         s == Strategy::zero2 || s == Strategy::zero3;
}
bool is_zero(Strategy s) { return s == Strategy::zero1 || s == Strategy::zero2 || s == Strategy::zero3; }
bool is_fsdp(Strategy s) { return s == Strategy::fsdp || s == Strategy::fsdp_grad_op || s == Strategy::hsdp; }

// Parameters the host optimizer updates per second per rank: DeepSpeed's CPUAdam, or torch's AdamW on the
// host shards under FSDP's offload. torch's fused AdamW has a CPU kernel (aten/src/ATen/native/FusedAdam.cpp
// _fused_adamw_kernel_cpu_ -> fused_adam_stub, native/cpu/FusedAdamKernel.cpp: one vectorized pass over
// param, grad and both states, at::parallel_for over the host's threads; PyTorch >= 2.4), the same kind of
// single-pass vectorized, multithreaded kernel as DeepSpeed's CPUAdam (csrc/adam/cpu_adam_impl.cpp, AVX,
// OpenMP): assumed the same rate. The slowdown applies to the foreach / for-loop paths it was stated for
// (DeepSpeedCPUAdam's docstring compares with torch.optim.adam(W) before the fused CPU kernel existed).
double host_adam_params_per_s(Strategy s, const StackProfile& stack) {
  const bool torch_unfused = is_fsdp(s) && stack.adamw_implementation != "fused";
  return torch_unfused ? kHostAdamParamsPerS / kTorchCpuAdamSlowdown : kHostAdamParamsPerS;
}

// The model one tensor-parallel rank holds: heads, FFN widths and the vocabulary split t ways (Megatron's
// column/row-parallel linears and vocab-parallel embedding).
ModelSpec tp_shard(const ModelSpec& m, int t) {
  ModelSpec r = m;
  auto div = [t](std::int64_t v) { return std::max<std::int64_t>(1, (v + t - 1) / t); };
  r.attn.heads = div(m.attn.heads);
  r.attn.kv_heads = div(m.attn.kv_heads);
  r.mlp.intermediate = div(m.mlp.intermediate);
  r.moe.expert_intermediate = div(m.moe.expert_intermediate);
  r.moe.shared_intermediate = div(m.moe.shared_intermediate);
  r.mamba.d_inner = div(m.mamba.d_inner);
  r.vocab = div(m.vocab);
  return r;
}

struct Ctx {
  const Inputs& in;
  const ParallelPlan& plan;
  Strategy st;
  int deg;
  ModelSpec m_eff;  // what one rank computes (TP-sharded model)
  double seq_len = 0;
  double z3_retained = 0;  // ZeRO-3: elements kept gathered by the reuse distance (zero3_retained_elems)
};

// Shard group size for sharded data parallelism.
int shard_group(const ParallelPlan& p, Strategy s) {
  if (s == Strategy::hsdp) return p.gpus_per_node;
  return p.ranks();
}

// The Trainer's torch AdamW (exported DeepSpeed configs name no optimizer) steps DeepSpeed's fp32 partition:
// a foreach one (a temporary in the single-GPU breakdown) allocates one fp32 state-sized list of it.
double zero_partition_step_temp(const MemoryBreakdown& mb, double P, double N) {
  return mb.optimizer_step_temp > 0 ? 4.0 * P / N : 0.0;
}

// ZeRO-Infinity: what host RAM held for the offload goes to NVMe but the pinned swap buffers (and the
// parameters up to max_in_cpu elements). Per rank: `opt_bytes` over `opt_elems` elements is what the CPU
// offload keeps for the optimizer (full fine-tuning: fp32 master + Adam states + fp32 gradients, 16 B per
// element of the partition), `param_bytes` over `param_elems` the rank's parameter partition (16-bit; NF4
// packed for QLoRA). stage3.py _configure_tensor_swapping (the fp32 partition and its gradient are swapped
// per sub-group) and partitioned_param_swapper.py (parameters) @ edaa722. Nothing unless `o` is on NVMe.
void move_to_nvme(RankMemory& r, Offload o, double opt_bytes, double opt_elems, double param_bytes,
                  double param_elems) {
  if (!offload_on_nvme(o)) return;
  const bool params = offloads_params(o);
  r.nvme_optimizer_bytes = opt_bytes;
  r.host_bytes = kDsOptimizerSwapBuffers * std::min(kDsSubGroupElems, opt_elems) * 4.0;
  if (params && param_elems > 0) {
    const double in_cpu = std::min(1.0, kDsParamMaxInCpu / param_elems);
    r.nvme_param_bytes = param_bytes * (1.0 - in_cpu);
    r.host_bytes += param_bytes * in_cpu + 2.0 * kDsParamSwapBufferElems;
  }
}

// DeepSpeed ZeRO-3's parameters gathered beyond the working set (gather_buffers), in the compute dtype
// (deepspeedai/DeepSpeed @ edaa722, runtime/zero/partitioned_param_coordinator.py):
//  - modules kept by the reuse distance (__params_to_release: a module whose next use in the recorded trace
//    lies within stage3_max_reuse_distance elements is not released; zero3_retained_elems), at the
//    forward/backward turn, less the largest module the working set already counts;
//  - the prefetch in flight (_fetch_sub_module_impl: each fetch gathers up to stage3_prefetch_bucket_size
//  more
//    elements of the trace, while fewer than stage3_max_live_parameters are available). When the bucket is at
//    least the mean module the look-ahead grows by a bucket per module and stops at max_live;
//  - persistent parameters (parameter_offload.py mark_persistent_parameters: at most
//    stage3_param_persistence_threshold elements: norms, small routers), whole on every rank;
//  - hpZ (zero_hpz_partition_size > 1): the secondary copy of the 16-bit parameters partitioned within the
//    hpZ group (partition_parameters.py _partition_param_sec, ds_secondary_tensor).
// With the settings assumed (no --zero3), the upper end adds the look-ahead up to max_live: DeepSpeed's own
// default bucket (5e7) runs that far on models whose modules are smaller than it.
void add_zero3_live(RankMemory& r, const Ctx& c, double bytes_per_elem) {
  const Zero3Settings& z = c.plan.zero3;
  const ModelSpec& m = c.m_eff;
  double elems = 0;
  double count = 0;
  for (const auto& f : zero3_fetch_modules(m)) {
    elems += d(f.elems) * d(f.count);
    count += d(f.count);
  }
  const double mean_module = count > 0 ? elems / count : 0;
  const double room = std::max(0.0, z.max_live_parameters - c.z3_retained);
  const double bucket = z.prefetch_elems(m);
  const double ahead = bucket >= mean_module ? room : std::min(bucket, room);
  const double largest = d(largest_module_params(m));
  const ParamCounts pc = m.params();
  const double thr = z.persistence_elems(m);
  double persistent = d(pc.norms);
  if (d(m.router_params_per_layer()) <= thr) persistent += d(pc.router);
  r.live_params = bytes_per_elem * (std::max(0.0, c.z3_retained + ahead - largest) + persistent);
  if (z.hpz_partition_size > 1) r.live_params += bytes_per_elem * d(pc.total()) / z.hpz_partition_size;
  if (!z.given && ahead < room) {
    r.residue_high = bytes_per_elem * (room - ahead);
    char cap[32];
    std::snprintf(cap, sizeof cap, "%.3g", z.max_live_parameters);
    std::string text = cap;  // "1e+09" -> "1e9", as DeepSpeed's configs write it
    for (const char* from : {"e+0", "e+"})
      if (const auto at = text.find(from); at != std::string::npos)
        text.replace(at, std::string(from).size(), "e");
    r.residue_term = std::string("ZeRO-3's prefetch look-ahead up to stage3_max_live_parameters (") + text +
                     " elements; DeepSpeed's default stage3_prefetch_bucket_size 5e7 runs that far, the HF "
                     "Trainer's \"auto\" 0.9 H^2 does not; --zero3 gives yours)";
  }
}

// FSDP (FULL_SHARD, HSDP): the root unit -- the parameters outside the wrapped decoder layers: embedding,
// final norm, lm_head -- is not resharded after forward and stays gathered until its backward (FSDP1:
// torch/distributed/fsdp/_runtime_utils.py _post_forward_reshard, `not state._is_root`; FSDP2:
// fully_shard's reshard_after_forward "The root FSDP state has its value specially set to False"), in the
// compute dtype. The upper end adds a third decoder unit in flight: forward_prefetch (FSDP1) or an explicit
// prefetch depth of 2 (FSDP2 set_modules_to_forward_prefetch / _backward_prefetch) that a config may set.
double fsdp_root_unit_bytes(const ModelSpec& m, const Workload& w) {
  const ParamCounts pc = m.params();
  return d(pc.embedding + pc.lm_head + m.norm_params()) * w.compute_bytes();
}

// Full-shard (FSDP, HSDP, ZeRO-3) gathered parameters for adapters or without DeepSpeed's full accounting:
// FSDP the running unit, the prefetched next one and the root unit; ZeRO-3 the largest module twice and the
// live-parameter cache.
void add_stage3_gathered(RankMemory& r, const Ctx& c, double unit, double root) {
  const double bytes = c.in.workload.compute_bytes();
  if (!is_fsdp(c.st)) {
    r.gather_buffers = 2.0 * d(largest_module_params(c.m_eff)) * bytes;
    add_zero3_live(r, c, bytes);
    return;
  }
  r.gather_buffers = 2.0 * unit;
  r.live_params = root;
  r.residue_high = unit;
  r.residue_term =
      "a third FSDP unit in flight (forward_prefetch, or a prefetch depth of 2 set in the config)";
}

RankMemory rank_memory(const Ctx& c, std::int64_t micro) {
  const Inputs& in = c.in;
  const Workload& w = in.workload;
  const StackProfile& s = in.stack;
  const ParallelPlan& p = c.plan;
  RankMemory r;
  const double seq = c.st == Strategy::cp ? c.seq_len / c.deg : c.seq_len;
  MemoryBreakdown mb = memory_for_batch(c.m_eff, w, s, micro, seq);
  const double P = d(c.m_eff.params().total());
  const auto N = static_cast<double>(shard_group(p, c.st));
  const bool full = w.method == Method::full;
  if (c.st == Strategy::tp) {
    // Sequence parallelism: hidden-sized activations are split t ways too (Megatron SP); logits are
    // vocab-parallel already in the sharded model.
    const MemoryBreakdown unsharded = memory_for_batch(in.model, w, s, micro, seq);
    mb.activations = unsharded.activations / c.deg;
    mb.activations_backward = unsharded.activations_backward / c.deg;
    mb.activations_last_layer = unsharded.activations_last_layer / c.deg;
  }
  if (c.st == Strategy::ep) {
    const ParamCounts pc = in.model.params();
    const double f = d(pc.experts) / std::max(1.0, d(pc.total()));
    const double keep = 1.0 - f * (1.0 - 1.0 / c.deg);
    mb.weights *= keep;
    mb.trainable_params *= keep;
    mb.gradients *= keep;
    mb.optimizer_states *= keep;
    mb.optimizer_step_temp *= keep;
    mb.autocast_copies *= keep;
  }
  if (is_zero(c.st) && full) {
    // DeepSpeed's mixed-precision accounting (stage_1_and_2.py / stage3.py estimators): 16-bit params and
    // grads, fp32 grads partition, fp32 master params + Adam momentum and variance.
    mb.weights = 2 * P;
    mb.gradients = 2 * P;
    r.fp32_grad_partition = 4 * P;
    mb.optimizer_states = 12 * P;
    mb.paged_optimizer = false;  // DeepSpeed allocates its own fp32 states, whatever --optimizer says
    mb.optimizer_step_temp = zero_partition_step_temp(mb, P, N);
    mb.autocast_copies = 0;
    mb.gradients /= N;  // the estimator counts the 16-bit gradients partitioned for stages 1 and 2 alike
    r.fp32_grad_partition /= N;
    mb.optimizer_states /= N;
    if (c.st == Strategy::zero3) {
      // Stage 3 reduces each layer's 16-bit gradients straight into the fp32 partition: they live only in
      // the per-layer working set, which the estimator counts as 4 bytes (16-bit param + grad) of the
      // largest layer.
      mb.weights /= N;
      mb.gradients = 0;
      r.gather_buffers = 4.0 * d(largest_module_params(c.m_eff));
      add_zero3_live(r, c, 2.0);
    }
    if (p.offload != Offload::none) {
      r.host_bytes = mb.optimizer_states + r.fp32_grad_partition;
      mb.optimizer_states = 0;
      mb.optimizer_step_temp = 0;  // the step runs on the host (DeepSpeedCPUAdam)
      r.fp32_grad_partition = 0;
      if (c.st != Strategy::zero3) {
        mb.gradients = 0;  // streamed to host during backward (estimator: GPU keeps only 2P)
      } else {
        if (offloads_params(p.offload)) {
          r.host_bytes += mb.weights;
          mb.weights = 0;
        }
      }
      move_to_nvme(r, p.offload, 16.0 * P / N, P / N, 2.0 * P / N, P / N);
    }
    const double grads_elems = P;
    r.bucket_buffers = 2.0 * std::min(kZeroReduceBucketElems, grads_elems);
    if (c.st == Strategy::zero3) r.bucket_buffers += 2.0 * std::min(kZeroPrefetchElems, P);
  } else if (is_zero(c.st) || is_fsdp(c.st)) {
    const int stage = c.st == Strategy::zero1                                     ? 1
                      : c.st == Strategy::zero2 || c.st == Strategy::fsdp_grad_op ? 2
                                                                                  : 3;
    mb.optimizer_states /= N;
    mb.optimizer_step_temp /= N;
    if (stage >= 2) mb.gradients /= N;
    const double layers = std::max<double>(1, d(c.m_eff.layers()));
    const double root = is_fsdp(c.st) ? fsdp_root_unit_bytes(c.m_eff, w) : 0.0;
    // one decoder layer as gathered (the root unit apart)
    const double unit = std::max(0.0, mb.weights + mb.trainable_params - root) / layers;
    if (stage >= 3) {
      mb.weights /= N;
      mb.trainable_params /= N;
      mb.autocast_copies /= N;
      // FSDP: the running unit, the prefetched next one and the root unit; ZeRO-3: the largest module
      // (estimator's 4L) and the live-parameter cache
      add_stage3_gathered(r, c, unit, root);
    } else if (c.st == Strategy::fsdp_grad_op) {
      // SHARD_GRAD_OP keeps every unit unsharded from forward to backward.
      r.gather_buffers = mb.weights + mb.trainable_params;
      mb.weights /= N;
      mb.trainable_params /= N;
    }
    if (is_fsdp(c.st))
      r.bucket_buffers = mb.gradients > 0 ? unit * (full ? 1.0 : 0.0) : 0;  // RS input
    else
      r.bucket_buffers = 2.0 * std::min(kZeroReduceBucketElems, param_breakdown(c.m_eff, w).trainable);
    if (p.offload != Offload::none) {
      const double opt_bytes = mb.optimizer_states + mb.gradients;
      const double param_bytes = mb.weights + mb.trainable_params;
      r.host_bytes = opt_bytes;
      mb.optimizer_states = 0;
      mb.optimizer_step_temp = 0;
      mb.gradients = 0;
      if (offloads_params(p.offload)) {
        r.host_bytes += param_bytes;
        mb.weights = 0;
        mb.trainable_params = 0;
      }
      move_to_nvme(r, p.offload, opt_bytes, param_breakdown(c.m_eff, w).trainable / N, param_bytes, P / N);
    }
  } else if (c.st == Strategy::ddp || c.st == Strategy::tp || c.st == Strategy::ep || c.st == Strategy::cp) {
    // DDP's reducer holds a flat bucket copy of every gradient (gradient_as_bucket_view=False by default).
    if (p.ranks() > (c.st == Strategy::tp ? c.deg : 1)) r.bucket_buffers = mb.gradients;
  }
  mb.allocator_overhead = s.allocator_overhead_fraction * (mb.activations + mb.logits + mb.dequant_buffers);
  int comms = 1 + (c.st == Strategy::tp || c.st == Strategy::ep || c.st == Strategy::cp ? 1 : 0);
  r.nccl_buffers = kNcclBufferBytes * comms;
  r.base = mb;
  return r;
}

// The largest micro-batch whose per-rank resident memory fits: the single-GPU search (largest_batch_within,
// memory.hpp) on the rank's peak. The peak is non-decreasing in the micro-batch; it is not linear from batch
// 0 (per-batch buffers such as a chunked loss's exist from the first sample on), so no extrapolation from 0.
std::int64_t max_micro(const Ctx& c, double usable) {
  const auto bytes = [&c](std::int64_t b) { return rank_memory(c, b).resident(); };
  return largest_batch_within(bytes, usable, bytes(1), bytes(2));
}

// The largest micro-batch whose per-rank memory range's upper end (resident + uncertainty x the variable
// part + the residues of unknown settings) fits; the upper end is non-decreasing in the micro-batch. 0 when
// not even batch 1's does.
std::int64_t max_micro_upper(const Ctx& c, double usable, std::int64_t max_b) {
  const double u = c.in.stack.memory_uncertainty_fraction;
  if (max_b < 1) return max_b;
  const auto upper = [&c, u](std::int64_t b) {
    const RankMemory r = rank_memory(c, b);
    return r.resident() + u * r.base.variable() + r.residue_high;
  };
  if (u <= 0 && upper(max_b) <= usable) return max_b;
  return largest_batch_within(upper, usable, upper(1), upper(2));
}

// The longest padded sequence whose rank memory fits at micro-batch 1 (the single-GPU max_seq_len's
// question, per rank): a doubling then a bisection on whole multiples of 8 tokens.
double max_seq_rank(const Ctx& c0, double usable) {
  Ctx c = c0;
  const auto fits = [&c, usable](double seq) {
    c.seq_len = seq;
    return rank_memory(c, 1).resident() <= usable;
  };
  double lo = 0;
  double hi = 8;
  while (hi <= 16.0 * 1024 * 1024 && fits(hi)) lo = hi, hi *= 2;
  if (hi > 16.0 * 1024 * 1024) return lo;
  while (hi - lo > 8) {
    const double mid = std::floor((lo + hi) / 16) * 8;
    (fits(mid) ? lo : hi) = mid;
  }
  return lo;
}

// The busiest EP rank's share of routed pairs over the mean (experts placed contiguously, E/ep per rank).
double ep_imbalance(const std::vector<double>& shares, int ep) {
  if (shares.empty() || ep <= 1) return 1.0;
  const std::size_t per = shares.size() / static_cast<std::size_t>(ep);
  if (per == 0) return 1.0;
  double sum = 0;
  double mx = 0;
  for (int r = 0; r < ep; ++r) {
    double s = 0;
    for (std::size_t i = 0; i < per; ++i) s += shares[static_cast<std::size_t>(r) * per + i];
    mx = std::max(mx, s);
    sum += s;
  }
  return sum > 0 ? mx * ep / sum : 1.0;
}

void add(ParallelEstimate& e, CommItem it) {
  it.exposed_s = std::max(0.0, std::min(it.exposed_s, it.time_s));
  it.overlapped_s = it.time_s - it.exposed_s;
  e.comm_s += it.time_s;
  e.comm_exposed_s += it.exposed_s;
  e.comm.push_back(std::move(it));
}

// The GPU's own PCIe link to host memory, bytes/s: what offload moves over (intra_node_link of a node so
// large that no NVLink joins it, with peer-to-peer allowed).
double own_pcie_bytes_per_s(const GpuSpec& gpu) { return intra_node_link(gpu, 1 << 20, 1).busbw_gbps * 1e9; }

// DeepSpeed's optimizer offload accumulates partitioned gradients in host memory (ZeRO-2/3; ZeRO-1 reduces
// only at the accumulation boundary, engine.py allreduce_gradients): with gradient accumulation every
// micro-batch copies the rank's gradient partition (in the model's dtype, the default grad_accum_dtype:
// engine.py get_data_types) down to host memory, and every micro-batch after the first brings the running
// sum back up to add to first. ZeRO-2: stage_1_and_2.py async_accumulate_grad_in_cpu_via_gpu
// (accumulate_gradients: dest_buffer.copy_(accumulated_grads_in_cpu) and add_, then copy_gradients_to_cpu);
// ZeRO-3: stage3.py partition_grads (the grad partition buffer lives on self.device, the CPU under
// offload_optimizer: copy_ at micro_step_id 0, else to(device) + add_ + copy_ back); both @ edaa722. Beyond
// the boundary's crossing (in the offload item): A - 1 more down and A - 1 up per optimizer step. ZeRO-3 runs
// them on its reduce-and-partition stream during backward (overlap_comm on for stage 3); ZeRO-2 on the
// compute stream (overlap_comm off by default): exposed.
void add_offload_accumulation_crossings(ParallelEstimate& e, const GpuSpec& gpu, double grad_shard_bytes,
                                        double bwd_s) {
  const double accum = e.plan.grad_accum;
  const Strategy st = e.plan.strategy;
  if (accum <= 1 || (st != Strategy::zero2 && st != Strategy::zero3)) return;
  const double one = grad_shard_bytes / own_pcie_bytes_per_s(gpu);
  const bool overlapped = st == Strategy::zero3;
  CommItem it{"offload: gradient partitions to host and back on accumulation micro-batches (PCIe)",
              CollOp::send_recv,
              "pcie-host",
              1,
              grad_shard_bytes,
              2 * (accum - 1),
              2 * (accum - 1) * one,
              0,
              0,
              overlapped ? "during backward on ZeRO-3's reduce-and-partition stream"
                         : "exposed (on the compute stream: overlap_comm is off for stage 2)"};
  it.exposed_s = overlapped ? (accum - 1) * std::max(0.0, 2 * one - bwd_s) : it.time_s;
  add(e, it);
}

// Offloaded parameters cross the rank's PCIe link to the GPU before every all-gather of them: FSDP2
// (torch/distributed/fsdp/_fully_shard/_fsdp_param.py FSDPParam.all_gather_inputs: the shard kept in pinned
// host memory is copied with sharded_param_data.to(device, non_blocking=True) when offload_to_cpu; pytorch @
// 010ae4a8) and DeepSpeed ZeRO-3 (runtime/zero/partition_parameters.py all_gather_coalesced: p.ds_tensor.to(
// current_device) before _dist_allgather_fn; @ edaa722). Each gather pass of a micro-batch (forward, and
// backward unless fsdp-grad-op keeps the gathered parameters) moves the rank's shard. The copy is part
// of the gather's prefetch, so what it exposes is the pass's pipeline with it minus the pipeline without it.
// Nothing unless the plan offloads parameters.
void add_offloaded_param_copies(ParallelEstimate& e, const GpuSpec& gpu, double shard_bytes, double fwd_comm,
                                double fwd_s, double bwd_comm, double bwd_s, double accum) {
  if (!offloads_params(e.plan.offload)) return;
  const int passes = e.plan.strategy == Strategy::fsdp_grad_op ? 1 : 2;
  const double h2d = shard_bytes / own_pcie_bytes_per_s(gpu);
  // ZeRO-Infinity reads the part of the shard beyond max_in_cpu from the node's drives first (the node's
  // ranks at once): partition_parameters.py all_gather_coalesced swaps in params whose ds_tensor
  // final_location is nvme before the copy (@ edaa722).
  const double nvme = e.memory.nvme_param_bytes * e.plan.gpus_per_node / (e.plan.nvme_read_gbps * 1e9);
  const auto pass_exposed = [&](double extra) {
    double x = std::max(0.0, fwd_comm + extra - fwd_s) - std::max(0.0, fwd_comm - fwd_s);
    if (passes > 1) x += std::max(0.0, bwd_comm + extra - bwd_s) - std::max(0.0, bwd_comm - bwd_s);
    return x;
  };
  const double exposed = pass_exposed(h2d);
  add(e,
      CommItem{"offloaded parameters to the GPU before each all-gather (PCIe)", CollOp::send_recv,
               "pcie-host", 1, shard_bytes, passes * accum, passes * accum * h2d, 0, accum * exposed,
               "in the all-gather's prefetch: the shard is copied from pinned host memory, then gathered"});
  if (nvme <= 0) return;
  add(e,
      CommItem{"NVMe: 16-bit parameters read before each all-gather (ZeRO-Infinity)", CollOp::send_recv,
               "nvme", e.plan.gpus_per_node, e.memory.nvme_param_bytes, passes * accum, passes * accum * nvme,
               0, accum * (pass_exposed(h2d + nvme) - exposed),
               "in the all-gather's prefetch, before the PCIe copy; the node's drives serve all its ranks"});
}

// ZeRO-Infinity's optimizer step (stage3.py step -> _prepare_sub_group / _release_sub_group @ edaa722): per
// sub-group, swap_in_optimizer_state reads the fp32 master partition, its two Adam states and its fp32
// gradient (16 B per element; partitioned_optimizer_swapper.py), the CPU steps it, swap_out_optimizer_state
// writes the three states back (12 B); the fp32 gradients were written at the end of backward (4 B,
// _swap_out_offload_fp32_gradients); with parameters on NVMe the updated 16-bit partition is written too
// (_partitioned_params_swap_out, 2 B). offload_optimizer.pipeline_read / pipeline_write default to false
// (offload_config.py), so the step waits for every read and write. The node's ranks share its drives.
void add_nvme_optimizer_swaps(ParallelEstimate& e) {
  const RankMemory& m = e.memory;
  if (m.nvme_optimizer_bytes <= 0) return;
  const double gpn = e.plan.gpus_per_node;
  const double read = m.nvme_optimizer_bytes;
  const double write = m.nvme_optimizer_bytes + m.nvme_param_bytes;
  const double t = gpn * (read / (e.plan.nvme_read_gbps * 1e9) + write / (e.plan.nvme_write_gbps * 1e9));
  add(e, CommItem{"NVMe: optimizer states and fp32 gradients swapped in and out (ZeRO-Infinity)",
                  CollOp::send_recv, "nvme", e.plan.gpus_per_node, (read + write) / 2, 2, t, 0, t,
                  "exposed: pipeline_read / pipeline_write are off by default, the step waits for each "
                  "sub-group's read and write; the node's drives serve all its ranks"});
}

// Paged optimizer states that do not fit next to the rank's other memory cross the rank's PCIe link out and
// back every optimizer step (add_optimizer_paging, throughput.hpp), in the step's critical path.
void add_optimizer_paging_item(ParallelEstimate& e, const GpuSpec& gpu) {
  const double paged = e.memory.paged_out(e.usable_bytes);
  if (paged <= 0) return;
  StepTime pg;
  add_optimizer_paging(pg, paged, gpu, 1);
  e.warnings.push_back("paged optimizer: " + json(std::round(paged / kGiB * 10) / 10).dump() + " of " +
                       json(std::round(e.memory.base.optimizer_states / kGiB * 10) / 10).dump() +
                       " GiB of optimizer states per rank do not fit next to the rest and are paged to host "
                       "RAM and back every optimizer step (" +
                       json(std::round(pg.paging_s * 100) / 100).dump() + " s of PCIe per step)");
  add(e, CommItem{"paged optimizer states: to host RAM and back (unified memory, PCIe)", CollOp::send_recv,
                  "pcie-host", 1, paged, 2, pg.paging_s, 0, pg.paging_s,
                  "exposed (evicted while the step allocates, prefetched before each update)"});
}

// Bytes as GiB for a message: one decimal, none when whole ("2048", "12.5").
std::string gib_text(double bytes) {
  const double g = std::round(bytes / kGiB * 10) / 10;
  return g == std::floor(g) ? std::to_string(static_cast<long long>(g)) : json(g).dump();
}

// The node's host RAM (--host-ram, else the --node preset's) holds every rank's offloaded states and its
// offloaded activation checkpoints (--offload-activations, memory.cpp host_offload): a job that needs more
// does not fit.
void check_node_host_ram(ParallelEstimate& e) {
  const ParallelPlan& plan = e.plan;
  const double node_host = (e.memory.host_bytes + e.memory.base.host_offload) * plan.gpus_per_node;
  if (plan.host_ram_gib <= 0 || node_host <= plan.host_ram_gib * kGiB) return;
  e.fits = false;
  const double ckpt = e.memory.base.host_offload * plan.gpus_per_node;
  const std::string host =
      "host RAM: offload needs " + gib_text(node_host) + " GiB per node" +
      (ckpt > 0 ? " (" + gib_text(ckpt) + " GiB of it offloaded checkpoints)" : std::string()) +
      ", the node has " + gib_text(plan.host_ram_gib * kGiB);
  e.does_not_fit += (e.does_not_fit.empty() ? "" : "; ") + host;
  e.warnings.push_back(
      "does not fit: " + host +
      (plan.offload == Offload::none || offload_on_nvme(plan.offload)
           ? std::string()
           : std::string("; --parallel zero3 --offload optimizer-nvme or params-nvme keeps the "
                         "states on NVMe (ZeRO-Infinity)")));
}

// Whole optimizer steps: transformers' Trainer (Trainer.set_initial_training_values, 4.5x) runs
// max_steps = ceil(num_train_epochs x num_update_steps_per_epoch), an epoch being at least one step of
// ceil(rows / global batch) (the dataloader keeps its short last batch: drop_last off, DistributedSampler
// pads it). A global batch larger than the data is one whole step per epoch, never a fraction of one.
void whole_step_time(ParallelEstimate& e, const Workload& w) {
  const double rows = w.rows_per_epoch();
  e.steps_per_epoch = std::max(1.0, std::ceil(rows / d(e.global_batch)));
  e.optimizer_steps = std::ceil(w.epochs * e.steps_per_epoch);
  e.time_hours = e.optimizer_steps * e.step_s / 3600.0;
  if (d(e.global_batch) <= rows) return;
  const std::string rows_text = rows == std::floor(rows) ? std::to_string(static_cast<long long>(rows))
                                                         : json(std::round(rows * 10) / 10).dump();
  e.warnings.push_back("global batch " + std::to_string(e.global_batch) + " (" +
                       std::to_string(e.micro_batch) + " per GPU x " + std::to_string(e.dp) + " replicas x " +
                       std::to_string(e.plan.grad_accum) + " accumulation) is larger than the data (" +
                       rows_text + (w.queries_per_row() > 1 ? " packed rows" : " samples") +
                       "): an epoch is one optimizer step, and the time counts whole steps; fewer GPUs or a "
                       "smaller --batch do the same work with less idle hardware");
}

// One ZeRO-3 gather pass: an all-gather per fetched sub-module over a group of `gpn` x `nodes` ranks, each
// with its own call latency; the pass's bytes are the model's gathered weights shared out by module size.
struct Zero3Pass {
  double time_s = 0;
  double calls = 0;
};
Zero3Pass zero3_gather_pass(const ModelSpec& m, double gather_bytes, int gpn, int nodes,
                            const ParallelPlan& p) {
  Zero3Pass out;
  double elems = 0;
  const std::vector<FetchModules> mods = zero3_fetch_modules(m);
  for (const auto& fm : mods) {
    elems += d(fm.elems) * d(fm.count);
    out.calls += d(fm.count);
  }
  if (elems <= 0) return {group_collective_time_s(CollOp::all_gather, gather_bytes, gpn, nodes, p), 1};
  for (const auto& fm : mods)
    out.time_s += d(fm.count) * group_collective_time_s(CollOp::all_gather,
                                                        d(fm.elems) * gather_bytes / elems, gpn, nodes, p);
  return out;
}

// ZeRO-3's elements kept by the reuse distance for this plan (0 for other strategies).
double zero3_retained_for(const Ctx& c) {
  if (c.st != Strategy::zero3) return 0;
  return zero3_retained_elems(c.m_eff, c.plan.zero3.max_reuse_distance, c.in.workload.checkpointing);
}

// --parallel auto's order: a candidate whose per-rank upper end fits before one that may not fit, then the
// faster first.
bool upper_end_fits(const ParallelEstimate& e) { return e.memory_high <= e.usable_bytes; }
bool by_fit_then_speed(const ParallelEstimate& a, const ParallelEstimate& b) {
  if (upper_end_fits(a) != upper_end_fits(b)) return upper_end_fits(a);
  return a.throughput_qps > b.throughput_qps;
}

// The warning of a job whose resident memory fits but whose per-rank range's upper end does not, naming the
// term that decides.
void warn_may_not_fit(ParallelEstimate& e) {
  if (!e.fits || e.memory_high <= e.usable_bytes) return;
  std::string w = "may not fit: the per-GPU memory range's upper end, " + gib_text(e.memory_high);
  w += " GiB, exceeds the " + gib_text(e.usable_bytes) + " GiB usable";
  if (e.memory.residue_high > 0)
    w += "; it includes " + gib_text(e.memory.residue_high) + " GiB of " + e.memory.residue_term;
  else
    w += " (the stack's uncertainty on activations, loss and allocator)";
  e.warnings.push_back(w);
}

// One line of --parallel auto's explanation for a candidate not chosen: slower, or (when the chosen one's
// upper end fits and this one's does not) may not fit, with the term that decides.
std::string not_chosen_line(const ParallelEstimate& e, bool safe, bool best_safe) {
  std::string line = "slower: ";
  if (best_safe && !safe) {
    line = "may not fit (upper end " + gib_text(e.memory_high) + " GiB per GPU";
    if (!e.memory.residue_term.empty()) line += ", with " + e.memory.residue_term;
    line += "): ";
  }
  return line + e.strategy_label + " at " + json(std::round(e.throughput_qps * 1000) / 1000).dump() +
         " queries/s (batch " + std::to_string(e.micro_batch) + ")";
}

Result<ParallelEstimate> evaluate(const Inputs& in, const ParallelPlan& plan, const Estimate& single,
                                  const Database& db) {
  ParallelEstimate e;
  e.single = single;
  e.plan = plan;
  e.is_single = false;
  const Workload& w = in.workload;
  const ModelSpec& m = in.model;
  const Strategy st = plan.strategy;
  const int R = plan.ranks();
  const int deg = (st == Strategy::tp || st == Strategy::ep || st == Strategy::cp) ? plan.degree : 1;
  e.strategy_label = std::string(strategy_name(st)) + (deg > 1 ? ":" + std::to_string(deg) : "");
  // --- checks that name the flag
  if (deg > 1 && (R % deg != 0))
    return make_error(Errc::invalid_value, "--parallel",
                      e.strategy_label + " needs a GPU count divisible by " + std::to_string(deg) + ", got " +
                          std::to_string(R));
  if (deg > plan.gpus_per_node)
    return make_error(Errc::invalid_value, "--parallel",
                      e.strategy_label + " spans more GPUs than one node has (" +
                          std::to_string(plan.gpus_per_node) +
                          "); ftcost keeps tensor, expert and context groups inside a node");
  if (auto fit = check_parallel_for_model(st, deg, m); !fit.ok()) return fit.error();
  if (plan.offload != Offload::none && !(is_zero(st) || is_fsdp(st)))
    return make_error(Errc::invalid_value, "--offload",
                      "applies to zero1/zero2/zero3 and fsdp strategies, not " + e.strategy_label);
  if (plan.offload == Offload::params && !(st == Strategy::zero3 || is_fsdp(st)))
    return make_error(Errc::invalid_value, "--offload",
                      "params needs zero3 or fsdp (ZeRO-1/2 keep parameters on the GPU)");
  if (offload_on_nvme(plan.offload) && st != Strategy::zero3)
    return make_error(Errc::invalid_value, "--offload",
                      std::string(offload_name(plan.offload)) +
                          " needs zero3: DeepSpeed swaps to NVMe only in ZeRO stage 3 (ZeRO-Infinity: "
                          "stage3.py _configure_tensor_swapping), not " +
                          e.strategy_label);
  if (plan.offload == Offload::optimizer && is_fsdp(st))
    return make_error(
        Errc::invalid_value, "--offload",
        "FSDP offloads parameters, gradients and optimizer step together: use --offload params");
  if (plan.nodes > 1 && plan.inter.kind == LinkKind::none)
    return make_error(Errc::missing_field, "--network",
                      "--nodes > 1 needs a network: a --node preset with one, or --network and "
                      "--network-gbit-per-gpu");
  if (is_zero(st) && w.method == Method::full && w.optimizer != Optimizer::adamw_mixed)
    e.warnings.emplace_back(
        "DeepSpeed ZeRO keeps fp32 master weights and Adam states (12 B/param) whatever --optimizer says; "
        "memory follows DeepSpeed's accounting");

  Ctx c{in, plan, st, deg, st == Strategy::tp ? tp_shard(m, deg) : m, single.max_batch.seq_len, 0};
  c.z3_retained = zero3_retained_for(c);
  e.seq_len = c.seq_len;
  e.dp = (st == Strategy::tp || st == Strategy::cp) ? R / deg : R;
  e.usable_bytes = in.gpu.usable_bytes();
  e.max_micro_batch = max_micro(c, e.usable_bytes);
  e.max_micro_range_fit = max_micro_upper(c, e.usable_bytes, e.max_micro_batch);
  e.micro_batch = w.batch > 0 ? w.batch : e.max_micro_batch;
  if (w.batch <= 0 && (w.batch_fastest || w.effective_batch > 0) && e.max_micro_range_fit > 0)
    e.micro_batch = e.max_micro_range_fit;  // choose_micro() times the others
  e.batch_choice.rule = w.batch > 0 ? "given" : w.batch_fastest ? "fastest" : "largest";
  e.batch_choice.largest = e.max_micro_range_fit;
  e.batch_choice.grad_accum = plan.grad_accum;
  e.max_seq_len = max_seq_rank(c, e.usable_bytes);
  if (w.batch > 0 && w.batch > e.max_micro_batch)
    e.warnings.push_back("batch " + std::to_string(w.batch) +
                         " per GPU does not fit: the maximum per rank is " +
                         std::to_string(e.max_micro_batch));
  e.memory = rank_memory(c, std::max<std::int64_t>(e.micro_batch, 0));
  e.fits = e.micro_batch > 0 && e.memory.resident() <= e.usable_bytes;
  if (e.micro_batch > 0 && !e.fits)
    e.does_not_fit = "batch " + std::to_string(e.micro_batch) + " per GPU needs " +
                     gib_text(e.memory.resident()) + " GiB per rank";
  check_node_host_ram(e);
  if (is_zero(st) && w.method == Method::full) {
    const std::int64_t P = m.params().total();
    if (st == Strategy::zero3)
      e.deepspeed = deepspeed_zero3_estimate(P, largest_module_params(m), plan.gpus_per_node, plan.nodes,
                                             plan.offload != Offload::none, offloads_params(plan.offload));
    else
      e.deepspeed =
          deepspeed_zero2_estimate(P, plan.gpus_per_node, plan.nodes, plan.offload != Offload::none);
  }
  if (e.micro_batch <= 0) {
    // the memory shown is micro-batch 1's, the job that does not fit (as on one GPU)
    e.memory = rank_memory(c, 1);
    const std::string gpu = "even batch 1 per GPU needs " + gib_text(e.memory.resident()) + " GiB per rank";
    e.does_not_fit = gpu + (e.does_not_fit.empty() ? "" : "; " + e.does_not_fit);
    e.warnings.push_back("does not fit: " + gpu);
    return e;
  }
  e.global_batch = e.micro_batch * e.dp * plan.grad_accum;

  // --- compute per rank
  const double len = w.mean_padded_len(e.micro_batch);
  const double step_len = st == Strategy::cp ? len / deg : len;
  Workload w1 = w;
  w1.grad_accum = 1;  // this layer spreads the optimizer step over the micro-batches itself
  StepTime t = step_model(c.m_eff, w1, in.stack, in.gpu, in.calibration.get(), e.micro_batch, step_len,
                          in.expert_shares);
  const auto S = [&](Stage s) { return t.by_stage[static_cast<std::size_t>(s)]; };
  double micro_s = t.total_s - S(Stage::optimizer);
  double fwd_s = S(Stage::forward);
  double bwd_s = S(Stage::backward) + S(Stage::recompute);
  if (st == Strategy::ep) {
    e.expert_imbalance = ep_imbalance(in.expert_shares, deg);
    const double extra =
        t.by_class[static_cast<std::size_t>(KernelClass::expert_gemm)] * (e.expert_imbalance - 1.0);
    micro_s += extra;
    bwd_s += extra * 2.0 / 3.0;
    fwd_s += extra / 3.0;
  }
  if (st == Strategy::cp) {
    // Causal attention is quadratic: each rank computes 1/c of the full-length attention, c times its own
    // chunk's (L/c)^2 work (load-balanced ring attention).
    const double extra = t.by_class[static_cast<std::size_t>(KernelClass::attention)] * (deg - 1.0);
    micro_s += extra;
    bwd_s += extra * 2.0 / 3.0;
    fwd_s += extra / 3.0;
  }
  e.compute_s = plan.grad_accum * micro_s;
  double opt = S(Stage::optimizer);
  const ParamBreakdown pb = param_breakdown(c.m_eff, w);
  if (is_sharded_dp(st)) opt /= shard_group(plan, st);
  if (plan.offload != Offload::none) {
    const double n = shard_group(plan, st);
    opt = pb.trainable / n / host_adam_params_per_s(st, in.stack);
    const double bytes = 2.0 * pb.trainable / n * 2.0;  // 16-bit grads down, 16-bit params up
    CommItem it{"offload: gradients to host, parameters back (PCIe)",
                CollOp::send_recv,
                "pcie-host",
                1,
                bytes / 2,
                2,
                bytes / own_pcie_bytes_per_s(in.gpu),
                0,
                0,
                ""};
    it.exposed_s = it.time_s;
    it.overlap = "exposed (around the host optimizer step)";
    add(e, it);
    add_offload_accumulation_crossings(e, in.gpu, bytes / 2, bwd_s);
    add_nvme_optimizer_swaps(e);
  }
  e.optimizer_s = opt;
  add_optimizer_paging_item(e, in.gpu);

  // --- communication per optimizer step
  const double layers = std::max<double>(1, d(m.layers()));
  const double accum = plan.grad_accum;
  const int gpn = plan.gpus_per_node;
  const int nodes = plan.nodes;
  const MemoryBreakdown full_mb = memory_for_batch(c.m_eff, w, in.stack, 0, c.seq_len);
  const double grad_bytes = full_mb.gradients;  // trainable grads in their dtype, one replica
  const bool ds_full = is_zero(st) && w.method == Method::full;
  const double grad16 = ds_full ? 2.0 * d(c.m_eff.params().total()) : grad_bytes;
  const double gather_bytes = full_mb.weights + full_mb.trainable_params;  // what FSDP/ZeRO-3 all-gathers
  auto coll = [&](CollOp op, double bytes) { return group_collective_time_s(op, bytes, gpn, nodes, plan); };
  const std::string scope = nodes > 1 ? "hierarchical" : "intra-node";
  if (st == Strategy::ddp || st == Strategy::tp || st == Strategy::ep || st == Strategy::cp) {
    // Gradient all-reduce over the data-parallel replicas in 25 MiB buckets during backward; no_sync on
    // accumulation micro-batches.
    int g_gpn = gpn;
    int g_nodes = nodes;
    // TP ranks hold different shards: their replicas are the other TP groups. CP ranks hold the same
    // parameters and see different tokens: gradients are reduced over all ranks (Megatron's dp x cp group).
    if (st == Strategy::tp) g_gpn = gpn / deg;
    double bytes = grad_bytes;
    if (st == Strategy::ep) {
      // Non-expert gradients over all ranks, expert gradients over the R/ep replicas of each expert shard.
      const ParamCounts pc = m.params();
      const double f = d(pc.experts) / std::max(1.0, d(pc.total()));
      bytes = grad_bytes * (1 - f);
      const double eb = grad_bytes * f / deg;
      if (R / deg > 1 && eb > 0) {
        const double calls = std::ceil(eb / kDdpBucketBytes);
        const double one =
            group_collective_time_s(CollOp::all_reduce, eb / calls, std::max(1, gpn / deg), nodes, plan);
        CommItem it{"expert gradient all-reduce (DDP buckets)",
                    CollOp::all_reduce,
                    scope,
                    R / deg,
                    eb / calls,
                    calls,
                    one * calls,
                    0,
                    0,
                    "during backward (DDP buckets)"};
        it.exposed_s = one + std::max(0.0, it.time_s - one - bwd_s);
        add(e, it);
      }
    }
    if (g_gpn * g_nodes > 1 && bytes > 0) {
      const double calls = std::ceil(bytes / kDdpBucketBytes);
      const double one = group_collective_time_s(CollOp::all_reduce, bytes / calls, g_gpn, g_nodes, plan);
      CommItem it{"gradient all-reduce (DDP buckets)",
                  CollOp::all_reduce,
                  g_nodes > 1 ? "hierarchical" : "intra-node",
                  g_gpn * g_nodes,
                  bytes / calls,
                  calls,
                  one * calls,
                  0,
                  0,
                  "during backward as buckets fill; the last bucket after it"};
      it.exposed_s = one + std::max(0.0, it.time_s - one - bwd_s);
      add(e, it);
    }
  }
  if (is_zero(st)) {
    const double n = R;
    const bool each_micro = st != Strategy::zero1;  // stage 1 reduces at the accumulation boundary only
    const double rs_calls =
        (each_micro ? accum : 1.0) * std::max(1.0, std::ceil(grad16 / 2.0 / kZeroReduceBucketElems));
    const double rs_one = coll(CollOp::reduce_scatter,
                               grad16 / std::max(1.0, std::ceil(grad16 / 2.0 / kZeroReduceBucketElems)));
    CommItem rs{"gradient reduce-scatter",
                CollOp::reduce_scatter,
                scope,
                static_cast<int>(n),
                grad16 / std::max(1.0, std::ceil(grad16 / 2.0 / kZeroReduceBucketElems)),
                rs_calls,
                rs_one * rs_calls,
                0,
                0,
                ""};
    if (st == Strategy::zero3) {
      // One all-gather per fetched sub-module (zero3_fetch_modules) over all ranks; with hpZ the backward's
      // over the hpZ group, from the secondary partition.
      const Zero3Pass fp = zero3_gather_pass(c.m_eff, gather_bytes, gpn, nodes, plan);
      const int hg = std::min(std::max(1, plan.zero3.hpz_partition_size), R);
      const Zero3Pass bp =
          hg > 1 ? zero3_gather_pass(c.m_eff, gather_bytes, std::min(hg, gpn), std::max(1, hg / gpn), plan)
                 : fp;
      const double ag = fp.time_s;
      const double calls = fp.calls;
      const double first = ag / std::max(1.0, calls);  // the first module of a pass waits for its gather
      CommItem f{"forward parameter all-gather (per sub-module, prefetch)",
                 CollOp::all_gather,
                 scope,
                 static_cast<int>(n),
                 gather_bytes / std::max(1.0, calls),
                 calls * accum,
                 ag * accum,
                 0,
                 0,
                 "prefetched ahead of use along the recorded module trace (overlap_comm on for stage 3)"};
      f.exposed_s = accum * (first + std::max(0.0, ag - fwd_s));
      add(e, f);
      CommItem b{hg > 1 ? "backward parameter all-gather (hpZ secondary partition, prefetch)"
                        : "backward parameter all-gather (per sub-module, prefetch)",
                 CollOp::all_gather,
                 hg > 1 && hg <= gpn ? "intra-node" : scope,
                 hg > 1 ? hg : static_cast<int>(n),
                 gather_bytes / std::max(1.0, calls),
                 calls * accum,
                 bp.time_s * accum,
                 0,
                 0,
                 "prefetched ahead of use; with checkpointing the recompute's fetch serves the backward"};
      const double bwd_comm = bp.time_s + rs_one * rs_calls / accum;
      b.exposed_s =
          accum * (bp.time_s / std::max(1.0, calls) + std::max(0.0, bwd_comm - bwd_s) * bp.time_s / bwd_comm);
      rs.overlap = "overlapped with backward (overlap_comm)";
      rs.exposed_s =
          accum * std::max(0.0, bwd_comm - bwd_s) * (rs_one * rs_calls / accum) / bwd_comm + rs_one;
      add(e, b);
      add(e, rs);
      add_offloaded_param_copies(e, in.gpu, gather_bytes / n, ag, fwd_s, bwd_comm, bwd_s, accum);
    } else {
      rs.overlap = "not overlapped: DeepSpeed's overlap_comm defaults to off for stages 1 and 2";
      rs.exposed_s = rs.time_s;
      add(e, rs);
      const double pbytes = ds_full ? 2.0 * d(c.m_eff.params().total()) : grad_bytes;
      const double ag = coll(CollOp::all_gather, pbytes);
      CommItem a{"updated parameter all-gather",
                 CollOp::all_gather,
                 scope,
                 static_cast<int>(n),
                 pbytes,
                 1,
                 ag,
                 0,
                 ag,
                 "after the optimizer step, exposed"};
      add(e, a);
    }
  }
  if (is_fsdp(st)) {
    const int sg_gpn = gpn;
    const int sg_nodes = st == Strategy::hsdp ? 1 : nodes;
    auto scoll = [&](CollOp op, double bytes) {
      return group_collective_time_s(op, bytes, sg_gpn, sg_nodes, plan);
    };
    const std::string sscope = sg_nodes > 1 ? "hierarchical" : "intra-node";
    const double ag = scoll(CollOp::all_gather, gather_bytes);
    const double rs = scoll(CollOp::reduce_scatter, grad_bytes);
    CommItem f{"forward parameter all-gather",
               CollOp::all_gather,
               sscope,
               sg_gpn * sg_nodes,
               gather_bytes / layers,
               layers * accum,
               ag * accum,
               0,
               0,
               "next unit's all-gather issued while the current unit computes"};
    f.exposed_s = accum * (ag / layers + std::max(0.0, ag - fwd_s));
    add(e, f);
    double bwd_comm = rs;
    if (st != Strategy::fsdp_grad_op) {
      CommItem b{"backward parameter all-gather",
                 CollOp::all_gather,
                 sscope,
                 sg_gpn * sg_nodes,
                 gather_bytes / layers,
                 layers * accum,
                 ag * accum,
                 0,
                 0,
                 "BACKWARD_PRE prefetch of the next unit"};
      bwd_comm += ag;
      b.exposed_s = accum * std::max(0.0, bwd_comm - bwd_s) * ag / bwd_comm;
      add(e, b);
    }
    CommItem r{"gradient reduce-scatter",
               CollOp::reduce_scatter,
               sscope,
               sg_gpn * sg_nodes,
               grad_bytes / layers,
               layers * accum,
               rs * accum,
               0,
               0,
               "per unit during backward; the last unit's after it"};
    r.exposed_s = accum * (rs / layers + std::max(0.0, bwd_comm - bwd_s) * rs / std::max(bwd_comm, 1e-30));
    add(e, r);
    add_offloaded_param_copies(e, in.gpu, gather_bytes / (sg_gpn * sg_nodes), ag, fwd_s, bwd_comm, bwd_s,
                               accum);
    if (st == Strategy::hsdp) {
      const double shard = grad_bytes / gpn;
      const double ar = group_collective_time_s(CollOp::all_reduce, shard, 1, nodes, plan);
      CommItem h{"gradient shard all-reduce across nodes",
                 CollOp::all_reduce,
                 "inter-node",
                 nodes,
                 shard / layers,
                 layers * accum,
                 ar * accum,
                 0,
                 0,
                 "after each unit's reduce-scatter, during backward"};
      h.exposed_s = accum * (ar / layers + std::max(0.0, ar - bwd_s));
      add(e, h);
    }
  }
  const double act_bytes = d(e.micro_batch) * step_len * d(m.hidden) * w.compute_bytes();
  if (st == Strategy::tp) {
    // Megatron sequence parallelism: per transformer layer, an all-gather and a reduce-scatter around the
    // attention block and around the MLP, in forward and (swapped) in backward; recompute repeats forward's.
    const double per_layer_calls = 4.0 * (1.0 + 1.0 + (w.checkpointing ? 1.0 : 0.0));
    const double ag = collective_time_s(CollOp::all_gather, act_bytes, deg, plan.intra, plan.collectives);
    const double rs = collective_time_s(CollOp::reduce_scatter, act_bytes, deg, plan.intra, plan.collectives);
    const double calls = layers * per_layer_calls * accum;
    CommItem it{"sequence-parallel all-gather / reduce-scatter",
                CollOp::all_gather,
                "intra-node",
                deg,
                act_bytes,
                calls,
                calls * (ag + rs) / 2.0,
                0,
                0,
                "on the critical path (tp_comm_overlap off by default)"};
    it.exposed_s = it.time_s;
    add(e, it);
  }
  if (st == Strategy::ep) {
    const double k = d(w.active_experts(m));
    const double bytes = act_bytes * k;
    const double moe_layers = d(m.layers_with(Ffn::moe));
    const double calls = moe_layers * (4.0 + (w.checkpointing ? 2.0 : 0.0)) * accum;
    const double one =
        collective_time_s(CollOp::all_to_all, bytes, deg, plan.intra, plan.collectives) * e.expert_imbalance;
    CommItem it{"expert dispatch / combine all-to-all",
                CollOp::all_to_all,
                "intra-node",
                deg,
                bytes,
                calls,
                calls * one,
                0,
                0,
                "on the critical path (the experts wait for their tokens)"};
    it.exposed_s = it.time_s;
    add(e, it);
  }
  if (st == Strategy::cp) {
    const double kv = d(e.micro_batch) * step_len * 2.0 * d(m.attn.kv_dim()) * w.compute_bytes();
    const double att_layers = d(m.layers_with(Mixer::attention));
    const double steps = (deg - 1.0) * (1.0 + 2.0 + (w.checkpointing ? 1.0 : 0.0));
    const double one = collective_time_s(CollOp::send_recv, kv, 2, plan.intra, plan.collectives);
    const double calls = att_layers * steps * accum;
    CommItem it{"ring attention K/V send/recv",
                CollOp::send_recv,
                "intra-node",
                deg,
                kv,
                calls,
                calls * one,
                0,
                0,
                "overlapped with the attention of the chunk in hand"};
    const double attn = t.by_class[static_cast<std::size_t>(KernelClass::attention)] * deg * accum;
    it.exposed_s = std::max(0.0, it.time_s - attn);
    add(e, it);
  }
  e.step_s = e.compute_s + e.optimizer_s + e.comm_exposed_s;
  const double queries_per_row = w.queries_per_row();  // samples per row (packing)
  e.throughput_qps = d(e.global_batch) * queries_per_row / e.step_s;
  e.throughput_tps = e.throughput_qps / queries_per_row * len;
  e.throughput_data_tps = e.throughput_qps * w.mean_data_len();
  const double rf = step_range_fraction(in);
  e.throughput_low = e.throughput_qps / (1 + rf);
  e.throughput_high = e.throughput_qps * (1 + rf);
  e.memory_low = e.memory.total() - in.stack.memory_uncertainty_fraction * e.memory.base.variable();
  e.memory_high = e.memory.total() + in.stack.memory_uncertainty_fraction * e.memory.base.variable() +
                  e.memory.residue_high;
  warn_may_not_fit(e);
  if (single.batch > 0 && single.batch <= single.max_batch.batch && single.throughput_qps > 0)
    e.scaling_efficiency = e.throughput_qps / (R * single.throughput_qps);
  whole_step_time(e, w);
  e.price = single.chosen.price;
  if (!single.has_price && single.batch <= 0) {
    // The single-GPU estimate stops before pricing when one GPU cannot hold the job: the same rule here.
    Estimate priced = single;
    const std::size_t had = priced.warnings.size();
    estimate_costs(priced, db);
    if (priced.has_price) e.price = priced.chosen.price;
    e.warnings.insert(e.warnings.end(), priced.warnings.begin() + static_cast<std::ptrdiff_t>(had),
                      priced.warnings.end());
  }
  if (single.has_price || e.price.usd_per_hour > 0 || e.price.basis == "given") {
    e.usd_per_gpu_hour = e.price.usd_per_hour;
    e.price_provider = e.price.provider;
  }
  if (!e.fits) {
    // A job that does not fit (GPU memory at this micro-batch, or host RAM for the offload) has no time and
    // no cost, as on one GPU; its step stays for what it would take (validate compares measured steps).
    e.time_hours = 0;
    return e;
  }
  e.hours_low = e.time_hours / (1 + rf);
  e.hours_high = e.time_hours * (1 + rf);
  if (e.usd_per_gpu_hour > 0) {
    e.cost_usd = e.time_hours * e.usd_per_gpu_hour * R;
    e.cost_low = e.hours_low * e.usd_per_gpu_hour * R;
    e.cost_high = e.hours_high * e.usd_per_gpu_hour * R;
  }
  return e;
}

// A 1-GPU plan: the single-GPU estimate. A data-parallel or sharding strategy named for one GPU has nothing
// to replicate or shard, and the estimate says so rather than drop the flag (tp/ep/cp:N need N GPUs: an
// error).
ParallelEstimate one_gpu(const Estimate& single, const ParallelPlan& plan) {
  ParallelEstimate e;
  e.single = single;
  e.plan = plan;
  e.is_single = true;
  e.strategy_label = "single";
  if (plan.strategy != Strategy::single)
    e.single.warnings.push_back(std::string("--parallel ") + strategy_name(plan.strategy) +
                                " applies only with more than one GPU (--gpus, --nodes): one GPU has nothing "
                                "to replicate or shard, this is the single-GPU estimate (--offload runs "
                                "DeepSpeed ZeRO or FSDP offload on one GPU)");
  return e;
}

// Data-parallel replicas of a plan's strategy (tensor and context groups share one replica).
int replicas(const ParallelPlan& p) {
  return (p.strategy == Strategy::tp || p.strategy == Strategy::cp) ? p.ranks() / std::max(1, p.degree)
                                                                    : p.ranks();
}

// The micro-batches choose_micro times: with --effective-batch those that divide it over the replicas (at
// most `limit`), with padding to the longest sample the powers of two below the limit and the limit, else
// none (with every sample the same length the largest is the fastest).
std::vector<std::int64_t> micro_candidates_for(const Workload& w, int dp, std::int64_t limit) {
  std::vector<std::int64_t> out;
  if (w.effective_batch > 0) {
    for (std::int64_t b = w.batch > 0 ? w.batch : 1; b <= (w.batch > 0 ? w.batch : limit); ++b)
      if (w.effective_batch % (b * dp) == 0) out.push_back(b);
    return out;
  }
  if (w.mean_padded_len(1) == w.mean_padded_len(limit)) return out;
  for (std::int64_t b = 1; b < limit; b *= 2) out.push_back(b);
  for (std::int64_t b = 3; b < limit; b *= 2) out.push_back(b);
  out.push_back(limit);
  return out;
}

// --batch fastest / --effective-batch on several GPUs: the micro-batch per rank (and the grad-accum) of the
// highest throughput among those whose rank memory's upper end fits, each candidate estimated in full.
Result<ParallelEstimate> choose_micro(const Inputs& in, const ParallelEstimate& first, const Estimate& single,
                                      const Database& db) {
  const Workload& w = in.workload;
  if (!first.fits || (w.batch > 0 && w.effective_batch <= 0) ||
      (w.batch <= 0 && !w.batch_fastest && w.effective_batch <= 0))
    return first;
  const int dp = replicas(first.plan);
  const std::int64_t limit =
      first.max_micro_range_fit > 0 ? first.max_micro_range_fit : first.max_micro_batch;
  const std::vector<std::int64_t> cand = micro_candidates_for(w, dp, limit);
  if (cand.empty() && w.effective_batch > 0)
    return make_error(Errc::invalid_value, "--effective-batch",
                      std::to_string(w.effective_batch) + " is not a multiple of " +
                          (w.batch > 0 ? "--batch " + std::to_string(w.batch) + " x " : std::string()) +
                          std::to_string(dp) +
                          " data-parallel replicas with a micro-batch that fits (up to " +
                          std::to_string(limit) + ")");
  ParallelEstimate best = first;
  bool have = w.effective_batch <= 0;  // the first estimate is a candidate only without an effective batch
  int evaluated = 0;
  for (const std::int64_t b : cand) {
    Inputs x = in;
    x.workload.batch = b;
    x.workload.grad_accum = w.effective_batch > 0 ? w.effective_batch / (b * dp) : w.grad_accum;
    ParallelPlan p = first.plan;
    p.grad_accum = static_cast<int>(x.workload.grad_accum);
    FTCOST_TRY(r, evaluate(x, p, single, db));
    ++evaluated;
    if (r.fits && (!have || r.throughput_qps > best.throughput_qps)) {
      best = std::move(r);
      have = true;
    }
  }
  if (!have) {
    // no micro-batch that divides the effective batch over the replicas fits: no time, no cost
    best.fits = false;
    best.does_not_fit = "no micro-batch that makes --effective-batch " + std::to_string(w.effective_batch) +
                        " over " + std::to_string(dp) + " replicas fits";
    best.warnings.push_back("does not fit: " + best.does_not_fit);
    best.time_hours = best.cost_usd = best.cost_low = best.cost_high = 0;
    return best;
  }
  BatchChoice& c = best.batch_choice;
  c.rule = w.batch > 0 ? "given" : w.batch_fastest ? "fastest" : "largest";
  c.largest = limit;
  c.grad_accum = best.plan.grad_accum;
  c.evaluated = evaluated;
  c.largest_qps = best.micro_batch == first.micro_batch ? 0 : first.throughput_qps;
  c.reason = best.micro_batch == limit
                 ? "the largest micro-batch per GPU whose memory range's upper end fits is the fastest"
                 : "micro-batch " + std::to_string(best.micro_batch) + " per GPU is the fastest that fits";
  if (c.largest_qps > 0 && best.micro_batch != limit)
    c.reason += slower_largest_note(limit, c.largest_qps, best.throughput_qps);
  if (w.effective_batch > 0)
    c.reason += " for the effective batch " + std::to_string(w.effective_batch) + " (grad-accum " +
                std::to_string(c.grad_accum) + " on " + std::to_string(dp) + " replicas)";
  best.single.in.workload.grad_accum = c.grad_accum;
  return best;
}

// estimate_parallel of inputs whose length is resolved.
Result<ParallelEstimate> estimate_parallel_resolved(const Inputs& in, const ParallelPlan& plan_in,
                                                    const Database& db) {
  ParallelPlan plan = plan_in;
  if (plan.gpus_per_node < 1 || plan.nodes < 1)
    return make_error(Errc::out_of_range, "--gpus", "needs at least 1 GPU per node and 1 node");
  plan.grad_accum = static_cast<int>(std::max<std::int64_t>(1, in.workload.grad_accum));
  if (plan.strategy == Strategy::hsdp && plan.nodes < 2)  // on any GPU count, one GPU included
    return make_error(Errc::invalid_value, "--parallel",
                      "hsdp shards inside a node and replicates across nodes: needs --nodes 2 or more");
  FTCOST_TRY(single, estimate(in, db));
  const bool one = plan.ranks() == 1 && plan.offload == Offload::none && !plan.choose &&
                   (plan.strategy == Strategy::single || plan.degree <= 1);
  if (one) return one_gpu(single, plan);
  if (plan.intra.kind == LinkKind::none && plan.gpus_per_node > 1)
    plan.intra = intra_node_link(in.gpu, plan.gpus_per_node, -1);
  if (!plan.choose) {
    if (plan.strategy == Strategy::single) plan.strategy = Strategy::ddp;
    FTCOST_TRY(first, evaluate(in, plan, single, db));
    return choose_micro(in, first, single, db);
  }
  // --parallel auto: every applicable strategy; the fastest that fits wins.
  std::vector<ParallelPlan> cands;
  auto push = [&](Strategy s, int deg) {
    ParallelPlan p = plan;
    p.choose = false;
    p.strategy = s;
    p.degree = deg;
    cands.push_back(p);
  };
  const bool off = plan.offload != Offload::none;
  const bool zero3_only = plan.offload == Offload::params || offload_on_nvme(plan.offload);
  if (!off) push(Strategy::ddp, 1);
  for (Strategy s : {Strategy::zero1, Strategy::zero2, Strategy::zero3})
    if (!(zero3_only && s != Strategy::zero3)) push(s, 1);
  if (plan.offload == Offload::none || plan.offload == Offload::params) {
    push(Strategy::fsdp, 1);
    push(Strategy::fsdp_grad_op, 1);
    if (plan.nodes > 1) push(Strategy::hsdp, 1);
  }
  if (!off) {
    for (int d2 = 2; d2 <= plan.gpus_per_node; d2 *= 2) {
      if (plan.gpus_per_node % d2 != 0) continue;
      if (in.model.attn.heads > 0 && in.model.attn.heads % d2 == 0) push(Strategy::tp, d2);
      if (in.model.is_moe() && in.model.moe.experts % d2 == 0) push(Strategy::ep, d2);
    }
  }
  std::vector<ParallelEstimate> ok;
  std::vector<std::string> no;
  for (const auto& p : cands) {
    auto r = evaluate(in, p, single, db);
    if (!r.ok()) continue;
    const ParallelEstimate& e = r.value();
    if (e.fits)
      ok.push_back(e);
    else
      no.push_back(e.strategy_label + " (" + e.does_not_fit + ")");
  }
  if (ok.empty()) {
    ParallelPlan p = plan;
    p.choose = false;
    p.strategy = plan.offload == Offload::none ? Strategy::fsdp : Strategy::zero3;
    FTCOST_TRY(e, evaluate(in, p, single, db));
    e.why.push_back("no strategy fits on " + std::to_string(plan.ranks()) + " x " + in.gpu.id +
                    "; shown: " + e.strategy_label);
    for (const auto& s : no) e.why.push_back("does not fit: " + s);
    return e;
  }
  std::stable_sort(ok.begin(), ok.end(), by_fit_then_speed);
  FTCOST_TRY(best, choose_micro(in, ok.front(), single, db));
  best.why.push_back("fastest that fits: " + best.strategy_label + " at " +
                     json(std::round(best.throughput_qps * 1000) / 1000).dump() + " queries/s (batch " +
                     std::to_string(best.micro_batch) + " per GPU, " +
                     json(std::round(best.comm_exposed_s / best.step_s * 1000) / 10).dump() +
                     "% of the step is exposed communication)");
  for (std::size_t i = 1; i < ok.size(); ++i)
    best.why.push_back(not_chosen_line(ok[i], upper_end_fits(ok[i]), upper_end_fits(ok[0])));
  for (const auto& s : no) best.why.push_back("does not fit: " + s);
  return best;
}

}  // namespace

Result<ParallelEstimate> estimate_parallel(const Inputs& in, const ParallelPlan& plan, const Database& db) {
  // --seq max: the length (one GPU's longest at batch 1, as estimate() resolves it) first, so that the
  // ranks' memory and their step are both at it (the step used to be timed at the 1-token placeholder).
  if (in.workload.seq_max) {
    FTCOST_TRY(at, resolve_longest_seq(in));
    return estimate_parallel_resolved(at, plan, db);
  }
  return estimate_parallel_resolved(in, plan, db);
}

std::vector<std::string> single_gpu_warnings(const ParallelEstimate& p) {
  // What quotes the single GPU's memory, batch or step (its fit, its range, its loss at its batch, its
  // host-bound share and the advice priced at its batch) is not about the ranks: they answer for themselves.
  static const char* const kOneGpuOnly[] = {"does not fit",
                                            "paged optimizer:",
                                            "offloaded checkpoints need",
                                            "fits only at the low end",
                                            "tight:",
                                            "loss:",
                                            "host-bound:",
                                            "batch "};
  std::vector<std::string> out;
  for (const auto& w : p.single.warnings) {
    bool keep = true;
    for (const char* k : kOneGpuOnly)
      if (w.rfind(k, 0) == 0 || (std::string(k) == "does not fit" && w.find(k) != std::string::npos))
        keep = false;
    if (keep) out.push_back(w);
  }
  return out;
}

json parallel_to_json(const ParallelEstimate& p) {
  json j = estimate_to_json(p.single);
  if (p.is_single) return j;
  const ParallelEstimate& e = p;
  json single = {{"max_batch_size", j["max_batch_size"]},
                 {"fits", j["fits"]},
                 {"step_time_s", j["step_time_s"]},
                 {"throughput_queries_per_s", j["throughput_queries_per_s"]}};
  for (const char* k :
       {"ops", "step_breakdown_s", "layer_breakdown_s", "kernel_classes_s", "costs", "cost_usd_range",
        "throughput_queries_per_s_range", "device_time_s", "host_wait_s", "kernels_per_step", "price",
        // one-GPU memory answers: per rank they would be wrong
        "memory_range_gib", "free_gib", "max_seq_len_batch1"})
    j.erase(k);
  j["single_gpu"] = single;
  j["gpus"] = e.plan.ranks();
  j["max_batch_size"] = e.max_micro_batch;
  j["batch_size"] = e.micro_batch;
  j["global_batch_size"] = e.global_batch;
  j["fits"] = e.fits;
  // the memory state per rank (estimate.hpp's rule: tight above kTightMemoryFraction of the usable memory)
  const double fraction = e.usable_bytes > 0 ? e.memory.on_gpu(e.usable_bytes) / e.usable_bytes : 0;
  j["memory_fraction"] = fraction;
  j["memory_state"] = rank_memory_state(e);
  json mem = components_gib(e.memory.base);  // the rank's own breakdown, plus what sharding adds
  mem["total"] = e.memory.total() / kGiB;
  mem["fp32_grad_partition"] = e.memory.fp32_grad_partition / kGiB;
  mem["gather_buffers"] = e.memory.gather_buffers / kGiB;
  mem["bucket_buffers"] = e.memory.bucket_buffers / kGiB;
  mem["nccl_buffers"] = e.memory.nccl_buffers / kGiB;
  mem["live_params"] = e.memory.live_params / kGiB;
  mem["residue_high"] = e.memory.residue_high / kGiB;
  if (!e.memory.residue_term.empty()) mem["residue_term"] = e.memory.residue_term;
  j["memory_gib"] = mem;
  j["paged_out_gib"] = e.memory.paged_out(e.usable_bytes) / kGiB;
  json comm = json::array();
  for (const auto& c : e.comm)
    comm.push_back({{"name", c.name},
                    {"op", coll_op_name(c.op)},
                    {"scope", c.scope},
                    {"ranks", c.ranks},
                    {"bytes_per_call", c.bytes},
                    {"calls", c.calls},
                    {"time_s", c.time_s},
                    {"overlapped_s", c.overlapped_s},
                    {"exposed_s", c.exposed_s},
                    {"overlap", c.overlap}});
  json par = {{"strategy", e.strategy_label},
              {"gpus_per_node", e.plan.gpus_per_node},
              {"nodes", e.plan.nodes},
              {"data_parallel", e.dp},
              {"grad_accum", e.plan.grad_accum},
              {"offload", offload_name(e.plan.offload)},
              {"intra_node_link",
               {{"kind", link_kind_name(e.plan.intra.kind)},
                {"busbw_gbps", e.plan.intra.busbw_gbps},
                {"latency_us", e.plan.intra.latency_us},
                {"note", e.plan.intra.note}}},
              {"host_gib_per_rank", e.memory.host_bytes / kGiB},
              {"communication", comm},
              {"optimizer_steps", e.optimizer_steps},
              {"compute_s", e.compute_s},
              {"optimizer_s", e.optimizer_s},
              {"communication_s", e.comm_s},
              {"communication_exposed_s", e.comm_exposed_s},
              {"scaling_efficiency", e.scaling_efficiency},
              {"why", e.why}};
  if (!e.plan.node_id.empty()) par["node"] = e.plan.node_id;
  if (offload_on_nvme(e.plan.offload))
    par["nvme"] = {{"gib_per_rank", (e.memory.nvme_optimizer_bytes + e.memory.nvme_param_bytes) / kGiB},
                   {"optimizer_gib_per_rank", e.memory.nvme_optimizer_bytes / kGiB},
                   {"param_gib_per_rank", e.memory.nvme_param_bytes / kGiB},
                   {"read_gbps", e.plan.nvme_read_gbps},
                   {"write_gbps", e.plan.nvme_write_gbps},
                   {"note", e.plan.nvme_note}};
  if (e.plan.nodes > 1)
    par["network_link"] = {{"kind", link_kind_name(e.plan.inter.kind)},
                           {"busbw_gbps", e.plan.inter.busbw_gbps},
                           {"latency_us", e.plan.inter.latency_us},
                           {"note", e.plan.inter.note}};
  if (e.plan.strategy == Strategy::ep) par["expert_imbalance"] = e.expert_imbalance;
  if (e.deepspeed.gpu_bytes > 0)
    par["deepspeed_estimator"] = {
        {"gpu_gib", static_cast<double>(e.deepspeed.gpu_bytes) / kGiB},
        {"cpu_gib_per_node", static_cast<double>(e.deepspeed.cpu_bytes) / kGiB},
        {"note", "DeepSpeed's own model-state estimate (additional_buffer_factor 1.5 on CPU)"}};
  j["parallel"] = par;
  json warnings = json::array();
  for (const auto& w : single_gpu_warnings(e)) warnings.push_back(w);
  for (const auto& w : e.warnings) warnings.push_back(w);
  j["warnings"] = warnings;
  if (!e.fits) {
    // as on one GPU: a job that does not fit has no step time, throughput, time or cost
    j["step_time_s"] = nullptr;
    j["throughput_queries_per_s"] = nullptr;
    j["throughput_tokens_per_s"] = nullptr;
    j["time_hours"] = nullptr;
    j["cost_usd"] = nullptr;
    return j;
  }
  j["step_time_s"] = e.step_s;
  j["throughput_queries_per_s"] = e.throughput_qps;
  j["throughput_tokens_per_s"] = e.throughput_tps;
  j["time_hours"] = e.time_hours;
  if (e.usd_per_gpu_hour > 0) {
    j["cost_usd"] = e.cost_usd;
    j["price"] = {
        {"provider", e.price_provider}, {"usd_per_gpu_hour", e.usd_per_gpu_hour}, {"gpus", e.plan.ranks()}};
  } else {
    j["cost_usd"] = nullptr;
  }
  return j;
}

}  // namespace ftcost
