# scripts/calibrate-first-run.sh on a machine without a GPU: exit 3 and the calibrator's one-line reason.
#   cmake -DSCRIPT=<script> -DBIN_DIR=<folder of ftcost-calibrate> -DWORK=<scratch> -P first_run_test.cmake
if(EXISTS /dev/nvidiactl)
  message("SKIPPED: a GPU driver is present; the no-GPU path cannot be tested here")
  return()
endif()
file(REMOVE_RECURSE ${WORK})
execute_process(COMMAND bash ${SCRIPT} ${BIN_DIR} ${WORK}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
if(NOT rc EQUAL 3)
  message(FATAL_ERROR "exit ${rc}, expected 3\nstdout: ${out}\nstderr: ${err}")
endif()
if(NOT err MATCHES "first-run: cannot measure here: ftcost-calibrate: (no NVIDIA driver|no GPU|GPU unusable|driver too old|CUDA libraries missing)")
  message(FATAL_ERROR "unexpected message:\n${err}")
endif()
message("ok: ${err}")
