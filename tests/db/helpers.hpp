// Shared by the gpu-db validator tests: reading trees of files, the shipped database, generated fixtures.
#pragma once

#include "ftcost/calibration.hpp"
#include "ftcost/db_check.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace dbtest {

namespace fs = std::filesystem;
using ftcost::DbCheckProblem;
using ftcost::DbFiles;

inline const std::string kSource = FTCOST_SOURCE_DIR;
inline const std::string kDb = FTCOST_DB_DIR;
inline const std::string kFixtures = kSource + "/tests/db/fixtures";

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void write_file(const std::string& path, const std::string& text) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

// Every regular file under dir, as (prefix + "/" + relative path, content), sorted.
inline DbFiles tree(const std::string& dir, const std::string& prefix) {
  std::vector<std::string> rels;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) rels.push_back(e.path().lexically_relative(dir).generic_string());
  std::sort(rels.begin(), rels.end());
  DbFiles out;
  for (const auto& r : rels) out.emplace_back(prefix + "/" + r, read_file(dir + "/" + r));
  return out;
}

// The shipped gpu-db/, paths relative to it ("gpus/a40.json").
inline const DbFiles& shipped() {
  static const DbFiles files = [] {
    DbFiles all = tree(kDb, "gpu-db");
    return all;
  }();
  return files;
}

inline nlohmann::json shipped_json(const std::string& rel) {
  return nlohmann::json::parse(read_file(kDb + "/" + rel));
}

inline std::string dump(const nlohmann::json& j) { return j.dump(2) + "\n"; }

// The synthetic H100 SXM calibration the calibrator's tests maintain (tests/data/calibration/).
inline std::string synthetic_calibration() {
  return read_file(kSource + "/tests/data/calibration/h100-sxm-synthetic.json");
}

// The synthetic calibration with every GEMM row `factor` times faster (rates up, times down, `derived`
// recomputed): a consistent file whose measurements are above an H100's spec peak.
inline std::string scaled_calibration(double factor) {
  nlohmann::json doc = nlohmann::json::parse(synthetic_calibration());
  for (auto& row : doc["measurements"]["gemm"]) {
    for (const char* k : {"tflops_median", "tflops_p10", "tflops_p90"})
      row[k] = row[k].get<double>() * factor;
    if (row.contains("tflops_heuristic") && row["tflops_heuristic"].is_number())
      row["tflops_heuristic"] = row["tflops_heuristic"].get<double>() * factor;
    row["time_us_median"] = row["time_us_median"].get<double>() / factor;
  }
  auto cal = ftcost::parse_calibration_rederive(doc, "scaled");
  if (!cal.ok()) return "scaled_calibration failed: " + cal.error().to_string();
  return ftcost::to_json_text(cal.value());
}

inline const DbCheckProblem* find(const std::vector<DbCheckProblem>& ps, const std::string& file_suffix,
                                  const std::string& field, const std::string& message_part = "") {
  for (const auto& p : ps) {
    const bool file_ok =
        p.file.size() >= file_suffix.size() &&
        p.file.compare(p.file.size() - file_suffix.size(), file_suffix.size(), file_suffix) == 0;
    if (file_ok && p.field == field && p.message.find(message_part) != std::string::npos) return &p;
  }
  return nullptr;
}

inline std::string listing(const std::vector<DbCheckProblem>& ps) {
  std::string s;
  for (const auto& p : ps) s += p.to_string() + " [" + ftcost::errc_name(p.code) + "]\n";
  return s.empty() ? "(no problems)\n" : s;
}

}  // namespace dbtest
