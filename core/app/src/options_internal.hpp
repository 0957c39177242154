// The option table's groups and what they share. build_options() (options.cpp) calls the groups in the order
// resolve_request applies them; each group function declares its options in that order, each option with the
// options it reads (Option::reads: tests/unit/test_option_order.cpp checks that they come before it).
#pragma once

#include "ftcost/options.hpp"

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace ftcost {

// ------------------------------------------------------------------ the groups, in table order
// options_table.cpp (model): --model, --gpu; --method, --quant and the LoRA settings.
void add_model_options(std::vector<Option>& table);
void add_peft_options(std::vector<Option>& table);
// options_table.cpp (training): --precision, --fp8; the optimizer, checkpointing and the experts.
void add_precision_options(std::vector<Option>& table);
void add_training_options(std::vector<Option>& table);
// options_table.cpp (data): --seq or --dataset and the lengths; the batch, grad-accum and epochs.
void add_data_options(std::vector<Option>& table);
void add_batch_options(std::vector<Option>& table);
// options_table.cpp (stack): --headroom, --stack, --attention; the modern-stack options (issue 13).
void add_stack_options(std::vector<Option>& table);
void add_kernel_options(std::vector<Option>& table);
// options_objective.cpp: --objective, the DPO family and GRPO.
void add_objective_options(std::vector<Option>& table);
// options_table.cpp (stack): --model-kind, --routing.
void add_step_model_options(std::vector<Option>& table);
// options_table.cpp (price): your price or electricity, staleness, --calibration, --run, the provider and
// spot.
void add_price_options(std::vector<Option>& table);
// options_table.cpp (parallel): the node, GPUs, offload and strategy; the network, host memory, Ulysses, FP8
// all-gather.
void add_parallel_options(std::vector<Option>& table);
void add_network_options(std::vector<Option>& table);

// ------------------------------------------------------------------ declaring an option (options.cpp)
// An option's key (the flag without "--"), kind, calculator panel section and short label; the group's
// function fills in the rest.
Option declare_option(std::string key, OptionKind kind, std::string group, std::string label);

// ------------------------------------------------------------------ defaults (options.cpp)
DefaultValue fixed_default(std::string value, std::string reason = {});
// A fixed default that the estimate's "defaults:" list leaves out (an option most jobs never touch), and one
// it lists with its reason.
std::function<DefaultValue(const ResolveState&)> unlisted_default(const std::string& value);
std::function<DefaultValue(const ResolveState&)> listed_default(const std::string& value,
                                                                const std::string& reason);

// ------------------------------------------------------------------ helpers the groups share (options.cpp)
std::string number_text(double v);
bool looks_like_path(const std::string& s);
// A JSON file an option names (st.reader; an error naming `flag` where files cannot be read).
Result<json> read_doc(const ResolveState& st, const std::string& path, const std::string& flag);
// An error from a file's own parser, with the file named in front of the field.
Error in_file(const std::string& path, Error e);
// BlackMamba/Mamba run their own training code: no gradient checkpointing, no transformers kernels.
inline bool own_code_without_checkpointing(const ModelSpec& m) { return m.own_training_code; }

// ------------------------------------------------------------------ one-assignment options
// An option whose apply only parses its checked value and stores it in one member declares the member:
// `o.apply = stores(&Workload::epochs, real_value);`. The member's struct says where it lives in st.in.
using ApplyFn = std::function<Status(ResolveState& st, const std::string& value)>;

template <class S>
S& member_owner(ResolveState& st);
template <>
inline Inputs& member_owner<Inputs>(ResolveState& st) {
  return st.in;
}
template <>
inline Workload& member_owner<Workload>(ResolveState& st) {
  return st.in.workload;
}
template <>
inline MultiGpuRequest& member_owner<MultiGpuRequest>(ResolveState& st) {
  return st.in.multi;
}
template <>
inline ObjectiveConfig& member_owner<ObjectiveConfig>(ResolveState& st) {
  return st.in.workload.objective;
}

// The parsers of checked values (check_option_value has accepted the text for the option's kind).
inline double real_value(const std::string& v) { return std::strtod(v.c_str(), nullptr); }
inline std::int64_t count_value(const std::string& v) { return std::strtoll(v.c_str(), nullptr, 10); }
inline bool on_value(const std::string& v) { return v == "on"; }
inline std::string text_value(const std::string& v) { return v; }

template <class S, class T, class Parsed>
ApplyFn stores(T S::*member, Parsed (*parse)(const std::string&)) {
  return [member, parse](ResolveState& st, const std::string& v) -> Status {
    member_owner<S>(st).*member = static_cast<T>(parse(v));
    return Ok{};
  };
}

// A choice stored as an enum: each of the option's values with the member's value for it. The value has
// been checked against the option's values; the last pair stands for any other.
template <class S, class E>
ApplyFn stores_choice(E S::*member, std::vector<std::pair<std::string, E>> by_value) {
  return [member, by_value](ResolveState& st, const std::string& v) -> Status {
    E e = by_value.back().second;
    for (const auto& entry : by_value)
      if (entry.first == v) {
        e = entry.second;
        break;
      }
    member_owner<S>(st).*member = e;
    return Ok{};
  };
}

}  // namespace ftcost
