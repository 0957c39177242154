// The software groups of the option table (options_internal.hpp): --headroom, --stack and --attention, the
// modern-stack kernels and memory savers (issue 13), and the step-time model's --model-kind and --routing.
#include "ftcost/suggest.hpp"
#include "ftcost/units.hpp"
#include "options_internal.hpp"

#include <cmath>

namespace ftcost {

namespace {

// --stack's value: a profile of the database, or a profile file (a user's refit: the database's loader, less
// the aliases it resolves there).
Result<StackProfile> stack_of(const ResolveState& st, const std::string& v) {
  if (const StackProfile* sp = st.db.stack(v)) return *sp;
  if (!looks_like_path(v))
    return make_error(
        Errc::unknown_id, "--stack",
        "unknown stack \"" + v + "\"" + known_ids_hint(v, option_ids("stacks", st.db)) +
            " (or a path to a stack profile JSON, e.g. one `ftcost fit-stack --run R --write FILE` "
            "wrote)");
  FTCOST_TRY(doc, read_doc(st, v, "--stack"));
  if (doc.is_object() && doc.contains("alias_of"))
    return make_error(
        Errc::invalid_value, "--stack",
        v + ": alias_of: an alias profile is read only from the database (gpu-db/stacks/); give "
            "its id, or a complete profile file");
  auto sp = parse_stack(doc, v);
  if (!sp.ok()) return in_file(v, sp.error());
  return sp.value();
}

// --stack: the profile, and a warning when its software does not run on the GPU's vendor.
Status apply_stack(ResolveState& st, const std::string& v) {
  FTCOST_TRY(stack, stack_of(st, v));
  st.in.stack = stack;
  const std::string vendor_warning = stack_vendor_warning(st.in.stack, st.in.gpu.id, st.in.gpu.vendor);
  if (!vendor_warning.empty()) st.in.warnings.push_back(vendor_warning);
  return Ok{};
}

// --attention when the job names none: what the stack's default install runs (Unsloth's: xformers).
DefaultValue attention_default(const ResolveState& st) {
  const bool xformers = st.in.stack.default_attention == "xformers";
  // FlashAttention-2 needs compute capability 8.0; below it the flash class is SDPA's memory-efficient kernel
  const auto cc = parse_compute_capability(st.in.gpu.compute_capability);
  const bool fa2 = !cc || cc->first >= 8;
  DefaultValue d =
      xformers ? fixed_default("xformers",
                               "as " + st.in.stack.id + "'s default install runs: xformers, not flash-attn")
               : fixed_default("flash", fa2 ? "FlashAttention-2"
                                            : "SDPA's memory-efficient kernel: FlashAttention-2 needs "
                                              "compute capability 8.0");
  d.listed = st.in.model.layers_with(Mixer::attention) > 0;
  return d;
}

// xformers only where the stack runs it: transformers has no xformers backend.
Status apply_attention(ResolveState& st, const std::string& v) {
  if (v == "xformers" && st.in.stack.default_attention != "xformers")
    return make_error(Errc::invalid_value, "--attention",
                      "xformers is Unsloth's attention backend (unsloth-* stacks); " + st.in.stack.id +
                          " runs flash, sdpa or eager");
  // SDPA's flash and memory-efficient backends are fused kernels that keep no score matrix: flash's model
  st.in.workload.attention = v == "flash" || v == "sdpa" ? Attention::flash
                             : v == "eager"              ? Attention::eager
                                                         : Attention::xformers;
  return Ok{};
}

std::string only_torch_adamw(const ResolveState& st) {
  const Optimizer opt = st.in.workload.optimizer;
  if (opt == Optimizer::adamw || opt == Optimizer::adamw_mixed) return "";
  return "applies only to torch's AdamW (--optimizer adamw or adamw-mixed)";
}

// --tiled-mlp off | on | N: ALST's TiledMLP with its own shard count (on) or N shards.
Status apply_tiled_mlp(ResolveState& st, const std::string& v) {
  Workload& w = st.in.workload;
  w.tiled_mlp = v == "off" ? 0 : v == "on" ? Workload::kTiledMlpAuto : std::atoll(v.c_str());
  return Ok{};
}

Option headroom_option() {
  Option o = declare_option("headroom", OptionKind::real, "gpu", "Headroom");
  o.help = "GPU memory to keep free for other processes (a desktop display, a second job)";
  o.details =
      "Memory the job must leave free, taken off the GPU's usable memory before the maximum batch is "
      "computed. A GPU that also drives a display typically holds 0.3-1.5 GiB for it (check nvidia-smi). "
      "Independently of this, a job above 92% of the usable memory is marked tight.";
  o.unit = "GiB";
  o.lo = 0;
  o.hi = 1024;
  o.default_help = "0 (the usable memory is the driver-reported total)";
  o.reads = {"gpu"};
  o.apply = [](ResolveState& st, const std::string& v) -> Status {
    const double gib = std::strtod(v.c_str(), nullptr);
    if (gib * kGiB >= st.in.gpu.usable_bytes())
      return make_error(Errc::out_of_range, "--headroom",
                        "keeps " + v + " GiB free, but " + st.in.gpu.id + " has only " +
                            number_text(std::floor(st.in.gpu.usable_bytes() / kGiB * 10) / 10) +
                            " GiB usable");
    st.in.gpu.reserved_mib = gib * 1024.0;
    return Ok{};
  };
  return o;
}

Option stack_option() {
  Option o = declare_option("stack", OptionKind::id_or_path, "gpu", "Software");
  o.help = "Software stack profile: an id, or a profile JSON file (e.g. from fit-stack --run --write)";
  o.details =
      "Software stack profile: how the training software behaves (per-kernel and per-expert host "
      "overheads, MoE execution as a loop over experts or grouped GEMM, memory overheads). Its constants "
      "are fitted from reference measurements; hover an entry to see them.";
  o.id_list = "stacks";
  o.default_help =
      std::string(kDefaultStackId) + " (today's HF/TRL stack; the paper's is " + kPaperStackId + ")";
  o.reads = {"gpu"};
  o.default_rule = [](const ResolveState&) {
    return fixed_default(kDefaultStackId,
                         "today's Hugging Face stack (transformers + PEFT + TRL SFTTrainer), what most users "
                         "run; the paper's is " +
                             std::string(kPaperStackId));
  };
  o.apply = apply_stack;
  return o;
}

// After --stack: the default is the stack's (Unsloth's default install runs xformers).
Option attention_option() {
  Option o = declare_option("attention", OptionKind::choice, "method", "Attention");
  o.help = "Attention implementation";
  o.details =
      "Attention implementation: flash (FlashAttention-2: no seq x seq score matrix kept), sdpa "
      "(torch's scaled_dot_product_attention, transformers' default attn_implementation: its flash or "
      "memory-efficient backend, fused like FlashAttention-2 and modelled as flash), eager (PyTorch matmul "
      "+ softmax: stores the scores, memory grows with the square of the length) or xformers (Unsloth "
      "without flash-attn installed, its default: memory_efficient_attention, with grouped-query K/V "
      "copied to every query head for the backward pass).";
  o.values = {{"flash", "FlashAttention-2", ""},
              {"sdpa", "SDPA", "torch SDPA, modelled as flash"},
              {"eager", "eager", ""},
              {"xformers", "xformers", ""}};
  o.default_help = "the stack's: flash (xformers for unsloth-*)";
  o.reads = {"model", "gpu", "stack"};
  o.default_rule = attention_default;
  o.apply = apply_attention;
  return o;
}

Option liger_option() {
  Option o = declare_option("liger", OptionKind::toggle, "gpu", "Liger kernels");
  o.help = "Liger kernels (use_liger_kernel): fused linear cross-entropy, RMSNorm, SwiGLU";
  o.details =
      "Liger-Kernel (TRL/LLaMA-Factory/axolotl use_liger_kernel): the fused linear cross-entropy never "
      "materialises the logits (chunks of about N x H elements), RMSNorm saves its 16-bit input, SwiGLU "
      "recomputes its product in backward. docs/sources/stacks/liger.md.";
  o.values = {{"on", "on", ""}, {"off", "off", ""}};
  o.default_help = "off";
  o.reads = {"model"};
  o.default_rule = unlisted_default("off");
  o.applies = [](const ResolveState& st) -> std::string {
    return own_code_without_checkpointing(st.in.model)
               ? "applies only to transformers models (BlackMamba/Mamba run their own training code)"
               : "";
  };
  o.apply = stores_choice(&Workload::loss_kernel, {{"on", LossKernel::liger}, {"off", LossKernel::stack}});
  return o;
}

Option offload_activations_option() {
  Option o = declare_option("offload-activations", OptionKind::choice, "gpu", "Offload act.");
  o.help = "Gradient checkpoints in host RAM (Unsloth 'unsloth' checkpointing, torchtune/TRL offloading)";
  o.details =
      "Activation offloading: the per-layer checkpoints live in pinned host RAM and cross PCIe twice a "
      "step, overlapped with compute. 'stack' takes the stack profile's default (on for unsloth-*, off "
      "otherwise). The host RAM used is reported; --host-ram checks it.";
  o.values = {{"stack", "stack default", "as the stack profile runs by default"},
              {"on", "on", "checkpoints in host RAM"},
              {"off", "off", "checkpoints on the GPU"}};
  o.default_help = "stack";
  o.reads = {"checkpointing", "stack"};
  o.default_rule = [](const ResolveState& st) {
    DefaultValue d = fixed_default(
        "stack", st.in.stack.offload_checkpoints
                     ? "checkpoints offloaded to host RAM, as " + st.in.stack.id + " does by default"
                     : "checkpoints on the GPU, as " + st.in.stack.id + " runs");
    d.listed = st.in.stack.offload_checkpoints;
    return d;
  };
  o.applies = [](const ResolveState& st) -> std::string {
    return st.in.workload.checkpointing
               ? ""
               : "applies only with --checkpointing on (it offloads the checkpoints)";
  };
  o.apply =
      stores_choice(&Workload::offload, {{"stack", Switch::stack}, {"on", Switch::on}, {"off", Switch::off}});
  return o;
}

Option host_ram_option() {
  Option o = declare_option("host-ram", OptionKind::real, "gpu", "Host RAM");
  o.help = "Host RAM available for offloading, per node (checked: a job that needs more does not fit)";
  o.details =
      "Host RAM the offloaded checkpoints and, with --offload, the offloaded model states of all the "
      "node's GPUs may use (a --node preset's RAM otherwise). With more than one GPU or --offload a "
      "job that needs more does not fit (no time, no cost); one GPU's offloaded checkpoints get a "
      "warning. With nothing offloaded it applies to nothing, and a warning says so.";
  o.unit = "GiB";
  o.lo = 0.5;
  o.hi = 1e5;
  o.default_help = "not checked";
  o.apply = stores(&Workload::host_ram_gib, real_value);
  return o;
}

Option tiled_mlp_option() {
  Option o = declare_option("tiled-mlp", OptionKind::count, "gpu", "Tiled MLP");
  o.help = "ALST's TiledMLP: each dense MLP computed in sequence shards (on: ceil(tokens / hidden) shards)";
  o.details =
      "Arctic Long Sequence Training's TiledMLP (DeepSpeed runtime/sequence_parallel/ulysses_sp.py, as "
      "ArcticTraining and ms-swift's --use_tiled_mlp run it): the MLP runs shard by shard without "
      "gradients and saves only its input; backward re-runs each shard with gradients. The MLP's "
      "intermediate (gate, up, product) is then held for one shard, not the sequence. 'on' takes the "
      "code's shard count, ceil(tokens per GPU / hidden_size); a number sets it (ms-swift's "
      "tiled_mlp_num_shards). The step time has the MLP's forward once more in the backward, as TiledMLP "
      "re-runs each shard there.";
  o.unit = "shards";
  o.values = {{"off", "off", "the MLP as the model runs it"},
              {"on", "on", "ALST's shard count, ceil(tokens / hidden_size)"}};
  o.lo = 1;
  o.hi = 1 << 20;
  o.default_help = "off";
  o.default_rule = unlisted_default("off");
  o.apply = apply_tiled_mlp;
  return o;
}

Option tiled_loss_option() {
  Option o = declare_option("tiled-loss", OptionKind::toggle, "gpu", "Tiled loss");
  o.help = "ALST's tiled logits + loss: about 1 GiB of fp32 logits at a time (a fused loss is kept)";
  o.details =
      "ArcticTraining's SFTTrainer.loss (DeepSpeed's sequence_tiled_compute): the lm_head and the loss run "
      "on tiles of the sequence sized to about 1 GiB of fp32 logits, each tile's forward re-run in its "
      "backward, so the full logits never exist. With --liger on, or a stack whose loss is already fused, "
      "the fused loss is used instead, as ArcticTraining does with Liger models.";
  o.values = {{"off", "off", ""}, {"on", "on", ""}};
  o.default_help = "off";
  o.default_rule = unlisted_default("off");
  o.apply = stores(&Workload::tiled_loss, on_value);
  return o;
}

Option optimizer_in_backward_option() {
  Option o = declare_option("optimizer-in-backward", OptionKind::toggle, "method", "Opt. in bwd");
  o.help = "Step each parameter in the backward pass (torchtune optimizer_in_bwd): no full gradient buffer";
  o.details =
      "torchtune optimizer_in_bwd: each parameter is stepped and its gradient freed as soon as it is "
      "accumulated (post-accumulate-grad hooks), so only the largest tensor's gradient exists at a time. "
      "Needs --grad-accum 1.";
  o.values = {{"on", "on", ""}, {"off", "off", ""}};
  o.default_help = "off";
  o.reads = {"grad-accum", "effective-batch"};
  o.default_rule = unlisted_default("off");
  o.apply = [](ResolveState& st, const std::string& v) -> Status {
    if (v == "on" && st.in.workload.grad_accum > 1)
      return make_error(Errc::invalid_value, "--optimizer-in-backward",
                        "needs --grad-accum 1: the optimizer steps inside every micro-batch's backward "
                        "(torchtune raises the same)");
    st.in.workload.optimizer_in_backward = v == "on";
    return Ok{};
  };
  return o;
}

Option adamw_impl_option() {
  Option o = declare_option("adamw-impl", OptionKind::choice, "method", "AdamW impl.");
  o.help =
      "torch AdamW: foreach (adamw_torch, a state-sized temporary at the step) or fused "
      "(adamw_torch_fused)";
  o.details =
      "torch.optim.AdamW's implementation. foreach (_multi_tensor_adam, the HF Trainer's optim adamw_torch "
      "and torch's default on CUDA) builds sqrt(exp_avg_sq) for every parameter at once: one state-sized "
      "temporary list at the optimizer step. fused (_fused_adamw: optim adamw_torch_fused, torchtune's "
      "fused: True, the default of transformers 5 on PyTorch 2.8+) updates in one kernel without it. "
      "Changes the step's peak memory; the step time uses the stack's fitted optimizer efficiency either "
      "way.";
  o.values = {{"stack", "stack default", "as the stack profile does"},
              {"foreach", "foreach", "adamw_torch"},
              {"fused", "fused", "adamw_torch_fused"}};
  o.default_help = "stack";
  o.reads = {"optimizer"};
  o.default_rule = unlisted_default("stack");
  o.applies = only_torch_adamw;
  o.apply = stores_choice(
      &Workload::adamw_impl,
      {{"foreach", AdamwImpl::foreach}, {"fused", AdamwImpl::fused}, {"stack", AdamwImpl::stack}});
  return o;
}

Option kbit_upcast_option() {
  Option o = declare_option("kbit-upcast", OptionKind::choice, "method", "k-bit upcast");
  o.help = "QLoRA: peft prepare_model_for_kbit_training (fp32 embeddings, lm_head, norms and activations)";
  o.details =
      "peft's prepare_model_for_kbit_training casts every unquantized parameter to fp32, which makes the "
      "norm outputs, the 4-bit MLP outputs and the residual stream fp32 too. TRL's SFTTrainer called it "
      "from 2024-03 to 2025-08 (hf-trl-2024q1/q4: on); LLaMA-Factory prepares the model itself (off).";
  o.values = {{"stack", "stack default", "as the stack profile does"},
              {"on", "on", "fp32 upcast"},
              {"off", "off", "no upcast (LLaMA-Factory)"}};
  o.default_help = "stack";
  o.reads = {"method"};
  o.default_rule = unlisted_default("stack");
  o.applies = [](const ResolveState& st) -> std::string {
    return st.in.workload.method == Method::qlora ? "" : "applies only to --method qlora";
  };
  o.apply = stores_choice(&Workload::kbit_upcast,
                          {{"stack", Switch::stack}, {"on", Switch::on}, {"off", Switch::off}});
  return o;
}

Option packed_doc_len_option() {
  Option o = declare_option("packed-doc-len", OptionKind::real, "data", "Doc. length");
  o.help = "Packing with document masking: mean length of the documents inside a packed row";
  o.details =
      "With packing and document masking (TRL padding_free / position_ids, torchtune packed datasets) a "
      "token attends within its own document, so attention costs the document length, not the row "
      "length. Default: the dataset's mean length with --padding packing; without it, the row length.";
  o.unit = "tokens";
  o.lo = 1;
  o.hi = 1 << 22;
  o.default_help = "the dataset's mean length with --padding packing, else the row length";
  o.apply = stores(&Workload::packed_doc_len, real_value);
  return o;
}

Option model_kind_option() {
  Option o = declare_option("model-kind", OptionKind::choice, "gpu", "Step model");
  o.help = "How step time is predicted";
  o.details =
      "How step time is predicted: step (ftcost's model: every op's FLOPs and bytes on the GPU's "
      "peaks, or on your calibration, plus the stack profile's host overheads; any GPU) or paper (the "
      "paper's Eq. (2) fitted to its A40 sweeps; A40 only).";
  o.values = {{"step", "ftcost step model (any GPU)", "the step-time model"},
              {"paper", "paper's Eq. (2) (A40 only)", "Eq. (2), A40 only"}};
  o.default_help = "step";
  o.default_rule = unlisted_default("step");
  o.apply = stores(&Inputs::model_kind, text_value);
  return o;
}

Option routing_option() {
  Option o = declare_option("routing", OptionKind::text, "method", "Routing");
  o.help = "Expert load: uniform | paper-mixtral | paper-blackmamba (Fig. 11) | skew:S (Zipf exponent)";
  o.details =
      "How tokens spread over the experts (expert load): uniform; the paper's measured distributions "
      "for Mixtral or BlackMamba (Fig. 11, 8 experts); or skewed (Zipf exponent S: larger = more "
      "imbalanced). The busiest expert sets the pace of the per-expert loop.";
  o.values = {{"uniform", "uniform", "every expert gets the same share"},
              {"paper-mixtral", "paper: Mixtral (Fig. 11)", "measured before fine-tuning, 8 experts"},
              {"paper-blackmamba", "paper: BlackMamba (Fig. 11)", "measured before fine-tuning, 8 experts"},
              {"skew:0.5", "skewed, S = 0.5", "Zipf exponent 0.5"},
              {"skew:1", "skewed, S = 1", "Zipf exponent 1"},
              {"skew:2", "skewed, S = 2", "Zipf exponent 2"}};
  o.default_help = "uniform";
  o.reads = {"model"};
  o.default_rule = [](const ResolveState& st) {
    DefaultValue d = fixed_default("uniform", "tokens spread evenly over the experts");
    d.listed = st.in.model.is_moe();
    return d;
  };
  o.apply = [](ResolveState& st, const std::string& v) -> Status {
    if (st.in.model.is_moe()) {
      FTCOST_TRY(shares, expert_shares(v, st.in.model.moe.experts));
      st.in.expert_shares = shares;
    } else if (v != "uniform") {
      return make_error(Errc::invalid_value, "--routing", "applies only to MoE models");
    }
    st.in.routing = v;
    return Ok{};
  };
  return o;
}

}  // namespace

// The GPU memory kept free, the software stack and the attention kernel (its default is the stack's).
void add_stack_options(std::vector<Option>& table) {
  table.push_back(headroom_option());
  table.push_back(stack_option());
  table.push_back(attention_option());
}

// The modern-stack options (issue 13): kernels, offloading and memory savers.
void add_kernel_options(std::vector<Option>& table) {
  table.push_back(liger_option());
  table.push_back(offload_activations_option());
  table.push_back(host_ram_option());
  table.push_back(tiled_mlp_option());
  table.push_back(tiled_loss_option());
  table.push_back(optimizer_in_backward_option());
  table.push_back(adamw_impl_option());
  table.push_back(kbit_upcast_option());
  table.push_back(packed_doc_len_option());
}

// How step time is predicted, and the expert load.
void add_step_model_options(std::vector<Option>& table) {
  table.push_back(model_kind_option());
  table.push_back(routing_option());
}

}  // namespace ftcost
