// One job, one answer. A job is the one-GPU inputs (model, GPU, stack, workload, data, price choice) plus a
// typed multi-GPU plan; estimate_job() is the one function every surface calls for it: `ftcost estimate`,
// every `compare` row, every `plan` candidate, every `scale` point, the JS API and the calculator's cards,
// table, chart and warnings. Its JobAnswer is the set of numbers those surfaces show, per rank when the job
// has more than one GPU, so that no view can take a one-GPU figure for a multi-GPU job.
#pragma once
#include "ftcost/estimate.hpp"
#include "ftcost/parallel.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ftcost {

struct Job {
  Inputs in;
  ParallelPlan plan;   // 1 GPU and no offload: the single-GPU estimate
  bool multi = false;  // the multi-GPU layer applies: more than one GPU, an offload or a --parallel
  int gpus() const { return plan.ranks(); }
};

// The option that makes a job one-GPU only ("--objective dpo", "--fp8 te-delayed"), "" when several GPUs are
// modelled for it: make_job refuses such a job on several GPUs, the plan search searches one-GPU shapes.
std::string one_gpu_only_option(const Inputs& in);
// The job of resolved inputs: its plan from --gpus, --nodes, --parallel, --offload, --node, --network...
Result<Job> make_job(const Inputs& in, const Database& db);
// resolve_request() then make_job(): an error names the flag.
Result<Job> resolve_job(const Request& req, const Database& db, const FileReader& reader,
                        long today_days = -1);

// What every surface shows of one job. With more than one GPU every memory figure, batch and longest
// context is per rank (the chosen strategy's), and the time and cost are the whole job's.
struct JobAnswer {
  int gpus = 1, gpus_per_node = 1, nodes = 1;  // training GPUs
  int generation_gpus = 0;  // GRPO's vLLM server GPUs, rented beside them (in usd_per_hour and the cost)
  std::string strategy = "single";
  bool fits = false;
  std::string memory_state;  // fits | tight | does_not_fit
  double peak_gib = 0, usable_gib = 0, memory_low_gib = 0, memory_high_gib = 0;
  std::int64_t batch = 0;                // micro-batch per GPU
  std::int64_t max_batch = 0;            // the largest that fits (the low end of the memory range)
  std::int64_t max_batch_range_fit = 0;  // the largest whose memory range's upper end fits
  std::int64_t grad_accum = 1;
  std::int64_t global_batch = 0;  // per optimizer step: micro-batch x grad-accum x data-parallel replicas
  double max_seq_len = 0;         // the longest padded sequence at batch 1 (per rank)
  double step_s = 0;              // per micro-batch on one GPU; per optimizer step on several
  double qps = 0, qps_low = 0, qps_high = 0;
  double tokens_per_s = 0;       // tokens computed, padding included
  double data_tokens_per_s = 0;  // tokens of data
  double hours = 0, hours_low = 0, hours_high = 0;
  bool has_price = false;
  PriceChoice price;        // per GPU-hour, by the one price rule for the job's shape
  double usd_per_hour = 0;  // the whole job's GPUs
  double cost = 0, cost_low = 0, cost_high = 0;
  BatchChoice batch_choice;
  std::vector<std::string> warnings;  // all of them speak of this shape
};

struct JobEstimate {
  Job job;
  ParallelEstimate pe;  // pe.single: the one-GPU estimate of the same inputs; pe.is_single for one GPU
  JobAnswer answer;
};

Result<JobEstimate> estimate_job(const Job& job, const Database& db);
// resolve_job + estimate_job.
Result<JobEstimate> estimate_request(const Request& req, const Database& db, const FileReader& reader,
                                     long today_days = -1);
// What `ftcost estimate --json` prints and window.ftcost.estimate returns: estimate_to_json or
// parallel_to_json, with "answer" (answer_to_json) added.
json job_to_json(const JobEstimate& e);
json answer_to_json(const JobAnswer& a);
// make_job + estimate_job + job_to_json: the JSON of resolved inputs.
Result<json> estimate_job_json(const Inputs& in, const Database& db);

}  // namespace ftcost
