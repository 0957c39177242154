# Included by the script-mode generators (embed_db.cmake, embed_text.cmake).
# write_if_changed(OUT TEXT): writes TEXT to OUT through OUT.tmp and a rename (a build interrupted mid-write
# never leaves a half-written source), and leaves OUT untouched when it already holds TEXT, so that its
# timestamp (and everything compiled from it) does not change.
function(write_if_changed out text)
  if(EXISTS ${out})
    file(READ ${out} old)
    if(old STREQUAL text)
      return()
    endif()
  endif()
  file(WRITE ${out}.tmp "${text}")
  file(RENAME ${out}.tmp ${out})
endfunction()
