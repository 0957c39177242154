#include "ftcost/stack_options.hpp"

#include <cmath>
#include <cstdlib>

namespace ftcost {

const std::vector<StackOption>& stack_options() {
  static const std::vector<StackOption> opts = {
      {"liger", "toggle", "on | off",
       "off (the stack profile's own kernels; on for `--stack hf-trl-*` runs with use_liger_kernel=True)",
       "transformers-based stacks: fused linear cross-entropy (no logits), RMSNorm, SwiGLU"},
      {"offload-activations", "choice", "stack | on | off",
       "stack (the profile's default: on for unsloth-*, off for hf-trl-* and torchtune-*)",
       "with --checkpointing on: gradient checkpoints live in host RAM, copied over PCIe"},
      {"optimizer-in-backward", "toggle", "on | off", "off (torchtune optimizer_in_bwd: False)",
       "--grad-accum 1 only (torchtune raises otherwise); no full gradient buffer"},
      {"grad-accum", "count", "1 .. 65536", "1 (one optimizer step per micro-batch)",
       "always: the optimizer step is shared by N micro-batches; effective batch = batch x N"},
      {"optimizer", "choice", "adamw | adamw-mixed | adamw-8bit | paged-adamw-8bit | sgd | sgd-momentum",
       "adamw (torch AdamW, states in the parameter dtype)",
       "paged-adamw-8bit: bitsandbytes PagedAdamW8bit (8-bit blockwise states in unified memory)"},
      {"kbit-upcast", "choice", "stack | on | off",
       "stack (on for hf-trl-2024q1/2024q4: TRL's SFTTrainer called peft prepare_model_for_kbit_training)",
       "QLoRA: embeddings, lm_head and norms in fp32, fp32 norm outputs and MLP activations; off for "
       "LLaMA-Factory, which prepares the model itself"},
      {"packed-doc-len", "real", "tokens >= 1",
       "the dataset's mean length with --padding packing; otherwise the padded length (no packing)",
       "packing with document masking (TRL padding_free, torchtune packed): attention spans one document"},
      {"host-ram", "real", "GiB > 0", "unchecked", "with offloading: warns when the checkpoints exceed it"},
  };
  return opts;
}

namespace {
Result<std::string> text_of(const json& v, const std::string& key) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return std::string(v.get<bool>() ? "on" : "off");
  if (v.is_number_integer() || v.is_number_unsigned()) return v.dump();
  if (v.is_number_float()) {
    const double x = v.get<double>();
    if (!std::isfinite(x)) return make_error(Errc::invalid_value, "--" + key, "must be finite");
    return v.dump();
  }
  return make_error(Errc::wrong_type, "--" + key, "must be a string, number or boolean");
}
Status bad(const std::string& key, const std::string& allowed, const std::string& got) {
  return make_error(Errc::invalid_value, "--" + key, "must be " + allowed + ", got \"" + got + "\"");
}
}  // namespace

Status apply_stack_options(const json& obj, Inputs& in) {
  if (!obj.is_object()) return make_error(Errc::wrong_type, "options", "must be a JSON object");
  Workload& w = in.workload;
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    const std::string& k = it.key();
    FTCOST_TRY(v, text_of(it.value(), k));
    if (k == "liger") {
      if (v != "on" && v != "off") return bad(k, "on or off", v);
      w.loss_kernel = v == "on" ? LossKernel::liger : LossKernel::stack;
    } else if (k == "offload-activations") {
      if (v != "stack" && v != "on" && v != "off") return bad(k, "stack, on or off", v);
      w.offload = v == "stack" ? Offload::stack : v == "on" ? Offload::on : Offload::off;
      if (v == "on" && !w.checkpointing)
        return make_error(Errc::invalid_value, "--offload-activations",
                          "on needs --checkpointing on (the offloaded tensors are the checkpoints)");
    } else if (k == "optimizer-in-backward") {
      if (v != "on" && v != "off") return bad(k, "on or off", v);
      w.optimizer_in_backward = v == "on";
    } else if (k == "grad-accum") {
      char* end = nullptr;
      const long long n = std::strtoll(v.c_str(), &end, 10);
      if (v.empty() || end == nullptr || *end != '\0' || n < 1 || n > 65536)
        return bad(k, "a whole number from 1 to 65536", v);
      w.grad_accum = n;
    } else if (k == "optimizer") {
      if (v == "adamw")
        w.optimizer = Optimizer::adamw;
      else if (v == "adamw-mixed")
        w.optimizer = Optimizer::adamw_mixed;
      else if (v == "adamw-8bit")
        w.optimizer = Optimizer::adamw_8bit;
      else if (v == "paged-adamw-8bit")
        w.optimizer = Optimizer::paged_adamw_8bit;
      else if (v == "sgd")
        w.optimizer = Optimizer::sgd;
      else if (v == "sgd-momentum")
        w.optimizer = Optimizer::sgd_momentum;
      else
        return bad(k, "adamw, adamw-mixed, adamw-8bit, paged-adamw-8bit, sgd or sgd-momentum", v);
    } else if (k == "kbit-upcast") {
      if (v != "stack" && v != "on" && v != "off") return bad(k, "stack, on or off", v);
      w.kbit_upcast = v == "stack" ? Offload::stack : v == "on" ? Offload::on : Offload::off;
    } else if (k == "packed-doc-len") {
      char* end = nullptr;
      const double x = std::strtod(v.c_str(), &end);
      if (v.empty() || end == nullptr || *end != '\0' || !(x >= 1) || x > (1 << 22))
        return bad(k, "a length in tokens from 1 to 4194304", v);
      w.packed_doc_len = x;
    } else if (k == "host-ram") {
      char* end = nullptr;
      const double x = std::strtod(v.c_str(), &end);
      if (v.empty() || end == nullptr || *end != '\0' || !(x > 0) || x > 1e6)
        return bad(k, "a size in GiB above 0", v);
      w.host_ram_gib = x;
    } else {
      std::string known;
      for (const auto& o : stack_options()) known += (known.empty() ? "" : ", ") + std::string(o.name);
      return make_error(Errc::unknown_key, "--" + k, "is not a stack option; known: " + known);
    }
  }
  if (w.optimizer_in_backward && w.grad_accum > 1)
    return make_error(Errc::invalid_value, "--optimizer-in-backward",
                      "needs --grad-accum 1: the optimizer steps inside the backward of every micro-batch "
                      "(torchtune raises the same)");
  return Ok{};
}

}  // namespace ftcost
