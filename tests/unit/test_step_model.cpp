// The step-time model: consistency of its breakdowns and the sanity properties a user relies on.
#include "ftcost/database.hpp"
#include "ftcost/estimate.hpp"
#include "resolved_inputs.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <utility>

using namespace ftcost;

namespace {
// The step-model tests pin the paper's stack (per-expert loop, transformers 4.40: test::paper_inputs).
Estimate run(Request r) {
  auto e = estimate(test::paper_inputs(std::move(r)), Database::embedded());
  REQUIRE(e.ok());
  return e.value();
}
const Request kMixtral = {{"model", "mixtral-8x7b"},
                          {"stack", kPaperStackId},
                          {"method", "qlora"},
                          {"seq", "512"},
                          {"batch", "4"},
                          {"lora-targets", "w1,w2,w3,gate"}};
Request with(Request r, const char* k, const char* v) {
  r[k] = v;
  return r;
}
// One 8,192-token sample of `model` with LoRA on today's stack (the attention-kernel tests).
Request long_sample(const char* model) {
  return {{"model", model}, {"gpu", "h100-sxm5-80gb"}, {"seq", "8192"},
          {"batch", "1"},   {"method", "lora"},        {"stack", "hf-trl-2026"}};
}
// Mean keys per query under a causal mask over `span` tokens, at most `window` each (computed here,
// independently of the model: query i attends min(i, window) keys).
double mean_keys(double span, double window) {
  return (window * (window + 1) / 2 + (span - window) * window) / span;
}
// FLOPs of the attention kernels in the forward pass (flash or eager).
double forward_attention_flops(const Estimate& e) {
  double v = 0;
  for (const auto& op : e.step.ops)
    if (op.stage == Stage::forward && op.kclass == KernelClass::attention) v += op.flops;
  return v;
}
}  // namespace

TEST_CASE("breakdowns add up: stages to the step, layer types and kernel classes to device time") {
  for (const char* gpu : {"a40", "h100-sxm5-80gb"}) {
    for (const char* stack : {"hf-transformers-2024", "grouped-gemm-2025"}) {
      CAPTURE(gpu);
      CAPTURE(stack);
      Request r = with(with(kMixtral, "gpu", gpu), "stack", stack);
      Estimate e = run(r);
      double stages = 0, layers = 0, classes = 0, ops = 0;
      for (double v : e.step.by_stage) stages += v;
      for (double v : e.step.by_layer) layers += v;
      for (double v : e.step.by_class) classes += v;
      for (const auto& op : e.step.ops) ops += op.gpu_s;
      CHECK(stages == doctest::Approx(e.step.total_s));
      CHECK(layers == doctest::Approx(e.step.gpu_s));
      CHECK(classes == doctest::Approx(e.step.gpu_s));
      CHECK(ops == doctest::Approx(e.step.gpu_s));
      CHECK(e.step.total_s >= e.step.gpu_s * (1 - 1e-9));
      CHECK(e.throughput_qps == doctest::Approx(4.0 / e.step.total_s));
    }
  }
}

TEST_CASE("QLoRA at small batch is dominated by dequantization and the MoE layer (paper.md §2.3)") {
  Estimate e = run(with(with(kMixtral, "gpu", "a40"), "batch", "1"));
  const double dq = e.step.by_class[static_cast<std::size_t>(KernelClass::dequant)];
  const double moe = e.step.by_layer[static_cast<std::size_t>(LayerType::moe)];
  CHECK(dq > 0.3 * e.step.gpu_s);
  CHECK(moe > 0.8 * e.step.gpu_s);
  Estimate lora = run(with(with(with(kMixtral, "gpu", "a100-sxm4-80gb"), "method", "lora"), "batch", "1"));
  CHECK(lora.step.by_class[static_cast<std::size_t>(KernelClass::dequant)] == 0);
}

