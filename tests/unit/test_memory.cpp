// First-principles memory model: components against hand-computed values, and the paper's A40 maxima.
#include "ftcost/database.hpp"
#include "ftcost/estimate.hpp"
#include "ftcost/units.hpp"
#include "resolved_inputs.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <utility>

using namespace ftcost;

namespace {

// These tests pin the memory model of the paper's stack (test::paper_inputs).
Inputs resolve(Request r) { return test::paper_inputs(std::move(r)); }

std::int64_t max_batch(Request r) {
  Inputs in = resolve(std::move(r));
  return max_batch_size(in.model, in.workload, in.stack, in.gpu).batch;
}
}  // namespace

TEST_CASE(
    "QLoRA weights of Mixtral-8x7B: NF4 + double quant, bf16 embeddings/lm_head/norms (stack-facts 2.2)") {
  Inputs in =
      resolve(test::request("model=mixtral-8x7b gpu=a40 method=qlora seq=128 lora-targets=w1,w2,w3,gate"));
  MemoryBreakdown mb = memory_for_batch(in.model, in.workload, in.stack, 1, 128);
  // 46,440,382,464 quantized params x 0.51587 B + 262,410,240 bf16 params x 2 B = 24.48 GB = 22.80 GiB.
  const double expected =
      46440382464.0 * (0.5 + 1.0 / 64 + 4.0 / (64 * 256)) + (46702792704.0 - 46440382464.0) * 2;
  CHECK(mb.weights == doctest::Approx(expected).epsilon(1e-9));
  CHECK(mb.weights / kGiB == doctest::Approx(22.80).epsilon(0.001));
  // LoRA r=16 on w1,w2,w3,gate: 228,593,664 params (stack-facts 3.2), fp32 param + grad + 2 AdamW states.
  CHECK(lora_params(in.model, in.workload) == doctest::Approx(228593664.0));
  CHECK((mb.trainable_params + mb.gradients + mb.optimizer_states) / kGiB ==
        doctest::Approx(3.406).epsilon(0.001));
  // Dequantization temporaries: 4 B per element of the largest weight (58.7M) + fp32 absmax.
  CHECK(mb.dequant_buffers == doctest::Approx(58720256.0 * 4 + 58720256.0 * 4 / 64));
}

TEST_CASE("all-linear LoRA on Mixtral counts 242,225,152 trainable parameters (stack-facts 3.2)") {
  Inputs in = resolve({{"model", "mixtral-8x7b"}, {"gpu", "a40"}, {"method", "lora"}, {"seq", "128"}});
  CHECK(lora_params(in.model, in.workload) == doctest::Approx(242225152.0));
}

TEST_CASE("per-token activations follow the saved-tensor lists (stack-facts 8, checkpointing off)") {
  Inputs in = resolve(test::request(
      "model=mixtral-8x7b gpu=a40 method=qlora seq=512 checkpointing=off lora-targets=w1,w2,w3,gate"));
  // A_attn = 44 KiB; A_moe = 6H + k(4H + 8F) = 280 KiB at k=2 (+ router logits, top-k and LoRA A outputs).
  ActivationDetail ad = activation_detail(in.model, in.workload, in.stack, 512);
  const double a_attn = 45056 + 4 * 32;  // 44 KiB + fp32 LSE per head
  const double a_moe = 6 * 4096 + 2 * (4 * 4096 + 8 * 14336);
  const double extras = 2 * 8 + 4 * 8 + 12 * 2 + 2 * (2 * 16 * 2 + 2 * 16);  // router, top-k, LoRA A outputs
  CHECK(ad.per_layer_max_bytes == doctest::Approx(a_attn + a_moe + extras));
  CHECK(ad.per_token_bytes ==
        doctest::Approx(32 * (a_attn + a_moe + extras) + 0.5 * (a_attn + a_moe + extras)));
  // Logits: fp32 upcast + shift copy + saved log-softmax + bf16 transient = 14 B per vocab entry.
  CHECK(ad.logits_per_token_bytes == doctest::Approx(14.0 * 32000));
}

TEST_CASE("maximum batch: Mixtral QLoRA on the A40 (paper.md §2.2; bar: within ±1, here exact)") {
  const Request base = test::request("model=mixtral-8x7b gpu=a40 method=qlora lora-targets=w1,w2,w3,gate");
  auto with = [&](const char* ds, const char* moe) {
    Request r = base;
    r["dataset"] = ds;
    r["moe"] = moe;
    return max_batch(r);
  };
  CHECK(with("math14k", "sparse") == 4);
  CHECK(with("cs15k", "sparse") == 8);
  CHECK(with("cs15k", "dense") == 2);
  CHECK(with("math14k", "dense") == 1);
  // The bar as stated in the issue, with the default (all-linear) targets: within ±1 of 4.
  Request r = test::request("model=mixtral-8x7b gpu=a40 method=qlora moe=sparse dataset=math14k");
  CHECK(std::abs(max_batch(r) - 4) <= 1);
}

