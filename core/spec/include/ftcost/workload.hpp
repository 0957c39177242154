// What is being run: method, LoRA, precision, optimizer, checkpointing, attention, MoE mode,
// sequence lengths and padding, batch, dataset size and epochs.
#pragma once

#include "ftcost/dataset.hpp"
#include "ftcost/error.hpp"
#include "ftcost/model.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ftcost {

enum class Method { full, lora, qlora };
enum class Quant { none, nf4_dq, nf4, int8 };
enum class Optimizer { adamw, adamw_mixed, adamw_8bit, sgd, sgd_momentum, paged_adamw_8bit, paged_adamw };
// Where the loss kernel comes from: the stack profile's own loss path, or Liger's fused linear
// cross-entropy (which never materialises the logits), whatever the stack's default.
enum class LossKernel { stack, liger };
// Activation offloading to host RAM: the stack's default, or forced on/off.
enum class Switch { stack, on, off };  // a stack-dependent default, or forced on or off
enum class Padding { longest, max_length, packing };
enum class MoeMode { sparse, dense };
// flash: FlashAttention-2 (or SDPA's flash kernel); eager: matmul + softmax with the scores kept;
// xformers: xformers' memory_efficient_attention as Unsloth's default install runs it (grouped-query K/V
// repeated to every query head under autograd, unsloth/models/llama.py LlamaAttention_fast_forward).
enum class Attention { flash, eager, xformers };
// torch.optim.AdamW's implementation: the stack's default, foreach (_multi_tensor_adam: one state-sized
// temporary list at the step; the HF Trainer's adamw_torch) or fused (_fused_adamw: one kernel, no temporary;
// adamw_torch_fused, torchtune's fused: True).
enum class AdamwImpl { stack, foreach, fused };
// The PEFT LoRA variant (docs/sources/peft-variants.md): plain LoRA; DoRA (LoraConfig use_dora: a trained
// magnitude vector per adapted module and a weight norm each forward, peft tuners/lora/dora.py
// DoraLinearLayer); LoRA-FA (peft optimizers/lorafa.py create_lorafa_optimizer: lora_A frozen, only lora_B
// trained).
enum class LoraVariant { lora, dora, lora_fa };

// The training objective (issue 42; docs/sources/trl-preference.md, TRL 1.10.0.dev0 @ f2cd5771). sft: one
// sequence per sample. The DPO family trains on preference pairs: dpo (DPOTrainer: chosen and rejected
// concatenated along the batch, a frozen reference), orpo and simpo (no reference: ORPOTrainer, CPOTrainer
// loss_type "simpo"), kto (KTOTrainer: one completion per sample plus a mismatched KL completion, a
// reference). grpo (GRPOTrainer): completions generated per prompt, then trained on.
enum class Objective { sft, dpo, orpo, simpo, kto, grpo };
// How GRPO generates its completions: the policy's own model.generate (TRL use_vllm=False), vLLM in the
// training process on the same GPU (vllm_mode="colocate"), or a vLLM server on GPUs of its own
// (vllm_mode="server", `trl vllm-serve`).
enum class Generation { hf, vllm_colocate, vllm_server };

// The objective's own settings (the TRL config fields they stand for in brackets).
struct ObjectiveConfig {
  Objective objective = Objective::sft;
  // DPO/KTO precompute_ref_log_probs: the reference log-probs computed once over the dataset before training
  // (no reference model kept, no reference forward per step).
  bool precompute_ref = false;
  double beta = 0;               // GRPO beta: the KL coefficient; 0 (TRL's default) loads no reference
  std::int64_t generations = 8;  // GRPO num_generations per prompt
  double completion_len = 512;   // GRPO max_completion_length: tokens generated per completion
  std::int64_t iterations = 1;   // GRPO num_iterations (mu): optimisation passes per generation
  Generation generation = Generation::hf;
  double vllm_memory_fraction = 0.3;  // vllm_gpu_memory_utilization (colocate: TRL's default 0.3)
  std::int64_t vllm_gpus = 1;         // server mode: GPUs the vLLM server runs on (data parallel)
  double reward_s = 0;                // reward computation, seconds per completion (the host's)
  // The completions' length distribution (a dataset's completion_histogram), when given; else every
  // completion is counted at completion_len.
  bool has_completion_lengths = false;
  LengthDistribution completion_lengths = LengthDistribution::fixed(1);
  bool paired() const;      // dpo, orpo, simpo: chosen + rejected per sample
  bool preference() const;  // the DPO family (dpo, orpo, simpo, kto)
  bool grpo() const { return objective == Objective::grpo; }
  // What one "sample" of --queries and of the throughput is: "samples", "pairs" (paired objectives) or
  // "prompts" (grpo).
  const char* sample_noun() const { return grpo() ? "prompts" : paired() ? "pairs" : "samples"; }
  // Whether a frozen reference's log-probs are computed during training (not precomputed): dpo and kto unless
  // precomputed, grpo with beta > 0.
  bool reference_pass() const;
  // Sequences through forward and backward per sample: 2 for the paired objectives, else 1.
  double train_sequences() const { return paired() ? 2.0 : 1.0; }
};

