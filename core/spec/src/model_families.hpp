// The model families' config readers (model_families.cpp), for the rule for unknown architectures and the
// entry points in model.cpp. Internal to the spec library.
#pragma once

#include "ftcost/error.hpp"
#include "ftcost/json_util.hpp"
#include "ftcost/model.hpp"

#include <string>

namespace ftcost::model_families {

// Reads one family's config into `m` (layers, attention, MLP/experts); errors name the JSON path under `p`.
using FamilyParser = Status (*)(const json&, ModelSpec&, const std::string&);

// The reader of a config.json model_type; nullptr for a model_type ftcost has no reader for.
FamilyParser family_parser(const std::string& model_type);
// The model_types with a reader, for error messages.
std::string supported_list();

// transformers' rope_config_validation rules (a config transformers would refuse is not a model to price).
Status check_rope(const json& c, const std::string& p);
// Llama-style decoder layers; Mixtral-style experts (the generic readings of an unknown model_type too).
Status parse_llama_like(const json& c, ModelSpec& m, const std::string& p);
Status parse_mixtral_like(const json& c, ModelSpec& m, const std::string& p);
// The reference implementations' own configs: mamba_ssm's Mamba and BlackMamba.
Status parse_mamba(const json& c, ModelSpec& m, const std::string& p);
Status parse_blackmamba(const json& c, ModelSpec& m, const std::string& p);

}  // namespace ftcost::model_families
