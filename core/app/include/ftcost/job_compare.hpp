// Two jobs side by side (the calculator's pinned job vs the current one, `ftcost estimate ... --vs
// KEY=VALUE`): the options that differ, and memory, maximum batch, throughput, time and cost of each with
// the difference. Reads the estimates' JSON (estimate_job_json), so one GPU and several GPUs compare alike.
#pragma once

#include "ftcost/error.hpp"
#include "ftcost/estimate.hpp"
#include "ftcost/json_util.hpp"

#include <string>

namespace ftcost {

// "KEY=VALUE[,KEY=VALUE...]" applied to `base`: each KEY a job option (the estimate's flag names without
// "--"). A piece without "=" continues the previous value ("lora-targets=w1,w2,w3"). Errors name --vs.
Result<Request> apply_vs(const std::string& spec, const Request& base);

// {"a": {...}, "b": {...}, "inputs": [{key, a, b}], "rows": [{metric, label, unit, a, b, difference,
// ratio}]}: a/b are the jobs' summaries (model, gpu, method, stack, calibrated, memory_state); a metric
// that one side lacks (a batch that does not fit has no time or cost) is null there and has no difference.
json compare_jobs(const Request& req_a, const json& est_a, const Request& req_b, const json& est_b);

// The comparison as a text table (the CLI's output).
std::string compare_jobs_text(const json& cmp);

}  // namespace ftcost
