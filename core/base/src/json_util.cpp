#include "ftcost/json_util.hpp"

#include <cmath>

namespace ftcost {

// Depth check without recursion on the parser: nlohmann's SAX-free parser recurses, so we first scan
// the text for bracket depth (strings skipped) and refuse pathological nesting before parsing.
std::size_t json_too_deep_at(const std::string& text, int max_depth) {
  int depth = 0;
  bool in_string = false;
  bool escape = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escape) {
        escape = false;
      } else if (c == '\\') {
        escape = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return i;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return std::string::npos;
}

Result<json> parse_json_text(const std::string& text, const std::string& source, std::size_t max_bytes,
                             int max_depth) {
  if (text.size() > max_bytes) {
    return make_error(Errc::too_large, source,
                      "file is " + std::to_string(text.size()) + " bytes; the limit is " +
                          std::to_string(max_bytes) + " bytes");
  }
  if (json_too_deep_at(text, max_depth) != std::string::npos) {
    return make_error(Errc::too_large, source,
                      "JSON nested deeper than " + std::to_string(max_depth) + " levels");
  }
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false, /*ignore_comments=*/false);
  if (j.is_discarded()) {
    return make_error(Errc::malformed_json, source, "not valid JSON (syntax error or invalid UTF-8)");
  }
  return j;
}

std::string join_ids(const std::vector<std::string>& ids) {
  std::string s;
  for (const auto& id : ids) {
    if (!s.empty()) s += ", ";
    s += id;
  }
  return s;
}

std::string join_path(const std::string& base, const std::string& key) {
  if (base.empty()) return key;
  return base + "." + key;
}

bool has(const json& obj, const std::string& key) {
  if (!obj.is_object()) return false;
  auto it = obj.find(key);
  return it != obj.end() && !it->is_null();
}

namespace {

// A required field of `obj` that is present, not null and (is_kind) of the kind named `kind`.
Result<const json*> required(const json& obj, const std::string& key, const std::string& path,
                             const char* kind, bool (json::*is_kind)() const noexcept) {
  if (!obj.is_object()) return make_error(Errc::wrong_type, path, "must be an object");
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null())
    return make_error(Errc::missing_field, join_path(path, key),
                      std::string("required ") + kind + " is missing");
  if (!((*it).*is_kind)())
    return make_error(Errc::wrong_type, join_path(path, key),
                      std::string("must be a ") + kind + ", got " + std::string(it->type_name()));
  return &*it;
}

}  // namespace

Result<double> get_number(const json& obj, const std::string& key, const std::string& path) {
  FTCOST_TRY(field, required(obj, key, path, "number", &json::is_number));
  double v = field->get<double>();
  if (!std::isfinite(v))
    return make_error(Errc::invalid_value, join_path(path, key), "must be a finite number");
  return v;
}

Result<double> get_number_in(const json& obj, const std::string& key, const std::string& path, double lo,
                             double hi) {
  FTCOST_TRY(v, get_number(obj, key, path));
  if (v < lo || v > hi)
    return make_error(
        Errc::out_of_range, join_path(path, key),
        "must be between " + json(lo).dump() + " and " + json(hi).dump() + ", got " + json(v).dump());
  return v;
}

Result<double> opt_number(const json& obj, const std::string& key, const std::string& path, double fallback) {
  if (!has(obj, key)) return fallback;
  return get_number(obj, key, path);
}

Result<std::int64_t> get_count(const json& obj, const std::string& key, const std::string& path,
                               std::int64_t min_value, std::int64_t max_value) {
  std::string p = join_path(path, key);
  FTCOST_TRY(v, get_number(obj, key, path));
  if (std::floor(v) != v)
    return make_error(Errc::invalid_value, p, "must be a whole number, got " + obj.at(key).dump());
  if (v < static_cast<double>(min_value) || v > static_cast<double>(max_value)) {
    return make_error(Errc::out_of_range, p,
                      "must be between " + std::to_string(min_value) + " and " + std::to_string(max_value) +
                          ", got " + obj.at(key).dump());
  }
  return static_cast<std::int64_t>(v);
}

Result<std::int64_t> opt_count(const json& obj, const std::string& key, const std::string& path,
                               std::int64_t fallback, std::int64_t min_value, std::int64_t max_value) {
  if (!has(obj, key)) return fallback;
  return get_count(obj, key, path, min_value, max_value);
}

Result<std::string> get_string(const json& obj, const std::string& key, const std::string& path) {
  FTCOST_TRY(field, required(obj, key, path, "string", &json::is_string));
  return field->get<std::string>();
}

Result<std::string> opt_string(const json& obj, const std::string& key, const std::string& path,
                               const std::string& fallback) {
  if (!has(obj, key)) return fallback;
  return get_string(obj, key, path);
}

Result<bool> opt_bool(const json& obj, const std::string& key, const std::string& path, bool fallback) {
  if (!has(obj, key)) return fallback;
  const json& v = obj.at(key);
  if (!v.is_boolean()) return make_error(Errc::wrong_type, join_path(path, key), "must be true or false");
  return v.get<bool>();
}

}  // namespace ftcost