TEST_CASE("a faster GPU of equal memory is never slower") {
  const std::pair<const char*, const char*> pairs[] = {{"a100-pcie-80gb", "a100-sxm4-80gb"},
                                                       {"h100-pcie-80gb", "h100-sxm5-80gb"},
                                                       {"a100-sxm4-80gb", "h100-sxm5-80gb"},
                                                       {"a100-sxm4-40gb", "a100-sxm4-80gb"}};
  for (const auto& pair : pairs) {
    const char* slow = pair.first;
    const char* fast = pair.second;
    for (const char* method : {"qlora", "lora", "full"}) {
      CAPTURE(slow);
      CAPTURE(method);
      Request r = with(with(kMixtral, "method", method), "model",
                       std::string(method) == "full" ? "mistral-7b" : "mixtral-8x7b");
      if (std::string(method) == "full") r.erase("lora-targets");
      CHECK(run(with(r, "gpu", fast)).step.total_s <= run(with(r, "gpu", slow)).step.total_s * (1 + 1e-9));
    }
  }
}

TEST_CASE("more experts per token never make a step faster") {
  double prev = 0;
  for (int k = 1; k <= 8; ++k) {
    Estimate e = run(with(with(kMixtral, "gpu", "a40"), "top-k", std::to_string(k).c_str()));
    CHECK(e.step.total_s >= prev);
    prev = e.step.total_s;
  }
  CHECK(run(with(with(kMixtral, "gpu", "a40"), "moe", "dense")).step.total_s >= prev * (1 - 1e-9));
}

TEST_CASE("grouped-GEMM stack launches far fewer kernels than the per-expert loop and is not slower") {
  Estimate loop = run(with(kMixtral, "gpu", "h100-sxm5-80gb"));
  Estimate grouped = run(with(with(kMixtral, "gpu", "h100-sxm5-80gb"), "stack", "grouped-gemm-2025"));
  CHECK(grouped.step.kernels < 0.5 * loop.step.kernels);
  CHECK(grouped.step.total_s < loop.step.total_s);
}

TEST_CASE(
    "the paper's stack reaches ~2/3 of the tensor peak on Hopper only: GEMM time on H100 grows, A100 "
    "unchanged") {
  const auto& db = Database::embedded();
  auto in_h = resolve_request(with(kMixtral, "gpu", "h100-sxm5-80gb"), db, nullptr);
  REQUIRE(in_h.ok());
  StackProfile native = in_h->stack;
  REQUIRE(native.hopper_tensor_peak_fraction < 1.0);
  native.hopper_tensor_peak_fraction = 1.0;
  auto limited = estimate(in_h.value(), db);
  Inputs in_native = in_h.value();
  in_native.stack = native;
  auto unlimited = estimate(in_native, db);
  REQUIRE(limited.ok());
  REQUIRE(unlimited.ok());
  const auto gemm = static_cast<std::size_t>(KernelClass::expert_gemm);
  // Expert GEMMs are compute-bound at this size: their time scales with 1/fraction (the kernel floor aside).
  CHECK(limited->step.by_class[gemm] ==
        doctest::Approx(unlimited->step.by_class[gemm] / in_h->stack.hopper_tensor_peak_fraction)
            .epsilon(0.05));
  CHECK(limited->step.by_class[gemm] > unlimited->step.by_class[gemm] * 1.3);
  // Ampere (cc 8.0) is untouched by the Hopper limit.
  auto in_a = resolve_request(with(kMixtral, "gpu", "a100-sxm4-80gb"), db, nullptr);
  REQUIRE(in_a.ok());
  Inputs in_a_native = in_a.value();
  in_a_native.stack.hopper_tensor_peak_fraction = 1.0;
  CHECK(estimate(in_a.value(), db)->step.total_s == doctest::Approx(estimate(in_a_native, db)->step.total_s));
}

TEST_CASE("expert load imbalance and longer sequences cost time") {
  const Request r = with(kMixtral, "gpu", "a40");
  const double uniform = run(r).step.total_s;
  // Strong imbalance costs time (the busiest expert's GEMMs dominate). Mild imbalance can land on a better
  // wave quantization of the expert GEMMs than the uniform split, as on real GPUs; it stays within 2%.
  CHECK(run(with(r, "routing", "skew:3")).step.gpu_s > run(r).step.gpu_s * 1.02);
  CHECK(run(with(r, "routing", "skew:1.5")).step.gpu_s == doctest::Approx(run(r).step.gpu_s).epsilon(0.02));
  CHECK(run(with(r, "routing", "paper-mixtral")).step.total_s == doctest::Approx(uniform).epsilon(0.05));
  CHECK(run(with(r, "seq", "1024")).step.total_s > uniform);
  auto bad = resolve_request(with(with(r, "model", "olmoe-1b-7b"), "routing", "paper-mixtral"),
                             Database::embedded(), nullptr);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().field == "--routing");
}

