#include "ftcost/memory.hpp"
#include "ftcost/units.hpp"
#include "run_internal.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>
#include <utility>

namespace ftcost {

using run_detail::kConfigPath;

namespace {

// Lower-case words of a GPU name without vendor/brand words and parentheses ("NVIDIA A100-SXM4-80GB" ->
// {a100, sxm4, 80gb}).
std::vector<std::string> name_tokens(const std::string& name) {
  std::string s = name.substr(0, name.find('('));
  std::vector<std::string> out;
  std::string cur;
  auto flush = [&] {
    static const std::set<std::string> drop = {"nvidia", "tesla", "geforce", "amd", "intel", "instinct",
                                               "gpu",    "per",   "side",    "hgx", "dgx"};
    if (!cur.empty() && drop.count(cur) == 0) out.push_back(cur);
    cur.clear();
  };
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c)))
      cur += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    else
      flush();
  }
  flush();
  return out;
}

// The database GPU a recorded name (and memory) stands for: every word of the database name must occur
// in the recorded name; among several, the one with the most words, then the closest memory size.
Result<std::string> match_gpu(const std::string& name, double memory_bytes, const Database& db) {
  const auto rec = name_tokens(name);
  std::set<std::string> have(rec.begin(), rec.end());
  std::vector<std::pair<std::string, std::size_t>> hits;
  std::size_t best = 0;
  for (const auto& [id, g] : db.gpus()) {
    const auto want = name_tokens(g.name);
    if (want.empty()) continue;
    bool all = true;
    for (const auto& w : want) all = all && have.count(w) > 0;
    if (!all) continue;
    hits.emplace_back(id, want.size());
    best = std::max(best, want.size());
  }
  std::vector<std::string> ids;
  for (const auto& [id, n] : hits)
    if (n == best) ids.push_back(id);
  if (ids.size() > 1 && memory_bytes > 0) {
    // keep the GPUs whose label is within 10% of the recorded memory
    std::vector<std::string> close;
    for (const auto& id : ids)
      if (std::fabs(db.gpu(id)->memory_gib * kGiB - memory_bytes) < 0.1 * memory_bytes) close.push_back(id);
    if (!close.empty()) ids = close;
  }
  if (ids.size() == 1) return ids[0];
  if (ids.empty())
    return make_error(
        Errc::unknown_id, "gpu.name",
        "\"" + name + "\" matches no GPU of the database; set gpu.id to one of " + join_ids(db.gpu_ids()));
  return make_error(Errc::invalid_value, "gpu.name",
                    "\"" + name + "\" could be " + join_ids(ids) + "; set gpu.id to the one it is");
}

std::string version_of(const json& software, const char* name) {
  if (!software.is_object() || !software.contains(name) || !software.at(name).is_string()) return "";
  return software.at(name).get<std::string>();
}

// The profile whose software_versions cover the deciding package's version (and transformers'), with its
// note added to `why`; "" when none does (older than every profile).
std::string covering_profile(const Database& db, const std::string& package, MajorMinor version,
                             MajorMinor transformers, std::string& why) {
  for (const auto& [id, stack] : db.stacks())
    for (const auto& range : stack.software_versions)
      if (range.package == package && range.covers(version, transformers)) {
        if (!range.note.empty()) why += ": " + range.note;
        return id;
      }
  why += ": older than every profile, the default stack";
  return "";
}

}  // namespace

std::string stack_for_software(const json& software, const Database& db, std::string& why) {
  why.clear();
  for (const char* other : {"unsloth", "torchtune"})
    if (!version_of(software, other).empty()) {
      why = std::string(other) + " " + version_of(software, other) + " recorded: no rule, the default stack";
      return "";
    }
  const std::string tf = version_of(software, "transformers");
  const std::string trl = version_of(software, "trl");
  const MajorMinor t = major_minor(tf);
  const MajorMinor r = major_minor(trl);
  // Trainers on top of transformers, with their own model preparation (QLoRA norms and embeddings bf16) and
  // the model's own loss: the transformers their release installed decides its bytes (docs/sources/stacks/
  // trl-peft.md: axolotl and LLaMA-Factory read at their release tags). Which versions map to which profile
  // is the profiles' software_versions (gpu-db/stacks/); the order the packages decide in is this.
  for (const char* pkg : {"axolotl", "llamafactory"}) {
    const std::string v = version_of(software, pkg);
    if (v.empty()) continue;
    why = std::string(pkg) + " " + v + " on transformers " + (tf.empty() ? "(not recorded)" : tf);
    if (t.first < 0) {
      why += ": the transformers version decides the profile, the default stack";
      return "";
    }
    return covering_profile(db, pkg, major_minor(v), t, why);
  }
  if (!trl.empty() && r.first >= 0) {
    why = "trl " + trl;
    return covering_profile(db, "trl", r, t, why);
  }
  if (t.first < 0) return "";
  why = "transformers " + tf + " without trl (the model's own loss)";
  return covering_profile(db, "transformers", t, t, why);
}

std::string stack_for_software(const json& software, std::string& why) {
  return stack_for_software(software, Database::embedded(), why);
}

