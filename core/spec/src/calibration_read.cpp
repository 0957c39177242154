#include "calibration_io.hpp"
#include "ftcost/gpu.hpp"

namespace ftcost::cal_io {
namespace {

bool is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
// `prefix` then exactly `digits` hex digits.
bool prefixed_hex(const std::string& s, const std::string& prefix, std::size_t digits) {
  return s.size() == prefix.size() + digits && s.compare(0, prefix.size(), prefix) == 0 &&
         std::all_of(s.begin() + static_cast<std::ptrdiff_t>(prefix.size()), s.end(), is_hex);
}
bool is_digit(char c) { return c >= '0' && c <= '9'; }

bool utc_ok(const std::string& s) {
  // YYYY-MM-DDTHH:MM:SSZ
  if (s.size() != 20) return false;
  const char* pat = "dddd-dd-ddTdd:dd:ddZ";
  for (std::size_t i = 0; i < 20; ++i) {
    if (pat[i] == 'd' ? !is_digit(s[i]) : s[i] != pat[i]) return false;
  }
  int month = (s[5] - '0') * 10 + (s[6] - '0');
  int day = (s[8] - '0') * 10 + (s[9] - '0');
  int hour = (s[11] - '0') * 10 + (s[12] - '0');
  int minute = (s[14] - '0') * 10 + (s[15] - '0');
  int second = (s[17] - '0') * 10 + (s[18] - '0');
  return month >= 1 && month <= 12 && day >= 1 && day <= 31 && hour <= 23 && minute <= 59 && second <= 60;
}

// ---- sections ----

CalMeta read_meta(const json* j, Ctx& ctx) {
  Obj o(j, "meta", ctx, field_list("calibration.meta"));
  CalMeta m;
  m.schema = o.str("schema");
  if (ctx.ok() && m.schema != kCalibrationSchema && m.schema != kCalibrationSchemaV2 &&
      m.schema != kCalibrationSchemaV1) {
    ctx.fail(Errc::schema_mismatch, "meta.schema",
             "\"" + m.schema + "\" is not supported; this build reads \"" + kCalibrationSchema + "\", \"" +
                 kCalibrationSchemaV2 + "\" and \"" + kCalibrationSchemaV1 + "\"");
  }
  read_cols(o, {"tool", "tool_version", "git_revision", "git_dirty", "created_utc"}, m.tool, m.tool_version,
            m.git_revision, m.git_dirty, m.created_utc);
  if (ctx.ok() && !utc_ok(m.created_utc)) {
    o.fail(Errc::invalid_value, "created_utc",
           "must be a UTC time \"YYYY-MM-DDTHH:MM:SSZ\" (got \"" + m.created_utc + "\")");
  }
  read_cols(o, {"command_line", "mode"}, m.command_line, OneOf{m.mode});
  m.only = o.choices("only", "benchmark family");
  read_cols(o, {"partial", "duration_s"}, m.partial, m.duration_s);
  m.notes = o.strings("notes");
  o.finish();
  return m;
}

CalDevice read_device(const json* j, Ctx& ctx) {
  Obj o(j, "device", ctx, field_list("calibration.device"));
  CalDevice d;
  d.name = o.str("name");
  d.pci_device_id = o.opt_str("pci_device_id");
  if (ctx.ok() && d.pci_device_id && !prefixed_hex(*d.pci_device_id, "0x", 4))
    o.fail(Errc::invalid_value, "pci_device_id",
           "must be \"0x\" and 4 hex digits, or null (got \"" + *d.pci_device_id + "\")");
  d.uuid_hash = o.str("uuid_hash");
  if (ctx.ok() && !prefixed_hex(d.uuid_hash, "sha256:", 64))
    o.fail(Errc::invalid_value, "uuid_hash",
           "must be \"sha256:\" and 64 hex digits (a hash, never the raw UUID)");
  std::string cc = o.str("compute_capability");
  if (ctx.ok()) {
    const auto parsed = cc.size() <= 5 ? parse_compute_capability(cc) : std::nullopt;
    bool good = parsed.has_value();
    if (good) {
      d.cc_major = parsed->first;
      d.cc_minor = parsed->second;
      good = d.cc_major >= 1 && d.cc_major <= 30;
    }
    if (!good)
      o.fail(Errc::invalid_value, "compute_capability",
             "must be \"major.minor\" like \"9.0\" (got \"" + cc + "\")");
  }
  read_cols(o, {"sm_count", "memory_bytes", "memory_bus_width_bits"}, d.sm_count, d.memory_bytes,
            d.memory_bus_width_bits);
  d.l2_cache_bytes = static_cast<std::uint64_t>(o.integer("l2_cache_bytes"));
  read_cols(o,
            {"sm_clock_max_mhz", "memory_clock_max_mhz", "power_limit_w", "driver_version",
             "cuda_runtime_version", "cublas_version", "host_cpu"},
            d.sm_clock_max_mhz, d.memory_clock_max_mhz, d.power_limit_w, d.driver_version,
            d.cuda_runtime_version, d.cublas_version, d.host_cpu);
  o.finish();
  return d;
}

CalClockSample read_sample(const json* j, const std::string& path, Ctx& ctx) {
  Obj o(j, path, ctx, field_list("calibration.conditions.sample"));
  CalClockSample s;
  read_cols(o, {"sm_clock_mhz", "memory_clock_mhz", "temperature_c", "power_w"}, s.sm_clock_mhz,
            s.memory_clock_mhz, s.temperature_c, s.power_w);
  o.finish();
  return s;
}

CalConditions read_conditions(const json* j, Ctx& ctx) {
  Obj o(j, "conditions", ctx, field_list("calibration.conditions"));
  CalConditions c;
  c.nvml = o.boolean("nvml");
  c.start = read_sample(o.raw("start", true), "conditions.start", ctx);
  c.end = read_sample(o.raw("end", true), "conditions.end", ctx);
  read_cols(o, {"sm_clock_min_mhz", "sm_clock_max_mhz"}, c.sm_clock_min_mhz, c.sm_clock_max_mhz);
  if (ctx.ok() && c.sm_clock_min_mhz && c.sm_clock_max_mhz && *c.sm_clock_min_mhz > *c.sm_clock_max_mhz) {
    o.fail(Errc::invalid_value, "sm_clock_min_mhz", "must be <= sm_clock_max_mhz");
  }
  read_cols(o, {"temperature_max_c", "power_max_w"}, c.temperature_max_c, c.power_max_w);
  c.throttle_reasons_seen = o.choices("throttle_reasons_seen", "throttle reason");
  auto other = o.opt_integer("other_processes");
  if (other) c.other_processes = static_cast<int>(*other);
  if (ctx.ok() && !c.nvml) {
    bool any = c.start.sm_clock_mhz || c.start.temperature_c || c.end.sm_clock_mhz || c.sm_clock_min_mhz ||
               c.temperature_max_c || !c.throttle_reasons_seen.empty();
    if (any) o.fail(Errc::invalid_value, "nvml", "is false but NVML readings are present");
  }
  o.finish();
  return c;
}

// derived.gemm_efficiency: one curve per GEMM dtype measured, each point as recomputed.
void check_curves(Obj& o, const CalDerived& want, Ctx& ctx) {
  const json* curves = o.array("gemm_efficiency");
  if (curves && ctx.ok()) {
    std::string cp = "derived.gemm_efficiency";
    if (curves->size() != want.gemm_efficiency.size()) {
      ctx.fail(Errc::invalid_value, cp,
               "must have " + std::to_string(want.gemm_efficiency.size()) +
                   " curves (one per GEMM dtype measured), got " + std::to_string(curves->size()));
    }
    for (std::size_t i = 0; i < curves->size() && ctx.ok(); ++i) {
      const GemmEfficiencyCurve& w = want.gemm_efficiency[i];
      Obj c(&(*curves)[i], idx(cp, i), ctx, field_list("calibration.derived.gemm_efficiency[]"));
      std::string dtype = c.str("dtype");
      if (ctx.ok() && dtype != w.dtype)
        c.fail(Errc::invalid_value, "dtype", "must be \"" + w.dtype + "\" (curves in dtype order)");
      double peak = c.number("peak_measured_tflops");
      if (ctx.ok() && !close(peak, w.peak_measured_tflops, 1e-6)) {
        c.fail(
            Errc::invalid_value, "peak_measured_tflops",
            "does not match the measurements: " + num(peak) + ", recomputed " + num(w.peak_measured_tflops));
      }
      const json* pts = c.array("points");
      if (pts && ctx.ok()) {
        std::string pp = at(c.path(), "points");
        if (pts->size() != w.points.size()) {
          ctx.fail(Errc::invalid_value, pp,
                   "must have " + std::to_string(w.points.size()) + " points (recomputed), got " +
                       std::to_string(pts->size()));
        }
        for (std::size_t k = 0; k < pts->size() && ctx.ok(); ++k) {
          Obj p(&(*pts)[k], idx(pp, k), ctx, field_list("calibration.derived.gemm_efficiency[].points[]"));
          double f = p.number("flops");
          double e = p.number("efficiency");
          if (ctx.ok() && !close(f, w.points[k].flops, 1e-6))
            p.fail(Errc::invalid_value, "flops",
                   "does not match the measurements (recomputed " + num(w.points[k].flops) + ")");
          if (ctx.ok() && !close(e, w.points[k].efficiency, 1e-6))
            p.fail(Errc::invalid_value, "efficiency",
                   "does not match the measurements (recomputed " + num(w.points[k].efficiency) + ")");
          p.finish();
        }
      }
      c.finish();
    }
  }
}

// Derived values as they are in the file, compared with the recomputed ones field by field.
void check_derived(const json* j, const CalDerived& want, Ctx& ctx) {
  Obj o(j, "derived", ctx, field_list("calibration.derived"));
  auto cmp_opt = [&](const std::string& key, const std::optional<double>& w) {
    std::optional<double> got = o.opt_number(key);
    if (!ctx.ok()) return;
    if (got.has_value() != w.has_value()) {
      o.fail(Errc::invalid_value, key,
             got ? "must be null: measurements have no rows for it"
                 : "must be " + num(*w) + " (computed from measurements), got null");
    } else if (got && !close(*got, *w, 1e-6)) {
      o.fail(Errc::invalid_value, key,
             "does not match the measurements: " + num(*got) + ", recomputed " + num(*w));
    }
  };
  check_curves(o, want, ctx);
  cmp_opt("memory_bandwidth_gbps", want.memory_bandwidth_gbps);
  cmp_opt("nf4_dequant_gbps", want.nf4_dequant_gbps);
  cmp_opt("adamw_fused_gbps", want.adamw_fused_gbps);
  cmp_opt("adamw_unfused_gbps", want.adamw_unfused_gbps);
  cmp_opt("elementwise_gbps", want.elementwise_gbps);
  cmp_opt("launch_overhead_us", want.launch_overhead_us);
  cmp_opt("host_op_overhead_us", want.host_op_overhead_us);
  cmp_opt("cpu_score", want.cpu_score);
  cmp_opt("grouped_over_loop_speedup", want.grouped_over_loop_speedup);
  cmp_opt("norm_gbps", want.norm_gbps);
  cmp_opt("cast_gbps", want.cast_gbps);
  cmp_opt("pointwise_gbps", want.pointwise_gbps);
  cmp_opt("cross_entropy_gbps", want.cross_entropy_gbps);
  cmp_opt("attention_fwd_tflops", want.attention_fwd_tflops);
  cmp_opt("attention_bwd_tflops", want.attention_bwd_tflops);
  cmp_opt("lora_gemm_roofline_fraction", want.lora_gemm_roofline_fraction);
  o.finish();
}

Result<Calibration> parse_impl(const nlohmann::json& doc, const std::string& source_name,
                               bool check_derived_block) {
  Ctx ctx;
  Calibration cal;
  Obj top(&doc, "", ctx, field_list("calibration"));
  cal.meta = read_meta(top.raw("meta", true), ctx);
  if (ctx.ok()) cal.device = read_device(top.raw("device", true), ctx);
  if (ctx.ok()) cal.conditions = read_conditions(top.raw("conditions", true), ctx);
  if (ctx.ok()) cal.measurements = read_measurements(top.raw("measurements", true), ctx);
  if (ctx.ok()) {
    cal.derived = derive_calibration(cal.measurements);
    if (check_derived_block) {
      check_derived(top.raw("derived", true), cal.derived, ctx);
    } else {
      top.raw("derived", false);
    }
  }
  top.finish();
  if (!ctx.ok()) {
    Error e = *ctx.err;
    if (e.field.empty()) e.field = "(top level)";
    if (!source_name.empty()) e.message += " (in " + source_name + ")";
    return e;
  }
  return cal;
}

}  // namespace
}  // namespace ftcost::cal_io

namespace ftcost {

Result<Calibration> parse_calibration(const nlohmann::json& doc, const std::string& source_name) {
  return cal_io::parse_impl(doc, source_name, true);
}

Result<Calibration> parse_calibration_rederive(const nlohmann::json& doc, const std::string& source_name) {
  return cal_io::parse_impl(doc, source_name, false);
}

Result<Calibration> parse_calibration(const std::string& json_text, const std::string& source_name) {
  auto doc = parse_json_text(json_text, source_name);
  if (!doc.ok()) return doc.error();
  return parse_calibration(doc.value(), source_name);
}

}  // namespace ftcost
