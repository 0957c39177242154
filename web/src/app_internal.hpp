// Internal to the calculator's App (app.hpp): what its sources share beyond the class.
#pragma once

#include "app.hpp"
#include "calibration_check.hpp"

#include <string>

namespace ftcost::web {

// The browser's storage keys (Host::load / Host::save).
inline constexpr const char* kStoreCalibrations = "ftcost.calibrations";
inline constexpr const char* kStoreModelConfig = "ftcost.model_config";
inline constexpr const char* kStoreDataset = "ftcost.dataset_file";

// A calibration entry from an accepted check: what the file says, named and assigned to a GPU, dated today.
YourCalibration calibration_entry(const CalibrationCheck& chk, const std::string& name,
                                  const std::string& gpu, const std::string& text);

}  // namespace ftcost::web
