// `ftcost plan`: the cheapest and the fastest ways to finish a fine-tuning job. The search runs over GPU type
// x instance shape (GPUs per node x nodes of a price offer) x parallel strategy (only those the stack runs) x
// method x micro-batch x gradient accumulation x checkpointing / optimizer variants, prunes what does not fit
// or misses a constraint, and keeps the Pareto front of time against cost. Every plan carries the request
// (option-table keys) that `ftcost estimate` reproduces it with.
#pragma once

#include "ftcost/database.hpp"
#include "ftcost/estimate.hpp"
#include "ftcost/json_util.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ftcost {

// The constraints of a plan (not job options: the plan command declares them, plan_constraint_keys()).
struct PlanConstraints {
  double deadline_hours = 0;           // 0: none
  double budget_usd = 0;               // 0: none
  int max_gpus = 0;                    // 0: no limit (GPUs of the whole shape)
  std::vector<std::string> providers;  // provider ids; empty: all
  bool spot = false;                   // spot (interruptible) offers allowed
  std::vector<std::string> gpus;       // GPU type ids; empty: all
  std::vector<std::string> methods;    // full | lora | qlora; empty: the job's method only
  std::vector<std::string> stacks;     // stack ids; empty: the job's stack only
  std::string minimize = "cost";       // cost | time
  std::int64_t effective_batch = 0;    // 0: free; else micro-batch x grad-accum x data-parallel ranks = it
};

// One constraint key: request key = CLI flag without "--".
struct PlanConstraintKey {
  std::string key;
  std::string help;
};
const std::vector<PlanConstraintKey>& plan_constraint_keys();

// Job keys the plan chooses itself (a job request that gives one is an error naming the flag).
const std::vector<std::string>& plan_chosen_keys();

// Splits a request into the job keys and the constraints; errors name the flag ("--deadline", ...).
struct PlanRequest {
  Request job;
  PlanConstraints constraints;
};
Result<PlanRequest> parse_plan_request(const Request& all, const Database& db);

// An instance shape a user can rent: GPU type x GPUs per node x nodes of one price offer, the whole shape's
// price, from the instance shapes of shapes.hpp (instance_shapes): whole instances, several nodes only
// where the offer names its network. The one function the search takes its shapes from.
struct PlanShape {
  std::string gpu_id;
  std::string provider_id, provider;
  std::string instance_type, region, date;
  bool spot = false;
  bool stale = false;  // dated and older than the staleness limit
  int gpus_per_node = 1;
  int nodes = 1;
  std::string network = "none";  // between nodes (shapes.hpp: only where the offer names it)
  double network_gbit_per_gpu = 0;
  double usd_per_gpu_hour = 0;
  double usd_per_hour = 0;  // the whole shape
  int ranks() const { return gpus_per_node * nodes; }
};
std::vector<PlanShape> plan_shapes(const Database& db, const PlanConstraints& c, long today_days,
                                   long stale_days);

// The multi-GPU strategies (as --parallel spells them) a stack's software runs; {} = one GPU only.
// Provenance in core/app/src/plan.cpp and docs/sources/plan-configs.md.
std::vector<std::string> stack_strategies(const StackProfile& stack, const ModelSpec& model,
                                          const std::string& method, int gpus_per_node);

struct PlanEntry {
  int id = -1;
  PlanShape shape;
  std::string gpu_name;
  double memory_gib = 0;  // the GPU's memory (label)
  std::string method, stack, parallel = "single", checkpointing, optimizer;
  std::string offload =
      "none";  // multi-GPU: none | optimizer | params (ZeRO-Offload, only where nothing fits)
  std::int64_t micro_batch = 0, grad_accum = 1, effective_batch = 0, max_micro_batch = 0;
  double hours = 0, cost_usd = 0;
  double step_s = 0, throughput_qps = 0;
  double peak_gib_per_gpu = 0, usable_gib = 0;
  std::string bottleneck;  // from the step breakdown: gemm, attention, dequant, host, communication, ...
  double bottleneck_share = 0;
  std::string why;
  std::vector<std::string> warnings;  // e.g. checkpointing off at 90% or more of the usable memory
  Request request;                    // reproduces the plan with `ftcost estimate`
};

struct PlanAlternative {
  std::string what;
  std::string why_not;
};

struct PlanResult {
  std::vector<PlanEntry> front;  // Pareto front of time against cost, cheapest first
  int best = -1;                 // id in `front`, -1 when nothing meets the constraints
  PlanConstraints constraints;
  long considered = 0;                 // candidate (configuration, shape) pairs looked at
  std::map<std::string, long> pruned;  // does_not_fit, deadline, budget, effective_batch, ...
  std::vector<PlanAlternative> alternatives;
  // The cheapest single-GPU plan before the deadline/budget (id -1 when none fits on one GPU): what
  // `ftcost compare` ranks, for comparison.
  PlanEntry cheapest_single_gpu;
  double search_ms = 0;
  long estimates = 0;              // estimator calls
  std::vector<std::string> notes;  // what the search left out and why (a stack that cannot load the model)
};

Result<PlanResult> plan(const Request& job, const PlanConstraints& c, const Database& db,
                        const FileReader& reader, long today_days);
json plan_to_json(const PlanResult& r);
std::string plan_to_csv(const PlanResult& r);

}  // namespace ftcost
