// Modern-stack memory and step-time features (issue #13) against hand counts from the stacks' code
// (docs/sources/stacks/): loss paths, checkpoint offloading, optimizer-in-backward, 8-bit AdamW, QLoRA
// fp32 upcast, gradient accumulation, the longest sequence at batch 1, the memory range, the options.
#include "ftcost/database.hpp"
#include "ftcost/estimate.hpp"
#include "ftcost/model_constants.hpp"
#include "ftcost/units.hpp"
#include "ftcost/validate.hpp"
#include "resolved_inputs.hpp"

#include <doctest/doctest.h>

#include <cmath>

using namespace ftcost;

namespace {

// Resolves `r` with the extra options `more` (request keys of the option table).
Inputs resolve(Request r, const Request& more = {}) {
  for (const auto& [k, v] : more) r[k] = v;
  auto in = resolve_request(r, Database::embedded(), nullptr);
  REQUIRE_MESSAGE(in.ok(), (in.ok() ? std::string() : in.error().to_string()));
  return in.value();
}

// The error of resolving `r` with `more`.
Error resolve_error(Request r, const Request& more) {
  for (const auto& [k, v] : more) r[k] = v;
  auto in = resolve_request(r, Database::embedded(), nullptr);
  REQUIRE(!in.ok());
  return in.error();
}

// Llama-3.2-3B at 2 x 4096 tokens on an A100 80GB with torchtune: the README optimisation table's job.
Request llama32_3b_torchtune(const std::string& method = "full", const std::string& batch = "2") {
  return {{"model", "llama-3.2-3b"}, {"gpu", "a100-sxm4-80gb"}, {"method", method},
          {"seq", "4096"},           {"batch", batch},          {"stack", "torchtune-2024"}};
}

Request llama7b(const std::string& stack, const std::string& method = "qlora") {
  return {{"model", "llama-2-7b"}, {"gpu", "a100-sxm4-80gb"}, {"method", method}, {"seq", "2048"},
          {"batch", "2"},          {"stack", stack}};
}
}  // namespace

TEST_CASE("every shipped stack profile parses; the paper's keeps its loss path and checkpoints on the GPU") {
  const Database& db = Database::embedded();
  for (const char* id : {"hf-trl-2024q1", "hf-trl-2024q4", "hf-trl-2025", "hf-trl-2026", "unsloth-2024q2",
                         "unsloth-2024q4", "torchtune-2024"}) {
    CAPTURE(id);
    const StackProfile* s = db.stack(id);
    REQUIRE(s != nullptr);
    CHECK(!s->version.empty());
  }
  const StackProfile* paper = db.stack("hf-transformers-2024");
  REQUIRE(paper != nullptr);
  CHECK(paper->loss_path == "full");
  CHECK(!paper->offload_checkpoints);
  CHECK(paper->mlp_saved_intermediates == 4);
  CHECK(paper->logits_bytes_per_vocab_entry == 14);
}

TEST_CASE("loss paths: full logits, TRL's 256-token chunks, Liger's fused linear cross-entropy") {
  // Llama-2-7B: H 4096, V 32000; 2 x 2048 = 4096 tokens.
  const double tokens = 4096, H = 4096, V = 32000;
  Inputs full = resolve(llama7b("hf-trl-2025"));
  MemoryBreakdown mf = memory_for_batch(full.model, full.workload, full.stack, 2, 2048);
  CHECK(mf.logits == doctest::Approx(tokens * V * 10));  // bf16 logits + fp32 upcast + log-softmax
  // transformers 4.46-4.48 also copies the shifted fp32 logits (.contiguous(), before PR #35646)
  Inputs copied = resolve(llama7b("hf-trl-2024q4"));
  CHECK(memory_for_batch(copied.model, copied.workload, copied.stack, 2, 2048).logits ==
        doctest::Approx(tokens * V * 14));

  Inputs chunked = resolve(llama7b("hf-trl-2026"));
  MemoryBreakdown mc = memory_for_batch(chunked.model, chunked.workload, chunked.stack, 2, 2048);
  // per token the hidden-state gradient (2H), plus one 256-token chunk of logits at 10 B per entry
  CHECK(mc.logits == doctest::Approx(tokens * 2 * H + 256 * V * 10));

  Inputs liger = resolve(llama7b("hf-trl-2026"), Request{{"liger", "on"}});
  MemoryBreakdown ml = memory_for_batch(liger.model, liger.workload, liger.stack, 2, 2048);
  CHECK(ml.logits == doctest::Approx(tokens * 6 * H));
  // Liger's SwiGLU keeps gate and up only (2F instead of 4F) and its RMSNorm a 16-bit input (2H, not 4H),
  // per MLP block and per norm, in all 32 layers' sum: checkpointing keeps 1.5 layers of them.
  CHECK(ml.activations < mc.activations);
}

