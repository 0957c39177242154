// Can this host measure at all? A probe of the NVIDIA driver (libcuda.so.1, loaded with dlopen so that
// the binary starts on a host without it) and of the CUDA libraries the calibrator loads at run time
// (cuBLAS, cuBLASLt, NCCL), before the CUDA runtime is touched, so that each reason for "cannot measure
// here" gets its own message instead of one "no usable CUDA GPU":
//   no_driver          libcuda.so.1 cannot be loaded (no NVIDIA driver installed)
//   driver_too_old     the driver's CUDA version is below the one this build needs (a CUDA 13 build needs
//                      an R580 driver); data-centre GPUs can run it with NVIDIA's forward-compatibility
//                      package (cuda-compat)
//   no_gpu             the driver is there but reports no device
//   gpu_unusable       a device exists but no context can be made on it (compute mode prohibited or
//                      exclusive-process and busy, MIG without an instance visible to CUDA, no permission
//                      on /dev/nvidia*)
//   libraries_missing  the driver and a GPU are fine but libcublas/libcublasLt (or libnccl for
//                      --collectives) cannot be loaded
// Every one of them exits 3 ("cannot measure here", docs/calibrate.md). Plain C++: the CUDA driver API's
// error numbers are copied from cuda.h (CUDA 13.0) and checked against it where the kernels are built
// (kernels/cuda_libs.cpp static_asserts).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ftcost::calib {

// CUresult values used here (cuda.h, CUDA 13.0, enum cudaError_enum).
namespace cu {
constexpr int success = 0;
constexpr int not_initialized = 3;
constexpr int stub_library = 34;
constexpr int device_unavailable = 46;  // exclusive-process or prohibited compute mode
constexpr int no_device = 100;
constexpr int invalid_device = 101;
constexpr int device_not_licensed = 102;
constexpr int operating_system = 304;
constexpr int not_permitted = 800;
constexpr int not_supported = 801;
constexpr int system_not_ready = 802;
constexpr int system_driver_mismatch = 803;
constexpr int compat_not_supported_on_device = 804;
constexpr int attr_compute_mode = 20;  // CU_DEVICE_ATTRIBUTE_COMPUTE_MODE
constexpr int computemode_prohibited = 2;
constexpr int computemode_exclusive_process = 3;
}  // namespace cu

// What the probe needs from the driver: the real one (dlopen of libcuda.so.1) or a fake in tests.
class DriverApi {
 public:
  virtual ~DriverApi() = default;
  // Loads the driver library; the loader's message when it cannot.
  virtual std::optional<std::string> load() = 0;
  virtual int driver_version(int* version) = 0;  // cuDriverGetVersion: 13000 = CUDA 13.0
  virtual int init() = 0;                        // cuInit(0)
  virtual int device_count(int* n) = 0;          // cuDeviceGetCount
  virtual int compute_mode(int device, int* mode) = 0;
  // Creates (and releases) the primary context of `device`: where exclusive mode, MIG and permissions
  // show up.
  virtual int try_context(int device) = 0;
  virtual std::string error_name(int code) = 0;  // "CUDA_ERROR_NO_DEVICE"
  // GPUs NVML sees (nullopt: NVML absent); /dev/nvidiactl present and read-writable by this user.
  virtual std::optional<int> nvml_gpu_count() = 0;
  virtual bool device_nodes_present() = 0;
  virtual bool device_nodes_accessible() = 0;
};

std::unique_ptr<DriverApi> real_driver_api();

enum class HostStatus { ok, no_driver, driver_too_old, no_gpu, gpu_unusable, libraries_missing };
const char* host_status_name(HostStatus s);

struct HostCheck {
  HostStatus status = HostStatus::ok;
  std::string message;  // one line, what a user reads (no "ftcost-calibrate: " prefix)
  int device_count = 0;
  int driver_version = 0;  // 0: unknown
  int exit_code() const { return status == HostStatus::ok ? 0 : 3; }
};

// "13.0" from 13000
std::string cuda_version_text(int v);

// Probes the driver and the devices `wanted` (all visible ones when empty). `required_version` is the
// CUDA version this build was made with (CUDART_VERSION).
HostCheck probe_driver(DriverApi& api, int required_version, const std::vector<int>& wanted);

// ---- the CUDA libraries loaded at run time -----------------------------------------------------------

// A shared library opened with dlopen from a list of candidates (first that loads wins).
class DynLib {
 public:
  DynLib() = default;
  ~DynLib();
  DynLib(const DynLib&) = delete;
  DynLib& operator=(const DynLib&) = delete;
  // Tries each candidate (a soname searched the usual way, or a path); on failure the message names
  // every candidate and the loader's last error.
  std::optional<std::string> open(const std::vector<std::string>& candidates);
  bool is_open() const { return handle_ != nullptr; }
  const std::string& loaded_from() const { return name_; }
  void* symbol(const char* name) const;  // nullptr when missing

 private:
  void* handle_ = nullptr;
  std::string name_;
};

// Candidates for a library: its soname, then the same name in each of `dirs` (e.g. the toolkit's lib64
// recorded at build time, /usr/local/cuda/lib64).
std::vector<std::string> library_candidates(const std::string& soname, const std::vector<std::string>& dirs);

// The message for libraries that could not be loaded (exit 3).
HostCheck libraries_missing(const std::vector<std::string>& problems);

}  // namespace ftcost::calib
