// Checking a calibration file the user gives the calculator, with the same loader as the CLI
// (core/spec/include/ftcost/calibration.hpp), then against the spec sheet of the GPU it is for.
#pragma once

#include "ftcost/database.hpp"

#include <string>

namespace ftcost::web {

struct CalibrationCheck {
  bool accepted = false;
  std::string field;          // where the problem is (JSON path), when rejected
  std::string message;        // the core's message (names the field), or a summary when accepted
  std::string device_name;    // from the file's device section
  std::string suggested_gpu;  // the database GPU this device looks like ("" when unsure)
  // when accepted (ftcost/calibration_share.hpp):
  std::string fingerprint;  // 16 hex digits of the compact form
  std::string
      link;  // the compact form, base64url, for the URL; "" when longer than kLinkCalMaxChars (state.hpp)
  std::string flags;  // "synthetic (...), partial (...)" or ""
};

// Validates `text` (named `source` in messages). `gpu_id`: the GPU it is for; "" = guess from the device
// name and memory size. When a GPU is known, measurements above its spec are rejected.
CalibrationCheck check_calibration(const std::string& text, const std::string& source, const Database& db,
                                   const std::string& gpu_id);

// The database GPU whose name best matches a CUDA device name ("NVIDIA A100-SXM4-80GB", ...); "" if none.
std::string guess_gpu(const std::string& device_name, double memory_gib, const Database& db);

}  // namespace ftcost::web
