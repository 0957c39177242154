// `ftcost compare`: one job on every GPU of the database, cheapest first.
#pragma once

#include "ftcost/compare.hpp"

#include <string>

namespace ftcost::cli {

struct CompareOptions {
  CompareView view;
  bool as_json = false, as_csv = false;
  int max_gpus = 0;  // --max-gpus: shapes of at most this many GPUs (0 = the default cap)
};

int run_compare(const Request& req, const Database& db, const FileReader& reader, long today_days,
                const CompareOptions& opt);

}  // namespace ftcost::cli
