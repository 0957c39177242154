// `ftcost fit-stack --run FILE...`: a stack profile refitted to the user's own run(s) (ftcost.run/1).
#pragma once

#include "ftcost/run.hpp"

#include <functional>
#include <string>
#include <vector>

namespace ftcost::cli {

using RunReader = std::function<Result<std::string>(const std::string&)>;

// Reads and checks every run file (errors name the file and the JSON field).
Result<std::vector<RunFile>> load_runs(const std::vector<std::string>& paths, const Database& db,
                                       const RunReader& read);

// Prints the fit (before/after error on the run, each parameter with its error bar or why it was not
// fitted) and, with `write_path`, writes the adjusted profile as a complete ftcost.stack/1 file.
int run_fit_stack_runs(const std::vector<std::string>& paths, const Database& db, const std::string& stack_id,
                       const std::string& write_path, bool as_json, const RunReader& read);

// Reference rows from the contributed runs under `dir` (runs/<gpu-id>/*.json); a missing folder gives none.
Result<std::vector<RefRow>> load_run_rows(const std::string& dir, const Database& db, const RunReader& read);

}  // namespace ftcost::cli
