#include "state.hpp"

#include "ftcost/calibration_share.hpp"
#include "ftcost/enum_names.hpp"
#include "ftcost/json_util.hpp"
#include "ftcost/options.hpp"
#include "ftcost/plan.hpp"

#include <algorithm>
#include <cstdint>

namespace ftcost::web {

constexpr EnumName<View> kViewNames[] = {{View::calculator, "calculator"},
                                         {View::paper, "paper"},
                                         {View::calibrations, "calibrations"},
                                         {View::plan, "plan"}};
const char* view_name(View v) { return enum_name(kViewNames, v, "calculator"); }

Request default_request() {
  return Request{{"model", "mixtral-8x7b"}, {"gpu", "a40"},         {"method", "qlora"},
                 {"moe", "sparse"},         {"dataset", "math14k"}, {"batch", "max"}};
}

std::string percent_encode(const std::string& s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
        c == '.' || c == '~' || c == ',' || c == '/') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

std::string percent_decode(const std::string& s, bool* ok) {
  auto val = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  bool good = true;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%') {
      int hi = i + 2 < s.size() ? val(s[i + 1]) : -1;
      int lo = i + 2 < s.size() ? val(s[i + 2]) : -1;
      if (hi < 0 || lo < 0) {
        good = false;
        out += s[i];
        continue;
      }
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else if (s[i] == '+') {
      out += ' ';
    } else {
      out += s[i];
    }
  }
  if (ok != nullptr) *ok = good;
  return out;
}

// ---- the length file in a link ("data=") ------------------------------------------------------------

namespace {

constexpr unsigned char kDataVersion = 1;
constexpr unsigned kDataExact = 1;  // every bin is one length (lo == hi): no widths
constexpr unsigned kDataJson = 2;   // the ftcost.dataset/1 JSON follows as text (quantile tables)
constexpr std::uint64_t kDataMaxBins = 1u << 20;

void put_varint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}

void put_text(std::string& out, const std::string& t) {
  put_varint(out, t.size());
  out += t;
}

std::uint64_t whole(double v) { return v > 0 ? static_cast<std::uint64_t>(v) : 0; }

// A bin's gap to the previous one and its count in one byte when both are below 15 (the nibble 15: the value
// less 15 follows as a varint).
void put_bin(std::string& out, std::uint64_t gap, std::uint64_t count) {
  const std::uint64_t g = std::min<std::uint64_t>(gap, 15), c = std::min<std::uint64_t>(count, 15);
  out += static_cast<char>(g << 4 | c);
  if (g == 15) put_varint(out, gap - 15);
  if (c == 15) put_varint(out, count - 15);
}

// Reads the bytes of a link's data; every read checks the end.
class DataReader {
 public:
  explicit DataReader(const std::string& b) : b_(b) {}
  Result<std::uint64_t> varint() {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 63; shift += 7) {
      FTCOST_TRY(c, byte());
      v |= static_cast<std::uint64_t>(c & 0x7f) << shift;
      if ((c & 0x80) == 0) return v;
    }
    return bad("a number is too long");
  }
  Result<unsigned> byte() {
    if (at_ >= b_.size()) return bad("ends early (the link was cut off?)");
    return static_cast<unsigned char>(b_[at_++]);
  }
  Result<std::string> text() {
    FTCOST_TRY(n, varint());
    if (n > b_.size() - at_) return bad("ends early (the link was cut off?)");
    const auto len = static_cast<std::size_t>(n);
    std::string t = b_.substr(at_, len);
    at_ += len;
    return t;
  }
  Result<std::uint64_t> nibble_value(unsigned nibble) {
    if (nibble < 15) return static_cast<std::uint64_t>(nibble);
    FTCOST_TRY(more, varint());
    return more + 15;
  }
  bool done() const { return at_ == b_.size(); }
  static Error bad(const std::string& why) {
    return make_error(Errc::invalid_value, "data", "the link's length file " + why);
  }

 private:
  const std::string& b_;
  std::size_t at_ = 0;
};

