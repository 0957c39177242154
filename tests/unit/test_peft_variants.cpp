// PEFT variants (docs/sources/peft-variants.md): DoRA's magnitude vectors, saved outputs and weight-norm
// temporaries counted by hand for Llama layers; LoRA-FA's frozen lora_A; modules_to_save; rsLoRA changing
// nothing; the options' errors.
#include "ftcost/api.hpp"
#include "ftcost/database.hpp"
#include "ftcost/estimate.hpp"
#include "ftcost/memory.hpp"
#include "resolved_inputs.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace ftcost;

namespace {

Request llama8b(const std::string& variant) {
  return {{"model", "llama-3.1-8b"}, {"gpu", "h100-sxm5-80gb"}, {"method", "lora"},
          {"stack", "hf-trl-2026"},  {"seq", "1024"},           {"batch", "1"},
          {"lora-variant", variant}};
}

Inputs with(Request r, const std::string& key, const std::string& value) {
  r[key] = value;
  return test::inputs(r);
}

// The estimate of `r` (the test stops where there is none).
Estimate estimated(const Request& r) {
  auto e = estimate(test::inputs(r), Database::embedded());
  REQUIRE(e.ok());
  return e.value();
}

MemoryBreakdown memory_of(const Inputs& in) {
  return memory_for_batch(in.model, in.workload, in.stack, 1, 1024);
}

double layer_bytes(const Inputs& in) {
  return activation_detail(in.model, in.workload, in.stack, 1024).per_layer_max_bytes;
}

std::string error_field(Request r) {
  auto in = resolve_request(r, Database::embedded(), nullptr);
  return in.ok() ? std::string() : in.error().field;
}

}  // namespace

TEST_CASE("DoRA: one Llama-3.1-8B layer's terms counted by hand") {
  // hidden 4096, q 4096, k and v 1024 (8 kv heads x 128), MLP 14336, 32 layers; all-linear, rank 16; the
  // stack's adapters are fp32 (trainable_param_bytes 4), autocast bf16 (a = 2), PEFT casts x to fp32.
  const Inputs lora = test::inputs(llama8b("lora"));
  const Inputs dora = test::inputs(llama8b("dora"));
  REQUIRE(dora.stack.trainable_param_bytes == 4);
  // out_features of q, k, v, o, gate, up, down: one magnitude value each (dora.py update_layer:
  // nn.Parameter(weight_norm), [out])
  const double outs = 4096 + 1024 + 1024 + 4096 + 14336 + 14336 + 4096;
  const ParamBreakdown pl = param_breakdown(lora.model, lora.workload);
  const ParamBreakdown pd = param_breakdown(dora.model, dora.workload);
  CHECK(pd.dora_magnitude == 32 * outs);
  CHECK(pd.lora == pl.lora);
  CHECK(pd.trainable == pl.trainable + 32 * outs);
  // magnitude: fp32 parameter, gradient and two AdamW states (the stack's torch AdamW)
  const MemoryBreakdown ml = memory_of(lora);
  const MemoryBreakdown md = memory_of(dora);
  CHECK(md.trainable_params - ml.trainable_params == doctest::Approx(4 * 32 * outs));
  CHECK(md.gradients - ml.gradients == doctest::Approx(4 * 32 * outs));
  CHECK(md.optimizer_states - ml.optimizer_states == doctest::Approx(8 * 32 * outs));
  // saved per token and layer: base_result and lora_result of every adapted module, bf16
  CHECK(layer_bytes(dora) - layer_bytes(lora) == doctest::Approx(2 * 2 * outs));
  // weight norm, largest module down_proj (in 14336, out 4096): get_lora_weight holds torch.eye(14336) in
  // fp32, autocast's bf16 copy and lora_B's bf16 output [in, out]; get_weight_norm holds the eye's copy (the
  // graph of lora_weight) and four fp32 [in, out] tensors (lora_weight.to(x), weight.to(x), s * lora_weight,
  // weight + that). The two moments happen to be equal for this shape.
  const double I = 14336, O = 4096;
  const double eye_moment = (4 + 2) * I * I + 2 * I * O;
  const double norm_moment = 2 * I * I + 4 * 4 * I * O;
  CHECK(eye_moment == norm_moment);
  CHECK(md.dora_weight_norm == eye_moment);
  CHECK(ml.dora_weight_norm == 0);
  // gate_proj (in 4096, out 14336) is smaller: 2 x 4096^2 + 16 x 4096 x 14336
  CHECK(2 * 4096.0 * 4096 + 16 * 4096.0 * 14336 < eye_moment);
  // lora_dropout: DoRA's second base F.linear keeps a bf16 copy of the layer's adapted weights (one layer:
  // checkpointing is on)
  const Inputs dropped = with(llama8b("dora"), "lora-dropout", "0.1");
  const double layer_weights = 4096.0 * 4096 * 2 + 4096.0 * 1024 * 2 + 3 * 4096.0 * 14336;
  CHECK(memory_of(dropped).dora_weight_norm == doctest::Approx(eye_moment + 2 * layer_weights));
}

