// A synthetic calibration with every kind of row (plausible H100 SXM numbers, not a measurement): the
// source of the committed fixture and the starting point of tests that corrupt one field at a time.
#pragma once

#include "ftcost/calibrate/plan.hpp"
#include "ftcost/calibrate/routing.hpp"
#include "ftcost/calibration.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace ftcost::test {

inline CalStat spread(double median, double rel) {
  return CalStat{median, median * (1 - rel), median * (1 + rel)};
}

// A bandwidth-type row of schema 3 at `gbps` (1% spread): bytes and time filled in.
template <class Row>
Row gbps_row(Row r, std::uint64_t bytes, double gbps) {
  r.bytes_moved = bytes;
  r.gbps = spread(gbps, 0.01);
  r.time_us_median = static_cast<double>(bytes) / (gbps * 1e3);
  r.iterations = 20;
  return r;
}

// The op classes between the GEMMs (schema 3). Derived medians, by hand: norm 2100 (of 2000 2100 2200),
// cast 2800 (2700 2900), pointwise 2900 (2850 2950), cross_entropy 2550 (2400 2500 2600 2700), attention fwd
// 385 (350 420), bwd 315 (300 330) TFLOP/s.
inline void add_op_classes(CalMeasurements& ms) {
  auto u = [](std::int64_t v) { return static_cast<std::uint64_t>(v); };
  struct Norm {
    const char* dir;
    std::int64_t rows, cols;
    double gbps;
  };
  for (const Norm& n :
       {Norm{"fwd", 4096, 4096, 2200}, Norm{"bwd", 4096, 4096, 2000}, Norm{"fwd", 4096, 3584, 2100}}) {
    NormRow r;
    r.op = "rmsnorm";
    r.direction = n.dir;
    r.dtype = "bf16";
    r.rows = n.rows;
    r.cols = n.cols;
    const std::uint64_t e = u(n.rows) * u(n.cols), c = u(n.cols);
    ms.norm.push_back(gbps_row(r, r.direction == "fwd" ? 2 * (2 * e + c) : 2 * (3 * e + 2 * c), n.gbps));
  }
  for (const char* src : {"bf16", "fp32"}) {
    CastRow r;
    r.src_dtype = src;
    r.dst_dtype = r.src_dtype == "bf16" ? "fp32" : "bf16";
    r.elements = 4096LL * 4096;
    ms.cast.push_back(gbps_row(r, 6 * u(r.elements), r.src_dtype == "bf16" ? 2900 : 2700));
  }
  for (const char* op : {"mul", "add"}) {
    PointwiseRow r;
    r.op = op;
    r.dtype = "bf16";
    r.elements = r.op == "mul" ? 4096LL * 14336 : 4096LL * 4096;
    ms.pointwise.push_back(gbps_row(r, 6 * u(r.elements), r.op == "mul" ? 2950 : 2850));
  }
  struct Ce {
    const char* dir;
    std::int64_t vocab;
    double gbps;
  };
  for (const Ce& x :
       {Ce{"fwd", 32000, 2600}, Ce{"bwd", 32000, 2500}, Ce{"fwd", 128256, 2700}, Ce{"bwd", 128256, 2400}}) {
    CrossEntropyRow r;
    r.direction = x.dir;
    r.logits_dtype = "fp32";
    r.rows = 2048;
    r.vocab = x.vocab;
    const std::uint64_t rv = 2048 * u(x.vocab);
    ms.cross_entropy.push_back(
        gbps_row(r, r.direction == "fwd" ? 4 * rv + 16 * 2048 : 8 * rv + 12 * 2048, x.gbps));
  }
  // LoRA rank 16 on a 4096 x 4096 layer, 4096 tokens: every pass moves 2 (2 x 4096 x 16 + 4096^2) bytes
  struct Lora {
    const char* side;
    const char* pass;
    double tflops;
  };
  for (const Lora& l :
       {Lora{"A", "fwd", 40}, Lora{"A", "dgrad", 35}, Lora{"A", "wgrad", 30}, Lora{"B", "fwd", 45}}) {
    const bool a = std::string(l.side) == "A";
    calib::GemmSpec g = calib::make_gemm("llama-3-8b.q", "bf16", l.pass, 4096, a ? 4096 : 16, a ? 16 : 4096);
    LoraGemmRow r;
    r.shape = "llama-3-8b.q";
    r.side = l.side;
    r.rank = 16;
    r.dtype = "bf16";
    r.pass = l.pass;
    r.transa = std::string(1, g.transa);
    r.transb = std::string(1, g.transb);
    r.tokens = g.tokens;
    r.in = g.in;
    r.out = g.out;
    r.m = g.m;
    r.n = g.n;
    r.k = g.k;
    r.bytes_moved = 2 * (u(g.m) * u(g.k) + u(g.k) * u(g.n) + u(g.m) * u(g.n));
    r.tflops = spread(l.tflops, 0.02);
    r.time_us_median = g.flops() / (l.tflops * 1e6);
    r.iterations = 30;
    r.algos_tried = 4;
    ms.lora_gemm.push_back(r);
  }
  struct Att {
    const char* dir;
    int batch;
    std::int64_t seq;
    double tflops;
  };
  for (const Att& x : {Att{"fwd", 8, 1024, 350}, Att{"fwd", 2, 4096, 420}, Att{"bwd", 8, 1024, 300},
                       Att{"bwd", 2, 4096, 330}}) {
    AttentionRow r;
    r.direction = x.dir;
    r.impl = "ftcost_wmma_fa2";
    r.dtype = "bf16";
    r.model = "llama-3-8b";
    r.batch = x.batch;
    r.heads = 32;
    r.kv_heads = 8;
    r.head_dim = 128;
    r.seq_len = x.seq;
    r.flops = attention_causal_flops(r.direction, r.batch, r.heads, r.seq_len, r.head_dim);
    r.tflops = spread(x.tflops, 0.02);
    r.time_us_median = r.flops / (x.tflops * 1e6);
    r.iterations = 12;
    ms.attention.push_back(r);
  }
}