TEST_CASE("full fine-tuning computes weight gradients; LoRA backward only input gradients") {
  Request full = test::request("model=mistral-7b gpu=h100-sxm5-80gb seq=1024 batch=8 method=full");
  Request lora = with(full, "method", "lora");
  Estimate f = run(full), l = run(lora);
  const double fb = f.step.by_stage[static_cast<std::size_t>(Stage::backward)];
  const double lb = l.step.by_stage[static_cast<std::size_t>(Stage::backward)];
  CHECK(fb > 1.1 * lb);
  // The frozen weights' GEMMs in backward: dX only for LoRA, dX and dW for full fine-tuning.
  auto backward_gemm_flops = [](const Estimate& e) {
    double v = 0;
    for (const auto& op : e.step.ops)
      if (op.stage == Stage::backward && op.kclass == KernelClass::gemm && std::strcmp(op.name, "lora") != 0)
        v += op.flops;
    return v;
  };
  CHECK(backward_gemm_flops(f) == doctest::Approx(2 * backward_gemm_flops(l)).epsilon(0.02));
  // weight + input gradients: well above the forward's work
  CHECK(fb > 1.5 * f.step.by_stage[static_cast<std::size_t>(Stage::forward)]);
  CHECK(f.step.by_stage[static_cast<std::size_t>(Stage::optimizer)] >
        20 * l.step.by_stage[static_cast<std::size_t>(Stage::optimizer)]);
}

TEST_CASE("the eager loop's gather backward moves the whole input once per expert hit, whatever its share") {
  // IndexBackward0 = zeros_like(x).index_put_(idx, grad, accumulate=True), then added to x's gradient:
  // 4 x N x H x 2 B per expert that receives tokens, in backward only. BlackMamba's `out[sel] = ...`
  // adds the backward of index_put_ into `out` (a full-size copy, 2 x N x H x 2 B); HF's index_add_ does not.
  auto gather_grad_bytes = [](const Estimate& e) {
    double b = 0;
    for (const auto& op : e.step.ops) {
      if (std::string(op.name) != "expert_gather_grad") continue;
      CHECK(op.stage == Stage::backward);
      b += op.bytes;
    }
    return b;
  };
  Request bm = test::request("model=blackmamba-2.8b gpu=a40 seq=128 method=full moe=dense");
  for (int batch : {1, 30}) {
    CAPTURE(batch);
    Estimate e = run(with(bm, "batch", std::to_string(batch).c_str()));
    const double N = 128.0 * batch, H = 1472, experts_hit = 8, moe_layers = 18;
    CHECK(gather_grad_bytes(e) == doctest::Approx((4 + 2) * N * H * 2 * experts_hit * moe_layers));
  }
  // Mixtral in dense mode: every expert is hit; N = 4 x 512 tokens, H = 4096, 32 layers.
  Estimate mx = run(with(with(kMixtral, "gpu", "a40"), "moe", "dense"));
  CHECK(gather_grad_bytes(mx) == doctest::Approx(4 * 2048.0 * 4096 * 2 * 8 * 32));
  // The fused stack has no per-expert gather.
  CHECK(gather_grad_bytes(run(with(with(kMixtral, "gpu", "a40"), "stack", "grouped-gemm-2025"))) == 0);
}

TEST_CASE("padding to the longest sample: the padded length grows with batch size") {
  Request r = test::request("model=mixtral-8x7b gpu=h100-sxm5-80gb method=qlora dataset=math14k");
  double prev = 0;
  for (int b : {1, 2, 4, 8}) {
    Estimate e = run(with(r, "batch", std::to_string(b).c_str()));
    CHECK(e.padded_len > prev);
    prev = e.padded_len;
  }
  Estimate maxlen = run(with(with(r, "batch", "8"), "padding", "max-length"));
  CHECK(maxlen.padded_len == doctest::Approx(1024));
}

#include <fstream>
#include <sstream>

