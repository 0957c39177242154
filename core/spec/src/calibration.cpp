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

using ojson = nlohmann::ordered_json;

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) s += ", ";
    s += v[i];
  }
  return s;
}

struct Range {
  double lo;
  double hi;
  bool lo_inclusive;
};

std::string range_text(const Range& r) {
  std::string s = std::string("must be ") + (r.lo_inclusive ? ">= " : "> ") + num(r.lo);
  if (r.hi < 1e299) s += " and <= " + num(r.hi);
  return s;
}

// First-error-wins context: parsing goes on after an error (returning defaults) and the first one is kept.
struct Ctx {
  std::optional<Error> err;
  bool ok() const { return !err.has_value(); }
  void fail(Errc code, const std::string& path, const std::string& msg) {
    if (!err) err = make_error(code, path, msg);
  }
};

std::string at(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}
std::string idx(const std::string& path, std::size_t i) { return path + "[" + std::to_string(i) + "]"; }

// A JSON object at `path`; records the keys read so that finish() can reject unknown ones. With a field list
// (ftcost/fields.hpp: the meta, device and conditions sections), the key-only readers take kinds, ranges and
// allowed values from the list, and finish() rejects keys outside it.
class Obj {
 public:
  Obj(const json* j, std::string path, Ctx& ctx, const FieldList* list = nullptr)
      : j_(j), path_(std::move(path)), ctx_(ctx), list_(list) {
    if (!j_ || !j_->is_object()) {
      ctx_.fail(Errc::wrong_type, path_,
                std::string("must be an object, got ") + (j_ ? j_->type_name() : "nothing"));
      j_ = nullptr;
    }
  }
  const std::string& path() const { return path_; }
  const FieldList* list() const { return list_; }

  // The field `key` of this object's list; a key outside the list is a programming error.
  const Field* spec(const std::string& key) {
    const Field* f = list_ ? list_->find(key) : nullptr;
    if (!f) ctx_.fail(Errc::internal, at(path_, key), "is not in the reader's field list");
    return f;
  }
  static Range range_of(const Field& f) {
    return Range{f.has_min() ? f.min : -1e300, f.has_max() ? f.max : 1e300, !f.min_exclusive};
  }
  double number(const std::string& key) {
    const Field* f = spec(key);
    return f ? number(key, range_of(*f)) : 0;
  }
  std::optional<double> opt_number(const std::string& key) {
    const Field* f = spec(key);
    return f ? opt_number(key, range_of(*f)) : std::nullopt;
  }
  std::int64_t integer(const std::string& key) {
    const Field* f = spec(key);
    return f ? integer(key, static_cast<std::int64_t>(f->min), static_cast<std::int64_t>(f->max)) : 0;
  }
  std::optional<std::int64_t> opt_integer(const std::string& key) {
    const Field* f = spec(key);
    if (!f) return std::nullopt;
    return opt_integer(key, static_cast<std::int64_t>(f->min), static_cast<std::int64_t>(f->max));
  }
  std::string one_of(const std::string& key) {
    const Field* f = spec(key);
    std::string s = str(key);
    if (!f || !ctx_.ok() || std::find(f->values.begin(), f->values.end(), s) != f->values.end()) return s;
    ctx_.fail(Errc::invalid_value, at(path_, key),
              "must be one of " + join(f->values) + " (got \"" + s + "\")");
    return s;
  }
  // An array of the list's allowed values; `what` names one in the error ("benchmark family").
  std::vector<std::string> choices(const std::string& key, const std::string& what) {
    const Field* f = spec(key);
    std::vector<std::string> out = strings(key);
    for (std::size_t i = 0; f && i < out.size() && ctx_.ok(); ++i)
      if (std::find(f->values.begin(), f->values.end(), out[i]) == f->values.end())
        ctx_.fail(Errc::invalid_value, idx(at(path_, key), i), "unknown " + what + " \"" + out[i] + "\"");
    return out;
  }

  const json* raw(const std::string& key, bool required) {
    seen_.insert(key);
    if (!j_) return nullptr;
    auto it = j_->find(key);
    if (it == j_->end()) {
      if (required) ctx_.fail(Errc::missing_field, at(path_, key), "required field is missing");
      return nullptr;
    }
    return &*it;
  }

