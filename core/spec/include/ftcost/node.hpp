// Node presets (gpu-db/nodes/<id>.json): how many GPUs of which kind, how they are joined inside the node,
// the network between nodes and the host RAM.
#pragma once

#include "ftcost/error.hpp"
#include "ftcost/json_util.hpp"

#include <string>
#include <vector>

namespace ftcost {

struct NodeShape {
  std::string id, name, gpu;
  int gpus = 1;
  std::string intra;                // "nvswitch" | "nvlink-bridge" | "pcie"
  int pcie_p2p = -1;                // 1/0/-1 for PCIe nodes
  std::string network = "none";     // "infiniband" | "roce" | "ethernet" | "none"
  double network_gbit_per_gpu = 0;  // NIC line rate available to each GPU, Gbit/s
  int nics = 0;                     // NICs of the node's compute fabric (0 = not stated)
  double nic_gbit = 0;              // line rate of each, Gbit/s (0 = not stated)
  double host_ram_gib = 0;          // 0 = not stated
  double host_memory_gbps = 0;      // host memory bandwidth (all channels, line rate), GB/s; 0 = not stated
  std::vector<std::string> sources;
};
Result<NodeShape> parse_node(const json& doc, const std::string& source);

}  // namespace ftcost
