// A calibration as the estimator sees it: what kind of file it is (synthetic, partial), a compact form that
// fits in a link, and a fingerprint of that form. Used by `ftcost estimate --calibration` (text output) and
// the calculator (badge, link, Export). Pure C++17.
//
// What the estimator reads from a calibration (core/predict/src/throughput.cpp, estimate.cpp,
// parallel_plan.cpp, options.cpp): derived.gemm_efficiency (from every GEMM row),
// derived.memory_bandwidth_gbps (the best copy/triad row), derived.nf4_dequant_gbps (the largest fused NF4
// row), derived.launch_overhead_us (the "async" launch rows), the GEMM rows' p10/p90 spread (the range),
// measurements.collectives, and device.memory_bytes (a warning); check_against_spec reads the device block.
// The compact form keeps exactly those rows and the device block, so a calibration rebuilt from it gives the
// same estimates.
#pragma once

#include "ftcost/calibration.hpp"
#include "ftcost/error.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace ftcost {

// Decided from the file's own fields only:
//   synthetic  meta.notes or device.name says "synthetic" or "fixture"; the tool is not ftcost-calibrate;
//              device.uuid_hash is a placeholder (one hex digit repeated)
//   partial    meta.partial (interrupted); meta.only (some benchmark families only); mode "smoke" (tiny
//              sizes); a family the estimator uses has no rows (bf16 GEMMs, copy/triad bandwidth, fused
//              NF4 dequantization, async launches): those parts fall back to the spec sheet
struct CalibrationFlags {
  bool synthetic = false;
  bool partial = false;
  std::vector<std::string> reasons;  // one short phrase per finding ("meta.notes says \"synthetic ...\"")
};
CalibrationFlags calibration_flags(const Calibration& cal);
// "synthetic (reason; reason), partial (reason)", or "" when neither.
std::string calibration_flags_text(const CalibrationFlags& f);

// The compact form ("ftcost.calibration-link/1"): meta (no command line, no notes but a synthetic one),
// device, the rows listed above as columns ({"keys": [...], "rows": [[...], ...]}), no conditions.
nlohmann::json calibration_compact(const Calibration& cal);
// Rebuilds a full calibration (schema 2, derived recomputed) from the compact form; errors name the field.
Result<Calibration> calibration_from_compact(const nlohmann::json& compact, const std::string& source_name);

// 16 hex digits: FNV-1a 64 of the compact form's JSON text (nlohmann's dump: sorted keys, numbers that
// round-trip). Two files with the same fingerprint give the same estimates.
std::string calibration_fingerprint(const Calibration& cal);

std::string base64url_encode(const std::string& bytes);  // RFC 4648 section 5, no padding
Result<std::string> base64url_decode(const std::string& text, const std::string& field);

}  // namespace ftcost
