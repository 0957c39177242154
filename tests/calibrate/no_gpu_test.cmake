# Runs ftcost-calibrate on a machine without a GPU: exit code 3, exactly one line on stderr naming the
# problem, nothing on stdout, no output file. On a machine with a GPU the test reports itself skipped.
#   cmake -DBIN=<ftcost-calibrate> -DOUT=<file> -P no_gpu_test.cmake
include(${CMAKE_CURRENT_LIST_DIR}/expect_one_line.cmake)
file(REMOVE ${OUT})
execute_process(COMMAND ${BIN} --quick --only launch --out ${OUT}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
if(rc EQUAL 0)
  file(REMOVE ${OUT})
  message("SKIPPED: a GPU is present here; the no-GPU path cannot be tested")
  return()
endif()
if(NOT rc EQUAL 3)
  message(FATAL_ERROR "exit code ${rc}, expected 3\nstdout: ${out}\nstderr: ${err}")
endif()
# one of the documented "cannot measure here" messages (docs/calibrate.md "Exit codes")
expect_one_stderr_line("" "${err}" "^ftcost-calibrate: (no NVIDIA driver|no usable NVIDIA driver|NVIDIA driver broken|driver too old|no GPU|GPU unusable|CUDA libraries missing|no usable CUDA GPU)" err_trim)
if(NOT out STREQUAL "")
  message(FATAL_ERROR "expected nothing on stdout, got:\n${out}")
endif()
if(EXISTS ${OUT})
  message(FATAL_ERROR "${OUT} was written although nothing was measured")
endif()
message("ok: exit 3, '${err_trim}'")
