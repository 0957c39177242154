// Preference and RL objectives (issue 42, docs/sources/trl-preference.md): DPO's memory is SFT's on a doubled
// batch plus the reference terms, counted by hand for TinyLlama; the decode model's bandwidth bound by hand
// for one model and GPU; GRPO's step composition, vLLM's share, and the options' errors.
#include "ftcost/database.hpp"
#include "ftcost/estimate.hpp"
#include "ftcost/job.hpp"
#include "ftcost/memory.hpp"
#include "ftcost/objective.hpp"
#include "ftcost/units.hpp"
#include "resolved_inputs.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace ftcost;

namespace {

// TinyLlama-1.1B: hidden 2048, 22 layers, 32 heads x 64, 4 kv heads, vocab 32000; bf16 (a = 2).
Request tiny(const std::string& method, const std::string& objective) {
  return {{"model", "tinyllama-1.1b"},
          {"gpu", "h100-sxm5-80gb"},
          {"method", method},
          {"stack", "hf-trl-2026"},
          {"seq", "512"},
          {"batch", "4"},
          {"objective", objective}};
}

Request with(Request r, const std::string& key, const std::string& value) {
  r[key] = value;
  return r;
}

MemoryBreakdown memory_at(const Inputs& in, std::int64_t batch) {
  return memory_for_batch(in.model, in.workload, in.stack, batch, in.workload.memory_seq_len());
}

std::string error_field(const Request& r) {
  auto je = estimate_request(r, Database::embedded(), nullptr);
  return je.ok() ? std::string() : je.error().field;
}

constexpr double kVocab = 32000;
constexpr double kA = 2;  // bf16

}  // namespace

TEST_CASE(
    "DPO: SFT's memory on a doubled batch plus the reference terms, by hand (TinyLlama, full and LoRA)") {
  for (const char* method : {"full", "lora"}) {
    CAPTURE(method);
    const Inputs sft = test::inputs(tiny(method, "sft"));
    const Inputs dpo = test::inputs(tiny(method, "dpo"));
    const MemoryBreakdown s8 = memory_at(sft, 8);  // 4 pairs = 8 sequences
    const MemoryBreakdown d4 = memory_at(dpo, 4);
    const double tokens = 8 * 512;
    // Everything but the loss and the reference is SFT's at 8 sequences.
    CHECK(d4.weights == doctest::Approx(s8.weights));
    CHECK(d4.gradients == doctest::Approx(s8.gradients));
    CHECK(d4.optimizer_states == doctest::Approx(s8.optimizer_states));
    CHECK(d4.activations == doctest::Approx(s8.activations));
    // The loss: TRL's selective_log_softmax keeps the logits and the per-row log_softmax (2a per vocabulary
    // entry of every token), and the reference forward's logits (a per entry) exist beside them.
    CHECK(d4.logits == doctest::Approx(tokens * kVocab * (2 * kA + kA)));
    // The reference: a frozen bf16 copy with full fine-tuning, none with LoRA (the adapters disabled).
    const double params = static_cast<double>(dpo.model.params().total());
    CHECK(d4.reference_weights == doctest::Approx(std::string(method) == "full" ? params * kA : 0.0));
    // total = SFT's total at 8 sequences - SFT's loss + DPO's loss + the reference copy (+ the allocator's
    // share of the changed loss)
    const double alloc = dpo.stack.allocator_overhead_fraction * (d4.logits - s8.logits);
    CHECK(d4.total() == doctest::Approx(s8.total() - s8.logits + d4.logits + d4.reference_weights + alloc));
  }
}

TEST_CASE("DPO: precomputed reference log-probs keep no reference; ORPO and SimPO have none") {
  const Inputs pre = test::inputs(with(tiny("full", "dpo"), "precompute-ref", "on"));
  CHECK(memory_at(pre, 4).reference_weights == 0);
  CHECK(memory_at(pre, 4).logits == doctest::Approx(8 * 512 * kVocab * 2 * kA));
  for (const char* o : {"orpo", "simpo"}) {
    const Inputs in = test::inputs(tiny("full", o));
    CHECK(memory_at(in, 4).reference_weights == 0);
    CHECK(memory_at(in, 4).activations ==
          doctest::Approx(memory_at(test::inputs(tiny("full", "sft")), 8).activations));
  }
  // KTO: one completion per sample through forward and backward
  const Inputs kto = test::inputs(tiny("lora", "kto"));
  CHECK(memory_at(kto, 4).activations ==
        doctest::Approx(memory_at(test::inputs(tiny("lora", "sft")), 4).activations));
}

