// The job options, declared once. Every option of a fine-tuning job (`ftcost estimate` flags, the JSON
// request keys of the JS API, the URL hash of the calculator and its inputs panel) is one entry of
// job_options(): its name, kind, allowed values with labels and help, range, default (a value with its reason
// or a rule on the inputs resolved so far), when it applies and what happens when it does not, which keys a
// change clears, and the code that stores the checked value into Inputs.
//
// resolve_request() walks the table in order: everything above an option is resolved when it is reached, so
// a rule may look at the model, the method or the dataset chosen before it.
//
// Adding an option: one entry in its group's function (core/app/src/options_*.cpp; build_options() in
// options.cpp lists the groups in table order), its `apply` storing the value in Workload or Inputs and its
// `reads` naming the options it reads, plus the model code that uses it. The CLI flag, its --help line, the
// JSON key, the URL-hash key and the calculator's widget come from the entry.
#pragma once

#include "ftcost/estimate.hpp"
#include "ftcost/run.hpp"

#include <functional>
#include <string>
#include <vector>

namespace ftcost {

enum class OptionKind {
  choice,      // one of `values`
  count,       // a whole number in [lo, hi] (or one of `values` as special words, e.g. batch "max")
  real,        // a finite number in [lo, hi]
  id_or_path,  // an id from a database list (`id_list`) or a path to a JSON file
  toggle,      // on | off
  text,        // free text checked by the option's own parser (`values` are suggestions)
};
const char* option_kind_name(OptionKind k);

struct OptionValue {
  std::string value;
  std::string label;  // for pickers; the value itself when empty
  std::string help;
};

// What resolve_request has built when it reaches an option: every option above it in the table has been
// resolved into `in` (defaults included).
struct ResolveState {
  Inputs& in;
  const Request& req;
  const Database& db;
  const FileReader& reader;
  // Where the run option puts its files, loaded and checked (Resolution::runs); nullptr: nowhere.
  std::vector<RunFile>* runs = nullptr;
  // The value given for `key` ("" when not given).
  std::string get(const std::string& key) const;
  bool given(const std::string& key) const { return req.count(key) > 0; }
};

struct DefaultValue {
  std::string value;   // empty: the option stays unset
  std::string reason;  // listed as "key=value (reason)" in the estimate's defaults; see `listed`
  bool listed = true;  // false: applied silently
};

struct Option {
  std::string key;  // request key = CLI flag without "--" = URL hash key
  OptionKind kind = OptionKind::text;
  std::string group;    // panel section: model, method, data, gpu, price
  std::string label;    // short label for the calculator
  std::string help;     // one line for --help: what it is (allowed values and the default are added)
  std::string details;  // the calculator's tooltip: meaning and unit
  std::string unit;     // of count/real values ("tokens", "samples", "days", "USD")
  std::vector<OptionValue> values;
  std::string
      id_list;  // id_or_path: "models", "gpus", "datasets", "stacks", "providers"; "files": a path only
  double lo = 0, hi = 0;
  std::function<double(const ResolveState&)> hi_rule;  // when the upper bound depends on the inputs
  bool required = false;
  std::string required_message;  // "is required: ..." when required and not given
  std::string default_help;      // the default as --help states it
  std::function<DefaultValue(const ResolveState&)> default_rule;
  // "" when the option applies to the job resolved so far, else why not ("applies only to ..."). A value
  // given where the option does not apply is checked, then rejected (or, with not_applicable_warns, ignored
  // with a warning).
  std::function<std::string(const ResolveState&)> applies;
  bool not_applicable_warns = false;
  std::vector<std::string> invalidates;  // keys that a change of this option clears in the calculator
  // The options whose resolved values (what their apply stored in `st.in`) this option's hi_rule,
  // default_rule, applies or apply reads: each comes before it in the table (tests/unit/test_option_order.cpp
  // checks it).
  std::vector<std::string> reads;
  // The options whose presence in the request (ResolveState::given) it checks: anywhere in the table.
  std::vector<std::string> checks_given;
  bool in_url = true;  // false: never part of a link (file contents)
  // Stores the checked value (given or default) into `st.in`; may reject it with a reason of its own.
  std::function<Status(ResolveState& st, const std::string& value)> apply;

  std::string flag() const { return "--" + key; }
};

// Every job option, in the order resolve_request resolves them (and the URL hash lists them).
const std::vector<Option>& job_options();
const Option* find_option(const std::string& key);

// The ids of an id_or_path option's database list (Option::id_list: "models", "gpus", "datasets", "stacks",
// "providers", "nodes"; empty for "files").
std::vector<std::string> option_ids(const std::string& list, const Database& db);

// The CLI's help line: the option's help, its allowed values or range (with `db`: the ids of short database
// lists such as datasets and stacks), and its default.
std::string option_help_text(const Option& o, const Database* db = nullptr);
// The same with the ids of those lists given (e.g. Database::embedded_ids, which parses nothing).
std::string option_help_text(const Option& o, const std::vector<std::string>& ids);
// Whether option_help_text lists the ids of the option's database list (datasets, stacks).
bool option_help_lists_ids(const Option& o);

// Checks `text` against the option's kind, values and range — the checks every front end shares.
Status check_option_value(const Option& o, const ResolveState& st, const std::string& text);

// How far resolution got: Inputs with every option before the failing one resolved, and the error. The
// calculator uses it to show the defaults and which options apply even while an input is invalid.
struct Resolution {
  Inputs in;
  bool ok = true;
  Error error;
  std::string failed_key;  // the option whose value was rejected ("" for request-level errors)
  // --run's files, loaded and checked against the job; not yet fitted: resolve_request applies the refit
  // once every option is resolved (apply_run_fit), and a resolution alone never fits.
  std::vector<RunFile> runs;
};
Resolution resolve_partial(const Request& req, const Database& db, const FileReader& reader,
                           long today_days = -1);

// Whether option `o` applies to a resolution (its rule evaluated on the resolved inputs).
bool option_applies(const Option& o, const Resolution& r, const Request& req, const Database& db);

}  // namespace ftcost
