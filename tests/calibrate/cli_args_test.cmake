# Argument handling of ftcost-calibrate, which needs no GPU: --help exits 0, bad input exits 2 with a
# message naming the flag.
#   cmake -DBIN=<ftcost-calibrate> -P cli_args_test.cmake
function(expect code pattern)
  execute_process(COMMAND ${BIN} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
  if(NOT rc EQUAL ${code})
    message(FATAL_ERROR "${ARGN}: exit ${rc}, expected ${code}\n${out}\n${err}")
  endif()
  if(NOT "${out}${err}" MATCHES "${pattern}")
    message(FATAL_ERROR "${ARGN}: output does not match '${pattern}':\n${out}\n${err}")
  endif()
endfunction()
expect(0 "--quick" --help)
expect(0 "--only" --help)
expect(2 "--only: unknown benchmark family \"flash\"" --only gemm,flash)
expect(2 "--quick|--full|excludes" --quick --full)
expect(2 "--device" --device -1)
expect(2 "nosuchflag" --nosuchflag)
message("ok")
