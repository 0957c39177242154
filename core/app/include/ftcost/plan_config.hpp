// Runnable training configurations generated from one plan's request (the option-table keys that
// reproduce it with `ftcost estimate`): TRL `trl sft --config` YAML + accelerate config (+ DeepSpeed JSON),
// torchtune config overrides, axolotl YAML, LLaMA-Factory YAML, Unsloth's train_unsloth.py. The key names
// come from each stack's own code (file and function cited in core/app/src/plan_config.cpp and
// docs/sources/plan-configs.md). A setting the stack lacks is refused with an error, never emitted.
#pragma once

#include "ftcost/database.hpp"
#include "ftcost/estimate.hpp"

#include <string>
#include <vector>

namespace ftcost {

struct ConfigFile {
  std::string role;    // "trl", "accelerate", "deepspeed", "torchtune", "axolotl", "llamafactory", "unsloth"
  std::string name;    // suggested file name
  std::string format;  // "yaml" | "json" | "python"
  std::string text;
};

struct PlanConfig {
  std::string stack;              // trl | torchtune | axolotl | llamafactory | unsloth
  std::string command;            // how to launch it
  std::vector<ConfigFile> files;  // the first one is the main config
};

// The stacks configs are generated for.
const std::vector<std::string>& config_stacks();

// Errors name "--config" (a stack that cannot run the plan: the reason) or the request's field.
Result<PlanConfig> plan_config(const Request& request, const std::string& stack, const Database& db,
                               const FileReader& reader, long today_days);

json plan_config_to_json(const PlanConfig& c);

// Whether torchtune has a model builder for this preset (torchtune/models/<family>/__init__.py; with `qlora`:
// a qlora_ builder). The plan search leaves torchtune out for models it cannot build.
bool torchtune_builds(const std::string& model_id, bool qlora);

}  // namespace ftcost
