// The calculator's JavaScript API (site/app.js wraps these as window.ftcost): the core's JSON entry
// points, callable from the page. Strings in and out are UTF-8; a returned pointer stays valid until
// the next call of the same function. Never throws: errors are {"error": {code, field, message}}.
// Every call that resolves a job reads the files the page holds (page_files.hpp): a request naming
// "dataset/<name>" uses the length file loaded (or brought by a link) in the calculator.
#include "ftcost/api.hpp"
#include "ftcost/json_util.hpp"
#include "page_files.hpp"

#include <emscripten/emscripten.h>

#include <exception>
#include <string>

namespace {
std::string error_text(const char* code, const std::string& message) {
  return ftcost::json{{"error", {{"code", code}, {"field", ""}, {"message", message}}}}.dump();
}

// Runs `answer` into `out` (a function's static result buffer); an exception becomes an error object.
template <typename F>
const char* guarded(std::string& out, F answer) {
  try {
    out = answer();
  } catch (const std::exception& ex) {
    out = error_text("internal", ex.what());
  } catch (...) {
    out = error_text("internal", "unknown error");
  }
  return out.c_str();
}

// One of the core's request -> JSON calls with the files the page holds (today_days -1: today).
using RequestCall = std::string (*)(const std::string&, const ftcost::FileReader&, long);

// The answer of `call` to `request`, in a buffer of its own (valid until the next call of the same function).
template <RequestCall call>
const char* answer(const char* request) {
  static std::string out;
  return guarded(out, [request] {
    return call(request != nullptr ? request : "", ftcost::web::page_file_reader(), -1);
  });
}
}  // namespace

extern "C" {

// request: JSON object of `ftcost estimate` flag names -> values. Returns what `ftcost estimate --json`
// prints.
EMSCRIPTEN_KEEPALIVE const char* ftcost_estimate(const char* request) {
  return answer<ftcost::api::estimate_json>(request);
}

// request: JSON object of `ftcost compare` flag names -> values. Returns what `ftcost compare --json` prints.
EMSCRIPTEN_KEEPALIVE const char* ftcost_compare(const char* request) {
  return answer<ftcost::api::compare_json>(request);
}

// request: JSON object of the job keys plus the plan's constraint keys. Returns what `ftcost plan --json`
// prints.
EMSCRIPTEN_KEEPALIVE const char* ftcost_plan(const char* request) {
  return answer<ftcost::api::plan_json>(request);
}

// request: one plan's "request" object; stack: trl, torchtune, axolotl, llamafactory or unsloth. Returns
// {"stack", "command", "files": [{role, name, format, text}]}.
EMSCRIPTEN_KEEPALIVE const char* ftcost_plan_config(const char* request, const char* stack) {
  static std::string out;
  return guarded(out, [request, stack] {
    return ftcost::api::plan_config_json(request != nullptr ? request : "", stack != nullptr ? stack : "",
                                         ftcost::web::page_file_reader());
  });
}

// request: JSON object of `ftcost scale` flag names -> values (estimate keys and "counts"). Returns what
// `ftcost scale --json` prints: time, cost, throughput and scaling efficiency against the GPU count.
EMSCRIPTEN_KEEPALIVE const char* ftcost_scaling(const char* request) {
  return answer<ftcost::api::scaling_json>(request);
}

// what: "models", "gpus", "datasets", "prices" or "table4".
EMSCRIPTEN_KEEPALIVE const char* ftcost_list(const char* what) {
  static std::string out;
  const std::string w = what != nullptr ? what : "";
  return guarded(out, [&w] {
    if (w == "models") return ftcost::api::models_json();
    if (w == "gpus") return ftcost::api::gpus_json();
    if (w == "datasets") return ftcost::api::datasets_json();
    if (w == "prices") return ftcost::api::prices_json();
    if (w == "table4") return ftcost::api::paper_table4_json();
    return error_text("invalid_value",
                      "unknown list \"" + w + "\"; use models, gpus, datasets, prices or table4");
  });
}

}  // extern "C"
