#include "db_check_cmd.hpp"

#include "command.hpp"
#include "fileio.hpp"
#include "ftcost/database.hpp"
#include "ftcost/db_check.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <ctime>
#include <exception>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

namespace ftcost {

namespace {

namespace fs = std::filesystem;

// Files up to this size are read whole (so that the checker reports their exact size); larger ones are
// reported here without reading them.
constexpr std::uintmax_t kReadLimit = 64u * 1024u * 1024u;
constexpr std::size_t kMaxFiles = 20000;

struct Collected {
  DbFiles files;
  std::vector<DbCheckProblem> problems;  // files that could not be read
  bool whole_database = false;           // a folder with gpus/ in it was given
};

void read_one(const fs::path& p, const std::string& display, const DbCheckOptions& opt, Collected& c) {
  std::error_code ec;
  const std::uintmax_t size = fs::file_size(p, ec);
  if (ec) {
    c.problems.push_back({display, "(file)", "cannot read: " + ec.message(), Errc::io_error});
    return;
  }
  if (size > kReadLimit) {
    c.problems.push_back({display, "(file)",
                          "file is " + std::to_string(size) + " bytes; the limit is " +
                              std::to_string(opt.max_file_bytes) + " bytes",
                          Errc::too_large});
    return;
  }
  // Regular files only, opened without blocking (fileio.hpp): a FIFO swapped in is refused, not waited on.
  auto text = cli::read_regular_file(p.string(), static_cast<std::size_t>(kReadLimit));
  if (!text.ok()) {
    c.problems.push_back({display, "(file)", text.error().message, text.error().code});
    return;
  }
  c.files.emplace_back(display, std::move(text.value()));
}

bool hidden(const fs::path& p) {
  const std::string name = p.filename().string();
  return !name.empty() && name[0] == '.';
}

void collect(const std::string& arg, const DbCheckOptions& opt, Collected& c) {
  const fs::path root(arg);
  std::error_code ec;
  const fs::file_status st = fs::status(root, ec);
  if (ec || !fs::exists(st)) {
    c.problems.push_back({arg, "(file)", "no such file or folder", Errc::io_error});
    return;
  }
  if (fs::is_regular_file(st)) {
    read_one(root, arg, opt, c);
    return;
  }
  if (!fs::is_directory(st)) {
    c.problems.push_back({arg, "(file)", "not a regular file or folder", Errc::io_error});
    return;
  }
  // A folder with gpus/, prices/ and models/ is a whole database (e.g. a pull request's gpu-db/): it is
  // checked on its own. Anything less is checked against the default database.
  if (fs::is_directory(root / "gpus", ec) && fs::is_directory(root / "prices", ec) &&
      fs::is_directory(root / "models", ec))
    c.whole_database = true;
  std::string prefix = arg;
  while (prefix.size() > 1 && (prefix.back() == '/' || prefix.back() == '\\')) prefix.pop_back();
  std::vector<std::pair<std::string, fs::path>> found;  // display path, file
  fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec);
  if (ec) {
    c.problems.push_back({arg, "(file)", "cannot list the folder: " + ec.message(), Errc::io_error});
    return;
  }
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) {
      c.problems.push_back({arg, "(file)", "cannot list the folder: " + ec.message(), Errc::io_error});
      return;
    }
    const fs::path& p = it->path();
    if (hidden(p)) {
      if (it->is_directory(ec)) it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file(ec)) continue;
    const std::string display = prefix + "/" + p.lexically_relative(root).generic_string();
    // Outside the data folders only JSON is gpu-db's business (a README next to them is fine).
    if (p.extension() != ".json" && db_file_kind(display).empty()) continue;
    found.emplace_back(display, p);
    if (found.size() > kMaxFiles) {
      c.problems.push_back({arg, "(file)",
                            "more than " + std::to_string(kMaxFiles) + " files: is this a gpu-db folder?",
                            Errc::too_large});
      return;
    }
  }
  std::sort(found.begin(), found.end());
  for (const auto& [display, p] : found) read_one(p, display, opt, c);
}

// A folder given by its path relative to the working directory when it is below it, else absolute.
std::string display_dir(const std::string& dir) {
  std::error_code ec;
  const fs::path cwd = fs::current_path(ec);
  if (ec) return dir;
  const fs::path rel = fs::path(dir).lexically_normal().lexically_relative(cwd);
  const std::string r = rel.generic_string();
  if (r.empty() || r.rfind("..", 0) == 0) return fs::path(dir).lexically_normal().generic_string();
  return r;
}

std::string default_db_dir() {
#ifdef FTCOST_DB_DIR
  std::error_code ec;
  if (fs::is_directory(fs::path(FTCOST_DB_DIR) / "gpus", ec)) return FTCOST_DB_DIR;
#endif
  return "";
}

}  // namespace

