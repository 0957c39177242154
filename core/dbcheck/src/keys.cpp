// gpu-db checker, keys/types/units: each object against its format's field list (ftcost/fields.hpp: required
// keys, types, ranges and allowed values, no unknown keys; a key with another unit, e.g.
// memory_bandwidth_tbps, is reported as a wrong unit), typed field access, ids and sources.
#include "checks.hpp"
#include "ftcost/fields.hpp"

#include <algorithm>
#include <map>
#include <utility>

namespace ftcost::dbcheck {

namespace {

// ------------------------------------------------------------------------- keys, types, units

// The key lists come from the core's field lists (ftcost/fields.hpp): the same description the loaders read
// through and the JSON Schemas are tested against.
const std::vector<Field>& specs_for(const std::string& kind) {
  static const std::vector<Field> none;
  const FieldList* l = field_list(kind);
  return l ? l->fields : none;
}

using Specs = std::vector<Field>;

}  // namespace

bool is_whole(const json& v) {
  if (v.is_number_integer()) return true;
  if (!v.is_number_float()) return false;
  const double d = v.get<double>();
  return std::isfinite(d) && std::floor(d) == d && std::fabs(d) < 9.0e15;
}

namespace {

struct Unit {
  const char* suffix;
  const char* dimension;
  double factor;  // to the dimension's base unit
  const char* label;
};

// Units that appear in key names, by dimension. Bases: GB/s, MiB, MHz, W, TFLOP/s.
const std::vector<Unit>& units() {
  struct Scale {
    const char* suffix;
    double factor;
    const char* label;
  };
  static const std::vector<Unit> u = [] {
    const std::vector<std::pair<const char*, std::vector<Scale>>> dims = {
        {"bandwidth",
         {{"gbps", 1, "GB/s (10^9 bytes/s)"},
          {"tbps", 1000, "TB/s"},
          {"mbps", 0.001, "MB/s"},
          {"gibps", 1.073741824, "GiB/s"}}},
        {"memory",
         {{"gib", 1024, "GiB (2^30 bytes)"},
          {"gb", 953.67431640625, "GB (10^9 bytes)"},
          {"tib", 1048576, "TiB"},
          {"tb", 953674.31640625, "TB"},
          {"mib", 1, "MiB (2^20 bytes)"},
          {"mb", 1, "MB"},
          {"kib", 1.0 / 1024, "KiB"},
          {"kb", 1.0 / 1024, "KB"}}},
        {"frequency", {{"mhz", 1, "MHz"}, {"ghz", 1000, "GHz"}, {"khz", 0.001, "kHz"}}},
        {"power", {{"w", 1, "W"}, {"kw", 1000, "kW"}}},
        {"compute",
         {{"tflops", 1, "TFLOP/s (10^12 operations/s)"},
          {"pflops", 1000, "PFLOP/s"},
          {"gflops", 0.001, "GFLOP/s"}}},
    };
    std::vector<Unit> out;
    for (const auto& d : dims)
      for (const Scale& s : d.second) out.push_back({s.suffix, d.first, s.factor, s.label});
    return out;
  }();
  return u;
}

// Splits "memory_bandwidth_gbps" into ("memory_bandwidth", unit gbps); unit null when the key has none.
std::pair<std::string, const Unit*> split_unit(const std::string& key) {
  const Unit* best = nullptr;
  for (const auto& u : units()) {
    const std::string suf = std::string("_") + u.suffix;
    if (ends_with(key, suf) && key.size() > suf.size() &&
        (!best || std::string(u.suffix).size() > std::string(best->suffix).size()))
      best = &u;
  }
  if (!best) return {key, nullptr};
  return {key.substr(0, key.size() - std::string(best->suffix).size() - 1), best};
}

// Message for a key that is not in the format, with a unit or spelling hint where one fits.
std::string unknown_key_message(const std::string& key, const json& value, const Specs& specs,
                                const std::string& format) {
  const auto [stem, unit] = split_unit(key);
  for (const auto& s : specs) {
    const std::string known = s.key;
    const auto [kstem, kunit] = split_unit(known);
    if (kunit == nullptr || kstem != stem || kunit == unit) continue;
    std::string msg =
        "wrong unit: " + format + " stores this value as " + in_quotes(known) + " in " + kunit->label;
    if (unit != nullptr && std::string(unit->dimension) == kunit->dimension) {
      const double f = unit->factor / kunit->factor;
      msg += ", not " + std::string(unit->label) + "; rename the key and multiply the value by " + fmt_num(f);
      if (value.is_number() && std::isfinite(value.get<double>()))
        msg += " (" + fmt_num(value.get<double>() * f) + ")";
    } else {
      msg += "; units are part of key names";
    }
    return msg;
  }
  if (contains(key, "usd") || contains(key, "eur") || contains(key, "price") || contains(key, "per_hour")) {
    for (const auto& s : specs) {
      if (contains(s.key, "usd_per_gpu_hour"))
        return "not a field of " + format +
               ": prices are USD per GPU-hour in on_demand_usd_per_gpu_hour / spot_usd_per_gpu_hour "
               "(instance price / gpu_count)";
    }
  }
  std::string best;
  std::size_t best_d = 3;
  for (const auto& s : specs) {
    const std::size_t d = edit_distance(key, s.key);
    if (d < best_d) {
      best_d = d;
      best = s.key;
    }
  }
  std::string msg = "not a field of " + format;
  if (!best.empty()) msg += "; did you mean " + in_quotes(best) + "?";
  return msg;
}

}  // namespace

// Checks presence, type and unknown keys of one object against its spec. Returns false when the object
// itself is not an object.
bool check_keys(const json& obj, const std::string& path, const std::string& kind, const std::string& format,
                Sink& sink) {
  if (!obj.is_object()) {
    sink.add(path, Errc::wrong_type, std::string("must be an object, got ") + obj.type_name());
    return false;
  }
  const Specs& specs = specs_for(kind);
  const auto& members = obj.get_ref<const json::object_t&>();
  for (const auto& s : specs) {
    const std::string p = join_path(path, s.key);
    auto it = members.find(s.key);
    if (it == members.end()) {
      if (s.required) {
        const bool nullable = s.nullable && s.kind != FieldKind::choice && s.kind != FieldKind::boolean;
        sink.add(
            p, Errc::missing_field,
            "required field is missing (" + field_kind_text(s) + (nullable ? "; null when unknown)" : ")"));
      }
      continue;
    }
    const std::string tp = field_type_problem(s, it->second);
    if (!tp.empty()) {
      sink.add(p, Errc::wrong_type, tp);
      continue;
    }
    // The format identifier: another version is a schema mismatch, not a bad value.
    if (s.key == "schema" && s.values.size() == 1 && it->second != s.values[0]) {
      sink.add(p, Errc::schema_mismatch,
               "expected " + in_quotes(s.values[0]) + ", got " + clip(it->second.dump(), 40));
      continue;
    }
    const std::string vp = field_value_problem(s, it->second);
    if (!vp.empty()) sink.add(p, s.kind == FieldKind::choice ? Errc::invalid_value : Errc::out_of_range, vp);
  }
  const FieldList* list = field_list(kind);
  for (const auto& [key, value] : members) {
    bool known = false;
    for (const auto& s : specs) known = known || key == s.key;
    if (!known && list && list->free_text(key)) {
      if (!value.is_string())
        sink.add(join_path(path, key), Errc::wrong_type,
                 std::string("keys ending in \"") + list->free_text_suffix +
                     "\" are free text: must be a string, got " + value.type_name());
      continue;
    }
    if (!known)
      sink.add(join_path(path, key), Errc::unknown_key, unknown_key_message(key, value, specs, format));
  }
  return true;
}

// The member `key` of an object (nullptr when obj is no object or has no such member).
const json* member(const json& obj, const std::string& key) {
  if (!obj.is_object()) return nullptr;
  const auto& members = obj.get_ref<const json::object_t&>();
  auto it = members.find(key);
  return it == members.end() ? nullptr : &it->second;
}

const json* find_field(const json& obj, const char* key) {
  const json* v = member(obj, key);
  return v && !v->is_null() ? v : nullptr;
}
double num_field(const json& obj, const char* key) {
  const json* v = find_field(obj, key);
  if (!v || !v->is_number()) return std::nan("");
  const double d = v->get<double>();
  return std::isfinite(d) ? d : std::nan("");
}
std::string str_field(const json& obj, const char* key) {
  const json* v = find_field(obj, key);
  return v && v->is_string() ? v->get<std::string>() : std::string();
}

void check_schema_value(const json& doc, const std::string& expected, Sink& sink) {
  const json* s = find_field(doc, "schema");
  if (s && s->is_string() && s->get<std::string>() != expected)
    sink.add("schema", Errc::schema_mismatch,
             "expected " + in_quotes(expected) + ", got " + in_quotes(s->get<std::string>()));
}

void check_id(const json& doc, const std::string& file, const std::string& extra_chars, Sink& sink) {
  const std::string id = str_field(doc, "id");
  if (id.empty()) {
    if (find_field(doc, "id") && !sink.has_field("id"))
      sink.add("id", Errc::invalid_value, "must not be empty");
    return;
  }
  if (!id_like(id, extra_chars)) {
    sink.add("id", Errc::invalid_value,
             in_quotes(id) + " must be lower-case letters, digits" +
                 (extra_chars.find('.') != std::string::npos ? ", '.'" : "") +
                 " and '-', starting with a letter or digit");
    return;
  }
  const std::string stem = stem_of(file);
  if (stem != id)
    sink.add(
        "id", Errc::invalid_value,
        in_quotes(id) + " does not match the file name " + in_quotes(stem + ".json") + " (file name = id)");
}

void check_nonempty_text(const json& obj, const char* key, const std::string& path, Sink& sink,
                         std::size_t min_len) {
  const json* v = find_field(obj, key);
  if (!v || !v->is_string() || sink.has_field(join_path(path, key))) return;  // e.g. too short for its list
  std::string s = v->get<std::string>();
  s.erase(0, s.find_first_not_of(" \t\r\n"));
  if (s.size() < min_len)
    sink.add(join_path(path, key), Errc::invalid_value,
             s.empty() ? "must not be empty" : "is too short to be useful: " + in_quotes(s));
}

// A source: at least 8 characters and not a placeholder.
std::string source_problem(const std::string& raw) {
  std::string s = lower(raw);
  s.erase(0, s.find_first_not_of(" \t\r\n"));
  if (s.empty()) return "must not be empty";
  for (const char* ph : {"todo", "tbd", "n/a", "unknown", "none", "?", "xxx", "fixme"})
    if (s == ph) return "is a placeholder, not a source: give a URL, a document or a repository file";
  if (s.size() < 8) return "is too short to be a source: give a URL, a document or a repository file";
  return "";
}
}  // namespace ftcost::dbcheck

namespace ftcost {

std::vector<std::string> db_required_keys(const std::string& object_kind) {
  std::vector<std::string> out;
  for (const auto& s : dbcheck::specs_for(object_kind))
    if (s.required) out.emplace_back(s.key);
  return out;
}

std::vector<std::string> db_allowed_keys(const std::string& object_kind) {
  std::vector<std::string> out;
  for (const auto& s : dbcheck::specs_for(object_kind)) out.emplace_back(s.key);
  return out;
}

}  // namespace ftcost