Result<json> decode_bins(DataReader& r, bool exact) {
  FTCOST_TRY(n, r.varint());
  if (n == 0 || n > kDataMaxBins) return DataReader::bad("has no bins or too many");
  json bins = json::array();
  std::uint64_t prev_hi = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    FTCOST_TRY(packed, r.byte());
    FTCOST_TRY(gap, r.nibble_value(packed >> 4));
    FTCOST_TRY(count, r.nibble_value(packed & 15));
    std::uint64_t width = 0;
    if (!exact) {
      FTCOST_TRY(w, r.varint());
      width = w;
    }
    const std::uint64_t lo = prev_hi + 1 + gap, hi = lo + width;
    if (gap > kDataMaxBins * 8 || width > kDataMaxBins * 8 ||
        hi > static_cast<std::uint64_t>(kMaxSampleTokens))
      return DataReader::bad("has a length beyond " +
                             std::to_string(static_cast<long long>(kMaxSampleTokens)));
    bins.push_back(json::array({lo, hi, count}));
    prev_hi = hi;
  }
  return bins;
}

}  // namespace

std::string dataset_link_encode(const Dataset& d, const std::string& file_text) {
  std::string b(1, static_cast<char>(kDataVersion));
  if (d.histogram.empty()) {  // a quantile table: its JSON, without the file's white space
    put_varint(b, kDataJson);
    const json doc = json::parse(file_text, nullptr, false);
    put_text(b, doc.is_discarded() ? file_text : doc.dump());
    return base64url_encode(b);
  }
  const bool exact = std::all_of(d.histogram.begin(), d.histogram.end(),
                                 [](const LengthBin& x) { return whole(x.hi) == whole(x.lo); });
  put_varint(b, exact ? kDataExact : 0);
  put_varint(b, whole(d.queries));
  put_varint(b, whole(d.template_tokens));
  for (const std::string* t : {&d.id, &d.display_name, &d.source, &d.tokenizer}) put_text(b, *t);
  put_varint(b, d.histogram.size());
  std::uint64_t prev_hi = 0;
  for (const LengthBin& x : d.histogram) {
    const std::uint64_t lo = whole(x.lo), hi = whole(x.hi);
    put_bin(b, lo > prev_hi ? lo - prev_hi - 1 : 0, whole(x.count));
    if (!exact) put_varint(b, hi - lo);
    prev_hi = hi;
  }
  return base64url_encode(b);
}

Result<std::string> dataset_link_decode(const std::string& data) {
  FTCOST_TRY(bytes, base64url_decode(data, "data"));
  DataReader r(bytes);
  FTCOST_TRY(version, r.byte());
  if (version != kDataVersion)
    return DataReader::bad("was written by another version of the calculator (format " +
                           std::to_string(version) + ")");
  FTCOST_TRY(flags, r.varint());
  if ((flags & kDataJson) != 0) {
    FTCOST_TRY(text, r.text());
    return text;
  }
  FTCOST_TRY(queries, r.varint());
  FTCOST_TRY(template_tokens, r.varint());
  json j{{"schema", "ftcost.dataset/1"}};
  for (const char* k : {"id", "display_name", "source", "tokenizer"}) {
    FTCOST_TRY(t, r.text());
    if (!t.empty() || std::string(k) != "tokenizer") j[k] = t;  // as Dataset::to_file_json writes them
  }
  j["queries"] = queries;
  if (template_tokens > 0) j["template_tokens"] = template_tokens;
  FTCOST_TRY(bins, decode_bins(r, (flags & kDataExact) != 0));
  if (!r.done()) return DataReader::bad("has bytes after its last bin");
  j["histogram"] = bins;
  return j.dump();
}

