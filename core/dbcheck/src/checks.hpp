// Private to the gpu-db checker (ftcost_dbcheck): what the rule families share. One file per family:
//   text.cpp           text helpers, JSON paths in raw text, parsing (size, UTF-8, depth, syntax, duplicate
//   keys) keys.cpp           keys, types and units of each file format; typed field access; ids and sources
//   gpus.cpp           GPU spec sheets: interconnect, sources, chosen values, plausibility per architecture
//   prices.cpp         price files and their offers
//   models.cpp         model presets (the model loader, published parameter counts)
//   datasets.cpp       dataset presets (length statistics, quantiles)
//   stacks.cpp         stack profiles, node files, JSON Schema files
//   calibrations.cpp   calibration files and the device they measured against the GPU file they are filed
//   under runs.cpp           contributed training runs (runs/<gpu-id>/) cross_refs.cpp     checks across
//   files: unique ids and names, references, the database as the calculator loads it check.cpp
//   check_db_files: which file is which kind, the order of the checks, the result
#pragma once

#include "ftcost/calibration.hpp"
#include "ftcost/database.hpp"
#include "ftcost/db_check.hpp"
#include "ftcost/gpu.hpp"
#include "ftcost/json_util.hpp"
#include "ftcost/suggest.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace ftcost::dbcheck {

constexpr const char* kWholeFile = "(file)";
constexpr const char* kTopLevel = "(top level)";

// ------------------------------------------------------------------------------ text (text.cpp)

// Length of the valid UTF-8 sequence starting at s[i], or 0 when the bytes there are not valid UTF-8.
std::size_t utf8_sequence(const std::string& s, std::size_t i);
std::size_t first_invalid_utf8(const std::string& s);
std::string hex_byte(unsigned char c);
std::string line_col(const std::string& s, std::size_t offset);
std::string clip(const std::string& s, std::size_t max_chars = 80);
std::string in_quotes(const std::string& s);
double digits_value(const std::string& s);
std::string fmt_num(double v);
std::string lower(std::string s);
bool contains(const std::string& hay, const std::string& needle);
bool ends_with(const std::string& s, const std::string& suffix);
bool id_like(const std::string& s, const std::string& extra);
std::vector<std::string> split_path(const std::string& path);
std::string basename_of(const std::string& path);
std::string stem_of(const std::string& path);
std::string render_path(const std::vector<std::string>& parts);
std::string path_at(const std::string& text, std::size_t offset);

// ------------------------------------------------------------------------------ problem lists

struct Sink {
  std::string file;
  std::vector<DbCheckProblem> problems;
  std::size_t cap = 50;
  bool capped = false;

  void add(const std::string& field, Errc code, const std::string& message) {
    if (problems.size() >= cap) {
      if (!capped) {
        problems.push_back({file, kWholeFile,
                            "more than " + std::to_string(cap) + " problems; the rest are not listed",
                            Errc::invalid_value});
        capped = true;
      }
      return;
    }
    problems.push_back({file, field.empty() ? std::string(kTopLevel) : field, message, code});
  }
  bool has_field(const std::string& field) const {
    return std::any_of(problems.begin(), problems.end(),
                       [&field](const DbCheckProblem& p) { return p.field == field; });
  }
  // An error from a core loader: fields there may carry the source name; messages may end with it.
  void add_loader_error(const Error& e) {
    std::string field = e.field;
    if (field == file) field = kTopLevel;
    if (field.size() > file.size() + 2 && field.compare(0, file.size() + 2, file + ": ") == 0)
      field = field.substr(file.size() + 2);
    if (field.empty()) field = kTopLevel;
    std::string msg = e.message;
    const std::string suffix = " (in " + file + ")";
    if (ends_with(msg, suffix)) msg = msg.substr(0, msg.size() - suffix.size());
    if (has_field(field)) return;  // already reported, with more detail
    add(field, e.code, msg);
  }
};

// Parses a file's text into `out`; false (with problems in `sink`) when it cannot be used at all.
bool parse_text(const std::string& text, const DbCheckOptions& opt, Sink& sink, json& out);

