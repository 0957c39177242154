#include "ftcost/calibrate/driver.hpp"

#include "ftcost/enum_names.hpp"

#include <cstdlib>
#include <dlfcn.h>
#include <unistd.h>

namespace ftcost::calib {

constexpr EnumName<HostStatus> kHostStatusNames[] = {{HostStatus::ok, "ok"},
                                                     {HostStatus::no_driver, "no_driver"},
                                                     {HostStatus::driver_too_old, "driver_too_old"},
                                                     {HostStatus::no_gpu, "no_gpu"},
                                                     {HostStatus::gpu_unusable, "gpu_unusable"},
                                                     {HostStatus::libraries_missing, "libraries_missing"}};
const char* host_status_name(HostStatus s) { return enum_name(kHostStatusNames, s, "unknown"); }

std::string cuda_version_text(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

namespace {

HostCheck fail(HostStatus s, std::string msg) {
  HostCheck h;
  h.status = s;
  h.message = std::move(msg);
  return h;
}

std::string with_code(DriverApi& api, const char* call, int code) {
  return std::string(call) + " returned " + api.error_name(code) + " (" + std::to_string(code) + ")";
}

// No device although the driver loaded: tell MIG / hidden devices / permissions apart where possible.
HostCheck no_device(DriverApi& api, const std::string& what) {
  if (api.device_nodes_present() && !api.device_nodes_accessible()) {
    return fail(HostStatus::gpu_unusable,
                "GPU unusable: " + what +
                    "; /dev/nvidiactl exists but this user cannot open it (add the user "
                    "to the group that owns /dev/nvidia*, or run in a container started with GPU access)");
  }
  if (auto n = api.nvml_gpu_count(); n && *n > 0) {
    return fail(HostStatus::gpu_unusable,
                "GPU unusable: " + what + ", but NVML sees " + std::to_string(*n) +
                    " GPU(s): MIG mode is on without a MIG instance visible to CUDA, or CUDA_VISIBLE_DEVICES "
                    "hides them (set CUDA_VISIBLE_DEVICES to a MIG instance UUID from nvidia-smi -L)");
  }
  return fail(HostStatus::no_gpu, "no GPU: " + what + "; nothing was measured");
}

}  // namespace

HostCheck probe_driver(DriverApi& api, int required_version, const std::vector<int>& wanted) {
  if (auto err = api.load()) {
    return fail(HostStatus::no_driver,
                "no NVIDIA driver: " + *err + "; install the NVIDIA driver (this build needs CUDA " +
                    cuda_version_text(required_version) + " or newer); nothing was measured");
  }
  int version = 0;
  const int vr = api.driver_version(&version);
  if (vr != cu::success || version <= 0) {
    return fail(
        HostStatus::no_driver,
        "no usable NVIDIA driver: " + with_code(api, "cuDriverGetVersion", vr) + "; nothing was measured");
  }
  if (version < required_version) {
    HostCheck h =
        fail(HostStatus::driver_too_old,
             "driver too old: found CUDA " + cuda_version_text(version) +
                 ", this build needs >= " + cuda_version_text(required_version) +
                 " (an R580 or newer driver); on data-centre GPUs NVIDIA's forward-compatibility "
                 "package (cuda-compat) makes it run without a driver upgrade, see docs/calibrate.md");
    h.driver_version = version;
    return h;
  }
  const int ir = api.init();
  if (ir != cu::success) {
    HostCheck h;
    switch (ir) {
      case cu::no_device:
        h = no_device(api, "the driver (CUDA " + cuda_version_text(version) + ") reports no CUDA device");
        break;
      case cu::stub_library:
        h = fail(HostStatus::no_driver, "no NVIDIA driver: the libcuda.so.1 found is the toolkit's stub (" +
                                            with_code(api, "cuInit", ir) +
                                            "); remove the stubs directory from LD_LIBRARY_PATH");
        break;
      case cu::system_driver_mismatch:
        h = fail(HostStatus::no_driver, "NVIDIA driver broken: " + with_code(api, "cuInit", ir) +
                                            ": the user-mode library and the kernel module differ in version "
                                            "(reboot or reinstall the driver)");
        break;
      case cu::compat_not_supported_on_device:
        h = fail(
            HostStatus::driver_too_old,
            "driver too old: the forward-compatibility package is loaded but this GPU does not support it (" +
                with_code(api, "cuInit", ir) +
                "; forward compatibility is for data-centre GPUs only): install an R580 or newer driver");
        break;
      case cu::not_permitted:
      case cu::operating_system:
      case cu::device_unavailable:
      case cu::device_not_licensed:
      case cu::system_not_ready:
        h = fail(
            HostStatus::gpu_unusable,
            "GPU unusable: " + with_code(api, "cuInit", ir) +
                " (permissions on /dev/nvidia*, a container without GPU access, or the fabric manager of "
                "an NVSwitch system not running)");
        break;
      default:
        h = fail(HostStatus::gpu_unusable, "GPU unusable: " + with_code(api, "cuInit", ir));
    }
    h.driver_version = version;
    return h;
  }
  int n = 0;
  const int cr = api.device_count(&n);
  if (cr != cu::success) {
    HostCheck h = fail(HostStatus::gpu_unusable, "GPU unusable: " + with_code(api, "cuDeviceGetCount", cr));
    h.driver_version = version;
    return h;
  }
  if (n <= 0) {
    HostCheck h =
        no_device(api, "the driver (CUDA " + cuda_version_text(version) + ") reports no CUDA device");
    h.driver_version = version;
    return h;
  }
  std::vector<int> devices = wanted;
  if (devices.empty()) {
    for (int i = 0; i < n; ++i) devices.push_back(i);
  }
  for (int d : devices) {
    if (d < 0 || d >= n) continue;  // an argument error: the caller reports it (exit 2)
    int mode = 0;
    const std::string dev = "device " + std::to_string(d);
    if (api.compute_mode(d, &mode) == cu::success && mode == cu::computemode_prohibited) {
      HostCheck h =
          fail(HostStatus::gpu_unusable,
               "GPU unusable: " + dev +
                   " is in compute-prohibited mode (nvidia-smi -c DEFAULT, as root, allows contexts)");
      h.driver_version = version;
      h.device_count = n;
      return h;
    }
    const int xr = api.try_context(d);
    if (xr != cu::success) {
      std::string why;
      if (xr == cu::device_unavailable) {
        why = mode == cu::computemode_exclusive_process
                  ? " (exclusive-process compute mode and another process holds the GPU: wait for it, or "
                    "nvidia-smi -c DEFAULT)"
                  : " (exclusive or prohibited compute mode, or the GPU is in use by another exclusive "
                    "process)";
      } else if (xr == cu::not_permitted || xr == cu::operating_system) {
        why = " (no permission for this GPU)";
      } else if (xr == cu::invalid_device || xr == cu::no_device) {
        why = " (MIG mode without an instance visible to CUDA?)";
      }
      HostCheck h = fail(HostStatus::gpu_unusable, "GPU unusable: " + dev + ": creating a context: " +
                                                       with_code(api, "cuDevicePrimaryCtxRetain", xr) + why);
      h.driver_version = version;
      h.device_count = n;
      return h;
    }
  }
  HostCheck h;
  h.device_count = n;
  h.driver_version = version;
  return h;
}

// ---- the real driver ------------------------------------------------------------------------------

namespace {

class RealDriver : public DriverApi {
 public:
  std::optional<std::string> load() override {
    if (auto e = lib_.open({"libcuda.so.1"})) return e;
    init_ = reinterpret_cast<int (*)(unsigned)>(lib_.symbol("cuInit"));
    version_ = reinterpret_cast<int (*)(int*)>(lib_.symbol("cuDriverGetVersion"));
    count_ = reinterpret_cast<int (*)(int*)>(lib_.symbol("cuDeviceGetCount"));
    get_ = reinterpret_cast<int (*)(int*, int)>(lib_.symbol("cuDeviceGet"));
    attr_ = reinterpret_cast<int (*)(int*, int, int)>(lib_.symbol("cuDeviceGetAttribute"));
    retain_ = reinterpret_cast<int (*)(void**, int)>(lib_.symbol("cuDevicePrimaryCtxRetain"));
    release_ = reinterpret_cast<int (*)(int)>(lib_.symbol("cuDevicePrimaryCtxRelease_v2"));
    if (!release_) release_ = reinterpret_cast<int (*)(int)>(lib_.symbol("cuDevicePrimaryCtxRelease"));
    name_ = reinterpret_cast<int (*)(int, const char**)>(lib_.symbol("cuGetErrorName"));
    if (!init_ || !version_ || !count_ || !get_ || !attr_ || !retain_ || !release_) {
      return lib_.loaded_from() + " lacks the CUDA driver API entry points (not an NVIDIA driver?)";
    }
    return std::nullopt;
  }
  int driver_version(int* v) override { return version_(v); }
  int init() override { return init_(0); }
  int device_count(int* n) override { return count_(n); }
  int compute_mode(int device, int* mode) override {
    int dev = 0;
    if (int r = get_(&dev, device); r != cu::success) return r;
    return attr_(mode, cu::attr_compute_mode, dev);
  }
  int try_context(int device) override {
    int dev = 0;
    if (int r = get_(&dev, device); r != cu::success) return r;
    void* ctx = nullptr;
    const int r = retain_(&ctx, dev);
    if (r == cu::success) release_(dev);
    return r;
  }
  std::string error_name(int code) override {
    const char* s = nullptr;
    if (name_ && name_(code, &s) == cu::success && s) return s;
    return "CUDA error " + std::to_string(code);
  }
  std::optional<int> nvml_gpu_count() override {
    DynLib nvml;
    if (nvml.open({"libnvidia-ml.so.1"})) return std::nullopt;
    auto init = reinterpret_cast<int (*)()>(nvml.symbol("nvmlInit_v2"));
    auto count = reinterpret_cast<int (*)(unsigned*)>(nvml.symbol("nvmlDeviceGetCount_v2"));
    auto shut = reinterpret_cast<int (*)()>(nvml.symbol("nvmlShutdown"));
    if (!init || !count || !shut || init() != 0) return std::nullopt;
    unsigned n = 0;
    const int r = count(&n);
    shut();
    if (r != 0) return std::nullopt;
    return static_cast<int>(n);
  }
  bool device_nodes_present() override { return ::access("/dev/nvidiactl", F_OK) == 0; }
  bool device_nodes_accessible() override { return ::access("/dev/nvidiactl", R_OK | W_OK) == 0; }

 private:
  DynLib lib_;
  int (*init_)(unsigned) = nullptr;
  int (*version_)(int*) = nullptr;
  int (*count_)(int*) = nullptr;
  int (*get_)(int*, int) = nullptr;
  int (*attr_)(int*, int, int) = nullptr;
  int (*retain_)(void**, int) = nullptr;
  int (*release_)(int) = nullptr;
  int (*name_)(int, const char**) = nullptr;
};

}  // namespace

std::unique_ptr<DriverApi> real_driver_api() { return std::make_unique<RealDriver>(); }

// ---- DynLib ----------------------------------------------------------------------------------------

DynLib::~DynLib() {
  // Never dlclose: the CUDA libraries keep threads and atexit handlers that must outlive main.
}

std::optional<std::string> DynLib::open(const std::vector<std::string>& candidates) {
  std::string tried, last;
  for (const auto& c : candidates) {
    ::dlerror();
    void* h = ::dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h) {
      handle_ = h;
      name_ = c;
      return std::nullopt;
    }
    const char* e = ::dlerror();
    last = e ? e : "unknown dlopen error";
    tried += (tried.empty() ? "" : ", ") + c;
  }
  if (candidates.empty()) return std::string("no candidate to load");
  return "cannot load " + candidates.front() + " (tried " + tried + "; last error: " + last + ")";
}

void* DynLib::symbol(const char* name) const {
  if (!handle_) return nullptr;
  return ::dlsym(handle_, name);
}

std::vector<std::string> library_candidates(const std::string& soname, const std::vector<std::string>& dirs) {
  std::vector<std::string> v{soname};
  for (const auto& d : dirs) {
    if (d.empty()) continue;
    std::string p = d + "/" + soname;
    bool dup = false;
    for (const auto& x : v) dup = dup || x == p;
    if (!dup) v.push_back(p);
  }
  return v;
}

HostCheck libraries_missing(const std::vector<std::string>& problems) {
  std::string m = "CUDA libraries missing: ";
  for (std::size_t i = 0; i < problems.size(); ++i) m += (i ? "; " : "") + problems[i];
  m += "; install them (e.g. the libcublas/libnccl packages of CUDA 13) or add their folder to "
       "LD_LIBRARY_PATH; "
       "nothing was measured";
  return fail(HostStatus::libraries_missing, m);
}

}  // namespace ftcost::calib
