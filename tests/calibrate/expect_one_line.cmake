# The "cannot measure here" contract's stderr (docs/calibrate.md "Exit codes"): exactly one line, matching
# `pattern`; a failure's message starts with `label`. Sets `out_var` to the line.
function(expect_one_stderr_line label err pattern out_var)
  string(REGEX REPLACE "\n$" "" e "${err}")
  string(FIND "${e}" "\n" nl)
  if(NOT nl EQUAL -1 OR e STREQUAL "")
    message(FATAL_ERROR "${label}expected exactly one line on stderr, got:\n${err}")
  endif()
  if(NOT e MATCHES "${pattern}")
    message(FATAL_ERROR "${label}message does not match '${pattern}':\n${e}")
  endif()
  set(${out_var} "${e}" PARENT_SCOPE)
endfunction()
