// gpu-db checker, stack profiles (stacks/<id>.json, the core's stack loader; a thin alias names its base),
// node files (nodes/<id>.json, the node loader and its sources) and the JSON Schema files (schema/).
#include "checks.hpp"
#include "ftcost/database.hpp"
#include "ftcost/node.hpp"
#include "ftcost/stack.hpp"

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace ftcost::dbcheck {

// Keys, kinds and ranges of a profile or an alias, from the core's field lists (fields.cpp).
void check_stack_keys(Entry& e, bool alias) {
  if (!check_keys(e.doc, "", alias ? "stack.alias" : "stack", "ftcost.stack/1", e.sink) || alias) return;
  for (const char* part : {"memory", "throughput"}) {
    const json* obj = find_field(e.doc, part);
    if (obj && obj->is_object())
      check_keys(*obj, part, std::string("stack.") + part, "ftcost.stack/1", e.sink);
  }
  const json* t = find_field(e.doc, "throughput");
  const json* ops = t != nullptr && t->is_object() ? member(*t, "ops") : nullptr;
  if (ops != nullptr && ops->is_object())
    check_keys(*ops, "throughput.ops", "stack.ops", "ftcost.stack/1", e.sink);
}

namespace {

// An eager op inventory times host work per op: each host constant it uses is stated with its provenance
// (a "<key>_note": structural, fitted on which rows, or assumed), never left to a default.
void check_stack_ops(Entry& e) {
  const json* t = member(e.doc, "throughput");
  const json* ops = t != nullptr && t->is_object() ? member(*t, "ops") : nullptr;
  if (ops == nullptr || !ops->is_object()) return;
  const json* inv = member(*ops, "inventory");
  if (inv == nullptr || !inv->is_string() || inv->get<std::string>() != "eager") return;
  for (const char* k :
       {"python_us_per_op", "dispatch_us_per_op", "optimizer_host_us_per_tensor", "bandwidth_fraction"}) {
    const std::string field = std::string("throughput.ops.") + k;
    if (member(*ops, k) == nullptr)
      e.sink.add(field, Errc::missing_field, "required with inventory \"eager\" (the step model times it)");
    else if (member(*ops, std::string(k) + "_note") == nullptr)
      e.sink.add(field + "_note", Errc::missing_field,
                 "required: where the value comes from ([structural], [fitted] on which rows, [assumed])");
  }
}

}  // namespace

void check_stack_entry(Entry& e) {
  check_stack_keys(e, member(e.doc, "alias_of") != nullptr);
  if (member(e.doc, "alias_of") != nullptr) {
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
    return;
  }
  auto s = parse_stack(e.doc, e.path);
  if (!s.ok()) {
    e.sink.add_loader_error(s.error());
  } else {
    check_id(e.doc, e.path, ".-", e.sink);
    check_stack_ops(e);
  }
}

namespace {

// model_support in a profile's own text (a thin alias: in its overrides): the object, or null.
const json* own_model_support(const json& doc) {
  const json* ov = member(doc, "overrides");
  const json* ms = member(ov != nullptr && ov->is_object() ? *ov : doc, "model_support");
  return ms != nullptr && ms->is_object() ? ms : nullptr;
}

// "a, b, c" of a set, for messages.
std::string joined(const std::set<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
  return out;
}

}  // namespace

// Every model_type a profile's model_support names is one of the model presets' (their config model_type):
// a misspelt key would never match a job and silently judge nothing.
void check_stack_model_types(Entry& e, const Database& db) {
  const json* ms = e.kind == "stack" ? own_model_support(e.doc) : nullptr;
  if (ms == nullptr) return;
  std::set<std::string> known;
  for (const auto& [id, m] : db.models())
    if (!m.own_training_code) known.insert(m.family);
  if (known.empty()) return;  // no model presets among the files checked: nothing to compare with
  for (const auto& [software, entry] : ms->items()) {
    const json* types = entry.is_object() ? member(entry, "model_types") : nullptr;
    if (types == nullptr || !types->is_object()) continue;
    for (const auto& [type, first] : types->items()) {
      if (known.count(type) != 0) continue;
      std::string field = "model_support.";
      field.append(software).append(".model_types.").append(type);
      e.sink.add(field, Errc::unknown_id,
                 in_quotes(type) + " is not the config model_type of any model preset in models/ (" +
                     joined(known) + ")");
    }
  }
}

namespace {

// One range of a profile, where db check reports it.
struct RangeAt {
  std::string id;
  std::size_t index;
  const SoftwareRange* range;
};

void report_overlap(std::map<std::string, Entry*>& by_id, const RangeAt& at, const RangeAt& other) {
  auto it = by_id.find(at.id);
  if (it == by_id.end()) return;
  const std::string base = member(it->second->doc, "alias_of") != nullptr ? "overrides." : "";
  it->second->sink.add(base + "software_versions[" + std::to_string(at.index) + "]", Errc::invalid_value,
                       at.range->to_text() + " overlaps " + other.id + "'s " + other.range->to_text() +
                           ": a run's software would map to both profiles");
}

}  // namespace

// No two profiles' software_versions ranges share a version: a recorded run maps to one profile
// (ftcost/run.hpp stack_for_software). Both profiles of an overlapping pair are reported.
void check_stack_software_ranges(std::vector<Entry>& entries, const Database& db) {
  std::map<std::string, Entry*> by_id;
  for (Entry& e : entries)
    if (e.parsed && e.kind == "stack" && !e.id.empty()) by_id[e.id] = &e;
  std::vector<RangeAt> seen;
  for (const auto& [id, stack] : db.stacks()) {
    for (std::size_t i = 0; i < stack.software_versions.size(); ++i) {
      const RangeAt at{id, i, &stack.software_versions[i]};
      for (const RangeAt& other : seen) {
        if (!at.range->overlaps(*other.range)) continue;
        report_overlap(by_id, at, other);
        report_overlap(by_id, other, at);
      }
      seen.push_back(at);
    }
  }
}

void check_node_entry(Entry& e) {
  auto n = parse_node(e.doc, e.path);
  if (!n.ok()) {
    e.sink.add_loader_error(n.error());
    return;
  }
  check_id(e.doc, e.path, ".-", e.sink);
  for (std::size_t i = 0; i < n->sources.size(); ++i) {
    const std::string sp = source_problem(n->sources[i]);
    if (!sp.empty()) e.sink.add("sources[" + std::to_string(i) + "]", Errc::invalid_value, sp);
  }
}

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
}  // namespace ftcost::dbcheck