TEST_CASE("offloaded checkpoints: host RAM holds layers x N x H x 2 B, the GPU keeps two") {
  Inputs on = resolve(llama7b("unsloth-2024q2"));
  Inputs off = resolve(llama7b("unsloth-2024q2"), Request{{"offload-activations", "off"}});
  const double tokens = 4096, ckpt = 4096.0 * 2;
  MemoryBreakdown mon = memory_for_batch(on.model, on.workload, on.stack, 2, 2048);
  MemoryBreakdown moff = memory_for_batch(off.model, off.workload, off.stack, 2, 2048);
  CHECK(mon.host_offload == doctest::Approx(tokens * 32 * ckpt));
  CHECK(moff.host_offload == 0);
  CHECK(moff.activations - mon.activations == doctest::Approx(tokens * (32 - 2) * ckpt));
  // Offloading needs checkpointing.
  const Error e = resolve_error(
      {{"model", "llama-2-7b"}, {"gpu", "a100-sxm4-80gb"}, {"method", "qlora"}, {"checkpointing", "off"}},
      {{"offload-activations", "on"}});
  CHECK(e.field == "--offload-activations");
}

TEST_CASE("PCIe time of offloading: 2 x host bytes over the host link, exposed only beyond compute") {
  Inputs in = resolve(llama7b("unsloth-2024q2"));
  const double host = 4096.0 * 32 * 4096 * 2;
  StepTime t = step_model(in.model, in.workload, in.stack, in.gpu, nullptr, 2, 2048, {});
  CHECK(t.offload_pcie_s == doctest::Approx(2 * host / 25e9));  // A100: PCIe 4.0 x16 at ~25 GB/s
  Inputs off = resolve(llama7b("unsloth-2024q2"), Request{{"offload-activations", "off"}});
  StepTime t0 = step_model(off.model, off.workload, off.stack, off.gpu, nullptr, 2, 2048, {});
  CHECK(t0.offload_pcie_s == 0);
  // 0.17 s of copies hide behind ~1 s of forward + backward: no time is added.
  CHECK(t.total_s == doctest::Approx(t0.total_s));
}

TEST_CASE("full fine-tuning: pure bf16, optimizer-in-backward, blockwise 8-bit AdamW (torchtune)") {
  const Request r = llama32_3b_torchtune();
  Inputs base = resolve(r);
  const double P = static_cast<double>(base.model.params().total());
  CHECK(P == doctest::Approx(3212749824.0));  // tied embeddings counted once
  MemoryBreakdown mb = memory_for_batch(base.model, base.workload, base.stack, 2, 4096);
  CHECK(mb.weights == doctest::Approx(2 * P));
  CHECK(mb.gradients == doctest::Approx(2 * P));
  CHECK(mb.optimizer_states == doctest::Approx(4 * P));  // torch AdamW: two bf16 states
  Inputs inbwd = resolve(r, Request{{"optimizer-in-backward", "on"}, {"optimizer", "paged-adamw-8bit"}});
  MemoryBreakdown mi = memory_for_batch(inbwd.model, inbwd.workload, inbwd.stack, 2, 4096);
  CHECK(mi.gradients == doctest::Approx(128256.0 * 3072 * 2));  // the largest tensor: the embedding
  CHECK(mi.optimizer_states == doctest::Approx(P * 2 * (1 + 4.0 / 256)));
  CHECK(resolve_error(r, {{"optimizer-in-backward", "on"}, {"grad-accum", "4"}}).field ==
        "--optimizer-in-backward");
}

TEST_CASE("QLoRA with peft's kbit preparation: unquantized weights in fp32, fp32 checkpoints") {
  Inputs up = resolve(llama7b("hf-trl-2024q1"));
  Inputs no = resolve(llama7b("hf-trl-2024q1"), Request{{"kbit-upcast", "off"}});
  MemoryBreakdown mu = memory_for_batch(up.model, up.workload, up.stack, 2, 2048);
  MemoryBreakdown mn = memory_for_batch(no.model, no.workload, no.stack, 2, 2048);
  // embed_tokens + lm_head (2 x 32000 x 4096) + norms (65 x 4096): 2 extra bytes each
  const double unquantized = 2.0 * 32000 * 4096 + 65.0 * 4096;
  CHECK(mu.weights - mn.weights == doctest::Approx(2 * unquantized));
  CHECK(mu.activations > mn.activations);
}

TEST_CASE("gradient accumulation: a micro-batch carries 1/N of the optimizer step") {
  Inputs one = resolve(llama7b("hf-trl-2024q1", "lora"));
  Inputs four = resolve(llama7b("hf-trl-2024q1", "lora"), Request{{"grad-accum", "4"}});
  StepTime t1 = step_model(one.model, one.workload, one.stack, one.gpu, nullptr, 2, 2048, {});
  StepTime t4 = step_model(four.model, four.workload, four.stack, four.gpu, nullptr, 2, 2048, {});
  const auto opt = static_cast<std::size_t>(Stage::optimizer);
  CHECK(t1.by_stage[opt] > 0);
  CHECK(t4.by_stage[opt] == doctest::Approx(t1.by_stage[opt] / 4).epsilon(0.02));
  CHECK(t4.by_stage[0] == doctest::Approx(t1.by_stage[0]));
}

