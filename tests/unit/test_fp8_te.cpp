// Transformer Engine FP8 (--fp8 te-delayed | te-current, issue 41): te.Linear in place of every nn.Linear
// (accelerate utils/transformer_engine.py convert_model @ 16cb6eb), counted by hand from
// transformer_engine/pytorch/module/linear.py (@ d0067d0): the casts around each GEMM, the FP8 input and
// weight each linear keeps for its backward, and the lm_head copy a tied model gets.
#include "ftcost/database.hpp"
#include "ftcost/estimate.hpp"
#include "ftcost/job.hpp"
#include "resolved_inputs.hpp"

#include <doctest/doctest.h>

#include <cstring>

using namespace ftcost;

namespace {

Estimate run(const Request& r) {
  auto e = estimate(test::inputs(r), Database::embedded());
  REQUIRE(e.ok());
  return e.value();
}

Request job(const char* model, const char* gpu, const char* fp8, const char* stack, const char* ckpt) {
  return {{"model", model}, {"gpu", gpu}, {"method", "full"}, {"seq", "2048"},
          {"batch", "2"},   {"fp8", fp8}, {"stack", stack},   {"checkpointing", ckpt}};
}

double cast_bytes(const Estimate& e, Stage st) {
  double b = 0;
  for (const auto& op : e.step.ops)
    if (std::strcmp(op.name, "fp8_cast") == 0 && op.stage == st) b += op.bytes;
  return b;
}

// Llama-3.1-8B's linears per layer (in, out, modules reading the input): q, k, v, o, gate and up (their two
// te.Linear modules each quantize x; one 4096 -> 28672 weight in all), down.
constexpr double kLlama8[6][3] = {{4096, 4096, 1}, {4096, 1024, 1},  {4096, 1024, 1},
                                  {4096, 4096, 1}, {4096, 28672, 2}, {14336, 4096, 1}};

}  // namespace

TEST_CASE("TE casts: one fused cast-transpose per input, weight and grad_output, by hand (H100, TN-only)") {
  const double M = 4096;  // 2 x 2048 tokens
  double fwd = 0, bwd = 0;
  for (const auto& l : kLlama8) {
    fwd += l[2] * M * l[0] + l[0] * l[1];  // the input(s) and the weight, every forward
    bwd += M * l[1];                       // grad_output; the saved FP8 input and weight are reused
  }
  // delayed scaling: a bf16 read and a row-wise plus a column-wise (transposed) FP8 write, 4 B per element
  const Estimate delayed = run(job("llama-3.1-8b", "h100-sxm5-80gb", "te-delayed", "hf-trl-2026", "off"));
  CHECK(cast_bytes(delayed, Stage::forward) == doctest::Approx(32 * 4 * fwd));
  CHECK(cast_bytes(delayed, Stage::backward) == doctest::Approx(32 * 4 * bwd));
  // current scaling reads each tensor once more for its amax: 6 B per element
  const Estimate current = run(job("llama-3.1-8b", "h100-sxm5-80gb", "te-current", "hf-trl-2026", "off"));
  CHECK(cast_bytes(current, Stage::forward) == doctest::Approx(32 * 6 * fwd));
  // the model's own loss runs lm_head through its te.Linear (4096 -> 128256): TRL's chunked loss does not
  const Estimate own_loss =
      run(job("llama-3.1-8b", "h100-sxm5-80gb", "te-delayed", "hf-trainer-2026", "off"));
  CHECK(cast_bytes(own_loss, Stage::forward) ==
        doctest::Approx(32 * 4 * fwd + 4 * (M * 4096 + 4096 * 128256.0)));
  // FP8 GEMMs: the step is faster than bf16's, by less than the 2x peak
  const Estimate bf16 = run(job("llama-3.1-8b", "h100-sxm5-80gb", "off", "hf-trl-2026", "off"));
  CHECK(delayed.step.total_s < bf16.step.total_s);
  CHECK(delayed.step.total_s > 0.5 * bf16.step.total_s);
}

