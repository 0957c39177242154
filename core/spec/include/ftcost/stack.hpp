// Software stack profiles (gpu-db/stacks/<id>.json): how the training software behaves.
#pragma once

#include "ftcost/error.hpp"
#include "ftcost/json_util.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ftcost {

struct ModelSpec;

// What one piece of the stack's software can load (model_support.<software> in the profile): the versions the
// profile pins and, per config.json model_type, the first version of that software that loads it ("none": no
// version up to the pinned ones does). A model_type it does not list is not judged (e.g. a model loaded with
// trust_remote_code). Versions are dotted numbers; a range "4.46-4.47" covers 4.46.0 up to any 4.47.x.
struct SoftwareSupport {
  std::string software;                            // "transformers", "unsloth", "torchtune"
  std::string versions;                            // as written: "4.46-4.47", "5.x", "2024.12"
  std::map<std::string, std::string> model_types;  // model_type -> first version, or "none"
};

// The stack an estimate uses when none is given: today's Hugging Face stack (transformers + PEFT + TRL
// SFTTrainer), what most users run. The paper's stack stays what `ftcost paper`, the Paper view and the
// paper's validation rows use (reference rows that name no stack were measured on it).
inline constexpr const char* kDefaultStackId = "hf-trl-2026";
inline constexpr const char* kPaperStackId = "hf-transformers-2024";

// "MAJOR.MINOR[.anything]" as a pair of numbers; {-1, -1} when it does not start with two numbers (an
// unrecorded or unreadable version, which sorts below every stated bound).
using MajorMinor = std::pair<int, int>;
MajorMinor major_minor(const std::string& v);

// One range of recorded software versions a profile covers (software_versions[] of a stack file): a run
// whose deciding `package` is in [from, to) and whose transformers is in [transformers_from,
// transformers_to) maps to the profile (ftcost/run.hpp stack_for_software). An absent bound is open.
struct SoftwareRange {
  std::string package;  // transformers | trl | axolotl | llamafactory
  std::optional<MajorMinor> from, to, transformers_from, transformers_to;
  std::string note;  // appended to why the profile was chosen
  bool covers(MajorMinor package_version, MajorMinor transformers) const;
  // Both ranges name the same package and some versions fall in both (db check refuses that).
  bool overlaps(const SoftwareRange& other) const;
  std::string to_text() const;  // "trl 0.12-1.4, transformers -4.49", for messages
};

