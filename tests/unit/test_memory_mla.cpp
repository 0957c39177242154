// Multi-head latent attention (DeepSeek-V2-Lite, issue 41): what DeepseekV2Attention keeps for backward
// beyond q, k and v, counted by hand (transformers models/deepseek_v2/modeling_deepseek_v2.py @ 03eac6f6).
#include "ftcost/database.hpp"
#include "ftcost/estimate.hpp"
#include "resolved_inputs.hpp"

#include <doctest/doctest.h>

using namespace ftcost;

TEST_CASE("MLA: kv_a_layernorm's input and output, FlashAttention-2's padded v and o_proj's sliced copy") {
  const Inputs in = test::inputs(test::request(
      "model=deepseek-v2-lite gpu=h100-sxm5-80gb method=full stack=hf-trl-2025 seq=4096 checkpointing=off"));
  const ModelSpec& m = in.model;
  REQUIRE(m.attn.mla);
  CHECK(m.attn.q_lora_rank == 0);  // DeepSeek-V2-Lite: q_lora_rank null, a plain q_proj
  CHECK(m.attn.kv_lora_rank == 512);
  CHECK(m.attn.q_dim() == 16 * (128 + 64));   // q and k: 16 heads x (128 nope + 64 rope)
  CHECK(m.attn.kv_dim() == 16 * (128 + 64));  // v padded to 192 for FlashAttention-2
  const Workload& w = in.workload;
  const StackProfile& s = in.stack;
  const double base = activation_detail(m, w, s, 4096).per_layer_max_bytes;
  const double bf16 = 2;
  // kv_a_layernorm over 64 more latent features: its input (fp32 when the stack's norms upcast, as
  // DeepseekV2RMSNorm does) and its output (kv_b_proj's input, bf16).
  ModelSpec wider = m;
  wider.attn.kv_lora_rank += 64;
  const double norm_in = s.norm_saves_fp32_input ? 4.0 : bf16;
  CHECK(activation_detail(wider, w, s, 4096).per_layer_max_bytes - base ==
        doctest::Approx((norm_in + bf16) * 64));
  // v_head_dim 128 < qk_head_dim 192: FA2 keeps its padded output (16 x 192) and o_proj its own contiguous
  // slice (16 x 128); with v as wide as q/k the output is one tensor (16 x 192).
  ModelSpec unpadded = m;
  unpadded.attn.v_head_dim = 192;
  CHECK(base - activation_detail(unpadded, w, s, 4096).per_layer_max_bytes ==
        doctest::Approx(bf16 * 16 * 128));
  // A compressed query (q_lora_rank 1536, DeepSeek-V2/V3): q_a_layernorm's input and output too.
  ModelSpec compressed = m;
  compressed.attn.q_lora_rank = 1536;
  CHECK(activation_detail(compressed, w, s, 4096).per_layer_max_bytes - base ==
        doctest::Approx((norm_in + bf16) * 1536));
}
