// The GPU database: GPUs, prices, model presets, datasets and stack profiles, loaded from the
// copy compiled into the binary or from a gpu-db/ directory (through a file-reading callback so
// that the core itself does no I/O).
#pragma once

#include "ftcost/dataset.hpp"
#include "ftcost/error.hpp"
#include "ftcost/gpu.hpp"
#include "ftcost/model.hpp"
#include "ftcost/node.hpp"
#include "ftcost/prices.hpp"
#include "ftcost/stack.hpp"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace ftcost {

struct DbProblem {
  std::string file;
  Error error;
};

class Database {
 public:
  // Loads from (relative path, content) pairs; every file is checked, problems are collected.
  static Database from_files(const std::vector<std::pair<std::string, std::string>>& files);
  // The database compiled into this binary. Parsed once, then shared.
  static const Database& embedded();
  // The gpu-db/ files compiled into this binary, as (relative path, content) pairs.
  static std::vector<std::pair<std::string, std::string>> embedded_files();
  // The ids of one folder of the embedded gpu-db/ ("datasets", "stacks", ...), from the file names alone
  // (file name = id, which `db check` enforces), sorted: for help text that must not parse the database.
  static std::vector<std::string> embedded_ids(const std::string& folder);

  const std::vector<DbProblem>& problems() const { return problems_; }

  const GpuSpec* gpu(const std::string& id) const;
  const ModelSpec* model(const std::string& id) const;
  const Dataset* dataset(const std::string& id) const;
  const StackProfile* stack(const std::string& id) const;
  const NodeShape* node(const std::string& id) const;
  std::vector<PriceOffer> offers_for(const std::string& gpu_id) const;
  // Calls f(const PriceOffer&) for every offer of this GPU, in the order of offers_for (without its copies).
  template <class F>
  void for_each_offer(const std::string& gpu_id, F&& f) const {
    for (const auto& p : providers_)
      for (const auto& o : p.offers)
        if (o.gpu_id == gpu_id) f(o);
  }

  const std::map<std::string, GpuSpec>& gpus() const { return gpus_; }
  const std::map<std::string, ModelSpec>& models() const { return models_; }
  const std::map<std::string, Dataset>& datasets() const { return datasets_; }
  const std::map<std::string, StackProfile>& stacks() const { return stacks_; }
  const std::map<std::string, NodeShape>& nodes() const { return nodes_; }
  const std::vector<PriceProvider>& providers() const { return providers_; }

  std::vector<std::string> gpu_ids() const;
  std::vector<std::string> model_ids() const;

 private:
  std::map<std::string, GpuSpec> gpus_;
  std::map<std::string, ModelSpec> models_;
  std::map<std::string, Dataset> datasets_;
  std::map<std::string, StackProfile> stacks_;
  std::map<std::string, NodeShape> nodes_;
  std::vector<PriceProvider> providers_;
  std::vector<DbProblem> problems_;
};

// The tail of an unknown-id message: " (did you mean \"x\"?)" when a known id is close (suggest.hpp), then
// "; <label>: a, b, c".
std::string known_ids_hint(const std::string& typed, const std::vector<std::string>& ids,
                           const std::string& label = "known");

}  // namespace ftcost