TEST_CASE("DPO step: training over both sequences, plus one reference forward of them") {
  const Inputs sft = test::inputs(tiny("lora", "sft"));
  const Inputs dpo = test::inputs(tiny("lora", "dpo"));
  const StepTime s8 =
      step_model(sft.model, sft.workload, sft.stack, sft.gpu, nullptr, 8, 512, sft.expert_shares);
  const StepTime d4 =
      objective_step(dpo.model, dpo.workload, dpo.stack, dpo.gpu, nullptr, 4, 512, dpo.expert_shares);
  const double fwd = s8.by_stage[static_cast<std::size_t>(Stage::forward)];
  CHECK(d4.objective.train_s == doctest::Approx(s8.total_s));
  CHECK(d4.objective.reference_s == doctest::Approx(fwd));
  CHECK(d4.total_s == doctest::Approx(s8.total_s + fwd));
  // a row is a pair: throughput counts pairs
  CHECK(dpo.workload.queries_per_row() == 1.0);
  CHECK(std::string(dpo.workload.objective.sample_noun()) == "pairs");
}

TEST_CASE(
    "decode: one step of Llama-3.1-8B at batch 1 on an H100 is its weights over the bandwidth, by hand") {
  Request r = test::request(
      "model=llama-3.1-8b gpu=h100-sxm5-80gb method=lora stack=hf-trl-2026 seq=128 objective=grpo "
      "completion-len=1 generation=vllm-server");
  const Inputs in = test::inputs(r);
  // 8,030,261,248 parameters in bf16 = 16.06 GB; the KV of 128 tokens (32 layers x 2 x 1024 x 2 B = 128 KiB a
  // token) = 16.8 MB. The stack streams memory-bound GEMMs at gemm_memory_efficiency of 3,350 GB/s.
  const double weights = 8030261248.0 * 2;
  const double kv = 129 * 32 * 2 * 1024 * 2.0;
  CHECK(kv_bytes_per_token(in.model, in.workload, true) == 32 * 2 * 1024 * 2.0);
  const double bw = 3350e9 * in.stack.gemm_memory_efficiency;
  const GenerationTime g = generation_time(in.model, in.workload, in.stack, in.gpu, nullptr, 1, 128);
  CHECK(g.bound == "bandwidth");
  CHECK(g.bytes_per_step == doctest::Approx(weights + kv).epsilon(0.001));
  CHECK(g.device_step_s == doctest::Approx((weights + kv) / bw).epsilon(0.001));
  CHECK(g.decode_steps == 1);
  // vLLM's CUDA-graph step adds its host time (1 ms, assumed) to the device's
  CHECK(g.decode_s == doctest::Approx(g.device_step_s + 1e-3));
}

TEST_CASE("vLLM's share: weights, buffers and the KV cache in gpu_memory_utilization x the GPU, by hand") {
  Request r = with(with(tiny("lora", "grpo"), "generation", "vllm-colocate"), "batch", "8");
  const Inputs in = test::inputs(r);
  const double total = 81559.0 * kMiB;  // nvidia-smi's total of the H100 SXM5 80GB
  const VllmMemory vm = vllm_memory(in.model, in.workload, in.gpu, 0.3, 512 + 512);
  CHECK(vm.pool == doctest::Approx(0.3 * total));
  CHECK(vm.weights == doctest::Approx(static_cast<double>(in.model.params().total()) * kA));
  CHECK(vm.kv_cache == doctest::Approx(vm.pool - vm.weights - vm.overhead));
  const double kv_per_token = 22 * 2 * 4 * 64 * kA;  // 22 layers, k and v, 4 kv heads x 64
  CHECK(vm.max_sequences == std::floor(vm.kv_cache / (1024 * kv_per_token)));
  // the training process gets the GPU less the share (as --headroom keeps memory from it)
  const Inputs hf = test::inputs(with(tiny("lora", "grpo"), "batch", "8"));
  CHECK(hf.gpu.usable_bytes() - in.gpu.usable_bytes() == doctest::Approx(vm.pool).epsilon(1e-6));
}

