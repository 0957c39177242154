#include "ftcost/suggest.hpp"

#include <algorithm>
#include <cctype>

namespace ftcost {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  if (a.size() > 64 || b.size() > 64) return 100;
  std::vector<std::size_t> prev(b.size() + 1);
  std::vector<std::size_t> cur(b.size() + 1);
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

namespace {

std::string normalized(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '-' || c == '_' || c == '.' || c == ' ') continue;
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

// The only id satisfying `match`, or "" when none or several do.
template <class Match>
std::string unique_match(const std::vector<std::string>& ids, Match match) {
  std::string found;
  for (const auto& id : ids) {
    if (!match(normalized(id))) continue;
    if (!found.empty()) return "";
    found = id;
  }
  return found;
}

}  // namespace

std::string closest_id(const std::string& typed, const std::vector<std::string>& ids) {
  const std::string t = normalized(typed);
  if (t.empty()) return "";
  std::string hit = unique_match(ids, [&t](const std::string& n) { return n == t; });
  if (!hit.empty()) return hit;
  if (t.size() >= 3) {
    hit = unique_match(ids, [&t](const std::string& n) { return n.compare(0, t.size(), t) == 0; });
    if (!hit.empty()) return hit;
    // a unique part of an id ("4090" in "rtx-4090")
    hit = unique_match(ids, [&t](const std::string& n) { return n.find(t) != std::string::npos; });
    if (!hit.empty()) return hit;
  }
  const std::size_t limit = std::min<std::size_t>(3, std::max<std::size_t>(1, t.size() / 4));
  std::size_t best = limit + 1;
  std::string found;
  bool tie = false;
  for (const auto& id : ids) {
    const std::size_t d = edit_distance(t, normalized(id));
    if (d < best) {
      best = d;
      found = id;
      tie = false;
    } else if (d == best) {
      tie = true;
    }
  }
  return tie ? "" : found;
}

std::string did_you_mean(const std::string& typed, const std::vector<std::string>& ids) {
  const std::string id = closest_id(typed, ids);
  if (!id.empty()) return " (did you mean \"" + id + "\"?)";
  // a prefix of a few ids ("unsloth", "h100"), else a part of a few ("a100"): name them all
  const std::string t = normalized(typed);
  std::vector<std::string> starts;
  for (const auto& i : ids)
    if (t.size() >= 3 && normalized(i).compare(0, t.size(), t) == 0) starts.push_back(i);
  if (starts.empty())
    for (const auto& i : ids)
      if (t.size() >= 3 && normalized(i).find(t) != std::string::npos) starts.push_back(i);
  if (starts.size() < 2 || starts.size() > 4) return "";
  std::string list;
  for (const auto& i : starts) list += (list.empty() ? "\"" : ", \"") + i + "\"";
  return " (did you mean one of " + list + "?)";
}

}  // namespace ftcost