// PEFT modules_to_save: modules trained in full beside the adapters (ModulesToSaveWrapper keeps the frozen
// original and a trained copy).
struct ModulesToSave {
  bool embed_tokens = false;
  bool lm_head = false;
  bool any() const { return embed_tokens || lm_head; }
};

// Parses a comma-separated list of modules_to_save names (embed_tokens, lm_head); `field` names the flag in
// errors.
Result<ModulesToSave> parse_modules_to_save(const std::string& list, const std::string& field);

// LoRA target modules, canonical (PEFT names map onto these).
struct LoraTargets {
  bool q = false, k = false, v = false, o = false;
  bool mlp = false;       // dense FFN gate/up/down
  bool mlp_down = false;  // only down_proj (when gate/up not chosen)
  bool mlp_gate_up = false;
  bool expert_gate_up = false, expert_down = false;
  bool shared = false;
  bool router = false;
  bool mamba = false;
  bool lm_head = false;
  std::vector<std::string> names;  // as given, for display
  bool any() const;
};

// Parses a comma-separated list of PEFT module names (q_proj, w1, gate, ...) or groups (attention,
// experts, router, mlp, mamba, all-linear). `field` names the flag in errors.
Result<LoraTargets> parse_lora_targets(const std::string& list, const std::string& field);

struct Workload {
  Method method = Method::qlora;
  Quant quant = Quant::nf4_dq;
  std::int64_t lora_rank = 16;
  LoraTargets lora_targets;
  double lora_dropout = 0;  // PEFT lora_dropout: p > 0 puts an nn.Dropout on each adapter's input
  LoraVariant lora_variant = LoraVariant::lora;  // --lora-variant
  // PEFT use_rslora: the adapter scale is lora_alpha / sqrt(r) instead of lora_alpha / r
  // (tuners/lora/layer.py LoraLayer.update_layer); nothing ftcost counts changes.
  bool rslora = false;
  ModulesToSave modules_to_save;   // --modules-to-save
  ObjectiveConfig objective;       // --objective and its options
  std::string precision = "bf16";  // compute dtype: bf16 | fp16 | fp32
  // --fp8: FP8 training of the linear layers (full fine-tuning): off | tensorwise | rowwise (torchao float8,
  // Float8LinearRecipeName) | te-delayed | te-current (Transformer Engine's te.Linear through accelerate's
  // convert_model, DelayedScaling or Float8CurrentScaling); the master weights stay in `precision`.
  std::string fp8 = "off";
  bool fp8_te() const { return fp8 == "te-delayed" || fp8 == "te-current"; }
  Optimizer optimizer = Optimizer::adamw;
  bool checkpointing = true;
  bool tiled_loss = false;  // --tiled-loss (ALST; see tiled_mlp)
  // --fp8-all-gather: torchao's enable_fsdp_float8_all_gather (tensorwise only): FSDP2 all-gathers the float8
  // linears' weights cast to FP8 (1 B per parameter) instead of in the parameter dtype (parallel.cpp).
  bool fp8_all_gather = false;
  // Transformer Engine on a GPU whose FP8 GEMMs take only the TN layout (compute capability 8.9, 9.0, 12.x:
  // transformer_engine/pytorch/utils.py is_non_tn_fp8_gemm_supported is false): an FP8 tensor used both ways
  // keeps a transposed copy beside its data (Float8Quantizer inner_tensor_specs `_transpose`); set by --fp8.
  bool fp8_te_transpose = true;
  Attention attention = Attention::flash;
  MoeMode moe = MoeMode::sparse;
  std::int64_t top_k_override = 0;  // 0 = the model's configured top-k
  // Sequence lengths: a fixed length (dataset == nullptr) or a dataset's distribution.
  double seq_len = 0;    // fixed length, tokens (0 when a dataset is used)
  bool seq_max = false;  // --seq max: estimate at the longest length that fits at batch 1
  LengthDistribution lengths = LengthDistribution::fixed(512);
  Padding padding = Padding::longest;
  double max_length = 1024;    // truncation (cutoff_len)
  double template_tokens = 0;  // prompt-template tokens added to every sample
  std::int64_t batch = 0;      // 0 = chosen: the fastest (batch_fastest) or the largest that fits
  // --batch fastest (the default): with batch 0, the micro-batch of the highest throughput among those whose
  // memory range's upper end fits (padding to the longest sample can make a larger batch slower).
  bool batch_fastest = false;
  // --effective-batch: micro-batch x grad-accum (x data-parallel replicas) the job keeps; with a chosen
  // batch the grad-accum follows from it (0 = not given: grad_accum as given).
  std::int64_t effective_batch = 0;
  std::int64_t grad_accum = 1;  // micro-batches per optimizer step (gradient accumulation)
  double queries = 0;
  double epochs = 1;
  // Modern-stack options (issue #13). Defaults reproduce the paper's stack.
  LossKernel loss_kernel = LossKernel::stack;  // --liger
  Switch offload = Switch::stack;              // --offload-activations
  bool optimizer_in_backward = false;          // torchtune optimizer_in_bwd: no full gradient buffer
  double host_ram_gib = 0;                     // --host-ram: host RAM available for offloading (0: unchecked)
  // Arctic Long Sequence Training (DeepSpeed runtime/sequence_parallel/ulysses_sp.py, memory.cpp):
  // --tiled-mlp computes each dense MLP in sequence shards (TiledMLP): 0 off, kTiledMlpAuto ALST's count
  // (ceil(tokens / hidden_size)), else that many shards; --tiled-loss (tiled_loss, beside checkpointing)
  // computes the logits and loss per tile of about 1 GiB of fp32 logits (ArcticTraining's
  // sequence_tiled_compute).
  static constexpr std::int64_t kTiledMlpAuto = -1;
  std::int64_t tiled_mlp = 0;
  // peft prepare_model_for_kbit_training (QLoRA): the stack's default, or forced on/off (LLaMA-Factory
  // does not call it; TRL's SFTTrainer did from 2024-03 to 2025-08).
  Switch kbit_upcast = Switch::stack;
  AdamwImpl adamw_impl = AdamwImpl::stack;  // --adamw-impl
  // Packing with document masking (FA2 varlen with position_ids, torchtune/flex block-causal masks): each
  // token attends within its own document, so attention costs the document length, not the row length.
  // 0 = not given: the dataset's mean (truncated) length with --padding packing, else the padded length.
  double packed_doc_len = 0;
  // Length the attention of one token spans on average, for a batch padded/packed to `padded_len`.
  double attention_len(double padded_len) const;

