// The Plan view's text of a plan (web/src/app_plan.cpp defines them; the controller and the drawing in
// app_plan_view.cpp read them): comma lists as the plan's options take them, numbers and values as the CLI
// takes them, a plan's shape and its tooltip note.
#pragma once

#include "ftcost/json_util.hpp"

#include <set>
#include <string>

namespace ftcost::web {

std::set<std::string> split_list(const std::string& text);
std::string join_list(const std::set<std::string>& items);
// A number as the CLI takes it ("24", "12.5").
std::string number_text(double v);
// A request value from the plan's JSON as the calculator's inputs hold it ("on", "24", "lora").
std::string value_text(const json& v);
// "8x H100 SXM5 80GB x 2 nodes"
std::string shape_text(const json& p);
// The plan's tooltip: its shape, offer, configuration, memory and why it was chosen.
std::string plan_note(const json& p);

}  // namespace ftcost::web
