// The plan's request: its constraint keys (the CLI's form), the keys the plan chooses, and their parsing.
#include "ftcost/options.hpp"
#include "ftcost/parallel.hpp"
#include "ftcost/plan.hpp"
#include "ftcost/plan_config.hpp"
#include "ftcost/shapes.hpp"
#include "ftcost/units.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <memory>
#include <set>
#include <sstream>

namespace ftcost {

namespace {

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  for (char ch : text + ",") {
    if (ch == ',') {
      const std::size_t a = cur.find_first_not_of(" \t");
      const std::size_t b = cur.find_last_not_of(" \t");
      if (a != std::string::npos) out.push_back(cur.substr(a, b - a + 1));
      cur.clear();
    } else {
      cur += ch;
    }
  }
  return out;
}

// A decimal number only (no hex, inf, nan), finite.
Result<double> parse_number(const std::string& text, const std::string& flag, double lo, double hi) {
  const bool plain = !text.empty() && text.find_first_not_of("0123456789.eE+-") == std::string::npos;
  char* end = nullptr;
  const double v = plain ? std::strtod(text.c_str(), &end) : 0;
  if (!plain || end == nullptr || *end != '\0' || !std::isfinite(v))
    return make_error(Errc::invalid_value, flag, "must be a number, got \"" + text + "\"");
  if (v < lo || v > hi)
    return make_error(Errc::out_of_range, flag,
                      "must be between " + json(lo).dump() + " and " + json(hi).dump() + ", got " + text);
  return v;
}
Result<std::int64_t> parse_whole(const std::string& text, const std::string& flag, double lo, double hi) {
  FTCOST_TRY(v, parse_number(text, flag, lo, hi));
  if (std::floor(v) != v) return make_error(Errc::invalid_value, flag, "must be a whole number, got " + text);
  return static_cast<std::int64_t>(v);
}
}  // namespace

const std::vector<PlanConstraintKey>& plan_constraint_keys() {
  static const std::vector<PlanConstraintKey> keys = {
      {"deadline", "HOURS: the job must finish within this many hours (default: none)"},
      {"budget", "USD: the job must cost at most this much (default: none)"},
      {"max-gpus", "N: at most this many GPUs in the whole shape (default: no limit)"},
      {"providers", "LIST: comma-separated provider ids to rent from (default: all)"},
      {"spot", "on | off: allow spot (interruptible) offers (default off)"},
      {"gpu-types", "LIST: comma-separated GPU type ids to consider (default: all)"},
      {"gpus", "old name of --gpu-types (a list of GPU type ids; a count is refused: the plan chooses it)"},
      {"methods", "LIST of full,lora,qlora the plan may choose from (default: the job's --method)"},
      {"stacks", "LIST: comma-separated stack ids the plan may choose from (default: the job's --stack)"},
      {"minimize", "cost | time: what the best plan minimises (default cost)"},
      {"effective-batch",
       "N: keep micro-batch x grad-accum x data-parallel GPUs = N (default: free, the micro-batch `estimate` "
       "chooses: the fastest that fits)"},
  };
  return keys;
}

const std::vector<std::string>& plan_chosen_keys() {
  static const std::vector<std::string> keys = {
      "gpu", "batch", "grad-accum", "provider", "price-per-hour", "electricity", "calibration",
      "run", "node",  "nodes",      "parallel", "offload",        "network",     "network-gbit-per-gpu"};
  return keys;
}

// `estimate`'s --gpus is a count; in a plan the count is chosen and --gpus is the old name of --gpu-types
// (one meaning per flag): a count given there is an error naming --max-gpus.
Status gpus_given_as_count(const Request& all) {
  const auto it = all.find("gpus");
  if (it == all.end()) return Ok{};
  const std::string& v = it->second;
  if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos) return Ok{};
  return make_error(
      Errc::invalid_value, "--gpus",
      "is a GPU count in estimate, compare and scale; the plan chooses the count: give --max-gpus " + v +
          " to cap it, and --gpu-types to restrict the GPU types");
}

Result<PlanRequest> parse_plan_request(const Request& all, const Database& db) {
  PlanRequest pr;
  PlanConstraints& c = pr.constraints;
  if (auto st = gpus_given_as_count(all); !st.ok()) return st.error();
  const auto& ck = plan_constraint_keys();
  const auto& chosen = plan_chosen_keys();
  for (const auto& kv : all) {
    const std::string& k = kv.first;
    const std::string& v = kv.second;
    const bool constraint =
        std::any_of(ck.begin(), ck.end(), [&k](const PlanConstraintKey& x) { return x.key == k; });
    if (!constraint) {
      if (std::find(chosen.begin(), chosen.end(), k) != chosen.end())
        return make_error(Errc::invalid_value, "--" + k,
                          "is chosen by the plan (the search picks it); restrict the search with --gpus, "
                          "--providers, --max-gpus or --effective-batch instead");
      pr.job[k] = v;
      continue;
    }
    const std::string flag = "--" + k;
    if (k == "deadline") {
      FTCOST_TRY(x, parse_number(v, flag, 1e-6, 1e7));
      c.deadline_hours = x;
    } else if (k == "budget") {
      FTCOST_TRY(x, parse_number(v, flag, 1e-6, 1e9));
      c.budget_usd = x;
    } else if (k == "max-gpus") {
      FTCOST_TRY(x, parse_whole(v, flag, 1, 4096));
      c.max_gpus = static_cast<int>(x);
    } else if (k == "effective-batch") {
      FTCOST_TRY(x, parse_whole(v, flag, 1, 1 << 20));
      c.effective_batch = x;
    } else if (k == "spot") {
      if (v != "on" && v != "off")
        return make_error(Errc::invalid_value, flag, "must be on or off, got \"" + v + "\"");
      c.spot = v == "on";
    } else if (k == "minimize") {
      if (v != "cost" && v != "time")
        return make_error(Errc::invalid_value, flag, "must be cost or time, got \"" + v + "\"");
      c.minimize = v;
    } else {
      std::vector<std::string> items = split_list(v);
      if (items.empty())
        return make_error(Errc::invalid_value, flag, "needs a comma-separated list, got \"\"");
      std::vector<std::string> known;
      if (k == "providers")
        for (const auto& p : db.providers()) known.push_back(p.id);
      else if (k == "gpus" || k == "gpu-types")
        known = db.gpu_ids();
      else if (k == "methods")
        known = {"full", "lora", "qlora"};
      else if (k == "stacks")
        for (const auto& [id, s] : db.stacks()) known.push_back(id);
      for (const auto& it : items)
        if (std::find(known.begin(), known.end(), it) == known.end())
          return make_error(Errc::unknown_id, flag, "unknown \"" + it + "\"" + known_ids_hint(it, known));
      if (k == "providers") c.providers = items;
      if (k == "gpus" || k == "gpu-types") c.gpus = items;
      if (k == "methods") c.methods = items;
      if (k == "stacks") c.stacks = items;
    }
  }
  return pr;
}

// Of the offers for one GPU type and shape (GPUs per node x nodes), the one the price rule picks
// (estimate.hpp's price_better: fresh, then stale, then undated; the lower price within a class), as
// `estimate` and `compare` price that shape: a plan is never priced at an offer the estimate of its own
// request would not use.
}  // namespace ftcost