std::string pin_encode(const std::map<std::string, std::string>& pin) {
  std::string inner;
  for (const auto& [k, v] : pin)
    inner += (inner.empty() ? "" : "&") + percent_encode(k) + "=" + percent_encode(v);
  return percent_encode(inner);
}

std::string encode_hash(const UiState& s) {
  std::string out = "v=" + std::to_string(kHashVersion);
  // the option table's order; options whose values are files (calibration, run) are never part of a link
  for (const auto& o : job_options()) {
    if (!o.in_url) continue;
    const std::string& key = o.key;
    auto it = s.request.find(key);
    if (it == s.request.end() || it->second.empty()) continue;
    out += "&" + key + "=" + percent_encode(it->second);
  }
  // the plan's constraints, in plan_constraint_keys() order
  for (const auto& k : plan_constraint_keys()) {
    auto it = s.plan.find(k.key);
    if (it == s.plan.end() || it->second.empty()) continue;
    out += "&plan-" + k.key + "=" + percent_encode(it->second);
  }
  if (s.pinned) out += "&pin=" + pin_encode(s.pin);
  // base64url and hex digits need no %-escapes
  if (!s.cal.empty())
    out += "&cal=" + s.cal;
  else if (!s.cal_id.empty())
    out += "&cal-id=" + s.cal_id;
  if (!s.data.empty()) out += "&data=" + s.data;
  if (s.view != View::calculator) out += std::string("&view=") + view_name(s.view);
  return out;
}

namespace {

// The link's "pin" (pin_encode): the pinned job's keys that differ from the job; a key that is not a
// shareable option is left out with a problem.
void decode_pin(const std::string& v, HashDecode& d) {
  d.state.pinned = true;
  const auto& keys = request_keys();
  std::size_t start = 0;
  while (start < v.size()) {
    std::size_t end = v.find('&', start);
    if (end == std::string::npos) end = v.size();
    const std::string part = v.substr(start, end - start);
    start = end + 1;
    const std::size_t eq = part.find('=');
    bool ok1 = true, ok2 = true;
    const std::string k = percent_decode(part.substr(0, eq), &ok1);
    const std::string val =
        eq == std::string::npos ? std::string() : percent_decode(part.substr(eq + 1), &ok2);
    const Option* opt = find_option(k);
    if (!ok1 || !ok2 || std::find(keys.begin(), keys.end(), k) == keys.end() ||
        (opt != nullptr && !opt->in_url) || val.size() > 256)
      d.problems.push_back("the pinned job's setting \"" + part + "\" ignored");
    else
      d.state.pin[k] = val;
  }
}

}  // namespace