int run_db_check(const std::vector<std::string>& paths, bool as_json, std::ostream& out, std::ostream& err) {
  try {
    DbCheckOptions opt;
    opt.today_days = static_cast<long>(std::time(nullptr) / 86400);

    Collected checked;
    DbFiles context;
    std::string what;
    const std::string db_dir = default_db_dir();
    if (paths.empty()) {
      if (!db_dir.empty()) {
        const std::string shown = display_dir(db_dir);
        collect(shown, opt, checked);
        what = shown;
      } else {
        for (auto& f : Database::embedded_files())
          checked.files.emplace_back("gpu-db/" + f.first, std::move(f.second));
        what = "the database embedded in this binary";
      }
    } else {
      for (const auto& p : paths) collect(p, opt, checked);
      // Duplicate arguments (a folder and a file in it): check each file once.
      std::vector<std::string> seen;
      DbFiles unique;
      for (auto& f : checked.files) {
        std::error_code ec;
        const std::string key = fs::weakly_canonical(fs::path(f.first), ec).generic_string();
        if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
        seen.push_back(key);
        unique.push_back(std::move(f));
      }
      checked.files = std::move(unique);
      what = std::to_string(paths.size()) + (paths.size() == 1 ? " path" : " paths");
      if (!checked.whole_database) {
        if (!db_dir.empty()) {
          Collected ctx;
          collect(db_dir, opt, ctx);
          context = std::move(ctx.files);
          what += " against " + display_dir(db_dir);
        } else {
          context = Database::embedded_files();
          what += " against the embedded database";
        }
      }
    }

    DbCheckResult r = check_db_files(checked.files, context, opt);
    std::vector<DbCheckProblem> problems = checked.problems;
    for (auto& p : problems) {
      p.file = sanitize_utf8(p.file);
      p.message = sanitize_utf8(p.message);
    }
    problems.insert(problems.end(), r.problems.begin(), r.problems.end());
    std::size_t files_with_problems = 0;
    {
      std::vector<std::string> files;
      for (const auto& p : problems)
        if (std::find(files.begin(), files.end(), p.file) == files.end()) files.push_back(p.file);
      files_with_problems = files.size();
    }
    std::string kinds;
    for (const auto& [kind, n] : r.files_by_kind)
      kinds += (kinds.empty() ? "" : ", ") + std::to_string(n) + " " + kind;
    const std::size_t files = r.files_checked + checked.problems.size();

    if (as_json) {
      nlohmann::json j;
      j["ok"] = problems.empty();
      j["checked"] = sanitize_utf8(what);
      j["files_checked"] = files;
      j["files_by_kind"] = r.files_by_kind;
      j["problems"] = nlohmann::json::array();
      for (const auto& p : problems)
        j["problems"].push_back(
            {{"file", p.file}, {"field", p.field}, {"message", p.message}, {"code", errc_name(p.code)}});
      j["review"] = nlohmann::json::array();
      for (const auto& p : r.review)
        j["review"].push_back({{"file", p.file}, {"field", p.field}, {"message", p.message}});
      out << j.dump(2) << "\n";
    } else {
      for (const auto& p : problems) out << p.to_string() << "\n";
      for (const auto& p : r.review) out << "review: " << p.to_string() << "\n";
    }
    err << "ftcost db check: " << sanitize_utf8(what) << ": " << files << " file" << (files == 1 ? "" : "s")
        << (kinds.empty() ? "" : " (" + kinds + ")") << ": ";
    if (problems.empty()) {
      err << "no problems\n";
    } else {
      err << problems.size() << " problem" << (problems.size() == 1 ? "" : "s") << " in "
          << files_with_problems << " file" << (files_with_problems == 1 ? "" : "s") << "\n";
    }
    if (files == 0) {
      err << "ftcost db check: no files to check\n";
      return 2;
    }
    return problems.empty() ? 0 : 2;
  } catch (const std::exception& ex) {
    err << "ftcost: internal error in db check: " << ex.what() << "\n";
    return 1;
  }
}

int run_db_check(const std::vector<std::string>& paths, bool as_json) {
  return run_db_check(paths, as_json, std::cout, std::cerr);
}

}  // namespace ftcost

namespace ftcost::cli {

// `ftcost db check`; runs on files even when the embedded database has problems
Command add_db(CLI::App& app) {
  struct State {
    std::vector<std::string> paths;
    bool as_json = false;
  };
  auto s = std::make_shared<State>();
  auto* db_cmd = app.add_subcommand("db", "The GPU database (gpu-db/)");
  db_cmd->require_subcommand(1);
  auto* db_check = db_cmd->add_subcommand("check",
                                          "Validate gpu-db files (schema, units, physical plausibility, "
                                          "ids, sources, calibrations); exit 2 on any problem");
  db_check->add_option(
      "paths", s->paths,
      "files or folders to check (default: the repository's gpu-db/, else the built-in database)");
  db_check->add_flag("--json", s->as_json, "JSON output");
  Command c{db_cmd, [s, db_check] { return db_check->parsed() ? run_db_check(s->paths, s->as_json) : 0; }};
  c.uses_database = false;
  return c;
}

}  // namespace ftcost::cli