TEST_CASE("a loaded calibration replaces the spec efficiencies (fixture: tests/data/calibration)") {
  std::ifstream f(std::string(FTCOST_SOURCE_DIR) + "/tests/data/calibration/h100-sxm-synthetic.json");
  REQUIRE(f.good());
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string text = ss.str();
  FileReader reader = [&](const std::string&) -> Result<std::string> { return text; };
  Request r = with(with(kMixtral, "gpu", "h100-sxm5-80gb"), "calibration", "fixture.json");
  auto in = resolve_request(r, Database::embedded(), reader);
  REQUIRE_MESSAGE(in.ok(), (in.ok() ? std::string() : in.error().to_string()));
  REQUIRE(in->calibration != nullptr);
  auto cal = estimate(in.value(), Database::embedded());
  REQUIRE(cal.ok());
  CHECK(cal->step.calibrated);
  Estimate spec = run(with(kMixtral, "gpu", "h100-sxm5-80gb"));
  CHECK_FALSE(spec.step.calibrated);
  CHECK(cal->step.gpu_s != doctest::Approx(spec.step.gpu_s).epsilon(0.001));
  // a calibration whose GEMMs exceed the GPU's spec peak is rejected, naming the field
  Request r2 = with(with(kMixtral, "gpu", "a40"), "calibration", "fixture.json");
  auto bad = resolve_request(r2, Database::embedded(), reader);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().to_string().find("measurements.") != std::string::npos);
}

// PEFT's LoRA Linear.forward casts x to the fp32 adapters' dtype (peft_casts_lora_input): two elementwise
// kernels per adapted module in forward and in backward, and a saved 16-bit copy per module. QLoRA's bnb
// layers skip the cast under autocast, torchtune's bf16 adapters need none, and Unsloth's fused LoRA kernels
// (lora_dropout 0) cast the adapter weights instead.
TEST_CASE("PEFT's cast of the LoRA input: where it runs and what it costs") {
  const Request base =
      test::request("model=llama-3.1-8b gpu=h100-sxm5-80gb seq=1024 batch=4 method=lora stack=hf-trl-2026");
  auto cast_bytes = [](const Estimate& e) {
    double v = 0;
    for (const auto& op : e.step.ops)
      if (std::strcmp(op.name, "lora_cast") == 0) v += op.bytes;
    return v;
  };
  const Estimate lora = run(base);
  // 2 x (2 + 4) bytes per adapted input element, forward + recompute + backward; all-linear on Llama-3.1-8B
  // adapts q, k, v, o, gate, up (4096 inputs each) and down (14336) in 32 layers.
  const double elems = 4096.0 * 32 * (6 * 4096 + 14336);
  CHECK(cast_bytes(lora) == doctest::Approx(3 * 12 * elems).epsilon(1e-9));
  CHECK(cast_bytes(run(with(base, "method", "qlora"))) == 0);
  CHECK(cast_bytes(run(with(base, "stack", "torchtune-2024"))) == 0);
  CHECK(cast_bytes(run(with(base, "stack", "unsloth-2024q4"))) == 0);
  CHECK(cast_bytes(run(with(with(base, "stack", "unsloth-2024q4"), "lora-dropout", "0.1"))) > 0);
  // memory: without checkpointing every layer keeps its 16-bit copies (2 bytes per adapted input element).
  // What full fine-tuning keeps instead and LoRA does not: the two norm outputs and the MLP product, which
  // only the (trainable) linears reading them keep (autograd saves a matmul's input for the weight's
  // gradient only). Per token and layer: 2·(6H + F) - 2·(2H) - 2·F = 8H, plus lora_A's r-wide outputs
  // (7 modules x 16 x 2 bytes); in every layer and the backward's half layer of gradients in flight.
  const Estimate off = run(with(base, "checkpointing", "off"));
  const Estimate off_full = run(with(with(base, "checkpointing", "off"), "method", "full"));
  const double lora_extra = off.memory.activations - off_full.memory.activations;
  CHECK(lora_extra == doctest::Approx((32 + 0.5) * 4096 * (8 * 4096 + 7 * 16 * 2)).epsilon(1e-9));
}

