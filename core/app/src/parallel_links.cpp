// Collectives and links of the multi-GPU layer: nccl-tests' bus-bandwidth factors, measured collective
// curves, the intra-node link and the network from the GPU's interconnect fields, and the alpha-beta time of
// a collective, flat or hierarchical over nodes.
#include "ftcost/enum_names.hpp"
#include "ftcost/parallel.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace ftcost {

namespace {

// ---- Constants with their provenance (docs/sources/parallel.md). "code" = read from the library's source,
// "assumed" = an engineering estimate the docs say is one.
// assumed: fraction of the NVLink/PCIe per-direction line rate a large NCCL collective reaches (bus bw).
constexpr double kNvlinkEfficiency = 0.80;
constexpr double kPcieEfficiency = 0.80;
// Without PCIe peer-to-peer NCCL diverts GPU-GPU traffic through the CPU (src/graph/paths.cc
// ncclTopoComputePaths, "Divert all traffic through the CPU": addInterStep rates the GPU-CPU-GPU path at the
// slower PCIe link, no halving) and moves it with the SHM transport, whose buffers sit in host memory on the
// receiver's side (src/transport/shm.cc, NCCL_SHM_LOCALITY default 2): every byte is written to host memory
// by the sender's GPU and read back by the receiver's (NCCL master @ 5067397c). A ring keeps every GPU of
// the node sending and receiving at once, so host memory carries 2 x GPUs x the per-GPU bus bandwidth: the
// link rate until that exceeds what host memory sustains (structural). The host memory bandwidth is a node
// property (gpu-db/nodes host_memory_gbps, --host-memory-gbps); when unknown, assumed: eight channels of
// DDR4-3200 (204.8 GB/s, a dual-socket-class EPYC/Xeon host of 4- and 8-GPU PCIe machines) at 0.7 of the
// line rate (a STREAM-like sustained fraction).
constexpr double kHostMemoryDefaultGbps = 204.8;
constexpr double kHostMemoryEfficiency = 0.7;
// assumed: fraction of the NIC line rate NCCL reaches (IB/RoCE with GPUDirect RDMA; TCP sockets for
// Ethernet).
constexpr double kIbEfficiency = 0.85;
constexpr double kEthernetEfficiency = 0.5;
// assumed: fixed time of one NCCL collective call per link class (order of nccl-tests' small-message times).
constexpr double kLatencyNvlinkUs = 10, kLatencyPcieUs = 15, kLatencyPcieHostUs = 25, kLatencyIbUs = 20,
                 kLatencyEthernetUs = 60;

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

constexpr EnumName<CollOp> kCollOpNames[] = {{CollOp::all_reduce, "all_reduce"},
                                             {CollOp::all_gather, "all_gather"},
                                             {CollOp::reduce_scatter, "reduce_scatter"},
                                             {CollOp::all_to_all, "all_to_all"},
                                             {CollOp::send_recv, "send_recv"}};
const char* coll_op_name(CollOp o) { return enum_name(kCollOpNames, o, "?"); }

constexpr EnumName<LinkKind> kLinkKindNames[] = {
    {LinkKind::nvswitch, "nvswitch"},     {LinkKind::nvlink_bridge, "nvlink-bridge"},
    {LinkKind::pcie_p2p, "pcie-p2p"},     {LinkKind::pcie_host, "pcie-via-host"},
    {LinkKind::infiniband, "infiniband"}, {LinkKind::roce, "roce"},
    {LinkKind::ethernet, "ethernet"},     {LinkKind::none, "none"}};
const char* link_kind_name(LinkKind k) { return enum_name(kLinkKindNames, k, "?"); }

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

double sustained_host_memory_gbps(double host_memory_gbps) {
  return (host_memory_gbps > 0 ? host_memory_gbps : kHostMemoryDefaultGbps) * kHostMemoryEfficiency;
}

Link intra_node_link(const GpuSpec& g, int gpus_per_node, int pcie_p2p_override, double host_memory_gbps) {
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
    const bool stated = host_memory_gbps > 0;
    const double host_share =
        sustained_host_memory_gbps(host_memory_gbps) / (2.0 * std::max(1, gpus_per_node));
    l.busbw_gbps = std::min(raw * kPcieEfficiency, host_share);
    l.latency_us = kLatencyPcieHostUs;
    const double pcie = raw * kPcieEfficiency;
    l.note = why + ", peer-to-peer blocked: staged through host memory (NCCL SHM): the lesser of PCIe x " +
             json(kPcieEfficiency).dump() +
             " (assumed NCCL efficiency) = " + json(std::round(pcie * 10) / 10).dump() +
             " GB/s and host memory " + json(stated ? host_memory_gbps : kHostMemoryDefaultGbps).dump() +
             " GB/s" + (stated ? "" : " (assumed)") + " x " + json(kHostMemoryEfficiency).dump() +
             " / (2 x " + std::to_string(gpus_per_node) +
             " GPUs) = " + json(std::round(host_share * 10) / 10).dump() + " GB/s";
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

namespace {
// A measured curve for (op, ranks) was given.
bool has_curve(CollOp op, int ranks, const std::vector<CollectivePoint>& curves) {
  return std::any_of(curves.begin(), curves.end(), [&](const CollectivePoint& c) {
    return c.op == op && c.ranks == ranks && c.busbw_gbps > 0;
  });
}
}  // namespace

double group_collective_time_s(CollOp op, double bytes, int gpus_per_node, int nodes, const ParallelPlan& p) {
  const int gpn = gpus_per_node;
  const std::vector<CollectivePoint> none;
  if (gpn * nodes <= 1) return 0;
  if (op == CollOp::all_reduce || op == CollOp::all_gather || op == CollOp::reduce_scatter) {
    if (nodes <= 1 && has_curve(op, gpn, p.collectives))
      return collective_time_s(op, bytes, gpn, p.intra, p.collectives);
    return nccl_time(op, bytes, gpn, nodes, p).time_s;
  }
  if (nodes <= 1) return collective_time_s(op, bytes, gpn, p.intra, p.collectives);
  if (gpn <= 1 || op == CollOp::send_recv)
    return collective_time_s(op, bytes, std::max(2, nodes), p.inter, none);
  // all-to-all: each rank sends S/n to every rank: (nodes-1)/nodes of S leaves the node on the GPU's NIC
  // share.
  const auto n = static_cast<double>(gpn * nodes);
  const double inter =
      p.inter.busbw_gbps > 0 ? bytes * (nodes - 1.0) / nodes / (p.inter.busbw_gbps * 1e9) : 0;
  const double intra = collective_time_s(CollOp::all_to_all, bytes * gpn / n, gpn, p.intra, p.collectives);
  return p.inter.latency_us * 1e-6 + inter + intra;
}

}  // namespace ftcost