TEST_CASE("DoRA: the step runs the weight norm and costs more than LoRA") {
  Request r = llama8b("lora");
  const Estimate el = estimated(r);
  r["lora-variant"] = "dora";
  const Estimate ed = estimated(r);
  CHECK(ed.step.total_s > el.step.total_s);
  CHECK(ed.step.flops > el.step.flops);
  bool norm = false;
  for (const auto& op : ed.step.ops) norm = norm || std::string(op.name) == "dora_weight_norm";
  CHECK(norm);
  CHECK(ed.memory.total() > el.memory.total());
}

TEST_CASE("DoRA: Unsloth's fused LoRA kernels step aside (PEFT's modules run)") {
  Request r =
      test::request("model=llama-3.1-8b gpu=h100-sxm5-80gb method=qlora stack=unsloth-2024q4 seq=1024");
  const Inputs lora = test::inputs(r);
  r["lora-variant"] = "dora";
  const Inputs dora = test::inputs(r);
  CHECK(fused_lora(lora.stack, lora.workload));
  CHECK_FALSE(fused_lora(dora.stack, dora.workload));
}

TEST_CASE("LoRA-FA and DoRA: trainable parameters equal PEFT's method comparison counts") {
  // peft method_comparison/MetaMathQA/results lora--llama-3.2-3B-rank32{,-dora,-lorafa}.json,
  // num_trainable_params: q_proj and v_proj, rank 32, 28 layers (hidden 3072, kv 1024)
  Request r = test::request(
      "model=llama-3.2-3b gpu=l40s method=lora seq=768 lora-targets=q_proj,v_proj lora-rank=32 batch=4");
  CHECK(param_breakdown(test::inputs(r).model, test::inputs(r).workload).trainable == 9175040);
  r["lora-variant"] = "dora";
  CHECK(param_breakdown(test::inputs(r).model, test::inputs(r).workload).trainable == 9289728);
  r["lora-variant"] = "lora-fa";
  const Inputs fa = test::inputs(r);
  CHECK(param_breakdown(fa.model, fa.workload).trainable == 3670016);
}

TEST_CASE("LoRA-FA: no lora_A gradients or states, and no adapter input kept") {
  Request r = llama8b("lora");
  r["lora-targets"] = "q_proj,v_proj";
  const Inputs lora = test::inputs(r);
  r["lora-variant"] = "lora-fa";
  const Inputs fa = test::inputs(r);
  const ParamBreakdown p = param_breakdown(fa.model, fa.workload);
  CHECK(p.frozen_adapter == 16.0 * 32 * (4096 + 4096));  // lora_A [16, 4096] of q and v, 32 layers
  const MemoryBreakdown ml = memory_of(lora);
  const MemoryBreakdown mf = memory_of(fa);
  CHECK(mf.trainable_params == ml.trainable_params);  // A is still stored
  CHECK(ml.gradients - mf.gradients == doctest::Approx(4 * p.frozen_adapter));
  CHECK(ml.optimizer_states - mf.optimizer_states == doctest::Approx(8 * p.frozen_adapter));
  CHECK(mf.optimizer_step_temp == 0);  // LoraFAOptimizer steps one B at a time
  // PEFT casts x to fp32 for lora_A; autocast's bf16 copy is what lora_A kept for A's gradient: q and v
  CHECK(layer_bytes(lora) - layer_bytes(fa) == doctest::Approx(2 * 2 * 4096));
  // LoRA-FA is its own optimizer
  r["optimizer"] = "adamw-8bit";
  CHECK(error_field(r) == "--optimizer");
}