TEST_CASE("a causal attention kernel computes half the L x L scores; eager computes all of them") {
  // FlashAttention-2 and SDPA's flash/efficient kernels skip the key blocks above the diagonal: query i
  // attends i keys, (L+1)/2 on average. QK^T and PV each cost 2 FLOPs per query, key and channel; eager
  // attention multiplies the full L x L scores and masks them afterwards.
  const Request base =
      test::request("model=llama-3.1-8b gpu=h100-sxm5-80gb seq=2048 batch=2 method=lora stack=hf-trl-2026");
  const double L = 2048, N = 2 * L, width = 4096 + 4096, layers = 32;  // q and o widths
  CHECK(forward_attention_flops(run(base)) == doctest::Approx(layers * 2 * N * (L + 1) / 2 * width));
  CHECK(forward_attention_flops(run(with(base, "attention", "eager"))) ==
        doctest::Approx(layers * 2 * N * L * width));
  // packed rows with document masking: each document is its own causal span
  const Estimate packed = run(with(base, "packed-doc-len", "256"));
  CHECK(forward_attention_flops(packed) == doctest::Approx(layers * 2 * N * (256 + 1) / 2 * width));
  // a sliding window of W keys: query i attends min(i, W) keys
  const double W = 4096, L2 = 8192, N2 = L2;
  const Estimate mistral = run(long_sample("mistral-7b"));
  CHECK(forward_attention_flops(mistral) == doctest::Approx(layers * 2 * N2 * mean_keys(L2, W) * width));
}

TEST_CASE(
    "Qwen3's q_norm and k_norm: two more RMSNorms per layer in the step and their saved input in memory") {
  // transformers models/qwen3/modeling_qwen3.py Qwen3Attention.forward: q_norm(q_proj(x)), k_norm(k_proj(x))
  // before rotary, each a Qwen3RMSNorm (fp32 upcast, pow, mean, rsqrt, mul, weight * x.to(dtype)).
  auto in = resolve_request(test::request("model=qwen3-8b gpu=h100-sxm5-80gb seq=1024 batch=2 method=lora "
                                          "checkpointing=off stack=hf-trainer-2026"),
                            Database::embedded(), nullptr);
  REQUIRE(in.ok());
  Inputs with_qk = in.value();
  REQUIRE(with_qk.model.attn.qk_norm);
  Inputs without_qk = with_qk;
  without_qk.model.attn.qk_norm = false;
  const auto a = estimate(with_qk, Database::embedded());
  const auto b = estimate(without_qk, Database::embedded());
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  auto norm_of = [](const Estimate& e, Stage st, bool kernels) {
    double v = 0;
    for (const auto& op : e.step.ops)
      if (op.stage == st && std::strcmp(op.name, "norm") == 0) v += kernels ? op.kernels : op.bytes;
    return v;
  };
  const double N = 2048, layers = 36, qk = 4096 + 1024;  // 32 query heads, 8 kv heads of 128
  // hf-trainer-2026 counts eager kernels (core/predict ops.cpp norm_ops): LlamaRMSNorm's forward reads and
  // writes 28 + 4a bytes per element in 8 kernels (to fp32, pow, mean, rsqrt, mul, to bf16, weight *)
  const double per_elem = 28 + 4 * 2;
  CHECK(norm_of(a.value(), Stage::forward, false) - norm_of(b.value(), Stage::forward, false) ==
        doctest::Approx(layers * N * qk * per_elem));
  // twice the kernels of one hidden-state norm per layer (2 norms per layer before)
  CHECK(norm_of(a.value(), Stage::forward, true) - norm_of(b.value(), Stage::forward, true) ==
        doctest::Approx(norm_of(b.value(), Stage::forward, true) * layers * 2 / (layers * 2 + 1)));
  // memory without checkpointing: every layer keeps the fp32 input of both norms (LoRA: the frozen weights
  // need no normalised copy), plus the half layer of gradients in flight (kBackwardGradInFlight)
  CHECK(a.value().memory.activations - b.value().memory.activations ==
        doctest::Approx((layers + 0.5) * N * qk * 4).epsilon(1e-9));
  CHECK(a.value().step.total_s > b.value().step.total_s);
}