TEST_CASE("TE memory: FP8 weights kept for the backward, FP8 inputs per linear, a tied lm_head's copy") {
  // Llama-3.2-3B (tied embeddings): per layer q 3072^2, k and v 3072 x 1024, o 3072^2, gate/up/down 3 x 3072
  // x 8192; 28 layers; lm_head 128256 x 3072 (the model's own loss: hf-trainer-2026)
  const double layer = 2 * 3072.0 * 3072 + 2 * 3072.0 * 1024 + 3 * 3072.0 * 8192;
  const double head = 128256.0 * 3072;
  const Estimate ckpt = run(job("llama-3.2-3b", "h100-sxm5-80gb", "te-delayed", "hf-trainer-2026", "on"));
  const Estimate all = run(job("llama-3.2-3b", "h100-sxm5-80gb", "te-delayed", "hf-trainer-2026", "off"));
  // 2 B per parameter on Hopper (FP8 data + its transpose): the recomputed layer's with checkpointing
  CHECK(ckpt.memory.fp8_weight_copies == doctest::Approx(2 * (layer + head)));
  CHECK(all.memory.fp8_weight_copies == doctest::Approx(2 * (28 * layer + head)));
  // TRL's chunked loss multiplies by lm_head.weight itself: no FP8 copy of it
  const Estimate trl = run(job("llama-3.2-3b", "h100-sxm5-80gb", "te-delayed", "hf-trl-2026", "on"));
  CHECK(trl.memory.fp8_weight_copies == doctest::Approx(2 * layer));
  // Blackwell's FP8 GEMMs take every layout: one buffer, 1 B per parameter
  const Estimate b200 = run(job("llama-3.2-3b", "b200", "te-delayed", "hf-trainer-2026", "on"));
  CHECK(b200.memory.fp8_weight_copies == doctest::Approx(layer + head));
  // the tied lm_head becomes a te.Linear with a copy of the embedding: its weight and gradient (bf16)
  const Estimate off = run(job("llama-3.2-3b", "h100-sxm5-80gb", "off", "hf-trainer-2026", "off"));
  CHECK(all.memory.weights - off.memory.weights == doctest::Approx(2 * head));
  CHECK(all.memory.gradients - off.memory.gradients == doctest::Approx(2 * head));
  CHECK(all.memory.optimizer_states == doctest::Approx(off.memory.optimizer_states));
  // activations per token and layer, no checkpointing: the bf16 inputs the linears kept (the two norms'
  // outputs, 2 x 3072 x 2 B, and the MLP product, 8192 x 2 B; flash keeps o_proj's input itself) give way to
  // one FP8 copy per linear (q, k, v: 3 x 3072; o: 3072; gate, up: 2 x 3072; down: 8192), 1 B each; 28 layers
  // saved plus the backward layer's gradients in flight (kBackwardGradInFlight, half a layer)
  const double per_token_layer = (3 * 3072 + 3072 + 2 * 3072 + 8192) - (2 * 3072 * 2 + 8192 * 2);
  CHECK(all.memory.activations - off.memory.activations == doctest::Approx(4096 * 28.5 * per_token_layer));
}

TEST_CASE("TE FP8 is refused where it is not modelled, naming the flag") {
  const Database& db = Database::embedded();
  auto refused = [&](Request r, const char* field) {
    auto j = resolve_job(r, db, nullptr, 0);
    REQUIRE_FALSE(j.ok());
    CHECK(j.error().field == field);
  };
  refused(job("mixtral-8x7b", "h100-sxm5-80gb", "te-delayed", "hf-trl-2026", "on"), "--fp8");  // MoE
  refused(job("llama-3.1-8b", "a100-sxm4-80gb", "te-delayed", "hf-trl-2026", "on"), "--fp8");  // no FP8
  Request lora = job("llama-3.1-8b", "h100-sxm5-80gb", "te-current", "hf-trl-2026", "on");
  lora["method"] = "lora";
  refused(lora, "--fp8");
  Request multi = job("llama-3.1-8b", "h100-sxm5-80gb", "te-delayed", "hf-trl-2026", "on");
  multi["gpus"] = "2";
  refused(multi, "--gpus");
}
