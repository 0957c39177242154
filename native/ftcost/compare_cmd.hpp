// `ftcost compare`: one job on every GPU of the database, cheapest first.
#pragma once

#include "ftcost/compare.hpp"

#include <string>

namespace ftcost::cli {

struct CompareOptions {
  bool spot = false;       // include spot (interruptible) offers
  bool offers = false;     // every offer, not only each GPU's cheapest
  bool fits_only = false;  // hide GPUs where the job does not fit
  bool as_json = false, as_csv = false;
};

int run_compare(const Request& req, const Database& db, const FileReader& reader, long today_days,
                const CompareOptions& opt);

}  // namespace ftcost::cli
