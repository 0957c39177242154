# The file module (native/ftcost/fileio.{hpp,cpp}): inputs read with type and size checks, outputs written
# atomically (symlinks resolved, device nodes written through, write errors named). One library for the two
# programs that write files: the ftcost CLI (native/CMakeLists.txt) and ftcost-calibrate
# (native/calibrate/CMakeLists.txt), whichever is configured first defines it.
if(NOT TARGET ftcost_fileio)
  add_library(ftcost_fileio STATIC ${CMAKE_CURRENT_LIST_DIR}/ftcost/fileio.cpp)
  target_include_directories(ftcost_fileio PUBLIC ${CMAKE_CURRENT_LIST_DIR}/ftcost)
  target_link_libraries(ftcost_fileio PUBLIC ftcost_base PRIVATE ftcost_warnings)
endif()
