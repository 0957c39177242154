// Groups of the option table defined outside options.cpp (build_options calls them in table order).
#pragma once

#include "ftcost/options.hpp"

#include <vector>

namespace ftcost {

// --objective and the DPO-family and GRPO settings (options_objective.cpp).
void add_objective_options(std::vector<Option>& table);

}  // namespace ftcost
