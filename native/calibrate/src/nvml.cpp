#include "ftcost/calibrate/nvml.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <dlfcn.h>

namespace ftcost::calib {

namespace {
// The few NVML declarations used (stable C API; nvml.h is not shipped with the toolkit here).
using nvmlReturn_t = int;
using nvmlDevice_t = void*;
constexpr nvmlReturn_t kSuccess = 0;
constexpr nvmlReturn_t kInsufficientSize = 7;
constexpr unsigned kClockSm = 1;   // NVML_CLOCK_SM
constexpr unsigned kClockMem = 2;  // NVML_CLOCK_MEM
constexpr unsigned kTempGpu = 0;   // NVML_TEMPERATURE_GPU
struct PciInfo {                   // nvmlPciInfo_t (v3)
  char busIdLegacy[16];
  unsigned domain;
  unsigned bus;
  unsigned device;
  unsigned pciDeviceId;  // device id << 16 | vendor id
  unsigned pciSubSystemId;
  char busId[32];
  char reserve[64];  // slack in case a newer struct is longer
};
}  // namespace

struct Nvml::Api {
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  nvmlReturn_t (*by_pci)(const char*, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*clock)(nvmlDevice_t, unsigned, unsigned*) = nullptr;
  nvmlReturn_t (*max_clock)(nvmlDevice_t, unsigned, unsigned*) = nullptr;
  nvmlReturn_t (*temperature)(nvmlDevice_t, unsigned, unsigned*) = nullptr;
  nvmlReturn_t (*power)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*power_limit)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*reasons)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*pci)(nvmlDevice_t, PciInfo*) = nullptr;
  nvmlReturn_t (*driver)(char*, unsigned) = nullptr;
  nvmlReturn_t (*procs)(nvmlDevice_t, unsigned*, void*) = nullptr;
};

std::vector<std::string> throttle_reason_names(unsigned long long mask) {
  std::vector<std::string> out;
  for (int bit = 1; bit < 9; ++bit) {  // bit 0 = gpu_idle: normal between kernels, not a throttle
    if (mask & (1ull << bit)) out.emplace_back(kThrottleReasonNames[bit]);
  }
  return out;
}

template <class F>
static void sym(void* lib, F& f, std::initializer_list<const char*> names) {
  for (const char* n : names) {
    if (void* p = ::dlsym(lib, n)) {
      f = reinterpret_cast<F>(p);
      return;
    }
  }
}

std::unique_ptr<Nvml> Nvml::load(const char* library) {
  void* lib = ::dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (!lib) return nullptr;
  std::unique_ptr<Nvml> n(new Nvml());
  n->lib_ = lib;
  n->api_ = std::make_unique<Api>();
  Api& a = *n->api_;
  sym(lib, a.init, {"nvmlInit_v2", "nvmlInit"});
  sym(lib, a.shutdown, {"nvmlShutdown"});
  sym(lib, a.by_pci, {"nvmlDeviceGetHandleByPciBusId_v2", "nvmlDeviceGetHandleByPciBusId"});
  sym(lib, a.clock, {"nvmlDeviceGetClockInfo"});
  sym(lib, a.max_clock, {"nvmlDeviceGetMaxClockInfo"});
  sym(lib, a.temperature, {"nvmlDeviceGetTemperature"});
  sym(lib, a.power, {"nvmlDeviceGetPowerUsage"});
  sym(lib, a.power_limit, {"nvmlDeviceGetEnforcedPowerLimit"});
  sym(lib, a.reasons,
      {"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"});
  sym(lib, a.pci, {"nvmlDeviceGetPciInfo_v3"});
  sym(lib, a.driver, {"nvmlSystemGetDriverVersion"});
  sym(lib, a.procs, {"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses"});
  if (!a.init || !a.by_pci || a.init() != kSuccess) {
    ::dlclose(lib);
    n->lib_ = nullptr;
    return nullptr;
  }
  return n;
}

Nvml::~Nvml() {
  if (lib_) {
    if (api_ && api_->shutdown) api_->shutdown();
    ::dlclose(lib_);
  }
}

bool Nvml::attach(const std::string& pci_bus_id) {
  nvmlDevice_t d = nullptr;
  if (api_->by_pci(pci_bus_id.c_str(), &d) != kSuccess) return false;
  device_ = d;
  return true;
}

