// Checked access to JSON values: every failure names the JSON path and what was expected.
#pragma once

#include "ftcost/error.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ftcost {

using json = nlohmann::json;

// Offset of the first bracket that nests deeper than max_depth (strings skipped), or npos.
std::size_t json_too_deep_at(const std::string& text, int max_depth);

// Parses text (size-limited, depth-limited) into JSON; `source` names the file/flag in errors.
Result<json> parse_json_text(const std::string& text, const std::string& source,
                             std::size_t max_bytes = std::size_t{8} * 1024 * 1024, int max_depth = 64);

std::string join_path(const std::string& base, const std::string& key);
// "a, b, c" for messages (ids, allowed values, known keys).
std::string join_ids(const std::vector<std::string>& ids);

// Required fields.
Result<double> get_number(const json& obj, const std::string& key, const std::string& path);
// A required finite number in [lo, hi]; the error names the field and the range.
Result<double> get_number_in(const json& obj, const std::string& key, const std::string& path, double lo,
                             double hi);
Result<std::int64_t> get_count(const json& obj, const std::string& key, const std::string& path,
                               std::int64_t min_value = 1, std::int64_t max_value = (std::int64_t{1} << 40));
Result<std::string> get_string(const json& obj, const std::string& key, const std::string& path);

// Optional fields: absent or null -> fallback; present but wrong -> error.
Result<double> opt_number(const json& obj, const std::string& key, const std::string& path, double fallback);
Result<std::int64_t> opt_count(const json& obj, const std::string& key, const std::string& path,
                               std::int64_t fallback, std::int64_t min_value = 0,
                               std::int64_t max_value = (std::int64_t{1} << 40));
Result<bool> opt_bool(const json& obj, const std::string& key, const std::string& path, bool fallback);
Result<std::string> opt_string(const json& obj, const std::string& key, const std::string& path,
                               const std::string& fallback);

bool has(const json& obj, const std::string& key);  // present and not null

// One member of a JSON object written with json_object.
template <class J>
struct JsonMember {
  const char* key;
  J value;
};

namespace json_detail {
template <class J, std::size_t>
using Member = JsonMember<J>;

template <class J, class Indices>
struct ObjectOfN;
template <class J, std::size_t... I>
struct ObjectOfN<J, std::index_sequence<I...>> {
  J operator()(Member<J, I>... members) const {
    J o = J::object();
    (o.emplace(members.key, std::move(members.value)), ...);  // as J{...}: a repeated key keeps the first
    return o;
  }
};

// One call operator per member count, 1 to N.
template <class J, class Counts>
struct ObjectOf;
template <class J, std::size_t... N>
struct ObjectOf<J, std::index_sequence<N...>> : ObjectOfN<J, std::make_index_sequence<N + 1>>... {
  using ObjectOfN<J, std::make_index_sequence<N + 1>>::operator()...;
};
}  // namespace json_detail

// A JSON object from {key, value} members given as arguments, which clang-format packs several to a line
// where json{...} puts each on its own: json_object({"id", e.id}, {"gpu", e.gpu_id}, ...) (1 to 48 members).
inline constexpr json_detail::ObjectOf<json, std::make_index_sequence<48>> json_object{};

}  // namespace ftcost
