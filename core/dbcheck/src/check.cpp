// gpu-db checker: check_db_files (see db_check.hpp for what it checks and why). Which file is which kind, the
// per-file checks of each kind's rule family, the checks across files, and the result.
#include "checks.hpp"
#include "ftcost/prices.hpp"

#include <cstdio>
#include <set>
#include <utility>

namespace ftcost {

std::string DbCheckProblem::to_string() const { return file + ": " + field + ": " + message; }

using dbcheck::hex_byte;
using dbcheck::split_path;
using dbcheck::utf8_sequence;

std::string db_relative_path(const std::string& path) {
  const auto parts = split_path(path);
  if (parts.size() >= 3 && parts[parts.size() - 3] == "calibrations")
    return "calibrations/" + parts[parts.size() - 2] + "/" + parts.back();
  if (parts.size() >= 3 && parts[parts.size() - 3] == "runs")
    return "runs/" + parts[parts.size() - 2] + "/" + parts.back();
  if (parts.size() >= 2) {
    const std::string& folder = parts[parts.size() - 2];
    for (const char* f : dbcheck::kFolders)
      if (folder == f) return folder + "/" + parts.back();
  }
  return "";
}

std::string db_file_kind(const std::string& path) {
  const std::string rel = db_relative_path(path);
  if (rel.empty()) return "";
  const std::string folder = rel.substr(0, rel.find('/'));
  if (folder == "gpus") return "gpu";
  if (folder == "prices") return "prices";
  if (folder == "models") return "model";
  if (folder == "datasets") return "dataset";
  if (folder == "stacks") return "stack";
  if (folder == "nodes") return "node";
  if (folder == "schema") return "schema";
  if (folder == "calibrations") return rel.find('/', 13) != std::string::npos ? "calibration" : "";
  if (folder == "runs") return rel.find('/', 5) != std::string::npos ? "run" : "";
  return "";
}

std::string sanitize_utf8(const std::string& text) {
  const std::string& s = text;
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = utf8_sequence(s, i);
    const auto c = static_cast<unsigned char>(s[i]);
    if (n == 0) {
      out += hex_byte(c);
      ++i;
    } else if (n == 1 && (c < 0x20 || c == 0x7F)) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04X", static_cast<unsigned>(c));
      out += buf;
      ++i;
    } else {
      out.append(s, i, n);
      i += n;
    }
  }
  return out;
}

}  // namespace ftcost