// An expert-GEMM or MoE-layer row's routing: Mixtral-8x7B, 4096 tokens, sparse top-2 of 8 experts.
template <class Row>
void mixtral_routing(Row& r, const char* impl, const char* dist) {
  r.model = "mixtral-8x7b";
  r.impl = impl;
  r.routing = "sparse";
  r.distribution = dist;
  r.experts = 8;
  r.top_k = 2;
  r.tokens = 4096;
}

// The synthetic fixture's run: version, command line, mode.
inline void synthetic_meta(CalMeta& m) {
  m.tool_version = "0.1.0";
  m.git_revision = "0123456789ab";
  m.git_dirty = false;
  m.created_utc = "2025-06-01T12:00:00Z";
  m.command_line = "ftcost-calibrate --quick --out h100-sxm-synthetic.json";
  m.mode = "quick";
  m.partial = false;
  m.duration_s = 96.5;
  m.notes = {"synthetic test fixture: plausible H100 SXM numbers, not a measurement"};
}

// The synthetic fixture's device: an H100 SXM.
inline void synthetic_device(CalDevice& d) {
  d.name = "NVIDIA H100 80GB HBM3 (synthetic fixture)";
  d.pci_device_id = "0x2330";
  d.uuid_hash = "sha256:" + std::string(64, 'a');
  d.cc_major = 9;
  d.cc_minor = 0;
  d.sm_count = 132;
  d.memory_bytes = 85045460992ull;
  d.memory_bus_width_bits = 5120;
  d.l2_cache_bytes = 52428800;
  d.sm_clock_max_mhz = 1980;
  d.memory_clock_max_mhz = 2619;
  d.power_limit_w = 700;
  d.driver_version = "550.54.15";
  d.cuda_runtime_version = "13.0";
  d.cublas_version = "13.1.0";
  d.host_cpu = "Intel(R) Xeon(R) Platinum 8480+";
}

inline void synthetic_conditions(CalConditions& k) {
  k.nvml = true;
  k.start = CalClockSample{1980.0, 2619.0, 34.0, 118.0};
  k.end = CalClockSample{1755.0, 2619.0, 61.0, 690.0};
  k.sm_clock_min_mhz = 1740;
  k.sm_clock_max_mhz = 1980;
  k.temperature_max_c = 63;
  k.power_max_w = 699;
  k.throttle_reasons_seen = {"sw_power_cap"};
  k.other_processes = 0;
}

