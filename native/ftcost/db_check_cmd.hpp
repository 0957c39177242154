// `ftcost db check [PATH...] [--json]`: validates gpu-db files with the core's checker (db_check.hpp).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace ftcost {

// Checks the files and folders in `paths` (folders are walked recursively); with no path, the repository's
// gpu-db/ (FTCOST_DB_DIR, when it was compiled in and exists) or else the database embedded in the binary.
// A folder that contains gpus/, prices/ and models/ is a whole database and is checked on its own; any other
// path is checked against the default database (for references such as a price's gpu_id or a calibration's
// GPU folder, and for ids that must stay unique).
// Prints one line per problem, "file: field: message" (or one JSON object with --json) on stdout and a
// summary on stderr. Returns 0 when there is no problem, 2 when there is one, 1 on an internal error.
int run_db_check(const std::vector<std::string>& paths, bool as_json);
int run_db_check(const std::vector<std::string>& paths, bool as_json, std::ostream& out, std::ostream& err);

}  // namespace ftcost
