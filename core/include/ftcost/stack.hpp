// Software stack profiles (gpu-db/stacks/<id>.json): how the training software behaves.
#pragma once

#include <string>

#include "ftcost/error.hpp"
#include "ftcost/json_util.hpp"

namespace ftcost {

struct StackProfile {
  std::string id;
  std::string display_name;
  std::string description;
  std::string moe_execution = "loop";  // loop | grouped
  // memory
  double cuda_context_gib = 0.5;
  double allocator_overhead_fraction = 0.1;
  bool norm_saves_fp32_input = true;
  double logits_bytes_per_vocab_entry = 14;
  double own_code_logits_bytes_per_vocab_entry = 6;  // BlackMamba / mamba_ssm training code
  double trainable_param_bytes = 4;
  double autocast_weight_copy_bytes = 2;
  double dequant_temp_bytes_per_param = 4;
  double gc_retained_fraction = 0;
  std::string gc_retained_provenance;
  double gc_retained_fit_residual_batches = 0;
  // step time (roofline-lite stand-in)
  double gemm_efficiency = 0.65;
  double memory_efficiency = 0.7;
  double launch_overhead_us = 7;
  double kernels_per_expert_per_pass = 40;
  double kernels_per_layer_per_pass = 60;
  double dequant_bytes_per_param = 8.7;
  double optimizer_bytes_per_param = 36;
  std::string throughput_note;
  json to_json() const;
};

Result<StackProfile> parse_stack(const json& doc, const std::string& source);

}  // namespace ftcost