TEST_CASE("longest sequence at batch 1: fits at L, not at L + 1") {
  for (const char* stack : {"hf-trl-2024q4", "unsloth-2024q4", "hf-transformers-2024"}) {
    CAPTURE(stack);
    Inputs in = resolve({{"model", "llama-3.1-8b"},
                         {"gpu", "rtx-4090"},
                         {"method", "qlora"},
                         {"seq", "1024"},
                         {"stack", stack}});
    MaxSeq ms = max_seq_len(in.model, in.workload, in.stack, in.gpu);
    REQUIRE(ms.seq_len > 0);
    const double usable = in.gpu.usable_bytes();
    CHECK(memory_for_batch(in.model, in.workload, in.stack, 1, ms.seq_len).total() <= usable);
    CHECK(memory_for_batch(in.model, in.workload, in.stack, 1, ms.seq_len + 1).total() > usable);
  }
  // A model that does not fit at all has no length.
  Inputs big =
      resolve({{"model", "llama-3.1-70b"}, {"gpu", "rtx-4090"}, {"method", "lora"}, {"seq", "1024"}});
  CHECK(max_seq_len(big.model, big.workload, big.stack, big.gpu).seq_len == 0);
}

TEST_CASE("memory range: a job whose upper end exceeds usable memory says so instead of a plain fit") {
  Request r = test::request("model=llama-3.1-8b gpu=rtx-4090 method=qlora stack=hf-trl-2024q4");
  Inputs probe = resolve(r);
  r["seq"] = std::to_string(static_cast<long>(
      max_seq_len(probe.model, probe.workload, probe.stack, probe.gpu).seq_len));  // right at the edge
  r["batch"] = "1";
  auto e = estimate(resolve(r), Database::embedded());
  REQUIRE(e.ok());
  CHECK(e->memory.total() <= e->in.gpu.usable_bytes());
  CHECK(e->memory_high > e->in.gpu.usable_bytes());
  bool warned = false;
  for (const auto& w : e->warnings)
    warned = warned || w.find("fits only at the low end") != std::string::npos;
  CHECK(warned);
  CHECK(e->memory_low < e->memory.total());
}

TEST_CASE("stack options: bad values name the option and what is allowed") {
  struct Case {
    Request opts;
    const char* field;
  };
  for (const auto& c :
       {Case{Request{{"grad-accum", "0"}}, "--grad-accum"},
        Case{Request{{"grad-accum", "2x"}}, "--grad-accum"}, Case{Request{{"liger", "yes"}}, "--liger"},
        Case{Request{{"optimizer", "adam"}}, "--optimizer"}, Case{Request{{"host-ram", "-1"}}, "--host-ram"},
        Case{Request{{"packed-doc-len", "0"}}, "--packed-doc-len"},
        Case{Request{{"adamw-impl", "apex"}}, "--adamw-impl"},
        Case{Request{{"optimizer", "adamw-8bit"}, {"adamw-impl", "fused"}}, "--adamw-impl"},
        Case{Request{{"no-such-option", "1"}}, "--no-such-option"}}) {
    CAPTURE(c.field);
    CHECK(resolve_error(llama7b("hf-trl-2026"), c.opts).field == c.field);
  }
}

TEST_CASE("reference rows carry the stack options as request keys") {
  const char* text = R"({"schema":"ftcost.reference/1","rows":[{"id":"x","role":"training","group":"g",
    "request":{"model":"llama-2-7b","gpu":"a100-sxm4-80gb","method":"qlora","seq":"1024","batch":"1","stack":"unsloth-2024q2",
    "offload-activations":"off"},"metric":"peak_memory_gib","measured":10,"source":"test"}]})";
  auto rows = parse_reference(text, "t.json");
  REQUIRE(rows.ok());
  auto in = resolve_row(rows.value()[0], Database::embedded());
  REQUIRE(in.ok());
  CHECK(in->workload.offload == Switch::off);
  auto p = predict(rows.value()[0], Database::embedded());
  REQUIRE(p.ok());
  CHECK(p.value() > 3.5);  // NF4 weights alone are 3.6 GiB
  CHECK(p.value() < 20);
  (void)kGiB;
}

TEST_CASE("--seq max: the estimate runs at the longest sequence that fits at batch 1") {
  Request r = test::request("model=llama-3.1-8b gpu=rtx-4090 method=qlora stack=hf-trl-2024q4");
  Inputs fixed = resolve(r, {{"seq", "1024"}});
  const double longest = max_seq_len(fixed.model, fixed.workload, fixed.stack, fixed.gpu, 8).seq_len;
  REQUIRE(longest > 1024);
  auto e = estimate(resolve(r, {{"seq", "max"}}), Database::embedded());
  REQUIRE(e.ok());
  CHECK(e->batch == 1);
  CHECK(e->max_batch.seq_len == longest);
  CHECK(e->memory.total() <= e->in.gpu.usable_bytes());
  auto bad = estimate(resolve(r, {{"seq", "max"}, {"batch", "2"}}), Database::embedded());
  REQUIRE(!bad.ok());
  CHECK(bad.error().field == "--seq");
}