struct StackProfile {
  std::string id;
  std::string display_name;
  std::string description;
  std::string moe_execution = "loop";   // loop | grouped
  bool zero3_moe_leaf_modules = false;  // ZeRO-3 fetches each MoE block whole (set_z3_leaf_modules)
  // GPU vendors the stack's software runs on ("NVIDIA": CUDA builds of bitsandbytes, FlashAttention,
  // cuBLAS); empty = any. An estimate for another vendor's GPU carries a warning.
  std::vector<std::string> vendors;
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
  // Loss path (docs/sources/stacks): "full" = the logits of every token are materialised, costing
  // logits_bytes_per_vocab_entry per token and vocabulary entry; "chunked" = only `loss_chunk_tokens` tokens'
  // logits exist at a time (TRL chunked_nll, Unsloth's fused loss), a fixed transient of
  // loss_chunk_tokens x V x logits_bytes_per_vocab_entry; "fused_linear" = the logits are never materialised
  // (Liger fused linear cross-entropy, Apple CCE): fused_ce_bytes_per_hidden x H bytes per token.
  std::string loss_path = "full";
  double loss_chunk_tokens = 0;
  double fused_ce_bytes_per_hidden = 6;
  // Per-token saved tensors of a gated MLP, in units of the intermediate width (HF: gate out, up out, act
  // out, product = 4; Unsloth's fused LoRA MLP / Liger SwiGLU / a compiled MLP keep gate and up only = 2).
  double mlp_saved_intermediates = 4;
  // Gradient checkpoints (the layer inputs) live in pinned host RAM, not on the GPU (Unsloth's "unsloth"
  // checkpointing; torchtune / TRL activation offloading when enabled). The workload can override it.
  bool offload_checkpoints = false;
  // The stack's fused LoRA kernels (Unsloth's LoRA MLP/QKV/O) are used only at lora_dropout 0; otherwise the
  // adapted layers run as PEFT modules and the MLP keeps HF's saved intermediates.
  bool fused_lora_needs_zero_dropout = false;
  // The attention the stack runs when the job does not name one: "flash" (FlashAttention-2 / SDPA's flash
  // kernel) or "xformers" (Unsloth's default install depends on xformers, not flash-attn). Only a stack
  // whose default is xformers accepts --attention xformers.
  std::string default_attention = "flash";
  // How the stack's --optimizer adamw / adamw-mixed runs (torch.optim.AdamW): "foreach" (torch's default for
  // CUDA tensors when neither foreach nor fused is given: the HF Trainer's adamw_torch, which allocates one
  // state-sized temporary list, sqrt(exp_avg_sq), for the step: MemoryBreakdown::optimizer_step_temp) or
  // "fused" (one fused kernel, no temporary: torchtune's configs, the Trainer's adamw_torch_fused default
  // from PyTorch 2.8).
  std::string adamw_implementation = "foreach";
  // How the memory components combine into the peak (MemoryBreakdown::phases): "phases" (the largest of
  // end of forward, start and end of backward: gradients do not exist before backward, logits and saved
  // activations are freed during it) or "sum" (all at once: the paper's profiles, whose memory parameters
  // were fitted that way).
  std::string peak_model = "phases";
  // Relative uncertainty of the activation/loss/allocator part of the peak (the memory range's half width).
  // 0 when the profile states none (the paper's profiles keep their point estimate and their outputs).
  double memory_uncertainty_fraction = 0;
  // QLoRA: bytes per parameter of the weights bitsandbytes leaves unquantized (embeddings, lm_head, norms).
  // 0 = the compute dtype's size; 4 when peft's prepare_model_for_kbit_training upcasts them to fp32.
  double qlora_unquantized_param_bytes = 0;
  std::string version;   // the library versions the profile describes, for display
  std::string alias_of;  // a thin alias (LLaMA-Factory, axolotl): the profile it configures
  // FNV-1a (64 bits) of the JSON the profile was read from (parse_stack; 0 for one built in code): tells two
  // profiles of one id apart (a refit's cache key, RunFitCache).
  std::uint64_t source_digest = 0;
  // step time
  double host_us_per_kernel = 7;      // host (Python + launch) time per forward kernel
  double backward_host_factor = 0.5;  // autograd issues backward kernels from C++
  double host_sync_us = 20;           // one device->host sync (per expert in the eager loop)
  double host_device_overlap = 1;     // 1: launches overlap device work; 0: they add up
  double kernel_floor_us = 3;         // minimum device time of any kernel (launch latency, tail)
  double kernels_per_linear = 1, kernels_per_quantized_linear_extra = 4, kernels_per_lora_module = 5;
  double kernels_per_expert_overhead = 9, kernels_per_attention_block = 23, kernels_per_mamba_block = 20;
  double kernels_per_router = 20, kernels_per_norm = 8;
  // Models trained with their own code (BlackMamba, mamba_ssm) rather than transformers' modules: fused
  // Triton RMSNorm, a sigmoid/max router, no routing-weight gather per expert (stack-facts 5.2, 5.3).
  // Backward of an advanced-indexing gather (x[idx]) in the eager expert loop: index_put_ with accumulate,
  // PyTorch's sort-based path (linear index, radix sort, scatter kernel, zero fill). HF's Mixtral loop
  // gathers twice per expert (hidden states, routing weights), own-code loops once.
  double kernels_per_gather_backward = 0;
  double own_code_kernels_per_router = 20, own_code_kernels_per_norm = 8,
         own_code_kernels_per_expert_overhead = 9;
  double gemm_efficiency = 0.75;  // fraction of dense peak for large GEMMs (before wave quantization)
  double attention_efficiency_factor = 0.8;  // flash attention relative to GEMM efficiency
  // Fraction of the tensor-core peak the stack's GEMM/attention kernels can issue on compute
  // capability 9.x/10.x data-centre GPUs: 1 when they use the architecture's native instructions (wgmma /
  // tcgen05); ~2/3 when they are limited to Ampere-style mma.sync (CUDA < 12 toolchains, FlashAttention-2).
  double hopper_tensor_peak_fraction = 1.0;
  std::string hopper_tensor_note;
  double memory_efficiency = 0.75;  // fraction of spec bandwidth for streaming kernels
  double gemm_memory_efficiency =
      0.75;                          // fraction of spec bandwidth a memory-bound GEMM streams its operands at
  double dequant_efficiency = 0.65;  // fraction of spec bandwidth reached by the NF4 dequant kernels
  double optimizer_efficiency = 0.5;     // fraction of spec bandwidth reached by the optimizer step
  double dequant_bytes_per_param = 6.7;  // DRAM bytes per param per dequantization, GEMM read excluded
  double optimizer_bytes_per_param_fp32 = 36, optimizer_bytes_per_param_16bit = 18;
  double loss_bytes_per_vocab_entry = 40;  // cross-entropy forward+backward traffic per token and vocab entry
  // The kernels between the GEMMs (throughput.ops). "coarse": the kernels_per_* constants and per-module
  // byte counts the fitted profiles were fitted with; "eager": the per-kernel inventory of
  // core/predict/src/ops.cpp (docs/sources/stacks/ops.md), each kernel timed as bytes / bandwidth + launch
  // latency, and host time per op issued (Python + dispatcher forward, dispatcher backward).
  std::string ops_inventory = "coarse";
  std::vector<std::string> ops_fused;  // kernel groups fused: rmsnorm, rope, swiglu, residual
  double python_us_per_op = 0;         // Python time per op of the forward (module code, bindings)
  double dispatch_us_per_op = 0;       // dispatcher + launch per op (a calibration's host_op_overhead_us)
  double optimizer_host_us_per_tensor = 0;  // optimizer step + clipping + zero_grad, Python, per tensor
  double ops_bandwidth_fraction = 0.8;      // element-wise kernels: share of the datasheet bandwidth
  json fit;                                 // provenance of fitted values
  std::vector<std::string> fit_parameters;  // which throughput parameters fit-stack may move (empty: all)
  std::vector<SoftwareRange> software_versions;  // the recorded versions that map to this profile
  // Memory parameters fit-stack scans, in order (memory.fit_parameters; empty: none, they are structural or
  // assumed), and the provenance of the last scan (memory.fit).
  std::vector<std::string> memory_fit_parameters;
  json memory_fit;
  std::string throughput_note;
  // model_support: per software, the model types it loads (empty: the profile does not say).
  std::vector<SoftwareSupport> model_support;
  json to_json() const;
};

