// `ftcost db check`: the validator of gpu-db/ (GPU spec sheets, prices, model presets, datasets,
// stack profiles, calibrations, JSON Schema files). It runs the core's own loaders (the binding check)
// and adds what a contributor can get wrong that the loaders accept or cannot see alone:
//   - the file format: required keys, types, no unknown keys (units are in key names, so a key with
//     another unit, e.g. memory_bandwidth_tbps, is reported as a wrong unit), duplicate JSON keys;
//   - physical plausibility per architecture (bandwidth, memory, peaks, clocks, power within bounds
//     for Volta ... Blackwell, CDNA 2/3/4, Gaudi 2/3; dense peaks not sparsity-doubled, checked
//     against SMs x clock; FP8/BF16 only on hardware that has it);
//   - sources present; where sources disagree, the chosen value and why (`chosen_values`);
//   - ids: pattern, file name = id, unique per kind; references (an offer's gpu_id, the GPU folder
//     of a calibration) exist;
//   - calibrations: the calibration loader, measurements not above the hardware ceiling (those above the
//     datasheet's peak are listed in `review`, not rejected), the device
//     (name, form factor, memory, SMs, compute capability) matching the GPU file it is filed under.
// Hostile input (huge files, deep nesting, invalid UTF-8, syntax errors) gives a problem, never a
// crash; every problem names the file and the field (a JSON path such as "offers[3].date", or
// "(file)" for the file as a whole).
//
// Pure C++17, no I/O: files come in as (path, content) pairs. A file's kind comes from the folder it
// is in (gpus/, prices/, models/, datasets/, stacks/, schema/, calibrations/<gpu-id>/), so paths may
// be relative to gpu-db/ ("gpus/a40.json") or longer ("/x/gpu-db/gpus/a40.json").
#pragma once

#include "ftcost/error.hpp"

#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace ftcost {

struct DbCheckProblem {
  std::string file;     // the path as given
  std::string field;    // JSON path, "(file)" for the whole file, "(top level)" for the root value
  std::string message;  // what is wrong and what is expected
  Errc code = Errc::invalid_value;

  std::string to_string() const;  // "file: field: message"
};

struct DbCheckOptions {
  std::size_t max_file_bytes = std::size_t{8} * 1024 * 1024;
  int max_depth = 64;
  long today_days = -1;  // days since 1970-01-01; when >= 0, price dates after today are problems
  std::size_t max_problems_per_file = 50;
};

struct DbCheckResult {
  std::vector<DbCheckProblem> problems;
  std::size_t files_checked = 0;
  std::map<std::string, std::size_t> files_by_kind;  // "gpu", "prices", "model", ... -> checked files
  // Accepted but worth a look: calibration measurements above the GPU file's datasheet figure (yet below
  // the hardware ceiling computed from SMs x clock; see check_against_spec). Not problems: ok() ignores them.
  std::vector<DbCheckProblem> review;
  bool ok() const { return problems.empty(); }
};

using DbFiles = std::vector<std::pair<std::string, std::string>>;

// Checks `files`. `context` is the database they belong to (e.g. the shipped gpu-db/ when a single new
// file is checked): it is used for cross-references (the GPU a price or a calibration refers to, ids
// that must stay unique) and its own problems are not reported. A context file with the same
// gpu-db-relative path as a checked file is replaced by it.
DbCheckResult check_db_files(const DbFiles& files, const DbFiles& context = {},
                             const DbCheckOptions& options = {});

// "gpus/a40.json" for ".../gpus/a40.json", "calibrations/a40/x.json" for ".../calibrations/a40/x.json";
// "" when the path is not under a folder of gpu-db/.
std::string db_relative_path(const std::string& path);

// Kind of a gpu-db file from its path: "gpu", "prices", "model", "dataset", "stack", "calibration",
// "schema", or "" when the path is in no known folder.
std::string db_file_kind(const std::string& path);

// The keys the checker requires / allows in one object of a file kind ("gpu", "gpu.dense_tflops",
// "gpu.interconnect", "gpu.chosen_values[]", "prices", "prices.offers[]", "model", "model.published",
// "dataset", "dataset.length_tokens"). gpu-db/schema/*.schema.json document the same (tested).
std::vector<std::string> db_required_keys(const std::string& object_kind);
std::vector<std::string> db_allowed_keys(const std::string& object_kind);

// The text with every invalid UTF-8 byte written as \xNN and control characters as \uNNNN: safe to
// print and to put into JSON.
std::string sanitize_utf8(const std::string& text);

}  // namespace ftcost