namespace {

// --- GPU: the recorded id, or the recorded name matched against the database
Status resolve_gpu(const Database& db, RunFile& run) {
  const RunGpuRecord& g = run.gpu;
  if (!g.id.empty()) {
    if (db.gpu(g.id) == nullptr)
      return make_error(Errc::unknown_id, "gpu.id",
                        "unknown GPU \"" + g.id + "\"" + known_ids_hint(g.id, db.gpu_ids()));
    run.gpu_id = g.id;
  } else {
    const double gmem = g.memory_bytes.is_number() ? g.memory_bytes.get<double>() : -1.0;
    FTCOST_TRY(m, match_gpu(g.name, gmem, db));
    run.gpu_id = m;
    run.notes.push_back("gpu.name \"" + g.name + "\" taken as " + m);
  }
  FTCOST_CHECK(check_run_memory(run, *db.gpu(run.gpu_id)));
  if (g.count != 1)
    run.notes.push_back("gpu.count = " + std::to_string(g.count) +
                        ": the run is read as one GPU's work (data-parallel ranks each time their own step)");
  run.request["gpu"] = run.gpu_id;
  return Ok{};
}

// The stack the run's recorded software points to (kept only when the database has it).
void resolve_software_stack(const Database& db, RunFile& run) {
  run.software_stack = stack_for_software(json(run.software), db, run.software_stack_why);
  if (!run.software_stack.empty() && db.stack(run.software_stack) == nullptr) run.software_stack.clear();
}

// --- model: a preset of the database, or the recorded config.json (read through the virtual kConfigPath)
Status resolve_model(const Database& db, RunFile& run) {
  const std::string& preset = run.model_preset;
  if (preset.empty()) {
    run.request["model"] = kConfigPath;
    return Ok{};
  }
  if (db.model(preset) == nullptr)
    return make_error(Errc::unknown_id, "model.preset",
                      "unknown model \"" + preset + "\"" + known_ids_hint(preset, db.model_ids(), "presets"));
  run.request["model"] = preset;
  return Ok{};
}

// --- training arguments as the request's options (absent ones take the estimate's defaults)
void training_request(RunFile& run) {
  const RunTraining& t = run.training;
  Request& request = run.request;
  request["method"] = t.method;
  if (!t.quant.empty() && t.method == "qlora") request["quant"] = t.quant;
  for (auto [option, value] :
       {std::make_pair("precision", &t.precision), std::make_pair("optimizer", &t.optimizer),
        std::make_pair("adamw-impl", &t.adamw_impl), std::make_pair("attention", &t.attention)})
    if (!value->empty()) request[option] = *value;
  if (t.checkpointing) request["checkpointing"] = *t.checkpointing ? "on" : "off";
  if (t.lora_rank > 0) request["lora-rank"] = std::to_string(t.lora_rank);
  if (!t.lora_targets.empty()) request["lora-targets"] = t.lora_targets;
  if (t.lora_dropout > 0) request["lora-dropout"] = json(t.lora_dropout).dump();
  for (auto [name, recorded] :
       {std::make_pair("precision", !t.precision.empty()), std::make_pair("optimizer", !t.optimizer.empty()),
        std::make_pair("attention", !t.attention.empty()),
        std::make_pair("checkpointing", t.checkpointing.has_value())})
    if (!recorded)
      run.notes.push_back(std::string("training.") + name + " not recorded: the estimate's default");
}

// --- steps: the first shape's sequence length and batch for the request
void steps_request(RunFile& run) {
  const auto shapeless =
      std::count_if(run.steps.begin(), run.steps.end(), [](const RunStep& s) { return s.micro.empty(); });
  if (shapeless > 0)
    run.notes.push_back(std::to_string(shapeless) +
                        " step record(s) without a batch shape: not used for fitting");
  // The shapes' sequence length for the request (any valid value: every prediction passes its own).
  for (const auto& s : run.steps)
    if (!s.micro.empty()) {
      run.request["seq"] = std::to_string(static_cast<long long>(s.micro[0].seq_len));
      run.request["batch"] = std::to_string(static_cast<long long>(s.micro[0].batch));
      break;
    }
}

}  // namespace

Result<RunFile> parse_run(const std::string& text, const std::string& source, const Database& db) {
  FTCOST_TRY(record, parse_run_record(text, source));
  RunFile run;
  static_cast<RunRecord&>(run) = std::move(record);
  FTCOST_CHECK(resolve_gpu(db, run));
  resolve_software_stack(db, run);
  FTCOST_CHECK(resolve_model(db, run));
  training_request(run);
  steps_request(run);
  return run;
}

Result<Inputs> run_inputs(const RunFile& run, const Database& db) {
  const json cfg = run.model_config;
  FileReader reader = [cfg](const std::string& path) -> Result<std::string> {
    if (path == kConfigPath && cfg.is_object()) return cfg.dump();
    return make_error(Errc::io_error, path, "a run file reads no other files");
  };
  auto in = resolve_request(run.request, db, reader);
  if (!in.ok()) {
    Error e = in.error();
    e.field = run.source + ": " + e.field;
    return e;
  }
  return in;
}

}  // namespace ftcost
