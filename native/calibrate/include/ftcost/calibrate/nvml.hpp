// NVML through dlopen("libnvidia-ml.so.1"): the library comes with the NVIDIA driver, not with the
// CUDA toolkit, so there is nothing to link against at build time. When it is missing (no driver, a
// container without it) every reading is "unknown" and the calibration records nvml = false.
#pragma once

#include "ftcost/calibration.hpp"

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace ftcost::calib {

// Names of the set bits of an NVML clocks-event (throttle) reason mask, ignoring gpu_idle.
std::vector<std::string> throttle_reason_names(unsigned long long mask);

class Nvml {
 public:
  // nullptr when the library cannot be loaded or initialized. `library` is for tests.
  static std::unique_ptr<Nvml> load(const char* library = "libnvidia-ml.so.1");
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  // Selects the device with this PCI bus id ("0000:3B:00.0", from cudaDeviceGetPCIBusId).
  bool attach(const std::string& pci_bus_id);
  bool attached() const { return device_ != nullptr; }

  CalClockSample sample();
  std::optional<unsigned long long> throttle_reasons();
  std::optional<std::string> pci_device_id();  // "0x2335"
  std::optional<double> power_limit_w();
  std::optional<double> max_sm_clock_mhz();
  std::optional<double> max_memory_clock_mhz();
  std::optional<std::string> driver_version();
  std::optional<int> compute_processes();  // processes with a compute context on the device

 private:
  Nvml() = default;
  struct Api;
  void* lib_ = nullptr;
  std::unique_ptr<Api> api_;
  void* device_ = nullptr;
};

// Samples clocks, temperature, power and throttle reasons every `period_ms` on a background thread.
class NvmlMonitor {
 public:
  explicit NvmlMonitor(Nvml* nvml, int period_ms = 200);
  ~NvmlMonitor();
  void start();
  void stop();
  // Adds what was seen to `c` (min/max clock, max temperature and power, throttle reasons).
  void fill(CalConditions& c);

 private:
  void poll();
  Nvml* nvml_;
  int period_ms_;
  std::atomic<bool> running_{false};
  std::thread thread_;
  std::mutex mu_;
  std::optional<double> sm_min_, sm_max_, temp_max_, power_max_;
  unsigned long long reasons_ = 0;
};

}  // namespace ftcost::calib
