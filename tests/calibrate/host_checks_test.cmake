# ftcost-calibrate on hosts it cannot measure on, faked with a stand-in libcuda.so.1 (fake_libcuda.cpp)
# first in LD_LIBRARY_PATH: each class of problem gives exit 3, exactly one line on stderr naming it,
# nothing on stdout and no output file (docs/calibrate.md "Exit codes").
#   cmake -DBIN=<ftcost-calibrate> -DFAKE_DIR=<folder of the fake libcuda.so.1> -DOUT=<file> -P host_checks_test.cmake
include(${CMAKE_CURRENT_LIST_DIR}/expect_one_line.cmake)
if(EXISTS /dev/nvidiactl)
  # the probe also reads /dev/nvidiactl and NVML; with a real driver present the fakes are not alone
  message("note: a real NVIDIA driver is present; the fake driver still answers the probe first")
endif()
function(scenario name pattern)
  file(REMOVE ${OUT})
  execute_process(COMMAND ${CMAKE_COMMAND} -E env LD_LIBRARY_PATH=${FAKE_DIR} ${ARGN} ${BIN} --quick --only launch --out ${OUT}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
  if(NOT rc EQUAL 3)
    message(FATAL_ERROR "${name}: exit ${rc}, expected 3\nstdout: ${out}\nstderr: ${err}")
  endif()
  expect_one_stderr_line("${name}: " "${err}" "${pattern}" e)
  if(NOT out STREQUAL "" OR EXISTS ${OUT})
    message(FATAL_ERROR "${name}: wrote something although nothing was measured")
  endif()
  message("ok: ${name}: ${e}")
endfunction()

scenario("driver too old (R550)" "^ftcost-calibrate: driver too old: found CUDA 12\\.4, this build needs >= 13\\.0.*forward-compatibility"
  FAKE_CUDA_VERSION=12040)
scenario("no GPU" "^ftcost-calibrate: (no GPU: the driver \\(CUDA 13\\.0\\) reports no CUDA device|GPU unusable)"
  FAKE_CUDA_COUNT=0)
scenario("exclusive-process GPU in use" "^ftcost-calibrate: GPU unusable: device 0: creating a context: .*DEVICE_UNAVAILABLE.*exclusive-process"
  FAKE_CUDA_MODE=3 FAKE_CUDA_CTX=46)
scenario("compute prohibited" "^ftcost-calibrate: GPU unusable: device 0 is in compute-prohibited mode"
  FAKE_CUDA_MODE=2)
scenario("no permission" "^ftcost-calibrate: GPU unusable: cuInit returned CUDA_ERROR_NOT_PERMITTED"
  FAKE_CUDA_INIT=800)
# A driver that passes the probe: the run goes on to load cuBLAS/cuBLASLt (and NCCL for --collectives)
# with dlopen from the toolkit this was built with, checking every symbol the calibrator calls, and stops
# only at the CUDA runtime, which the stand-in cannot serve. "CUDA libraries missing" here would mean the
# forwarding layer (kernels/cuda_libs.cpp) names a symbol the real libraries lack.
scenario("driver passes, libraries load, runtime refuses the stand-in" "^ftcost-calibrate: no usable CUDA GPU \\(cudaGetDeviceCount"
  FAKE_CUDA_COUNT=1)
function(collectives_scenario)
  file(REMOVE ${OUT})
  execute_process(COMMAND ${CMAKE_COMMAND} -E env LD_LIBRARY_PATH=${FAKE_DIR} FAKE_CUDA_COUNT=2 ${BIN} --collectives --out ${OUT}
    RESULT_VARIABLE rc ERROR_VARIABLE err TIMEOUT 60)
  if(NOT rc EQUAL 3 OR NOT err MATCHES "^ftcost-calibrate: no usable CUDA GPU \\(cudaGetDeviceCount")
    message(FATAL_ERROR "--collectives with the stand-in driver: exit ${rc}, expected 3 after loading NCCL:\n${err}")
  endif()
  message("ok: --collectives: NCCL loaded: ${err}")
endfunction()
collectives_scenario()
message("ok")