TEST_CASE("maximum batch: BlackMamba full fine-tuning on the A40 (paper.md §2.2; within ±1)") {
  auto with = [&](const char* ds, const char* moe) {
    return max_batch(
        {{"model", "blackmamba-2.8b"}, {"gpu", "a40"}, {"method", "full"}, {"dataset", ds}, {"moe", moe}});
  };
  CHECK(std::abs(with("cs15k", "dense") - 6) <= 1);
  CHECK(std::abs(with("cs15k", "sparse") - 20) <= 1);
  CHECK(std::abs(with("math14k", "dense") - 3) <= 1);
  CHECK(std::abs(with("math14k", "sparse") - 10) <= 1);
}

TEST_CASE("memory sanity: QLoRA < LoRA weights; dense >= sparse; checkpointing saves; longer needs more") {
  const Request base = {{"model", "mixtral-8x7b"}, {"gpu", "h100-sxm5-80gb"}, {"seq", "512"}};
  auto mem = [&](Request extra, std::int64_t b) {
    Request r = base;
    for (auto& [k, v] : extra) r[k] = v;
    Inputs in = resolve(r);
    return memory_for_batch(in.model, in.workload, in.stack, b, in.workload.memory_seq_len());
  };
  CHECK(mem({{"method", "qlora"}}, 1).weights < mem({{"method", "lora"}}, 1).weights);
  CHECK(mem({{"method", "qlora"}, {"quant", "nf4"}}, 1).weights > mem({{"method", "qlora"}}, 1).weights);
  CHECK(mem({{"method", "qlora"}, {"quant", "int8"}}, 1).weights >
        mem({{"method", "qlora"}, {"quant", "nf4"}}, 1).weights);
  CHECK(mem({{"method", "qlora"}, {"moe", "dense"}}, 4).activations >
        mem({{"method", "qlora"}, {"moe", "sparse"}}, 4).activations);
  CHECK(mem({{"method", "qlora"}, {"checkpointing", "on"}}, 4).activations <
        mem({{"method", "qlora"}, {"checkpointing", "off"}}, 4).activations);
  CHECK(mem({{"method", "qlora"}, {"attention", "eager"}}, 4).activations >
        mem({{"method", "qlora"}, {"attention", "flash"}}, 4).activations);
  CHECK(mem({{"method", "full"}}, 1).optimizer_states >
        mem({{"method", "full"}, {"optimizer", "adamw-8bit"}}, 1).optimizer_states);
  Request longer = base;
  longer["seq"] = "1024";
  longer["method"] = "qlora";
  Inputs in = resolve(longer);
  CHECK(memory_for_batch(in.model, in.workload, in.stack, 2, 1024).total() >
        mem({{"method", "qlora"}}, 2).total());
}

TEST_CASE("a model that cannot fit gives max batch 0 and a visible reason") {
  Inputs in = resolve({{"model", "llama-3.1-405b"}, {"gpu", "rtx-4090"}, {"method", "full"}, {"seq", "512"}});
  auto e = estimate(in, Database::embedded());
  REQUIRE(e.ok());
  CHECK(e->max_batch.batch == 0);
  REQUIRE_FALSE(e->warnings.empty());
  CHECK(e->warnings.back().find("does not fit") != std::string::npos);
  json j = estimate_to_json(e.value());
  CHECK(j["fits"] == false);
  CHECK(j["throughput_queries_per_s"].is_null());
}

TEST_CASE("padding: the longest-in-batch length grows with batch size (order statistics)") {
  const Dataset* d = Database::embedded().dataset("math14k");
  REQUIRE(d != nullptr);
  const LengthDistribution& L = d->lengths;
  CHECK(L.quantile(0.5) == doctest::Approx(174));
  CHECK(L.expected_max(1, 1e9) == doctest::Approx(L.mean()));
  double prev = 0;
  for (int n : {1, 2, 4, 8, 16, 64}) {
    double m = L.expected_max(n, 1024);
    CHECK(m > prev);
    CHECK(m <= 1024);
    prev = m;
  }
  CHECK(L.expected_max(4, 1024) > L.quantile(0.75));
  // The closed form agrees with a brute-force midpoint sum of E[min(max of n, cap)] = int min(Q(u), cap)
  // d(u^n).
  for (double n : {1.0, 3.0, 17.0, 1000.0}) {
    for (double cap : {300.0, 1024.0, 1e9}) {
      const int steps = 400000;
      double sum = 0;
      for (int i = 0; i < steps; ++i) {
        const double u = (i + 0.5) / steps;
        sum += std::min(L.quantile(u), cap) * n * std::pow(u, n - 1.0) / steps;
      }
      CHECK(L.expected_max(n, cap) == doctest::Approx(sum).epsilon(2e-3));
    }
  }
}

