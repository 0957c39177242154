// Per-rank memory that errs on the safe side (issue 37): DeepSpeed ZeRO-3's live-parameter cache (reuse
// distance, prefetch, persistence, hpZ) and FSDP's root unit, counted by hand; the upper end of the range
// adds what depends on settings ftcost cannot see, and a job whose upper end does not fit "may not fit".
#include "ftcost/api.hpp"
#include "ftcost/database.hpp"
#include "ftcost/estimate.hpp"
#include "ftcost/parallel.hpp"
#include "resolved_inputs.hpp"

#include <doctest/doctest.h>

#include <cmath>

using namespace ftcost;

namespace {

using test::inputs;

ParallelEstimate run(const Inputs& in, int gpus, Strategy s, const Zero3Settings& z = Zero3Settings{}) {
  ParallelPlan p;
  p.gpus_per_node = gpus;
  p.strategy = s;
  p.zero3 = z;
  auto e = estimate_parallel(in, p, Database::embedded());
  REQUIRE(e.ok());
  return e.value();
}

double d(std::int64_t v) { return static_cast<double>(v); }

}  // namespace

TEST_CASE("ZeRO-3 reuse distance: the modules kept gathered at the forward/backward turn, by hand") {
  // Mixtral-8x7B: H 4096, vocab 32000 (lm_head 131,072,000 elements, untied), expert linears 4096 x 14336 =
  // 58,720,256 elements; the last layer's modules in forward order end with the expert linears; the router
  // (8 x 4096) is persistent (under 1e5 elements) and not fetched.
  const Inputs in =
      inputs({{"model", "mixtral-8x7b"}, {"gpu", "a100-sxm4-80gb"}, {"method", "lora"}, {"seq", "512"}});
  const ModelSpec& m = in.model;
  const double lm = 32000.0 * 4096;
  const double lin = 4096.0 * 14336;
  // Without checkpointing a module's next use is its backward, 2 x (elements after it) later in the trace:
  // lm_head (nothing after it) and the last 7 expert linears (2 x (lm + k lin) < 1e9 for k = 0..6) stay.
  CHECK(zero3_retained_elems(m, 1e9, false) == doctest::Approx(lm + 7 * lin));
  // With checkpointing the next use is the layer's recompute, after lm_head's backward and the rest of the
  // layer: 2 x lm + (layer - own) > 1e9 for every module of Mixtral's 1.45e9-element layer: lm_head only.
  CHECK(zero3_retained_elems(m, 1e9, true) == doctest::Approx(lm));
  // A reuse distance of 0 keeps nothing; a larger one keeps more.
  CHECK(zero3_retained_elems(m, 0, false) == 0);
  CHECK(zero3_retained_elems(m, 2e9, false) > zero3_retained_elems(m, 1e9, false));
}

TEST_CASE("ZeRO-3 live parameters: prefetch bucket, persistence, hpZ, and the upper end up to max_live") {
  const Inputs in = inputs(test::request("model=qwen2.5-7b gpu=a100-sxm4-80gb method=lora seq=2048 batch=1"));
  const ModelSpec& m = in.model;
  const ParamCounts pc = m.params();
  const double H = d(m.hidden);
  // Assumed settings (no --zero3): the HF Trainer's auto bucket 0.9 H^2 is smaller than Qwen2.5-7B's mean
  // fetched module, so one bucket is in flight; lm_head (the largest module, kept by the reuse distance) is
  // already the working set's; the norms are persistent.
  const ParallelEstimate a = run(in, 2, Strategy::zero3);
  const double bucket = std::floor(0.9 * H * H);
  const double retained = zero3_retained_elems(m, 1e9, true);
  CHECK(retained == doctest::Approx(d(pc.lm_head)));
  CHECK(a.memory.live_params == doctest::Approx(2.0 * (bucket + d(pc.norms))));
  // the upper end: the look-ahead DeepSpeed's default bucket would run, up to max_live
  CHECK(a.memory.residue_high == doctest::Approx(2.0 * (1e9 - retained - bucket)));
  CHECK(a.memory.residue_term.find("stage3_max_live_parameters") != std::string::npos);
  CHECK(a.memory_high >= a.memory.total() + a.memory.residue_high);
  // Given settings: DeepSpeed's default bucket 5e7 exceeds the mean module, so the look-ahead runs to
  // max_live in the point estimate and nothing is left for the upper end.
  auto z = parse_zero3("prefetch_bucket_size=5e7", "--zero3");
  REQUIRE(z.ok());
  const ParallelEstimate g = run(in, 2, Strategy::zero3, z.value());
  CHECK(g.memory.residue_high == 0);
  CHECK(g.memory.live_params == doctest::Approx(2.0 * (1e9 - d(pc.lm_head) + d(pc.norms))));
  // hpZ keeps a secondary copy of the 16-bit parameters partitioned over its group
  auto h = parse_zero3("zero_hpz_partition_size=2", "--zero3");
  REQUIRE(h.ok());
  const ParallelEstimate hp = run(in, 8, Strategy::zero3, h.value());
  const ParallelEstimate flat = run(in, 8, Strategy::zero3);
  CHECK(hp.memory.live_params - flat.memory.live_params == doctest::Approx(2.0 * d(pc.total()) / 2));
}

