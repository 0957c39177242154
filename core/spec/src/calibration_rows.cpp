#include "calibration_io.hpp"

#include <cstdint>

namespace ftcost::cal_io {
namespace {

double expert_flops(const ExpertGemmRow& r) {
  double rows = 0;
  for (auto t : r.tokens_per_expert) rows += static_cast<double>(t);
  double gemms = r.proj == "w1_w3" ? 2.0 : 1.0;
  return 2.0 * gemms * rows * static_cast<double>(r.n) * static_cast<double>(r.k);
}

// ---- schema 3: the op classes between the GEMMs (issue 38) ----

std::uint64_t u64(std::int64_t v) { return static_cast<std::uint64_t>(v); }

// The rate columns of a bandwidth-type row: bytes_moved (must equal `want`, the row's formula), the GB/s
// statistic, the median time (consistent with the rate) and the sample count.
struct GbpsTail {
  std::uint64_t bytes = 0;
  CalStat gbps;
  double time_us = 0;
  int iterations = 0;
};
GbpsTail read_gbps_tail(Obj& o, Ctx& ctx, std::uint64_t want, const std::string& formula) {
  GbpsTail t;
  t.bytes = o.bytes("bytes_moved");
  if (ctx.ok() && t.bytes != want)
    o.fail(Errc::invalid_value, "bytes_moved",
           "must be " + formula + " = " + std::to_string(want) + " (got " + std::to_string(t.bytes) + ")");
  t.gbps = o.stat("gbps");
  t.time_us = o.number("time_us_median");
  t.iterations = read_iterations(o);
  check_time_vs_rate(o, "time_us_median", t.time_us, t.gbps.median, static_cast<double>(t.bytes) / 1e3,
                     "gbps_median");
  return t;
}

template <class Row>
void set_tail(Row& r, const GbpsTail& t) {
  r.bytes_moved = t.bytes;
  r.gbps = t.gbps;
  r.time_us_median = t.time_us;
  r.iterations = t.iterations;
}

NormRow read_norm(Obj& o, Ctx& ctx) {
  NormRow r;
  read_cols(o, {"op", "direction", "dtype", "rows", "cols"}, OneOf{r.op}, OneOf{r.direction}, OneOf{r.dtype},
            r.rows, r.cols);
  const std::uint64_t n = u64(r.rows) * u64(r.cols);
  const std::uint64_t c = u64(r.cols);
  const bool fwd = r.direction == "fwd";
  set_tail(r, read_gbps_tail(o, ctx, fwd ? 2 * (2 * n + c) : 2 * (3 * n + 2 * c),
                             fwd ? "2 (2 rows cols + cols)" : "2 (3 rows cols + 2 cols)"));
  return r;
}

CastRow read_cast(Obj& o, Ctx& ctx) {
  CastRow r;
  read_cols(o, {"src_dtype", "dst_dtype"}, OneOf{r.src_dtype}, OneOf{r.dst_dtype});
  if (ctx.ok() && r.src_dtype == r.dst_dtype)
    o.fail(Errc::invalid_value, "dst_dtype", "must differ from src_dtype (got " + r.dst_dtype + " twice)");
  r.elements = o.integer("elements");
  set_tail(r, read_gbps_tail(o, ctx, 6 * u64(r.elements), "6 x elements"));
  return r;
}

PointwiseRow read_pointwise(Obj& o, Ctx& ctx) {
  PointwiseRow r;
  read_cols(o, {"op", "dtype", "elements"}, OneOf{r.op}, OneOf{r.dtype}, r.elements);
  set_tail(r, read_gbps_tail(o, ctx, 6 * u64(r.elements), "6 x elements"));
  return r;
}

CrossEntropyRow read_cross_entropy(Obj& o, Ctx& ctx) {
  CrossEntropyRow r;
  read_cols(o, {"direction", "logits_dtype", "rows", "vocab"}, OneOf{r.direction}, OneOf{r.logits_dtype},
            r.rows, r.vocab);
  const std::uint64_t rv = u64(r.rows) * u64(r.vocab);
  const std::uint64_t rows = u64(r.rows);
  const bool fwd = r.direction == "fwd";
  set_tail(r, read_gbps_tail(o, ctx, fwd ? 4 * rv + 16 * rows : 8 * rv + 12 * rows,
                             fwd ? "4 rows vocab + 16 rows" : "8 rows vocab + 12 rows"));
  return r;
}

// cuBLAS's (transa, transb, m, n, k) of a linear layer's pass (the table in calibration.hpp).
struct GemmView {
  std::string trans;
  std::int64_t m, n, k;
};
GemmView gemm_view(const std::string& pass, std::int64_t tokens, std::int64_t in, std::int64_t out) {
  if (pass == "fwd") return {"TN", out, tokens, in};
  if (pass == "dgrad") return {"NN", in, tokens, out};
  return {"NT", in, out, tokens};
}

void check_lora_shape(Obj& o, Ctx& ctx, const LoraGemmRow& r) {
  if (!ctx.ok()) return;
  const GemmView v = gemm_view(r.pass, r.tokens, r.in, r.out);
  if (r.transa + r.transb != v.trans) {
    o.fail(Errc::invalid_value, "transa",
           "pass " + r.pass + " is transa/transb " + v.trans + " (got " + r.transa + r.transb + ")");
  } else if (r.m != v.m || r.n != v.n || r.k != v.k) {
    o.fail(Errc::invalid_value, "m",
           "pass " + r.pass + " of tokens x in x out is m, n, k = " + std::to_string(v.m) + ", " +
               std::to_string(v.n) + ", " + std::to_string(v.k));
  } else if ((r.side == "A" ? r.out : r.in) != r.rank) {
    o.fail(Errc::invalid_value, "rank",
           std::string("must equal ") +
               (r.side == "A" ? "out (side A: in -> rank)" : "in (side B: rank -> out)"));
  } else if (r.bytes_moved != 2 * (u64(r.m) * u64(r.k) + u64(r.k) * u64(r.n) + u64(r.m) * u64(r.n))) {
    o.fail(Errc::invalid_value, "bytes_moved", "must be 2 (m k + k n + m n)");
  }
}

LoraGemmRow read_lora_gemm(Obj& o, Ctx& ctx) {
  LoraGemmRow r;
  read_cols(o, {"shape", "side", "rank", "dtype", "pass", "transa", "transb"}, r.shape, OneOf{r.side}, r.rank,
            OneOf{r.dtype}, OneOf{r.pass}, OneOf{r.transa}, OneOf{r.transb});
  read_cols(o, {"tokens", "in", "out", "m", "n", "k", "bytes_moved"}, r.tokens, r.in, r.out, r.m, r.n, r.k,
            r.bytes_moved);
  check_lora_shape(o, ctx, r);
  read_cols(o, {"tflops", "time_us_median", "iterations", "algos_tried"}, r.tflops, r.time_us_median,
            r.iterations, r.algos_tried);
  const double flops = 2.0 * static_cast<double>(r.m) * static_cast<double>(r.n) * static_cast<double>(r.k);
  check_time_vs_rate(o, "time_us_median", r.time_us_median, r.tflops.median, flops / 1e6, "tflops_median");
  return r;
}

AttentionRow read_attention(Obj& o, Ctx& ctx) {
  AttentionRow r;
  read_cols(o, {"direction", "impl", "dtype", "causal"}, OneOf{r.direction}, r.impl, OneOf{r.dtype},
            r.causal);
  if (ctx.ok() && !r.causal)
    o.fail(Errc::invalid_value, "causal", "must be true (causal attention is measured)");
  read_cols(o, {"model", "batch", "heads", "kv_heads"}, r.model, r.batch, r.heads, r.kv_heads);
  if (ctx.ok() && r.heads % r.kv_heads != 0) o.fail(Errc::invalid_value, "kv_heads", "must divide heads");
  read_cols(o, {"head_dim", "seq_len", "flops"}, r.head_dim, r.seq_len, r.flops);
  const double want = attention_causal_flops(r.direction, r.batch, r.heads, r.seq_len, r.head_dim);
  if (ctx.ok() && !close(r.flops, want, 1e-9))
    o.fail(Errc::invalid_value, "flops",
           "must be the causal count " + num(want) + " (fwd 2 batch heads seq_len^2 head_dim, bwd 2.5x)");
  read_cols(o, {"tflops", "time_us_median", "iterations"}, r.tflops, r.time_us_median, r.iterations);
  check_time_vs_rate(o, "time_us_median", r.time_us_median, r.tflops.median, r.flops / 1e6, "tflops_median");
  return r;
}

void read_op_classes(Obj& ms, Ctx& ctx, CalMeasurements& m) {
  for_optional_rows(ms, "norm", ctx, [&](Obj& o) { m.norm.push_back(read_norm(o, ctx)); });
  for_optional_rows(ms, "cast", ctx, [&](Obj& o) { m.cast.push_back(read_cast(o, ctx)); });
  for_optional_rows(ms, "pointwise", ctx, [&](Obj& o) { m.pointwise.push_back(read_pointwise(o, ctx)); });
  for_optional_rows(ms, "cross_entropy", ctx,
                    [&](Obj& o) { m.cross_entropy.push_back(read_cross_entropy(o, ctx)); });
  for_optional_rows(ms, "lora_gemm", ctx, [&](Obj& o) { m.lora_gemm.push_back(read_lora_gemm(o, ctx)); });
  for_optional_rows(ms, "attention", ctx, [&](Obj& o) { m.attention.push_back(read_attention(o, ctx)); });
}

// A bandwidth-type row's rate columns after its bytes_moved: the GB/s statistic, the median time
// (consistent with the rate) and the sample count.
template <class Row>
void read_rate(Obj& o, Row& r) {
  r.gbps = o.stat("gbps");
  r.time_us_median = o.number("time_us_median");
  r.iterations = read_iterations(o);
  check_time_vs_rate(o, "time_us_median", r.time_us_median, r.gbps.median,
                     static_cast<double>(r.bytes_moved) / 1e3, "gbps_median");
}

// bytes_per_param = bytes_moved / the row's count (`what`: elements or params).
void check_per_param(Obj& o, double per_param, std::uint64_t bytes, std::int64_t count, const char* what) {
  if (!close(per_param, static_cast<double>(bytes) / static_cast<double>(count), 1e-6))
    o.fail(Errc::invalid_value, "bytes_per_param", std::string("must equal bytes_moved / ") + what);
}

BandwidthRow read_bandwidth(Obj& o, Ctx& ctx) {
  BandwidthRow r;
  r.kernel = o.one_of("kernel");
  r.array_bytes = o.bytes("array_bytes");
  r.bytes_moved = o.bytes("bytes_moved");
  if (ctx.ok()) {
    std::uint64_t factor = r.kernel == "copy" ? 2 : 3;
    if (r.bytes_moved != factor * r.array_bytes) {
      o.fail(Errc::invalid_value, "bytes_moved",
             "must be " + std::to_string(factor) + " x array_bytes for " + r.kernel);
    }
  }
  read_rate(o, r);
  return r;
}

GemmRow read_gemm(Obj& o, Ctx& ctx) {
  GemmRow r;
  read_cols(o, {"shape", "dtype", "pass", "transa", "transb"}, r.shape, OneOf{r.dtype}, OneOf{r.pass},
            OneOf{r.transa}, OneOf{r.transb});
  if (ctx.ok()) {
    std::string want = r.pass == "fwd" ? "TN" : r.pass == "dgrad" ? "NN" : "NT";
    if (r.transa + r.transb != want) {
      o.fail(Errc::invalid_value, "transa",
             "pass " + r.pass + " is transa/transb " + want + " (got " + r.transa + r.transb + ")");
    }
  }
  read_cols(o, {"m", "n", "k", "tflops", "time_us_median", "iterations", "algos_tried", "tflops_heuristic"},
            r.m, r.n, r.k, r.tflops, r.time_us_median, r.iterations, r.algos_tried, r.tflops_heuristic);
  if (const json* fa = o.raw("fast_accum", false); fa && !fa->is_null()) {
    if (!fa->is_boolean()) {
      o.fail(Errc::wrong_type, "fast_accum", std::string("must be true or false, got ") + fa->type_name());
    } else {
      r.fast_accum = fa->get<bool>();
      if (r.fast_accum && r.dtype != "fp8_e4m3")
        o.fail(Errc::invalid_value, "fast_accum", "is an fp8 option; must be false for " + r.dtype);
    }
  }
  double flops = 2.0 * static_cast<double>(r.m) * static_cast<double>(r.n) * static_cast<double>(r.k);
  check_time_vs_rate(o, "time_us_median", r.time_us_median, r.tflops.median, flops / 1e6, "tflops_median");
  return r;
}

// The routing columns that expert_gemm and moe_layer rows share, in the files' order.
template <class Row>
void read_routing(Obj& o, Row& r) {
  read_cols(o, {"impl", "routing", "distribution", "experts", "top_k"}, OneOf{r.impl}, OneOf{r.routing},
            OneOf{r.distribution}, r.experts, r.top_k);
}

// top_k is at most the expert count, and every expert under dense routing.
template <class Row>
void check_top_k(Obj& o, const Row& r) {
  if (r.top_k > r.experts) o.fail(Errc::invalid_value, "top_k", "must be <= experts");
  if (r.routing == "dense" && r.top_k != r.experts)
    o.fail(Errc::invalid_value, "top_k", "must equal experts for dense routing");
}

ExpertGemmRow read_expert_gemm(Obj& o, Ctx& ctx) {
  ExpertGemmRow r;
  read_cols(o, {"model", "dtype", "proj", "pass"}, r.model, OneOf{r.dtype}, OneOf{r.proj}, OneOf{r.pass});
  read_routing(o, r);
  read_cols(o, {"tokens", "n", "k"}, r.tokens, r.n, r.k);
  const json* tpe = o.array("tokens_per_expert");
  if (tpe && ctx.ok()) {
    std::string p = at(o.path(), "tokens_per_expert");
    if (static_cast<int>(tpe->size()) != r.experts) {
      ctx.fail(Errc::invalid_value, p, "must have one entry per expert (" + std::to_string(r.experts) + ")");
    }
    std::int64_t sum = 0;
    for (std::size_t i = 0; i < tpe->size() && ctx.ok(); ++i) {
      const json& v = (*tpe)[i];
      if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() > r.tokens) {
        ctx.fail(Errc::invalid_value, idx(p, i), "must be an integer in 0..tokens");
        break;
      }
      r.tokens_per_expert.push_back(v.get<std::int64_t>());
      sum += r.tokens_per_expert.back();
    }
    if (ctx.ok()) {
      check_top_k(o, r);
      if (ctx.ok() && sum != r.tokens * r.top_k) {
        ctx.fail(Errc::invalid_value, p,
                 "must sum to tokens x top_k = " + std::to_string(r.tokens * r.top_k) + " (got " +
                     std::to_string(sum) + ")");
      }
    }
  }
  read_cols(o, {"time_us", "tflops_median", "iterations"}, r.time_us, r.tflops_median, r.iterations);
  check_time_vs_rate(o, "time_us_median", r.time_us.median, r.tflops_median, expert_flops(r) / 1e6,
                     "tflops_median");
  return r;
}

MoeLayerRow read_moe_layer(Obj& o, Ctx& ctx) {
  MoeLayerRow r;
  r.model = o.str("model");
  r.direction = o.one_of("direction");
  read_routing(o, r);
  if (ctx.ok()) check_top_k(o, r);
  read_cols(o, {"tokens", "hidden", "ffn", "time_us", "iterations"}, r.tokens, r.hidden, r.ffn, r.time_us,
            r.iterations);
  Obj st(o.raw("stages_us", true), at(o.path(), "stages_us"), ctx,
         field_list("calibration.measurements.moe_layer[].stages_us"));
  std::vector<std::string> names =
      r.direction == "forward"
          ? std::vector<std::string>{"router", "topk", "permute", "experts", "unpermute"}
          : std::vector<std::string>{"unpermute", "experts_dgrad", "experts_wgrad", "permute", "router"};
  for (const auto& n : names) {
    double v = st.number(n);
    if (ctx.ok() && v > r.time_us.p90 * 1.01 + 1.0) {
      st.fail(Errc::invalid_value, n,
              "stage median " + num(v) + " us exceeds the layer's time_us_p90 " + num(r.time_us.p90));
    }
    r.stages_us.emplace_back(n, v);
  }
  st.finish();
  return r;
}

Nf4Row read_nf4_dequant(Obj& o, Ctx& ctx) {
  Nf4Row r;
  r.variant = o.one_of("variant");
  r.elements = o.integer("elements");
  if (ctx.ok() && r.elements % 64 != 0)
    o.fail(Errc::invalid_value, "elements", "must be a multiple of the 64-value block");
  read_cols(o, {"out_dtype", "double_quant", "bytes_moved", "bytes_per_param"}, OneOf{r.out_dtype},
            r.double_quant, r.bytes_moved, r.bytes_per_param);
  if (ctx.ok()) check_per_param(o, r.bytes_per_param, r.bytes_moved, r.elements, "elements");
  read_rate(o, r);
  return r;
}

AdamwRow read_adamw(Obj& o, Ctx& ctx) {
  AdamwRow r;
  read_cols(o, {"impl", "params", "bytes_moved", "bytes_per_param"}, OneOf{r.impl}, r.params, r.bytes_moved,
            r.bytes_per_param);
  if (ctx.ok()) check_per_param(o, r.bytes_per_param, r.bytes_moved, r.params, "params");
  read_rate(o, r);
  return r;
}

ElementwiseRow read_elementwise(Obj& o) {
  ElementwiseRow r;
  read_cols(o, {"op", "dtype", "elements", "bytes_moved"}, OneOf{r.op}, OneOf{r.dtype}, r.elements,
            r.bytes_moved);
  read_rate(o, r);
  return r;
}

LaunchRow read_launch(Obj& o) {
  LaunchRow r;
  read_cols(o, {"kind", "us", "iterations"}, OneOf{r.kind}, r.us, r.iterations);
  return r;
}

HostRow read_host(Obj& o) {
  HostRow r;
  read_cols(o, {"kind", "ops_per_sample", "sync_every", "us", "iterations"}, OneOf{r.kind}, r.ops_per_sample,
            r.sync_every, r.us, r.iterations);
  return r;
}

CpuRow read_cpu(Obj& o) {
  CpuRow r;
  read_cols(o, {"kind", "score", "iterations"}, OneOf{r.kind}, r.score, r.iterations);
  return r;
}

CollectiveRow read_collectives(Obj& o, Ctx& ctx) {
  CollectiveRow r;
  read_cols(o, {"op", "ranks", "bytes", "time_us", "algbw_gbps", "busbw_gbps"}, OneOf{r.op}, r.ranks, r.bytes,
            r.time_us, r.algbw_gbps, r.busbw_gbps);
  if (ctx.ok()) {
    const double alg = static_cast<double>(r.bytes) / r.time_us / 1e3;  // B/us -> GB/s
    if (!close(r.algbw_gbps, alg, 2e-3)) {
      o.fail(Errc::invalid_value, "algbw_gbps",
             "must be bytes / time_us (" + num(alg) + " GB/s), got " + num(r.algbw_gbps));
    } else if (auto f = collective_bus_factor(r.op, r.ranks);
               f && !close(r.busbw_gbps, *f * r.algbw_gbps, 2e-3)) {
      o.fail(Errc::invalid_value, "busbw_gbps",
             "must be algbw_gbps x " + num(*f) + " (nccl-tests' factor for " + r.op + " over " +
                 std::to_string(r.ranks) + " ranks) = " + num(*f * r.algbw_gbps) + ", got " +
                 num(r.busbw_gbps));
    }
  }
  return r;
}

P2pRow read_p2p(Obj& o, Ctx& ctx) {
  P2pRow r;
  read_cols(o, {"src", "dst"}, r.src, r.dst);
  if (ctx.ok() && r.src == r.dst) o.fail(Errc::invalid_value, "dst", "must differ from src");
  read_cols(o, {"peer_access", "bytes", "time_us", "gbps"}, r.peer_access, r.bytes, r.time_us, r.gbps);
  check_time_vs_rate(o, "time_us", r.time_us, r.gbps, static_cast<double>(r.bytes) / 1e3, "gbps");
  return r;
}

}  // namespace