  double number(const std::string& key, const Range& r) {
    const json* v = raw(key, true);
    if (!v) return 0;
    return check_number(*v, at(path_, key), r).value_or(0);
  }
  std::optional<double> opt_number(const std::string& key, const Range& r) {
    const json* v = raw(key, false);
    if (!v || v->is_null()) return std::nullopt;
    return check_number(*v, at(path_, key), r);
  }
  std::int64_t integer(const std::string& key, std::int64_t lo, std::int64_t hi) {
    const json* v = raw(key, true);
    if (!v) return 0;
    return check_integer(*v, at(path_, key), lo, hi);
  }
  std::uint64_t bytes(const std::string& key) {
    const json* v = raw(key, true);
    if (!v) return 0;
    std::string p = at(path_, key);
    if (!v->is_number_unsigned() && !(v->is_number_integer() && v->get<std::int64_t>() >= 0)) {
      if (v->is_number_integer()) {
        ctx_.fail(Errc::out_of_range, p, "must be >= 1 (got " + std::to_string(v->get<std::int64_t>()) + ")");
      } else {
        ctx_.fail(Errc::wrong_type, p,
                  std::string("must be an integer number of bytes, got ") + v->type_name());
      }
      return 0;
    }
    std::uint64_t b = v->get<std::uint64_t>();
    const Field* f = list_ ? spec(key) : nullptr;
    const std::uint64_t lo = f ? static_cast<std::uint64_t>(f->min) : 1;
    const std::uint64_t hi = f ? static_cast<std::uint64_t>(f->max) : (std::uint64_t{1} << 52);
    if (b < lo || b > hi) {
      ctx_.fail(Errc::out_of_range, p,
                "must be >= " + std::to_string(lo) + " and <= " + std::to_string(hi) + " (got " +
                    std::to_string(b) + ")");
      return 0;
    }
    return b;
  }
  std::optional<std::int64_t> opt_integer(const std::string& key, std::int64_t lo, std::int64_t hi) {
    const json* v = raw(key, false);
    if (!v || v->is_null()) return std::nullopt;
    return check_integer(*v, at(path_, key), lo, hi);
  }
  bool boolean(const std::string& key) {
    const json* v = raw(key, true);
    if (!v) return false;
    if (!v->is_boolean()) {
      ctx_.fail(Errc::wrong_type, at(path_, key),
                std::string("must be true or false, got ") + v->type_name());
      return false;
    }
    return v->get<bool>();
  }
  std::string str(const std::string& key, bool allow_empty = false) {
    const json* v = raw(key, true);
    if (!v) return {};
    return check_string(*v, at(path_, key), allow_empty);
  }
  std::optional<std::string> opt_str(const std::string& key) {
    const json* v = raw(key, false);
    if (!v || v->is_null()) return std::nullopt;
    return check_string(*v, at(path_, key), false);
  }
  std::string one_of(const std::string& key, std::initializer_list<const char*> allowed) {
    std::string s = str(key);
    if (!ctx_.ok()) return s;
    std::vector<std::string> names;
    for (const char* a : allowed) {
      if (s == a) return s;
      names.emplace_back(a);
    }
    ctx_.fail(Errc::invalid_value, at(path_, key), "must be one of " + join(names) + " (got \"" + s + "\")");
    return s;
  }
  // A statistic whose range is the list's (that of prefix_median; p10 and p90 have the same).
  CalStat stat(const std::string& prefix) {
    const Field* f = spec(prefix + "_median");
    return f ? stat(prefix, range_of(*f)) : CalStat{};
  }
  // prefix_median, prefix_p10, prefix_p90 with p10 <= median <= p90.
  CalStat stat(const std::string& prefix, const Range& r) {
    CalStat s;
    s.median = number(prefix + "_median", r);
    s.p10 = number(prefix + "_p10", r);
    s.p90 = number(prefix + "_p90", r);
    if (ctx_.ok()) {
      double tol = 1e-9 * std::fabs(s.median);
      if (s.p10 > s.median + tol) {
        ctx_.fail(Errc::invalid_value, at(path_, prefix + "_p10"),
                  "must be <= " + prefix + "_median (" + num(s.p10) + " > " + num(s.median) + ")");
      } else if (s.p90 < s.median - tol) {
        ctx_.fail(Errc::invalid_value, at(path_, prefix + "_p90"),
                  "must be >= " + prefix + "_median (" + num(s.p90) + " < " + num(s.median) + ")");
      }
    }
    return s;
  }
  const json* array(const std::string& key) {
    const json* v = raw(key, true);
    if (!v) return nullptr;
    if (!v->is_array()) {
      ctx_.fail(Errc::wrong_type, at(path_, key), std::string("must be an array, got ") + v->type_name());
      return nullptr;
    }
    return v;
  }
  std::vector<std::string> strings(const std::string& key) {
    std::vector<std::string> out;
    const json* a = array(key);
    if (!a) return out;
    for (std::size_t i = 0; i < a->size(); ++i)
      out.push_back(check_string((*a)[i], idx(at(path_, key), i), false));
    return out;
  }
  void finish() {
    if (!j_ || !ctx_.ok()) return;
    for (auto it = j_->begin(); it != j_->end(); ++it) {
      if (!seen_.count(it.key())) {
        std::vector<std::string> known(seen_.begin(), seen_.end());
        ctx_.fail(Errc::unknown_key, at(path_, it.key()), "unknown key (known here: " + join(known) + ")");
        return;
      }
    }
  }
  void fail(Errc c, const std::string& key, const std::string& msg) { ctx_.fail(c, at(path_, key), msg); }
  bool ok() const { return ctx_.ok(); }

 private:
  std::optional<double> check_number(const json& v, const std::string& p, const Range& r) {
    if (!v.is_number()) {
      ctx_.fail(Errc::wrong_type, p, std::string("must be a number, got ") + v.type_name());
      return std::nullopt;
    }
    double d = v.get<double>();
    bool lo_ok = r.lo_inclusive ? d >= r.lo : d > r.lo;
    if (!std::isfinite(d) || !lo_ok || d > r.hi) {
      ctx_.fail(Errc::out_of_range, p, range_text(r) + " (got " + num(d) + ")");
      return std::nullopt;
    }
    return d;
  }
  std::int64_t check_integer(const json& v, const std::string& p, std::int64_t lo, std::int64_t hi) {
    if (!v.is_number_integer()) {
      ctx_.fail(Errc::wrong_type, p, std::string("must be an integer, got ") + v.type_name());
      return 0;
    }
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(hi)) {
      ctx_.fail(Errc::out_of_range, p, "must be <= " + std::to_string(hi));
      return 0;
    }
    std::int64_t x = v.get<std::int64_t>();
    if (x < lo || x > hi) {
      ctx_.fail(Errc::out_of_range, p,
                "must be >= " + std::to_string(lo) + " and <= " + std::to_string(hi) + " (got " +
                    std::to_string(x) + ")");
      return 0;
    }
    return x;
  }
  std::string check_string(const json& v, const std::string& p, bool allow_empty) {
    if (!v.is_string()) {
      ctx_.fail(Errc::wrong_type, p, std::string("must be a string, got ") + v.type_name());
      return {};
    }
    std::string s = v.get<std::string>();
    if (!allow_empty && s.empty()) ctx_.fail(Errc::invalid_value, p, "must not be empty");
    if (s.size() > 4096) ctx_.fail(Errc::too_large, p, "longer than 4096 characters");
    return s;
  }

  const json* j_;
  std::string path_;
  Ctx& ctx_;
  const FieldList* list_;
  std::set<std::string> seen_;
};

bool is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
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

bool close(double a, double b, double rel) { return std::fabs(a - b) <= 1e-12 + rel * std::fabs(b); }

// rate = work / time; checks the row's stored time against its stored rate.
void check_time_vs_rate(Obj& o, const char* time_key, double time_us, double rate, double work_per_us,
                        const char* rate_key) {
  if (!o.ok() || time_us <= 0 || rate <= 0) return;
  double expect = work_per_us / rate;
  if (!close(time_us, expect, 2e-3)) {
    o.fail(Errc::invalid_value, time_key,
           std::string("inconsistent with ") + rate_key + ": " + num(time_us) + " us, expected " +
               num(expect) + " us from the row's work");
  }
}

