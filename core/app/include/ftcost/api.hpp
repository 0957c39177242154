// JSON-in / JSON-out entry points shared by every front end (the browser calculator's
// window.ftcost.estimate, tests, scripting). Never throws; errors come back as
// {"error": {"code": "...", "field": "...", "message": "..."}}.
#pragma once

#include "ftcost/estimate.hpp"
#include "ftcost/stack.hpp"

#include <string>

namespace ftcost {
class Database;
}

namespace ftcost::api {

// The models and the GPUs of `db`, one object each: what models_json() / gpus_json() return and what
// `ftcost models --json` / `ftcost gpus --json` print. A model: id, name, kind, hf_repo, total_params,
// active_params (top_k experts), experts, top_k, layers. A GPU: its database fields, sources, and
// price_offers (how many offers the price files hold for it).
json models_list(const Database& db);
json gpus_list(const Database& db);

// `request_json` is an object whose keys are the `ftcost estimate` flag names without the leading
// dashes ("model", "gpu", "method", "lora-rank", "lora-targets", "moe", "seq", "dataset",
// "checkpointing", "attention", "batch", "queries", "epochs", "price-per-hour", "stack", ...);
// values are strings or numbers. Returns exactly what `ftcost estimate --json` prints.
// `today_days` (days since 1970-01-01) dates the price ages; -1 takes the system clock.
std::string estimate_json(const std::string& request_json, long today_days = -1);
// The same with the files a front end holds (the calculator's uploads: "dataset/<name>", "uploaded/<name>"):
// `reader` serves the paths the request names (a dataset or model file); the signature without it reads no
// file (a path is refused with a message). The same overload exists for every call below that resolves a job.
std::string estimate_json(const std::string& request_json, const FileReader& reader, long today_days = -1);

// The job on 1, 2, 4, 8... GPUs of its "gpu" (scaling.hpp): `request_json` takes the `ftcost scale` flags,
// i.e. the estimate keys with "counts" ("1,2,4,8,16" or [1, 2, 4, 8, 16]). Returns what `ftcost scale --json`
// prints.
std::string scaling_json(const std::string& request_json, long today_days = -1);
std::string scaling_json(const std::string& request_json, const FileReader& reader, long today_days = -1);

// The same job on every GPU: `request_json` takes the `ftcost compare` flags, i.e. the estimate keys but
// "gpu", "provider", "price-per-hour" and "calibration", with "spot" ("on"/"off": include spot offers),
// "offers" and "fits-only" (true/false or "on"/"off") and "max-gpus" (a whole number). Rows are instance
// shapes (compare.hpp). Returns exactly what `ftcost compare --json` prints.
std::string compare_json(const std::string& request_json, long today_days = -1);
std::string compare_json(const std::string& request_json, const FileReader& reader, long today_days = -1);

// The plan search (`ftcost plan --json`): `request_json` holds the job keys (as estimate takes them, minus
// those the plan chooses: gpu, batch, grad-accum, provider, price-per-hour, gpus (count), nodes, parallel...)
// and the constraint keys "deadline", "budget", "max-gpus", "providers", "spot", "gpus", "methods", "stacks",
// "minimize", "effective-batch" (lists as "a,b" or JSON arrays; numbers as numbers or strings; spot also
// true/false). Returns exactly what `ftcost plan --json` prints.
std::string plan_json(const std::string& request_json, long today_days = -1);
std::string plan_json(const std::string& request_json, const FileReader& reader, long today_days = -1);

// The runnable config of one plan: `request_json` is a plan's "request" object (estimate keys); `stack` one
// of trl, torchtune, axolotl, llamafactory, unsloth. Returns {"stack", "command", "files": [{role, name,
// format, text}]} (the first file is the main config), or an error naming "--config" when the stack cannot
// run the plan.
std::string plan_config_json(const std::string& request_json, const std::string& stack, long today_days = -1);
std::string plan_config_json(const std::string& request_json, const std::string& stack,
                             const FileReader& reader, long today_days = -1);

// Lists of the embedded database, as JSON arrays.
std::string models_json();  // models_list(Database::embedded())
std::string gpus_json();    // gpus_list(Database::embedded())
std::string datasets_json();
std::string prices_json();

// A user's run (`ftcost.run/1` text, e.g. an uploaded file) refitted: what `ftcost fit-stack --run FILE
// --stack STACK --json` prints — per timed step measured vs predicted before and after the fit ("points"),
// every parameter with its error bar or why it was not fitted, the error on the run before/after, notes.
std::string fit_run_json(const std::string& run_text, const std::string& stack_id = kDefaultStackId);

// The paper's Table IV (arXiv 2408.04693), as `ftcost paper table4 --json` prints it.
std::string paper_table4_json();

}  // namespace ftcost::api
