// Job options of the modern fine-tuning stacks (issue #13): Liger kernels, activation offloading,
// optimizer-in-backward, 8-bit / paged 8-bit AdamW, gradient accumulation, host RAM. Until the option table
// (core/include/ftcost/options.hpp) lands they are applied to resolved Inputs from a JSON object of
// option name -> value (reference rows, C++ API); each entry below is what the table entry will carry.
#pragma once

#include "ftcost/estimate.hpp"

#include <string>
#include <vector>

namespace ftcost {

struct StackOption {
  const char* name;     // flag name without dashes
  const char* kind;     // choice | count | real | toggle
  const char* allowed;  // allowed values, for help and errors
  const char* deflt;    // default and why
  const char* applies;  // when it applies
};

// The options, in display order.
const std::vector<StackOption>& stack_options();

// Applies `obj` (keys from stack_options(); values as strings, numbers or booleans) to `in`. Errors name the
// option and what is allowed; nothing is clamped. Defaults are recorded in in.defaults.
Status apply_stack_options(const json& obj, Inputs& in);

}  // namespace ftcost
