// Groups of the option table defined outside options.cpp (build_options calls them in table order).
#pragma once

#include "ftcost/options.hpp"

#include <functional>
#include <string>
#include <vector>

namespace ftcost {

// A fixed default that the estimate's "defaults:" list leaves out (an option most jobs never touch), and one
// it lists with its reason (options.cpp).
std::function<DefaultValue(const ResolveState&)> unlisted_default(const std::string& value);
std::function<DefaultValue(const ResolveState&)> listed_default(const std::string& value,
                                                                const std::string& reason);

// --objective and the DPO-family and GRPO settings (options_objective.cpp).
void add_objective_options(std::vector<Option>& table);

}  // namespace ftcost
