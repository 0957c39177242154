#include "device.hpp"

#include "ftcost/calibrate/output.hpp"

#include <cublasLt.h>
#include <cuda_runtime.h>

namespace ftcost::calib {

namespace {
std::string version_text(int v) {  // 13000 -> "13.0"
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}
Error cuda_error(const char* call, cudaError_t e) {
  return make_error(Errc::internal, call, std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e));
}
}  // namespace

Result<int> cuda_device_count() {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return make_error(Errc::internal, "cudaGetDeviceCount", cudaGetErrorString(e));
  }
  if (n <= 0) return make_error(Errc::internal, "cudaGetDeviceCount", "no CUDA-capable device is detected");
  return n;
}

Result<DeviceInfo> describe_device(int index) {
  cudaDeviceProp p{};
  cudaError_t e = cudaGetDeviceProperties(&p, index);
  if (e != cudaSuccess) return cuda_error("cudaGetDeviceProperties", e);
  DeviceInfo info;
  CalDevice& d = info.device;
  d.name = p.name;
  d.uuid_hash = uuid_hash(reinterpret_cast<const unsigned char*>(p.uuid.bytes));
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  d.sm_count = p.multiProcessorCount;
  d.memory_bytes = p.totalGlobalMem;
  d.l2_cache_bytes = static_cast<std::uint64_t>(p.l2CacheSize);
  int khz = 0, mem_khz = 0, bus = 0;
  // CUDA 13's cudaDeviceProp has no clockRate / memoryClockRate: attributes instead (kHz)
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, index) == cudaSuccess && khz > 0)
    d.sm_clock_max_mhz = khz / 1000.0;
  if (cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, index) == cudaSuccess && mem_khz > 0) {
    d.memory_clock_max_mhz = mem_khz / 1000.0;
  }
  if (cudaDeviceGetAttribute(&bus, cudaDevAttrGlobalMemoryBusWidth, index) == cudaSuccess)
    d.memory_bus_width_bits = bus;
  (void)cudaGetLastError();
  int drv = 0, rt = 0;
  cudaDriverGetVersion(&drv);
  cudaRuntimeGetVersion(&rt);
  d.driver_version =
      "CUDA driver API " + version_text(drv);  // replaced by NVML's driver string when available
  d.cuda_runtime_version = version_text(rt);
  std::size_t lt = cublasLtGetVersion();  // e.g. 130100; 0 when cuBLAS is not loaded (--collectives)
  d.cublas_version = lt == 0 ? std::string("not loaded")
                             : std::to_string(lt / 10000) + "." + std::to_string((lt / 100) % 100) + "." +
                                   std::to_string(lt % 100);
  d.host_cpu = host_cpu_name();
  char bus_id[32] = {};
  if (cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, index) == cudaSuccess) info.pci_bus_id = bus_id;
  (void)cudaGetLastError();
  info.facts.cc_major = p.major;
  info.facts.cc_minor = p.minor;
  info.facts.memory_bytes = p.totalGlobalMem;
  info.facts.l2_bytes = static_cast<std::uint64_t>(p.l2CacheSize);
  info.facts.sm_count = p.multiProcessorCount;
  return info;
}

}  // namespace ftcost::calib
