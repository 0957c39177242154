// GPU spec sheets (gpu-db/gpus/<id>.json).
#pragma once

#include "ftcost/error.hpp"
#include "ftcost/json_util.hpp"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ftcost {

// Links to other GPUs and the host (gpu-db/gpus/<id>.json "interconnect").
struct GpuInterconnect {
  double nvlink_gbps_bidirectional = 0;  // per GPU, both directions together, decimal GB/s; 0 = none
  int nvlink_generation = 0;             // 0 = none or not NVLink
  std::string nvlink_topology;           // "switch" (NVSwitch/fabric), "bridge" (bridged pairs), "" none
  int nvlink_max_gpus = 0;               // GPUs one NVLink domain joins (2 for a bridge, 8 for HGX)
  int pcie_gen = 0;                      // 0 = unknown
  int pcie_lanes = 16;
  int pcie_p2p = -1;  // PCIe peer-to-peer: 1 allowed, 0 blocked by the driver, -1 not stated
  std::string other;
};

struct GpuSpec {
  std::string id;
  std::string vendor;
  std::string name;
  std::string architecture;
  std::string compute_capability;
  double memory_gib = 0;         // vendor label, binary GiB
  double usable_memory_mib = 0;  // nvidia-smi memory.total; 0 when unknown
  double memory_bandwidth_gbps = 0;
  std::string memory_type;  // "HBM3", "GDDR6 (ECC)", ...
  int memory_bus_bits = 0;  // DRAM interface width; 0 when not published
  double fp32_tflops = 0, tf32_tflops = 0, fp16_tflops = 0, bf16_tflops = 0, fp8_tflops = 0;
  double sm_count = 0;
  double boost_clock_mhz = 0;
  double l2_cache_mb = 0;
  double tdp_w = 0;
  double reserved_mib = 0;  // memory kept free for other processes (a display, --headroom); not in the spec
  GpuInterconnect interconnect;
  std::string variant_of;  // id of the GPU whose die and datasheet class this SKU derives from; "" if none
  std::vector<std::string> sources;
  std::string notes;

  // Memory the process can allocate before the CUDA context: nvidia-smi's total when known, else the
  // label less the typical ECC/driver reservation (2.5%, the median of the known label/total ratios); less
  // what the job's --headroom keeps free.
  double usable_bytes() const;
  bool usable_memory_estimated() const { return usable_memory_mib <= 0; }
  // Dense tensor peak for a compute precision ("bf16", "fp16", "fp32", "tf32", "fp8"); 0 if unsupported.
  double peak_tflops(const std::string& precision) const;
  json to_json() const;
};

Result<GpuSpec> parse_gpu(const json& doc, const std::string& source);

// A CUDA compute capability "major.minor" (digits, one dot, digits; at most 6 characters) as {major, minor};
// nullopt when malformed or empty.
std::optional<std::pair<int, int>> parse_compute_capability(const std::string& cc);

}  // namespace ftcost
