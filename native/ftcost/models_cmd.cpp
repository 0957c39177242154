// `ftcost models [--json]`: the model presets of the database.
#include "command.hpp"
#include "format.hpp"
#include "ftcost/api.hpp"
#include "ftcost/database.hpp"

#include <string>

namespace ftcost::cli {

namespace {

std::string models_table(const Database& db) {
  Table t({"id", "kind", "total", "active", "experts", "layers", "HF repo"},
          {false, false, true, true, false, true, false});
  for (const auto& [id, m] : db.models()) {
    t.row({id, m.kind(), human_count(static_cast<double>(m.params().total())),
           human_count(static_cast<double>(m.active_params(m.moe.top_k))),
           m.is_moe() ? std::to_string(m.moe.top_k) + " of " + std::to_string(m.moe.experts) : "-",
           std::to_string(m.layers()), m.hf_repo});
  }
  return t.str();
}

}  // namespace

Command add_models(CLI::App& app) {
  return add_list_command(app, "models", "List model presets", models_table, api::models_list);
}

}  // namespace ftcost::cli