TEST_CASE("the optimizer step: foreach AdamW's state-sized temporary is a moment of its own") {
  // torch/optim/adam.py _multi_tensor_adam: exp_avg_sq_sqrt = torch._foreach_sqrt(exp_avg_sqs), one list the
  // size of a state, beside every gradient, after backward freed the activations and logits.
  Inputs in =
      resolve(test::request("model=llama-3.1-8b gpu=a100-sxm4-80gb method=full seq=512 stack=hf-trl-2025"));
  const double P = static_cast<double>(in.model.params().total());
  MemoryBreakdown mb = memory_for_batch(in.model, in.workload, in.stack, 1, 512);
  CHECK(mb.optimizer_step_temp == doctest::Approx(2.0 * P));  // bf16 states: 2 B per parameter
  // Small activations: the step is the peak, not the sum of the components.
  CHECK(mb.peak_moment() == MemoryBreakdown::Moment::optimizer_step);
  const double fixed = mb.weights + mb.optimizer_states + mb.cuda_context + mb.allocator_overhead;
  CHECK(mb.total() == doctest::Approx(fixed + mb.gradients + mb.optimizer_step_temp));
  CHECK(mb.total() > mb.weights + mb.gradients + mb.optimizer_states + mb.activations + mb.logits);
  // What exists at that moment sums to the peak; the JSON names it.
  const MemoryBreakdown at = mb.at_peak();
  CHECK(at.activations == 0);
  CHECK(at.logits == 0);
  CHECK(at.total() == doctest::Approx(mb.total()));
  const json j = mb.to_json_gib();
  CHECK(j.at("peak_phase") == "optimizer_step");
  CHECK(j.at("at_peak").at("optimizer_step_temp").get<double>() == doctest::Approx(2.0 * P / kGiB));
  // Large batches: the activations' sum is the peak again.
  MemoryBreakdown big = memory_for_batch(in.model, in.workload, in.stack, 64, 512);
  CHECK(big.peak_moment() == MemoryBreakdown::Moment::sum);
  CHECK(big.to_json_gib().count("peak_phase") == 0);

  // Fused AdamW (torchtune's configs), bitsandbytes' in-place 8-bit update: no temporary.
  Inputs tt = resolve(
      test::request("model=llama-3.1-8b gpu=a100-sxm4-80gb method=full seq=512 stack=torchtune-2024"));
  CHECK(memory_for_batch(tt.model, tt.workload, tt.stack, 1, 512).optimizer_step_temp == 0);
  Inputs b8 = resolve(test::request(
      "model=llama-3.1-8b gpu=a100-sxm4-80gb method=full seq=512 stack=hf-trl-2025 optimizer=adamw-8bit"));
  CHECK(memory_for_batch(b8.model, b8.workload, b8.stack, 1, 512).optimizer_step_temp == 0);
  // fp32 master weights: the states, and so the temporary, are fp32
  Inputs mixed = resolve(test::request(
      "model=llama-3.1-8b gpu=a100-sxm4-80gb method=full seq=512 stack=hf-trl-2025 optimizer=adamw-mixed"));
  CHECK(memory_for_batch(mixed.model, mixed.workload, mixed.stack, 1, 512).optimizer_step_temp ==
        doctest::Approx(4.0 * P));
  // --adamw-impl overrides the stack either way: foreach on torchtune's (fused) profile has the temporary,
  // fused on the HF Trainer's (foreach) profile has none.
  Inputs tt_foreach = resolve(test::request(
      "model=llama-3.1-8b gpu=a100-sxm4-80gb method=full seq=512 stack=torchtune-2024 adamw-impl=foreach"));
  CHECK(
      memory_for_batch(tt_foreach.model, tt_foreach.workload, tt_foreach.stack, 1, 512).optimizer_step_temp ==
      doctest::Approx(2.0 * P));
  Inputs hf_fused = resolve(test::request(
      "model=llama-3.1-8b gpu=a100-sxm4-80gb method=full seq=512 stack=hf-trl-2025 adamw-impl=fused"));
  CHECK(memory_for_batch(hf_fused.model, hf_fused.workload, hf_fused.stack, 1, 512).optimizer_step_temp == 0);
}

TEST_CASE("maximum batch when the optimizer step's flat peak comes first: the bisection finds the edge") {
  // Llama-3.2-3B full on a 40 GB card, foreach AdamW: W + G + S + temp = 10 B/param = 29.9 GiB at every
  // batch; the activations' sum overtakes it only after a few samples.
  Inputs in =
      resolve(test::request("model=llama-3.2-3b gpu=a100-sxm4-40gb method=full seq=256 stack=hf-trl-2025"));
  for (double overhead : {in.stack.allocator_overhead_fraction, 0.0}) {
    // without allocator overhead the step's moment is exactly flat: batches 1 and 2 give no slope
    CAPTURE(overhead);
    in.stack.allocator_overhead_fraction = overhead;
    const MaxBatch mb = max_batch_size(in.model, in.workload, in.stack, in.gpu);
    auto fits = [&](std::int64_t b) {
      return memory_for_batch(in.model, in.workload, in.stack, b, mb.seq_len).resident() <= mb.usable_bytes;
    };
    CHECK(memory_for_batch(in.model, in.workload, in.stack, 2, mb.seq_len).peak_moment() ==
          MemoryBreakdown::Moment::optimizer_step);
    REQUIRE(mb.batch > 2);
    CHECK(fits(mb.batch));
    CHECK(!fits(mb.batch + 1));
  }
}
