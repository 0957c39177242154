// `ftcost gpus [--json]`: the GPUs of the database.
#include "command.hpp"
#include "format.hpp"
#include "ftcost/api.hpp"
#include "ftcost/database.hpp"

#include <string>

namespace ftcost::cli {

namespace {

std::string gpus_table(const Database& db) {
  Table t({"id", "name", "memory", "usable", "bandwidth", "bf16 dense", "prices"},
          {false, false, true, true, true, true, true});
  for (const auto& [id, g] : db.gpus()) {
    t.row({id, g.name, fixed(g.memory_gib, 0) + " GiB",
           fixed(g.usable_bytes() / kGiB, 1) + " GiB" + (g.usable_memory_estimated() ? "*" : ""),
           fixed(g.memory_bandwidth_gbps, 0) + " GB/s",
           g.bf16_tflops > 0 ? fixed(g.bf16_tflops, 0) + " TFLOP/s" : "-",
           std::to_string(db.offers_for(id).size())});
  }
  return t.str() + "* estimated as 97.5% of the label (no nvidia-smi total known)\n";
}

}  // namespace

Command add_gpus(CLI::App& app) {
  return add_list_command(app, "gpus", "List GPUs in the database", gpus_table, api::gpus_list);
}

}  // namespace ftcost::cli
