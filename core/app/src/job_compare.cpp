#include "ftcost/job_compare.hpp"

#include "ftcost/options.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>

namespace ftcost {

namespace {

const json& at(const json& j, const char* key) {
  static const json null_value;
  if (!j.is_object()) return null_value;
  auto it = j.find(key);
  return it == j.end() ? null_value : *it;
}

std::string str(const json& j, const char* key) {
  const json& v = at(j, key);
  return v.is_string() ? v.get<std::string>() : std::string();
}

// A metric of an estimate: null when the estimate has none (an error, or a batch that does not fit).
json metric(const json& est, const std::string& name) {
  if (name == "peak_memory_gib") return at(at(est, "memory_gib"), "total");
  if (name == "cost_usd_per_gpu_hour") return at(at(est, "price"), "usd_per_gpu_hour");
  const json& v = at(est, name.c_str());
  return v.is_number() ? v : json();
}

json summary(const json& est) {
  if (est.contains("error")) return json{{"error", at(at(est, "error"), "message")}};
  return json{{"model", str(at(est, "model"), "id")},
              {"gpu", str(at(est, "gpu"), "id")},
              {"gpus", at(est, "gpus").is_number() ? at(est, "gpus") : json(1)},
              {"method", str(at(est, "inputs"), "method")},
              {"stack", str(at(est, "stack"), "id")},
              {"calibrated", at(est, "calibrated").is_boolean() && at(est, "calibrated").get<bool>()},
              {"memory_state", str(est, "memory_state")},
              {"provider", str(at(est, "price"), "provider")}};
}

struct Metric {
  const char* key;
  const char* label;
  const char* unit;
};
constexpr Metric kMetrics[] = {
    {"peak_memory_gib", "peak memory", "GiB"},
    {"max_batch_size", "max batch", "samples"},
    {"batch_size", "batch", "samples"},
    {"step_time_s", "step time", "s"},
    {"throughput_queries_per_s", "throughput", "queries/s"},
    {"time_hours", "time", "h"},
    {"cost_usd_per_gpu_hour", "price", "USD/GPU-h"},
    {"cost_usd", "cost", "USD"},
};

std::string num_text(const json& v) {
  if (!v.is_number()) return "-";
  const double d = v.get<double>();
  char b[64];
  const bool tiny = d != 0 && std::fabs(d) < 0.01;
  if (!tiny && (std::fabs(d) >= 1000 || d == std::floor(d)))
    std::snprintf(b, sizeof b, "%.0f", d);
  else
    std::snprintf(b, sizeof b, "%.3g", d);
  return b;
}

}  // namespace

Result<Request> apply_vs(const std::string& spec, const Request& base) {
  if (spec.empty()) return make_error(Errc::invalid_value, "--vs", "needs KEY=VALUE[,KEY=VALUE]");
  Request out = base;
  std::string last_key;
  std::size_t start = 0;
  Request given;
  while (start <= spec.size()) {
    std::size_t end = spec.find(',', start);
    if (end == std::string::npos) end = spec.size();
    const std::string piece = spec.substr(start, end - start);
    start = end + 1;
    const std::size_t eq = piece.find('=');
    if (eq == std::string::npos) {
      if (last_key.empty() || piece.empty())
        return make_error(
            Errc::invalid_value, "--vs",
            "\"" + piece + "\" is not KEY=VALUE (KEY a job option such as method, gpu, lora-rank)");
      given[last_key] += "," + piece;  // a list value: lora-targets=w1,w2
      continue;
    }
    std::string key = piece.substr(0, eq);
    if (key.rfind("--", 0) == 0) key.erase(0, 2);
    const Option* o = find_option(key);
    if (o == nullptr)
      return make_error(Errc::invalid_value, "--vs",
                        "\"" + key + "\" is not a job option of ftcost estimate");
    if (eq + 1 >= piece.size()) return make_error(Errc::invalid_value, "--vs", key + " needs a value");
    if (given.count(key) != 0)  // (the last value used to win silently)
      return make_error(
          Errc::invalid_value, "--vs",
          key + " is given twice (" + given[key] + ", " + piece.substr(eq + 1) + "); give each key once");
    given[key] = piece.substr(eq + 1);
    last_key = key;
  }
  for (const auto& [k, v] : given) out[k] = v;
  return out;
}

json compare_jobs(const Request& req_a, const json& est_a, const Request& req_b, const json& est_b) {
  json inputs = json::array();
  for (const auto& o : job_options()) {
    auto ia = req_a.find(o.key);
    auto ib = req_b.find(o.key);
    const std::string a = ia == req_a.end() ? std::string("(default)") : ia->second;
    const std::string b = ib == req_b.end() ? std::string("(default)") : ib->second;
    if (a != b) inputs.push_back(json{{"key", o.key}, {"a", a}, {"b", b}});
  }
  json rows = json::array();
  for (const auto& m : kMetrics) {
    const json va = est_a.contains("error") ? json() : metric(est_a, m.key);
    const json vb = est_b.contains("error") ? json() : metric(est_b, m.key);
    json row = {{"metric", m.key}, {"label", m.label}, {"unit", m.unit}, {"a", va}, {"b", vb}};
    if (va.is_number() && vb.is_number()) {
      const double a = va.get<double>();
      const double b = vb.get<double>();
      row["difference"] = b - a;
      row["ratio"] = a != 0 ? json(b / a) : json();
    } else {
      row["difference"] = nullptr;
      row["ratio"] = nullptr;
    }
    rows.push_back(row);
  }
  return json{{"a", summary(est_a)}, {"b", summary(est_b)}, {"inputs", inputs}, {"rows", rows}};
}

std::string compare_jobs_text(const json& cmp) {
  std::ostringstream o;
  auto side = [&](const char* name, const json& s) {
    o << name << ": ";
    if (s.contains("error")) {
      o << "no estimate (" << str(s, "error") << ")\n";
      return;
    }
    o << str(s, "model") << " on " << str(s, "gpu") << ", " << str(s, "method") << ", stack "
      << str(s, "stack")
      << (at(s, "calibrated").is_boolean() && at(s, "calibrated").get<bool>() ? " (calibrated)"
                                                                              : " (spec-only)")
      << ", memory " << str(s, "memory_state") << "\n";
  };
  side("A", at(cmp, "a"));
  side("B", at(cmp, "b"));
  o << "options that differ:";
  if (at(cmp, "inputs").empty()) o << " none";
  for (const auto& d : at(cmp, "inputs"))
    o << " " << str(d, "key") << " " << str(d, "a") << " -> " << str(d, "b") << ";";
  o << "\n";
  char line[256];
  std::snprintf(line, sizeof line, "%-12s %-10s %12s %12s %12s %8s\n", "metric", "unit", "A", "B", "B - A",
                "B / A");
  o << line;
  for (const auto& r : at(cmp, "rows")) {
    const json& ratio = at(r, "ratio");
    std::string rt = "-";
    if (ratio.is_number()) {
      char b[32];
      std::snprintf(b, sizeof b, "%.2fx", ratio.get<double>());
      rt = b;
    }
    std::snprintf(line, sizeof line, "%-12s %-10s %12s %12s %12s %8s\n", str(r, "label").c_str(),
                  str(r, "unit").c_str(), num_text(at(r, "a")).c_str(), num_text(at(r, "b")).c_str(),
                  num_text(at(r, "difference")).c_str(), rt.c_str());
    o << line;
  }
  return o.str();
}

}  // namespace ftcost
