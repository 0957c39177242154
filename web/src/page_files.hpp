// The files the page holds (the user's length file, model config, calibrations), for the JS API
// (js_api_web.cpp): window.ftcost.estimate({"dataset": "dataset/<name>"}) reads what the calculator reads.
#pragma once

#include "ftcost/estimate.hpp"

namespace ftcost::web {

// Serves a path from the running calculator's files (App::file_reader); before the calculator has started,
// every path is "not loaded in this page". Defined in host_web.cpp.
FileReader page_file_reader();

}  // namespace ftcost::web
