// `ftcost validate`: predicted against measured on every reference row and contributed run.
#include "command.hpp"
#include "fileio.hpp"
#include "report.hpp"
#include "run_cmd.hpp"

#include <memory>
#include <string>
#include <vector>

namespace ftcost::cli {

namespace {

struct ValidateState {
  std::string ref_dir = FTCOST_SOURCE_DIR "/tests/data/reference";
  std::string runs_dir = FTCOST_SOURCE_DIR "/gpu-db/runs";
  std::string md_out, svg_out;
  bool as_json = false;
};

int run_validate_cmd(const CLI::App& cmd, const ValidateState& s) {
  const Database& db = Database::embedded();
  auto paths = no_empty_paths(cmd, {{"--markdown", &s.md_out}, {"--svg", &s.svg_out}, {"--dir", &s.ref_dir}});
  if (!paths.ok()) return fail(paths.error());
  auto rows = load_reference_dir(s.ref_dir, read_input_file);
  if (!rows.ok()) return fail(rows.error());
  auto run_rows = load_run_rows(s.runs_dir, db, read_input_file);
  if (!run_rows.ok()) return fail(run_rows.error());
  std::vector<RefRow> all = rows.value();
  all.insert(all.end(), run_rows->begin(), run_rows->end());
  return run_validate(all, db, s.as_json, s.md_out, s.svg_out);
}

}  // namespace

Command add_validate(CLI::App& app) {
  auto s = std::make_shared<ValidateState>();
  auto* validate = app.add_subcommand(
      "validate", "Predicted vs measured on every reference measurement (tests/data/reference)");
  validate->add_option("--dir", s->ref_dir, "folder of reference JSON files");
  validate->add_option("--runs", s->runs_dir,
                       "folder of contributed runs (runs/<gpu-id>/*.json, ftcost.run/1): validation rows");
  validate->add_option("--markdown", s->md_out, "also write the report as Markdown to this file");
  validate->add_option("--svg", s->svg_out, "also write a predicted-vs-measured plot (SVG) to this file");
  validate->add_flag("--json", s->as_json, "JSON output");
  return {validate, [validate, s] { return run_validate_cmd(*validate, *s); }};
}

}  // namespace ftcost::cli