namespace ftcost::dbcheck {

namespace {

// The files as entries: the context first (so that a checked file that repeats a context id is the one
// reported), without those a checked file replaces; `first_checked` is the index of the first checked file.
std::vector<Entry> collect_entries(const DbFiles& files, const DbFiles& context, std::size_t& first_checked) {
  std::vector<Entry> entries;
  std::set<std::string> checked_rels;
  for (const auto& f : files) {
    const std::string rel = db_relative_path(f.first);
    if (!rel.empty()) checked_rels.insert(rel);
  }
  for (const auto& f : context) {
    const std::string rel = db_relative_path(f.first);
    if (rel.empty() || checked_rels.count(rel) != 0) continue;
    Entry e;
    e.path = f.first;
    e.rel = rel;
    e.content = &f.second;
    entries.push_back(std::move(e));
  }
  first_checked = entries.size();
  for (const auto& f : files) {
    Entry e;
    e.path = f.first;
    e.rel = db_relative_path(f.first);
    e.content = &f.second;
    e.checked = true;
    entries.push_back(std::move(e));
  }
  return entries;
}

// The file is in a folder of gpu-db/ and is a .json file; a problem and false otherwise.
bool check_placement(Entry& e) {
  if (e.kind.empty()) {
    const auto parts = split_path(e.path);
    const bool in_cal_root = parts.size() >= 2 && parts[parts.size() - 2] == "calibrations";
    const bool in_run_root = parts.size() >= 2 && parts[parts.size() - 2] == "runs";
    e.sink.add(kWholeFile, Errc::invalid_value,
               in_cal_root ? "calibrations go in calibrations/<gpu-id>/, the folder of the GPU they measure"
               : in_run_root
                   ? "runs go in runs/<gpu-id>/, the folder of the GPU they ran on"
                   : "not in a folder of gpu-db/ (gpus, prices, models, datasets, stacks, nodes, schema, "
                     "calibrations/<gpu-id>, runs/<gpu-id>)");
    return false;
  }
  if (!ends_with(e.path, ".json")) {
    e.sink.add(kWholeFile, Errc::invalid_value,
               "only .json files belong in " + e.rel.substr(0, e.rel.rfind('/') + 1));
    return false;
  }
  return true;
}

// The rule family of the file's kind, on the file alone (runs need the database: check_run_entries).
void check_file(Entry& e, const DbCheckOptions& options) {
  if (e.kind == "gpu") {
    check_gpu_doc(e.doc, e.path, e.sink);
    auto g = parse_gpu(e.doc, e.path);
    if (!g.ok()) e.sink.add_loader_error(g.error());
  } else if (e.kind == "prices") {
    check_prices_doc(e.doc, e.path, options, e.sink);
    auto p = parse_prices(e.doc, e.path);
    if (!p.ok()) e.sink.add_loader_error(p.error());
  } else if (e.kind == "model") {
    check_model_doc(e.doc, e.path, e.sink);
  } else if (e.kind == "dataset") {
    check_dataset_doc(e.doc, e.path, e.sink);
  } else if (e.kind == "stack") {
    check_stack_entry(e);
  } else if (e.kind == "node") {
    check_node_entry(e);
  } else if (e.kind == "schema") {
    check_schema_doc(e.doc, e.path, e.sink);
  } else if (e.kind == "calibration") {
    check_calibration_entry(e);
  }
}

// The problems and review notes of the checked files (not the context's), made safe to print.
void collect_result(std::vector<Entry>& entries, std::size_t first_checked, DbCheckResult& result) {
  for (std::size_t i = first_checked; i < entries.size(); ++i) {
    for (auto& p : entries[i].sink.problems) {
      p.file = sanitize_utf8(p.file);
      p.field = sanitize_utf8(p.field);
      p.message = sanitize_utf8(p.message);
      result.problems.push_back(std::move(p));
    }
    for (const auto& r : entries[i].review) {
      const std::size_t colon = r.find(": ");
      DbCheckProblem p;
      p.file = sanitize_utf8(entries[i].path);
      p.field = colon == std::string::npos ? std::string(kTopLevel) : sanitize_utf8(r.substr(0, colon));
      p.message = sanitize_utf8(colon == std::string::npos ? r : r.substr(colon + 2));
      p.code = Errc::out_of_range;
      result.review.push_back(std::move(p));
    }
  }
}

}  // namespace

DbCheckResult check_files(const DbFiles& files, const DbFiles& context, const DbCheckOptions& options) {
  std::size_t first_checked = 0;
  std::vector<Entry> entries = collect_entries(files, context, first_checked);
  DbCheckResult result;
  for (Entry& e : entries) {
    e.sink.file = e.path;
    e.sink.cap = options.max_problems_per_file;
    e.kind = db_file_kind(e.path);
    if (e.checked) {
      ++result.files_checked;
      ++result.files_by_kind[e.kind.empty() ? "other" : e.kind];
    }
    if (!check_placement(e)) continue;
    if (!parse_text(*e.content, options, e.sink, e.doc)) continue;
    e.parsed = true;
    if (e.doc.is_object()) {
      const json* id = member(e.doc, "id");
      if (id && id->is_string()) e.id = id->get<std::string>();
    }
    check_file(e, options);
  }
  check_cross_refs(entries);
  check_database_loads(entries);
  collect_result(entries, first_checked, result);
  return result;
}

}  // namespace ftcost::dbcheck

namespace ftcost {

DbCheckResult check_db_files(const DbFiles& files, const DbFiles& context, const DbCheckOptions& options) {
  return dbcheck::check_files(files, context, options);
}

}  // namespace ftcost
