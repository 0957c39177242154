#include "ftcost/calibration.hpp"

#include "ftcost/fields.hpp"
#include "ftcost/gpu.hpp"
#include "ftcost/json_util.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <map>
#include <set>

namespace ftcost {

const char* const kThrottleReasonNames[9] = {
    "gpu_idle",               // 0x001
    "applications_clocks",    // 0x002
    "sw_power_cap",           // 0x004
    "hw_slowdown",            // 0x008
    "sync_boost",             // 0x010
    "sw_thermal_slowdown",    // 0x020
    "hw_thermal_slowdown",    // 0x040
    "hw_power_brake",         // 0x080
    "display_clock_setting",  // 0x100
};

namespace {

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int dtype_order(const std::string& d) {
  if (d == "bf16") return 0;
  if (d == "fp16") return 1;
  if (d == "tf32") return 2;
  if (d == "fp8_e4m3") return 3;
  return 4;
}

// Median of `value` over the rows that `pick` accepts; nullopt when none does.
template <class Row, class V, class P>
std::optional<double> median_over(const std::vector<Row>& rows, V value, P pick) {
  std::vector<double> v;
  for (const auto& r : rows)
    if (pick(r)) v.push_back(value(r));
  if (v.empty()) return std::nullopt;
  return median_of(v);
}

// The op classes between the GEMMs (schema 3): medians over their rows; the LoRA roofline fraction needs the
// bf16 GEMM peak and the DRAM bandwidth derived before it.
void derive_op_classes(const CalMeasurements& m, CalDerived& d) {
  auto gbps = [](const auto& r) { return r.gbps.median; };
  auto any = [](const auto&) { return true; };
  d.norm_gbps = median_over(m.norm, gbps, any);
  d.cast_gbps = median_over(m.cast, gbps, any);
  d.pointwise_gbps = median_over(m.pointwise, gbps, any);
  d.cross_entropy_gbps = median_over(m.cross_entropy, gbps, any);
  auto tflops = [](const AttentionRow& r) { return r.tflops.median; };
  d.attention_fwd_tflops =
      median_over(m.attention, tflops, [](const AttentionRow& r) { return r.direction == "fwd"; });
  d.attention_bwd_tflops =
      median_over(m.attention, tflops, [](const AttentionRow& r) { return r.direction == "bwd"; });
  double peak = 0;
  for (const auto& c : d.gemm_efficiency)
    if (c.dtype == "bf16") peak = c.peak_measured_tflops;
  if (peak <= 0 || !d.memory_bandwidth_gbps) return;
  const double bw = *d.memory_bandwidth_gbps;
  d.lora_gemm_roofline_fraction = median_over(
      m.lora_gemm,
      [&](const LoraGemmRow& r) {
        const double flops =
            2.0 * static_cast<double>(r.m) * static_cast<double>(r.n) * static_cast<double>(r.k);
        const double roof_s =
            std::max(flops / (peak * 1e12), static_cast<double>(r.bytes_moved) / (bw * 1e9));
        return roof_s / (r.time_us_median * 1e-6);
      },
      any);
}

// One octave bin of FLOPs per point: the geometric mean of its rows' FLOPs, the median of their efficiency,
// the row count as weight.
struct BinnedPoints {
  std::vector<double> xs, ys, ws;
};

BinnedPoints octave_bins(const std::vector<const GemmRow*>& rows, double peak,
                         double (*rate)(const GemmRow&)) {
  std::map<long, std::vector<std::pair<double, double>>> bins;  // floor(log2 flops) -> (log2 flops, eff)
  for (const GemmRow* r : rows) {
    double flops = 2.0 * static_cast<double>(r->m) * static_cast<double>(r->n) * static_cast<double>(r->k);
    double lf = std::log2(flops);
    bins[static_cast<long>(std::floor(lf))].emplace_back(lf, rate(*r) / peak);
  }
  BinnedPoints out;
  for (const auto& b : bins) {
    double sum_lf = 0;
    std::vector<double> effs;
    for (const auto& p : b.second) {
      sum_lf += p.first;
      effs.push_back(p.second);
    }
    out.xs.push_back(std::exp2(sum_lf / static_cast<double>(b.second.size())));
    out.ys.push_back(median_of(effs));
    out.ws.push_back(static_cast<double>(b.second.size()));
  }
  return out;
}

// Made non-decreasing by pool-adjacent-violators (weighted by row count), capped at 1.
std::vector<GemmEfficiencyPoint> monotone_points(const BinnedPoints& in) {
  struct Block {
    double eff;
    double weight;
    std::size_t first, last;
  };
  std::vector<Block> blocks;
  for (std::size_t i = 0; i < in.ys.size(); ++i) {
    blocks.push_back({in.ys[i], in.ws[i], i, i});
    while (blocks.size() > 1 && blocks[blocks.size() - 2].eff > blocks.back().eff) {
      Block b = blocks.back();
      blocks.pop_back();
      Block& a = blocks.back();
      a.eff = (a.eff * a.weight + b.eff * b.weight) / (a.weight + b.weight);
      a.weight += b.weight;
      a.last = b.last;
    }
  }
  std::vector<GemmEfficiencyPoint> points;
  for (const Block& b : blocks) {
    for (std::size_t i = b.first; i <= b.last; ++i) points.push_back({in.xs[i], std::min(1.0, b.eff)});
  }
  return points;
}

// Efficiency curves, one per dtype, of rate(row) against the dtype's best measured median.
std::vector<GemmEfficiencyCurve> efficiency_curves(const std::vector<GemmRow>& rows,
                                                   double (*rate)(const GemmRow&)) {
  std::map<int, std::vector<const GemmRow*>> by_dtype;
  for (const auto& r : rows) by_dtype[dtype_order(r.dtype)].push_back(&r);
  std::vector<GemmEfficiencyCurve> curves;
  for (const auto& kv : by_dtype) {
    GemmEfficiencyCurve c;
    c.dtype = kv.second.front()->dtype;
    for (const GemmRow* r : kv.second)
      c.peak_measured_tflops = std::max(c.peak_measured_tflops, r->tflops.median);
    c.points = monotone_points(octave_bins(kv.second, c.peak_measured_tflops, rate));
    curves.push_back(c);
  }
  return curves;
}

double best_tflops(const GemmRow& r) { return r.tflops.median; }

// What a framework's matmul gets: PyTorch calls cuBLAS with its default algorithm (aten/src/ATen/cuda/
// CUDABlas.cpp: cublasGemmEx with CUBLAS_GEMM_DEFAULT_TENSOR_OP, or cublasLt's first heuristic result in
// gemm_and_bias; TunableOp only with PYTORCH_TUNABLEOP_ENABLED=1), i.e. the heuristic's first choice, not the
// best of the candidates the calibrator timed. Rows without it (schema 1) count their best.
double framework_tflops(const GemmRow& r) { return r.tflops_heuristic.value_or(r.tflops.median); }

}  // namespace

CalDerived derive_calibration(const CalMeasurements& m) {
  CalDerived d;
  // GEMM efficiency curves: one per dtype; points are octave bins of FLOPs with the median efficiency
  // of the bin's rows, made non-decreasing by pool-adjacent-violators (weighted by row count).
  d.gemm_efficiency = efficiency_curves(m.gemm, best_tflops);
  d.framework_gemm_efficiency = efficiency_curves(m.gemm, framework_tflops);

  for (const auto& r : m.bandwidth) {
    d.memory_bandwidth_gbps = std::max(d.memory_bandwidth_gbps.value_or(0), r.gbps.median);
  }
  auto largest = [](const auto& rows, auto size_of, auto pick) -> std::optional<double> {
    std::optional<double> best;
    double best_size = -1;
    for (const auto& r : rows) {
      if (!pick(r)) continue;
      double s = size_of(r);
      if (s > best_size || (s == best_size && best && r.gbps.median > *best)) {
        best_size = s;
        best = r.gbps.median;
      }
    }
    return best;
  };
  d.nf4_dequant_gbps = largest(
      m.nf4_dequant, [](const Nf4Row& r) { return static_cast<double>(r.elements); },
      [](const Nf4Row& r) { return r.variant == "fused"; });
  d.adamw_fused_gbps = largest(
      m.adamw, [](const AdamwRow& r) { return static_cast<double>(r.params); },
      [](const AdamwRow& r) { return r.impl == "fused"; });
  d.adamw_unfused_gbps = largest(
      m.adamw, [](const AdamwRow& r) { return static_cast<double>(r.params); },
      [](const AdamwRow& r) { return r.impl == "unfused"; });
  if (!m.elementwise.empty()) {
    std::vector<double> v;
    for (const auto& r : m.elementwise) v.push_back(r.gbps.median);
    d.elementwise_gbps = median_of(v);
  }
  {
    std::vector<double> v;
    for (const auto& r : m.launch) {
      if (r.kind == "async") v.push_back(r.us.median);
    }
    if (!v.empty()) d.launch_overhead_us = median_of(v);
  }
  {
    std::vector<double> v;
    for (const auto& r : m.host) v.push_back(r.us.median);
    if (!v.empty()) d.host_op_overhead_us = median_of(v);
  }
  {
    std::vector<double> v;
    for (const auto& r : m.cpu) v.push_back(r.score.median);
    if (!v.empty()) d.cpu_score = median_of(v);
  }
  {
    std::vector<double> ratios;
    for (const auto& a : m.expert_gemm) {
      if (a.impl != "loop") continue;
      for (const auto& b : m.expert_gemm) {
        if (b.impl == "grouped" && a.model == b.model && a.dtype == b.dtype && a.proj == b.proj &&
            a.pass == b.pass && a.routing == b.routing && a.distribution == b.distribution &&
            a.experts == b.experts && a.top_k == b.top_k && a.tokens == b.tokens && a.n == b.n &&
            a.k == b.k) {
          ratios.push_back(a.time_us.median / b.time_us.median);
          break;
        }
      }
    }
    if (!ratios.empty()) d.grouped_over_loop_speedup = median_of(ratios);
  }
  derive_op_classes(m, d);
  return d;
}

double attention_causal_flops(const std::string& direction, std::int64_t batch, std::int64_t heads,
                              std::int64_t seq_len, std::int64_t head_dim) {
  const double fwd = 4.0 * static_cast<double>(batch) * static_cast<double>(heads) *
                     static_cast<double>(seq_len) * static_cast<double>(seq_len) *
                     static_cast<double>(head_dim) / 2.0;
  return direction == "bwd" ? 2.5 * fwd : fwd;
}

std::optional<double> collective_bus_factor(const std::string& op, int ranks) {
  if (ranks < 1) return std::nullopt;
  const double n = ranks;
  if (op == "all_reduce") return 2.0 * (n - 1) / n;
  if (op == "all_gather" || op == "reduce_scatter" || op == "all_to_all") return (n - 1) / n;
  if (op == "send_recv") return 1.0;
  return std::nullopt;
}

std::optional<double> tensor_flops_per_clock_per_sm(int cc_major, int cc_minor, const std::string& dtype) {
  // Dense bf16/fp16 tensor FLOP per clock per SM, full-rate (fp32-accumulate on data-centre parts,
  // fp16-accumulate on GeForce parts, whose fp32-accumulate rate is half). Each value is the
  // architecture's datasheet dense figure / (SMs x boost clock), rounded to the power of two it comes to
  // (docs/calibrate.md "Hardware ceiling" lists the arithmetic):
  //   7.0 V100 125 / (80 x 1.53 GHz) = 1021 -> 1024      8.0 A100 312 / (108 x 1.41) = 2049 -> 2048
  //   8.6 A40 149.7 / (84 x 1.74) = 1024                8.9 L40S 362 / (142 x 2.52) = 1012 -> 1024
  //   9.0 H100 SXM 989.4 / (132 x 1.83) = 4096          10.0 B200 2250 / (148 x 1.965) = 7737 -> 8192
  //   12.0 RTX 5090 419 (fp16 acc.) / (170 x 2.407) = 1024
  double base = 0;
  const int cc = cc_major * 10 + cc_minor;
  // One branch per generation, in order; Volta/Turing and GA10x/Ada share a value (bugprone-branch-clone).
  // 7.5 T4: 65 / (40 x 1.59) = 1022 -> 1024
  if (cc == 70 || cc == 72 || cc == 75)
    base = 1024;  // NOLINT(bugprone-branch-clone)
  else if (cc == 80)
    base = 2048;
  else if (cc == 86 || cc == 87 || cc == 89)
    base = 1024;
  else if (cc == 90)
    base = 4096;
  else if (cc == 100 || cc == 103)
    base = 8192;
  else if (cc == 120 || cc == 121)
    base = 1024;
  if (base <= 0) return std::nullopt;
  if (dtype == "bf16" || dtype == "fp16") {
    if (cc < 80 && dtype == "bf16") return std::nullopt;  // no bf16 tensor cores before Ampere
    return base;
  }
  if (dtype == "tf32") return cc >= 80 ? std::optional<double>(base / 2) : std::nullopt;
  if (dtype == "fp8_e4m3") return cc >= 89 ? std::optional<double>(base * 2) : std::nullopt;
  return std::nullopt;
}

std::optional<double> hardware_ceiling_tflops(const CalDevice& d, const std::string& dtype) {
  auto per = tensor_flops_per_clock_per_sm(d.cc_major, d.cc_minor, dtype);
  if (!per || d.sm_count <= 0 || !d.sm_clock_max_mhz || *d.sm_clock_max_mhz <= 0) return std::nullopt;
  return *per * d.sm_count * *d.sm_clock_max_mhz * 1e6 / 1e12;
}

std::optional<double> hardware_ceiling_gbps(const CalDevice& d) {
  if (d.memory_bus_width_bits <= 0 || !d.memory_clock_max_mhz || *d.memory_clock_max_mhz <= 0)
    return std::nullopt;
  // CUDA's memory clock attribute counts the double-data-rate clock once: x 2 transfers per clock
  return *d.memory_clock_max_mhz * 1e6 * 2.0 * d.memory_bus_width_bits / 8.0 / 1e9;
}

Status check_against_spec(const Calibration& cal, double peak_bf16_tflops, double bandwidth_gbps,
                          std::vector<std::string>* above_datasheet) {
  const double tol = 1.05;          // the datasheet's figure plus boost headroom: above it, flag for review
  const double ceiling_tol = 1.02;  // the hardware ceiling is exact up to clock reporting
  auto factor = [](const std::string& dtype) {
    if (dtype == "tf32") return 0.5;
    if (dtype == "fp8_e4m3") return 2.0;
    return 1.0;
  };
  // one row: above the ceiling -> error; above the datasheet -> review note
  auto check_tflops = [&](const std::string& path, double got,
                          const std::string& dtype) -> std::optional<Error> {
    const double datasheet = peak_bf16_tflops > 0 ? peak_bf16_tflops * factor(dtype) : 0;
    auto ceiling = hardware_ceiling_tflops(cal.device, dtype);
    // the bound: the hardware ceiling, and at most 2.1x the datasheet (a GeForce datasheet gives the
    // half-rate fp32-accumulate figure; more than twice it is another GPU's calibration, not a faster card)
    double bound = 0;
    std::string bound_text;
    if (ceiling) {
      bound = *ceiling * ceiling_tol;
      bound_text = "the hardware ceiling " + num(*ceiling) + " TFLOP/s (" +
                   std::to_string(cal.device.sm_count) + " SMs x " + num(*cal.device.sm_clock_max_mhz) +
                   " MHz x " +
                   num(*tensor_flops_per_clock_per_sm(cal.device.cc_major, cal.device.cc_minor, dtype)) +
                   " FLOP/clock/SM for " + dtype + ", +2%)";
    }
    if (datasheet > 0 && (bound <= 0 || datasheet * 2.1 < bound)) {
      bound = datasheet * 2.1;
      bound_text =
          "2.1x the datasheet's dense " + num(datasheet) + " TFLOP/s" +
          (ceiling ? " (below the hardware ceiling " + num(*ceiling) + "): a calibration of another GPU?"
                   : std::string(" (no hardware ceiling: clock or architecture unknown)"));
    }
    if (bound > 0 && got > bound) {
      return make_error(Errc::out_of_range, path,
                        num(got) + " TFLOP/s " + dtype + " is above " + bound_text +
                            ": not a plausible measurement of this GPU");
    }
    if (above_datasheet && datasheet > 0 && got > datasheet * tol) {
      above_datasheet->push_back(
          path + ": " + num(got) + " TFLOP/s " + dtype + " is above the datasheet's dense " + num(datasheet) +
          " TFLOP/s (+5%)" +
          (ceiling ? " but within the hardware ceiling " + num(*ceiling) + " TFLOP/s" : "") +
          ": review (faster clocks than the datasheet's, or a half-rate datasheet figure?)");
    }
    return std::nullopt;
  };
  const auto& g = cal.measurements.gemm;
  for (std::size_t i = 0; i < g.size(); ++i) {
    if (auto e = check_tflops("measurements.gemm[" + std::to_string(i) + "].tflops_median",
                              g[i].tflops.median, g[i].dtype))
      return *e;
  }
  const auto& ex = cal.measurements.expert_gemm;
  for (std::size_t i = 0; i < ex.size(); ++i) {
    if (auto e = check_tflops("measurements.expert_gemm[" + std::to_string(i) + "].tflops_median",
                              ex[i].tflops_median, ex[i].dtype))
      return *e;
  }
  const auto hw_bw = hardware_ceiling_gbps(cal.device);
  auto too_fast = [&](const std::string& path, double gbps) -> std::optional<Error> {
    // the bound: memory clock x 2 x bus width, and at most 1.25x the datasheet (its figure is the same
    // product at the nominal memory clock: far above it is another GPU's calibration)
    double bound = 0;
    std::string bound_text;
    if (hw_bw) {
      bound = *hw_bw * ceiling_tol;
      bound_text = "the hardware ceiling " + num(*hw_bw) + " GB/s (memory clock x 2 x bus width, +2%)";
    }
    if (bandwidth_gbps > 0) {
      const double sheet_bound = hw_bw ? bandwidth_gbps * 1.25 : bandwidth_gbps * tol;
      if (bound <= 0 || sheet_bound < bound) {
        bound = sheet_bound;
        bound_text =
            "the datasheet's memory bandwidth " + num(bandwidth_gbps) +
            (hw_bw ? std::string(" GB/s x 1.25: a calibration of another GPU?")
                   : std::string(" GB/s (+5%; no hardware ceiling: memory clock or bus width unknown)"));
      }
    }
    if (bound > 0 && gbps > bound) {
      return make_error(
          Errc::out_of_range, path,
          num(gbps) + " GB/s is above " + bound_text + ": not a plausible DRAM measurement of this GPU");
    }
    if (above_datasheet && bandwidth_gbps > 0 && gbps > bandwidth_gbps * tol) {
      above_datasheet->push_back(path + ": " + num(gbps) + " GB/s is above the datasheet's " +
                                 num(bandwidth_gbps) + " GB/s (+5%): review");
    }
    return std::nullopt;
  };
  const double big = 4.0 * static_cast<double>(cal.device.l2_cache_bytes);
  const auto& ms = cal.measurements;
  for (std::size_t i = 0; i < ms.bandwidth.size(); ++i) {
    if (auto e = too_fast("measurements.bandwidth[" + std::to_string(i) + "].gbps_median",
                          ms.bandwidth[i].gbps.median))
      return *e;
  }
  for (std::size_t i = 0; i < ms.elementwise.size(); ++i) {
    if (static_cast<double>(ms.elementwise[i].bytes_moved) < big) continue;
    if (auto e = too_fast("measurements.elementwise[" + std::to_string(i) + "].gbps_median",
                          ms.elementwise[i].gbps.median))
      return *e;
  }
  for (std::size_t i = 0; i < ms.nf4_dequant.size(); ++i) {
    if (static_cast<double>(ms.nf4_dequant[i].bytes_moved) < big) continue;
    if (auto e = too_fast("measurements.nf4_dequant[" + std::to_string(i) + "].gbps_median",
                          ms.nf4_dequant[i].gbps.median))
      return *e;
  }
  for (std::size_t i = 0; i < ms.adamw.size(); ++i) {
    if (static_cast<double>(ms.adamw[i].bytes_moved) < big) continue;
    if (auto e =
            too_fast("measurements.adamw[" + std::to_string(i) + "].gbps_median", ms.adamw[i].gbps.median))
      return *e;
  }
  return Ok{};
}

namespace {

std::optional<double> curve_efficiency(const std::vector<GemmEfficiencyCurve>& curves,
                                       const std::string& dtype, double flops) {
  for (const auto& c : curves) {
    if (c.dtype != dtype || c.points.empty() || !(flops > 0)) continue;
    const auto& p = c.points;
    if (flops <= p.front().flops) return p.front().efficiency * flops / p.front().flops;
    if (flops >= p.back().flops) return p.back().efficiency;
    for (std::size_t i = 1; i < p.size(); ++i) {
      if (flops <= p[i].flops) {
        double t =
            (std::log(flops) - std::log(p[i - 1].flops)) / (std::log(p[i].flops) - std::log(p[i - 1].flops));
        return p[i - 1].efficiency + t * (p[i].efficiency - p[i - 1].efficiency);
      }
    }
    return p.back().efficiency;
  }
  return std::nullopt;
}

std::optional<double> curve_tflops(const std::vector<GemmEfficiencyCurve>& curves, const std::string& dtype,
                                   double flops) {
  auto e = curve_efficiency(curves, dtype, flops);
  if (!e) return std::nullopt;
  for (const auto& c : curves) {
    if (c.dtype == dtype) return *e * c.peak_measured_tflops;
  }
  return std::nullopt;
}

}  // namespace

std::optional<double> gemm_efficiency(const CalDerived& d, const std::string& dtype, double flops) {
  return curve_efficiency(d.gemm_efficiency, dtype, flops);
}

std::optional<double> gemm_tflops(const CalDerived& d, const std::string& dtype, double flops) {
  return curve_tflops(d.gemm_efficiency, dtype, flops);
}

std::optional<double> framework_gemm_tflops(const CalDerived& d, const std::string& dtype, double flops) {
  return curve_tflops(d.framework_gemm_efficiency, dtype, flops);
}

std::optional<double> measured_gemm_tflops(const Calibration& cal, const std::string& dtype,
                                           const std::string& pass, std::int64_t m, std::int64_t n,
                                           std::int64_t k) {
  for (const auto& r : cal.measurements.gemm) {
    if (r.dtype == dtype && r.pass == pass && r.m == m && r.n == n && r.k == k) return r.tflops.median;
  }
  return std::nullopt;
}

}  // namespace ftcost