TEST_CASE("LoRA-FA, DoRA and LoRA count the same modules on every kind of model") {
  // LoRA-FA's lora_B (r x out per module) and DoRA's magnitude (out) sum the same outputs; A + B is
  // lora_params: a check of the module list behind both against lora_params for MoE, MLA and Mamba models
  for (const char* model :
       {"llama-3.1-8b", "mixtral-8x7b", "qwen3-30b-a3b", "deepseek-v2-lite", "blackmamba-2.8b"}) {
    CAPTURE(model);
    Request r = {{"model", model},
                 {"gpu", "h200-sxm-141gb"},
                 {"method", "lora"},
                 {"seq", "512"},
                 {"lora-targets", "all-linear"}};
    r["lora-variant"] = "lora-fa";
    const Inputs fa = test::inputs(r);
    r["lora-variant"] = "dora";
    const Inputs dora = test::inputs(r);
    const ParamBreakdown pf = param_breakdown(fa.model, fa.workload);
    const ParamBreakdown pd = param_breakdown(dora.model, dora.workload);
    const double rank = static_cast<double>(fa.workload.lora_rank);
    CHECK((pf.lora - pf.frozen_adapter) / rank == doctest::Approx(pd.dora_magnitude));
    CHECK(pf.frozen_adapter / rank + pd.dora_magnitude == doctest::Approx(pd.lora / rank));
  }
}

TEST_CASE("modules_to_save: a trained copy of embed_tokens and lm_head beside the frozen originals") {
  const Inputs lora = test::inputs(llama8b("lora"));
  const Inputs saved = with(llama8b("lora"), "modules-to-save", "embed_tokens,lm_head");
  const double VH = 128256.0 * 4096;
  const ParamBreakdown p = param_breakdown(saved.model, saved.workload);
  CHECK(p.saved_modules == 2 * VH);
  CHECK(p.frozen == param_breakdown(lora.model, lora.workload).frozen);  // the originals stay
  const MemoryBreakdown ml = memory_of(lora);
  const MemoryBreakdown ms = memory_of(saved);
  // bf16 copies (ModulesToSaveWrapper is no BaseTunerLayer: not upcast), bf16 gradients, two bf16 states
  CHECK(ms.trainable_params - ml.trainable_params == doctest::Approx(2 * 2 * VH));
  CHECK(ms.gradients - ml.gradients == doctest::Approx(2 * 2 * VH));
  CHECK(ms.optimizer_states - ml.optimizer_states == doctest::Approx(2 * 4 * VH));
  CHECK(ms.weights == ml.weights);
}

TEST_CASE("rsLoRA: accepted, the same estimate, and said so") {
  Request r = llama8b("lora");
  const Estimate plain = estimated(r);
  r["rslora"] = "on";
  const Estimate rs = estimated(r);
  CHECK(rs.memory.total() == plain.memory.total());
  CHECK(rs.step.total_s == plain.step.total_s);
  bool said = false;
  for (const auto& w : rs.in.warnings) said = said || w.find("--rslora") == 0;
  for (const auto& w : rs.warnings) said = said || w.find("--rslora") == 0;
  CHECK(said);
}

TEST_CASE("PEFT variant options: errors name the field") {
  Request r = llama8b("dora");
  r["method"] = "full";
  CHECK(error_field(r) == "--lora-variant");  // DoRA on a full fine-tune makes no sense
  r = llama8b("vera");
  CHECK(error_field(r) == "--lora-variant");
  r = llama8b("lora");
  r["modules-to-save"] = "embed_tokens,classifier";
  CHECK(error_field(r) == "--modules-to-save");
  r["modules-to-save"] = "lm_head,";
  CHECK(error_field(r) == "--modules-to-save");
  r.erase("modules-to-save");
  r["rslora"] = "yes";
  CHECK(error_field(r) == "--rslora");
}