HashDecode decode_hash(const std::string& hash_in) {
  HashDecode d;
  d.state.request = default_request();
  std::string hash = hash_in;
  if (!hash.empty() && hash[0] == '#') hash.erase(0, 1);
  if (hash.empty()) return d;
  d.present = true;
  if (hash.size() > kMaxHashChars) {
    d.problems.push_back("the link's settings are too long (" + std::to_string(hash.size()) +
                         " characters); showing the defaults");
    return d;
  }
  std::vector<std::pair<std::string, std::string>> pairs;
  std::size_t start = 0;
  while (start <= hash.size()) {
    std::size_t end = hash.find('&', start);
    if (end == std::string::npos) end = hash.size();
    std::string part = hash.substr(start, end - start);
    start = end + 1;
    if (part.empty()) continue;
    std::size_t eq = part.find('=');
    bool ok1 = true, ok2 = true;
    std::string k = percent_decode(part.substr(0, eq), &ok1);
    std::string v = eq == std::string::npos ? std::string() : percent_decode(part.substr(eq + 1), &ok2);
    if (!ok1 || !ok2) d.problems.push_back("\"" + part + "\" has a broken %-escape");
    pairs.emplace_back(k, v);
  }
  auto version = std::find_if(pairs.begin(), pairs.end(), [](const auto& p) { return p.first == "v"; });
  // a link to a view only ("#view=paper"): the default job on that view, nothing is wrong with it
  const bool view_only = !pairs.empty() && std::all_of(pairs.begin(), pairs.end(),
                                                       [](const auto& p) { return p.first == "view"; });
  if (version == pairs.end() && view_only) {
    const std::string& v = pairs.back().second;
    if (v == "paper")
      d.state.view = View::paper;
    else if (v == "calibrations")
      d.state.view = View::calibrations;
    else if (v != "calculator")
      d.problems.push_back("unknown view \"" + v + "\" ignored");
    return d;
  }
  if (version == pairs.end()) {
    d.problems.insert(d.problems.begin(), "this link has no ftcost settings version (v=" +
                                              std::to_string(kHashVersion) + "); showing the defaults");
    return d;
  }
  if (version->second != std::to_string(kHashVersion)) {
    d.problems.insert(d.problems.begin(),
                      "this link was made by another version of the calculator (v=" + version->second +
                          ", this page reads v=" + std::to_string(kHashVersion) + "); showing the defaults");
    return d;
  }
  Request r;
  const auto& keys = request_keys();
  for (const auto& [k, v] : pairs) {
    if (k == "v") continue;
    if (k == "view") {
      if (v == "paper")
        d.state.view = View::paper;
      else if (v == "calibrations")
        d.state.view = View::calibrations;
      else if (v == "calculator")
        d.state.view = View::calculator;
      else if (v == "plan")
        d.state.view = View::plan;
      else
        d.problems.push_back("unknown view \"" + v + "\" ignored");
      continue;
    }
    if (k.rfind("plan-", 0) == 0) {
      // "plan-gpus" (the list of GPU types before it was renamed "gpu-types"): older links
      const std::string ck = k == "plan-gpus" ? std::string("gpu-types") : k.substr(5);
      const auto& cks = plan_constraint_keys();
      if (std::none_of(cks.begin(), cks.end(), [&ck](const PlanConstraintKey& c) { return c.key == ck; }))
        d.problems.push_back("unknown plan setting \"" + ck + "\" ignored");
      else if (v.size() > 1024)
        d.problems.push_back("plan setting \"" + ck + "\" is too long; ignored");
      else
        d.state.plan[ck] = v;
      continue;
    }
    if (k == "cal") {
      if (v.size() > kLinkCalMaxChars ||
          v.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                              "0123456789-_") != std::string::npos)
        d.problems.push_back(
            "the link's calibration (cal) is not a calibration the calculator wrote; ignored");
      else
        d.state.cal = v;
      continue;
    }
    if (k == "data") {
      if (v.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") !=
          std::string::npos)
        d.problems.push_back("the link's length file (data) is not one the calculator wrote; ignored");
      else
        d.state.data = v;
      continue;
    }
    if (k == "pin") {
      decode_pin(v, d);
      continue;
    }
    if (k == "cal-id") {
      if (v.size() != 16 || v.find_first_not_of("0123456789abcdef") != std::string::npos)
        d.problems.push_back("the link's calibration fingerprint (cal-id) is not 16 hex digits; ignored");
      else
        d.state.cal_id = v;
      continue;
    }
    const Option* opt = find_option(k);
    if (opt != nullptr && !opt->in_url) {
      d.problems.push_back(k + " files are not part of links (load yours in the calculator)");
      continue;
    }
    if (std::find(keys.begin(), keys.end(), k) == keys.end()) {
      d.problems.push_back("unknown setting \"" + k + "\" ignored");
      continue;
    }
    if (v.size() > 256) {
      d.problems.push_back("setting \"" + k + "\" is too long; ignored");
      continue;
    }
    r[k] = v;
  }
  // a link that names no job option ("v=1&view=paper") opens the default job
  if (!r.empty()) d.state.request = r;
  return d;
}

std::string request_to_json_text(const Request& r) {
  json j = json::object();
  for (const auto& [k, v] : r) j[k] = v;
  return j.dump();
}

}  // namespace ftcost::web
