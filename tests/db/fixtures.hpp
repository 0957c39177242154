// Fixtures generated at test time: too large to commit (10 MB), or derived from formats other helpers
// maintain (the synthetic calibration of tests/data/calibration/), so that they follow those formats.
#pragma once

#include "helpers.hpp"

#include <string>
#include <vector>

namespace dbtest {

struct Generated {
  std::string name;  // what it is
  std::string file;  // path, in a gpu-db-like tree
  std::string content;
  std::string field;  // the problem it must give
  std::string code;
  std::string message;  // a piece of the message
};

inline std::vector<Generated> generated_fixtures() {
  std::vector<Generated> out;
  {
    nlohmann::json g = shipped_json("gpus/a40.json");
    g["notes"] = std::string(10u * 1024u * 1024u, 'x');
    std::string text = dump(g);
    out.push_back({"10 MB file", "gen/gpus/a40.json", text, "(file)", "too_large",
                   "file is " + std::to_string(text.size()) + " bytes; the limit is 8388608 bytes"});
  }
  {
    std::string text =
        "{\"id\": \"a40\", \"notes\": " + std::string(100000, '[') + std::string(100000, ']') + "}";
    out.push_back({"100000 levels of nesting", "gen/gpus/a40.json", text, "notes[0][0][0][0][0]...",
                   "too_large", "nested deeper than 64 levels"});
  }
  out.push_back({"calibration above the GPU's peak", "gen/calibrations/h100-sxm5-80gb/above-peak.json",
                 scaled_calibration(3.0), "measurements.gemm[2].tflops_median", "out_of_range",
                 "above the hardware ceiling"});
  out.push_back({"calibration filed under another GPU", "gen/calibrations/a40/h100.json",
                 synthetic_calibration(), "device.name", "invalid_value",
                 "does not match the GPU file it is filed under (gpus/a40.json)"});
  return out;
}

}  // namespace dbtest
