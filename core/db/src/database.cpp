#include "ftcost/database.hpp"

#include "ftcost/embedded_db.hpp"
#include "ftcost/suggest.hpp"

#include <algorithm>
#include <map>

namespace ftcost {

namespace {

std::string basename_no_ext(const std::string& path) {
  std::size_t slash = path.find_last_of('/');
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  std::size_t dot = base.rfind(".json");
  return dot == std::string::npos ? base : base.substr(0, dot);
}

std::string folder_of(const std::string& path) {
  std::size_t slash = path.find('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

template <class T>
void add_checked(std::map<std::string, T>& into, const std::string& file, const std::string& id, T value,
                 std::vector<DbProblem>& problems) {
  if (basename_no_ext(file) != id) {
    problems.push_back(
        {file, make_error(Errc::invalid_value, "id", "\"" + id + "\" does not match the file name")});
    return;
  }
  if (into.count(id) != 0) {
    problems.push_back({file, make_error(Errc::invalid_value, "id", "duplicate id \"" + id + "\"")});
    return;
  }
  into.emplace(id, std::move(value));
}

// A file read by `parsed` (its parser's result): into `into` under its id (add_checked), or its error among
// the problems.
template <class T>
void add_parsed(std::map<std::string, T>& into, const std::string& file, Result<T> parsed,
                std::vector<DbProblem>& problems) {
  if (!parsed.ok()) {
    problems.push_back({file, parsed.error()});
    return;
  }
  const std::string id = parsed->id;  // a copy: the value is moved into the map
  add_checked(into, file, id, std::move(parsed).value(), problems);
}

// The entry of `id` in one of the database's maps, or nullptr.
template <class T>
const T* find_id(const std::map<std::string, T>& m, const std::string& id) {
  auto it = m.find(id);
  return it == m.end() ? nullptr : &it->second;
}

}  // namespace

std::string known_ids_hint(const std::string& typed, const std::vector<std::string>& ids,
                           const std::string& label) {
  return did_you_mean(typed, ids) + "; " + label + ": " + join_ids(ids);
}

Database Database::from_files(const std::vector<std::pair<std::string, std::string>>& files) {
  Database db;
  // Stack aliases ("alias_of": another profile's id, "overrides": fields that differ) resolve after every
  // profile is read: a thin alias names a configuration of a stack (LLaMA-Factory, axolotl) without copying
  // it.
  std::map<std::string, json> stack_docs;
  std::vector<std::pair<std::string, json>> aliases;
  for (const auto& [path, text] : files) {
    const std::string folder = folder_of(path);
    if (folder == "schema" || folder == "calibrations" || folder == "runs")
      continue;  // documentation / loaded on demand
    auto parsed = parse_json_text(text, path);
    if (!parsed.ok()) {
      db.problems_.push_back({path, parsed.error()});
      continue;
    }
    const json& doc = parsed.value();
    if (folder == "gpus") {
      add_parsed(db.gpus_, path, parse_gpu(doc, path), db.problems_);
    } else if (folder == "models") {
      add_parsed(db.models_, path, parse_model_file(doc, path), db.problems_);
    } else if (folder == "datasets") {
      add_parsed(db.datasets_, path, parse_dataset(doc, path), db.problems_);
    } else if (folder == "stacks") {
      if (doc.is_object() && doc.contains("alias_of")) {
        aliases.emplace_back(path, doc);
        continue;
      }
      if (doc.is_object() && doc.contains("id") && doc.at("id").is_string())
        stack_docs[doc.at("id").get<std::string>()] = doc;
      add_parsed(db.stacks_, path, parse_stack(doc, path), db.problems_);
    } else if (folder == "nodes") {
      add_parsed(db.nodes_, path, parse_node(doc, path), db.problems_);
    } else if (folder == "prices") {
      auto p = parse_prices(doc, path);
      if (!p.ok()) {
        db.problems_.push_back({path, p.error()});
      } else if (basename_no_ext(path) != p->id) {
        db.problems_.push_back(
            {path, make_error(Errc::invalid_value, "id", "\"" + p->id + "\" does not match the file name")});
      } else {
        db.providers_.push_back(p.value());
      }
    } else {
      db.problems_.push_back({path, make_error(Errc::unknown_key, path, "unknown folder in gpu-db/")});
    }
  }
  for (const auto& [path, doc] : aliases) {
    const json& base_id = doc.at("alias_of");
    if (!base_id.is_string() || stack_docs.count(base_id.get<std::string>()) == 0) {
      db.problems_.push_back({path, make_error(Errc::unknown_id, "alias_of",
                                               "must name a stack profile in stacks/ that is not an alias")});
      continue;
    }
    json merged = stack_docs.at(base_id.get<std::string>());
    if (doc.contains("overrides")) {
      if (!doc.at("overrides").is_object()) {
        db.problems_.push_back({path, make_error(Errc::wrong_type, "overrides", "must be an object")});
        continue;
      }
      merged.merge_patch(doc.at("overrides"));
    }
    for (const char* k : {"id", "display_name", "version", "description", "notes"})
      if (doc.contains(k)) merged[k] = doc.at(k);
    auto s = parse_stack(merged, path);
    if (!s.ok()) {
      db.problems_.push_back({path, s.error()});
      continue;
    }
    StackProfile p = s.value();
    p.alias_of = base_id.get<std::string>();
    add_checked(db.stacks_, path, p.id, p, db.problems_);
  }
  // Cross-references: every node preset's and every offer's GPU exists.
  for (const auto& [id, n] : db.nodes_)
    if (db.gpus_.count(n.gpu) == 0)
      db.problems_.push_back(
          {"nodes/" + id + ".json",
           make_error(Errc::unknown_id, "gpu", "\"" + n.gpu + "\" is not a GPU in gpus/")});
  for (const auto& prov : db.providers_) {
    for (std::size_t i = 0; i < prov.offers.size(); ++i) {
      if (db.gpus_.count(prov.offers[i].gpu_id) == 0) {
        db.problems_.push_back({"prices/" + prov.id + ".json",
                                make_error(Errc::unknown_id, "offers[" + std::to_string(i) + "].gpu_id",
                                           "\"" + prov.offers[i].gpu_id + "\" is not a GPU in gpus/")});
      }
    }
  }
  return db;
}

std::vector<std::pair<std::string, std::string>> Database::embedded_files() {
  std::vector<std::pair<std::string, std::string>> files;
  for (std::size_t i = 0; i < kEmbeddedDbFileCount; ++i)
    files.emplace_back(kEmbeddedDbFiles[i].path, kEmbeddedDbFiles[i].content);
  return files;
}

std::vector<std::string> Database::embedded_ids(const std::string& folder) {
  std::vector<std::string> ids;
  const std::string prefix = folder + "/";
  const std::string suffix = ".json";
  for (std::size_t i = 0; i < kEmbeddedDbFileCount; ++i) {
    const std::string path = kEmbeddedDbFiles[i].path;
    if (path.size() <= prefix.size() + suffix.size() || path.compare(0, prefix.size(), prefix) != 0 ||
        path.compare(path.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    const std::string id = path.substr(prefix.size(), path.size() - prefix.size() - suffix.size());
    if (id.find('/') == std::string::npos) ids.push_back(id);
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

const Database& Database::embedded() {
  static const Database db = from_files(embedded_files());
  return db;
}

const GpuSpec* Database::gpu(const std::string& id) const { return find_id(gpus_, id); }
const ModelSpec* Database::model(const std::string& id) const { return find_id(models_, id); }
const Dataset* Database::dataset(const std::string& id) const { return find_id(datasets_, id); }
const StackProfile* Database::stack(const std::string& id) const { return find_id(stacks_, id); }

const NodeShape* Database::node(const std::string& id) const { return find_id(nodes_, id); }

std::vector<PriceOffer> Database::offers_for(const std::string& gpu_id) const {
  std::vector<PriceOffer> out;
  for_each_offer(gpu_id, [&](const PriceOffer& o) { out.push_back(o); });
  return out;
}

std::vector<std::string> Database::gpu_ids() const {
  std::vector<std::string> v;
  for (const auto& [id, g] : gpus_) v.push_back(id);
  return v;
}

std::vector<std::string> Database::model_ids() const {
  std::vector<std::string> v;
  for (const auto& [id, m] : models_) v.push_back(id);
  return v;
}

}  // namespace ftcost
