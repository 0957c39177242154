# ftcost-calibrate --collectives without GPUs, and the mpirun checks that come before any GPU is touched:
# exit codes and one-line messages (docs/calibrate.md "Collectives").
#   cmake -DBIN=<ftcost-calibrate> -DWITH_MPI=ON|OFF -DOUT=<file> -P collectives_cli_test.cmake
function(expect code pattern)
  file(REMOVE ${OUT})
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
    TIMEOUT 60)
  string(REGEX REPLACE "\n$" "" e "${err}")
  string(FIND "${e}" "\n" nl)
  if(NOT rc EQUAL ${code} OR NOT nl EQUAL -1 OR NOT e MATCHES "${pattern}" OR EXISTS ${OUT})
    message(FATAL_ERROR "${ARGN}\nexit ${rc} (expected ${code}), stderr (expected one line matching '${pattern}'):\n${err}")
  endif()
  message("ok: exit ${rc}: ${e}")
endfunction()

if(EXISTS /dev/nvidiactl)
  message("note: a GPU driver is present: the no-GPU case is not checked")
else()
  expect(3 "^ftcost-calibrate: (no NVIDIA driver|no GPU|GPU unusable|CUDA libraries missing)" ${BIN} --collectives --out ${OUT})
endif()
expect(2 "excludes|--only" ${BIN} --collectives --only gemm --out ${OUT})
expect(2 "only --collectives runs across ranks"
  OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=0 ${BIN} --quick --out ${OUT})
expect(2 "OMPI_COMM_WORLD_RANK: rank 2 is not below the world size 2"
  OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=2 ${BIN} --collectives --out ${OUT})
if(NOT WITH_MPI)
  expect(2 "this build has no MPI" OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=1 ${BIN} --collectives --out ${OUT})
endif()
message("ok")