// Bandwidth rows (copy, triad) and dense GEMM rows.
inline void add_bandwidth_and_gemm_rows(CalMeasurements& ms) {
  const double MiB = 1048576.0;
  for (const char* kern : {"copy", "triad"}) {
    for (double mib : {512.0, 1024.0}) {
      BandwidthRow r;
      r.kernel = kern;
      r.array_bytes = static_cast<std::uint64_t>(mib * MiB);
      r.bytes_moved = r.array_bytes * (r.kernel == "copy" ? 2u : 3u);
      r.gbps = spread(r.kernel == "copy" ? 2950 + mib / 20 : 3010 + mib / 20, 0.004);
      r.time_us_median = static_cast<double>(r.bytes_moved) / (r.gbps.median * 1e3);
      r.iterations = 12;
      ms.bandwidth.push_back(r);
    }
  }
  // GEMM rows from a smooth efficiency model: tflops = peak * f / (f + f_half)
  auto gemm_row = [&](const calib::GemmSpec& s, double peak) {
    GemmRow r = s.row();
    double f = s.flops();
    double skinny = std::min({s.m, s.n, s.k}) < 64 ? 0.15 : 1.0;
    r.tflops = spread(peak * f / (f + 4e10) * skinny, 0.01);
    r.time_us_median = f / (r.tflops.median * 1e6);
    r.iterations = 20;
    r.algos_tried = 4;
    r.tflops_heuristic = r.tflops.median * 0.97;
    ms.gemm.push_back(r);
  };
  for (int s : {1024, 2048, 4096, 8192}) gemm_row(calib::make_gemm("square", "bf16", "fwd", s, s, s), 760);
  for (int s : {4096, 8192}) gemm_row(calib::make_gemm("square", "fp16", "fwd", s, s, s), 770);
  for (int s : {4096, 8192}) gemm_row(calib::make_gemm("square", "tf32", "fwd", s, s, s), 380);
  for (int s : {4096, 8192}) gemm_row(calib::make_gemm("square", "fp8_e4m3", "fwd", s, s, s), 1350);
  for (const char* pass : {"fwd", "dgrad", "wgrad"}) {
    gemm_row(calib::make_gemm("mixtral-8x7b.w1", "bf16", pass, 4096, 4096, 14336), 740);
    gemm_row(calib::make_gemm("mixtral-8x7b.router", "bf16", pass, 4096, 4096, 8), 740);
  }
}

inline void add_moe_rows(CalMeasurements& ms) {
  // expert GEMMs and the layer: Mixtral, 4096 tokens, top-2, uniform and the paper's distribution
  for (const char* dist : {"uniform", "mixtral_he_tuned"}) {
    auto w = calib::distribution_weights(dist, 8).value();
    auto counts = calib::expert_counts(4096, 2, w);
    for (const char* proj : {"w1_w3", "w2"}) {
      for (const char* pass : {"fwd", "dgrad", "wgrad"}) {
        for (const char* impl : {"loop", "grouped"}) {
          ExpertGemmRow r;
          mixtral_routing(r, impl, dist);
          r.dtype = "bf16";
          r.proj = proj;
          r.pass = pass;
          r.n = r.proj == "w1_w3" ? 14336 : 4096;
          r.k = r.proj == "w1_w3" ? 4096 : 14336;
          r.tokens_per_expert = counts;
          double flops = 2.0 * (r.proj == "w1_w3" ? 2 : 1) * 8192.0 * static_cast<double>(r.n) *
                         static_cast<double>(r.k);
          double tflops = r.impl == "grouped" ? 610 : 540;
          r.time_us = spread(flops / (tflops * 1e6), 0.02);
          r.tflops_median = flops / (r.time_us.median * 1e6);
          r.iterations = 15;
          ms.expert_gemm.push_back(r);
        }
      }
    }
    for (const char* dir : {"forward", "backward"}) {
      for (const char* impl : {"loop", "grouped"}) {
        MoeLayerRow r;
        mixtral_routing(r, impl, dist);
        r.direction = dir;
        r.hidden = 4096;
        r.ffn = 14336;
        double experts_us = r.direction == "forward" ? (r.impl == "loop" ? 5400 : 4800) : 0;
        if (r.direction == "forward") {
          r.stages_us = {{"router", 14.0},
                         {"topk", 6.0},
                         {"permute", 45.0},
                         {"experts", experts_us},
                         {"unpermute", 40.0}};
        } else {
          double dg = r.impl == "loop" ? 5500 : 4900, wg = r.impl == "loop" ? 5600 : 5000;
          r.stages_us = {{"unpermute", 60.0},
                         {"experts_dgrad", dg},
                         {"experts_wgrad", wg},
                         {"permute", 40.0},
                         {"router", 30.0}};
        }
        double total = 0;
        for (const auto& s : r.stages_us) total += s.second;
        r.time_us = spread(total, 0.01);
        r.iterations = 10;
        ms.moe_layer.push_back(r);
      }
    }
  }
}

