#include "plan_cmd.hpp"

#include "command.hpp"
#include "fileio.hpp"
#include "format.hpp"
#include "ftcost/plan_config.hpp"

#include <algorithm>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

namespace ftcost::cli {

int run_plan(const Request& all, const Database& db, const FileReader& reader, long today_days,
             const PlanCmdOptions& opt) {
  if (opt.config.empty() && (opt.pick >= 0 || !opt.out.empty()))
    return fail(make_error(Errc::invalid_value, opt.pick >= 0 ? "--pick" : "--out",
                           "applies only with --config STACK (the config to write)"));
  auto pr = parse_plan_request(all, db);
  if (!pr.ok()) return fail(pr.error());
  auto r = plan(pr->job, pr->constraints, db, reader, today_days);
  if (!r.ok()) return fail(r.error());
  const PlanResult& res = r.value();
  if (opt.pick >= 0 && opt.pick >= static_cast<int>(res.front.size()))
    return fail(make_error(Errc::out_of_range, "--pick",
                           "no plan " + std::to_string(opt.pick) + " on the front (ids 0 to " +
                               std::to_string(static_cast<int>(res.front.size()) - 1) + ")"));
  if (!opt.config.empty()) {
    // The runnable config of the best plan (or --pick N): the main file at --out, its companions
    // (accelerate.yaml, deepspeed.json) beside it under their own names, each written atomically.
    if (opt.out.empty())
      return fail(make_error(Errc::invalid_value, "--out", "--config needs --out FILE for the config"));
    const int id = opt.pick >= 0 ? opt.pick : res.best;
    if (id < 0)
      return fail(make_error(Errc::invalid_value, "--config",
                             "no plan meets the constraints: nothing to write a config for"));
    const PlanEntry& e = res.front[static_cast<std::size_t>(id)];
    auto pc = plan_config(e.request, opt.config, db, reader, today_days);
    if (!pc.ok()) return fail(pc.error());
    // All or none: a companion that cannot be written leaves --out as it was, and --out may not name a
    // companion's file (the companion would replace the config).
    const std::size_t slash = opt.out.find_last_of('/');
    const std::string dir = slash == std::string::npos ? std::string() : opt.out.substr(0, slash + 1);
    std::vector<OutputFile> files;
    for (std::size_t i = 0; i < pc->files.size(); ++i) {
      const ConfigFile& f = pc->files[i];
      files.push_back({i == 0 ? opt.out : dir + f.name, f.text, "--out",
                       i == 0 ? "the " + f.role + " config (--out)"
                              : "the " + f.role + " companion (a fixed name beside --out)"});
    }
    if (auto w = write_files_atomic(files); !w.ok()) return fail(w.error());
    for (std::size_t i = 0; i < files.size(); ++i)
      std::cout << "wrote " << printable(files[i].path) << " (" << pc->files[i].role << ")\n";
    // the launch command names the main file as written
    std::string command = pc->command;
    const std::string main_name = opt.out.substr(slash == std::string::npos ? 0 : slash + 1);
    const std::size_t at = command.find(pc->files.front().name);
    if (at != std::string::npos) command.replace(at, pc->files.front().name.size(), main_name);
    std::cout << "plan " << id << " (" << e.shape.ranks() << "x " << e.shape.gpu_id << ", " << e.method
              << "); run: " << command << "\n";
    return 0;
  }
  if (opt.as_json) {
    std::cout << plan_to_json(res).dump(2) << "\n";
    return 0;
  }
  if (opt.as_csv) {
    std::cout << printable_csv(plan_to_csv(res));
    return 0;
  }
  std::cout << "ftcost plan: " << res.front.size() << " plan" << (res.front.size() == 1 ? "" : "s")
            << " on the time/cost front (" << res.considered << " candidates, " << res.estimates
            << " estimates, " << fixed(res.search_ms, 1) << " ms)\n";
  if (!res.front.empty()) {
    Table t({"id", "GPUs", "provider", "$/h", "method", "stack", "parallel", "ckpt", "mb x acc", "hours",
             "cost", "peak GiB", "bottleneck"},
            {true, false, false, true, false, false, false, false, false, true, true, true, false});
    for (const auto& e : res.front) {
      const std::string gpus = std::to_string(e.shape.ranks()) + "x " + e.shape.gpu_id;
      t.row({std::to_string(e.id) + (e.id == res.best ? "*" : ""), gpus,
             printable(e.shape.provider) + (e.shape.spot ? " (spot)" : ""), fixed(e.shape.usd_per_hour, 2),
             e.method, e.stack, e.parallel, e.checkpointing,
             std::to_string(e.micro_batch) + " x " + std::to_string(e.grad_accum), fixed(e.hours, 2),
             money(e.cost_usd), fixed(e.peak_gib_per_gpu, 1), e.bottleneck});
    }
    std::cout << t.str();
  }
  if (res.best >= 0) {
    const PlanEntry& b = res.front[static_cast<std::size_t>(res.best)];
    std::cout << "\nbest (minimize " << res.constraints.minimize << "): plan " << b.id << " — " << b.why
              << "\n  reproduce: ftcost estimate";
    for (const auto& [k, v] : b.request) std::cout << " --" << k << " " << printable(v);
    std::cout << "\n";
  } else {
    std::cout << "\nno plan meets the constraints\n";
  }
  for (const auto& e : res.front)
    for (const auto& w : e.warnings) std::cout << "warning: plan " << e.id << ": " << printable(w) << "\n";
  if (!res.pruned.empty()) {
    std::cout << "pruned:";
    for (const auto& [k, v] : res.pruned) std::cout << " " << k << " " << v;
    std::cout << "\n";
  }
  for (const auto& n : res.notes) std::cout << "note: " << printable(n) << "\n";
  for (const auto& a : res.alternatives)
    std::cout << "not chosen: " << printable(a.what) << " — " << printable(a.why_not) << "\n";
  return 0;
}

// the job's flags but what the search chooses (GPU, shape, strategy, batch, price), and the plan's constraint
// flags (plan_constraint_keys(): --gpus and --spot are constraints here)
Command add_plan(CLI::App& app) {
  struct State {
    Request req;  // the job's flags and the constraints
    PlanCmdOptions opt;
  };
  auto s = std::make_shared<State>();
  auto* pln = app.add_subcommand(
      "plan",
      "Search GPU x shape x strategy x method x batch: the time/cost front, the best plan, its config");
  std::vector<std::string> skip = plan_chosen_keys();
  for (const auto& k : plan_constraint_keys()) skip.push_back(k.key);
  add_job_options(pln, s->req, skip);
  Request& preq = s->req;
  for (const auto& k : plan_constraint_keys()) {
    const std::string key = k.key;
    pln->add_option_function<std::string>(
        "--" + key, [&preq, key](const std::string& v) { preq[key] = v; }, k.help);
  }
  // The flags the search chooses itself are taken too (hidden from --help), so that parse_plan_request says
  // "is chosen by the plan" and how to restrict the search, not CLI11's "arguments were not expected".
  for (const auto& key : plan_chosen_keys()) {
    const auto& ck = plan_constraint_keys();
    if (std::any_of(ck.begin(), ck.end(), [&key](const PlanConstraintKey& k) { return k.key == key; }))
      continue;
    pln->add_option_function<std::string>("--" + key, [&preq, key](const std::string& v) { preq[key] = v; })
        ->group("");
  }
  PlanCmdOptions& popt = s->opt;
  auto* pln_json = pln->add_flag("--json", popt.as_json, "print JSON");
  pln->add_flag("--csv", popt.as_csv, "print CSV")->excludes(pln_json);
  pln->add_option("--config", popt.config,
                  "write the runnable config of the best plan (or --pick N) for this stack: trl, torchtune, "
                  "axolotl, llamafactory, unsloth");
  pln->add_option("--out", popt.out, "file the --config is written to (companion files beside it)");
  pln->add_option("--pick", popt.pick, "the plan id (from the front) for --config")
      ->check(number_in(0, 100000, "a plan id, 0 or more"));
  return {pln, [s] { return run_plan(s->req, Database::embedded(), read_input_file, today_days(), s->opt); }};
}

}  // namespace ftcost::cli
