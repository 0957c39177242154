// The commands of `ftcost`, one file each (the ftcost_cli library). A command's registration adds its
// subcommand to the CLI11 app, with the flags bound to state the command owns, and returns what runs it once
// the command line is parsed; main.cpp builds the app from the registrations below and runs the command
// given. Below them, what the commands share: errors, JSON output, input files, the job's flags.
#pragma once

#include "ftcost/estimate.hpp"
#include "ftcost/json_util.hpp"
#include "ftcost/units.hpp"

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace ftcost::cli {

struct Command {
  CLI::App* app = nullptr;    // the subcommand, owned by the app it was added to
  std::function<int()> run;   // runs the command once parsed; returns the exit code
  bool uses_database = true;  // false: runs even when the embedded database has problems (`db check`)
};

using Registration = Command (*)(CLI::App& app);

// The registrations, in the order `ftcost --help` lists the commands.
Command add_estimate(CLI::App& app);   // estimate_cmd.cpp
Command add_sweep(CLI::App& app);      // sweep_cmd.cpp
Command add_compare(CLI::App& app);    // compare_cmd.cpp
Command add_plan(CLI::App& app);       // plan_cmd.cpp
Command add_scale(CLI::App& app);      // scale_cmd.cpp
Command add_paper(CLI::App& app);      // paper_cmd.cpp (eq1, eq2, table4)
Command add_fit(CLI::App& app);        // fit_cmd.cpp
Command add_models(CLI::App& app);     // models_cmd.cpp
Command add_gpus(CLI::App& app);       // gpus_cmd.cpp
Command add_validate(CLI::App& app);   // validate_cmd.cpp
Command add_fit_stack(CLI::App& app);  // fit_stack_cmd.cpp
Command add_db(CLI::App& app);         // db_check_cmd.cpp (db check)
Command add_bench(CLI::App& app);      // bench_cmd.cpp

// "ftcost: error: ..." on stderr; returns the error's exit code (2 for bad input). Under --json
// (set_json_errors) the error is {"error": {"code", "field", "message"}} on stdout instead, the JS API's
// shape.
int fail(const Error& e);
void set_json_errors(bool on);

// `j` on stdout, indented by 2.
void print_json(const json& j);

// Every input file (model/GPU/calibration JSON, --points CSV, reference rows, stack profiles): regular files
// only, at most 8 MiB (fileio.hpp). A FileReader.
Result<std::string> read_input_file(const std::string& path);

// Days since 1970-01-01 (dates the price ages): today, or the date in the environment variable FTCOST_TODAY
// (YYYY-MM-DD), which makes an output reproducible (the golden test, tests/golden). today_override() is that
// date (-1 when unset), or the error naming FTCOST_TODAY, which main() reports before any command runs.
long today_days();
Result<long> today_override();

// A number validator whose message says what is allowed (CLI11's built-in ranges print DBL_MAX).
CLI::Validator number_in(double lo, double hi, const std::string& what);

// The job's flags on `cmd` (from the option table, core/app/src/options_table.cpp), each stored under its key
// in `into`; `skip` names the keys the command does not take (it chooses that value itself). `into` must
// outlive `cmd`.
void add_job_options(CLI::App* cmd, Request& into, const std::vector<std::string>& skip);

// A command that lists entries of the embedded database: the text `table` writes, or with --json the array
// `list` makes (the core's list, the one the JavaScript API returns).
Command add_list_command(CLI::App& app, const std::string& name, const std::string& help,
                         std::string (*table)(const Database& db), json (*list)(const Database& db));

// An output file or folder given with an empty value is an error, not "no output" (issue #15 item 9): the
// error naming the first of `flags` (flag, the variable it sets) that `cmd` was given with an empty value.
Status no_empty_paths(const CLI::App& cmd,
                      const std::vector<std::pair<std::string, const std::string*>>& flags);

// Bytes as GiB with two decimals.
std::string gib(double bytes);

// Whether the embedded database loaded without problems; prints each problem to stderr when not.
bool embedded_database_sound();

}  // namespace ftcost::cli