int read_iterations(Obj& o) { return static_cast<int>(o.integer("iterations")); }

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
  m.tool = o.str("tool");
  m.tool_version = o.str("tool_version");
  m.git_revision = o.str("git_revision");
  m.git_dirty = o.boolean("git_dirty");
  m.created_utc = o.str("created_utc");
  if (ctx.ok() && !utc_ok(m.created_utc)) {
    o.fail(Errc::invalid_value, "created_utc",
           "must be a UTC time \"YYYY-MM-DDTHH:MM:SSZ\" (got \"" + m.created_utc + "\")");
  }
  m.command_line = o.str("command_line");
  m.mode = o.one_of("mode");
  m.only = o.choices("only", "benchmark family");
  m.partial = o.boolean("partial");
  m.duration_s = o.number("duration_s");
  m.notes = o.strings("notes");
  o.finish();
  return m;
}

CalDevice read_device(const json* j, Ctx& ctx) {
  Obj o(j, "device", ctx, field_list("calibration.device"));
  CalDevice d;
  d.name = o.str("name");
  d.pci_device_id = o.opt_str("pci_device_id");
  if (ctx.ok() && d.pci_device_id) {
    const std::string& s = *d.pci_device_id;
    bool good = s.size() == 6 && s[0] == '0' && s[1] == 'x' && std::all_of(s.begin() + 2, s.end(), is_hex);
    if (!good)
      o.fail(Errc::invalid_value, "pci_device_id",
             "must be \"0x\" and 4 hex digits, or null (got \"" + s + "\")");
  }
  d.uuid_hash = o.str("uuid_hash");
  if (ctx.ok()) {
    const std::string& s = d.uuid_hash;
    bool good =
        s.size() == 7 + 64 && s.compare(0, 7, "sha256:") == 0 && std::all_of(s.begin() + 7, s.end(), is_hex);
    if (!good)
      o.fail(Errc::invalid_value, "uuid_hash",
             "must be \"sha256:\" and 64 hex digits (a hash, never the raw UUID)");
  }
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
  d.sm_count = static_cast<int>(o.integer("sm_count"));
  d.memory_bytes = o.bytes("memory_bytes");
  d.memory_bus_width_bits = static_cast<int>(o.integer("memory_bus_width_bits"));
  d.l2_cache_bytes = static_cast<std::uint64_t>(o.integer("l2_cache_bytes"));
  d.sm_clock_max_mhz = o.opt_number("sm_clock_max_mhz");
  d.memory_clock_max_mhz = o.opt_number("memory_clock_max_mhz");
  d.power_limit_w = o.opt_number("power_limit_w");
  d.driver_version = o.str("driver_version");
  d.cuda_runtime_version = o.str("cuda_runtime_version");
  d.cublas_version = o.str("cublas_version");
  d.host_cpu = o.str("host_cpu");
  o.finish();
  return d;
}

CalClockSample read_sample(const json* j, const std::string& path, Ctx& ctx) {
  Obj o(j, path, ctx, field_list("calibration.conditions.sample"));
  CalClockSample s;
  s.sm_clock_mhz = o.opt_number("sm_clock_mhz");
  s.memory_clock_mhz = o.opt_number("memory_clock_mhz");
  s.temperature_c = o.opt_number("temperature_c");
  s.power_w = o.opt_number("power_w");
  o.finish();
  return s;
}