TEST_CASE("stack aliases: LLaMA-Factory is hf-trl-2024q1 without peft's kbit upcast, not a copy") {
  const Database& db = Database::embedded();
  const StackProfile* lf = db.stack("llamafactory-2024");
  const StackProfile* hf = db.stack("hf-trl-2024q1");
  REQUIRE(lf != nullptr);
  REQUIRE(hf != nullptr);
  CHECK(lf->alias_of == "hf-trl-2024q1");
  CHECK(lf->gemm_efficiency == hf->gemm_efficiency);  // fitted values come from the base
  CHECK(lf->logits_bytes_per_vocab_entry == hf->logits_bytes_per_vocab_entry);
  Inputs a = resolve(llama7b("llamafactory-2024"));
  Inputs b = resolve(llama7b("hf-trl-2024q1"), {{"kbit-upcast", "off"}});
  CHECK(memory_for_batch(a.model, a.workload, a.stack, 2, 2048).total() ==
        doctest::Approx(memory_for_batch(b.model, b.workload, b.stack, 2, 2048).total()));
  // An alias of an unknown profile is a database problem, not a crash.
  Database bad = Database::from_files(
      {{"stacks/x.json", R"({"schema":"ftcost.stack/1","id":"x","display_name":"X","alias_of":"nope"})"}});
  CHECK(bad.stack("x") == nullptr);
  CHECK(!bad.problems().empty());
}

TEST_CASE(
    "axolotl: the transformers its releases pin decide the loss; adapters keep norms and embeddings bf16") {
  // requirements.txt: v0.5.0-v0.7.0 pin transformers 4.46.1-4.48.3 (the shifted fp32 logits copied, 14 B),
  // v0.7.1+ 4.49.0+ (labels shifted instead, 10 B); ModelLoader casts norms, embed_tokens and lm_head back
  // to bf16 after prepare_model_for_kbit_training for every adapter (docs/sources/stacks/trl-peft.md).
  const Database& db = Database::embedded();
  const StackProfile* q4 = db.stack("axolotl-2024q4");
  const StackProfile* y25 = db.stack("axolotl-2025");
  const StackProfile* hf = db.stack("hf-trl-2024q4");
  REQUIRE(q4 != nullptr);
  REQUIRE(y25 != nullptr);
  REQUIRE(hf != nullptr);
  CHECK(q4->logits_bytes_per_vocab_entry == 14);
  CHECK(y25->logits_bytes_per_vocab_entry == 10);
  CHECK(y25->gemm_efficiency == hf->gemm_efficiency);  // throughput constants come from the base
  Inputs a = resolve(llama7b("axolotl-2025"));
  Inputs b = resolve(llama7b("hf-trl-2025"), {{"kbit-upcast", "off"}});
  CHECK(!kbit_upcast(a.stack, a.workload));
  CHECK(memory_for_batch(a.model, a.workload, a.stack, 2, 2048).total() ==
        doctest::Approx(memory_for_batch(b.model, b.workload, b.stack, 2, 2048).total()));
  // LLaMA-Factory v0.9.2-v0.9.4 install transformers 4.49-4.57: the same loss, no kbit upcast either
  const StackProfile* lf25 = db.stack("llamafactory-2025");
  REQUIRE(lf25 != nullptr);
  CHECK(lf25->alias_of == "hf-trl-2024q1");
  CHECK(lf25->logits_bytes_per_vocab_entry == 10);
  CHECK(lf25->qlora_unquantized_param_bytes == 2);
  // TRL's SFTTrainer of the same date keeps them fp32 (prepare_model_for_kbit_training alone): more memory
  Inputs trl = resolve(llama7b("hf-trl-2025"));
  CHECK(memory_for_batch(trl.model, trl.workload, trl.stack, 2, 2048).total() >
        memory_for_batch(a.model, a.workload, a.stack, 2, 2048).total());
}

TEST_CASE("fit-stack refuses training rows on a GPU the stack holds out, and records the GPUs it used") {
  // Eight throughput rows of torchtune-2024 on the A100 80GB it is fitted on (fit.gpus), measured values made
  // up from a hand-tuned profile are beside the point: the test is about which rows the fitter accepts.
  auto row = [](const std::string& id, const std::string& role, const std::string& gpu, int batch) {
    return json{{"id", id},
                {"role", role},
                {"group", "g"},
                {"request",
                 {{"model", "llama-2-7b"},
                  {"gpu", gpu},
                  {"method", "lora"},
                  {"seq", "2048"},
                  {"batch", std::to_string(batch)},
                  {"stack", "torchtune-2024"}}},
                {"metric", "tokens_per_s"},
                {"measured", 1000.0 + 100.0 * batch},
                {"source", "test"}};
  };
  json rows = json::array();
  for (int b = 1; b <= 8; ++b) rows.push_back(row("t" + std::to_string(b), "training", "a100-sxm4-80gb", b));
  const StackProfile* tt = Database::embedded().stack("torchtune-2024");
  REQUIRE(tt != nullptr);
  auto fit_ok = [&](const json& all) {
    auto parsed = parse_reference(json{{"schema", "ftcost.reference/1"}, {"rows", all}}.dump(), "t.json");
    REQUIRE(parsed.ok());
    return fit_stack(parsed.value(), Database::embedded(), *tt);
  };
  {
    // A validation row on the H100 does not touch the A100 training rows; the fit records its GPU.
    json all = rows;
    all.push_back(row("v-h100", "validation", "h100-sxm5-80gb", 4));
    auto f = fit_ok(all);
    REQUIRE_MESSAGE(f.ok(), (f.ok() ? std::string() : f.error().to_string()));
    CHECK(f->fit["gpus"] == json::array({"a100-sxm4-80gb"}));
  }
  {
    // A training row on the H100 that a development row also tests: refused, both rows named.
    json all = rows;
    all.push_back(row("d-h100", "development", "h100-sxm5-80gb", 4));
    all.push_back(row("t-h100", "training", "h100-sxm5-80gb", 2));
    auto f = fit_ok(all);
    REQUIRE(!f.ok());
    CHECK(f.error().field == "rows");
    CHECK(f.error().message.find("t-h100") != std::string::npos);
    CHECK(f.error().message.find("d-h100") != std::string::npos);
  }
  {
    // A validation row on the GPU the profile declares it is fitted on (the paper's A40 sequence-length
    // ablation is such a case) does not hold that GPU out.
    json all = rows;
    all.push_back(row("v-a100", "validation", "a100-sxm4-80gb", 3));
    CHECK(fit_ok(all).ok());
  }
}

