// Arctic Long Sequence Training's tiled MLP and tiled loss (issue 41): the memory terms they remove and add,
// counted by hand for one layer of Llama-3.1-8B from DeepSpeed's TiledMLP and ArcticTraining's
// SFTTrainer.loss.
#include "ftcost/database.hpp"
#include "ftcost/estimate.hpp"

#include <doctest/doctest.h>

#include <cmath>

using namespace ftcost;

namespace {

Inputs resolve_alst(Request r) {
  r["model"] = "llama-3.1-8b";
  r["gpu"] = "h100-sxm5-80gb";
  r["method"] = "full";
  r["stack"] = "hf-trl-2025";
  r["seq"] = "65536";
  auto in = resolve_request(r, Database::embedded(), nullptr);
  REQUIRE_MESSAGE(in.ok(), (in.ok() ? std::string() : in.error().to_string()));
  return in.value();
}

}  // namespace

TEST_CASE(
    "tiled MLP: one layer of Llama-3.1-8B keeps the MLP's input only; one shard of 4,096 tokens in flight") {
  const Inputs off = resolve_alst({});
  const Inputs on = resolve_alst({{"tiled-mlp", "on"}});
  REQUIRE(on.workload.tiled_mlp == Workload::kTiledMlpAuto);
  const double L = 65536;
  const ActivationDetail a = activation_detail(off.model, off.workload, off.stack, L);
  const ActivationDetail b = activation_detail(on.model, on.workload, on.stack, L);
  // Full fine-tuning in bf16: the MLP's saved intermediates (gate, up, act, product as the stack keeps them),
  // each F = 14,336 wide, are what TiledMLP's forward under no_grad does not keep; its input (the norm's
  // output, which gate_proj and up_proj keep anyway in full fine-tuning) stays.
  const double F = 14336, H = 4096, bf16 = 2;
  const double inner = off.stack.mlp_saved_intermediates * bf16 * F;
  CHECK(a.per_layer_max_bytes - b.per_layer_max_bytes == doctest::Approx(inner));
  // ALST's shard count: ceil(65,536 / 4,096) = 16, so a shard is 4,096 tokens (1/16 of the sequence), re-run
  // with its gradients in flight (1.5 x its activations), plus x_grad = zeros_like(x), [L, H] in bf16.
  const double transient = (4096.0 / L) * 1.5 * inner + bf16 * H;
  const double recompute_drop = 1.5 * inner;  // the recomputed layer's peak (checkpointing on)
  CHECK(a.per_token_bytes - b.per_token_bytes == doctest::Approx(recompute_drop - transient));
  CHECK(b.backward_per_token_bytes == doctest::Approx(1.5 * b.per_layer_max_bytes + transient));

  // A shard count given: 4 shards of 16,384 tokens.
  const Inputs four = resolve_alst({{"tiled-mlp", "4"}});
  const ActivationDetail c = activation_detail(four.model, four.workload, four.stack, L);
  CHECK(c.backward_per_token_bytes - b.backward_per_token_bytes ==
        doctest::Approx((0.25 - 4096.0 / L) * 1.5 * inner));
}

TEST_CASE("tiled loss: the logits held for one tile of about 1 GiB of fp32 logits, the lm_head re-run") {
  const Inputs on = resolve_alst({{"tiled-loss", "on"}});
  REQUIRE(effective_loss_path(on.stack, on.workload) == "chunked");
  const ActivationDetail t = activation_detail(on.model, on.workload, on.stack, 65536);
  // ArcticTraining: num_shards = ceil(tokens x vocab x 4 B / 2^30): a tile of 2^30 / (4 x 128,256) = 2,092
  // tokens; every token keeps its hidden state's gradient (zeros_like(x), bf16).
  CHECK(t.logits_fixed_tokens == 2092);
  CHECK(t.logits_fixed_bytes_per_token == doctest::Approx(128256.0 * on.stack.logits_bytes_per_vocab_entry));
  CHECK(t.logits_per_token_bytes == doctest::Approx(2.0 * 4096));
  const Inputs full = resolve_alst({});
  const double tokens = 65536;
  const MemoryBreakdown mt = memory_for_batch(on.model, on.workload, on.stack, 1, tokens);
  const MemoryBreakdown mf = memory_for_batch(full.model, full.workload, full.stack, 1, tokens);
  CHECK(mt.logits < 0.1 * mf.logits);
  // Liger's fused loss wins, as in ArcticTraining's SFTTrainer.loss with a Liger model.
  const Inputs liger = resolve_alst({{"tiled-loss", "on"}, {"liger", "on"}});
  CHECK(effective_loss_path(liger.stack, liger.workload) == "fused_linear");
}

TEST_CASE("--seq max with tiled MLP on one GPU: longer than without, shorter than without the MLP at all") {
  const Inputs off = resolve_alst({{"liger", "on"}});
  const Inputs on = resolve_alst({{"liger", "on"}, {"tiled-mlp", "on"}});
  const MaxSeq a = max_seq_len(off.model, off.workload, off.stack, off.gpu, 1, 1e8);
  const MaxSeq b = max_seq_len(on.model, on.workload, on.stack, on.gpu, 1, 1e8);
  CHECK(b.seq_len > a.seq_len);
}
