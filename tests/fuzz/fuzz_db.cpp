// libFuzzer target for the gpu-db loaders and the checker (`ftcost db check`): every input is given to
// every file kind (GPU, prices, model, dataset, stack, calibration filed under a real GPU, JSON Schema),
// then to all of them at once as a small database. Beyond "no crash, no leak, no undefined behaviour"
// it checks what db check promises: every problem names a file and a field, every string is valid UTF-8,
// and an input the checker accepts is one the calculator's database loads.
// Build and run: see CMakeLists.txt in this folder.
#include "ftcost/calibration.hpp"
#include "ftcost/database.hpp"
#include "ftcost/db_check.hpp"
#include "ftcost/embedded_db.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

[[noreturn]] void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_db: %s: %s\n", what, detail.c_str());
  std::abort();
}

void check_result(const ftcost::DbCheckResult& r, const ftcost::DbFiles& files) {
  for (const auto& p : r.problems) {
    if (p.file.empty() || p.field.empty() || p.message.empty())
      fail("problem without file, field or message", p.to_string());
    bool known = false;
    for (const auto& f : files) known = known || ftcost::sanitize_utf8(f.first) == p.file;
    if (!known) fail("problem names a file that was not checked", p.to_string());
    // throws (type_error 316) on invalid UTF-8
    const std::string line = nlohmann::json(p.to_string()).dump();
    (void)line;
  }
}

const std::string& embedded(const char* path) {
  static std::string none;
  for (std::size_t i = 0; i < ftcost::kEmbeddedDbFileCount; ++i)
    if (std::string(ftcost::kEmbeddedDbFiles[i].path) == path) {
      static std::string found;
      found = ftcost::kEmbeddedDbFiles[i].content;
      return found;
    }
  return none;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  static const std::string h100 = embedded("gpus/h100-sxm5-80gb.json");
  static const ftcost::DbFiles context = {{"gpus/h100-sxm5-80gb.json", h100}};
  static const char* const paths[] = {"gpus/fuzz.json",         "prices/fuzz.json",
                                      "models/fuzz.json",       "datasets/fuzz.json",
                                      "stacks/fuzz.json",       "calibrations/h100-sxm5-80gb/fuzz.json",
                                      "schema/fuzz.schema.json"};
  ftcost::DbFiles all;
  for (const char* p : paths) {
    const ftcost::DbFiles one = {{p, text}};
    const auto r = ftcost::check_db_files(one, context);
    check_result(r, one);
    // Accepted by db check => loaded by the database without problems.
    if (r.ok() && std::string(p).rfind("calibrations/", 0) != 0 && std::string(p).rfind("schema/", 0) != 0) {
      const auto db = ftcost::Database::from_files({{p, text}, context[0]});
      if (!db.problems().empty())
        fail("db check accepted a file the database rejects", db.problems()[0].error.to_string());
    }
    all.emplace_back(p, text);
  }
  check_result(ftcost::check_db_files(all, context), all);
  (void)ftcost::parse_calibration(text, "fuzz");
  return 0;
}