TEST_CASE("fit_stack_memory: recovers a memory parameter from rows it moves; refuses unknown names") {
  // Peak-memory rows of torchtune-2024 (full fine-tuning, no checkpointing: the MLP's saved intermediates
  // count), "measured" under mlp_saved_intermediates = 3; the scan must find 3 again, on the rows it moves.
  const StackProfile* tt = Database::embedded().stack("torchtune-2024");
  REQUIRE(tt != nullptr);
  StackProfile truth = *tt;
  truth.mlp_saved_intermediates = 3;
  truth.memory_fit_parameters = {"mlp_saved_intermediates"};
  json rows = json::array();
  for (int b : {1, 2, 4}) {
    json r = {{"id", "m" + std::to_string(b)},
              {"role", "training"},
              {"group", "g"},
              {"request",
               {{"model", "llama-3.2-3b"},
                {"gpu", "a100-sxm4-80gb"},
                {"method", "full"},
                {"seq", "2048"},
                {"batch", std::to_string(b)},
                {"checkpointing", "off"},
                {"stack", "torchtune-2024"}}},
              {"metric", "peak_allocated_gib"},
              {"measured", 1.0},
              {"source", "test"}};
    auto one =
        parse_reference(json{{"schema", "ftcost.reference/1"}, {"rows", json::array({r})}}.dump(), "t");
    REQUIRE(one.ok());
    auto v = predict(one->front(), Database::embedded(), &truth);
    REQUIRE(v.ok());
    r["measured"] = v.value();
    rows.push_back(r);
  }
  auto parsed = parse_reference(json{{"schema", "ftcost.reference/1"}, {"rows", rows}}.dump(), "t.json");
  REQUIRE(parsed.ok());
  StackProfile start = *tt;  // the file's value (4), the parameter named as fitted
  start.memory_fit_parameters = {"mlp_saved_intermediates"};
  auto f = fit_stack_memory(parsed.value(), Database::embedded(), start);
  REQUIRE_MESSAGE(f.ok(), (f.ok() ? std::string() : f.error().to_string()));
  CHECK(f->mlp_saved_intermediates == doctest::Approx(3.0).epsilon(0.002));
  CHECK(f->memory_fit["steps"][0]["rows"].size() == 3);
  CHECK(f->memory_fit["command"] == "ftcost fit-stack --stack torchtune-2024");
  // Rows that do not move the parameter (here: none): the value is kept and the step says so.
  auto kept = fit_stack_memory({}, Database::embedded(), start);
  REQUIRE(kept.ok());
  CHECK(kept->mlp_saved_intermediates == tt->mlp_saved_intermediates);
  CHECK(kept->memory_fit["parameters"].empty());
  CHECK(kept->memory_fit["steps"][0].contains("kept"));
  start.memory_fit_parameters = {"no_such_parameter"};
  auto bad = fit_stack_memory(parsed.value(), Database::embedded(), start);
  REQUIRE(!bad.ok());
  CHECK(bad.error().field == "memory.fit_parameters");
  CHECK(bad.error().message.find("no_such_parameter") != std::string::npos);
  // A profile that names no memory parameter comes back unchanged.
  start.memory_fit_parameters.clear();
  auto none = fit_stack_memory(parsed.value(), Database::embedded(), start);
  REQUIRE(none.ok());
  CHECK(none->mlp_saved_intermediates == tt->mlp_saved_intermediates);
}

