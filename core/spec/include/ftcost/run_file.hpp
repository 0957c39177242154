// A user's training run as its file states it (`ftcost.run/1`, written by tools/ftcost_probe.py;
// docs/runs.md): the recorder, the GPU and the model as recorded, the software versions, the training
// arguments in ftcost's names and the step records. parse_run_record checks every field that needs no
// database and no GPU (types, allowed values, whole numbers, times and shapes, a config.json ftcost can
// read); check_run_memory checks the memory figures against the GPU's. ftcost/run.hpp's parse_run resolves
// the GPU, the model preset and the software stack against a database, calls check_run_memory with that GPU
// and builds the estimate's request.
#pragma once

#include "ftcost/error.hpp"
#include "ftcost/gpu.hpp"
#include "ftcost/json_util.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ftcost {

inline constexpr const char* kRunSchema = "ftcost.run/1";

struct RunMicroBatch {
  std::int64_t batch = 0;  // samples in the micro-batch
  double seq_len = 0;      // padded length (tokens per sample as the kernels see them)
  double tokens = -1;      // non-padding tokens; -1 = not recorded
  bool assumed = false;    // shape given by the user for an importer, not observed
};

struct RunStep {
  std::int64_t step = 0;
  double wall_s = 0;                 // wall time of `count` optimizer steps together
  std::int64_t count = 1;            // optimizer steps this record spans (an importer's aggregate: many)
  bool warmup = false;               // recorded, not fitted
  std::vector<RunMicroBatch> micro;  // the micro-batches of ONE optimizer step (gradient accumulation)
  double max_allocated_bytes = -1;   // torch.cuda.max_memory_allocated during the step; -1 = none
  double max_reserved_bytes = -1;    // torch.cuda.max_memory_reserved; -1 = none
  // Whether the file states each figure (check_run_memory refuses a stated figure of 0 or below, in the
  // message that names the GPU's memory).
  bool allocated_recorded = false, reserved_recorded = false;
};

// bugprone-exception-escape (silenced below): its implicit destructor and moves destroy nlohmann::json
// members, whose noexcept destructor may allocate (a stack for nested values) inside the library.
// NOLINTNEXTLINE(bugprone-exception-escape)
struct RunGpuRecord {
  std::string id;     // gpu.id: an ftcost GPU id ("" when not recorded)
  std::string name;   // gpu.name as nvidia-smi prints it ("" when not recorded); one of id and name is set
  json memory_bytes;  // gpu.memory_bytes as recorded (torch's total_memory; null when absent)
  std::int64_t count = 1;  // gpu.count: GPUs of the job
};

// The training arguments in ftcost's option names; "" / 0 / nullopt where the file does not state them.
struct RunTraining {
  std::string method;     // full | lora | qlora (required)
  std::string quant;      // nf4-dq | nf4 | int8
  std::string precision;  // bf16 | fp16 | fp32
  std::string
      optimizer;  // adamw | adamw-mixed | adamw-8bit | paged-adamw | paged-adamw-8bit | sgd | sgd-momentum
  std::string adamw_impl;  // foreach | fused: training.adamw_impl, else read off training_raw.optim
                           // (transformers' OptimizerNames); "" when the optimizer is not torch's AdamW
  std::string attention;   // flash | sdpa | eager | xformers
  std::optional<bool> checkpointing;
  // LoRA's arguments, read only with a LoRA method (lora, qlora).
  std::int64_t lora_rank = 0;  // 0: not recorded
  std::string lora_targets;    // comma-separated PEFT module names
  double lora_dropout = 0;     // PEFT LoraConfig.lora_dropout, in [0, 1]
  // Recorded for the record (the steps carry the shapes the fit uses); 0 / nullopt: not recorded.
  std::int64_t batch_size = 0, gradient_accumulation_steps = 0, max_length = 0;
  std::optional<bool> packing;
};

// NOLINTNEXTLINE(bugprone-exception-escape): json members, as RunGpuRecord
struct RunRecord {
  std::string source;           // path or name, for messages and provenance
  std::string recorder_source;  // hook | trainer-callback | trainer_state | torchtune-log ("" not recorded)
  std::vector<std::string> lacks;  // what the source did not carry (from the file)
  RunGpuRecord gpu;
  std::string model_preset;                     // model.preset: an ftcost model id ("" with a config)
  json model_config;                            // model.config: the recorded config.json (null with a preset)
  std::map<std::string, std::string> software;  // software: package -> version (string values only)
  RunTraining training;
  std::vector<RunStep> steps;
  bool has_memory() const;          // some non-warm-up step has max_memory_allocated
  std::size_t timed_steps() const;  // non-warm-up steps with a wall time
};

// Reads and checks a run file's text without a database: schema, recorder, GPU as recorded (gpu.id or
// gpu.name), model (preset name, or a config.json that parse_model_file reads), training arguments (LoRA's
// only with a LoRA method), steps (positive shapes, tokens within the padded shape, a positive wall time of
// at most a day per step, memory figures numbers or null, some timed step with a shape). Errors name the
// JSON field; `source` names the text in JSON syntax errors.
Result<RunRecord> parse_run_record(const std::string& text, const std::string& source);

// The run's memory figures against `gpu`, the GPU it was recorded on: gpu.memory_bytes (torch's
// total_memory) above 0 and at most 1.5 x its memory; then, step by step, max_memory_allocated_bytes and
// max_memory_reserved_bytes above 0 and within its memory, reserved >= allocated.
Status check_run_memory(const RunRecord& run, const GpuSpec& gpu);

}  // namespace ftcost
