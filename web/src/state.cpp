#include "state.hpp"

#include "ftcost/json_util.hpp"
#include "ftcost/options.hpp"
#include "ftcost/plan.hpp"

#include <algorithm>

namespace ftcost::web {

const char* view_name(View v) {
  switch (v) {
    case View::calculator:
      return "calculator";
    case View::paper:
      return "paper";
    case View::calibrations:
      return "calibrations";
    case View::plan:
      return "plan";
  }
  return "calculator";
}

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
  // base64url and hex digits need no %-escapes
  if (!s.cal.empty())
    out += "&cal=" + s.cal;
  else if (!s.cal_id.empty())
    out += "&cal-id=" + s.cal_id;
  if (s.view != View::calculator) out += std::string("&view=") + view_name(s.view);
  return out;
}

HashDecode decode_hash(const std::string& hash_in) {
  HashDecode d;
  d.state.request = default_request();
  std::string hash = hash_in;
  if (!hash.empty() && hash[0] == '#') hash.erase(0, 1);
  if (hash.empty()) return d;
  d.present = true;
  if (hash.size() > 8192) {
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
      const std::string ck = k.substr(5);
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
