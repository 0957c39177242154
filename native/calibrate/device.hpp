// Device discovery and description through the CUDA runtime (host code, compiled by g++ and linked
// with cudart; part of the executables, not of the CUDA-free host library).
#pragma once

#include "ftcost/calibrate/plan.hpp"
#include "ftcost/calibration.hpp"
#include "ftcost/error.hpp"

#include <string>

namespace ftcost::calib {

// Number of CUDA devices, or the reason there is none (the CUDA runtime's message).
Result<int> cuda_device_count();

struct DeviceInfo {
  CalDevice device;
  DeviceFacts facts;
  std::string pci_bus_id;  // "0000:3B:00.0", to find the same device in NVML
};
Result<DeviceInfo> describe_device(int index);

}  // namespace ftcost::calib
