#include "ftcost/node.hpp"

#include <algorithm>
#include <cmath>

namespace ftcost {

namespace {

// The node's NICs (network.nics x network.nic_gbit, optional): the network's bottleneck is the node's NICs
// shared by its GPUs, so when given they must make gbit_per_gpu (NICs x rate / GPUs, within 1%).
Status parse_nics(const json& net, int gpus, double gbit_per_gpu, NodeShape& n) {
  const bool has_nics = has(net, "nics") && !net.at("nics").is_null();
  const bool has_rate = has(net, "nic_gbit") && !net.at("nic_gbit").is_null();
  if (!has_nics && !has_rate) return Ok{};
  if (has_nics != has_rate)
    return make_error(Errc::missing_field, has_nics ? "network.nic_gbit" : "network.nics",
                      "network.nics and network.nic_gbit go together");
  FTCOST_TRY(count, get_number_in(net, "nics", "network", 1, 1024));
  if (std::floor(count) != count) return make_error(Errc::invalid_value, "network.nics", "must be whole");
  FTCOST_TRY(rate, get_number_in(net, "nic_gbit", "network", 1, 10000));
  const double per_gpu = count * rate / std::max(1, gpus);
  if (std::fabs(per_gpu - gbit_per_gpu) > 0.01 * per_gpu)
    return make_error(Errc::invalid_value, "network.gbit_per_gpu",
                      "must be nics x nic_gbit / gpus = " + json(per_gpu).dump() + " Gbit/s");
  n.nics = static_cast<int>(count);
  n.nic_gbit = rate;
  return Ok{};
}

}  // namespace

Result<NodeShape> parse_node(const json& doc, const std::string& source) {
  if (!doc.is_object()) return make_error(Errc::wrong_type, source, "must be a JSON object");
  const std::string p;
  NodeShape n;
  FTCOST_TRY(schema, get_string(doc, "schema", p));
  if (schema != "ftcost.node/1")
    return make_error(Errc::schema_mismatch, source + ": schema",
                      "expected \"ftcost.node/1\", got \"" + schema + "\"");
  FTCOST_TRY(id, get_string(doc, "id", p));
  FTCOST_TRY(name, get_string(doc, "name", p));
  FTCOST_TRY(gpu, get_string(doc, "gpu", p));
  FTCOST_TRY(gpus, get_number_in(doc, "gpus", p, 1, 72));
  if (std::floor(gpus) != gpus) return make_error(Errc::invalid_value, "gpus", "must be a whole number");
  n.id = id;
  n.name = name;
  n.gpu = gpu;
  n.gpus = static_cast<int>(gpus);
  FTCOST_TRY(intra, get_string(doc, "intra_node", p));
  if (intra != "nvswitch" && intra != "nvlink-bridge" && intra != "pcie")
    return make_error(Errc::invalid_value, "intra_node",
                      "must be nvswitch, nvlink-bridge or pcie, got \"" + intra + "\"");
  n.intra = intra;
  if (has(doc, "pcie_p2p") && !doc.at("pcie_p2p").is_null()) {
    if (!doc.at("pcie_p2p").is_boolean())
      return make_error(Errc::wrong_type, "pcie_p2p", "must be true, false or null");
    n.pcie_p2p = doc.at("pcie_p2p").get<bool>() ? 1 : 0;
  }
  if (!has(doc, "network") || !doc.at("network").is_object())
    return make_error(Errc::missing_field, "network", "required object {kind, gbit_per_gpu}");
  const json& net = doc.at("network");
  FTCOST_TRY(kind, get_string(net, "kind", "network"));
  if (kind != "infiniband" && kind != "roce" && kind != "ethernet" && kind != "none")
    return make_error(Errc::invalid_value, "network.kind",
                      "must be infiniband, roce, ethernet or none, got \"" + kind + "\"");
  n.network = kind;
  FTCOST_TRY(gb, get_number_in(net, "gbit_per_gpu", "network", 0, 10000));
  if ((kind == "none") != (gb == 0))
    return make_error(Errc::invalid_value, "network.gbit_per_gpu", "must be 0 exactly when kind is none");
  n.network_gbit_per_gpu = gb;
  if (auto nics = parse_nics(net, n.gpus, gb, n); !nics.ok()) return nics.error();
  if (has(doc, "host_ram_gib") && !doc.at("host_ram_gib").is_null()) {
    FTCOST_TRY(ram, get_number_in(doc, "host_ram_gib", p, 1, 1 << 20));
    n.host_ram_gib = ram;
  }
  if (has(doc, "host_memory_gbps") && !doc.at("host_memory_gbps").is_null()) {
    FTCOST_TRY(bw, get_number_in(doc, "host_memory_gbps", p, 1, 100000));
    n.host_memory_gbps = bw;
  }
  if (!has(doc, "sources") || !doc.at("sources").is_array() || doc.at("sources").empty())
    return make_error(Errc::missing_field, "sources", "every node preset needs at least one source");
  for (const auto& s : doc.at("sources")) {
    if (!s.is_string() || s.get<std::string>().empty())
      return make_error(Errc::wrong_type, "sources", "must be non-empty strings");
    n.sources.push_back(s.get<std::string>());
  }
  return n;
}

}  // namespace ftcost
