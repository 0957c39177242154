// `ftcost fit-stack`: a stack profile's free parameters fitted to the training reference rows, or (--run)
// to the user's own run(s).
#include "command.hpp"
#include "fileio.hpp"
#include "report.hpp"
#include "run_cmd.hpp"

#include <memory>
#include <string>
#include <vector>

namespace ftcost::cli {

namespace {

struct FitStackState {
  std::string stack_id = kPaperStackId, write;
  std::string ref_dir = FTCOST_SOURCE_DIR "/tests/data/reference";
  std::vector<std::string> runs;
  bool as_json = false;
};

int run_fit_stack_cmd(const CLI::App& cmd, FitStackState& s) {
  const Database& db = Database::embedded();
  auto paths = no_empty_paths(cmd, {{"--write", &s.write}, {"--dir", &s.ref_dir}});
  if (!paths.ok()) return fail(paths.error());
  if (!s.runs.empty()) {
    if (cmd.count("--dir") != 0)
      return fail(make_error(Errc::invalid_value, "--dir",
                             "the reference rows are not used with --run (the profile is refitted to your "
                             "runs): give --run or --dir, not both"));
    if (cmd.count("--stack") == 0) s.stack_id = kDefaultStackId;
    return run_fit_stack_runs(s.runs, db, s.stack_id, s.write, s.as_json, read_input_file);
  }
  auto rows = load_reference_dir(s.ref_dir, read_input_file);
  if (!rows.ok()) return fail(rows.error());
  return run_fit_stack(rows.value(), db, s.stack_id, s.write, read_input_file);
}

}  // namespace

Command add_fit_stack(CLI::App& app) {
  auto s = std::make_shared<FitStackState>();
  auto* fitstack =
      app.add_subcommand("fit-stack", "Fit a stack profile's free parameters to the training reference rows");
  fitstack->add_option("--stack", s->stack_id,
                       std::string("stack profile id (default: ") + kPaperStackId +
                           " for the reference rows, " + kDefaultStackId +
                           ", the estimate's default, with --run)");
  fitstack->add_option("--dir", s->ref_dir, "folder of reference JSON files");
  fitstack->add_option("--write", s->write,
                       "write the fitted profile to this stack JSON file (atomically); with --run a new "
                       "user profile file");
  fitstack->add_option("--run", s->runs,
                       "refit to your own run(s) (ftcost.run/1 from tools/ftcost_probe.py) instead of the "
                       "reference rows");
  fitstack->add_flag("--json", s->as_json, "JSON output (with --run)");
  return {fitstack, [fitstack, s] { return run_fit_stack_cmd(*fitstack, *s); }};
}

}  // namespace ftcost::cli
