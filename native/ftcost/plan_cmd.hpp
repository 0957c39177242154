// `ftcost plan`: the Pareto front of time against cost for one job, the best plan, and (with --config) the
// runnable configuration of one plan for a training stack.
#pragma once

#include "ftcost/plan.hpp"

#include <string>

namespace ftcost::cli {

struct PlanCmdOptions {
  bool as_json = false, as_csv = false;
  std::string config;  // stack name of the runnable config to write (empty: none)
  std::string out;     // file the config is written to
  int pick = -1;       // plan id; -1: the best
};

// `all` holds the job flags and the plan's constraint flags (plan_constraint_keys()).
int run_plan(const Request& all, const Database& db, const FileReader& reader, long today_days,
             const PlanCmdOptions& opt);

}  // namespace ftcost::cli
