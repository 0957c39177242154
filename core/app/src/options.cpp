// The job option table, in groups (build_options; the groups live in options_*.cpp), and its interpreter,
// resolve_request(). See options.hpp.
#include "ftcost/options.hpp"

#include "ftcost/enum_names.hpp"
#include "ftcost/suggest.hpp"
#include "options_internal.hpp"

#include <cmath>
#include <cstdlib>
#include <memory>
#include <utility>

namespace ftcost {

std::string number_text(double v) {
  if (std::floor(v) == v && std::fabs(v) < 1e15) return std::to_string(static_cast<long long>(v));
  return json(v).dump();
}

bool looks_like_path(const std::string& s) {
  return s.find('/') != std::string::npos || (s.size() > 5 && s.substr(s.size() - 5) == ".json");
}

Result<json> read_doc(const ResolveState& st, const std::string& path, const std::string& flag) {
  if (!st.reader)
    return make_error(Errc::io_error, flag,
                      "file paths are not available here; give an id or paste the JSON");
  FTCOST_TRY(text, st.reader(path));
  return parse_json_text(text, path);
}

Error in_file(const std::string& path, Error e) {
  e.field = path + ": " + e.field;
  return e;
}

Option declare_option(std::string key, OptionKind kind, std::string group, std::string label) {
  Option o;
  o.key = std::move(key);
  o.kind = kind;
  o.group = std::move(group);
  o.label = std::move(label);
  return o;
}

DefaultValue fixed_default(std::string value, std::string reason) {
  return DefaultValue{std::move(value), std::move(reason), true};
}

std::vector<std::string> option_ids(const std::string& list, const Database& db) {
  std::vector<std::string> ids;
  if (list == "models") return db.model_ids();
  if (list == "gpus") return db.gpu_ids();
  if (list == "datasets")
    for (const auto& [id, x] : db.datasets()) ids.push_back(id);
  if (list == "stacks")
    for (const auto& [id, x] : db.stacks()) ids.push_back(id);
  if (list == "providers")
    for (const auto& p : db.providers()) ids.push_back(p.id);
  if (list == "nodes")
    for (const auto& [id, x] : db.nodes()) ids.push_back(id);
  return ids;
}

namespace {

// Strict whole-number parse: digits only (no sign, unit, exponent or fraction), within [lo, hi].
Result<std::int64_t> parse_count(const std::string& text, const std::string& flag, std::int64_t lo,
                                 std::int64_t hi) {
  if (text.empty()) return make_error(Errc::invalid_value, flag, "needs a whole number");
  std::int64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9')
      return make_error(Errc::invalid_value, flag,
                        "must be a whole number between " + std::to_string(lo) + " and " +
                            std::to_string(hi) + ", got \"" + text + "\"");
    if (v > hi) break;
    v = v * 10 + (c - '0');
  }
  if (v < lo || v > hi)
    return make_error(
        Errc::out_of_range, flag,
        "must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ", got " + text);
  return v;
}

// Strict real parse (no NaN/inf, no units).
Result<double> parse_real(const std::string& text, const std::string& flag, double lo, double hi) {
  const char* s = text.c_str();
  char* end = nullptr;
  double v = std::strtod(s, &end);
  bool bad = text.empty() || end == s || *end != '\0' || !std::isfinite(v);
  for (char c : text)
    if (!(c >= '0' && c <= '9') && c != '.' && c != 'e' && c != 'E' && c != '-' && c != '+') bad = true;
  if (bad) return make_error(Errc::invalid_value, flag, "must be a number, got \"" + text + "\"");
  if (v < lo || v > hi)
    return make_error(Errc::out_of_range, flag,
                      "must be between " + json(lo).dump() + " and " + json(hi).dump() + ", got " + text);
  return v;
}

std::vector<std::string> value_names(const Option& o) {
  std::vector<std::string> v;
  for (const auto& x : o.values) v.push_back(x.value);
  return v;
}

double upper_bound(const Option& o, const ResolveState& st) { return o.hi_rule ? o.hi_rule(st) : o.hi; }

// The table: the groups in the order resolve_request applies them. An option reads only options above it
// (Option::reads; tests/unit/test_option_order.cpp), so a group comes after every group it reads.
std::vector<Option> build_options() {
  std::vector<Option> table;
  add_model_options(table);       // --model, --gpu
  add_peft_options(table);        // --method and the LoRA settings: read the model
  add_precision_options(table);   // --precision, --fp8: read the GPU, the model and the method
  add_training_options(table);    // optimizer, checkpointing, experts: read the method and the model
  add_data_options(table);        // --seq or --dataset and their lengths
  add_batch_options(table);       // batch, grad-accum, epochs
  add_stack_options(table);       // --headroom, --stack, --attention: read the GPU and the model
  add_kernel_options(table);      // read the stack, the method, checkpointing, the optimizer, grad-accum
  add_objective_options(table);   // read the dataset, the model, the GPU, the workload so far
  add_step_model_options(table);  // --model-kind, --routing: read the model
  add_price_options(table);       // prices, --calibration, --run: read the GPU and the whole workload
  add_parallel_options(table);    // read the GPU, the model and the offload
  add_network_options(table);     // read the GPU count and --fp8
  return table;
}

// Resolves one option into st.in. Returns the error, if any.
Status resolve_option(const Option& o, ResolveState& st) {
  const auto it = st.req.find(o.key);
  const bool given = it != st.req.end();
  std::string value = given ? it->second : std::string();
  if (given && value.empty())
    return make_error(Errc::invalid_value, o.flag(),
                      "is empty; give a value or leave the option out" +
                          (o.default_help.empty() ? std::string() : " (default: " + o.default_help + ")"));
  const std::string not_applicable = o.applies ? o.applies(st) : std::string();
  if (!not_applicable.empty()) {
    if (!given) return Ok{};
    // A value that does not apply is still checked first: a typo gets its own message.
    FTCOST_CHECK(check_option_value(o, st, value));
    if (o.not_applicable_warns) {
      st.in.warnings.push_back(o.flag() + " " + value + " " + not_applicable);
      return Ok{};
    }
    return make_error(Errc::invalid_value, o.flag(), not_applicable);
  }
  std::string default_reason;
  if (!given) {
    if (o.required) return make_error(Errc::missing_field, o.flag(), o.required_message);
    if (!o.default_rule) return Ok{};
    const DefaultValue d = o.default_rule(st);
    if (d.value.empty()) return Ok{};
    value = d.value;
    default_reason = d.reason.empty() ? "the default" : d.reason;
    if (d.listed)
      st.in.defaults.push_back(o.key + "=" + value + (d.reason.empty() ? "" : " (" + d.reason + ")"));
  }
  if (auto checked = check_option_value(o, st, value); !checked.ok()) {
    if (given) return checked.error();
    // A default the flag's own check refuses comes from an input the user gave (a file's field): say so,
    // since the flag itself was never given.
    Error e = checked.error();
    e.message = "not given; its default " + value + " (" + default_reason + ") is not allowed: " + e.message;
    return e;
  }
  return o.apply ? o.apply(st, value) : Status(Ok{});
}

}  // namespace

constexpr EnumName<OptionKind> kOptionKindNames[] = {
    {OptionKind::choice, "choice"},         {OptionKind::count, "count"},   {OptionKind::real, "real"},
    {OptionKind::id_or_path, "id-or-path"}, {OptionKind::toggle, "toggle"}, {OptionKind::text, "text"}};
const char* option_kind_name(OptionKind k) { return enum_name(kOptionKindNames, k, "text"); }

std::string ResolveState::get(const std::string& key) const {
  auto it = req.find(key);
  return it == req.end() ? std::string() : it->second;
}

const std::vector<Option>& job_options() {
  static const std::vector<Option> table = build_options();
  return table;
}

const Option* find_option(const std::string& key) {
  for (const auto& o : job_options())
    if (o.key == key) return &o;
  return nullptr;
}

const std::vector<std::string>& request_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k;
    for (const auto& o : job_options()) k.push_back(o.key);
    return k;
  }();
  return keys;
}

