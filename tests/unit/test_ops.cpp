// The eager op inventory (core/predict ops.hpp): per-element counts against the code they are read from,
// one Llama layer and one MoE layer of the step against hand counts, a host-bound small model, and the
// calibrated path's op-class rates.
#include "ftcost/calibration.hpp"
#include "ftcost/database.hpp"
#include "ftcost/estimate.hpp"
#include "ftcost/ops.hpp"
#include "ftcost/throughput.hpp"
#include "resolved_inputs.hpp"

#include <doctest/doctest.h>

#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

using namespace ftcost;

namespace {

OpContext fwd() { return OpContext{}; }
OpContext bwd() {
  OpContext c;
  c.backward = true;
  return c;
}

using test::inputs;

StepTime step_of(const Inputs& in, std::int64_t batch, double len) {
  return step_model(in.model, in.workload, in.stack, in.gpu, in.calibration.get(), batch, len,
                    in.expert_shares);
}

// Sum of a field over the step's ops of one stage whose layer type is one of a decoder layer's (attention,
// MoE, MLP, norm), optionally of one kernel class only.
double layer_sum(const StepTime& t, Stage st, bool kernels, int kclass = -1) {
  double v = 0;
  for (const auto& op : t.ops) {
    if (op.stage != st || op.layer == LayerType::other) continue;
    if (kclass >= 0 && static_cast<int>(op.kclass) != kclass) continue;
    v += kernels ? op.kernels : op.bytes;
  }
  return v;
}

}  // namespace

TEST_CASE("eager op inventory: bytes and launches per element, bf16, as the modules run them") {
  // LlamaRMSNorm.forward: to(fp32) 2+4, pow 4+4, mean 4, mul 4+4, to(bf16) 4+2, weight * 2+2 = 36 B; 8
  // kernels
  CHECK(norm_ops(fwd()).bytes() == 36);
  CHECK(norm_ops(fwd()).kernels() == 8);
  // its backward, frozen weight: 2+2, 2+4, 4+4, 4+4+4 + 4, 4, 4+4+4 + 4+4, 4+4+4, 4+2 = 76 B; 12 kernels
  CHECK(norm_ops(bwd()).bytes() == 76);
  CHECK(norm_ops(bwd()).kernels() == 12);
  // apply_rotary_pos_emb per element of q and k: q*cos 4, neg 2, cat 4, *sin 4, add 6 = 20 B; 5 kernels each
  CHECK(rope_ops(fwd()).bytes() == 20);
  CHECK(rope_ops(fwd()).kernels() == 10);
  CHECK(rope_ops(bwd()).bytes() == 30);
  // silu 4 + mul 6; backward two muls 6 + 6, silu_backward 6
  CHECK(mlp_act_ops(fwd(), true).bytes() == 10);
  CHECK(mlp_act_ops(fwd(), true).kernels() == 2);
  CHECK(mlp_act_ops(bwd(), true).bytes() == 18);
  CHECK(mlp_act_ops(bwd(), true).kernels() == 3);
  CHECK(residual_ops(fwd()).bytes() == 6);
  // PEFT Linear.forward, fp32 adapters under autocast: x.to(fp32) 2+4, autocast's cast back 4+2 per input
  // element; * scaling 2+2 and + result 2+2+2 per output element; two weight casts
  const LoraGlue g = lora_glue_ops(fwd(), true, 0, true);
  CHECK(g.per_in.bytes() == 12);
  CHECK(g.per_in.kernels() == 2);
  CHECK(g.per_out.bytes() == 10);
  CHECK(g.per_out.kernels() == 2);
  CHECK(g.fixed_kernels == 2);
  // lora_dropout on the fp32 copy: read 4, write 4, the bool mask 1
  CHECK(lora_glue_ops(fwd(), true, 4, true).per_in.bytes() == 12 + 9);
  // ForCausalLMLoss per logit: float() 2+4, log_softmax 8+4; backward zero fill 4, softmax backward 12,
  // cast back 4+2; the chunked loss recomputes its forward in the backward
  CHECK(loss_ops(fwd(), false).bytes() == 18);
  CHECK(loss_ops(bwd(), false).bytes() == 22);
  CHECK(loss_ops(bwd(), true).bytes() == 22 + 18);
  // fused kernels (Liger, Unsloth): one kernel, each tensor once
  OpContext f = fwd();
  f.fused.rmsnorm = f.fused.rope = f.fused.swiglu = true;
  CHECK(norm_ops(f).bytes() == 4);
  CHECK(norm_ops(f).kernels() == 1);
  CHECK(rope_ops(f).kernels() == 1);
  CHECK(mlp_act_ops(f, true).bytes() == 6);
}

