// Writes the synthetic calibration fixture and recomputes `derived` of a hand-edited calibration:
//   calibration_fixture_tool --write OUT          (tests/data/calibration/h100-sxm-synthetic.json)
//   calibration_fixture_tool --rederive IN OUT
// The fixture's numbers are plausible for an H100 SXM but made up: test data, not a measurement.
#include "ftcost/calibration.hpp"
#include "synthetic.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "--write" && argc == 3) {
    std::ofstream(argv[2]) << ftcost::to_json_text(ftcost::test::synthetic_calibration());
    return 0;
  }
  if (mode == "--rederive" && argc == 4) {
    std::ifstream in(argv[2]);
    std::stringstream ss;
    ss << in.rdbuf();
    nlohmann::json j = nlohmann::json::parse(ss.str(), nullptr, false);
    auto c = ftcost::parse_calibration_rederive(j, argv[2]);
    if (!c.ok()) {
      std::fprintf(stderr, "%s\n", c.error().to_string().c_str());
      return 2;
    }
    std::ofstream(argv[3]) << ftcost::to_json_text(c.value());
    return 0;
  }
  std::fprintf(stderr, "usage: %s --write OUT | --rederive IN OUT\n", argv[0]);
  return 2;
}