TEST_CASE("phase peak (torchtune): gradients only after the forward, logits and recompute never together") {
  const Request r = llama32_3b_torchtune();
  Inputs full = resolve(r);
  REQUIRE(full.stack.peak_model == "phases");
  MemoryBreakdown mb = memory_for_batch(full.model, full.workload, full.stack, 2, 4096);
  REQUIRE(mb.phased);
  const MemoryBreakdown::Phases p = mb.phases();
  const double fixed = mb.weights + mb.trainable_params + mb.optimizer_states + mb.autocast_copies +
                       mb.dequant_buffers + mb.cuda_context + mb.allocator_overhead;
  // Hand sums of the three moments (memory.hpp): no gradients before backward without accumulation.
  CHECK(p.forward_loss == doctest::Approx(fixed + mb.activations - mb.activations_backward + mb.logits));
  CHECK(p.backward_start == doctest::Approx(fixed + mb.activations));
  CHECK(p.backward_end == doctest::Approx(fixed + mb.gradients + mb.activations_last_layer));
  // Full fine-tuning with checkpointing: the 6 GiB of bf16 gradients make the end of backward the peak
  // (torchtune README, Llama 3.2 3B + AC: 24.9 GiB peak active; weights + grads + two AdamW states = 23.9).
  CHECK(std::string(mb.peak_phase()) == "backward_end");
  CHECK(mb.total() == doctest::Approx(p.backward_end));
  CHECK(mb.total() < fixed + mb.gradients + mb.activations + mb.logits);  // below the summed peak
  // LoRA: tiny gradients, the loss is the peak.
  Inputs lora = resolve(r, Request{{"method", "lora"}, {"lora-rank", "64"}});
  MemoryBreakdown ml = memory_for_batch(lora.model, lora.workload, lora.stack, 2, 4096);
  CHECK(std::string(ml.peak_phase()) == "forward_loss");
  // Gradient accumulation keeps the gradients alive through the next micro-batch's forward.
  Inputs acc = resolve(r, Request{{"grad-accum", "4"}});
  MemoryBreakdown ma = memory_for_batch(acc.model, acc.workload, acc.stack, 2, 4096);
  CHECK(ma.phases().forward_loss == doctest::Approx(p.forward_loss + mb.gradients));
  // The paper's profile keeps the summed peak its memory parameters were fitted with.
  Inputs paper = resolve(r, Request{{"stack", "hf-transformers-2024"}});
  MemoryBreakdown mp = memory_for_batch(paper.model, paper.workload, paper.stack, 2, 4096);
  CHECK_FALSE(mp.phased);
  CHECK(mp.total() == doctest::Approx(mp.weights + mp.trainable_params + mp.gradients + mp.optimizer_states +
                                      mp.autocast_copies + mp.activations + mp.logits + mp.dequant_buffers +
                                      mp.cuda_context + mp.allocator_overhead));
}

TEST_CASE("max batch under a phase peak equals a linear scan (the peak is convex, not affine)") {
  for (const char* method : {"full", "lora"}) {
    Inputs in = resolve(llama32_3b_torchtune(method, "1"));
    const MaxBatch mx = max_batch_size(in.model, in.workload, in.stack, in.gpu);
    std::int64_t scan = 0;
    while (memory_for_batch(in.model, in.workload, in.stack, scan + 1, mx.seq_len).total() <= mx.usable_bytes)
      ++scan;
    CHECK_MESSAGE(mx.batch == scan, method);
  }
}

TEST_CASE("at_peak: the components present at the peak moment sum to the phase peak") {
  for (const char* method : {"full", "lora"}) {
    for (const char* accum : {"1", "4"}) {
      Inputs in = resolve(llama32_3b_torchtune(method), Request{{"grad-accum", accum}});
      MemoryBreakdown mb = memory_for_batch(in.model, in.workload, in.stack, 2, 4096);
      const MemoryBreakdown at = mb.at_peak();
      CHECK_FALSE(at.phased);
      CHECK(at.total() == doctest::Approx(mb.total()));
      CHECK(at.gradients <= mb.gradients);
      CHECK(at.activations <= mb.activations);
    }
  }
}

TEST_CASE(
    "--lora-dropout: a bool mask per adapted input feature, plus the dropped copy with compute-dtype "
    "adapters") {
  // Llama-3.2-3B without checkpointing (every layer keeps its activations), 4 x 1024 tokens, LoRA on all
  // seven linears: per layer the adapted inputs are q, k, v, o, gate, up (hidden 3072 each) and down (8192).
  Request r = test::request(
      "model=llama-3.2-3b gpu=h200-sxm-141gb method=lora seq=1024 batch=4 checkpointing=off "
      "stack=hf-trainer-2026");
  const Inputs off = resolve(r);
  const Inputs on = resolve(r, {{"lora-dropout", "0.1"}});
  CHECK(off.workload.lora_dropout == 0);
  CHECK(on.workload.lora_dropout == doctest::Approx(0.1));
  const double features = 6.0 * 3072 + 8192;  // per layer
  const double tokens = 4.0 * 1024;
  const double layers = 28;
  const MemoryBreakdown m0 = memory_for_batch(off.model, off.workload, off.stack, 4, 1024);
  const MemoryBreakdown m1 = memory_for_batch(on.model, on.workload, on.stack, 4, 1024);
  // fp32 adapters (PEFT autocast_adapter_dtype): lora_A saves a cast copy either way; dropout adds the mask,
  // one byte per adapted input feature and token in every layer (28, and the backward's share of one more)
  REQUIRE(on.stack.trainable_param_bytes > on.workload.compute_bytes());
  const double mask_layers = (m1.activations - m0.activations) / (features * tokens);
  CHECK(mask_layers >= layers);
  CHECK(mask_layers <= layers + 1);
  // the same job with adapters in the compute dtype: the dropped copy (2 bytes) as well as the mask
  Inputs bf16_adapters = on;
  bf16_adapters.stack.trainable_param_bytes = 2;
  Inputs bf16_off = off;
  bf16_off.stack.trainable_param_bytes = 2;
  const MemoryBreakdown b0 = memory_for_batch(bf16_off.model, bf16_off.workload, bf16_off.stack, 4, 1024);
  const MemoryBreakdown b1 =
      memory_for_batch(bf16_adapters.model, bf16_adapters.workload, bf16_adapters.stack, 4, 1024);
  // With compute-dtype adapters and no dropout, lora_A reads x itself: the two norm outputs and the MLP
  // product are kept once, by the adapters. With dropout each module keeps its dropped copy and the mask
  // (3 bytes per adapted feature) and nobody keeps x (the frozen linears save nothing of it): per token and
  // layer 3·features - 2·(2·3072 + 8192), against the mask's 1·features above.
  CHECK((b1.activations - b0.activations) / (m1.activations - m0.activations) ==
        doctest::Approx((3.0 * features - 2.0 * (2 * 3072 + 8192)) / features));
  // one more elementwise kernel per adapted linear in forward and in backward: slower, never faster
  const StepTime t0 =
      step_model(off.model, off.workload, off.stack, off.gpu, nullptr, 4, 1024, off.expert_shares);
  const StepTime t1 = step_model(on.model, on.workload, on.stack, on.gpu, nullptr, 4, 1024, on.expert_shares);
  CHECK(t1.total_s > t0.total_s);
  CHECK(t1.kernels - t0.kernels == doctest::Approx(2.0 * 7 * layers));
  // it applies to adapters only, and is a probability
  CHECK(resolve_error({{"model", "llama-3.2-3b"}, {"gpu", "h200-sxm-141gb"}, {"method", "full"}},
                      {{"lora-dropout", "0.1"}})
            .field == "--lora-dropout");
  CHECK(resolve_error(r, {{"lora-dropout", "1.5"}}).field == "--lora-dropout");
  CHECK(resolve_error(r, {{"lora-dropout", "-0.1"}}).field == "--lora-dropout");
}

