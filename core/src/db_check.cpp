// The gpu-db/ validator (see db_check.hpp for what it checks and why).
#include "ftcost/db_check.hpp"

#include "ftcost/calibration.hpp"
#include "ftcost/database.hpp"
#include "ftcost/dataset.hpp"
#include "ftcost/gpu.hpp"
#include "ftcost/json_util.hpp"
#include "ftcost/model.hpp"
#include "ftcost/node.hpp"
#include "ftcost/prices.hpp"
#include "ftcost/run.hpp"
#include "ftcost/stack.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <set>

namespace ftcost {

std::string DbCheckProblem::to_string() const { return file + ": " + field + ": " + message; }

namespace {

constexpr const char* kWholeFile = "(file)";
constexpr const char* kTopLevel = "(top level)";

// ------------------------------------------------------------------------------------------ text

// Length of the valid UTF-8 sequence starting at s[i] (RFC 3629: no overlongs, no surrogates, at most
// U+10FFFF), or 0 when the bytes there are not valid UTF-8.
std::size_t utf8_sequence(const std::string& s, std::size_t i) {
  auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned c = b(i);
  if (c < 0x80) return 1;
  std::size_t n = 0;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k)
    if ((b(i + k) & 0xC0u) != 0x80u) return 0;
  if (c == 0xE0 && b(i + 1) < 0xA0) return 0;  // overlong
  if (c == 0xED && b(i + 1) > 0x9F) return 0;  // UTF-16 surrogates
  if (c == 0xF0 && b(i + 1) < 0x90) return 0;  // overlong
  if (c == 0xF4 && b(i + 1) > 0x8F) return 0;  // above U+10FFFF
  return n;
}

std::size_t first_invalid_utf8(const std::string& s) {
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = utf8_sequence(s, i);
    if (n == 0) return i;
    i += n;
  }
  return std::string::npos;
}

std::string hex_byte(unsigned char c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\x%02X", static_cast<unsigned>(c));
  return buf;
}

