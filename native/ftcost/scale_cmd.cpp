// `ftcost scale`: the job on 1, 2, 4, 8... GPUs: time, cost, throughput and scaling efficiency per count.
#include "command.hpp"
#include "fileio.hpp"
#include "format.hpp"
#include "ftcost/scaling.hpp"

#include <iostream>
#include <memory>
#include <string>
#include <vector>

namespace ftcost::cli {

namespace {

struct ScaleState {
  Request req;
  std::string counts;
  const CLI::Option* counts_flag = nullptr;  // given, perhaps with an empty value
  bool as_json = false, as_csv = false;
};

int run_scale(const ScaleState& st) {
  const Database& db = Database::embedded();
  std::vector<int> counts;
  if (st.counts_flag != nullptr && st.counts_flag->count() > 0 && st.counts.empty())
    return fail(make_error(Errc::invalid_value, "--counts",
                           "is empty; give GPU counts such as 1,2,4,8 or leave the option out"));
  if (!st.counts.empty()) {
    auto c = parse_counts(st.counts);
    if (!c.ok()) return fail(c.error());
    counts = c.value();
  }
  auto s = scaling_series(st.req, db, read_input_file, today_days(), counts);
  if (!s.ok()) return fail(s.error());
  if (st.as_json) {
    print_json(scaling_to_json(s.value()));
    return 0;
  }
  if (st.as_csv) {
    std::cout << printable_csv(scaling_to_csv(s.value()));
    return 0;
  }
  Table t({"GPUs", "nodes", "strategy", "batch/GPU", "peak/GPU", "step", "exposed comm", "queries/s",
           "speedup", "efficiency", "time", "cost", "$/GPU-h", "note"},
          {true, true, false, true, true, true, true, true, true, true, true, true, false, false});
  for (const auto& p : s->points) {
    if (!p.error.empty()) {
      t.row({std::to_string(p.gpus), std::to_string(p.nodes), p.strategy, "-", "-", "-", "-", "-", "-", "-",
             "-", "-", "-", "error: " + p.error});
      continue;
    }
    if (!p.fits) {
      t.row({std::to_string(p.gpus), std::to_string(p.nodes), p.strategy, std::to_string(p.micro_batch),
             fixed(p.per_rank_peak_gib, 1) + " GiB", "-", "-", "-", "-", "-", "-", "-", "-", "does not fit"});
      continue;
    }
    t.row({std::to_string(p.gpus), std::to_string(p.nodes), p.strategy, std::to_string(p.micro_batch),
           fixed(p.per_rank_peak_gib, 1) + " GiB", fixed(p.step_s, 3) + " s",
           fixed(p.comm_exposed_s, 3) + " s", fixed(p.qps, 2), fixed(p.speedup, 2) + "x",
           fixed(100 * p.efficiency, 0) + "%", duration(p.hours), p.cost_usd > 0 ? money(p.cost_usd) : "-",
           p.usd_per_gpu_hour > 0 ? fixed(p.usd_per_gpu_hour, 2) + " (" + printable(p.price_provider) +
                                        (p.price_basis == "per-gpu" ? ", per GPU" : "") + ")"
                                  : "-",
           std::string(p.gpus == s->base_gpus ? "base" : "") +
               (p.global_batch_exceeds_data ? "global batch > data: idle GPUs" : "")});
  }
  std::cout << "ftcost scale: " << printable(s->gpu) << ", " << s->node_gpus << " GPUs per node"
            << (s->network != "none" ? ", " + s->network + " between nodes" : std::string(", one node"))
            << "; speedup = time of the smallest count that fits / time (whole optimizer steps), efficiency "
               "= speedup per GPU";
  std::cout << "; each count priced by the one price rule for its shape (an instance of that many GPUs, else "
               "\"per GPU\": that many single-GPU prices)";
  std::cout << "\n" << t.str();
  if (s->base_gpus == 0) std::cout << "the job fits on none of these GPU counts\n";
  return 0;
}

}  // namespace

// the estimate's flags on 1, 2, 4, 8... GPUs
Command add_scale(CLI::App& app) {
  auto s = std::make_shared<ScaleState>();
  auto* scl = app.add_subcommand(
      "scale", "The job on 1, 2, 4, 8... GPUs: time, cost, throughput and scaling efficiency per GPU count");
  add_job_options(scl, s->req, {"nodes"});
  s->counts_flag = scl->add_option(
      "--counts", s->counts,
      "GPU counts, e.g. 1,2,4,8,16 (default 1, 2, 4... up to a node, and 2 and 4 nodes with a "
      "network); above --gpus (GPUs per node, default 8) a count is whole nodes");
  auto* scl_json = scl->add_flag("--json", s->as_json, "print JSON");
  scl->add_flag("--csv", s->as_csv, "print CSV")->excludes(scl_json);
  return {scl, [s] { return run_scale(*s); }};
}

}  // namespace ftcost::cli