CalMeasurements read_measurements(const json* j, Ctx& ctx) {
  Obj ms(j, "measurements", ctx, field_list("calibration.measurements"));
  CalMeasurements m;
  for_rows(ms, "bandwidth", ctx, [&](Obj& o) { m.bandwidth.push_back(read_bandwidth(o, ctx)); });
  for_rows(ms, "gemm", ctx, [&](Obj& o) { m.gemm.push_back(read_gemm(o, ctx)); });
  for_rows(ms, "expert_gemm", ctx, [&](Obj& o) { m.expert_gemm.push_back(read_expert_gemm(o, ctx)); });
  for_rows(ms, "moe_layer", ctx, [&](Obj& o) { m.moe_layer.push_back(read_moe_layer(o, ctx)); });
  for_rows(ms, "nf4_dequant", ctx, [&](Obj& o) { m.nf4_dequant.push_back(read_nf4_dequant(o, ctx)); });
  for_rows(ms, "adamw", ctx, [&](Obj& o) { m.adamw.push_back(read_adamw(o, ctx)); });
  for_rows(ms, "elementwise", ctx, [&](Obj& o) { m.elementwise.push_back(read_elementwise(o)); });
  for_rows(ms, "launch", ctx, [&](Obj& o) { m.launch.push_back(read_launch(o)); });
  for_rows(ms, "host", ctx, [&](Obj& o) { m.host.push_back(read_host(o)); });
  for_rows(ms, "cpu", ctx, [&](Obj& o) { m.cpu.push_back(read_cpu(o)); });
  // schema 2: optional (absent in version 1 files and in runs without --collectives)
  for_optional_rows(ms, "collectives", ctx,
                    [&](Obj& o) { m.collectives.push_back(read_collectives(o, ctx)); });
  for_optional_rows(ms, "p2p", ctx, [&](Obj& o) { m.p2p.push_back(read_p2p(o, ctx)); });
  read_op_classes(ms, ctx, m);
  ms.finish();
  return m;
}

}  // namespace ftcost::cal_io
