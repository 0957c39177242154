// gpu-db checker, runs (runs/<gpu-id>/<name>.json): a user's training run (ftcost.run/1) contributed as a
// reference row of `ftcost validate`.
#include "checks.hpp"
#include "ftcost/run.hpp"
#include "ftcost/stack.hpp"

namespace ftcost::dbcheck {

// runs/<gpu-id>/<name>.json: a user's training run (ftcost.run/1) contributed as a reference row of
// `ftcost validate`. The run loader checks the fields and their physical ranges against `db` (GPU and model
// exist, memory within the GPU, tokens within the padded shape); here: the GPU is the folder's, the shapes
// were observed (not assumed by an importer), there are timed steps to compare, and the times are not
// below the forward pass at the GPU's peak (the same check as the fit).
void check_run_entries(std::vector<Entry>& entries, const Database& db) {
  for (Entry& e : entries) {
    if (e.kind != "run" || !e.parsed) continue;
    const auto parts = split_path(e.rel);
    const std::string folder_gpu = parts.size() == 3 ? parts[1] : std::string();
    const std::string base = parts.empty() ? std::string() : parts.back();
    if (base.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") !=
        std::string::npos)
      e.sink.add(kWholeFile, Errc::invalid_value,
                 "run file names use letters, digits, '.', '_' and '-' only");
    auto run = parse_run(*e.content, e.rel, db);
    if (!run.ok()) {
      e.sink.add_loader_error(run.error());
      continue;
    }
    if (db.gpu(folder_gpu) == nullptr) {
      e.sink.add(kWholeFile, Errc::unknown_id,
                 std::string("filed under runs/")
                     .append(folder_gpu)
                     .append("/ but there is no gpus/")
                     .append(folder_gpu)
                     .append(".json: the folder is the id of the GPU the run used"));
      continue;
    }
    if (run->model_config.is_object())
      e.sink.add("model.preset", Errc::missing_field,
                 "runs in gpu-db name a model preset of models/ (its config.json alone is not a reference "
                 "model); add the preset first or keep the run to yourself");
    if (run->gpu_id != folder_gpu)
      e.sink.add("gpu", Errc::invalid_value,
                 "the run was recorded on " + run->gpu_id + " but is filed under runs/" + folder_gpu + "/");
    for (std::size_t i = 0; i < run->steps.size(); ++i)
      for (const auto& mb : run->steps[i].micro)
        if (mb.assumed) {
          e.sink.add("steps[" + std::to_string(i) + "].micro_batches", Errc::invalid_value,
                     "shape assumed by an importer, not observed: gpu-db takes runs recorded with "
                     "tools/ftcost_probe.py (observed shapes)");
          break;
        }
    if (run->timed_steps() < 3)
      e.sink.add(
          "steps", Errc::invalid_value,
          "needs at least 3 timed steps outside the warm-up, has " + std::to_string(run->timed_steps()));
    const StackProfile* stack = db.stack(kPaperStackId);
    if (stack == nullptr) continue;
    auto fit = fit_stack_to_runs({run.value()}, db, *stack);
    if (!fit.ok()) e.sink.add_loader_error(fit.error());
  }
}

}  // namespace ftcost::dbcheck
