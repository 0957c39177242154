# ctest validate.doc: docs/validation.md ends with exactly what `ftcost validate --markdown` writes for the
# repository's reference rows, so the published tables cannot drift from the model.
#   cmake -DBIN=ftcost -DDIR=tests/data/reference -DDOC=docs/validation.md -DOUT=tmp.md -P check_validation_doc.cmake
execute_process(COMMAND ${BIN} validate --dir ${DIR} --markdown ${OUT} RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "ftcost validate --markdown failed (exit ${rc})")
endif()
file(READ ${DOC} doc)
file(READ ${OUT} tables)
string(FIND "${doc}" "${tables}" pos)
if(pos EQUAL -1)
  message(FATAL_ERROR "docs/validation.md's tables differ from `ftcost validate --markdown`: regenerate them with "
                      "`build/native/bin/ftcost validate --markdown /tmp/t.md --svg docs/validation.svg` and paste "
                      "/tmp/t.md under '## Tables'")
endif()
string(LENGTH "${doc}" doc_len)
string(LENGTH "${tables}" tables_len)
math(EXPR expected "${doc_len} - ${tables_len}")
if(NOT pos EQUAL expected)
  message(FATAL_ERROR "docs/validation.md: the tables of `ftcost validate --markdown` must be its last section")
endif()