TEST_CASE("FSDP's root unit (embedding, final norm, lm_head) stays gathered from forward to backward") {
  const Inputs in = inputs(test::request("model=qwen2.5-7b gpu=a100-sxm4-80gb method=full seq=2048 batch=1"));
  const ParamCounts pc = in.model.params();
  const ParallelEstimate e = run(in, 8, Strategy::fsdp);
  CHECK(e.memory.live_params == doctest::Approx(2.0 * d(pc.embedding + pc.lm_head + in.model.norm_params())));
  CHECK(e.memory.residue_high > 0);  // a third decoder unit in flight
  CHECK(e.memory.residue_term.find("third FSDP unit") != std::string::npos);
}

TEST_CASE("--zero3: DeepSpeed's key names, errors that name the option and the key") {
  auto ok = parse_zero3(
      "stage3_max_live_parameters=5e8,stage3_max_reuse_distance=0,"
      "stage3_param_persistence_threshold=auto,zero_hpz_partition_size=8",
      "--zero3");
  REQUIRE(ok.ok());
  CHECK(ok.value().max_live_parameters == doctest::Approx(5e8));
  CHECK(ok.value().max_reuse_distance == doctest::Approx(0));
  CHECK(ok.value().param_persistence_threshold == doctest::Approx(0));
  CHECK(ok.value().hpz_partition_size == 8);
  CHECK(ok.value().given);
  for (const std::string bad : {"max_live_parameters", "max_live_parameters=lots", "max_live_parameters=auto",
                                "zero_hpz_partition_size=1.5", "max_live_parameters=-1"}) {
    auto r = parse_zero3(bad, "--zero3");
    CAPTURE(bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().field == "--zero3");
  }
  auto unknown = parse_zero3("max_live_paramters=1e9", "--zero3");
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.error().message.find("max_live_parameters") != std::string::npos);  // did you mean
}

TEST_CASE("the per-rank upper end decides: 'may not fit' names its term; --batch fastest keeps under it") {
  Inputs in = inputs(test::request("model=llama-3.1-8b gpu=rtx-4090 method=lora seq=2048 batch=max"));
  const ParallelEstimate e = run(in, 2, Strategy::zero3);
  REQUIRE(e.fits);
  // at the largest micro-batch that fits the point estimate the upper end, residues included, does not
  REQUIRE(e.memory_high > e.usable_bytes);
  CHECK(rank_memory_state(e) == "may_not_fit");
  bool named = false;
  for (const auto& w : e.warnings)
    named = named || (w.find("may not fit") != std::string::npos &&
                      w.find("stage3_max_live_parameters") != std::string::npos);
  CHECK(named);
  // --batch fastest keeps to micro-batches whose upper end (residues included) fits
  in.workload.batch = 0;
  in.workload.batch_fastest = true;
  const ParallelEstimate f = run(in, 2, Strategy::zero3);
  REQUIRE(f.fits);
  CHECK(f.memory_high <= f.usable_bytes);
  CHECK(rank_memory_state(f) != "may_not_fit");
}

TEST_CASE("hpZ: the backward's all-gathers run inside the node, from the secondary partition") {
  const Inputs in =
      inputs(test::request("model=llama-3.1-8b gpu=h100-sxm5-80gb method=full seq=2048 batch=1"));
  ParallelPlan p;
  p.gpus_per_node = 8;
  p.nodes = 2;
  p.strategy = Strategy::zero3;
  p.inter = network_link("infiniband", 400);
  auto flat = estimate_parallel(in, p, Database::embedded());
  auto z = parse_zero3("zero_hpz_partition_size=8", "--zero3");
  REQUIRE(z.ok());
  p.zero3 = z.value();
  auto hpz = estimate_parallel(in, p, Database::embedded());
  REQUIRE(flat.ok());
  REQUIRE(hpz.ok());
  const auto backward = [](const ParallelEstimate& e) -> const CommItem* {
    for (const auto& c : e.comm)
      if (c.name.find("backward parameter all-gather") != std::string::npos) return &c;
    return nullptr;
  };
  const CommItem* fb = backward(flat.value());
  const CommItem* hb = backward(hpz.value());
  REQUIRE(fb != nullptr);
  REQUIRE(hb != nullptr);
  CHECK(fb->ranks == 16);
  CHECK(hb->ranks == 8);
  CHECK(hb->scope == "intra-node");
  CHECK(hb->time_s < fb->time_s);
  // the secondary partition costs 2 B per parameter over the hpZ group
  CHECK(hpz.value().memory.live_params - flat.value().memory.live_params ==
        doctest::Approx(2.0 * d(in.model.params().total()) / 8));
}

