// GPU tests of the calibrator's kernels: every kernel against its CPU reference at small and odd sizes
// (kernels/*.cu selftest_*). Exit 0: all passed; 1: a check failed; 77: no GPU (ctest: skipped), or,
// with --require-gpu, 1.
#include "device.hpp"
#include "kernels.hpp"

#include <cstdio>
#include <cstring>
#include <string>

int main(int argc, char** argv) {
  const bool require = argc > 1 && std::strcmp(argv[1], "--require-gpu") == 0;
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
