// ftcost — will this fine-tuning job fit, how fast will it run, what will it cost.
// Exit codes: 0 ok, 2 bad input (the message names the flag or field), 1 internal error.
// The commands are the ftcost_cli library, one file each (command.hpp); this file builds the command line
// from their registrations and runs the one given.
#include "command.hpp"
#include "fileio.hpp"
#include "ftcost/version.hpp"

#include <CLI/CLI.hpp>

#include <exception>
#include <iostream>
#include <string>
#include <vector>

namespace {

using namespace ftcost;

// In the order `ftcost --help` lists them.
constexpr cli::Registration kCommands[] = {
    cli::add_estimate,  cli::add_sweep, cli::add_compare, cli::add_plan, cli::add_scale,
    cli::add_paper,     cli::add_fit,   cli::add_models,  cli::add_gpus, cli::add_validate,
    cli::add_fit_stack, cli::add_db,    cli::add_bench};

int run_command(int argc, char** argv) {
  try {
    CLI::App app{
        "ftcost — will an LLM fine-tuning job fit on a GPU, how fast does it run, what does it cost"};
    app.require_subcommand(1);
    app.set_version_flag("--version", std::string("ftcost ") + kVersion);
    std::vector<cli::Command> commands;
    for (const cli::Registration add : kCommands) commands.push_back(add(app));

    if (argc > 1 && argv[1][0] != '-') {
      const std::string cmd = argv[1];
      bool known = false;
      for (const auto& c : commands) known = known || c.app->get_name() == cmd;
      if (!known) {
        std::cerr << "ftcost: error: unknown command \"" << cmd
                  << "\"; commands: estimate, compare, plan, scale, sweep, paper, fit, validate, fit-stack, "
                     "models, gpus, db, bench\n";
        return 2;
      }
    }
    // --json asks for JSON errors too (fail()): a reader of stdout gets an object either way
    for (int i = 1; i < argc; ++i)
      if (std::string(argv[i]) == "--json") cli::set_json_errors(true);
    if (const Result<long> today = cli::today_override(); !today.ok()) return cli::fail(today.error());
    try {
      app.parse(argc, argv);
    } catch (const CLI::CallForHelp&) {
      std::cout << app.help();
      return 0;
    } catch (const CLI::CallForAllHelp&) {
      std::cout << app.help("", CLI::AppFormatMode::All);
      return 0;
    } catch (const CLI::CallForVersion&) {
      std::cout << "ftcost " << kVersion << "\n";
      return 0;
    } catch (const CLI::ParseError& e) {
      std::cerr << "ftcost: error: " << e.what() << "\n";
      std::cerr << "run `ftcost --help` (or `ftcost <command> --help`) for usage\n";
      return 2;
    }

    for (const auto& c : commands) {
      if (!c.app->parsed()) continue;
      if (c.uses_database && !cli::embedded_database_sound()) return 1;
      return c.run();
    }
    return 0;
  } catch (const std::exception& ex) {
    std::cerr << "ftcost: internal error: " << ex.what() << "\n";
    return 1;
  }
}

}  // namespace

// What a command printed reaches its reader, or the command fails: a full disk or a closed stdout is an
// error, not exit 0 with an empty file.
int main(int argc, char** argv) {
  ftcost::cli::capture_stdout();
  const int rc = run_command(argc, argv);
  auto flushed = ftcost::cli::flush_stdout();
  if (!flushed.ok()) {
    std::cerr << "ftcost: error: " << flushed.error().message << "\n";
    return rc != 0 ? rc : 2;
  }
  return rc;
}
