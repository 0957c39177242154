#include "command.hpp"

#include "fileio.hpp"
#include "format.hpp"
#include "ftcost/database.hpp"
#include "ftcost/options.hpp"
#include "ftcost/prices.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <memory>

namespace ftcost::cli {

namespace {
bool g_json_errors = false;
}  // namespace

void set_json_errors(bool on) { g_json_errors = on; }

int fail(const Error& e) {
  if (g_json_errors) {
    // the JS API's error object (core/app/src/api.cpp error_json), so a --json reader parses one shape
    print_json(
        json{{"error", {{"code", errc_name(e.code)}, {"field", e.field}, {"message", e.to_string()}}}});
    return e.exit_code();
  }
  std::cerr << "ftcost: error: " << printable(e.to_string()) << "\n";
  return e.exit_code();
}

void print_json(const json& j) { std::cout << j.dump(2) << "\n"; }

Result<std::string> read_input_file(const std::string& path) { return read_regular_file(path); }

Result<long> today_override() {
  const char* v = std::getenv("FTCOST_TODAY");
  if (v == nullptr || *v == '\0') return -1L;
  return parse_date_days(v, "FTCOST_TODAY");
}

long today_days() {
  const Result<long> o = today_override();
  if (o.ok() && o.value() >= 0) return o.value();
  return static_cast<long>(std::time(nullptr) / 86400);
}

CLI::Validator number_in(double lo, double hi, const std::string& what) {
  return CLI::Validator(
      [lo, hi, what](std::string& s) -> std::string {
        char* end = nullptr;
        double v = std::strtod(s.c_str(), &end);
        // decimal notation only: strtod also takes hex ("0x10"), "inf" and "nan"
        const bool plain = s.find_first_not_of("0123456789.eE+-") == std::string::npos;
        if (s.empty() || !plain || end == nullptr || *end != '\0' || !std::isfinite(v))
          return "must be a number, got \"" + s + "\"";
        if (v < lo || v > hi) return "must be " + what + ", got " + s;
        return std::string();
      },
      what);
}

void add_job_options(CLI::App* cmd, Request& into, const std::vector<std::string>& skip) {
  // The help text lists the dataset and stack ids from the embedded files' names: registering the options
  // parses no database (0.02 s a start in Release, most of a second at -O0 under sanitizers), so --help and a
  // bad flag answer without it.
  for (const auto& o : job_options()) {
    const std::string key = o.key;
    if (std::find(skip.begin(), skip.end(), key) != skip.end()) continue;
    cmd->add_option_function<std::string>(
        o.flag(), [&into, key](const std::string& v) { into[key] = v; },
        option_help_text(
            o, option_help_lists_ids(o) ? Database::embedded_ids(o.id_list) : std::vector<std::string>{}));
  }
}

Command add_list_command(CLI::App& app, const std::string& name, const std::string& help,
                         std::string (*table)(const Database& db), json (*list)(const Database& db)) {
  auto as_json = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand(name, help);
  cmd->add_flag("--json", *as_json, "JSON output");
  return {cmd, [as_json, table, list] {
            const Database& db = Database::embedded();
            if (*as_json)
              print_json(list(db));
            else
              std::cout << table(db);
            return 0;
          }};
}

Status no_empty_paths(const CLI::App& cmd,
                      const std::vector<std::pair<std::string, const std::string*>>& flags) {
  for (const auto& [flag, value] : flags) {
    if (cmd.count(flag) == 0 || !value->empty()) continue;
    return make_error(
        Errc::invalid_value, flag,
        flag == "--dir" ? "needs a folder, got an empty value" : "needs a file name, got an empty value");
  }
  return Ok{};
}

std::string gib(double bytes) { return fixed(bytes / kGiB, 2); }

bool embedded_database_sound() {
  const Database& db = Database::embedded();
  for (const auto& p : db.problems())
    std::cerr << "ftcost: internal database problem: " << p.file << ": " << p.error.to_string() << "\n";
  return db.problems().empty();
}

}  // namespace ftcost::cli