// The memory-bound families: NF4 dequantization, AdamW, elementwise.
inline void add_memory_bound_rows(CalMeasurements& ms) {
  for (const char* variant : {"fused", "bnb"}) {
    Nf4Row r;
    r.variant = variant;
    r.elements = 14336LL * 4096;
    r.out_dtype = "bf16";
    r.double_quant = true;
    double n = static_cast<double>(r.elements);
    r.bytes_moved =
        static_cast<std::uint64_t>(r.variant == "fused" ? n * 2.5 + n / 64 + n / 64 / 256 * 4
                                                        : n * 6.5 + n / 64 * 17 + n / 64 / 256 * 4);
    r.bytes_per_param = static_cast<double>(r.bytes_moved) / n;
    r.gbps = spread(r.variant == "fused" ? 2700 : 2450, 0.01);
    r.time_us_median = static_cast<double>(r.bytes_moved) / (r.gbps.median * 1e3);
    r.iterations = 14;
    ms.nf4_dequant.push_back(r);
  }
  for (const char* impl : {"fused", "unfused"}) {
    AdamwRow r;
    r.impl = impl;
    r.params = 1LL << 26;
    r.bytes_per_param = r.impl == "fused" ? 28 : 56;
    r.bytes_moved = static_cast<std::uint64_t>(r.bytes_per_param) * static_cast<std::uint64_t>(r.params);
    r.gbps = spread(r.impl == "fused" ? 2900 : 2800, 0.01);
    r.time_us_median = static_cast<double>(r.bytes_moved) / (r.gbps.median * 1e3);
    r.iterations = 16;
    ms.adamw.push_back(r);
  }
  struct Ew {
    const char* op;
    double elems, bytes_per, gbps;
  };
  for (const Ew& e : {Ew{"swiglu", 4096.0 * 14336, 6, 2800}, Ew{"swiglu_bwd", 4096.0 * 14336, 10, 2850},
                      Ew{"gelu", 4096.0 * 14336, 4, 2750}, Ew{"rmsnorm", 4096.0 * 4096, 4, 2300}}) {
    ElementwiseRow r;
    r.op = e.op;
    r.dtype = "bf16";
    r.elements = static_cast<std::int64_t>(e.elems);
    r.bytes_moved = static_cast<std::uint64_t>(e.elems * e.bytes_per);
    r.gbps = spread(e.gbps, 0.01);
    r.time_us_median = static_cast<double>(r.bytes_moved) / (r.gbps.median * 1e3);
    r.iterations = 20;
    ms.elementwise.push_back(r);
  }
}

inline Calibration synthetic_calibration() {
  Calibration c;
  synthetic_meta(c.meta);
  synthetic_device(c.device);
  synthetic_conditions(c.conditions);
  CalMeasurements& ms = c.measurements;
  add_bandwidth_and_gemm_rows(ms);
  add_moe_rows(ms);
  add_memory_bound_rows(ms);
  ms.launch.push_back(LaunchRow{"async", spread(2.2, 0.05), 30});
  ms.launch.push_back(LaunchRow{"sync", spread(7.9, 0.08), 30});
  ms.host.push_back(HostRow{"eager_op", 512, 32, spread(5.6, 0.04), 25});
  ms.cpu.push_back(CpuRow{"single_thread", spread(41.0, 0.02), 30});
  add_op_classes(ms);
  c.derived = derive_calibration(ms);
  return c;
}

}  // namespace ftcost::test