// ------------------------------------------------------------------- keys, types, units (keys.cpp)

bool is_whole(const json& v);
// Checks presence, type and unknown keys of one object against the format's key list for `kind`
// ("gpu", "prices.offers[]", ...). Returns false when the object itself is not an object.
bool check_keys(const json& obj, const std::string& path, const std::string& kind, const std::string& format,
                Sink& sink);
// Typed access after check_keys: nullptr / NaN / "" when absent, null or of another type.
const json* member(const json& obj, const std::string& key);
const json* find_field(const json& obj, const char* key);
double num_field(const json& obj, const char* key);
std::string str_field(const json& obj, const char* key);
inline bool have(double v) { return !std::isnan(v); }
void check_schema_value(const json& doc, const std::string& expected, Sink& sink);
void check_id(const json& doc, const std::string& file, const std::string& extra_chars, Sink& sink);
void check_nonempty_text(const json& obj, const char* key, const std::string& path, Sink& sink,
                         std::size_t min_len = 1);
// Empty when `raw` is a usable source (at least 8 characters, not a placeholder), else what is wrong.
std::string source_problem(const std::string& raw);

// ------------------------------------------------------------------------------ one file per kind

void check_gpu_doc(const json& doc, const std::string& file, Sink& sink);  // gpus.cpp
void check_prices_doc(const json& doc, const std::string& file, const DbCheckOptions& opt,
                      Sink& sink);                                             // prices.cpp
void check_model_doc(const json& doc, const std::string& file, Sink& sink);    // models.cpp
void check_dataset_doc(const json& doc, const std::string& file, Sink& sink);  // datasets.cpp
void check_schema_doc(const json& doc, const std::string& file, Sink& sink);   // stacks.cpp

// ------------------------------------------------------------------------------- files being checked

struct Entry {
  std::string path;
  std::string rel;
  std::string kind;
  const std::string* content = nullptr;
  bool checked = false;
  Sink sink;
  json doc;
  bool parsed = false;
  std::string id;  // doc["id"] when a string
  // calibrations
  std::string cal_gpu;
  bool cal_ok = false;
  Calibration cal;
  std::vector<std::string> review;  // values above the datasheet (accepted): "field: message"
};

const char* const kFolders[] = {"gpus",  "prices", "models",       "datasets", "stacks",
                                "nodes", "schema", "calibrations", "runs"};

// A GPU file as the calibrations and nodes filed against it see it.
struct GpuRef {
  std::string file;
  GpuSpec spec;
  std::string form_factor;
  bool spec_ok = false;
};

// Per file (called by check.cpp in the order of the kinds' rule families).
void check_stack_entry(Entry& e);        // stacks.cpp: a stack profile or a thin alias of one
void check_node_entry(Entry& e);         // stacks.cpp
void check_calibration_entry(Entry& e);  // calibrations.cpp: the file alone

// check.cpp: what check_db_files does.
DbCheckResult check_files(const DbFiles& files, const DbFiles& context, const DbCheckOptions& options);

// Across files.
void check_calibration_refs(Entry& e, const std::map<std::string, GpuRef>& gpu_refs,
                            const std::set<std::string>& gpu_files,
                            std::map<std::string, const Entry*>& first_cal);  // calibrations.cpp
// gpus.cpp: memory bus against memory type; a variant (variant_of) against its parent's spec.
void check_gpu_variant(Entry& e, const std::map<std::string, GpuRef>& gpu_refs,
                       const std::set<std::string>& gpu_files);
void check_cross_refs(std::vector<Entry>& entries);                                 // cross_refs.cpp
void check_database_loads(std::vector<Entry>& entries);                             // cross_refs.cpp
void check_run_entries(std::vector<Entry>& entries, const Database& db);            // runs.cpp
void check_stack_model_types(Entry& e, const Database& db);                         // stacks.cpp
void check_stack_software_ranges(std::vector<Entry>& entries, const Database& db);  // stacks.cpp

}  // namespace ftcost::dbcheck