bool option_help_lists_ids(const Option& o) {
  return o.kind == OptionKind::id_or_path && (o.id_list == "datasets" || o.id_list == "stacks");
}

std::string option_help_text(const Option& o, const Database* db) {
  return option_help_text(
      o, db != nullptr && option_help_lists_ids(o) ? option_ids(o.id_list, *db) : std::vector<std::string>{});
}

std::string option_help_text(const Option& o, const std::vector<std::string>& ids) {
  std::string s = o.help;
  if (option_help_lists_ids(o) && !ids.empty()) {
    s += ": ";
    for (std::size_t i = 0; i < ids.size(); ++i) s += (i ? " | " : "") + ids[i];
  }
  if ((o.kind == OptionKind::choice || o.kind == OptionKind::toggle) && !o.values.empty()) {
    s += ": ";
    for (std::size_t i = 0; i < o.values.size(); ++i) s += (i ? " | " : "") + o.values[i].value;
  } else if (o.kind == OptionKind::count || o.kind == OptionKind::real) {
    s += " (" + (o.hi_rule ? number_text(o.lo) + " or more" : number_text(o.lo) + " to " + number_text(o.hi));
    if (!o.unit.empty()) s += " " + o.unit;
    for (const auto& v : o.values) s += ", or " + v.value;
    s += ")";
  }
  if (o.required) s += " [required]";
  if (!o.default_help.empty()) s += " (default: " + o.default_help + ")";
  return s;
}

Status check_option_value(const Option& o, const ResolveState& st, const std::string& text) {
  const std::string flag = o.flag();
  switch (o.kind) {
    case OptionKind::choice:
    case OptionKind::toggle: {
      for (const auto& v : o.values)
        if (v.value == text) return Ok{};
      return make_error(Errc::invalid_value, flag,
                        "must be one of " + join_ids(value_names(o)) + ", got \"" + text + "\"");
    }
    case OptionKind::count: {
      for (const auto& v : o.values)
        if (v.value == text) return Ok{};
      FTCOST_CHECK(parse_count(text, flag, static_cast<std::int64_t>(o.lo),
                               static_cast<std::int64_t>(upper_bound(o, st))));
      return Ok{};
    }
    case OptionKind::real: {
      FTCOST_CHECK(parse_real(text, flag, o.lo, upper_bound(o, st)));
      return Ok{};
    }
    case OptionKind::id_or_path:
    case OptionKind::text:
      return Ok{};  // the option's apply() knows its ids and syntax
  }
  return Ok{};
}

