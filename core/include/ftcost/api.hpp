// JSON-in / JSON-out entry points shared by every front end (the browser calculator's
// window.ftcost.estimate, tests, scripting). Never throws; errors come back as
// {"error": {"code": "...", "field": "...", "message": "..."}}.
#pragma once

#include "ftcost/stack.hpp"

#include <string>

namespace ftcost::api {

// `request_json` is an object whose keys are the `ftcost estimate` flag names without the leading
// dashes ("model", "gpu", "method", "lora-rank", "lora-targets", "moe", "seq", "dataset",
// "checkpointing", "attention", "batch", "queries", "epochs", "price-per-hour", "stack", ...);
// values are strings or numbers. Returns exactly what `ftcost estimate --json` prints.
// `today_days` (days since 1970-01-01) dates the price ages; -1 takes the system clock.
std::string estimate_json(const std::string& request_json, long today_days = -1);

// The same job on every GPU: `request_json` takes the `ftcost compare` flags, i.e. the estimate keys but
// "gpu", "provider", "price-per-hour" and "calibration", with "spot" ("on"/"off": include spot offers),
// "offers" and "fits-only" (true/false or "on"/"off"). Returns exactly what `ftcost compare --json` prints.
std::string compare_json(const std::string& request_json, long today_days = -1);

// Lists of the embedded database, as JSON arrays.
std::string models_json();
std::string gpus_json();
std::string datasets_json();
std::string prices_json();

// A user's run (`ftcost.run/1` text, e.g. an uploaded file) refitted: what `ftcost fit-stack --run FILE
// --stack STACK --json` prints — per timed step measured vs predicted before and after the fit ("points"),
// every parameter with its error bar or why it was not fitted, the error on the run before/after, notes.
std::string fit_run_json(const std::string& run_text, const std::string& stack_id = kDefaultStackId);

// The paper's Table IV (arXiv 2408.04693), as `ftcost paper table4 --json` prints it.
std::string paper_table4_json();

}  // namespace ftcost::api
