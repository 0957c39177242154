# cmake -DIN=<site file> -DOUT=<dest> -DVERSION=<x.y.z> [-DREPO_URL=<url>] -P copy_site_file.cmake
# HTML files get @FTCOST_VERSION@ and @FTCOST_REPO_URL@ replaced; everything else is copied as is.
get_filename_component(ext "${IN}" LAST_EXT)
if(ext STREQUAL ".html")
  set(FTCOST_VERSION "${VERSION}")
  set(FTCOST_REPO_URL "${REPO_URL}")
  configure_file("${IN}" "${OUT}" @ONLY)
else()
  configure_file("${IN}" "${OUT}" COPYONLY)
endif()