Result<StackProfile> parse_stack(const json& doc, const std::string& source);

// The GPUs the profile's parameters were fitted on: fit.gpus (written by `ftcost fit-stack`) or fit.gpu (a
// profile fitted to a user's run). Empty for a profile that is not fitted or does not say.
std::vector<std::string> stack_fit_gpus(const StackProfile& s);

// Whether the stack's software can load the model (its config model_type) at the versions the profile pins.
// ok false: no pinned version loads it, and message says which software version would ("Qwen3-30B-A3B
// (model_type qwen3_moe) needs transformers >= 4.51.0; this profile (unsloth-2024q4) pins 4.46-4.47: it
// cannot load this model"). ok true with a message: only the later of the pinned versions load it. ok true,
// empty message: supported, or not judged (the profile lists no model_support, or not this model_type; models
// trained with their own code, BlackMamba and Mamba, do not go through the stack's loader).
struct StackSupport {
  bool ok = true;
  std::string message;
};
StackSupport stack_supports(const StackProfile& s, const ModelSpec& m);

// A version or range as model_support writes it, checked: empty when well formed, else what is wrong.
std::string model_support_version_problem(const std::string& v, bool range);

// Empty when the stack runs on `gpu_vendor`; otherwise a warning naming both (for estimates and tables).
std::string stack_vendor_warning(const StackProfile& s, const std::string& gpu_id,
                                 const std::string& gpu_vendor);

}  // namespace ftcost
