// FSDP2's float8 all-gather (--fp8-all-gather, issue 41): torchao's WeightWithDynamicFloat8CastTensor
// all-gathers the float8 linears' weights at 1 B per parameter (torchao float8/fsdp_utils.py @ 11ce6347).
#include "ftcost/api.hpp"
#include "ftcost/database.hpp"
#include "ftcost/parallel.hpp"
#include "resolved_inputs.hpp"

#include <doctest/doctest.h>

using namespace ftcost;

namespace {

const CommItem* forward_gather(const ParallelEstimate& e) {
  for (const auto& c : e.comm)
    if (c.name == "forward parameter all-gather") return &c;
  return nullptr;
}

ParallelEstimate fsdp8(const std::string& all_gather) {
  const Inputs in = test::inputs({{"model", "llama-3.1-8b"},
                                  {"gpu", "h100-sxm5-80gb"},
                                  {"method", "full"},
                                  {"seq", "8192"},
                                  {"batch", "1"},
                                  {"fp8", "tensorwise"},
                                  {"gpus", "8"},
                                  {"parallel", "fsdp"},
                                  {"fp8-all-gather", all_gather}});
  ParallelPlan p;
  p.gpus_per_node = 8;
  p.nodes = 1;
  p.strategy = Strategy::fsdp;
  auto e = estimate_parallel(in, p, Database::embedded());
  REQUIRE(e.ok());
  return e.value();
}

}  // namespace

TEST_CASE("FP8 all-gather: Llama-3.1-8B's linears gathered at 1 B per parameter, the rest at 2") {
  const ParallelEstimate off = fsdp8("off");
  const ParallelEstimate on = fsdp8("on");
  const CommItem* a = forward_gather(off);
  const CommItem* b = forward_gather(on);
  REQUIRE(a != nullptr);
  REQUIRE(b != nullptr);
  // 32 layers of attention (4096 x (4096 + 2 x 1024 + 4096)) and MLP (3 x 4096 x 14,336): 6,979,321,856
  // linear weights lose a byte each; embeddings, lm_head (2 x 128,256 x 4096) and the norms stay bf16.
  const double linears = 32.0 * (4096.0 * (4096 + 2 * 1024 + 4096) + 3.0 * 4096 * 14336);
  CHECK(linears == 6979321856.0);
  CHECK((a->bytes - b->bytes) * a->calls == doctest::Approx(linears));
  CHECK(b->bytes * b->calls == doctest::Approx(8030261248.0 * 2 - linears));
  CHECK(b->time_s < a->time_s);
}

TEST_CASE("FP8 all-gather: the gathered units hold the float8 linears in FP8 (per-rank memory)") {
  // FSDP's two units in flight (the running one and the prefetched next): one decoder layer of Llama-3.1-8B
  // is 218,112,000 linear weights (+ its two norms, 8,192): 2 B each gathered in bf16, 1 B for the linears
  // in FP8
  const double layer_linears = 4096.0 * (4096 + 2 * 1024 + 4096) + 3.0 * 4096 * 14336;
  const double layer = layer_linears + 2 * 4096;
  CHECK(fsdp8("off").memory.gather_buffers == doctest::Approx(2 * 2 * layer));
  CHECK(fsdp8("on").memory.gather_buffers == doctest::Approx(2 * (2 * layer - layer_linears)));
}

TEST_CASE("FP8 all-gather needs --fp8 tensorwise: rowwise (and off) are refused naming the flag") {
  auto in = resolve_request(test::request("model=llama-3.1-8b gpu=h100-sxm5-80gb method=full fp8=rowwise "
                                          "gpus=8 parallel=fsdp fp8-all-gather=on"),
                            Database::embedded(), nullptr);
  REQUIRE_FALSE(in.ok());
  CHECK(in.error().field == "--fp8-all-gather");
  CHECK(in.error().message.find("tensorwise") != std::string::npos);
}
