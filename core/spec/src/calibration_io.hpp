// Internal to the calibration file format (core/spec): what its readers share beyond ftcost/calibration.hpp.
//   calibration_read.cpp    the file's sections (meta, device, conditions), the derived block's check,
//   parsing calibration_rows.cpp    the measurement rows, one reader per row kind calibration_write.cpp
//   serialization (keys in the field lists' order) calibration.cpp         what is derived from the
//   measurements, and the checks against a GPU's datasheet
#pragma once

#include "ftcost/calibration.hpp"
#include "ftcost/fields.hpp"
#include "ftcost/json_util.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace ftcost::cal_io {

using ojson = nlohmann::ordered_json;

inline std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

struct Range {
  double lo;
  double hi;
  bool lo_inclusive;
};

inline std::string range_text(const Range& r) {
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

inline std::string at(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}
inline std::string idx(const std::string& path, std::size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

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
              "must be one of " + join_ids(f->values) + " (got \"" + s + "\")");
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
    return in_range(b, lo, hi, p) ? b : 0;
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
    ctx_.fail(Errc::invalid_value, at(path_, key),
              "must be one of " + join_ids(names) + " (got \"" + s + "\")");
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
        ctx_.fail(Errc::unknown_key, at(path_, it.key()),
                  "unknown key (known here: " + join_ids(known) + ")");
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
    return in_range(x, lo, hi, p) ? x : 0;
  }
  // lo <= x <= hi, else a failure that names the range.
  template <class T>
  bool in_range(T x, T lo, T hi, const std::string& p) {
    if (x >= lo && x <= hi) return true;
    ctx_.fail(Errc::out_of_range, p,
              "must be >= " + std::to_string(lo) + " and <= " + std::to_string(hi) + " (got " +
                  std::to_string(x) + ")");
    return false;
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

inline bool close(double a, double b, double rel) { return std::fabs(a - b) <= 1e-12 + rel * std::fabs(b); }

// rate = work / time; checks the row's stored time against its stored rate.
inline void check_time_vs_rate(Obj& o, const char* time_key, double time_us, double rate, double work_per_us,
                               const char* rate_key) {
  if (!o.ok() || time_us <= 0 || rate <= 0) return;
  double expect = work_per_us / rate;
  if (!close(time_us, expect, 2e-3)) {
    o.fail(Errc::invalid_value, time_key,
           std::string("inconsistent with ") + rate_key + ": " + num(time_us) + " us, expected " +
               num(expect) + " us from the row's work");
  }
}

inline int read_iterations(Obj& o) { return static_cast<int>(o.integer("iterations")); }

// Columns read in the file's order by read_cols, each by its member's type; a string column is free text
// (Obj::str) unless wrapped in OneOf (Obj::one_of: the list's allowed values), a CalStat's key is its prefix.
struct OneOf {
  std::string& value;
};
inline void read_col(Obj& o, const char* key, OneOf c) { c.value = o.one_of(key); }
inline void read_col(Obj& o, const char* key, std::string& v) { v = o.str(key); }
inline void read_col(Obj& o, const char* key, bool& v) { v = o.boolean(key); }
inline void read_col(Obj& o, const char* key, int& v) { v = static_cast<int>(o.integer(key)); }
inline void read_col(Obj& o, const char* key, std::int64_t& v) { v = o.integer(key); }
inline void read_col(Obj& o, const char* key, std::uint64_t& v) { v = o.bytes(key); }
inline void read_col(Obj& o, const char* key, double& v) { v = o.number(key); }
inline void read_col(Obj& o, const char* key, std::optional<double>& v) { v = o.opt_number(key); }
inline void read_col(Obj& o, const char* key, CalStat& v) { v = o.stat(key); }

// read_cols(o, {"op", "elements"}, OneOf{r.op}, r.elements): one key per column, read left to right.
template <class... T>
void read_cols(Obj& o, const char* const (&keys)[sizeof...(T)], T&&... cols) {
  std::size_t i = 0;
  (read_col(o, keys[i++], std::forward<T>(cols)), ...);
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

// Rows of an array that older schemas lack: absent or null is empty.
template <class F>
void for_optional_rows(Obj& parent, const std::string& key, Ctx& ctx, F&& f) {
  const json* c = parent.raw(key, false);
  if (c && !c->is_null()) for_rows(parent, key, ctx, std::forward<F>(f));
}

// The measurements section: every row kind (calibration_rows.cpp).
CalMeasurements read_measurements(const json* j, Ctx& ctx);

}  // namespace ftcost::cal_io