  // Whether this run's gradient checkpoints live in host RAM (the stack's default unless overridden).
  bool offloads(bool stack_default) const {
    if (!checkpointing) return false;
    return offload == Switch::stack ? stack_default : offload == Switch::on;
  }

  double compute_bytes() const;                           // bytes per activation element
  std::int64_t active_experts(const ModelSpec& m) const;  // experts per token in this run
  // Padded length that sets peak memory: the longest batch an epoch will meet.
  double memory_seq_len() const;
  // The same without GRPO's completion: the prompt's (every other objective: memory_seq_len()).
  double prompt_memory_seq_len() const;
  // Tokens every training sequence adds to its prompt: GRPO's completion (max_completion_length), else 0.
  double completion_tokens() const { return objective.grpo() ? objective.completion_len : 0.0; }
  // The completion a group of `n` completions is padded or decoded to: the expected longest of n draws of the
  // completion lengths, capped at completion_len (the cap itself without a distribution); 0 unless grpo.
  double completion_padded(double n) const;
  // Tokens a completion holds on average: the distribution's mean (capped at completion_len), else the cap; 0
  // unless grpo.
  double mean_completion_tokens() const;
  // Mean padded length per sample for a batch of `b` (compute and throughput use this).
  double mean_padded_len(std::int64_t b) const;
  double mean_prompt_padded_len(std::int64_t b) const;  // without GRPO's completion
  // Tokens of data per sample (no padding): the fixed length, or the template plus the mean truncated length.
  double mean_data_len() const;
  double mean_prompt_data_len() const;  // without GRPO's completion
  // Samples per row of a batch: 1, or with --padding packing (a dataset) the max-length row's share of the
  // mean truncated sample.
  double queries_per_row() const;
  // Rows an epoch feeds the trainer: queries / queries_per_row().
  double rows_per_epoch() const { return queries / queries_per_row(); }
};

const char* method_name(Method m);
const char* quant_name(Quant q);
const char* optimizer_name(Optimizer o);
const char* padding_name(Padding p);
const char* attention_name(Attention a);
const char* lora_variant_name(LoraVariant v);
const char* objective_name(Objective o);
const char* generation_name(Generation g);

}  // namespace ftcost