TEST_CASE("QLoRA under full sharding: bitsandbytes' quant states stay whole on every rank, by hand") {
  // Llama-3.1-70B: 80 layers of q, o (8192 x 8192), k, v (8192 x 1024) and gate, up, down (8192 x 28672) as
  // Linear4bit; NF4 double-quantized: one 8-bit absmax per 64 values and one fp32 per 256 blocks.
  const Inputs in = inputs(
      {{"model", "llama-3.1-70b"}, {"gpu", "rtx-4090"}, {"method", "qlora"}, {"seq", "512"}, {"batch", "1"}});
  const double quantized = 80.0 * (2 * 8192.0 * 8192 + 2 * 8192.0 * 1024 + 3 * 8192.0 * 28672);
  const double absmax = quantized * (1.0 / 64 + 4.0 / (64 * 256));
  // offloaded: the flat parameters go to host RAM, the quant states stay
  ParallelPlan p;
  p.gpus_per_node = 2;
  p.strategy = Strategy::fsdp;
  p.offload = Offload::params;
  auto off = estimate_parallel(in, p, Database::embedded());
  REQUIRE(off.ok());
  CHECK(off.value().memory.quant_states == doctest::Approx(absmax));
  // not offloaded: the weights count 1/2 of them, the rest is the term
  CHECK(run(in, 2, Strategy::fsdp).memory.quant_states == doctest::Approx(absmax / 2));
  CHECK(run(in, 4, Strategy::zero3).memory.quant_states == doctest::Approx(absmax * 3 / 4));
  // DDP shards nothing; LoRA quantizes nothing
  CHECK(run(in, 2, Strategy::ddp).memory.quant_states == 0);
  Inputs lora = in;
  lora.workload.method = Method::lora;
  CHECK(run(lora, 2, Strategy::fsdp).memory.quant_states == 0);
}

TEST_CASE("gpt-oss's training expert loop: indexed weight copies and index's full-size backward, by hand") {
  // gpt-oss-20b: H 2880, expert intermediate I 2880, 32 experts, top-4, 24 MoE layers. 2048 tokens route
  // 8192 pairs over 32 experts: all 32 hit (1 - e^-256). Each saves gate_up (H x 2I) and down (I x H) slices:
  // 3 x 2880 x 2880 = 24,883,200 elements; checkpointed, for one layer.
  const Inputs in = inputs(
      test::request("model=gpt-oss-20b gpu=h100-sxm5-80gb method=full seq=2048 batch=1 stack=hf-trl-2025"));
  const double copies = 32.0 * 3 * 2880 * 2880;
  const double index_backward = 32.0 * 2 * 2880 * 2880;  // zeros of the whole gate_up_proj
  CHECK(run(in, 8, Strategy::fsdp).memory.expert_copies == doctest::Approx(2.0 * (copies + index_backward)));
  // LoRA: the experts are frozen, no index backward for them; without checkpointing every layer's copies
  Inputs lora = in;
  lora.workload.method = Method::lora;
  CHECK(run(lora, 8, Strategy::fsdp).memory.expert_copies == doctest::Approx(2.0 * copies));
  lora.workload.checkpointing = false;
  CHECK(run(lora, 8, Strategy::fsdp).memory.expert_copies == doctest::Approx(24 * 2.0 * copies));
  // grouped-GEMM experts and other MoE models' per-expert Linears have no such copies
  CHECK(run(inputs(test::request("model=gpt-oss-20b gpu=h100-sxm5-80gb method=full stack=grouped-gemm-2025")),
            8, Strategy::fsdp)
            .memory.expert_copies == 0);
  CHECK(run(inputs({{"model", "mixtral-8x7b"}, {"gpu", "h100-sxm5-80gb"}, {"method", "lora"}}), 8,
            Strategy::fsdp)
            .memory.expert_copies == 0);
}

TEST_CASE(
    "FSDP full fine-tuning: two units of unsharded gradients at the backward peak, a third in the upper "
    "end") {
  // the unit whose reduce-scatter is in flight (held for its stream) and the next one accumulating: as many
  // bytes as the two units of gathered parameters (the running and the prefetched one)
  const Inputs in =
      inputs(test::request("model=llama-3.1-8b gpu=h100-sxm5-80gb method=full seq=1024 batch=1"));
  const ParallelEstimate e = run(in, 4, Strategy::fsdp);
  CHECK(e.memory.bucket_buffers > 0);
  CHECK(e.memory.bucket_buffers == doctest::Approx(e.memory.gather_buffers));
  // the upper end: a third unit in flight and an fp32 reduce_dtype's second half of the reduce-scatter input,
  // a unit each, both named
  CHECK(e.memory.residue_high == doctest::Approx(e.memory.gather_buffers));
  CHECK(e.memory.residue_term.find("third FSDP unit") != std::string::npos);
  CHECK(e.memory.residue_term.find("fp32 reduce_dtype") != std::string::npos);
  // LoRA: no reduce-scatter of base gradients, one residue
  Inputs lora = in;
  lora.workload.method = Method::lora;
  CHECK(run(lora, 4, Strategy::fsdp).memory.residue_term.find("reduce_dtype") == std::string::npos);
}
