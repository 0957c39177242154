// Lenient reads of the core's JSON for display: a missing key or another type gives the fallback.
// (Also sidesteps GCC's -Wnull-dereference false positives inside nlohmann::json::value() at -O3.)
#pragma once

#include "ftcost/json_util.hpp"

#include <string>

namespace ftcost::web {

inline const json& jat(const json& j, const char* key) {
  static const json null_value;
  if (!j.is_object()) return null_value;
  auto it = j.find(key);
  return it == j.end() ? null_value : *it;
}
inline double jnum(const json& j, const char* key, double fallback = 0) {
  const json& v = jat(j, key);
  return v.is_number() ? v.get<double>() : fallback;
}
inline std::string jstr(const json& j, const char* key, const std::string& fallback = std::string()) {
  const json& v = jat(j, key);
  return v.is_string() ? v.get<std::string>() : fallback;
}
inline bool jflag(const json& j, const char* key, bool fallback = false) {
  const json& v = jat(j, key);
  return v.is_boolean() ? v.get<bool>() : fallback;
}

}  // namespace ftcost::web