TEST_CASE("--lora-dropout on Unsloth: its fused LoRA MLP is not used, and the estimate says so") {
  Request r =
      test::request("model=llama-3.1-8b gpu=rtx-4090 method=qlora seq=2048 batch=1 stack=unsloth-2024q4");
  const Inputs off = resolve(r);
  const Inputs on = resolve(r, {{"lora-dropout", "0.05"}});
  REQUIRE(on.stack.fused_lora_needs_zero_dropout);
  REQUIRE(on.stack.mlp_saved_intermediates < 4);
  const MemoryBreakdown m0 = memory_for_batch(off.model, off.workload, off.stack, 1, 2048);
  const MemoryBreakdown m1 = memory_for_batch(on.model, on.workload, on.stack, 1, 2048);
  // the MLP keeps HF's four intermediates instead of the fused kernel's two, on top of the dropout masks
  Inputs as_hf = on;
  as_hf.stack.fused_lora_needs_zero_dropout = false;
  const MemoryBreakdown mh = memory_for_batch(as_hf.model, as_hf.workload, as_hf.stack, 1, 2048);
  CHECK(m1.activations > mh.activations);
  CHECK(mh.activations > m0.activations);
  auto warned = [](const Estimate& e) {
    for (const auto& w : e.warnings)
      if (w.find("fused LoRA kernels only at lora_dropout 0") != std::string::npos) return true;
    return false;
  };
  auto e_on = estimate(on, Database::embedded());
  auto e_off = estimate(off, Database::embedded());
  REQUIRE(e_on.ok());
  REQUIRE(e_off.ok());
  CHECK(warned(e_on.value()));
  CHECK_FALSE(warned(e_off.value()));
  // a stack without fused LoRA kernels gives no such warning
  auto hf = estimate(resolve(r, {{"lora-dropout", "0.05"}, {"stack", "hf-trl-2026"}}), Database::embedded());
  REQUIRE(hf.ok());
  CHECK_FALSE(warned(hf.value()));
}

TEST_CASE("Unsloth runs xformers by default: grouped-query K and V copied to every query head") {
  // Llama-3.1-8B: 32 query heads, 8 kv heads of 128; 2048 tokens, checkpointing off (every layer's
  // activations held, and half a layer's more of gradients in flight in backward), so the copies add
  // 2 tensors x (32 - 8) x 128 x 2 B per token and layer.
  Request r = test::request(
      "model=llama-3.1-8b gpu=rtx-4090 method=qlora seq=2048 batch=1 checkpointing=off stack=unsloth-2024q4");
  const Inputs x = resolve(r);
  const Inputs f = resolve(r, {{"attention", "flash"}});
  CHECK(x.workload.attention == Attention::xformers);
  bool listed = false;
  for (const auto& d : x.defaults) listed = listed || d.rfind("attention=xformers", 0) == 0;
  CHECK(listed);
  const MemoryBreakdown mx = memory_for_batch(x.model, x.workload, x.stack, 1, 2048);
  const MemoryBreakdown mf = memory_for_batch(f.model, f.workload, f.stack, 1, 2048);
  const double layers = 32 + constants::kBackwardGradInFlight;
  CHECK(mx.activations - mf.activations == doctest::Approx(2048.0 * layers * 2 * (32 - 8) * 128 * 2));
  // the copy and the gradients' sum over the query groups: 2 kernels per layer in forward and backward
  const StepTime tx = step_model(x.model, x.workload, x.stack, x.gpu, nullptr, 1, 2048, x.expert_shares);
  const StepTime tf = step_model(f.model, f.workload, f.stack, f.gpu, nullptr, 1, 2048, f.expert_shares);
  CHECK(tx.kernels - tf.kernels == doctest::Approx(2.0 * 2 * 32));
  CHECK(tx.total_s > tf.total_s);
  // multi-head attention has nothing to repeat
  Request mha = r;
  mha["model"] = "llama-2-7b";
  const Inputs xm = resolve(mha);
  const Inputs fm = resolve(mha, {{"attention", "flash"}});
  CHECK(memory_for_batch(xm.model, xm.workload, xm.stack, 1, 2048).activations ==
        doctest::Approx(memory_for_batch(fm.model, fm.workload, fm.stack, 1, 2048).activations));
  // the HF stacks have no xformers backend: an error naming the flag, not a silent flash
  CHECK(resolve_error(r, {{"stack", "hf-trl-2026"}, {"attention", "xformers"}}).field == "--attention");
  CHECK(resolve(r, {{"stack", "hf-trl-2026"}}).workload.attention == Attention::flash);
}

