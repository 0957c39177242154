// `ftcost sweep`: throughput, step time and memory of one job against the batch size.
#include "command.hpp"
#include "fileio.hpp"
#include "format.hpp"
#include "ftcost/sweep.hpp"

#include <iostream>
#include <memory>
#include <string>

namespace ftcost::cli {

namespace {

struct SweepState {
  Request req;
  bool as_json = false, as_csv = false;
  int points = 36;
};

int run_sweep(const SweepState& s) {
  const Database& db = Database::embedded();
  Request r = s.req;
  r["batch"] = "max";
  auto in = resolve_request(r, db, read_input_file, today_days());
  if (!in.ok()) return fail(in.error());
  if (in->multi.active() || !in->multi.parallel.empty())
    return fail(make_error(Errc::invalid_value, in->multi.gpus * in->multi.nodes > 1 ? "--gpus" : "--offload",
                           "sweep covers one GPU; multi-GPU sweeps are not built yet (use `ftcost estimate` "
                           "with --gpus/--parallel and --batch)"));
  const Sweep sw = batch_sweep(in.value(), db, s.points);
  if (!sw.error.empty() && sw.points.empty()) {
    if (sw.code == Errc::does_not_fit)
      return fail(make_error(Errc::does_not_fit, "--gpu",
                             in.value().model.id + " does not fit on " + in.value().gpu.id + " at batch 1"));
    return fail(make_error(sw.code, "", sw.error));
  }
  if (s.as_json) {
    print_json(sweep_to_json(sw));
    return 0;
  }
  if (s.as_csv) {
    std::cout << printable_csv(sweep_to_csv(sw));
    return 0;
  }
  Table t({"batch", "fits", "memory GiB", "step s", "queries/s", "range", "tokens/s"},
          {true, false, true, true, true, false, true});
  for (const auto& p : sw.points)
    t.row({fixed(p.batch, 0), p.fits ? "yes" : "no", fixed(p.memory_gib, 1), fixed(p.step_s, 3),
           fixed(p.qps, 3), fixed(p.qps_low, 3) + "–" + fixed(p.qps_high, 3), fixed(p.tokens_per_s, 0)});
  std::cout << "ftcost sweep: " << printable(in.value().model.id) << " on " << printable(in.value().gpu.id)
            << ", maximum batch " << static_cast<long long>(sw.max_batch) << "\n"
            << t.str();
  return 0;
}

}  // namespace

// the estimate's flags but --batch (every batch size up to beyond the maximum)
Command add_sweep(CLI::App& app) {
  auto s = std::make_shared<SweepState>();
  auto* swp =
      app.add_subcommand("sweep", "Throughput, step time and memory of one job against the batch size");
  add_job_options(swp, s->req, {"batch"});
  swp->add_option("--points", s->points, "about this many batch sizes, log-spaced when the range is larger")
      ->check(CLI::Range(2, 1000));
  auto* swp_json = swp->add_flag("--json", s->as_json, "print JSON");
  swp->add_flag("--csv", s->as_csv, "print CSV")->excludes(swp_json);
  return {swp, [s] { return run_sweep(*s); }};
}

}  // namespace ftcost::cli