CalClockSample Nvml::sample() {
  CalClockSample s;
  if (!device_) return s;
  unsigned v = 0;
  if (api_->clock && api_->clock(device_, kClockSm, &v) == kSuccess && v > 0) s.sm_clock_mhz = v;
  if (api_->clock && api_->clock(device_, kClockMem, &v) == kSuccess && v > 0) s.memory_clock_mhz = v;
  if (api_->temperature && api_->temperature(device_, kTempGpu, &v) == kSuccess) s.temperature_c = v;
  if (api_->power && api_->power(device_, &v) == kSuccess) s.power_w = v / 1000.0;
  return s;
}

std::optional<unsigned long long> Nvml::throttle_reasons() {
  unsigned long long r = 0;
  if (device_ && api_->reasons && api_->reasons(device_, &r) == kSuccess) return r;
  return std::nullopt;
}

std::optional<std::string> Nvml::pci_device_id() {
  PciInfo info{};
  if (!device_ || !api_->pci || api_->pci(device_, &info) != kSuccess) return std::nullopt;
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%04x", (info.pciDeviceId >> 16) & 0xFFFFu);
  return std::string(buf);
}

std::optional<double> Nvml::power_limit_w() {
  unsigned v = 0;
  if (device_ && api_->power_limit && api_->power_limit(device_, &v) == kSuccess && v > 0) return v / 1000.0;
  return std::nullopt;
}

std::optional<double> Nvml::max_sm_clock_mhz() {
  unsigned v = 0;
  if (device_ && api_->max_clock && api_->max_clock(device_, kClockSm, &v) == kSuccess && v > 0) return v;
  return std::nullopt;
}

std::optional<double> Nvml::max_memory_clock_mhz() {
  unsigned v = 0;
  if (device_ && api_->max_clock && api_->max_clock(device_, kClockMem, &v) == kSuccess && v > 0) return v;
  return std::nullopt;
}

std::optional<std::string> Nvml::driver_version() {
  char buf[96] = {};
  if (api_->driver && api_->driver(buf, sizeof buf) == kSuccess && buf[0]) return std::string(buf);
  return std::nullopt;
}

std::optional<int> Nvml::compute_processes() {
  if (!device_ || !api_->procs) return std::nullopt;
  unsigned count = 0;
  nvmlReturn_t r = api_->procs(device_, &count, nullptr);  // count only: no struct layout needed
  if (r == kSuccess || r == kInsufficientSize) return static_cast<int>(count);
  return std::nullopt;
}

// ---- monitor ----

NvmlMonitor::NvmlMonitor(Nvml* nvml, int period_ms) : nvml_(nvml), period_ms_(period_ms) {}

NvmlMonitor::~NvmlMonitor() { stop(); }

void NvmlMonitor::start() {
  if (!nvml_ || !nvml_->attached() || running_) return;
  running_ = true;
  thread_ = std::thread([this] {
    while (running_) {
      poll();
      for (int i = 0; i < period_ms_ / 10 && running_; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  });
}

void NvmlMonitor::stop() {
  running_ = false;
  if (thread_.joinable()) thread_.join();
}

void NvmlMonitor::poll() {
  CalClockSample s = nvml_->sample();
  auto r = nvml_->throttle_reasons();
  std::lock_guard<std::mutex> lock(mu_);
  if (s.sm_clock_mhz) {
    sm_min_ = std::min(sm_min_.value_or(*s.sm_clock_mhz), *s.sm_clock_mhz);
    sm_max_ = std::max(sm_max_.value_or(*s.sm_clock_mhz), *s.sm_clock_mhz);
  }
  if (s.temperature_c) temp_max_ = std::max(temp_max_.value_or(*s.temperature_c), *s.temperature_c);
  if (s.power_w) power_max_ = std::max(power_max_.value_or(*s.power_w), *s.power_w);
  if (r) reasons_ |= *r;
}

void NvmlMonitor::fill(CalConditions& c) {
  if (!nvml_ || !nvml_->attached()) return;
  poll();
  std::lock_guard<std::mutex> lock(mu_);
  c.sm_clock_min_mhz = sm_min_;
  c.sm_clock_max_mhz = sm_max_;
  c.temperature_max_c = temp_max_;
  c.power_max_w = power_max_;
  for (const auto& n : throttle_reason_names(reasons_)) {
    if (std::find(c.throttle_reasons_seen.begin(), c.throttle_reasons_seen.end(), n) ==
        c.throttle_reasons_seen.end()) {
      c.throttle_reasons_seen.push_back(n);
    }
  }
}

}  // namespace ftcost::calib