TEST_CASE("fused LoRA kernels cast the fp32 adapters themselves: no autocast copy of them is cached") {
  Request r =
      test::request("model=llama-3.1-8b gpu=rtx-4090 method=lora seq=2048 batch=1 stack=unsloth-2024q4");
  for (const char* method : {"lora", "qlora"}) {
    CAPTURE(method);
    const Inputs fused = resolve(r, {{"method", method}});
    const Inputs peft = resolve(r, {{"method", method}, {"lora-dropout", "0.05"}});
    CHECK(memory_for_batch(fused.model, fused.workload, fused.stack, 1, 2048).autocast_copies == 0);
    // with dropout the PEFT modules run under autocast, which caches a 16-bit copy of each adapter
    CHECK(memory_for_batch(peft.model, peft.workload, peft.stack, 1, 2048).autocast_copies ==
          doctest::Approx(2.0 * lora_params(peft.model, peft.workload)));
  }
  const Inputs hf = resolve(r, {{"stack", "hf-trl-2026"}});
  CHECK(memory_for_batch(hf.model, hf.workload, hf.stack, 1, 2048).autocast_copies ==
        doctest::Approx(2.0 * lora_params(hf.model, hf.workload)));
}

TEST_CASE("paged optimizers: fp32 states in unified memory yield to the step and cross PCIe when short") {
  // Llama-3.2-3B full fine-tuning on an RTX 4090 with bitsandbytes PagedAdamW: two fp32 states per
  // parameter (25.7 GB) cannot sit next to the bf16 weights and gradients in 24 GiB, but they need not.
  const Request r = test::request(
      "model=llama-3.2-3b gpu=rtx-4090 method=full seq=2048 batch=1 stack=hf-trl-2026 optimizer=paged-adamw");
  const Inputs in = resolve(r);
  const double P = static_cast<double>(in.model.params().total());
  const MemoryBreakdown mb = memory_for_batch(in.model, in.workload, in.stack, 1, 2048);
  CHECK(mb.paged_optimizer);
  CHECK(mb.optimizer_states == doctest::Approx(8.0 * P));
  CHECK(mb.resident() == doctest::Approx(mb.total() - mb.optimizer_states));
  const double usable = in.gpu.usable_bytes();
  REQUIRE(mb.resident() < usable);
  REQUIRE(mb.total() > usable);
  CHECK(mb.on_gpu(usable) == doctest::Approx(usable));
  CHECK(mb.paged_out(usable) == doctest::Approx(mb.total() - usable));
  // it fits, and its step carries both directions of the paged-out bytes over the GPU's host link
  auto e = estimate(in, Database::embedded());
  REQUIRE(e.ok());
  CHECK(e->memory_state == "fits");  // by what must fit: the paged states fill the room left by design
  CHECK(e->memory_fraction == doctest::Approx(1.0));
  CHECK(e->step.paging_s == doctest::Approx(2.0 * mb.paged_out(usable) / host_link_bytes_per_s(in.gpu)));
  bool warned = false;
  for (const auto& w : e->warnings) warned = warned || w.rfind("paged optimizer:", 0) == 0;
  CHECK(warned);
  const StepTime plain = step_model(in.model, in.workload, in.stack, in.gpu, nullptr, 1, 2048, {});
  CHECK(e->step.total_s == doctest::Approx(plain.total_s + e->step.paging_s));
  // with room to spare nothing is paged: the same job on an H200
  const Inputs big = resolve(r, {{"gpu", "h200-sxm-141gb"}});
  auto eb = estimate(big, Database::embedded());
  REQUIRE(eb.ok());
  CHECK(eb->step.paging_s == 0);
  // LoRA adapters below 1e5 elements get plain GPU states (bitsandbytes get_state_buffer): rank 16 x 4096
  const Inputs lora = resolve(r, {{"method", "lora"}, {"lora-rank", "16"}});
  CHECK_FALSE(memory_for_batch(lora.model, lora.workload, lora.stack, 1, 2048).paged_optimizer);
  const Inputs lora64 = resolve(r, {{"method", "lora"}, {"lora-rank", "64"}});
  CHECK(memory_for_batch(lora64.model, lora64.workload, lora64.stack, 1, 2048).paged_optimizer);
}
