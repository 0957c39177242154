// gpu-db checker: text helpers, JSON paths in raw text, and parsing a file's text (size, UTF-8, nesting,
// syntax, duplicate keys) before any rule family looks at it.
#include "checks.hpp"

#include <algorithm>
#include <cstdio>
#include <set>

namespace ftcost::dbcheck {

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
  std::size_t line = 1;
  std::size_t col = 1;
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
std::string clip(const std::string& s, std::size_t max_chars) {
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

namespace {

// The tokenizer of path_at: the open objects and arrays, the key or index in each, and whether a string
// (a key or a value) is being read.
class PathScanner {
 public:
  void feed(char c) {
    if (in_string_)
      string_char(c);
    else
      structural_char(c);
  }

  std::string path() const {
    std::vector<std::string> parts;
    for (std::size_t f = 0; f < frames_.size(); ++f) {
      const Frame& fr = frames_[f];
      if (fr.object) {
        if (f + 1 == frames_.size() && in_string_ && is_key_) {
          parts.push_back(buf_);  // inside a key: name the key being read
        } else if (!fr.key.empty()) {
          parts.push_back(fr.key);
        }
      } else {
        parts.push_back("[" + std::to_string(fr.index) + "]");
      }
    }
    return render_path(parts);
  }

 private:
  struct Frame {
    bool object;
    bool expect_key;
    std::string key;
    std::size_t index;
  };

  void string_char(char c) {
    if (escape_) {
      escape_ = false;
      if (is_key_) buf_ += c;
    } else if (c == '\\') {
      escape_ = true;
      if (is_key_) buf_ += c;
    } else if (c == '"') {
      in_string_ = false;
      if (is_key_ && !frames_.empty()) frames_.back().key = buf_;
    } else if (is_key_ && buf_.size() < 96) {
      buf_ += c;
    }
  }

  void structural_char(char c) {
    switch (c) {
      case '"':
        in_string_ = true;
        is_key_ = !frames_.empty() && frames_.back().object && frames_.back().expect_key;
        buf_.clear();
        break;
      case '{':
        frames_.push_back(Frame{true, true, "", 0});
        break;
      case '[':
        frames_.push_back(Frame{false, false, "", 0});
        break;
      case '}':
      case ']':
        if (!frames_.empty()) frames_.pop_back();
        break;
      case ':':
        if (!frames_.empty() && frames_.back().object) frames_.back().expect_key = false;
        break;
      case ',':
        if (frames_.empty()) break;
        if (frames_.back().object)
          frames_.back().expect_key = true;
        else
          ++frames_.back().index;
        break;
      default:
        break;
    }
  }

  std::vector<Frame> frames_;
  bool in_string_ = false;
  bool escape_ = false;
  bool is_key_ = false;
  std::string buf_;
};

}  // namespace

// The JSON path of the value that contains byte `offset` of `text`, found with a small tokenizer (the
// text need not be valid JSON past the offset). Used to name the field of syntax, nesting and UTF-8
// errors.
std::string path_at(const std::string& text, std::size_t offset) {
  PathScanner scanner;
  offset = std::min(offset, text.size());
  for (std::size_t i = 0; i < offset; ++i) scanner.feed(text[i]);
  return scanner.path();
}

namespace {

// ------------------------------------------------------------------------------------ parsing

class DupKeySax : public nlohmann::json_sax<json> {
 public:
  DupKeySax(const std::string& text, Sink& sink) : text_(text), sink_(sink) {}

  bool null() override { return value(); }
  bool boolean(bool /*val*/) override { return value(); }
  bool number_integer(number_integer_t /*val*/) override { return value(); }
  bool number_unsigned(number_unsigned_t /*val*/) override { return value(); }
  bool number_float(number_float_t /*val*/, const string_t& /*s*/) override { return value(); }
  bool string(string_t& /*val*/) override { return value(); }
  bool binary(binary_t& /*val*/) override { return value(); }
  bool start_object(std::size_t /*elements*/) override {
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
  bool start_array(std::size_t /*elements*/) override {
    value();
    frames_.push_back(Frame{false, {}, "", 0});
    return true;
  }
  bool end_array() override {
    frames_.pop_back();
    return true;
  }
  bool parse_error(std::size_t position, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& ex) override {
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

}  // namespace

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
}  // namespace ftcost::dbcheck