TEST_CASE("eager op inventory: torch AdamW foreach and fused, with clip_grad_norm_") {
  OptimizerShape o;
  o.params = 1e6;
  o.tensors = 200;
  // foreach, fp32: lerp 12, mul 8, addcmul 12, sqrt 8, div 8, add 8, addcdiv 16 = 72 B per parameter
  // clip: norm 4 + mul 8 = 12 B per parameter
  OpList l = optimizer_ops(o);
  CHECK(l.bytes() == doctest::Approx(1e6 * (72 + 12)));
  // launches: depth 1 ops fill at 110 tensors (2 launches for 200), depth 2 at 64 (4), depth 3 at 48 (5):
  // clip 2 x 2 + 4; adam: lerp, sqrt (depth 2) 2 x 4, mul, div, add (depth 1) 3 x 2, addcmul, addcdiv
  // (depth 3) 2 x 5
  CHECK(l.kernels() == 8 + 8 + 6 + 10);
  o.fused = true;
  // _fused_adamw: params, grads, m, v read, params, m, v written: 28 B; depth 4 fills at 36 tensors (6)
  CHECK(optimizer_ops(o).bytes() == doctest::Approx(1e6 * (28 + 12)));
  CHECK(optimizer_ops(o).kernels() == 8 + 6);
}

TEST_CASE("one Llama layer on hf-trainer-2026: the kernels between the GEMMs, counted by hand") {
  // Llama-3.2-3B, LoRA r16 on all seven linears, SDPA (flash), no checkpointing, 4 x 1024 tokens
  const Inputs in =
      inputs(test::request("model=llama-3.2-3b gpu=h200-sxm-141gb method=lora seq=1024 batch=4 "
                           "checkpointing=off stack=hf-trainer-2026"));
  REQUIRE(in.stack.ops_inventory == "eager");
  const StepTime t = step_of(in, 4, 1024);
  const double L = 28, N = 4096, H = 3072, q = 3072, kv = 1024, F = 8192, r = 16;
  // forward launches per layer: 2 norms x 8; RoPE 10; the attention output's transpose copy 1; two residual
  // adds; SiLU and the product 2; 7 base GEMMs; SDPA's flash forward 2; per adapter its 2 GEMMs, 2 casts of
  // x, 2 casts of its weights, the scaling and the add: 7 x 8 = 56. The final norm adds 8.
  const double per_layer = 16 + 10 + 1 + 2 + 2 + 7 + 2 + 56;
  CHECK(layer_sum(t, Stage::forward, true) == doctest::Approx(L * per_layer + 8));
  // forward element-wise bytes per layer
  const double ins = 3 * H + q + 2 * H + F;          // adapted inputs: q, k, v, o, gate, up, down
  const double outs = q + 2 * kv + H + 2 * F + H;    // their outputs
  const double ew = 2 * N * H * 36                   // the two norms
                    + N * (q + kv) * 20              // RoPE on q and k
                    + N * q * 4                      // transpose(1, 2).contiguous()
                    + 2 * N * H * 6                  // residual adds
                    + N * F * 10                     // silu(gate) * up
                    + N * ins * 12 + N * outs * 10;  // PEFT's casts, scaling and add
  CHECK(layer_sum(t, Stage::forward, false, static_cast<int>(KernelClass::elementwise)) ==
        doctest::Approx(L * ew + N * H * 36));
  // forward GEMM FLOPs per layer: the projections and the adapters (2 N r (in + out) each)
  const double gemm = 2 * N * (H * q + 2 * H * kv + q * H + 3 * H * F) + 2 * N * r * (ins + outs);
  double flops = 0;
  for (const auto& op : t.ops)
    if (op.stage == Stage::forward && op.kclass == KernelClass::gemm && op.layer != LayerType::other)
      flops += op.flops;
  CHECK(flops == doctest::Approx(L * gemm));
  // backward launches per layer: 2 norms x 12; RoPE 18; transpose 1; residual sums 2; gradient sums of the
  // normed inputs (q, k, v: 2; gate, up: 1); the MLP's 3; 7 dgrad GEMMs; flash backward 2; per adapter 4
  // GEMMs, 1 gradient sum, 2 casts, 2 weight-cast gradients, the scaling: 7 x 10
  const double bwd_layer = 24 + 18 + 1 + 2 + 3 + 3 + 7 + 2 + 70;
  CHECK(layer_sum(t, Stage::backward, true) == doctest::Approx(L * bwd_layer + 12));
}