CalConditions read_conditions(const json* j, Ctx& ctx) {
  Obj o(j, "conditions", ctx, field_list("calibration.conditions"));
  CalConditions c;
  c.nvml = o.boolean("nvml");
  c.start = read_sample(o.raw("start", true), "conditions.start", ctx);
  c.end = read_sample(o.raw("end", true), "conditions.end", ctx);
  c.sm_clock_min_mhz = o.opt_number("sm_clock_min_mhz");
  c.sm_clock_max_mhz = o.opt_number("sm_clock_max_mhz");
  if (ctx.ok() && c.sm_clock_min_mhz && c.sm_clock_max_mhz && *c.sm_clock_min_mhz > *c.sm_clock_max_mhz) {
    o.fail(Errc::invalid_value, "sm_clock_min_mhz", "must be <= sm_clock_max_mhz");
  }
  c.temperature_max_c = o.opt_number("temperature_max_c");
  c.power_max_w = o.opt_number("power_max_w");
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

double expert_flops(const ExpertGemmRow& r) {
  double rows = 0;
  for (auto t : r.tokens_per_expert) rows += static_cast<double>(t);
  double gemms = r.proj == "w1_w3" ? 2.0 : 1.0;
  return 2.0 * gemms * rows * static_cast<double>(r.n) * static_cast<double>(r.k);
}

template <class F>
void for_rows(Obj& parent, const std::string& key, Ctx& ctx, F&& f) {
  const Field* spec = parent.spec(key);
  const FieldList* rows = spec && !spec->members.empty() ? field_list(spec->members) : nullptr;
  const json* a = parent.array(key);
  if (!a) return;
  for (std::size_t i = 0; i < a->size() && ctx.ok(); ++i) {
    Obj o(&(*a)[i], idx(at(parent.path(), key), i), ctx, rows);
    f(o);
    o.finish();
  }
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

// Rows of an array that older schemas lack: absent or null is empty.
template <class F>
void for_optional_rows(Obj& parent, const std::string& key, Ctx& ctx, F&& f) {
  const json* c = parent.raw(key, false);
  if (c && !c->is_null()) for_rows(parent, key, ctx, std::forward<F>(f));
}

NormRow read_norm(Obj& o, Ctx& ctx) {
  NormRow r;
  r.op = o.one_of("op");
  r.direction = o.one_of("direction");
  r.dtype = o.one_of("dtype");
  r.rows = o.integer("rows");
  r.cols = o.integer("cols");
  const std::uint64_t n = u64(r.rows) * u64(r.cols);
  const std::uint64_t c = u64(r.cols);
  const bool fwd = r.direction == "fwd";
  set_tail(r, read_gbps_tail(o, ctx, fwd ? 2 * (2 * n + c) : 2 * (3 * n + 2 * c),
                             fwd ? "2 (2 rows cols + cols)" : "2 (3 rows cols + 2 cols)"));
  return r;
}

CastRow read_cast(Obj& o, Ctx& ctx) {
  CastRow r;
  r.src_dtype = o.one_of("src_dtype");
  r.dst_dtype = o.one_of("dst_dtype");
  if (ctx.ok() && r.src_dtype == r.dst_dtype)
    o.fail(Errc::invalid_value, "dst_dtype", "must differ from src_dtype (got " + r.dst_dtype + " twice)");
  r.elements = o.integer("elements");
  set_tail(r, read_gbps_tail(o, ctx, 6 * u64(r.elements), "6 x elements"));
  return r;
}

PointwiseRow read_pointwise(Obj& o, Ctx& ctx) {
  PointwiseRow r;
  r.op = o.one_of("op");
  r.dtype = o.one_of("dtype");
  r.elements = o.integer("elements");
  set_tail(r, read_gbps_tail(o, ctx, 6 * u64(r.elements), "6 x elements"));
  return r;
}

CrossEntropyRow read_cross_entropy(Obj& o, Ctx& ctx) {
  CrossEntropyRow r;
  r.direction = o.one_of("direction");
  r.logits_dtype = o.one_of("logits_dtype");
  r.rows = o.integer("rows");
  r.vocab = o.integer("vocab");
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
  r.shape = o.str("shape");
  r.side = o.one_of("side");
  r.rank = static_cast<int>(o.integer("rank"));
  r.dtype = o.one_of("dtype");
  r.pass = o.one_of("pass");
  r.transa = o.one_of("transa");
  r.transb = o.one_of("transb");
  r.tokens = o.integer("tokens");
  r.in = o.integer("in");
  r.out = o.integer("out");
  r.m = o.integer("m");
  r.n = o.integer("n");
  r.k = o.integer("k");
  r.bytes_moved = o.bytes("bytes_moved");
  check_lora_shape(o, ctx, r);
  r.tflops = o.stat("tflops");
  r.time_us_median = o.number("time_us_median");
  r.iterations = read_iterations(o);
  r.algos_tried = static_cast<int>(o.integer("algos_tried"));
  const double flops = 2.0 * static_cast<double>(r.m) * static_cast<double>(r.n) * static_cast<double>(r.k);
  check_time_vs_rate(o, "time_us_median", r.time_us_median, r.tflops.median, flops / 1e6, "tflops_median");
  return r;
}

AttentionRow read_attention(Obj& o, Ctx& ctx) {
  AttentionRow r;
  r.direction = o.one_of("direction");
  r.impl = o.str("impl");
  r.dtype = o.one_of("dtype");
  r.causal = o.boolean("causal");
  if (ctx.ok() && !r.causal)
    o.fail(Errc::invalid_value, "causal", "must be true (causal attention is measured)");
  r.model = o.str("model");
  r.batch = static_cast<int>(o.integer("batch"));
  r.heads = static_cast<int>(o.integer("heads"));
  r.kv_heads = static_cast<int>(o.integer("kv_heads"));
  if (ctx.ok() && r.heads % r.kv_heads != 0) o.fail(Errc::invalid_value, "kv_heads", "must divide heads");
  r.head_dim = static_cast<int>(o.integer("head_dim"));
  r.seq_len = o.integer("seq_len");
  r.flops = o.number("flops");
  const double want = attention_causal_flops(r.direction, r.batch, r.heads, r.seq_len, r.head_dim);
  if (ctx.ok() && !close(r.flops, want, 1e-9))
    o.fail(Errc::invalid_value, "flops",
           "must be the causal count " + num(want) + " (fwd 2 batch heads seq_len^2 head_dim, bwd 2.5x)");
  r.tflops = o.stat("tflops");
  r.time_us_median = o.number("time_us_median");
  r.iterations = read_iterations(o);
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

CalMeasurements read_measurements(const json* j, Ctx& ctx) {
  Obj ms(j, "measurements", ctx, field_list("calibration.measurements"));
  CalMeasurements m;

  for_rows(ms, "bandwidth", ctx, [&](Obj& o) {
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
    r.gbps = o.stat("gbps");
    r.time_us_median = o.number("time_us_median");
    r.iterations = read_iterations(o);
    check_time_vs_rate(o, "time_us_median", r.time_us_median, r.gbps.median,
                       static_cast<double>(r.bytes_moved) / 1e3, "gbps_median");
    m.bandwidth.push_back(r);
  });

  for_rows(ms, "gemm", ctx, [&](Obj& o) {
    GemmRow r;
    r.shape = o.str("shape");
    r.dtype = o.one_of("dtype");
    r.pass = o.one_of("pass");
    r.transa = o.one_of("transa");
    r.transb = o.one_of("transb");
    if (ctx.ok()) {
      std::string want = r.pass == "fwd" ? "TN" : r.pass == "dgrad" ? "NN" : "NT";
      if (r.transa + r.transb != want) {
        o.fail(Errc::invalid_value, "transa",
               "pass " + r.pass + " is transa/transb " + want + " (got " + r.transa + r.transb + ")");
      }
    }
    r.m = o.integer("m");
    r.n = o.integer("n");
    r.k = o.integer("k");
    r.tflops = o.stat("tflops");
    r.time_us_median = o.number("time_us_median");
    r.iterations = read_iterations(o);
    r.algos_tried = static_cast<int>(o.integer("algos_tried"));
    r.tflops_heuristic = o.opt_number("tflops_heuristic");
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
    m.gemm.push_back(r);
  });

  for_rows(ms, "expert_gemm", ctx, [&](Obj& o) {
    ExpertGemmRow r;
    r.model = o.str("model");
    r.dtype = o.one_of("dtype");
    r.proj = o.one_of("proj");
    r.pass = o.one_of("pass");
    r.impl = o.one_of("impl");
    r.routing = o.one_of("routing");
    r.distribution = o.one_of("distribution");
    r.experts = static_cast<int>(o.integer("experts"));
    r.top_k = static_cast<int>(o.integer("top_k"));
    r.tokens = o.integer("tokens");
    r.n = o.integer("n");
    r.k = o.integer("k");
    const json* tpe = o.array("tokens_per_expert");
    if (tpe && ctx.ok()) {
      std::string p = at(o.path(), "tokens_per_expert");
      if (static_cast<int>(tpe->size()) != r.experts) {
        ctx.fail(Errc::invalid_value, p,
                 "must have one entry per expert (" + std::to_string(r.experts) + ")");
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
        if (r.top_k > r.experts) o.fail(Errc::invalid_value, "top_k", "must be <= experts");
        if (r.routing == "dense" && r.top_k != r.experts)
          o.fail(Errc::invalid_value, "top_k", "must equal experts for dense routing");
        if (ctx.ok() && sum != r.tokens * r.top_k) {
          ctx.fail(Errc::invalid_value, p,
                   "must sum to tokens x top_k = " + std::to_string(r.tokens * r.top_k) + " (got " +
                       std::to_string(sum) + ")");
        }
      }
    }
    r.time_us = o.stat("time_us");
    r.tflops_median = o.number("tflops_median");
    r.iterations = read_iterations(o);
    check_time_vs_rate(o, "time_us_median", r.time_us.median, r.tflops_median, expert_flops(r) / 1e6,
                       "tflops_median");
    m.expert_gemm.push_back(r);
  });

  for_rows(ms, "moe_layer", ctx, [&](Obj& o) {
    MoeLayerRow r;
    r.model = o.str("model");
    r.direction = o.one_of("direction");
    r.impl = o.one_of("impl");
    r.routing = o.one_of("routing");
    r.distribution = o.one_of("distribution");
    r.experts = static_cast<int>(o.integer("experts"));
    r.top_k = static_cast<int>(o.integer("top_k"));
    if (ctx.ok() && r.top_k > r.experts) o.fail(Errc::invalid_value, "top_k", "must be <= experts");
    if (ctx.ok() && r.routing == "dense" && r.top_k != r.experts)
      o.fail(Errc::invalid_value, "top_k", "must equal experts for dense routing");
    r.tokens = o.integer("tokens");
    r.hidden = o.integer("hidden");
    r.ffn = o.integer("ffn");
    r.time_us = o.stat("time_us");
    r.iterations = read_iterations(o);
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
    m.moe_layer.push_back(r);
  });

  for_rows(ms, "nf4_dequant", ctx, [&](Obj& o) {
    Nf4Row r;
    r.variant = o.one_of("variant");
    r.elements = o.integer("elements");
    if (ctx.ok() && r.elements % 64 != 0)
      o.fail(Errc::invalid_value, "elements", "must be a multiple of the 64-value block");
    r.out_dtype = o.one_of("out_dtype");
    r.double_quant = o.boolean("double_quant");
    r.bytes_moved = o.bytes("bytes_moved");
    r.bytes_per_param = o.number("bytes_per_param");
    if (ctx.ok() && !close(r.bytes_per_param,
                           static_cast<double>(r.bytes_moved) / static_cast<double>(r.elements), 1e-6)) {
      o.fail(Errc::invalid_value, "bytes_per_param", "must equal bytes_moved / elements");
    }
    r.gbps = o.stat("gbps");
    r.time_us_median = o.number("time_us_median");
    r.iterations = read_iterations(o);
    check_time_vs_rate(o, "time_us_median", r.time_us_median, r.gbps.median,
                       static_cast<double>(r.bytes_moved) / 1e3, "gbps_median");
    m.nf4_dequant.push_back(r);
  });

  for_rows(ms, "adamw", ctx, [&](Obj& o) {
    AdamwRow r;
    r.impl = o.one_of("impl");
    r.params = o.integer("params");
    r.bytes_moved = o.bytes("bytes_moved");
    r.bytes_per_param = o.number("bytes_per_param");
    if (ctx.ok() &&
        !close(r.bytes_per_param, static_cast<double>(r.bytes_moved) / static_cast<double>(r.params), 1e-6)) {
      o.fail(Errc::invalid_value, "bytes_per_param", "must equal bytes_moved / params");
    }
    r.gbps = o.stat("gbps");
    r.time_us_median = o.number("time_us_median");
    r.iterations = read_iterations(o);
    check_time_vs_rate(o, "time_us_median", r.time_us_median, r.gbps.median,
                       static_cast<double>(r.bytes_moved) / 1e3, "gbps_median");
    m.adamw.push_back(r);
  });

  for_rows(ms, "elementwise", ctx, [&](Obj& o) {
    ElementwiseRow r;
    r.op = o.one_of("op");
    r.dtype = o.one_of("dtype");
    r.elements = o.integer("elements");
    r.bytes_moved = o.bytes("bytes_moved");
    r.gbps = o.stat("gbps");
    r.time_us_median = o.number("time_us_median");
    r.iterations = read_iterations(o);
    check_time_vs_rate(o, "time_us_median", r.time_us_median, r.gbps.median,
                       static_cast<double>(r.bytes_moved) / 1e3, "gbps_median");
    m.elementwise.push_back(r);
  });

  for_rows(ms, "launch", ctx, [&](Obj& o) {
    LaunchRow r;
    r.kind = o.one_of("kind");
    r.us = o.stat("us");
    r.iterations = read_iterations(o);
    m.launch.push_back(r);
  });

  for_rows(ms, "host", ctx, [&](Obj& o) {
    HostRow r;
    r.kind = o.one_of("kind");
    r.ops_per_sample = static_cast<int>(o.integer("ops_per_sample"));
    r.sync_every = static_cast<int>(o.integer("sync_every"));
    r.us = o.stat("us");
    r.iterations = read_iterations(o);
    m.host.push_back(r);
  });

  for_rows(ms, "cpu", ctx, [&](Obj& o) {
    CpuRow r;
    r.kind = o.one_of("kind");
    r.score = o.stat("score");
    r.iterations = read_iterations(o);
    m.cpu.push_back(r);
  });

  // schema 2: optional (absent in version 1 files and in runs without --collectives)
  if (const json* c = ms.raw("collectives", false); c && !c->is_null()) {
    for_rows(ms, "collectives", ctx, [&](Obj& o) {
      CollectiveRow r;
      r.op = o.one_of("op");
      r.ranks = static_cast<int>(o.integer("ranks"));
      r.bytes = o.bytes("bytes");
      r.time_us = o.number("time_us");
      r.algbw_gbps = o.number("algbw_gbps");
      r.busbw_gbps = o.number("busbw_gbps");
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
      m.collectives.push_back(r);
    });
  }
  if (const json* c = ms.raw("p2p", false); c && !c->is_null()) {
    for_rows(ms, "p2p", ctx, [&](Obj& o) {
      P2pRow r;
      r.src = static_cast<int>(o.integer("src"));
      r.dst = static_cast<int>(o.integer("dst"));
      if (ctx.ok() && r.src == r.dst) o.fail(Errc::invalid_value, "dst", "must differ from src");
      r.peer_access = o.boolean("peer_access");
      r.bytes = o.bytes("bytes");
      r.time_us = o.number("time_us");
      r.gbps = o.number("gbps");
      check_time_vs_rate(o, "time_us", r.time_us, r.gbps, static_cast<double>(r.bytes) / 1e3, "gbps");
      m.p2p.push_back(r);
    });
  }
  read_op_classes(ms, ctx, m);

  ms.finish();
  return m;
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

// ---- serialization ----

void put_stat(ojson& o, const std::string& prefix, const CalStat& s) {
  o[prefix + "_median"] = s.median;
  o[prefix + "_p10"] = s.p10;
  o[prefix + "_p90"] = s.p90;
}

ojson opt(const std::optional<double>& v) { return v ? ojson(*v) : ojson(nullptr); }

// An object with its keys in its field list's order (fields.cpp). A key outside the list is kept, after the
// listed ones, so that the loader refuses it (the write/read round trip in tests/calibrate); a required key
// left out is refused the same way.
ojson in_list_order(const char* list, const ojson& values) {
  ojson out = ojson::object();
  const FieldList* l = field_list(list);
  if (l)
    for (const auto& f : l->fields)
      if (values.contains(f.key)) out[f.key] = values.at(f.key);
  for (const auto& [k, v] : values.items())
    if (!out.contains(k)) out[k] = v;
  return out;
}

// The rate columns of a schema-3 bandwidth-type row, after its own keys.
template <class Row>
ojson with_gbps(ojson o, const Row& r) {
  o["bytes_moved"] = r.bytes_moved;
  put_stat(o, "gbps", r.gbps);
  o["time_us_median"] = r.time_us_median;
  o["iterations"] = r.iterations;
  return o;
}

template <class Row, class F>
ojson rows_json(const std::vector<Row>& rows, const char* list, F&& to_obj) {
  ojson a = ojson::array();
  for (const auto& r : rows) a.push_back(in_list_order(list, to_obj(r)));
  return a;
}

void put_op_classes(ojson& meas, const CalMeasurements& ms) {
  meas["norm"] = rows_json(ms.norm, "calibration.measurements.norm[]", [](const NormRow& r) {
    return with_gbps(
        {{"op", r.op}, {"direction", r.direction}, {"dtype", r.dtype}, {"rows", r.rows}, {"cols", r.cols}},
        r);
  });
  meas["cast"] = rows_json(ms.cast, "calibration.measurements.cast[]", [](const CastRow& r) {
    return with_gbps({{"src_dtype", r.src_dtype}, {"dst_dtype", r.dst_dtype}, {"elements", r.elements}}, r);
  });
  meas["pointwise"] =
      rows_json(ms.pointwise, "calibration.measurements.pointwise[]", [](const PointwiseRow& r) {
        return with_gbps({{"op", r.op}, {"dtype", r.dtype}, {"elements", r.elements}}, r);
      });
  meas["cross_entropy"] =
      rows_json(ms.cross_entropy, "calibration.measurements.cross_entropy[]", [](const CrossEntropyRow& r) {
        return with_gbps({{"direction", r.direction},
                          {"logits_dtype", r.logits_dtype},
                          {"rows", r.rows},
                          {"vocab", r.vocab}},
                         r);
      });
  meas["lora_gemm"] =
      rows_json(ms.lora_gemm, "calibration.measurements.lora_gemm[]", [](const LoraGemmRow& r) {
        ojson o = {{"shape", r.shape},   {"side", r.side},
                   {"rank", r.rank},     {"dtype", r.dtype},
                   {"pass", r.pass},     {"transa", r.transa},
                   {"transb", r.transb}, {"tokens", r.tokens},
                   {"in", r.in},         {"out", r.out},
                   {"m", r.m},           {"n", r.n},
                   {"k", r.k},           {"bytes_moved", r.bytes_moved}};
        put_stat(o, "tflops", r.tflops);
        o["time_us_median"] = r.time_us_median;
        o["iterations"] = r.iterations;
        o["algos_tried"] = r.algos_tried;
        return o;
      });
  meas["attention"] =
      rows_json(ms.attention, "calibration.measurements.attention[]", [](const AttentionRow& r) {
        ojson o = {{"direction", r.direction}, {"impl", r.impl},         {"dtype", r.dtype},
                   {"causal", r.causal},       {"model", r.model},       {"batch", r.batch},
                   {"heads", r.heads},         {"kv_heads", r.kv_heads}, {"head_dim", r.head_dim},
                   {"seq_len", r.seq_len},     {"flops", r.flops}};
        put_stat(o, "tflops", r.tflops);
        o["time_us_median"] = r.time_us_median;
        o["iterations"] = r.iterations;
        return o;
      });
}

ojson build_json(const Calibration& c) {
  ojson j;
  const CalMeta& m = c.meta;
  j["meta"] = in_list_order("calibration.meta", {{"schema", m.schema},
                                                 {"tool", m.tool},
                                                 {"tool_version", m.tool_version},
                                                 {"git_revision", m.git_revision},
                                                 {"git_dirty", m.git_dirty},
                                                 {"created_utc", m.created_utc},
                                                 {"command_line", m.command_line},
                                                 {"mode", m.mode},
                                                 {"only", m.only},
                                                 {"partial", m.partial},
                                                 {"duration_s", m.duration_s},
                                                 {"notes", m.notes}});
  const CalDevice& d = c.device;
  j["device"] =
      in_list_order("calibration.device",
                    {{"name", d.name},
                     {"pci_device_id", d.pci_device_id ? ojson(*d.pci_device_id) : ojson(nullptr)},
                     {"uuid_hash", d.uuid_hash},
                     {"compute_capability", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor)},
                     {"sm_count", d.sm_count},
                     {"memory_bytes", d.memory_bytes},
                     {"memory_bus_width_bits", d.memory_bus_width_bits},
                     {"l2_cache_bytes", d.l2_cache_bytes},
                     {"sm_clock_max_mhz", opt(d.sm_clock_max_mhz)},
                     {"memory_clock_max_mhz", opt(d.memory_clock_max_mhz)},
                     {"power_limit_w", opt(d.power_limit_w)},
                     {"driver_version", d.driver_version},
                     {"cuda_runtime_version", d.cuda_runtime_version},
                     {"cublas_version", d.cublas_version},
                     {"host_cpu", d.host_cpu}});
  auto sample = [](const CalClockSample& s) {
    return in_list_order("calibration.conditions.sample", {{"sm_clock_mhz", opt(s.sm_clock_mhz)},
                                                           {"memory_clock_mhz", opt(s.memory_clock_mhz)},
                                                           {"temperature_c", opt(s.temperature_c)},
                                                           {"power_w", opt(s.power_w)}});
  };
  const CalConditions& k = c.conditions;
  j["conditions"] =
      in_list_order("calibration.conditions",
                    {{"nvml", k.nvml},
                     {"start", sample(k.start)},
                     {"end", sample(k.end)},
                     {"sm_clock_min_mhz", opt(k.sm_clock_min_mhz)},
                     {"sm_clock_max_mhz", opt(k.sm_clock_max_mhz)},
                     {"temperature_max_c", opt(k.temperature_max_c)},
                     {"power_max_w", opt(k.power_max_w)},
                     {"throttle_reasons_seen", k.throttle_reasons_seen},
                     {"other_processes", k.other_processes ? ojson(*k.other_processes) : ojson(nullptr)}});

  const CalMeasurements& ms = c.measurements;
  ojson meas = ojson::object();
  meas["bandwidth"] = ojson::array();
  for (const auto& r : ms.bandwidth) {
    ojson o = {{"kernel", r.kernel}, {"array_bytes", r.array_bytes}, {"bytes_moved", r.bytes_moved}};
    put_stat(o, "gbps", r.gbps);
    o["time_us_median"] = r.time_us_median;
    o["iterations"] = r.iterations;
    meas["bandwidth"].push_back(in_list_order("calibration.measurements.bandwidth[]", o));
  }
  meas["gemm"] = ojson::array();
  for (const auto& r : ms.gemm) {
    ojson o = {{"shape", r.shape},   {"dtype", r.dtype}, {"pass", r.pass}, {"transa", r.transa},
               {"transb", r.transb}, {"m", r.m},         {"n", r.n},       {"k", r.k}};
    put_stat(o, "tflops", r.tflops);
    o["time_us_median"] = r.time_us_median;
    o["iterations"] = r.iterations;
    o["algos_tried"] = r.algos_tried;
    o["tflops_heuristic"] = opt(r.tflops_heuristic);
    o["fast_accum"] = r.fast_accum;
    meas["gemm"].push_back(in_list_order("calibration.measurements.gemm[]", o));
  }
  meas["expert_gemm"] = ojson::array();
  for (const auto& r : ms.expert_gemm) {
    ojson o = {{"model", r.model},
               {"dtype", r.dtype},
               {"proj", r.proj},
               {"pass", r.pass},
               {"impl", r.impl},
               {"routing", r.routing},
               {"distribution", r.distribution},
               {"experts", r.experts},
               {"top_k", r.top_k},
               {"tokens", r.tokens},
               {"n", r.n},
               {"k", r.k},
               {"tokens_per_expert", r.tokens_per_expert}};
    put_stat(o, "time_us", r.time_us);
    o["tflops_median"] = r.tflops_median;
    o["iterations"] = r.iterations;
    meas["expert_gemm"].push_back(in_list_order("calibration.measurements.expert_gemm[]", o));
  }
  meas["moe_layer"] = ojson::array();
  for (const auto& r : ms.moe_layer) {
    ojson o = {{"model", r.model},
               {"direction", r.direction},
               {"impl", r.impl},
               {"routing", r.routing},
               {"distribution", r.distribution},
               {"experts", r.experts},
               {"top_k", r.top_k},
               {"tokens", r.tokens},
               {"hidden", r.hidden},
               {"ffn", r.ffn}};
    put_stat(o, "time_us", r.time_us);
    o["iterations"] = r.iterations;
    ojson st = ojson::object();
    for (const auto& kv : r.stages_us) st[kv.first] = kv.second;
    o["stages_us"] = st;
    meas["moe_layer"].push_back(in_list_order("calibration.measurements.moe_layer[]", o));
  }
  meas["nf4_dequant"] = ojson::array();
  for (const auto& r : ms.nf4_dequant) {
    ojson o = {{"variant", r.variant},         {"elements", r.elements},
               {"out_dtype", r.out_dtype},     {"double_quant", r.double_quant},
               {"bytes_moved", r.bytes_moved}, {"bytes_per_param", r.bytes_per_param}};
    put_stat(o, "gbps", r.gbps);
    o["time_us_median"] = r.time_us_median;
    o["iterations"] = r.iterations;
    meas["nf4_dequant"].push_back(in_list_order("calibration.measurements.nf4_dequant[]", o));
  }
  meas["adamw"] = ojson::array();
  for (const auto& r : ms.adamw) {
    ojson o = {{"impl", r.impl},
               {"params", r.params},
               {"bytes_moved", r.bytes_moved},
               {"bytes_per_param", r.bytes_per_param}};
    put_stat(o, "gbps", r.gbps);
    o["time_us_median"] = r.time_us_median;
    o["iterations"] = r.iterations;
    meas["adamw"].push_back(in_list_order("calibration.measurements.adamw[]", o));
  }
  meas["elementwise"] = ojson::array();
  for (const auto& r : ms.elementwise) {
    ojson o = {{"op", r.op}, {"dtype", r.dtype}, {"elements", r.elements}, {"bytes_moved", r.bytes_moved}};
    put_stat(o, "gbps", r.gbps);
    o["time_us_median"] = r.time_us_median;
    o["iterations"] = r.iterations;
    meas["elementwise"].push_back(in_list_order("calibration.measurements.elementwise[]", o));
  }
  meas["launch"] = ojson::array();
  for (const auto& r : ms.launch) {
    ojson o = {{"kind", r.kind}};
    put_stat(o, "us", r.us);
    o["iterations"] = r.iterations;
    meas["launch"].push_back(in_list_order("calibration.measurements.launch[]", o));
  }
  meas["host"] = ojson::array();
  for (const auto& r : ms.host) {
    ojson o = {{"kind", r.kind}, {"ops_per_sample", r.ops_per_sample}, {"sync_every", r.sync_every}};
    put_stat(o, "us", r.us);
    o["iterations"] = r.iterations;
    meas["host"].push_back(in_list_order("calibration.measurements.host[]", o));
  }
  meas["cpu"] = ojson::array();
  for (const auto& r : ms.cpu) {
    ojson o = {{"kind", r.kind}};
    put_stat(o, "score", r.score);
    o["iterations"] = r.iterations;
    meas["cpu"].push_back(in_list_order("calibration.measurements.cpu[]", o));
  }
  meas["collectives"] = ojson::array();
  for (const auto& r : ms.collectives) {
    meas["collectives"].push_back(
        in_list_order("calibration.measurements.collectives[]", {{"op", r.op},
                                                                 {"ranks", r.ranks},
                                                                 {"bytes", r.bytes},
                                                                 {"time_us", r.time_us},
                                                                 {"algbw_gbps", r.algbw_gbps},
                                                                 {"busbw_gbps", r.busbw_gbps}}));
  }
  meas["p2p"] = ojson::array();
  for (const auto& r : ms.p2p) {
    meas["p2p"].push_back(in_list_order("calibration.measurements.p2p[]", {{"src", r.src},
                                                                           {"dst", r.dst},
                                                                           {"peer_access", r.peer_access},
                                                                           {"bytes", r.bytes},
                                                                           {"time_us", r.time_us},
                                                                           {"gbps", r.gbps}}));
  }
  put_op_classes(meas, ms);
  j["measurements"] = in_list_order("calibration.measurements", meas);

  const CalDerived& dv = c.derived;
  ojson curves = ojson::array();
  for (const auto& cv : dv.gemm_efficiency) {
    ojson pts = ojson::array();
    for (const auto& p : cv.points)
      pts.push_back(in_list_order("calibration.derived.gemm_efficiency[].points[]",
                                  {{"flops", p.flops}, {"efficiency", p.efficiency}}));
    curves.push_back(in_list_order(
        "calibration.derived.gemm_efficiency[]",
        {{"dtype", cv.dtype}, {"peak_measured_tflops", cv.peak_measured_tflops}, {"points", pts}}));
  }
  j["derived"] = in_list_order("calibration.derived",
                               {{"gemm_efficiency", curves},
                                {"memory_bandwidth_gbps", opt(dv.memory_bandwidth_gbps)},
                                {"nf4_dequant_gbps", opt(dv.nf4_dequant_gbps)},
                                {"adamw_fused_gbps", opt(dv.adamw_fused_gbps)},
                                {"adamw_unfused_gbps", opt(dv.adamw_unfused_gbps)},
                                {"elementwise_gbps", opt(dv.elementwise_gbps)},
                                {"launch_overhead_us", opt(dv.launch_overhead_us)},
                                {"host_op_overhead_us", opt(dv.host_op_overhead_us)},
                                {"cpu_score", opt(dv.cpu_score)},
                                {"grouped_over_loop_speedup", opt(dv.grouped_over_loop_speedup)},
                                {"norm_gbps", opt(dv.norm_gbps)},
                                {"cast_gbps", opt(dv.cast_gbps)},
                                {"pointwise_gbps", opt(dv.pointwise_gbps)},
                                {"cross_entropy_gbps", opt(dv.cross_entropy_gbps)},
                                {"attention_fwd_tflops", opt(dv.attention_fwd_tflops)},
                                {"attention_bwd_tflops", opt(dv.attention_bwd_tflops)},
                                {"lora_gemm_roofline_fraction", opt(dv.lora_gemm_roofline_fraction)}});
  return in_list_order("calibration", j);
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

}  // namespace

// ---- public ----

namespace {
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

Result<Calibration> parse_calibration(const nlohmann::json& doc, const std::string& source_name) {
  return parse_impl(doc, source_name, true);
}

Result<Calibration> parse_calibration_rederive(const nlohmann::json& doc, const std::string& source_name) {
  return parse_impl(doc, source_name, false);
}

Result<Calibration> parse_calibration(const std::string& json_text, const std::string& source_name) {
  auto doc = parse_json_text(json_text, source_name);
  if (!doc.ok()) return doc.error();
  return parse_calibration(doc.value(), source_name);
}

nlohmann::json to_json(const Calibration& cal) { return nlohmann::json::parse(build_json(cal).dump()); }

std::string to_json_text(const Calibration& cal) { return build_json(cal).dump(2) + "\n"; }

CalDerived derive_calibration(const CalMeasurements& m) {
  CalDerived d;
  // GEMM efficiency curves: one per dtype; points are octave bins of FLOPs with the median efficiency
  // of the bin's rows, made non-decreasing by pool-adjacent-violators (weighted by row count).
  std::map<int, std::vector<const GemmRow*>> by_dtype;
  for (const auto& r : m.gemm) by_dtype[dtype_order(r.dtype)].push_back(&r);
  for (const auto& kv : by_dtype) {
    GemmEfficiencyCurve c;
    c.dtype = kv.second.front()->dtype;
    for (const GemmRow* r : kv.second)
      c.peak_measured_tflops = std::max(c.peak_measured_tflops, r->tflops.median);
    std::map<long, std::vector<std::pair<double, double>>> bins;  // floor(log2 flops) -> (log2 flops, eff)
    for (const GemmRow* r : kv.second) {
      double flops = 2.0 * static_cast<double>(r->m) * static_cast<double>(r->n) * static_cast<double>(r->k);
      double lf = std::log2(flops);
      bins[static_cast<long>(std::floor(lf))].emplace_back(lf, r->tflops.median / c.peak_measured_tflops);
    }
    struct Block {
      double eff;
      double weight;
      std::size_t first, last;
    };
    std::vector<double> xs;
    std::vector<double> ys;
    std::vector<double> ws;
    for (const auto& b : bins) {
      double sum_lf = 0;
      std::vector<double> effs;
      for (const auto& p : b.second) {
        sum_lf += p.first;
        effs.push_back(p.second);
      }
      xs.push_back(std::exp2(sum_lf / static_cast<double>(b.second.size())));
      ys.push_back(median_of(effs));
      ws.push_back(static_cast<double>(b.second.size()));
    }
    std::vector<Block> blocks;
    for (std::size_t i = 0; i < ys.size(); ++i) {
      blocks.push_back({ys[i], ws[i], i, i});
      while (blocks.size() > 1 && blocks[blocks.size() - 2].eff > blocks.back().eff) {
        Block b = blocks.back();
        blocks.pop_back();
        Block& a = blocks.back();
        a.eff = (a.eff * a.weight + b.eff * b.weight) / (a.weight + b.weight);
        a.weight += b.weight;
        a.last = b.last;
      }
    }
    for (const Block& b : blocks) {
      for (std::size_t i = b.first; i <= b.last; ++i) c.points.push_back({xs[i], std::min(1.0, b.eff)});
    }
    d.gemm_efficiency.push_back(c);
  }

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

std::optional<double> gemm_efficiency(const CalDerived& d, const std::string& dtype, double flops) {
  for (const auto& c : d.gemm_efficiency) {
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

std::optional<double> gemm_tflops(const CalDerived& d, const std::string& dtype, double flops) {
  auto e = gemm_efficiency(d, dtype, flops);
  if (!e) return std::nullopt;
  for (const auto& c : d.gemm_efficiency) {
    if (c.dtype == dtype) return *e * c.peak_measured_tflops;
  }
  return std::nullopt;
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
