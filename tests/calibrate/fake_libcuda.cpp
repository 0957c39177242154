// A stand-in for the NVIDIA driver's libcuda.so.1 with just the entry points ftcost-calibrate's host probe
// (native/calibrate/src/driver.cpp) calls, each answering what the test sets in the environment:
//   FAKE_CUDA_VERSION (default 13000)  cuDriverGetVersion
//   FAKE_CUDA_INIT    (default 0)      cuInit's CUresult
//   FAKE_CUDA_COUNT   (default 1)      cuDeviceGetCount
//   FAKE_CUDA_MODE    (default 0)      CU_DEVICE_ATTRIBUTE_COMPUTE_MODE
//   FAKE_CUDA_CTX     (default 0)      cuDevicePrimaryCtxRetain's CUresult
// Put its folder first in LD_LIBRARY_PATH to run the calibrator "on" a host with that driver
// (tests/calibrate/host_checks_test.cmake). It never gets to the CUDA runtime: every scenario tested ends
// in the probe.
#include <cstdlib>

namespace {
int env(const char* name, int dflt) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : dflt;
}
}  // namespace

extern "C" {
int cuInit(unsigned) { return env("FAKE_CUDA_INIT", 0); }
int cuDriverGetVersion(int* v) {
  *v = env("FAKE_CUDA_VERSION", 13000);
  return 0;
}
int cuDeviceGetCount(int* n) {
  *n = env("FAKE_CUDA_COUNT", 1);
  return 0;
}
int cuDeviceGet(int* d, int ordinal) {
  *d = ordinal;
  return 0;
}
int cuDeviceGetAttribute(int* v, int, int) {
  *v = env("FAKE_CUDA_MODE", 0);
  return 0;
}
int cuDevicePrimaryCtxRetain(void** ctx, int) {
  *ctx = nullptr;
  return env("FAKE_CUDA_CTX", 0);
}
int cuDevicePrimaryCtxRelease_v2(int) { return 0; }
int cuGetErrorName(int code, const char** s) {
  switch (code) {
    case 46:
      *s = "CUDA_ERROR_DEVICE_UNAVAILABLE";
      return 0;
    case 100:
      *s = "CUDA_ERROR_NO_DEVICE";
      return 0;
    case 800:
      *s = "CUDA_ERROR_NOT_PERMITTED";
      return 0;
    default:
      *s = "CUDA_ERROR_FAKE";
      return 0;
  }
}
}