TEST_CASE("models that alternate sliding-window and full attention layers are charged per layer kind") {
  const double L = 8192;
  // gpt-oss-20b: layer_types alternates sliding_attention (128 keys) and full_attention over 24 layers;
  // 64 heads of 64 for q and for the attention output
  const Estimate oss = run(with(long_sample("gpt-oss-20b"), "lora-targets", "attention"));
  const double oss_width = 4096.0 + 4096.0;
  CHECK(forward_attention_flops(oss) ==
        doctest::Approx(2 * L * oss_width * (12 * mean_keys(L, 128) + 12 * (L + 1) / 2)));
  // Gemma-2-9B's config has no layer_types: Gemma2Config alternates, sliding (4096) first, over 42 layers
  const Estimate gemma = run(long_sample("gemma-2-9b"));
  const double gemma_width = 2.0 * 16 * 256;
  CHECK(forward_attention_flops(gemma) ==
        doctest::Approx(2 * L * gemma_width * (21 * mean_keys(L, 4096) + 21 * (L + 1) / 2)));
}

TEST_CASE("--tiled-mlp: each dense MLP's forward runs once more in the backward (TiledMLP.backward)") {
  // Llama-3.1-8B full, one 8,192-token sample: 32 layers x (gate/up 4096 -> 28672, down 14336 -> 4096)
  const Request base =
      test::request("model=llama-3.1-8b gpu=h100-sxm5-80gb method=full seq=8192 batch=1 stack=hf-trl-2026");
  const Estimate off = run(base);
  const Estimate on = run(with(base, "tiled-mlp", "on"));
  double rerun_flops = 0;
  for (const auto& op : on.step.ops)
    if (op.stage == Stage::backward && std::strstr(op.name, "_rerun") != nullptr) rerun_flops += op.flops;
  CHECK(rerun_flops == doctest::Approx(32 * 2.0 * 8192 * (4096.0 * 28672 + 14336.0 * 4096)));
  const auto bwd = static_cast<std::size_t>(Stage::backward);
  CHECK(on.step.by_stage[bwd] > off.step.by_stage[bwd]);
  CHECK(on.step.by_stage[0] == doctest::Approx(off.step.by_stage[0]));  // the forward is unchanged
}

TEST_CASE("--fp8: torchao float8 linears run on the FP8 peak, with their dynamic casts counted by hand") {
  // Llama-3.1-8B, one 8,192-token sample, full fine-tuning on an H100 (989 bf16 / 1979 fp8 dense TFLOP/s).
  const Request base = test::request(
      "model=llama-3.1-8b gpu=h100-sxm5-80gb method=full seq=8192 batch=1 stack=hf-trl-2026 "
      "checkpointing=off");
  const Estimate off = run(base);
  const Estimate fp8 = run(with(base, "fp8", "tensorwise"));
  double cast_fwd = 0, cast_bwd = 0;
  for (const auto& op : fp8.step.ops) {
    if (std::strcmp(op.name, "fp8_cast") != 0) continue;
    (op.stage == Stage::forward ? cast_fwd : cast_bwd) += op.bytes;
  }
  // by hand, per layer: q 4096->4096, k and v 4096->1024, o 4096->4096, gate/up 4096->28672, down
  // 14336->4096; forward casts the input (8192 x in) and the weight (in x out), 5 B per element (amax read,
  // cast read, fp8 write); backward grad_output twice (8192 x out), the weight and the input again
  const double M = 8192;
  const double lin[6][2] = {{4096, 4096}, {4096, 1024},  {4096, 1024},
                            {4096, 4096}, {4096, 28672}, {14336, 4096}};
  double fwd = 0, bwd = 0;
  for (const auto& l : lin) {
    fwd += M * l[0] + l[0] * l[1];
    bwd += 2 * M * l[1] + l[0] * l[1] + M * l[0];
  }
  CHECK(cast_fwd == doctest::Approx(32 * 5 * fwd));
  CHECK(cast_bwd == doctest::Approx(32 * 5 * bwd));
  // the linears' GEMMs get faster, the step too, but by less than the 2x peak (casts, attention, the rest);
  // at a few hundred tokens the eager casts' launches and weight passes can cost more than they save
  const double gemm_off = off.step.by_class[static_cast<std::size_t>(KernelClass::gemm)];
  const double gemm_fp8 = fp8.step.by_class[static_cast<std::size_t>(KernelClass::gemm)];
  CHECK(gemm_fp8 < 0.75 * gemm_off);
  CHECK(fp8.step.total_s < off.step.total_s);
  CHECK(fp8.step.total_s > 0.5 * off.step.total_s);
}
