#include "compare_cmd.hpp"

#include "command.hpp"
#include "fileio.hpp"
#include "format.hpp"

#include <algorithm>
#include <iostream>
#include <memory>
#include <sstream>
#include <vector>

namespace ftcost::cli {

int run_compare(const Request& req, const Database& db, const FileReader& reader, long today_days,
                const CompareOptions& opt) {
  for (const auto& id : opt.view.gpu_types)
    if (db.gpu(id) == nullptr)
      return fail(make_error(Errc::unknown_id, "--gpu-types",
                             "unknown GPU \"" + id + "\"" + known_ids_hint(id, db.gpu_ids())));
  auto all = compare_gpus(req, db, reader, today_days, {}, opt.max_gpus);
  if (!all.ok()) return fail(all.error());
  const std::vector<CompareRow> rows = compare_view(all.value(), opt.view);
  const int cheapest = cheapest_row(rows, opt.view.spot);

  if (opt.as_csv) {
    std::cout << printable_csv(compare_to_csv(rows));
    return 0;
  }
  if (opt.as_json) {
    std::cout << compare_to_json(rows, opt.view).dump(2) << "\n";
    return 0;
  }

  // GPUs of the shape: "8" on one node, "2x8" for two nodes of 8
  auto shape = [](const CompareRow& r) {
    return r.nodes > 1 ? std::to_string(r.nodes) + "x" + std::to_string(r.gpus_per_node)
                       : std::to_string(r.gpus_per_node);
  };
  Table t({"GPU", "memory", "GPUs", "strategy", "batch", "max batch", "peak/rank", "samples/s", "time",
           "provider", "price", "$/GPU-h", "$/h", "cost", "note"},
          {false, true, true, false, true, true, true, true, true, false, false, true, true, true, false});
  int fitting = 0, stack_na = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    std::string note;
    if (static_cast<int>(i) == cheapest) note = "cheapest (the price rule)";
    if (!r.stack_warning.empty()) {
      note = "stack n/a";
      ++stack_na;
    }
    if (r.has_price && r.price_basis == "per-gpu")
      note += std::string(note.empty() ? "" : ", ") + "no " + std::to_string(r.gpus_per_node) +
              "-GPU instance priced: " + std::to_string(r.gpus()) + " x a " + std::to_string(r.gpu_count) +
              "-GPU offer's price";
    if (!r.error.empty()) {
      t.row({r.gpu_name, fixed(r.memory_gib, 0) + " GiB", shape(r), "-", "-", "-", "-", "-", "-", "-", "-",
             "-", "-", "-", "error: " + r.error});
      continue;
    }
    if (!r.fits) {
      t.row({r.gpu_name, fixed(r.memory_gib, 0) + " GiB", shape(r), r.strategy, "-",
             r.max_batch > 0 ? fixed(r.max_batch, 0) : std::string("0"),
             fixed(r.per_rank_peak_gib, 1) + " GiB", "-", "-", "-", "-", "-", "-", "-",
             r.max_batch > 0 ? "the batch asked for does not fit" : "does not fit at batch 1"});
      continue;
    }
    ++fitting;
    const std::string price = r.has_price ? price_class(r.date, r.stale) : "-";
    t.row({r.gpu_name, fixed(r.memory_gib, 0) + " GiB", shape(r), r.strategy, std::to_string(r.batch),
           fixed(r.max_batch, 0), fixed(r.per_rank_peak_gib, 1) + " GiB", fixed(r.qps, 2), duration(r.hours),
           r.has_price ? r.provider + (r.spot ? " (spot)" : "") : "no price", price,
           r.has_price ? fixed(r.usd_per_hour, 2) : "-", r.has_price ? fixed(r.shape_usd_per_hour, 2) : "-",
           r.has_price ? money(r.cost) : "-", note});
  }
  std::cout
      << "ftcost compare: the job on " << rows.size() << (opt.view.offers ? " offers" : " GPUs") << " ("
      << fitting << " fit); " << (opt.view.spot ? "on-demand and spot" : "on-demand") << " prices"
      << (opt.view.spot ? "" : " (--spot on adds spot offers)")
      << (opt.view.offers ? "" : ", each GPU's cheapest")
      << "; GPUs = the instance (AxB: A instances of B GPUs), batch and max batch per GPU, cost = $/h x "
         "time; the price rule ranks fresh prices before stale ones before undated ones, then by cost\n"
      << t.str();
  if (cheapest < 0) std::cout << "no GPU in the database both fits the job and has a price\n";
  if (stack_na > 0) {
    const auto it =
        std::find_if(rows.begin(), rows.end(), [](const CompareRow& r) { return !r.stack_warning.empty(); });
    std::cout << "stack n/a: the chosen stack's software does not run on these GPUs, e.g. "
              << it->stack_warning << ". They are not ranked as cheapest.\n";
  }
  return 0;
}

// the estimate's flags but --gpu (every GPU) and the price choice (every offer)
Command add_compare(CLI::App& app) {
  struct State {
    Request req;
    CompareOptions opt;
  };
  auto s = std::make_shared<State>();
  auto* cmp = app.add_subcommand(
      "compare",
      "The same job on every rentable instance shape (each offer's GPUs, several instances where the offer "
      "names its network): fits, strategy, speed, time, cost; cheapest first");
  add_job_options(cmp, s->req, {"gpu", "provider", "price-per-hour", "calibration", "run", "spot"});
  CompareOptions& copt = s->opt;
  cmp->add_option_function<std::string>(
         "--spot", [&copt](const std::string& v) { copt.view.spot = v == "on"; },
         "on | off: include spot (interruptible) offers (default off)")
      ->check(CLI::IsMember({"on", "off"}));
  cmp->add_flag("--offers", copt.view.offers, "list every price offer, not only each GPU's cheapest");
  cmp->add_flag("--fits-only", copt.view.fits_only, "hide GPUs where the job does not fit");
  cmp->add_option_function<std::string>(
      "--gpu-types",
      [&copt](const std::string& v) {
        copt.view.gpu_types.clear();
        std::stringstream ss(v);
        for (std::string id; std::getline(ss, id, ',');)
          if (!id.empty()) copt.view.gpu_types.push_back(id);
      },
      "LIST: comma-separated GPU type ids to show (default: all); --gpus is the GPU count per instance");
  cmp->add_option("--max-gpus", copt.max_gpus,
                  "rank instance shapes of at most this many GPUs in all (default 64); --gpus N keeps "
                  "instances of N GPUs, --nodes M shapes of M instances")
      ->check(CLI::Range(1, 4096));
  auto* cmp_json = cmp->add_flag("--json", copt.as_json, "print JSON");
  cmp->add_flag("--csv", copt.as_csv, "print CSV")->excludes(cmp_json);
  return {cmp,
          [s] { return run_compare(s->req, Database::embedded(), read_input_file, today_days(), s->opt); }};
}

}  // namespace ftcost::cli