// "line 3, column 12" for a byte offset.
std::string line_col(const std::string& s, std::size_t offset) {
  offset = std::min(offset, s.size());
  std::size_t line = 1, col = 1;
  for (std::size_t i = 0; i < offset; ++i) {
    if (s[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(col);
}

// Shortens user text for messages.
std::string clip(const std::string& s, std::size_t max_chars = 80) {
  if (s.size() <= max_chars) return s;
  std::size_t cut = max_chars;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0u) == 0x80u)
    --cut;  // not inside a UTF-8 sequence
  return s.substr(0, cut) + "...";
}

std::string in_quotes(const std::string& s) { return "\"" + clip(s) + "\""; }

// Value of a short string of decimal digits (checked by the caller).
double digits_value(const std::string& s) {
  double v = 0;
  for (char c : s) v = v * 10 + (c - '0');
  return v;
}

std::string fmt_num(double v) {
  if (!std::isfinite(v)) return v > 0 ? "inf" : (v < 0 ? "-inf" : "nan");
  if (std::fabs(v) < 1e15 && std::floor(v) == v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f", v);
    return buf;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string lower(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return s;
}

bool contains(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// ^[a-z0-9][a-z0-9<extra>]*$
bool id_like(const std::string& s, const std::string& extra) {
  if (s.empty() || s.size() > 128) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (alnum) continue;
    if (i == 0 || extra.find(c) == std::string::npos) return false;
  }
  return true;
}

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> parts;
  std::string cur;
  for (char c : path) {
    if (c == '/' || c == '\\') {
      if (!cur.empty()) parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) parts.push_back(cur);
  return parts;
}

std::string basename_of(const std::string& path) {
  auto parts = split_path(path);
  return parts.empty() ? std::string() : parts.back();
}

std::string stem_of(const std::string& path) {
  std::string b = basename_of(path);
  return ends_with(b, ".json") ? b.substr(0, b.size() - 5) : b;
}

// Levenshtein distance, capped: used to suggest a key for a misspelt one.
std::size_t edit_distance(const std::string& a, const std::string& b) {
  if (a.size() > 64 || b.size() > 64) return 100;
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

// ------------------------------------------------------------------------ JSON paths in raw text

std::string render_path(const std::vector<std::string>& parts) {
  std::string out;
  const std::size_t shown = parts.size() > 8 ? 6 : parts.size();
  for (std::size_t i = 0; i < shown; ++i) {
    const std::string& p = parts[i];
    if (!p.empty() && p[0] == '[') {
      out += p;
    } else {
      if (!out.empty()) out += ".";
      out += clip(p, 64);
    }
  }
  if (shown < parts.size()) out += "...";
  return out.empty() ? std::string(kTopLevel) : out;
}

// The JSON path of the value that contains byte `offset` of `text`, found with a small tokenizer (the
// text need not be valid JSON past the offset). Used to name the field of syntax, nesting and UTF-8
// errors.
std::string path_at(const std::string& text, std::size_t offset) {
  struct Frame {
    bool object;
    bool expect_key;
    std::string key;
    std::size_t index;
  };
  std::vector<Frame> frames;
  bool in_string = false, escape = false, is_key = false;
  std::string buf;
  offset = std::min(offset, text.size());
  for (std::size_t i = 0; i < offset; ++i) {
    const char c = text[i];
    if (in_string) {
      if (escape) {
        escape = false;
        if (is_key) buf += c;
      } else if (c == '\\') {
        escape = true;
        if (is_key) buf += c;
      } else if (c == '"') {
        in_string = false;
        if (is_key && !frames.empty()) frames.back().key = buf;
      } else if (is_key && buf.size() < 96) {
        buf += c;
      }
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        is_key = !frames.empty() && frames.back().object && frames.back().expect_key;
        buf.clear();
        break;
      case '{':
        frames.push_back(Frame{true, true, "", 0});
        break;
      case '[':
        frames.push_back(Frame{false, false, "", 0});
        break;
      case '}':
      case ']':
        if (!frames.empty()) frames.pop_back();
        break;
      case ':':
        if (!frames.empty() && frames.back().object) frames.back().expect_key = false;
        break;
      case ',':
        if (!frames.empty()) {
          if (frames.back().object) {
            frames.back().expect_key = true;
          } else {
            ++frames.back().index;
          }
        }
        break;
      default:
        break;
    }
  }
  std::vector<std::string> parts;
  for (std::size_t f = 0; f < frames.size(); ++f) {
    const Frame& fr = frames[f];
    if (fr.object) {
      if (f + 1 == frames.size() && in_string && is_key) {
        parts.push_back(buf);  // inside a key: name the key being read
      } else if (!fr.key.empty()) {
        parts.push_back(fr.key);
      }
    } else {
      parts.push_back("[" + std::to_string(fr.index) + "]");
    }
  }
  return render_path(parts);
}

// ------------------------------------------------------------------------------ problem lists

struct Sink {
  std::string file;
  std::vector<DbCheckProblem> problems;
  std::size_t cap = 50;
  bool capped = false;

  void add(const std::string& field, Errc code, const std::string& message) {
    if (problems.size() >= cap) {
      if (!capped) {
        problems.push_back({file, kWholeFile,
                            "more than " + std::to_string(cap) + " problems; the rest are not listed",
                            Errc::invalid_value});
        capped = true;
      }
      return;
    }
    problems.push_back({file, field.empty() ? std::string(kTopLevel) : field, message, code});
  }
  bool has_field(const std::string& field) const {
    for (const auto& p : problems)
      if (p.field == field) return true;
    return false;
  }
  // An error from a core loader: fields there may carry the source name; messages may end with it.
  void add_loader_error(const Error& e) {
    std::string field = e.field;
    if (field == file) field = kTopLevel;
    if (field.size() > file.size() + 2 && field.compare(0, file.size() + 2, file + ": ") == 0)
      field = field.substr(file.size() + 2);
    if (field.empty()) field = kTopLevel;
    std::string msg = e.message;
    const std::string suffix = " (in " + file + ")";
    if (ends_with(msg, suffix)) msg = msg.substr(0, msg.size() - suffix.size());
    if (has_field(field)) return;  // already reported, with more detail
    add(field, e.code, msg);
  }
};

// ------------------------------------------------------------------------------------ parsing

class DupKeySax : public nlohmann::json_sax<json> {
 public:
  DupKeySax(const std::string& text, Sink& sink) : text_(text), sink_(sink) {}

  bool null() override { return value(); }
  bool boolean(bool) override { return value(); }
  bool number_integer(number_integer_t) override { return value(); }
  bool number_unsigned(number_unsigned_t) override { return value(); }
  bool number_float(number_float_t, const string_t&) override { return value(); }
  bool string(string_t&) override { return value(); }
  bool binary(binary_t&) override { return value(); }
  bool start_object(std::size_t) override {
    value();
    frames_.push_back(Frame{true, {}, "", 0});
    return true;
  }
  bool key(string_t& k) override {
    Frame& f = frames_.back();
    if (!f.keys.insert(k).second && dups_ < 20) {
      ++dups_;
      f.key = k;
      sink_.add(path(), Errc::invalid_value,
                "duplicate key " + in_quotes(k) + ": JSON keeps only one of the values");
    }
    f.key = k;
    return true;
  }
  bool end_object() override {
    frames_.pop_back();
    return true;
  }
  bool start_array(std::size_t) override {
    value();
    frames_.push_back(Frame{false, {}, "", 0});
    return true;
  }
  bool end_array() override {
    frames_.pop_back();
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& ex) override {
    std::string what = ex.what();
    const std::size_t close = what.find("] ");
    if (what.rfind("[json.exception", 0) == 0 && close != std::string::npos) what = what.substr(close + 2);
    const std::size_t at = position > 0 ? position - 1 : 0;
    sink_.add(path_at(text_, at), Errc::malformed_json, "not valid JSON: " + clip(what, 240));
    return false;
  }

 private:
  struct Frame {
    bool object;
    std::set<std::string> keys;
    std::string key;
    std::size_t count;
  };
  bool value() {
    if (!frames_.empty() && !frames_.back().object) ++frames_.back().count;
    return true;
  }
  std::string path() const {
    std::vector<std::string> parts;
    for (const auto& f : frames_)
      parts.push_back(f.object ? f.key : "[" + std::to_string(f.count > 0 ? f.count - 1 : 0) + "]");
    return render_path(parts);
  }
  const std::string& text_;
  Sink& sink_;
  std::vector<Frame> frames_;
  int dups_ = 0;
};

// Parses a file's text into `out`; false (with problems in `sink`) when it cannot be used at all.
bool parse_text(const std::string& text, const DbCheckOptions& opt, Sink& sink, json& out) {
  if (text.size() > opt.max_file_bytes) {
    sink.add(kWholeFile, Errc::too_large,
             "file is " + std::to_string(text.size()) + " bytes; the limit is " +
                 std::to_string(opt.max_file_bytes) + " bytes (" +
                 fmt_num(static_cast<double>(opt.max_file_bytes) / 1048576.0) + " MiB)");
    return false;
  }
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
    sink.add(kWholeFile, Errc::malformed_json, "file is empty");
    return false;
  }
  const std::size_t bad = first_invalid_utf8(text);
  if (bad != std::string::npos) {
    sink.add(path_at(text, bad), Errc::malformed_json,
             "invalid UTF-8 (byte " + hex_byte(static_cast<unsigned char>(text[bad])) + " at " +
                 line_col(text, bad) + "): gpu-db files must be UTF-8 text");
    return false;
  }
  const std::size_t deep = json_too_deep_at(text, opt.max_depth);
  if (deep != std::string::npos) {
    sink.add(path_at(text, deep), Errc::too_large,
             "JSON nested deeper than " + std::to_string(opt.max_depth) + " levels (at " +
                 line_col(text, deep) + ")");
    return false;
  }
  DupKeySax sax(text, sink);
  const std::size_t before = sink.problems.size();
  const bool ok = json::sax_parse(text, &sax);
  bool syntax_error = !ok;
  for (std::size_t i = before; i < sink.problems.size(); ++i)
    syntax_error = syntax_error || sink.problems[i].code == Errc::malformed_json;
  if (syntax_error) {
    if (!ok && sink.problems.size() == before) sink.add(kWholeFile, Errc::malformed_json, "not valid JSON");
    return false;
  }
  out = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (out.is_discarded()) {
    sink.add(kWholeFile, Errc::malformed_json, "not valid JSON");
    return false;
  }
  return true;
}

// ------------------------------------------------------------------------- keys, types, units

enum class Ty { str, str_or_null, num, num_or_null, integer, integer_or_null, boolean, object, array, any };

struct KeySpec {
  const char* key;
  Ty type;
  bool required;
};

using Specs = std::vector<KeySpec>;

const Specs& specs_for(const std::string& kind) {
  static const std::map<std::string, Specs> table = {
      {"gpu",
       {{"schema", Ty::str, true},
        {"id", Ty::str, true},
        {"vendor", Ty::str, true},
        {"name", Ty::str, true},
        {"architecture", Ty::str, true},
        {"compute_capability", Ty::str_or_null, true},
        {"form_factor", Ty::str, true},
        {"release_year", Ty::integer, true},
        {"memory_gib", Ty::num, true},
        {"usable_memory_mib_nvidia_smi", Ty::integer_or_null, true},
        {"memory_type", Ty::str, true},
        {"memory_bandwidth_gbps", Ty::num, true},
        {"dense_tflops", Ty::object, true},
        {"sm_count", Ty::integer_or_null, true},
        {"boost_clock_mhz", Ty::num_or_null, true},
        {"l2_cache_mb", Ty::num_or_null, true},
        {"tdp_w", Ty::num_or_null, true},
        {"interconnect", Ty::object, true},
        {"sparsity_note", Ty::str_or_null, true},
        {"notes", Ty::str_or_null, true},
        {"sources", Ty::array, true},
        {"disagreements", Ty::str_or_null, false},
        {"chosen_values", Ty::array, false}}},
      {"gpu.dense_tflops",
       {{"fp32", Ty::num_or_null, true},
        {"tf32", Ty::num_or_null, true},
        {"fp16", Ty::num_or_null, true},
        {"bf16", Ty::num_or_null, true},
        {"fp8", Ty::num_or_null, true},
        {"int8_tops", Ty::num_or_null, true},
        {"fp4", Ty::num_or_null, true}}},
      {"gpu.interconnect",
       {{"nvlink_gbps_bidirectional", Ty::num_or_null, true},
        {"nvlink_generation", Ty::integer_or_null, true},
        {"nvlink_topology", Ty::str_or_null, true},
        {"nvlink_max_gpus", Ty::integer_or_null, true},
        {"pcie_gen", Ty::integer_or_null, true},
        {"pcie_lanes", Ty::integer_or_null, true},
        {"pcie_p2p", Ty::any, true},
        {"other", Ty::str, false}}},
      {"gpu.chosen_values[]",
       {{"field", Ty::str, true},
        {"value", Ty::any, true},
        {"alternatives", Ty::array, true},
        {"why", Ty::str, true}}},
      {"prices",
       {{"schema", Ty::str, true},
        {"id", Ty::str, true},
        {"provider", Ty::str, true},
        {"url", Ty::str_or_null, true},
        {"currency", Ty::str, true},
        {"offers", Ty::array, true}}},
      {"prices.offers[]",
       {{"gpu_id", Ty::str, true},
        {"on_demand_usd_per_gpu_hour", Ty::num, true},
        {"spot_usd_per_gpu_hour", Ty::num_or_null, true},
        {"date", Ty::str_or_null, true},
        {"date_note", Ty::str_or_null, true},
        {"instance_type", Ty::str_or_null, true},
        {"gpu_count", Ty::integer, true},
        {"region", Ty::str_or_null, true},
        {"source", Ty::str, true},
        {"notes", Ty::str_or_null, true},
        {"reference_id", Ty::str, false},
        {"network", Ty::object, false}}},
      {"prices.offers[].network",
       {{"kind", Ty::str, true}, {"gbit_per_gpu", Ty::num, true}, {"source", Ty::str, true}}},
      {"model",
       {{"schema", Ty::str, true},
        {"id", Ty::str, true},
        {"display_name", Ty::str, true},
        {"hf_repo", Ty::str, true},
        {"family", Ty::str, true},
        {"kind", Ty::str, true},
        {"published", Ty::object, true},
        {"config", Ty::object, true},
        {"config_source", Ty::object, true},
        {"overrides", Ty::object, false}}},
      {"model.published",
       {{"total_params", Ty::integer, true},
        {"active_params", Ty::integer_or_null, true},
        {"top_k", Ty::integer, false},
        {"source", Ty::str, true},
        {"note", Ty::str_or_null, true}}},
      {"dataset",
       {{"schema", Ty::str, true},
        {"id", Ty::str, true},
        {"display_name", Ty::str, true},
        {"queries", Ty::integer, true},
        {"queries_published", Ty::integer_or_null, true},
        {"length_tokens", Ty::object, true},
        {"quantiles", Ty::array, false},
        {"histogram", Ty::array, false},
        {"tokenizer", Ty::str, true},
        {"source", Ty::str, true},
        {"notes", Ty::str_or_null, true},
        {"template_tokens", Ty::num_or_null, false},
        {"template_tokens_note", Ty::str_or_null, false}}},
      {"dataset.length_tokens",
       {{"min", Ty::num, true},
        {"median", Ty::num, true},
        {"mean", Ty::num, true},
        {"p90", Ty::num, true},
        {"p99", Ty::num, true},
        {"max", Ty::num, true}}},
  };
  static const Specs none;
  auto it = table.find(kind);
  return it == table.end() ? none : it->second;
}

const char* type_name(Ty t) {
  switch (t) {
    case Ty::str:
      return "a string";
    case Ty::str_or_null:
      return "a string or null";
    case Ty::num:
      return "a number";
    case Ty::num_or_null:
      return "a number or null";
    case Ty::integer:
      return "a whole number";
    case Ty::integer_or_null:
      return "a whole number or null";
    case Ty::boolean:
      return "true or false";
    case Ty::object:
      return "an object";
    case Ty::array:
      return "an array";
    case Ty::any:
      return "a value";
  }
  return "a value";
}

bool is_whole(const json& v) {
  if (v.is_number_integer()) return true;
  if (!v.is_number_float()) return false;
  const double d = v.get<double>();
  return std::isfinite(d) && std::floor(d) == d && std::fabs(d) < 9.0e15;
}

// Empty string when v has type t, else what is wrong.
std::string type_problem(const json& v, Ty t) {
  const bool null_ok =
      t == Ty::str_or_null || t == Ty::num_or_null || t == Ty::integer_or_null || t == Ty::any;
  if (v.is_null()) return null_ok ? "" : std::string("must be ") + type_name(t) + ", got null";
  bool ok = false;
  switch (t) {
    case Ty::str:
    case Ty::str_or_null:
      ok = v.is_string();
      break;
    case Ty::num:
    case Ty::num_or_null:
      ok = v.is_number();
      break;
    case Ty::integer:
    case Ty::integer_or_null:
      ok = is_whole(v);
      break;
    case Ty::boolean:
      ok = v.is_boolean();
      break;
    case Ty::object:
      ok = v.is_object();
      break;
    case Ty::array:
      ok = v.is_array();
      break;
    case Ty::any:
      ok = true;
      break;
  }
  if (ok && v.is_number_float() && !std::isfinite(v.get<double>())) return "must be a finite number";
  if (ok) return "";
  if ((t == Ty::integer || t == Ty::integer_or_null) && v.is_number())
    return "must be a whole number, got " + fmt_num(v.get<double>());
  return std::string("must be ") + type_name(t) + ", got " + v.type_name();
}

struct Unit {
  const char* suffix;
  const char* dimension;
  double factor;  // to the dimension's base unit
  const char* label;
};

// Units that appear in key names. Bases: GB/s, MiB, MHz, W, TFLOP/s.
const std::vector<Unit>& units() {
  static const std::vector<Unit> u = {
      {"gbps", "bandwidth", 1, "GB/s (10^9 bytes/s)"},
      {"tbps", "bandwidth", 1000, "TB/s"},
      {"mbps", "bandwidth", 0.001, "MB/s"},
      {"gibps", "bandwidth", 1.073741824, "GiB/s"},
      {"gib", "memory", 1024, "GiB (2^30 bytes)"},
      {"gb", "memory", 953.67431640625, "GB (10^9 bytes)"},
      {"tib", "memory", 1048576, "TiB"},
      {"tb", "memory", 953674.31640625, "TB"},
      {"mib", "memory", 1, "MiB (2^20 bytes)"},
      {"mb", "memory", 1, "MB"},
      {"kib", "memory", 1.0 / 1024, "KiB"},
      {"kb", "memory", 1.0 / 1024, "KB"},
      {"mhz", "frequency", 1, "MHz"},
      {"ghz", "frequency", 1000, "GHz"},
      {"khz", "frequency", 0.001, "kHz"},
      {"w", "power", 1, "W"},
      {"kw", "power", 1000, "kW"},
      {"tflops", "compute", 1, "TFLOP/s (10^12 operations/s)"},
      {"pflops", "compute", 1000, "PFLOP/s"},
      {"gflops", "compute", 0.001, "GFLOP/s"},
  };
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

// Checks presence, type and unknown keys of one object against its spec. Returns false when the object
// itself is not an object.
bool check_keys(const json& obj, const std::string& path, const std::string& kind, const std::string& format,
                Sink& sink) {
  if (!obj.is_object()) {
    sink.add(path, Errc::wrong_type, std::string("must be an object, got ") + obj.type_name());
    return false;
  }
  const Specs& specs = specs_for(kind);
  const json::object_t& members = obj.get_ref<const json::object_t&>();
  for (const auto& s : specs) {
    const std::string p = join_path(path, s.key);
    auto it = members.find(s.key);
    if (it == members.end()) {
      if (s.required) {
        const bool nullable =
            s.type == Ty::str_or_null || s.type == Ty::num_or_null || s.type == Ty::integer_or_null;
        sink.add(p, Errc::missing_field,
                 std::string("required field is missing (") + type_name(s.type) +
                     (nullable ? "; null when unknown)" : ")"));
      }
      continue;
    }
    const std::string tp = type_problem(it->second, s.type);
    if (!tp.empty()) sink.add(p, Errc::wrong_type, tp);
  }
  for (const auto& [key, value] : members) {
    bool known = false;
    for (const auto& s : specs) known = known || key == s.key;
    if (!known)
      sink.add(join_path(path, key), Errc::unknown_key, unknown_key_message(key, value, specs, format));
  }
  return true;
}

// Typed access after check_keys: nullptr / NaN when absent, null or of another type.
// The member `key` of an object (nullptr when obj is no object or has no such member).
const json* member(const json& obj, const std::string& key) {
  if (!obj.is_object()) return nullptr;
  const json::object_t& members = obj.get_ref<const json::object_t&>();
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
bool have(double v) { return !std::isnan(v); }

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
                         std::size_t min_len = 1) {
  const json* v = find_field(obj, key);
  if (!v || !v->is_string()) return;
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

// -------------------------------------------------------------------------- GPU plausibility

struct Family {
  const char* name;
  const char* vendor;
  const char* arch_word;    // must appear in "architecture"
  const char* cc_prefixes;  // NVIDIA: compute capabilities "9.0" or major prefixes "10.", comma-separated
  double bw_lo, bw_hi;      // GB/s
  double mem_lo, mem_hi;    // GiB
  double peak_lo, peak_hi;  // dense 16-bit tensor peak (max of bf16, fp16), TFLOP/s
  double fp32_lo, fp32_hi;  // TFLOP/s
  int year_lo, year_hi;
  double tdp_lo, tdp_hi;            // W
  double tensor_flop_per_sm_clock;  // dense 16-bit FLOP per SM (CU) per clock at most; 0 = not checked
  bool bf16, fp8, fp4, tf32;        // hardware has these tensor types
};

// Bounds are deliberately wide (the whole product line of an architecture, with margin): they catch
// unit mistakes (TB/s for GB/s, GB for GiB), sign errors and sparsity-doubled peaks, not small errors.
const std::vector<Family>& families() {
  static const std::vector<Family> f = {
      {"Volta", "NVIDIA", "Volta", "7.0", 600, 1300, 12,    40,    80,    160,  10,
       20,      2017,     2019,    150,   350, 1024, false, false, false, false},
      {"Turing", "NVIDIA", "Turing", "7.5", 150, 700,  4,     48,    20,    150,  4,
       20,       2018,     2020,     50,    300, 1024, false, false, false, false},
      {"Ampere (GA100)",
       "NVIDIA",
       "Ampere",
       "8.0",
       1200,
       2300,
       32,
       96,
       200,
       350,
       15,
       25,
       2020,
       2023,
       200,
       500,
       2048,
       true,
       false,
       false,
       true},
      {"Ampere (GA10x)",
       "NVIDIA",
       "Ampere",
       "8.6,8.7",
       150,
       1100,
       4,
       64,
       10,
       200,
       5,
       45,
       2020,
       2023,
       30,
       450,
       1024,
       true,
       false,
       false,
       true},
      {"Ada Lovelace", "NVIDIA", "Ada", "8.9", 150,  1200, 4,    64,    10,  400, 5, 100,
       2022,           2025,     30,    500,   1024, true, true, false, true},
      {"Hopper", "NVIDIA", "Hopper", "9.0", 1500, 5500, 64,   160,  400,   1100, 40,
       80,       2022,     2026,     300,   1000, 4096, true, true, false, true},
      {"Blackwell (data centre)",
       "NVIDIA",
       "Blackwell",
       "10.,11.",
       4000,
       10000,
       128,
       320,
       1500,
       3000,
       50,
       120,
       2024,
       2030,
       500,
       1500,
       8192,
       true,
       true,
       true,
       true},
      {"Blackwell (GB20x)",
       "NVIDIA",
       "Blackwell",
       "12.",
       250,
       2500,
       8,
       128,
       20,
       600,
       10,
       130,
       2025,
       2030,
       50,
       700,
       1024,
       true,
       true,
       true,
       true},
      {"CDNA 2", "AMD", "CDNA 2", "",  1000, 3500, 32,   128,   100,   450,  20,
       60,       2020,  2023,     300, 600,  1024, true, false, false, false},
      {"CDNA 3", "AMD", "CDNA 3", "",  3000, 7000, 96,   320,  400,   1500, 40,
       170,      2023,  2027,     500, 1200, 2048, true, true, false, true},
      {"CDNA 4", "AMD", "CDNA 4", "",   5000, 10000, 192,  320,  1500, 3000, 100,
       200,      2025,  2030,     1000, 1600, 4096,  true, true, true, true},
      {"Gaudi 2", "Intel", "Gaudi 2", "",  1500, 3000, 64,   128,  300,   600, 0,
       300,       2022,    2025,      300, 800,  0,    true, true, false, true},
      {"Gaudi 3", "Intel", "Gaudi 3", "",  2500, 4500, 96,   160,  400,   2000, 100,
       300,       2024,    2027,      500, 1000, 0,    true, true, false, true},
  };
  return f;
}

bool cc_matches(const std::string& cc, const std::string& prefixes) {
  std::size_t start = 0;
  while (start <= prefixes.size()) {
    std::size_t comma = prefixes.find(',', start);
    if (comma == std::string::npos) comma = prefixes.size();
    const std::string p = prefixes.substr(start, comma - start);
    if (!p.empty() && (p.back() == '.' ? cc.rfind(p, 0) == 0 : cc == p)) return true;
    start = comma + 1;
  }
  return false;
}

std::string range_text(double lo, double hi, const char* unit) {
  return fmt_num(lo) + "-" + fmt_num(hi) + (unit[0] ? std::string(" ") + unit : std::string());
}

// A value outside the family's bounds; hints at the unit mistake that would explain it.
void check_range(const std::string& fieldname, double v, double lo, double hi, const char* unit,
                 const Family& fam, Sink& sink,
                 const std::vector<std::pair<double, std::string>>& hints = {}) {
  if (v >= lo && v <= hi) return;
  std::string msg = fmt_num(v) + (unit[0] ? std::string(" ") + unit : std::string()) +
                    " is implausible for " + fam.name + " (expected " + range_text(lo, hi, unit) + ")";
  for (const auto& [factor, what] : hints) {
    const double w = v * factor;
    if (w >= lo && w <= hi) {
      msg += "; " + what + ": " + fmt_num(w);
      break;
    }
  }
  sink.add(fieldname, Errc::out_of_range, msg);
}

const char* const kDtypes[] = {"fp32", "tf32", "fp16", "bf16", "fp8", "int8_tops", "fp4"};

// Numeric (or string) fields a chosen_values entry may name.
const char* const kChoosable[] = {"memory_gib",
                                  "usable_memory_mib_nvidia_smi",
                                  "memory_bandwidth_gbps",
                                  "memory_type",
                                  "sm_count",
                                  "boost_clock_mhz",
                                  "l2_cache_mb",
                                  "tdp_w",
                                  "release_year",
                                  "compute_capability",
                                  "dense_tflops.fp32",
                                  "dense_tflops.tf32",
                                  "dense_tflops.fp16",
                                  "dense_tflops.bf16",
                                  "dense_tflops.fp8",
                                  "dense_tflops.int8_tops",
                                  "dense_tflops.fp4",
                                  "interconnect.nvlink_gbps_bidirectional",
                                  "interconnect.pcie_gen"};

const json* value_at(const json& doc, const std::string& dotted) {
  const json* cur = &doc;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = dotted.find('.', start);
    const std::string key = dotted.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!cur->is_object()) return nullptr;
    cur = member(*cur, key);
    if (!cur) return nullptr;
    if (dot == std::string::npos) return cur;
    start = dot + 1;
  }
}

void check_gpu_doc(const json& doc, const std::string& file, Sink& sink) {
  if (!check_keys(doc, "", "gpu", "ftcost.gpu/1", sink)) return;
  check_schema_value(doc, "ftcost.gpu/1", sink);
  check_id(doc, file, ".-", sink);
  for (const char* k : {"vendor", "name", "architecture", "form_factor", "memory_type"})
    check_nonempty_text(doc, k, "", sink);

  const json* tf = find_field(doc, "dense_tflops");
  if (tf && !tf->is_object()) tf = nullptr;  // reported by the type check
  if (tf) check_keys(*tf, "dense_tflops", "gpu.dense_tflops", "ftcost.gpu/1", sink);
  const json* ic = find_field(doc, "interconnect");
  if (ic && ic->is_object()) {
    check_keys(*ic, "interconnect", "gpu.interconnect", "ftcost.gpu/1", sink);
    const double nv = num_field(*ic, "nvlink_gbps_bidirectional");
    if (have(nv) && (nv < 0 || nv > 20000))
      sink.add("interconnect.nvlink_gbps_bidirectional", Errc::out_of_range,
               "must be between 0 and 20000 GB/s, got " + fmt_num(nv));
    const json* topo = find_field(*ic, "nvlink_topology");
    const bool has_nv = have(nv) && nv > 0;
    const bool has_topo = topo && topo->is_string();
    if (topo && !topo->is_null() &&
        !(has_topo && (*topo == "switch" || *topo == "mesh" || *topo == "bridge")))
      sink.add("interconnect.nvlink_topology", Errc::invalid_value,
               "must be \"switch\", \"mesh\", \"bridge\" or null");
    const double nvmax = num_field(*ic, "nvlink_max_gpus");
    const double nvgen = num_field(*ic, "nvlink_generation");
    if (has_nv != has_topo || has_nv != have(nvmax) || has_nv != have(nvgen))
      sink.add("interconnect.nvlink_topology", Errc::invalid_value,
               "nvlink_generation, nvlink_topology and nvlink_max_gpus are given exactly when "
               "nvlink_gbps_bidirectional is");
    if (have(nvmax) && (nvmax < 2 || nvmax > 576))
      sink.add("interconnect.nvlink_max_gpus", Errc::out_of_range, "must be 2-576, got " + fmt_num(nvmax));
    if (have(nvgen) && (nvgen < 1 || nvgen > 9))
      sink.add("interconnect.nvlink_generation", Errc::out_of_range, "must be 1-9, got " + fmt_num(nvgen));
    const double lanes = num_field(*ic, "pcie_lanes");
    if (have(lanes) && (lanes < 1 || lanes > 32))
      sink.add("interconnect.pcie_lanes", Errc::out_of_range, "must be 1-32, got " + fmt_num(lanes));
    if (const json* p2p = find_field(*ic, "pcie_p2p"); p2p && !p2p->is_null() && !p2p->is_boolean())
      sink.add("interconnect.pcie_p2p", Errc::wrong_type, "must be true, false or null");
    const double pg = num_field(*ic, "pcie_gen");
    if (have(pg) && (pg < 1 || pg > 7))
      sink.add("interconnect.pcie_gen", Errc::out_of_range,
               "must be a PCIe generation 1-7, got " + fmt_num(pg));
  }

  // Sources.
  if (const json* src = find_field(doc, "sources"); src && src->is_array()) {
    if (src->empty())
      sink.add("sources", Errc::missing_field,
               "every GPU needs at least one source (datasheet URL, repository file, nvidia-smi printout)");
    for (std::size_t i = 0; i < src->size(); ++i) {
      const std::string p = "sources[" + std::to_string(i) + "]";
      if (!(*src)[i].is_string()) {
        sink.add(p, Errc::wrong_type, std::string("must be a string, got ") + (*src)[i].type_name());
        continue;
      }
      const std::string sp = source_problem((*src)[i].get<std::string>());
      if (!sp.empty()) sink.add(p, Errc::invalid_value, sp);
    }
  }

  // Where sources disagree: the chosen value and why.
  const std::string dis = str_field(doc, "disagreements");
  const json* chosen = find_field(doc, "chosen_values");
  if (dis.find_first_not_of(" \t\r\n") != std::string::npos &&
      (!chosen || (chosen->is_array() && chosen->empty())))
    sink.add(
        "chosen_values", Errc::missing_field,
        "the file lists disagreements between sources but not the chosen value and why: add chosen_values "
        "[{field, value, alternatives, why}]");
  if (chosen && chosen->is_array()) {
    for (std::size_t i = 0; i < chosen->size(); ++i) {
      const std::string p = "chosen_values[" + std::to_string(i) + "]";
      const json& c = (*chosen)[i];
      if (!check_keys(c, p, "gpu.chosen_values[]", "ftcost.gpu/1", sink)) continue;
      const std::string f = str_field(c, "field");
      bool choosable = false;
      for (const char* k : kChoosable) choosable = choosable || f == k;
      if (!f.empty() && !choosable) {
        sink.add(p + ".field", Errc::invalid_value,
                 in_quotes(f) + " is not a spec field (e.g. memory_bandwidth_gbps, dense_tflops.bf16)");
      } else if (!f.empty() && c.contains("value")) {
        const json* actual = value_at(doc, f);
        const json& claimed = c.at("value");
        bool same = actual && *actual == claimed;
        if (actual && actual->is_number() && claimed.is_number())
          same = std::fabs(actual->get<double>() - claimed.get<double>()) <=
                 1e-9 * std::max(1.0, std::fabs(actual->get<double>()));
        if (!same)
          sink.add(p + ".value", Errc::invalid_value,
                   "is " + clip(claimed.dump(), 40) + " but " + f + " is " +
                       (actual ? clip(actual->dump(), 40) : std::string("missing")) +
                       ": the chosen value must be the one in the file");
      }
      if (const json* alt = find_field(c, "alternatives"); alt && alt->is_array()) {
        if (alt->empty())
          sink.add(p + ".alternatives", Errc::missing_field, "name the other values and who gives them");
        for (std::size_t k = 0; k < alt->size(); ++k)
          if (!(*alt)[k].is_string() || (*alt)[k].get<std::string>().empty())
            sink.add(p + ".alternatives[" + std::to_string(k) + "]", Errc::wrong_type,
                     "must be a non-empty string");
      }
      check_nonempty_text(c, "why", p, sink, 10);
    }
  }

  // Plausibility.
  const std::string vendor = str_field(doc, "vendor");
  const std::string arch = str_field(doc, "architecture");
  const json* ccv = find_field(doc, "compute_capability");
  const std::string cc = ccv && ccv->is_string() ? ccv->get<std::string>() : std::string();
  const Family* fam = nullptr;
  if (vendor == "NVIDIA") {
    if (!ccv) {
      sink.add("compute_capability", Errc::missing_field,
               "NVIDIA GPUs need their CUDA compute capability, e.g. \"9.0\"");
    } else if (!parse_compute_capability(cc)) {
      sink.add("compute_capability", Errc::invalid_value,
               "must be \"major.minor\", e.g. \"8.6\", got " + in_quotes(cc));
    } else {
      for (const auto& f : families())
        if (std::string(f.vendor) == "NVIDIA" && cc_matches(cc, f.cc_prefixes)) fam = &f;
      if (!fam) {
        sink.add("compute_capability", Errc::invalid_value,
                 "compute capability " + cc +
                     " is not one db check knows (7.0-12.x); add its architecture's bounds to "
                     "core/src/db_check.cpp");
      } else if (!contains(arch, fam->arch_word)) {
        sink.add("architecture", Errc::invalid_value,
                 in_quotes(arch) + " does not match compute capability " + cc + " (" + fam->name + ")");
      }
    }
  } else if (vendor == "AMD" || vendor == "Intel") {
    if (ccv)
      sink.add("compute_capability", Errc::invalid_value,
               "is a CUDA notion: null for " + vendor + " devices");
    for (const auto& f : families())
      if (vendor == f.vendor && contains(arch, f.arch_word)) fam = &f;
    if (!fam && !arch.empty())
      sink.add("architecture", Errc::invalid_value,
               in_quotes(arch) +
                   " is not an architecture db check knows (CDNA 2/3/4, Gaudi 2/3); add its bounds to "
                   "core/src/db_check.cpp");
  } else if (!vendor.empty()) {
    sink.add("vendor", Errc::invalid_value,
             in_quotes(vendor) +
                 " must be NVIDIA, AMD or Intel (others need plausibility bounds in core/src/db_check.cpp)");
  }

  const double mem = num_field(doc, "memory_gib");
  const double bw = num_field(doc, "memory_bandwidth_gbps");
  const double usable = num_field(doc, "usable_memory_mib_nvidia_smi");
  const double sms = num_field(doc, "sm_count");
  const double clk = num_field(doc, "boost_clock_mhz");
  const double l2 = num_field(doc, "l2_cache_mb");
  const double tdp = num_field(doc, "tdp_w");
  const double year = num_field(doc, "release_year");

  if (have(mem) && mem <= 0)
    sink.add("memory_gib", Errc::out_of_range, "must be > 0 GiB, got " + fmt_num(mem));
  if (have(bw) && bw <= 0)
    sink.add("memory_bandwidth_gbps", Errc::out_of_range, "must be > 0 GB/s, got " + fmt_num(bw));
  if (have(usable) && usable <= 0)
    sink.add("usable_memory_mib_nvidia_smi", Errc::out_of_range,
             "must be > 0 MiB or null, got " + fmt_num(usable));
  if (have(sms) && (sms < 1 || sms > 1024))
    sink.add("sm_count", Errc::out_of_range, "must be between 1 and 1024, got " + fmt_num(sms));
  if (have(clk) && (clk < 300 || clk > 3500)) {
    std::string m = "must be between 300 and 3500 MHz, got " + fmt_num(clk);
    if (clk > 0 && clk < 4) m += "; looks like GHz: " + fmt_num(clk * 1000);
    sink.add("boost_clock_mhz", Errc::out_of_range, m);
  }
  if (have(l2) && (l2 <= 0 || l2 > 1024))
    sink.add("l2_cache_mb", Errc::out_of_range, "must be between 0 and 1024 MiB, got " + fmt_num(l2));
  if (have(tdp) && tdp <= 0) sink.add("tdp_w", Errc::out_of_range, "must be > 0 W, got " + fmt_num(tdp));

  double dt[7];
  for (int i = 0; i < 7; ++i) {
    dt[i] = tf ? num_field(*tf, kDtypes[i]) : std::nan("");
    if (have(dt[i]) && dt[i] <= 0)
      sink.add(std::string("dense_tflops.") + kDtypes[i], Errc::out_of_range,
               "must be > 0, or null when unsupported; got " + fmt_num(dt[i]));
    if (have(dt[i]) && dt[i] > 50000)
      sink.add(std::string("dense_tflops.") + kDtypes[i], Errc::out_of_range,
               "must be at most 50000 TFLOP/s, got " + fmt_num(dt[i]));
  }
  const double fp32 = dt[0], tf32 = dt[1], fp16 = dt[2], bf16 = dt[3], fp8 = dt[4], fp4 = dt[6];
  const double peak16 = std::max(have(bf16) ? bf16 : 0.0, have(fp16) ? fp16 : 0.0);
  if (tf && peak16 <= 0 && !sink.has_field("dense_tflops.bf16") && !sink.has_field("dense_tflops.fp16"))
    sink.add("dense_tflops.bf16", Errc::missing_field,
             "a GPU needs its dense 16-bit tensor peak (bf16, or fp16 where there is no bf16)");

  if (usable > 0 && mem > 0) {
    const double ratio = usable / (mem * 1024.0);
    if (ratio > 1.001)
      sink.add("usable_memory_mib_nvidia_smi", Errc::out_of_range,
               fmt_num(usable) + " MiB is more than memory_gib (" + fmt_num(mem) +
                   " GiB = " + fmt_num(mem * 1024) + " MiB)");
    else if (ratio < 0.9)
      sink.add(
          "usable_memory_mib_nvidia_smi", Errc::out_of_range,
          fmt_num(usable) + " MiB is less than 90% of memory_gib (" + fmt_num(mem) +
              " GiB): memory_gib is the capacity label in GiB, usable memory is nvidia-smi's total in MiB");
  }
  // An id that carries a memory size ("-80gb") must agree with memory_gib.
  const std::string id = str_field(doc, "id");
  if (ends_with(id, "gb") && mem > 0) {
    std::size_t dash = id.rfind('-');
    const std::string size =
        dash == std::string::npos ? std::string() : id.substr(dash + 1, id.size() - dash - 3);
    if (!size.empty() && size.find_first_not_of("0123456789") == std::string::npos && size.size() < 6 &&
        std::fabs(digits_value(size) - mem) > 0.5)
      sink.add("memory_gib", Errc::invalid_value, "is " + fmt_num(mem) + " but the id says " + size + " GB");
  }

  if (fam) {
    if (have(mem) && mem > 0)
      check_range("memory_gib", mem, fam->mem_lo, fam->mem_hi, "GiB", *fam, sink,
                  {{1.0 / 1024, "looks like MiB"}});
    if (have(bw) && bw > 0)
      check_range("memory_bandwidth_gbps", bw, fam->bw_lo, fam->bw_hi, "GB/s", *fam, sink,
                  {{1000, "looks like TB/s; in GB/s that is"},
                   {0.001, "looks like MB/s; in GB/s that is"},
                   {1.0 / 8, "looks like Gbit/s; in GB/s that is"}});
    if (peak16 > 0) {
      const std::string f16 = have(bf16) && bf16 >= peak16 ? "dense_tflops.bf16" : "dense_tflops.fp16";
      check_range(f16, peak16, fam->peak_lo, fam->peak_hi, "TFLOP/s", *fam, sink,
                  {{0.5, "a 'with sparsity' (2:4) figure? the dense peak is half"},
                   {0.001, "looks like GFLOP/s; in TFLOP/s that is"}});
    }
    if (have(fp32) && fp32 > 0 && fam->fp32_hi > 0)
      check_range("dense_tflops.fp32", fp32, fam->fp32_lo, fam->fp32_hi, "TFLOP/s", *fam, sink);
    if (have(year) && (year < fam->year_lo || year > fam->year_hi))
      sink.add("release_year", Errc::out_of_range,
               fmt_num(year) + " is outside " + fam->name + "'s years (" + std::to_string(fam->year_lo) +
                   "-" + std::to_string(fam->year_hi) + ")");
    if (have(tdp) && tdp > 0)
      check_range("tdp_w", tdp, fam->tdp_lo, fam->tdp_hi, "W", *fam, sink,
                  {{1000, "looks like kW; in W that is"}});
    if (have(bf16) && !fam->bf16)
      sink.add("dense_tflops.bf16", Errc::invalid_value,
               std::string(fam->name) + " has no BF16 tensor cores: use null");
    if (have(fp8) && !fam->fp8)
      sink.add("dense_tflops.fp8", Errc::invalid_value,
               std::string(fam->name) + " has no FP8 tensor cores: use null");
    if (have(fp4) && !fam->fp4)
      sink.add("dense_tflops.fp4", Errc::invalid_value,
               std::string(fam->name) + " has no FP4 tensor cores: use null");
    if (have(tf32) && !fam->tf32)
      sink.add("dense_tflops.tf32", Errc::invalid_value,
               std::string(fam->name) + " has no TF32 tensor cores: use null");
    // Dense peak per SM per clock: a sparsity-doubled or otherwise inflated peak exceeds what the
    // architecture's tensor units can do.
    if (fam->tensor_flop_per_sm_clock > 0 && peak16 > 0 && sms >= 1 && clk > 0) {
      const double per = peak16 * 1e12 / (sms * clk * 1e6);
      const std::string f16 = have(bf16) && bf16 >= peak16 ? "dense_tflops.bf16" : "dense_tflops.fp16";
      if (per > fam->tensor_flop_per_sm_clock * 1.1 && !sink.has_field(f16))
        sink.add(f16, Errc::out_of_range,
                 fmt_num(peak16) + " TFLOP/s is " + fmt_num(std::round(per)) + " FLOP per SM per clock (" +
                     fmt_num(sms) + " SMs at " + fmt_num(clk) + " MHz); " + fam->name + " does at most " +
                     fmt_num(fam->tensor_flop_per_sm_clock) +
                     " dense: a 'with sparsity' figure? store the dense peak (half)");
      else if (per < fam->tensor_flop_per_sm_clock * 0.2 && !sink.has_field(f16))
        sink.add(f16, Errc::out_of_range,
                 fmt_num(peak16) + " TFLOP/s is only " + fmt_num(std::round(per)) +
                     " FLOP per SM per clock; " + fam->name + " tensor units do " +
                     fmt_num(fam->tensor_flop_per_sm_clock) + ": is this the non-tensor rate?");
    }
  }
  if (have(fp32) && fp32 > 0 && sms >= 1 && clk > 0 && fp32 * 1e12 / (sms * clk * 1e6) > 282 &&
      !sink.has_field("dense_tflops.fp32"))
    sink.add("dense_tflops.fp32", Errc::out_of_range,
             fmt_num(fp32) + " TFLOP/s is more than 256 FP32 FLOP per SM per clock (" + fmt_num(sms) +
                 " SMs at " + fmt_num(clk) + " MHz): fp32 is the non-tensor rate");
  if (peak16 > 0) {
    if (have(tf32) && have(bf16) && tf32 > 0.55 * bf16 && !sink.has_field("dense_tflops.tf32"))
      sink.add("dense_tflops.tf32", Errc::out_of_range,
               fmt_num(tf32) + " is more than half the bf16 peak " + fmt_num(bf16) +
                   ": a 'with sparsity' figure?");
    if (have(fp8) && fp8 > 2.1 * peak16 && !sink.has_field("dense_tflops.fp8"))
      sink.add("dense_tflops.fp8", Errc::out_of_range,
               fmt_num(fp8) + " is more than twice the 16-bit peak " + fmt_num(peak16) +
                   ": a 'with sparsity' figure?");
    if (have(fp32) && fp32 > 1.05 * peak16 && !sink.has_field("dense_tflops.fp32"))
      sink.add("dense_tflops.fp32", Errc::out_of_range,
               fmt_num(fp32) + " is above the 16-bit tensor peak " + fmt_num(peak16));
  }
}

// -------------------------------------------------------------------------------------- prices

void check_prices_doc(const json& doc, const std::string& file, const DbCheckOptions& opt, Sink& sink) {
  if (!check_keys(doc, "", "prices", "ftcost.prices/1", sink)) return;
  check_schema_value(doc, "ftcost.prices/1", sink);
  check_id(doc, file, "-", sink);
  check_nonempty_text(doc, "provider", "", sink);
  const std::string cur = str_field(doc, "currency");
  if (find_field(doc, "currency") && cur != "USD")
    sink.add("currency", Errc::invalid_value, "only USD prices are supported, got " + in_quotes(cur));
  const std::string url = str_field(doc, "url");
  if (!url.empty() && url.rfind("https://", 0) != 0 && url.rfind("http://", 0) != 0)
    sink.add("url", Errc::invalid_value, in_quotes(url) + " must be an http(s) URL or null");
  const json* offers = find_field(doc, "offers");
  if (!offers || !offers->is_array()) return;
  if (offers->empty()) sink.add("offers", Errc::missing_field, "a price file needs at least one offer");
  std::map<std::string, std::size_t> seen;
  for (std::size_t i = 0; i < offers->size(); ++i) {
    const std::string p = "offers[" + std::to_string(i) + "]";
    const json& o = (*offers)[i];
    if (!check_keys(o, p, "prices.offers[]", "ftcost.prices/1", sink)) continue;
    const double od = num_field(o, "on_demand_usd_per_gpu_hour");
    const double spot = num_field(o, "spot_usd_per_gpu_hour");
    const double count = num_field(o, "gpu_count");
    for (const auto& [key, v] :
         {std::make_pair("on_demand_usd_per_gpu_hour", od), std::make_pair("spot_usd_per_gpu_hour", spot)}) {
      if (!have(v)) continue;
      if (v <= 0) {
        sink.add(p + "." + key, Errc::out_of_range, "must be > 0 USD per GPU-hour, got " + fmt_num(v));
      } else if (v < 0.01 || v > 50) {
        std::string m = fmt_num(v) + " USD per GPU-hour is implausible (expected 0.01-50)";
        if (have(count) && count > 1 && v / count <= 50)
          m += "; is it the price of the whole " + fmt_num(count) + "-GPU instance? divide by gpu_count";
        sink.add(p + "." + key, Errc::out_of_range, m);
      }
    }
    if (have(od) && have(spot) && od > 0 && spot > od * 1.05)
      sink.add(
          p + ".spot_usd_per_gpu_hour", Errc::out_of_range,
          fmt_num(spot) + " is above the on-demand price " + fmt_num(od) + ": spot prices are discounts");
    if (have(count) && (count < 1 || count > 576))
      sink.add(p + ".gpu_count", Errc::out_of_range, "must be between 1 and 576, got " + fmt_num(count));
    const json* date = find_field(o, "date");
    if (date && date->is_string()) {
      auto days = parse_date_days(date->get<std::string>(), p + ".date");
      if (!days.ok()) {
        sink.add(p + ".date", Errc::invalid_value, days.error().message);
      } else {
        if (days.value() < days_from_civil(2015, 1, 1))
          sink.add(p + ".date", Errc::out_of_range,
                   in_quotes(date->get<std::string>()) + " is before 2015: not a current GPU price");
        if (opt.today_days >= 0 && days.value() > opt.today_days)
          sink.add(p + ".date", Errc::out_of_range,
                   in_quotes(date->get<std::string>()) + " is in the future");
      }
    } else if (o.contains("date") && !date) {
      const std::string note = str_field(o, "date_note");
      if (note.find_first_not_of(" \t\r\n") == std::string::npos && !sink.has_field(p + ".date_note"))
        sink.add(p + ".date_note", Errc::missing_field,
                 "an undated price needs a date_note saying why there is no date");
    }
    const json* src = find_field(o, "source");
    if (src && src->is_string()) {
      const std::string sp = source_problem(src->get<std::string>());
      if (!sp.empty()) sink.add(p + ".source", Errc::invalid_value, sp);
    }
    const json* net = member(o, "network");
    if (net && net->is_object() &&
        check_keys(*net, p + ".network", "prices.offers[].network", "ftcost.prices/1", sink)) {
      const std::string kind = str_field(*net, "kind");
      if (find_field(*net, "kind") && kind != "infiniband" && kind != "roce" && kind != "ethernet")
        sink.add(p + ".network.kind", Errc::invalid_value,
                 "must be infiniband, roce or ethernet, got " + in_quotes(kind));
      const double gb = num_field(*net, "gbit_per_gpu");
      if (have(gb) && (gb <= 0 || gb > 10000))
        sink.add(p + ".network.gbit_per_gpu", Errc::out_of_range,
                 "must be above 0 and at most 10000 Gbit/s per GPU, got " + fmt_num(gb));
      const json* nsrc = find_field(*net, "source");
      if (nsrc && nsrc->is_string()) {
        const std::string sp = source_problem(nsrc->get<std::string>());
        if (!sp.empty()) sink.add(p + ".network.source", Errc::invalid_value, sp);
      }
    }
    const std::string gid = str_field(o, "gpu_id");
    if (find_field(o, "gpu_id") && !id_like(gid, ".-"))
      sink.add(p + ".gpu_id", Errc::invalid_value, in_quotes(gid) + " is not a GPU id");
    const std::string key = gid + "|" + str_field(o, "instance_type") + "|" + str_field(o, "region") + "|" +
                            fmt_num(count) + "|" + str_field(o, "date");
    auto [it, fresh] = seen.emplace(key, i);
    if (!fresh)
      sink.add(p, Errc::invalid_value,
               "duplicate offer: same GPU, instance type, region, GPU count and date as offers[" +
                   std::to_string(it->second) + "]");
  }
}

// --------------------------------------------------------------------------------------- models

void check_model_doc(const json& doc, const std::string& file, Sink& sink) {
  if (!check_keys(doc, "", "model", "ftcost.model/1", sink)) return;
  check_schema_value(doc, "ftcost.model/1", sink);
  check_id(doc, file, ".-", sink);
  check_nonempty_text(doc, "display_name", "", sink);
  check_nonempty_text(doc, "family", "", sink);
  const std::string kind = str_field(doc, "kind");
  if (find_field(doc, "kind") && kind != "dense" && kind != "moe" && kind != "mamba" && kind != "hybrid")
    sink.add("kind", Errc::invalid_value, "must be dense, moe, mamba or hybrid, got " + in_quotes(kind));
  const std::string repo = str_field(doc, "hf_repo");
  if (find_field(doc, "hf_repo")) {
    const std::size_t slash = repo.find('/');
    if (slash == std::string::npos || slash == 0 || slash + 1 >= repo.size() ||
        repo.find('/', slash + 1) != std::string::npos || repo.find_first_of(" \t\r\n") != std::string::npos)
      sink.add("hf_repo", Errc::invalid_value,
               in_quotes(repo) + " must be a Hugging Face repository name \"owner/name\"");
  }
  if (const json* pub = find_field(doc, "published"); pub && pub->is_object()) {
    check_keys(*pub, "published", "model.published", "ftcost.model/1", sink);
    const double total = num_field(*pub, "total_params");
    const double active = num_field(*pub, "active_params");
    if (have(total) && total < 1e6)
      sink.add("published.total_params", Errc::out_of_range,
               "must be a parameter count (>= 1e6), got " + fmt_num(total));
    if (have(active) && (active <= 0 || (have(total) && active > total)))
      sink.add("published.active_params", Errc::out_of_range,
               "must be > 0 and at most total_params, got " + fmt_num(active));
    if (pub->is_object() && pub->contains("active_params") && (kind == "dense" || kind == "mamba") &&
        have(active))
      sink.add("published.active_params", Errc::invalid_value,
               "must be null for a " + kind + " model (every parameter is active)");
    if (pub->is_object() && pub->contains("active_params") && (kind == "moe" || kind == "hybrid") &&
        !have(active) && !sink.has_field("published.active_params"))
      sink.add("published.active_params", Errc::missing_field,
               "a " + kind + " model needs its published active parameter count");
    const double tk = num_field(*pub, "top_k");
    if (have(tk) && (tk < 1 || tk > 4096))
      sink.add("published.top_k", Errc::out_of_range, "must be between 1 and 4096, got " + fmt_num(tk));
    check_nonempty_text(*pub, "source", "published", sink, 8);
  }
  if (const json* cs = find_field(doc, "config_source"); cs && cs->is_object()) {
    for (const char* k : {"model_id", "status"}) {
      if (!cs->contains(k))
        sink.add(std::string("config_source.") + k, Errc::missing_field,
                 "required field is missing (a string)");
      else if (!cs->at(k).is_string())
        sink.add(std::string("config_source.") + k, Errc::wrong_type, "must be a string");
    }
    if (!cs->contains("urls")) {
      sink.add("config_source.urls", Errc::missing_field,
               "required field is missing (an array of where the config comes from)");
    } else if (!cs->at("urls").is_array() || cs->at("urls").empty()) {
      sink.add("config_source.urls", Errc::wrong_type, "must be a non-empty array of strings");
    } else {
      for (std::size_t i = 0; i < cs->at("urls").size(); ++i)
        if (!cs->at("urls")[i].is_string())
          sink.add("config_source.urls[" + std::to_string(i) + "]", Errc::wrong_type, "must be a string");
    }
  }
  // The binding check: the core's loader, then the published counts against the config.
  if (!find_field(doc, "config") || !doc.at("config").is_object()) return;
  auto m = parse_model_file(doc, file);
  if (!m.ok()) {
    sink.add_loader_error(m.error());
    return;
  }
  const ModelSpec& spec = m.value();
  // The file's vocabulary has no "mamba-moe": Mamba blocks alternating with MoE blocks are "hybrid".
  const std::string config_kind = spec.kind() == "mamba-moe" ? "hybrid" : spec.kind();
  if (!kind.empty() && kind != config_kind && !sink.has_field("kind"))
    sink.add("kind", Errc::invalid_value,
             in_quotes(kind) + " but the config describes a " + spec.kind() + " model");
  if (spec.published_total > 0 && !sink.has_field("published.total_params")) {
    const double total = static_cast<double>(spec.params().total());
    if (std::fabs(total - spec.published_total) / spec.published_total > 0.025)
      sink.add("published.total_params", Errc::out_of_range,
               fmt_num(spec.published_total) + " differs from the config's " + fmt_num(total) +
                   " parameters by more than 2.5%: wrong config or wrong published count");
  }
  if (spec.published_active > 0 && !sink.has_field("published.active_params")) {
    const std::int64_t k = spec.published_top_k > 0 ? spec.published_top_k : spec.moe.top_k;
    const double active = static_cast<double>(spec.active_params(k));
    const double no_embed = active - static_cast<double>(spec.params().embedding);
    const double err =
        std::min(std::fabs(active - spec.published_active), std::fabs(no_embed - spec.published_active));
    if (err / spec.published_active > 0.05)
      sink.add("published.active_params", Errc::out_of_range,
               fmt_num(spec.published_active) + " differs from the config's " + fmt_num(active) +
                   " active parameters (top-" + std::to_string(k) + ") by more than 5%");
  }
}

// ------------------------------------------------------------------------------------- datasets

void check_dataset_doc(const json& doc, const std::string& file, Sink& sink) {
  if (!check_keys(doc, "", "dataset", "ftcost.dataset/1", sink)) return;
  check_schema_value(doc, "ftcost.dataset/1", sink);
  check_id(doc, file, ".-", sink);
  check_nonempty_text(doc, "source", "", sink, 8);
  const double q = num_field(doc, "queries");
  const double qp = num_field(doc, "queries_published");
  if (have(q) && q < 1) sink.add("queries", Errc::out_of_range, "must be >= 1, got " + fmt_num(q));
  const double tt = num_field(doc, "template_tokens");
  if (have(tt) && (tt < 0 || tt > 4096))
    sink.add("template_tokens", Errc::out_of_range, "must be between 0 and 4096 tokens, got " + fmt_num(tt));
  if (have(tt) && tt > 0 && str_field(doc, "template_tokens_note").empty())
    sink.add("template_tokens_note", Errc::missing_field, "say where the template token count comes from");
  if (have(q) && have(qp) && q >= 1 && std::fabs(qp - q) / q > 0.1)
    sink.add("queries_published", Errc::out_of_range,
             fmt_num(qp) + " is more than 10% away from queries (" + fmt_num(q) + ")");
  const json* lt = find_field(doc, "length_tokens");
  if (lt && lt->is_object() &&
      check_keys(*lt, "length_tokens", "dataset.length_tokens", "ftcost.dataset/1", sink)) {
    const char* order[] = {"min", "median", "p90", "p99", "max"};
    double prev = 0;
    for (const char* k : order) {
      const double v = num_field(*lt, k);
      if (!have(v)) continue;
      if (v < 1)
        sink.add(std::string("length_tokens.") + k, Errc::out_of_range,
                 "must be >= 1 token, got " + fmt_num(v));
      else if (v < prev)
        sink.add(std::string("length_tokens.") + k, Errc::out_of_range,
                 "must not be below the previous statistic (" + fmt_num(prev) + ")");
      prev = std::max(prev, v);
    }
    const double mean = num_field(*lt, "mean"), mn = num_field(*lt, "min"), mx = num_field(*lt, "max");
    if (have(mean) && have(mn) && have(mx) && (mean < mn || mean > mx))
      sink.add("length_tokens.mean", Errc::out_of_range, fmt_num(mean) + " is outside [min, max]");
    // A preset's quantile table must contain the summary statistics.
    const json* qs = find_field(doc, "quantiles");
    if (qs == nullptr)
      sink.add("quantiles", Errc::missing_field,
               "required of a preset in gpu-db/datasets (a histogram alone is for your own length files)");
    if (qs && qs->is_array()) {
      auto has_point = [&](double u, double v) {
        for (const auto& e : *qs)
          if (e.is_array() && e.size() == 2 && e[0].is_number() && e[1].is_number() &&
              std::fabs(e[0].get<double>() - u) < 1e-12 && std::fabs(e[1].get<double>() - v) < 1e-9)
            return true;
        return false;
      };
      const std::pair<double, const char*> pts[] = {
          {0.0, "min"}, {0.5, "median"}, {0.9, "p90"}, {0.99, "p99"}, {1.0, "max"}};
      for (const auto& [u, k] : pts) {
        const double v = num_field(*lt, k);
        if (have(v) && !has_point(u, v))
          sink.add(
              "quantiles", Errc::invalid_value,
              std::string("must contain [") + fmt_num(u) + ", " + fmt_num(v) + "] (length_tokens." + k + ")");
      }
    }
  }
  auto d = parse_dataset(doc, file);
  if (!d.ok()) sink.add_loader_error(d.error());
}

// ---------------------------------------------------------------------------------- calibrations

struct GpuRef {
  std::string file;
  GpuSpec spec;
  std::string form_factor;
  bool spec_ok = false;
};

std::vector<std::string> name_tokens(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : lower(s)) {
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
      cur += c;
    } else if (!cur.empty()) {
      out.push_back(cur);
      cur.clear();
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

// The model token of a product name: "h100" for "H100 SXM5 80GB", "4090" for "RTX 4090", "a6000" for
// "RTX A6000", "mi300x" for "MI300X".
std::string model_token(const std::string& name) {
  for (const auto& t : name_tokens(name)) {
    if (t == "nvidia" || t == "tesla" || t == "geforce" || t == "amd" || t == "instinct" || t == "intel" ||
        t == "quadro")
      continue;
    if (t.find_first_of("0123456789") != std::string::npos) return t;
  }
  return "";
}

bool has_token(const std::vector<std::string>& toks, const std::string& t) {
  return std::find(toks.begin(), toks.end(), t) != toks.end();
}

// Why the device does not look like `g` (empty when it does); `fieldname` gets the field.
std::string device_mismatch(const Calibration& cal, const GpuRef& g, std::string& fieldname) {
  const auto dev = name_tokens(cal.device.name);
  const std::string want = model_token(g.spec.name);
  if (!want.empty() && !has_token(dev, want)) {
    fieldname = "device.name";
    return in_quotes(cal.device.name) + " does not name a " + g.spec.name + " (no \"" + want + "\" in it)";
  }
  const std::string ff = lower(g.form_factor + " " + g.spec.name + " " + g.spec.id);
  bool sxm = false;
  for (const auto& t : dev) sxm = sxm || t.rfind("sxm", 0) == 0;
  if ((has_token(dev, "pcie") && !contains(ff, "pcie")) || (sxm && !contains(ff, "sxm")) ||
      (has_token(dev, "nvl") && !contains(ff, "nvl"))) {
    fieldname = "device.name";
    return in_quotes(cal.device.name) + " is another form factor than " + g.spec.name + " (" + g.form_factor +
           ")";
  }
  const double mib = static_cast<double>(cal.device.memory_bytes) / 1048576.0;
  if (g.spec.usable_memory_mib > 0) {
    if (std::fabs(mib - g.spec.usable_memory_mib) > 0.02 * g.spec.usable_memory_mib) {
      fieldname = "device.memory_bytes";
      return fmt_num(std::round(mib)) + " MiB does not match " + g.spec.name + " (" +
             fmt_num(g.spec.usable_memory_mib) + " MiB per nvidia-smi)";
    }
  } else if (g.spec.memory_gib > 0) {
    const double label = g.spec.memory_gib * 1024.0;
    if (mib < 0.88 * label || mib > 1.01 * label) {
      fieldname = "device.memory_bytes";
      return fmt_num(std::round(mib)) + " MiB does not match " + g.spec.name + " (" +
             fmt_num(g.spec.memory_gib) + " GiB)";
    }
  }
  if (g.spec.sm_count > 0 && static_cast<double>(cal.device.sm_count) != g.spec.sm_count) {
    fieldname = "device.sm_count";
    return std::to_string(cal.device.sm_count) + " SMs, but " + g.spec.name + " has " +
           fmt_num(g.spec.sm_count) + " (another SKU, or a MIG slice?)";
  }
  const std::string cc = std::to_string(cal.device.cc_major) + "." + std::to_string(cal.device.cc_minor);
  if (!g.spec.compute_capability.empty() && cc != g.spec.compute_capability) {
    fieldname = "device.compute_capability";
    return cc + " but " + g.spec.name + " is " + g.spec.compute_capability;
  }
  return "";
}

// ------------------------------------------------------------------------------------- schemas

void check_schema_doc(const json& doc, const std::string& file, Sink& sink) {
  if (!doc.is_object()) {
    sink.add(kTopLevel, Errc::wrong_type, "a JSON Schema must be an object");
    return;
  }
  const std::string base = basename_of(file);
  if (!ends_with(base, ".schema.json"))
    sink.add(kWholeFile, Errc::invalid_value, "schema files are named <kind>.schema.json");
  for (const char* k : {"$schema", "$id", "title"}) {
    if (!doc.contains(k))
      sink.add(k, Errc::missing_field, "required field is missing (a string)");
    else if (!doc.at(k).is_string())
      sink.add(k, Errc::wrong_type, "must be a string");
  }
  const std::string id = str_field(doc, "$id");
  if (ends_with(base, ".schema.json") && !id.empty()) {
    const std::string kind = base.substr(0, base.size() - 12);
    // every format is at version 1 except the calibration, at 2 since the collectives (calibration.hpp)
    const std::string want =
        kind == "calibration" ? std::string(kCalibrationSchema) : "ftcost." + kind + "/1";
    if (id != want) sink.add("$id", Errc::invalid_value, in_quotes(id) + " should be " + in_quotes(want));
  }
}

// ------------------------------------------------------------------------------- orchestration

struct Entry {
  std::string path;
  std::string rel;
  std::string kind;
  const std::string* content = nullptr;
  bool checked = false;
  Sink sink;
  json doc;
  bool parsed = false;
  std::string id;  // doc["id"] when a string
  // calibrations
  std::string cal_gpu;
  bool cal_ok = false;
  Calibration cal;
  std::vector<std::string> review;  // values above the datasheet (accepted): "field: message"
};

const char* const kFolders[] = {"gpus",  "prices", "models",       "datasets", "stacks",
                                "nodes", "schema", "calibrations", "runs"};

}  // namespace

std::string db_relative_path(const std::string& path) {
  const auto parts = split_path(path);
  if (parts.size() >= 3 && parts[parts.size() - 3] == "calibrations")
    return "calibrations/" + parts[parts.size() - 2] + "/" + parts.back();
  if (parts.size() >= 3 && parts[parts.size() - 3] == "runs")
    return "runs/" + parts[parts.size() - 2] + "/" + parts.back();
  if (parts.size() >= 2) {
    const std::string& folder = parts[parts.size() - 2];
    for (const char* f : kFolders)
      if (folder == f) return folder + "/" + parts.back();
  }
  return "";
}

std::string db_file_kind(const std::string& path) {
  const std::string rel = db_relative_path(path);
  if (rel.empty()) return "";
  const std::string folder = rel.substr(0, rel.find('/'));
  if (folder == "gpus") return "gpu";
  if (folder == "prices") return "prices";
  if (folder == "models") return "model";
  if (folder == "datasets") return "dataset";
  if (folder == "stacks") return "stack";
  if (folder == "nodes") return "node";
  if (folder == "schema") return "schema";
  if (folder == "calibrations") return rel.find('/', 13) != std::string::npos ? "calibration" : "";
  if (folder == "runs") return rel.find('/', 5) != std::string::npos ? "run" : "";
  return "";
}

std::vector<std::string> db_required_keys(const std::string& object_kind) {
  std::vector<std::string> out;
  for (const auto& s : specs_for(object_kind))
    if (s.required) out.push_back(s.key);
  return out;
}

std::vector<std::string> db_allowed_keys(const std::string& object_kind) {
  std::vector<std::string> out;
  for (const auto& s : specs_for(object_kind)) out.push_back(s.key);
  return out;
}

std::string sanitize_utf8(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = utf8_sequence(s, i);
    const auto c = static_cast<unsigned char>(s[i]);
    if (n == 0) {
      out += hex_byte(c);
      ++i;
    } else if (n == 1 && (c < 0x20 || c == 0x7F)) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04X", static_cast<unsigned>(c));
      out += buf;
      ++i;
    } else {
      out.append(s, i, n);
      i += n;
    }
  }
  return out;
}

namespace {

// ---------------------------------------------------------------------------------- runs
// runs/<gpu-id>/<name>.json: a user's training run (ftcost.run/1) contributed as a reference row of
// `ftcost validate`. The run loader checks the fields and their physical ranges against `db` (GPU and model
// exist, memory within the GPU, tokens within the padded shape); here: the GPU is the folder's, the shapes
// were observed (not assumed by an importer), there are timed steps to compare, and the times are not
// below the forward pass at the GPU's peak (the same check as the fit).
void check_run_entries(std::vector<Entry>& entries, const Database& db) {
  for (Entry& e : entries) {
    if (e.kind != "run" || !e.parsed) continue;
    const auto parts = split_path(e.rel);
    const std::string folder_gpu = parts.size() == 3 ? parts[1] : std::string();
    const std::string base = parts.empty() ? std::string() : parts.back();
    if (base.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") !=
        std::string::npos)
      e.sink.add(kWholeFile, Errc::invalid_value,
                 "run file names use letters, digits, '.', '_' and '-' only");
    auto run = parse_run(*e.content, e.rel, db);
    if (!run.ok()) {
      e.sink.add_loader_error(run.error());
      continue;
    }
    if (db.gpu(folder_gpu) == nullptr) {
      e.sink.add(kWholeFile, Errc::unknown_id,
                 "filed under runs/" + folder_gpu + "/ but there is no gpus/" + folder_gpu +
                     ".json: the folder is the id of the GPU the run used");
      continue;
    }
    if (run->model_config.is_object())
      e.sink.add("model.preset", Errc::missing_field,
                 "runs in gpu-db name a model preset of models/ (its config.json alone is not a reference "
                 "model); add the preset first or keep the run to yourself");
    if (run->gpu_id != folder_gpu)
      e.sink.add("gpu", Errc::invalid_value,
                 "the run was recorded on " + run->gpu_id + " but is filed under runs/" + folder_gpu + "/");
    for (std::size_t i = 0; i < run->steps.size(); ++i)
      for (const auto& mb : run->steps[i].micro)
        if (mb.assumed) {
          e.sink.add("steps[" + std::to_string(i) + "].micro_batches", Errc::invalid_value,
                     "shape assumed by an importer, not observed: gpu-db takes runs recorded with "
                     "tools/ftcost_probe.py (observed shapes)");
          break;
        }
    if (run->timed_steps() < 3)
      e.sink.add(
          "steps", Errc::invalid_value,
          "needs at least 3 timed steps outside the warm-up, has " + std::to_string(run->timed_steps()));
    const StackProfile* stack = db.stack(kPaperStackId);
    if (stack == nullptr) continue;
    auto fit = fit_stack_to_runs({run.value()}, db, *stack);
    if (!fit.ok()) e.sink.add_loader_error(fit.error());
  }
}

}  // namespace

DbCheckResult check_db_files(const DbFiles& files, const DbFiles& context, const DbCheckOptions& options) {
  std::vector<Entry> entries;
  std::set<std::string> checked_rels;
  for (const auto& f : files) {
    const std::string rel = db_relative_path(f.first);
    if (!rel.empty()) checked_rels.insert(rel);
  }
  // Context first, so that a checked file that repeats a context id is the one reported.
  for (const auto& f : context) {
    const std::string rel = db_relative_path(f.first);
    if (rel.empty() || checked_rels.count(rel) != 0) continue;
    Entry e;
    e.path = f.first;
    e.rel = rel;
    e.content = &f.second;
    entries.push_back(std::move(e));
  }
  const std::size_t first_checked = entries.size();
  for (const auto& f : files) {
    Entry e;
    e.path = f.first;
    e.rel = db_relative_path(f.first);
    e.content = &f.second;
    e.checked = true;
    entries.push_back(std::move(e));
  }

  DbCheckResult result;
  for (Entry& e : entries) {
    e.sink.file = e.path;
    e.sink.cap = options.max_problems_per_file;
    e.kind = db_file_kind(e.path);
    if (e.checked) {
      ++result.files_checked;
      ++result.files_by_kind[e.kind.empty() ? "other" : e.kind];
    }
    if (e.kind.empty()) {
      const auto parts = split_path(e.path);
      const bool in_cal_root = parts.size() >= 2 && parts[parts.size() - 2] == "calibrations";
      const bool in_run_root = parts.size() >= 2 && parts[parts.size() - 2] == "runs";
      e.sink.add(kWholeFile, Errc::invalid_value,
                 in_cal_root ? "calibrations go in calibrations/<gpu-id>/, the folder of the GPU they measure"
                 : in_run_root
                     ? "runs go in runs/<gpu-id>/, the folder of the GPU they ran on"
                     : "not in a folder of gpu-db/ (gpus, prices, models, datasets, stacks, nodes, schema, "
                       "calibrations/<gpu-id>, runs/<gpu-id>)");
      continue;
    }
    if (!ends_with(e.path, ".json")) {
      e.sink.add(kWholeFile, Errc::invalid_value,
                 "only .json files belong in " + e.rel.substr(0, e.rel.rfind('/') + 1));
      continue;
    }
    if (!parse_text(*e.content, options, e.sink, e.doc)) continue;
    e.parsed = true;
    if (e.doc.is_object()) {
      const json* id = member(e.doc, "id");
      if (id && id->is_string()) e.id = id->get<std::string>();
    }
    if (e.kind == "gpu") {
      check_gpu_doc(e.doc, e.path, e.sink);
      auto g = parse_gpu(e.doc, e.path);
      if (!g.ok()) e.sink.add_loader_error(g.error());
    } else if (e.kind == "prices") {
      check_prices_doc(e.doc, e.path, options, e.sink);
      auto p = parse_prices(e.doc, e.path);
      if (!p.ok()) e.sink.add_loader_error(p.error());
    } else if (e.kind == "model") {
      check_model_doc(e.doc, e.path, e.sink);
    } else if (e.kind == "dataset") {
      check_dataset_doc(e.doc, e.path, e.sink);
    } else if (e.kind == "stack" && member(e.doc, "alias_of") != nullptr) {
      // A thin alias: its base profile is checked as a file of its own; the merged profile is parsed when
      // the database loads (Database::from_files reports an unknown base or a bad override there).
      const json* base = member(e.doc, "alias_of");
      if (!base->is_string() || base->get<std::string>().empty())
        e.sink.add_loader_error(make_error(Errc::wrong_type, "alias_of", "must be a stack profile id"));
      for (const char* k : {"id", "display_name"}) {
        const json* v = member(e.doc, k);
        if (v == nullptr || !v->is_string() || v->get<std::string>().empty())
          e.sink.add_loader_error(make_error(Errc::missing_field, k, "required string is missing"));
      }
      check_id(e.doc, e.path, ".-", e.sink);
    } else if (e.kind == "stack") {
      auto s = parse_stack(e.doc, e.path);
      if (!s.ok()) {
        e.sink.add_loader_error(s.error());
      } else {
        check_id(e.doc, e.path, ".-", e.sink);
      }
    } else if (e.kind == "node") {
      auto n = parse_node(e.doc, e.path);
      if (!n.ok()) {
        e.sink.add_loader_error(n.error());
      } else {
        check_id(e.doc, e.path, ".-", e.sink);
        for (std::size_t i = 0; i < n->sources.size(); ++i) {
          const std::string sp = source_problem(n->sources[i]);
          if (!sp.empty()) e.sink.add("sources[" + std::to_string(i) + "]", Errc::invalid_value, sp);
        }
      }
    } else if (e.kind == "schema") {
      check_schema_doc(e.doc, e.path, e.sink);
    } else if (e.kind == "calibration") {
      const auto parts = split_path(e.rel);
      e.cal_gpu = parts.size() == 3 ? parts[1] : std::string();
      const std::string base = parts.empty() ? std::string() : parts.back();
      if (base.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") !=
          std::string::npos)
        e.sink.add(kWholeFile, Errc::invalid_value,
                   "calibration file names use letters, digits, '.', '_' and '-' only");
      auto c = parse_calibration(e.doc, "");
      if (!c.ok()) {
        e.sink.add_loader_error(c.error());
      } else {
        e.cal = std::move(c).value();
        e.cal_ok = true;
        if (e.cal.meta.mode == "smoke")
          e.sink.add("meta.mode", Errc::invalid_value,
                     "\"smoke\" runs use tiny sizes for device tests; gpu-db takes --quick or --full runs");
        if (e.cal.meta.partial)
          e.sink.add("meta.partial", Errc::invalid_value,
                     "the run was interrupted (not every benchmark ran); contribute a complete run");
      }
    }
  }

  // ---- cross-file checks ----
  std::map<std::string, const Entry*> gpu_by_id;
  std::map<std::string, GpuRef> gpu_refs;
  std::set<std::string> gpu_files;  // every gpus/<id>.json, loadable or not: a broken one is reported once,
                                    // not again by every price or calibration that refers to it
  for (const Entry& e : entries)
    if (e.kind == "gpu") gpu_files.insert(stem_of(e.path));
  for (const Entry& e : entries) {
    if (e.kind != "gpu" || e.id.empty() || stem_of(e.path) != e.id || gpu_by_id.count(e.id) != 0) continue;
    gpu_by_id[e.id] = &e;
    GpuRef ref;
    ref.file = e.rel;
    auto g = parse_gpu(e.doc, e.path);
    if (g.ok()) {
      ref.spec = g.value();
      ref.spec_ok = true;
    }
    ref.form_factor = str_field(e.doc, "form_factor");
    gpu_refs[e.id] = ref;
  }

  std::map<std::string, const Entry*> first_id;    // kind|id
  std::map<std::string, const Entry*> first_name;  // gpu / provider display name
  std::map<std::string, const Entry*> first_cal;   // uuid|created
  for (Entry& e : entries) {
    if (!e.parsed) continue;
    if (!e.id.empty() && e.kind != "schema" && e.kind != "calibration" && e.kind != "run") {
      auto [it, fresh] = first_id.emplace(e.kind + "|" + e.id, &e);
      if (!fresh)
        e.sink.add("id", Errc::invalid_value,
                   "duplicate id " + in_quotes(e.id) + ": " + it->second->path + " has it too");
    }
    if (e.kind == "gpu" || e.kind == "prices") {
      const std::string name = lower(str_field(e.doc, e.kind == "gpu" ? "name" : "provider"));
      if (!name.empty()) {
        auto [it, fresh] = first_name.emplace(e.kind + "|" + name, &e);
        if (!fresh && it->second->id != e.id)
          e.sink.add(e.kind == "gpu" ? "name" : "provider", Errc::invalid_value,
                     in_quotes(str_field(e.doc, e.kind == "gpu" ? "name" : "provider")) + " is already in " +
                         it->second->path + ": one file per " + (e.kind == "gpu" ? "GPU" : "provider"));
      }
    }
    if (e.kind == "node") {
      const std::string gid = str_field(e.doc, "gpu");
      if (!gid.empty() && gpu_files.count(gid) == 0)
        e.sink.add("gpu", Errc::unknown_id, in_quotes(gid) + " is not a GPU in gpus/");
      if (auto g = gpu_refs.find(gid); g != gpu_refs.end() && g->second.spec_ok) {
        const GpuInterconnect& ic = g->second.spec.interconnect;
        const std::string intra = str_field(e.doc, "intra_node");
        const json* n = find_field(e.doc, "gpus");
        const double gpus = n && n->is_number() ? n->get<double>() : 0;
        if ((intra == "nvswitch" || intra == "nvlink-bridge") &&
            (ic.nvlink_gbps_bidirectional <= 0 || gpus > ic.nvlink_max_gpus))
          e.sink.add("intra_node", Errc::invalid_value,
                     in_quotes(intra) + " but " + gid + "'s interconnect joins at most " +
                         std::to_string(ic.nvlink_max_gpus) + " GPUs over NVLink");
        if (intra == "pcie" && ic.nvlink_topology == "switch")
          e.sink.add("intra_node", Errc::invalid_value,
                     "\"pcie\" but " + gid + " sits on an NVSwitch baseboard");
      }
    }
    if (e.kind == "prices") {
      const json* offers = find_field(e.doc, "offers");
      if (offers && offers->is_array()) {
        for (std::size_t i = 0; i < offers->size(); ++i) {
          const json& o = (*offers)[i];
          const std::string gid = str_field(o, "gpu_id");
          if (gid.empty()) continue;
          const std::string p = "offers[" + std::to_string(i) + "]";
          auto g = gpu_refs.find(gid);
          if (g == gpu_refs.end()) {
            if (!e.sink.has_field(p + ".gpu_id") && gpu_files.count(gid) == 0)
              e.sink.add(p + ".gpu_id", Errc::unknown_id, in_quotes(gid) + " is not a GPU in gpus/");
            continue;
          }
          const json* date = find_field(o, "date");
          const json* year = find_field(gpu_by_id[gid]->doc, "release_year");
          if (date && date->is_string() && date->get<std::string>().size() >= 4 && year && is_whole(*year)) {
            const std::string y = date->get<std::string>().substr(0, 4);
            if (y.find_first_not_of("0123456789") == std::string::npos &&
                digits_value(y) < year->get<double>() && !e.sink.has_field(p + ".date"))
              e.sink.add(p + ".date", Errc::out_of_range,
                         in_quotes(date->get<std::string>()) + " is before " + gid + " was released (" +
                             fmt_num(year->get<double>()) + ")");
          }
        }
      }
    }
    if (e.kind == "calibration") {
      if (e.cal_gpu.empty()) continue;
      auto g = gpu_refs.find(e.cal_gpu);
      if (g == gpu_refs.end()) {
        if (gpu_files.count(e.cal_gpu) != 0) continue;  // the GPU file is there but broken: reported there
        e.sink.add(kWholeFile, Errc::unknown_id,
                   "filed under calibrations/" + e.cal_gpu + "/ but there is no gpus/" + e.cal_gpu +
                       ".json: the folder is the id of the GPU measured");
        continue;
      }
      if (!e.cal_ok || !g->second.spec_ok) continue;
      const GpuSpec& spec = g->second.spec;
      const double peak = spec.bf16_tflops > 0 ? spec.bf16_tflops : spec.fp16_tflops;
      auto st = check_against_spec(e.cal, peak, spec.memory_bandwidth_gbps, &e.review);
      if (!st.ok()) e.sink.add_loader_error(st.error());
      std::string fieldname;
      const std::string why = device_mismatch(e.cal, g->second, fieldname);
      if (!why.empty()) {
        std::string suggestion;
        for (const auto& [id, ref] : gpu_refs) {
          std::string ignored;
          if (id != e.cal_gpu && ref.spec_ok && device_mismatch(e.cal, ref, ignored).empty()) {
            suggestion = "; it looks like calibrations/" + id + "/";
            break;
          }
        }
        e.sink.add(fieldname, Errc::invalid_value,
                   "the device does not match the GPU file it is filed under (" + g->second.file +
                       "): " + why + suggestion);
      }
      if (!e.cal.device.uuid_hash.empty()) {
        auto [it, fresh] = first_cal.emplace(e.cal.device.uuid_hash + "|" + e.cal.meta.created_utc, &e);
        if (!fresh)
          e.sink.add("meta.created_utc", Errc::invalid_value,
                     "same device and creation time as " + it->second->path + ": a duplicate calibration");
      }
    }
  }

  // The database as the calculator loads it must load without problems too (this catches whatever the
  // checks above do not know about, e.g. a check added to a loader's cross-references).
  {
    DbFiles rel_files;
    std::map<std::string, Entry*> by_rel;
    for (Entry& e : entries) {
      if (!e.parsed || e.kind.empty() || e.kind == "calibration" || e.kind == "schema" || e.kind == "run" ||
          by_rel.count(e.rel) != 0)
        continue;
      rel_files.emplace_back(e.rel, *e.content);
      by_rel[e.rel] = &e;
    }
    const Database db = Database::from_files(rel_files);
    for (const auto& p : db.problems()) {
      if (p.error.code == Errc::unknown_id) continue;  // references are checked above, without cascades
      auto it = by_rel.find(p.file);
      if (it == by_rel.end() || !it->second->sink.problems.empty()) continue;  // reported with more detail
      it->second->sink.add_loader_error(p.error);
    }
    check_run_entries(entries, db);
  }

  for (std::size_t i = first_checked; i < entries.size(); ++i) {
    for (auto& p : entries[i].sink.problems) {
      p.file = sanitize_utf8(p.file);
      p.field = sanitize_utf8(p.field);
      p.message = sanitize_utf8(p.message);
      result.problems.push_back(std::move(p));
    }
    for (const auto& r : entries[i].review) {
      const std::size_t colon = r.find(": ");
      DbCheckProblem p;
      p.file = sanitize_utf8(entries[i].path);
      p.field = colon == std::string::npos ? std::string(kTopLevel) : sanitize_utf8(r.substr(0, colon));
      p.message = sanitize_utf8(colon == std::string::npos ? r : r.substr(colon + 2));
      p.code = Errc::out_of_range;
      result.review.push_back(std::move(p));
    }
  }
  return result;
}

}  // namespace ftcost