TEST_CASE("one MoE layer on hf-trainer-2026: Qwen3-30B-A3B's norms, RoPE and residuals by hand") {
  const Inputs in = inputs(test::request(
      "model=qwen3-30b-a3b gpu=h200-sxm-141gb method=lora lora-targets=q_proj,k_proj,v_proj,o_proj seq=1024 "
      "batch=2 checkpointing=off stack=hf-trainer-2026"));
  const StepTime t = step_of(in, 2, 1024);
  const double L = 48, N = 2048, H = 2048, q = 4096, kv = 512;  // 32 query heads, 4 kv heads of 128
  double norm_k = 0, norm_b = 0, rope_b = 0, resid_b = 0, resid_k = 0;
  for (const auto& op : t.ops) {
    if (op.stage != Stage::forward) continue;
    if (std::strcmp(op.name, "norm") == 0) norm_k += op.kernels, norm_b += op.bytes;
    if (std::strcmp(op.name, "rope") == 0) rope_b += op.bytes;
    if (std::strcmp(op.name, "residual") == 0) resid_b += op.bytes, resid_k += op.kernels;
  }
  // per layer: the input and post-attention norms over H, q_norm and k_norm over q and kv (Qwen3MoeAttention)
  // x 8 kernels each; the final norm
  CHECK(norm_k == doctest::Approx(L * 4 * 8 + 8));
  CHECK(norm_b == doctest::Approx(L * N * (2 * H + q + kv) * 36 + N * H * 36));
  CHECK(rope_b == doctest::Approx(L * N * (q + kv) * 20));
  // the residual adds after attention and after the sparse MoE block
  CHECK(resid_k == doctest::Approx(L * 2));
  CHECK(resid_b == doctest::Approx(L * 2 * N * H * 6));
}

