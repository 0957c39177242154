// What the UI computes, on top of the core, with no UI code: the estimate for the current inputs,
// throughput and memory against batch size, every GPU x provider offer for the same job, and the
// files the user gave us (a Hugging Face config.json, calibrations) served to the core by name.
// The estimate comes both as the core's JSON (what `ftcost estimate --json` prints: the JSON panel, exports,
// the JS API) and typed (the JobEstimate whose JobAnswer every card, bar, table row and warning reads).
#pragma once

#include "ftcost/compare.hpp"
#include "ftcost/database.hpp"
#include "ftcost/estimate.hpp"
#include "ftcost/job.hpp"
#include "ftcost/json_util.hpp"
#include "ftcost/options.hpp"
#include "ftcost/plan.hpp"
#include "ftcost/scaling.hpp"
#include "ftcost/sweep.hpp"

#include <map>
#include <string>
#include <vector>

namespace ftcost::web {

// Names under which uploaded files are given to the core (they "look like paths" to resolve_request).
inline constexpr const char* kUploadedModelPrefix = "uploaded/";
inline constexpr const char* kYoursPrefix = "yours/";
inline constexpr const char* kUploadedDatasetPrefix = "dataset/";

using ftcost::CompareRow;
using ftcost::Sweep;
using ftcost::SweepPoint;

class Engine {
 public:
  explicit Engine(const Database& db = Database::embedded());

  const Database& db() const { return db_; }

  // Files the core may read by name (uploaded model configs, the user's calibrations).
  void put_file(const std::string& name, std::string text) { files_[name] = std::move(text); }
  void remove_file(const std::string& name) { files_.erase(name); }
  bool has_file(const std::string& name) const { return files_.count(name) > 0; }

  // The core's estimate for a request, as JSON: estimate_to_json, or {"error": {code, field, message}}.
  // Never throws. With `typed`, the JobEstimate the JSON was made from is stored there (untouched on an
  // error).
  json estimate(const Request& req, JobEstimate* typed = nullptr) const;

  // How far the request resolves (the inputs panel's defaults and which options apply, even when a value
  // is rejected).
  Resolution resolve_partial(const Request& req) const;

  // Throughput and memory for batch sizes from 1 to beyond the maximum (about `points` sizes, log-spaced
  // when the range is large). `req` is used as is except for "batch".
  Sweep sweep(const Request& req, int points = 36) const;

  // ftcost::compare_gpus with the files given to this page; empty when the request itself is invalid
  // (the estimate shows that error).
  std::vector<CompareRow> compare(const Request& req,
                                  const std::map<std::string, std::string>& calibration_for) const;

  // The plan search (`ftcost plan --json`, plan.hpp) over the job keys and the plan's constraint keys of
  // `all` (text values, as the CLI takes them), with the files given to this page. {"error": ...} when the
  // request or a constraint is invalid (the message names the flag). Never throws.
  json plan(const Request& all) const;

  // The job on 1, 2, 4, 8... GPUs of its GPU (`ftcost scale --json`, scaling.hpp), default counts.
  // {"error": ...} when the request is invalid. Never throws.
  json scaling(const Request& req) const;

  // Days since 1970-01-01 that price ages are counted from (the system clock, like the CLI).
  static long today_days();

  // The files given to this page, by name (what the core's calls above read; the JS API's too).
  FileReader reader() const;

 private:
  Result<Inputs> resolve(const Request& req) const;

  const Database& db_;
  std::map<std::string, std::string> files_;
};

using ftcost::cheapest_row;
using ftcost::compare_to_csv;

// CSV export of the estimate, flattened to "field,value" rows, as `ftcost estimate --csv` prints it.
inline std::string estimate_to_csv(const json& estimate) { return json_to_field_csv(estimate); }

}  // namespace ftcost::web