TEST_CASE("GRPO: a prompt's completions, one generation per grad-accum x iterations micro-batches") {
  Request r = with(with(with(tiny("lora", "grpo"), "batch", "8"), "grad-accum", "2"), "num-iterations", "2");
  r["reward-s"] = "0.01";
  const Inputs in = test::inputs(r);
  const Workload& w = in.workload;
  CHECK(w.queries_per_row() == doctest::Approx(1.0 / (8 * 2)));  // 8 generations, 2 iterations
  CHECK(w.mean_padded_len(8) == 512 + 512);                      // prompt + max_completion_length
  const StepTime t = objective_step(in.model, w, in.stack, in.gpu, nullptr, 8, 1024, in.expert_shares);
  const ObjectiveTime& o = t.objective;
  CHECK(o.round_completions == 16);  // batch 8 x grad-accum 2
  // the round's terms shared by grad-accum x iterations = 4 micro-batches
  CHECK(o.generation_s == doctest::Approx(o.generation.total_s / 4));
  CHECK(o.reward_s == doctest::Approx(16 * 0.01 / 4));
  // num_iterations > 1: the old policy's log-probs, a forward of the 16 completions in 2 chunks of 8
  const double fwd = step_model(in.model, w, in.stack, in.gpu, nullptr, 8, 1024, in.expert_shares)
                         .by_stage[static_cast<std::size_t>(Stage::forward)];
  CHECK(o.policy_forward_s == doctest::Approx(2 * fwd / 4));
  CHECK(o.reference_s == 0);  // beta 0: no reference
  CHECK(t.total_s == doctest::Approx(o.train_s + o.generation_s + o.reward_s + o.policy_forward_s));
  CHECK(o.round_s == doctest::Approx(4 * t.total_s));
  // only the completion's tokens get logits (logits_to_keep)
  const MemoryBreakdown mb = memory_at(in, 8);
  CHECK(mb.logits == doctest::Approx(8 * 512 * kVocab * 2 * kA));
}

TEST_CASE("GRPO with model.generate: the generation moment holds the KV cache of the generation batch") {
  const Inputs in = test::inputs(with(with(tiny("lora", "grpo"), "batch", "8"), "grad-accum", "2"));
  const MemoryBreakdown mb = memory_at(in, 8);
  const double kv_per_token = 22 * 2 * 4 * 64 * kA;
  // 16 completions of 1,024 tokens, the prefill's MLP transient of the prompt (3 x 5,632 x 512 x a) and the
  // sampler's fp32 probabilities (2 x 4 x vocab), each
  const double per_row = 1024 * kv_per_token + 512 * 3 * 5632 * kA + 8 * kVocab;
  CHECK(mb.generation_temp == doctest::Approx(16 * per_row));
  CHECK(mb.phases().generation ==
        doctest::Approx(mb.weights + mb.trainable_params + mb.optimizer_states + mb.autocast_copies +
                        mb.cuda_context + mb.allocator_overhead + mb.generation_temp));
}

TEST_CASE("objective errors name the flag") {
  // a generation batch that is not whole groups
  CHECK(error_field(with(tiny("lora", "grpo"), "batch", "6")) == "--batch");
  // vLLM's share cannot hold Llama-3.1-8B on an L4
  Request l4 =
      test::request("model=llama-3.1-8b gpu=l4 method=qlora seq=256 objective=grpo generation=vllm-colocate");
  CHECK(error_field(l4) == "--vllm-gpu-memory-utilization");
  // several training GPUs are not modelled for these objectives
  CHECK(error_field(with(tiny("lora", "dpo"), "gpus", "2")) == "--gpus");
  // options that apply to another objective
  CHECK(error_field(with(tiny("lora", "dpo"), "num-generations", "4")) == "--num-generations");
  CHECK(error_field(with(tiny("lora", "orpo"), "precompute-ref", "on")) == "--precompute-ref");
  CHECK(error_field(with(tiny("lora", "grpo"), "vllm-gpus", "2")) == "--vllm-gpus");
  CHECK(error_field(with(tiny("lora", "sft"), "objective", "ppo")) == "--objective");
}