TEST_CASE("eager op inventory: transformers 5's grouped_mm experts per element, bf16 and fp32 weights") {
  // forward, bf16 routing weights: the two gathers 4 + 4; the weight product 2 + 2, out[inv_perm] 2 + 2,
  // index_add_ reads 2 (no cast back); the result's zero fill and writes 2 + 2 per token element
  MoeGroupedOps o = moe_grouped_mm_ops(fwd(), 2, 16384);
  CHECK(o.per_pair.bytes() == 8 + 10);
  CHECK(o.per_pair.kernels() == 2 + 3);
  CHECK(o.per_token.bytes() == 4);
  // fp32 weights promote the product: 2 + 4, un-permute 4 + 4, the cast back 4 + 2, index_add_ 2
  o = moe_grouped_mm_ops(fwd(), 4, 16384);
  CHECK(o.per_pair.bytes() == 8 + 22);
  CHECK(o.per_pair.kernels() == 2 + 4);
  // int64 index work per routed pair: token_idx arange 8 + copy 16; two argsorts, each a fill 8 and a
  // 64-bit CUB onesweep sort of pairs (histogram 8, 8 passes of 32); expert_ids[perm] 24; fp32
  // sample_weights[perm] 8 + 8; histc's cast 12 and count 4
  CHECK(o.per_route.bytes() == 24 + 2 * (8 + 8 + 8 * 32) + 24 + 16 + 16);
  // arange, copy; 2 x (fill, histogram, exclusive sum, 8 passes); 2 gathers; cast, zero, count; cumsum
  CHECK(o.per_route.kernels() == 2 + 2 * 11 + 2 + 3 + 1);
  // backward, bf16: index_select 4; IndexBackward of out[inv_perm]: zeros 2, index_put_ 2 + 4; the
  // product's gradients 4 and 2 + 2 + 2, their sum over hidden 2; the gathers' index_put_s 2 + 2 + 4 and
  // 2 + 4 (their zero fill: per token); 9 kernels
  o = moe_grouped_mm_ops(bwd(), 2, 16384);
  CHECK(o.per_pair.bytes() == 4 + 8 + 4 + 8 + 14);
  CHECK(o.per_pair.kernels() == 6 + 3);
  CHECK(o.per_token.bytes() == 2);
  // four sorted index_put_ calls, 16384 rows = 14 bits: linear index 16, divide_ 16, arange 8, a sort of
  // 2 passes (8 + 64); sample_weights' own zeros and index_put_ 8
  CHECK(o.per_route.bytes() == 4 * (16 + 16 + 8 + 8 + 2 * 32) + 8);
  CHECK(o.per_route.kernels() == 4 * (3 + 4) + 2);
  // 131,072 rows (17 bits) take a third pass
  CHECK(moe_grouped_mm_ops(bwd(), 2, 131072).per_route.kernels() == 4 * (3 + 5) + 2);
}

TEST_CASE("one MoE layer on hf-trainer-2026: transformers 5's router and grouped_mm experts by hand") {
  const Inputs in = inputs(test::request(
      "model=qwen3-30b-a3b gpu=h200-sxm-141gb method=lora lora-targets=q_proj,k_proj,v_proj,o_proj seq=1024 "
      "batch=2 checkpointing=off stack=hf-trainer-2026"));
  const StepTime t = step_of(in, 2, 1024);
  // 48 sparse layers, 2048 tokens x top-8 = 16,384 routed pairs, hidden 2048, expert intermediate 768
  const double L = 48, N = 2048, H = 2048, S = 16384, F = 768;
  double fb = 0, fk = 0, bb = 0, bk = 0;
  for (const auto& op : t.ops) {
    if (op.layer != LayerType::moe || op.kclass != KernelClass::elementwise) continue;
    double& b = op.stage == Stage::forward ? fb : bb;
    double& k = op.stage == Stage::forward ? fk : bk;
    if (op.stage == Stage::recompute) continue;
    b += op.bytes;
    k += op.kernels;
  }
  // forward per layer: zero fill + result writes 4 B per token element; gathers 8, product, un-permute and
  // index_add_ reads 10 per pair element; SiLU x up 10 per pair x intermediate element; the index work
  // 620 B per pair; the residual add after the block 6 per token element (the attention's is not MoE); the
  // router's softmax and top-k read 2 + 4 + 4 per logit (128 experts), top-k's values and indices 12, the
  // renormalisation 4 + 8 and the cast back 4 + 2 per pair
  const double E = 128;
  CHECK(fb == doctest::Approx(
                  L * (N * H * 4 + S * H * 18 + S * F * 10 + S * 620 + N * H * 6 + N * E * 10 + S * 30)));
  // zero fill; 2 gathers; 3; silu, mul; 30 index kernels; the residual add; the router's 6
  CHECK(fk == doctest::Approx(L * (1 + 2 + 3 + 2 + 30 + 1 + 6)));
  // backward per layer: the gathered input's zero-filled gradient 2 and the sum of its two consumers'
  // gradients 6 per token element; 38 per pair element; SiLU x up 18 per pair x intermediate element;
  // 456 B per pair for the four sorted index_put_ calls; the residual's gradient sum 6 per token element;
  // the router: top-k's zero fill 4 and the softmax backward 8 + 2 per logit; per pair the cast's 2 + 4,
  // the division's gradients 8 and 12 + 4, the sum's 12, top-k's scatter 16
  CHECK(bb == doctest::Approx(L * (N * H * (2 + 6) + S * H * 38 + S * F * 18 + S * 456 + N * H * 6 +
                                   N * E * 14 + S * 58)));
  CHECK(bk == doctest::Approx(L * (1 + 1 + 9 + 3 + 30 + 1 + 8)));
}

