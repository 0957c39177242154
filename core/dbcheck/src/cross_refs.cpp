// gpu-db checker, cross-references: ids unique per kind, one file per GPU name and per provider, the GPU a
// node or an offer refers to (an offer not dated before its GPU was released), calibrations against the GPU
// file they are filed under, and the database as the calculator loads it.
#include "checks.hpp"
#include "ftcost/database.hpp"

#include <map>
#include <set>
#include <string>
#include <utility>

namespace ftcost::dbcheck {

namespace {

// Every GPU file's id with its spec (the first loadable file of an id whose file name is the id).
void collect_gpus(const std::vector<Entry>& entries, std::map<std::string, const Entry*>& gpu_by_id,
                  std::map<std::string, GpuRef>& gpu_refs) {
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
}

void check_unique_id(Entry& e, std::map<std::string, const Entry*>& first_id) {
  if (e.id.empty() || e.kind == "schema" || e.kind == "calibration" || e.kind == "run") return;
  auto [it, fresh] = first_id.emplace(e.kind + "|" + e.id, &e);
  if (!fresh)
    e.sink.add("id", Errc::invalid_value,
               "duplicate id " + in_quotes(e.id) + ": " + it->second->path + " has it too");
}

// One file per GPU (by name) and per provider.
void check_unique_name(Entry& e, std::map<std::string, const Entry*>& first_name) {
  if (e.kind != "gpu" && e.kind != "prices") return;
  const std::string name = lower(str_field(e.doc, e.kind == "gpu" ? "name" : "provider"));
  if (name.empty()) return;
  auto [it, fresh] = first_name.emplace(e.kind + "|" + name, &e);
  if (!fresh && it->second->id != e.id)
    e.sink.add(e.kind == "gpu" ? "name" : "provider", Errc::invalid_value,
               in_quotes(str_field(e.doc, e.kind == "gpu" ? "name" : "provider")) + " is already in " +
                   it->second->path + ": one file per " + (e.kind == "gpu" ? "GPU" : "provider"));
}

// A node's GPU exists, and its intra-node link is one that GPU has.
void check_node_refs(Entry& e, const std::map<std::string, GpuRef>& gpu_refs,
                     const std::set<std::string>& gpu_files) {
  const std::string gid = str_field(e.doc, "gpu");
  if (!gid.empty() && gpu_files.count(gid) == 0)
    e.sink.add("gpu", Errc::unknown_id, in_quotes(gid) + " is not a GPU in gpus/");
  auto g = gpu_refs.find(gid);
  if (g == gpu_refs.end() || !g->second.spec_ok) return;
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
    e.sink.add("intra_node", Errc::invalid_value, "\"pcie\" but " + gid + " sits on an NVSwitch baseboard");
}

// Each offer's GPU exists and was released before the offer's date.
void check_offer_refs(Entry& e, const std::map<std::string, const Entry*>& gpu_by_id,
                      const std::map<std::string, GpuRef>& gpu_refs, const std::set<std::string>& gpu_files) {
  const json* offers = find_field(e.doc, "offers");
  if (!offers || !offers->is_array()) return;
  for (std::size_t i = 0; i < offers->size(); ++i) {
    const json& o = (*offers)[i];
    const std::string gid = str_field(o, "gpu_id");
    if (gid.empty()) continue;
    const std::string p = "offers[" + std::to_string(i) + "]";
    if (gpu_refs.find(gid) == gpu_refs.end()) {
      if (!e.sink.has_field(p + ".gpu_id") && gpu_files.count(gid) == 0)
        e.sink.add(p + ".gpu_id", Errc::unknown_id, in_quotes(gid) + " is not a GPU in gpus/");
      continue;
    }
    const json* date = find_field(o, "date");
    const json* year = find_field(gpu_by_id.at(gid)->doc, "release_year");
    if (date && date->is_string() && date->get<std::string>().size() >= 4 && year && is_whole(*year)) {
      const std::string y = date->get<std::string>().substr(0, 4);
      if (y.find_first_not_of("0123456789") == std::string::npos && digits_value(y) < year->get<double>() &&
          !e.sink.has_field(p + ".date"))
        e.sink.add(p + ".date", Errc::out_of_range,
                   in_quotes(date->get<std::string>()) + " is before " + gid + " was released (" +
                       fmt_num(year->get<double>()) + ")");
    }
  }
}

}  // namespace

void check_cross_refs(std::vector<Entry>& entries) {
  std::map<std::string, const Entry*> gpu_by_id;
  std::map<std::string, GpuRef> gpu_refs;
  std::set<std::string> gpu_files;  // every gpus/<id>.json, loadable or not: a broken one is reported once,
                                    // not again by every price or calibration that refers to it
  for (const Entry& e : entries)
    if (e.kind == "gpu") gpu_files.insert(stem_of(e.path));
  collect_gpus(entries, gpu_by_id, gpu_refs);

  std::map<std::string, const Entry*> first_id;    // kind|id
  std::map<std::string, const Entry*> first_name;  // gpu / provider display name
  std::map<std::string, const Entry*> first_cal;   // uuid|created
  for (Entry& e : entries) {
    if (!e.parsed) continue;
    check_unique_id(e, first_id);
    check_unique_name(e, first_name);
    if (e.kind == "gpu") check_gpu_variant(e, gpu_refs, gpu_files);
    if (e.kind == "node") check_node_refs(e, gpu_refs, gpu_files);
    if (e.kind == "prices") check_offer_refs(e, gpu_by_id, gpu_refs, gpu_files);
    if (e.kind == "calibration") check_calibration_refs(e, gpu_refs, gpu_files, first_cal);
  }
}

// The database as the calculator loads it must load without problems too (this catches whatever the
// checks above do not know about, e.g. a check added to a loader's cross-references).
void check_database_loads(std::vector<Entry>& entries) {
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
  for (Entry& e : entries)
    if (e.parsed) check_stack_model_types(e, db);
  check_stack_software_ranges(entries, db);
  check_run_entries(entries, db);
}

}  // namespace ftcost::dbcheck