TEST_CASE("GRPO chosen batch: lowered to whole groups, and the server's GPUs are priced") {
  Request r = tiny("lora", "grpo");
  r.erase("batch");
  r["generation"] = "vllm-server";
  r["vllm-gpus"] = "2";
  r["price-per-hour"] = "2";
  auto je = estimate_request(r, Database::embedded(), nullptr);
  REQUIRE(je.ok());
  const JobAnswer& a = je->answer;
  CHECK(a.batch % 8 == 0);
  CHECK(a.generation_gpus == 2);
  CHECK(a.usd_per_hour == doctest::Approx(3 * 2.0));
  CHECK(a.cost == doctest::Approx(a.hours * 6.0));
}

TEST_CASE("GRPO: a batch lowered to whole groups has its own memory, fraction and state") {
  // Qwen2.5-7B LoRA beside vLLM (colocate, 0.3 of the H100): the largest batch that fits is lowered to a
  // multiple of 8 completions; what the estimate reports is that batch's memory, not the larger one's
  const Inputs in = test::inputs(test::request(
      "model=qwen2.5-7b gpu=h100-sxm5-80gb method=lora seq=256 objective=grpo generation=vllm-colocate"));
  auto e = estimate(in, Database::embedded());
  REQUIRE(e.ok());
  CHECK(e->batch % 8 == 0);
  const MemoryBreakdown at = memory_at(e->in, e->batch);
  CHECK(e->memory.total() == doctest::Approx(at.total()));
  const double usable = e->in.gpu.usable_bytes();
  CHECK(e->memory_fraction == doctest::Approx(at.on_gpu(usable) / usable));
  CHECK(e->memory_state == (at.resident() / usable > kTightMemoryFraction ? "tight" : "fits"));
}

TEST_CASE(
    "GRPO with the completions' lengths (completion_histogram): decode and padding to the longest of a "
    "batch") {
  // 1,000 prompts of 200 tokens; completions of 100 to 300 tokens, evenly spread (a bin read as uniform)
  const std::string file = R"({"schema": "ftcost.dataset/1", "histogram": [[200, 200, 1000]],
                               "completion_histogram": [[100, 300, 1000]]})";
  const FileReader reader = [&](const std::string&) -> Result<std::string> { return file; };
  Request r = test::request(
      "model=tinyllama-1.1b gpu=h100-sxm5-80gb method=lora dataset=my-grpo.json objective=grpo batch=8");
  auto in = resolve_request(r, Database::embedded(), reader);
  REQUIRE(in.ok());
  const Workload& w = in->workload;
  REQUIRE(w.objective.has_completion_lengths);
  // the longest of 8 uniform draws on [100, 300]: 100 + 200 x 8/9
  CHECK(w.completion_padded(8) == doctest::Approx(100 + 200 * 8.0 / 9).epsilon(0.01));
  CHECK(w.mean_padded_len(8) == doctest::Approx(200 + 100 + 200 * 8.0 / 9).epsilon(0.01));
  // memory is for the longest batch: the cap (--completion-len 512)
  CHECK(w.memory_seq_len() == 200 + 512);
  // the data's tokens: the prompt and the mean completion (200)
  CHECK(w.mean_data_len() == doctest::Approx(400).epsilon(0.01));
  // decoding the round's 8 completions lasts the longest of them, not the cap
  const GenerationTime g = generation_time(in->model, w, in->stack, in->gpu, nullptr, 8, 200);
  CHECK(g.decode_steps == doctest::Approx(100 + 200 * 8.0 / 9).epsilon(0.01));
  // a bad completion histogram names its field
  const std::string bad =
      R"({"schema": "ftcost.dataset/1", "histogram": [[200, 200, 10]], "completion_histogram": [[5]]})";
  const FileReader bad_reader = [&](const std::string&) -> Result<std::string> { return bad; };
  auto e = resolve_request(r, Database::embedded(), bad_reader);
  REQUIRE_FALSE(e.ok());
  CHECK(e.error().to_string().find("completion_histogram") != std::string::npos);
}