TEST_CASE("a small model at a short sequence on a fast GPU is host-bound; a long one is not") {
  Request r = test::request(
      "model=llama-3.2-3b gpu=h200-sxm-141gb method=lora seq=128 batch=1 stack=hf-trainer-2026");
  const Inputs in = inputs(r);
  const StepTime small = step_of(in, 1, 128);
  double device_fwd = 0;
  for (const auto& op : small.ops)
    if (op.stage == Stage::forward) device_fwd += op.gpu_s;
  const auto f = static_cast<std::size_t>(Stage::forward);
  // the host issues the forward's ops slower than the device runs them: the stage is the host's time
  CHECK(small.host_issue_by_stage[f] > device_fwd);
  CHECK(small.by_stage[f] == doctest::Approx(small.host_issue_by_stage[f]));
  CHECK(small.host_s > 0.5 * small.total_s);
  const StepTime large = step_of(in, 8, 4096);
  CHECK(large.host_s < 0.05 * large.total_s);
}

TEST_CASE(
    "the calibrated path times the inventory's op classes at the calibration's rates when it has them") {
  std::ifstream file(std::string(FTCOST_SOURCE_DIR) + "/tests/data/calibration/h100-sxm-synthetic.json");
  REQUIRE(file.good());
  std::stringstream ss;
  ss << file.rdbuf();
  auto cal = parse_calibration(ss.str(), "fixture.json");
  REQUIRE(cal.ok());
  Inputs in = inputs(test::request(
      "model=llama-3.2-3b gpu=h100-sxm5-80gb method=lora seq=1024 batch=4 stack=hf-trainer-2026"));
  auto norm_time = [&](const Calibration& c, double* bytes, double* kernels) {
    const StepTime t = step_model(in.model, in.workload, in.stack, in.gpu, &c, 4, 1024, in.expert_shares);
    double s = 0;
    *bytes = *kernels = 0;
    for (const auto& op : t.ops)
      if (op.stage == Stage::forward && std::strcmp(op.name, "norm") == 0) {
        s += op.gpu_s;
        *bytes += op.bytes;
        *kernels += op.kernels;
      }
    return s;
  };
  Calibration c = cal.value();
  REQUIRE(c.derived.launch_overhead_us.has_value());
  const double launch = *c.derived.launch_overhead_us * 1e-6;
  double bytes = 0, kernels = 0;
  // without norm_gbps: the sustained copy/triad bandwidth, plus one launch latency per kernel
  c.derived.norm_gbps.reset();
  REQUIRE(c.derived.memory_bandwidth_gbps.has_value());
  const double fallback = norm_time(c, &bytes, &kernels);
  CHECK(fallback == doctest::Approx(bytes / (*c.derived.memory_bandwidth_gbps * 1e9) + kernels * launch));
  // with it: that rate
  c.derived.norm_gbps = 1000.0;
  CHECK(norm_time(c, &bytes, &kernels) == doctest::Approx(bytes / 1e12 + kernels * launch));
  // measured attention rates replace the GEMM-derived flash rate
  c.derived.attention_fwd_tflops = 100.0;
  const StepTime t = step_model(in.model, in.workload, in.stack, in.gpu, &c, 4, 1024, in.expert_shares);
  for (const auto& op : t.ops)
    if (op.stage == Stage::forward && op.kclass == KernelClass::attention)
      CHECK(op.gpu_s == doctest::Approx(std::max(op.flops / 100e12, op.kernels * launch)));
}
