// GPU tests of the calibrator's kernels: every kernel against its CPU reference at small and odd sizes
// (kernels/*.cu selftest_*). Exit 0: all passed; 1: a check failed; 77: no GPU (ctest: skipped), or,
// with --require-gpu, 1.
#include "cuda_libs.hpp"
#include "device.hpp"
#include "ftcost/calibrate/driver.hpp"
#include "kernels.hpp"

#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstring>
#include <string>

int main(int argc, char** argv) {
  const bool require = argc > 1 && std::strcmp(argv[1], "--require-gpu") == 0;
  {
    auto api = ftcost::calib::real_driver_api();
    auto hc = ftcost::calib::probe_driver(*api, CUDART_VERSION, {0});
    if (hc.status == ftcost::calib::HostStatus::ok) {
      auto missing = ftcost::calib::load_cuda_libraries(true, false);
      if (!missing.empty()) hc = ftcost::calib::libraries_missing(missing);
    }
    if (hc.status != ftcost::calib::HostStatus::ok) {
      std::printf("skipped: %s\n", hc.message.c_str());
      return require ? 1 : 77;
    }
  }
  auto count = ftcost::calib::cuda_device_count();
  if (!count.ok()) {
    std::printf("skipped: no usable CUDA GPU (%s)\n", count.error().message.c_str());
    return require ? 1 : 77;
  }
  try {
    ftcost::calib::gpu_init(0);
  } catch (const std::exception& e) {
    std::printf("FAILED: GPU setup: %s\n", e.what());
    return 1;
  }
  int passed = 0, failed = 0;
  for (const std::string& line : ftcost::calib::self_test()) {
    std::printf("%s\n", line.c_str());
    if (line.rfind("FAILED", 0) == 0)
      ++failed;
    else
      ++passed;
  }
  ftcost::calib::gpu_shutdown();
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