Result<Request> request_from_json(const json& obj) {
  if (!obj.is_object())
    return make_error(Errc::wrong_type, "request", "must be a JSON object of flag names to values");
  const auto& keys = request_keys();
  Request r;
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    if (find_option(it.key()) == nullptr)
      return make_error(Errc::unknown_key, it.key(),
                        "is not an estimate option" + known_ids_hint(it.key(), keys));
    const json& v = it.value();
    if (v.is_null()) continue;
    if (v.is_string()) {
      r[it.key()] = v.get<std::string>();
    } else if (v.is_boolean()) {
      r[it.key()] = v.get<bool>() ? "on" : "off";
    } else if (v.is_number_integer() || v.is_number_unsigned()) {
      r[it.key()] = v.dump();
    } else if (v.is_number_float()) {
      double x = v.get<double>();
      if (!std::isfinite(x)) return make_error(Errc::invalid_value, it.key(), "must be finite");
      r[it.key()] = number_text(x);
    } else {
      return make_error(Errc::wrong_type, it.key(), "must be a string or a number");
    }
  }
  return r;
}

Resolution resolve_partial(const Request& req, const Database& db, const FileReader& reader,
                           long today_days) {
  Resolution r;
  r.in.today_days = today_days;
  for (const auto& [k, v] : req) {
    if (find_option(k) == nullptr) {
      r.ok = false;
      r.error = make_error(Errc::unknown_key, "--" + k,
                           "is not an estimate option" + did_you_mean(k, request_keys()));
      return r;
    }
  }
  ResolveState st{r.in, req, db, reader, &r.runs};
  for (const auto& o : job_options()) {
    Status s = resolve_option(o, st);
    if (!s.ok()) {
      r.ok = false;
      r.error = s.error();
      r.failed_key = o.key;
      return r;
    }
  }
  return r;
}

Result<Inputs> resolve_request(const Request& req, const Database& db, const FileReader& reader,
                               long today_days) {
  Resolution r = resolve_partial(req, db, reader, today_days);
  if (!r.ok) return r.error;
  if (!r.runs.empty()) FTCOST_CHECK(apply_runs(r.in, r.runs, db));
  return std::move(r.in);
}

Result<GpuProbe> probe_gpus(const Request& req, const std::vector<std::string>& gpu_ids, const Database& db,
                            const FileReader& reader, long today_days) {
  GpuProbe p;
  p.reader = reader;
  bool summarised = false;
  for (const auto& id : gpu_ids) {
    Request r = req;
    r["gpu"] = id;
    Resolution res = resolve_partial(r, db, p.reader, today_days);
    // the options before the failing one are resolved: a length file is read and binned once
    if (!summarised && res.in.dataset != nullptr) {
      p.reader = summarised_reader(res.in, p.reader);
      summarised = true;
    }
    if (res.ok) {
      p.in = std::move(res.in);
      p.gpu = id;
      return p;
    }
    for (const auto& [other, e] : p.skipped)
      if (e.field == res.error.field && e.message == res.error.message) return res.error;
    p.skipped.emplace_back(id, res.error);
  }
  if (p.skipped.empty()) return make_error(Errc::invalid_value, "--gpus", "no GPU to resolve the job on");
  return p.skipped.front().second;
}

FileReader summarised_reader(const Inputs& in, const FileReader& reader) {
  const Dataset* d = in.dataset.get();
  if (!reader || d == nullptr || !d->own_data || d->histogram.empty()) return reader;
  json doc = d->to_file_json();
  // The id and display name a list takes from its file name are left for the reader to take again (a file
  // name need not be a valid id).
  const std::string& path = in.dataset_id;
  const std::size_t slash = path.find_last_of('/');
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  if (d->id == base) {
    doc.erase("id");
    if (d->display_name == base) doc.erase("display_name");
  }
  auto text = std::make_shared<const std::string>(doc.dump());
  return [reader, path, text](const std::string& p) -> Result<std::string> {
    if (p == path) return *text;
    return reader(p);
  };
}

bool option_applies(const Option& o, const Resolution& r, const Request& req, const Database& db) {
  if (!o.applies) return true;
  Inputs in = r.in;
  const FileReader none;
  ResolveState st{in, req, db, none};
  return o.applies(st).empty();
}

// (options_internal.hpp)
std::function<DefaultValue(const ResolveState&)> unlisted_default(const std::string& value) {
  return [value](const ResolveState&) { return DefaultValue{value, "", false}; };
}
std::function<DefaultValue(const ResolveState&)> listed_default(const std::string& value,
                                                                const std::string& reason) {
  return [value, reason](const ResolveState&) { return DefaultValue{value, reason, true}; };
}

}  // namespace ftcost
