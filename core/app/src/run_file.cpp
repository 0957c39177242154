#include "ftcost/memory.hpp"
#include "ftcost/units.hpp"
#include "run_internal.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <tuple>
#include <utility>

namespace ftcost {

using run_detail::idx;
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

Result<std::string> opt_choice(const json& obj, const std::string& key, const std::string& path,
                               const std::vector<std::string>& allowed) {
  if (!has(obj, key)) return std::string();
  const json& v = obj.at(key);
  if (!v.is_string())
    return make_error(Errc::wrong_type, join_path(path, key),
                      "must be a string: one of " + join_ids(allowed));
  const std::string s = v.get<std::string>();
  for (const auto& a : allowed)
    if (s == a) return s;
  return make_error(Errc::invalid_value, join_path(path, key),
                    "must be one of " + join_ids(allowed) + ", got \"" + s + "\"");
}

double opt_bytes(const json& obj, const std::string& key) {
  return has(obj, key) && obj.at(key).is_number() ? obj.at(key).get<double>() : -1.0;
}

}  // namespace

bool RunFile::has_memory() const {
  return std::any_of(steps.begin(), steps.end(),
                     [](const RunStep& s) { return !s.warmup && s.max_allocated_bytes >= 0; });
}

std::size_t RunFile::timed_steps() const {
  std::size_t n = 0;
  for (const auto& s : steps) n += (!s.warmup && s.wall_s > 0 && !s.micro.empty()) ? 1 : 0;
  return n;
}

namespace {

std::string version_of(const json& software, const char* name) {
  if (!software.is_object() || !software.contains(name) || !software.at(name).is_string()) return "";
  return software.at(name).get<std::string>();
}

// training.lora_dropout (PEFT LoraConfig.lora_dropout, as ftcost_probe.py records it) as the request's
// lora-dropout; 0 and absent leave the estimate's default (0).
Status read_lora_dropout(const json& t, Request& request) {
  if (!has(t, "lora_dropout")) return Ok{};
  FTCOST_TRY(p, opt_number(t, "lora_dropout", "training", 0));
  if (!(p >= 0 && p <= 1))
    return make_error(Errc::out_of_range, "training.lora_dropout",
                      "must be in [0, 1], got " + json(p).dump());
  if (p > 0) request["lora-dropout"] = json(p).dump();
  return Ok{};
}

// The stack the run's recorded software points to (kept only when the database has it).
void read_software_stack(const json& doc, const Database& db, RunFile& run) {
  if (!has(doc, "software")) return;
  run.software_stack = stack_for_software(doc.at("software"), db, run.software_stack_why);
  if (!run.software_stack.empty() && db.stack(run.software_stack) == nullptr) run.software_stack.clear();
}

// torch AdamW's implementation of a run: recorded (training.adamw_impl), or read off the Trainer's own optim
// name in training_raw (adamw_torch is foreach, adamw_torch_fused fused: transformers' OptimizerNames), which
// recordings made before adamw_impl existed carry. Empty: not known (the stack's default applies) or not
// torch's AdamW (the recorded optimizer is another one).
Result<std::string> recorded_adamw_impl(const json& doc, const json& training, const std::string& path,
                                        const std::string& optimizer) {
  FTCOST_TRY(impl, opt_choice(training, "adamw_impl", path, {"foreach", "fused"}));
  if (!optimizer.empty() && optimizer != "adamw" && optimizer != "adamw-mixed") return std::string();
  if (!impl.empty() || !has(doc, "training_raw") || !doc.at("training_raw").is_object()) return impl;
  const json& raw = doc.at("training_raw");
  if (!has(raw, "optim") || !raw.at("optim").is_string()) return impl;
  const std::string o = raw.at("optim").get<std::string>();
  return std::string(o == "adamw_torch" ? "foreach" : o == "adamw_torch_fused" ? "fused" : "");
}

// training.optimizer and torch AdamW's implementation into the request.
Status read_optimizer(const json& doc, const json& training, const std::string& path, Request& request) {
  FTCOST_TRY(opt, opt_choice(training, "optimizer", path,
                             {"adamw", "adamw-mixed", "adamw-8bit", "paged-adamw", "paged-adamw-8bit", "sgd",
                              "sgd-momentum"}));
  if (!opt.empty()) request["optimizer"] = opt;
  FTCOST_TRY(impl, recorded_adamw_impl(doc, training, path, opt));
  if (!impl.empty()) request["adamw-impl"] = impl;
  return Ok{};
}

// recorder.source (what fit-stack reports), with the recorder's other fields checked against the schema.
Result<std::string> recorder_source(const json& doc) {
  if (!has(doc, "recorder")) return std::string();
  const json& rec = doc.at("recorder");
  if (!rec.is_object()) return make_error(Errc::wrong_type, "recorder", "must be an object");
  for (const char* k : {"tool", "version", "created_utc"}) {
    FTCOST_CHECK(opt_string(rec, k, "recorder", ""));
  }
  FTCOST_CHECK(opt_count(rec, "warmup_steps", "recorder", 0, 0, 1 << 30));
  return opt_choice(rec, "source", "recorder",
                    {"hook", "trainer-callback", "trainer_state", "torchtune-log"});
}

// gpu.memory_bytes as torch reports it (total_memory): a little below the label, less on a MIG slice,
// never far more.
Status check_gpu_memory(const json& g, const GpuSpec& gpu) {
  if (!has(g, "memory_bytes")) return Ok{};
  const json& v = g.at("memory_bytes");
  const double bytes = v.is_number() ? v.get<double>() : -1;
  if (bytes > 0 && bytes <= 1.5 * gpu.memory_gib * kGiB) return Ok{};
  return make_error(Errc::out_of_range, "gpu.memory_bytes",
                    "must be the GPU's memory in bytes, above 0 and at most 1.5 x the " +
                        json(gpu.memory_gib).dump() + " GiB of " + gpu.id + ", got " + v.dump());
}

// The training arguments recorded for the record (the steps carry the shapes the fit uses), checked
// against the schema all the same: a batch of 0 or a negative length is not a run.
Status check_recorded_training(const json& t) {
  for (const char* k : {"batch_size", "gradient_accumulation_steps", "max_length"}) {
    FTCOST_CHECK(opt_count(t, k, "training", 1, 1, std::int64_t{1} << 40));
  }
  FTCOST_CHECK(opt_bool(t, "packing", "training", false));
  return Ok{};
}

}  // namespace

namespace {

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

// --- GPU: an ftcost id, or the name nvidia-smi prints (matched against the database)
Status read_gpu(const json& doc, const Database& db, RunFile& run) {
  if (!has(doc, "gpu")) {
    std::string why = "not recorded";
    if (has(doc, "gpu_null_reason") && doc.at("gpu_null_reason").is_string())
      why = doc.at("gpu_null_reason").get<std::string>();
    return make_error(Errc::missing_field, "gpu",
                      "the run names no GPU (" + why + "); a step time needs the GPU it was measured on");
  }
  const json& g = doc.at("gpu");
  if (!g.is_object()) return make_error(Errc::wrong_type, "gpu", "must be an object");
  FTCOST_TRY(gname, opt_string(g, "name", "gpu", ""));
  FTCOST_TRY(gid, opt_string(g, "id", "gpu", ""));
  const double gmem = opt_bytes(g, "memory_bytes");
  run.gpu_name = gname;
  if (!gid.empty()) {
    if (db.gpu(gid) == nullptr)
      return make_error(Errc::unknown_id, "gpu.id",
                        "unknown GPU \"" + gid + "\"" + known_ids_hint(gid, db.gpu_ids()));
    run.gpu_id = gid;
  } else if (!gname.empty()) {
    FTCOST_TRY(m, match_gpu(gname, gmem, db));
    run.gpu_id = m;
    run.notes.push_back("gpu.name \"" + gname + "\" taken as " + m);
  } else {
    return make_error(Errc::missing_field, "gpu",
                      "needs id (an ftcost GPU id) or name (as nvidia-smi prints it)");
  }
  if (auto st = check_gpu_memory(g, *db.gpu(run.gpu_id)); !st.ok()) return st.error();
  FTCOST_TRY(gcount, opt_count(g, "count", "gpu", 1, 1, 1 << 20));
  if (gcount != 1)
    run.notes.push_back("gpu.count = " + std::to_string(gcount) +
                        ": the run is read as one GPU's work (data-parallel ranks each time their own step)");
  run.request["gpu"] = run.gpu_id;
  return Ok{};
}

// --- model: a preset id, or the model's own config.json (read through the virtual kConfigPath)
Status read_model(const json& doc, const Database& db, RunFile& run) {
  if (!has(doc, "model") || !doc.at("model").is_object())
    return make_error(Errc::missing_field, "model", "required object: preset (an ftcost id) or config");
  const json& m = doc.at("model");
  FTCOST_TRY(preset, opt_string(m, "preset", "model", ""));
  if (!preset.empty()) {
    if (db.model(preset) == nullptr)
      return make_error(
          Errc::unknown_id, "model.preset",
          "unknown model \"" + preset + "\"" + known_ids_hint(preset, db.model_ids(), "presets"));
    run.request["model"] = preset;
    return Ok{};
  }
  if (!has(m, "config") || !m.at("config").is_object())
    return make_error(Errc::missing_field, "model.config",
                      "the run carries neither a preset nor the model's config.json");
  auto spec = parse_model_file(m.at("config"), "model.config");
  if (!spec.ok()) {
    Error e = spec.error();
    e.field = "model.config" + (e.field.empty() ? std::string() : "." + e.field);
    e.message = "ftcost cannot read this config.json: " + e.message;
    return e;
  }
  run.model_config = m.at("config");
  run.request["model"] = kConfigPath;
  return Ok{};
}

// training.lora_targets: a comma-separated string or a list of PEFT module names.
Result<std::string> read_lora_targets(const json& lt) {
  std::string list;
  if (lt.is_string()) {
    list = lt.get<std::string>();
  } else if (lt.is_array()) {
    for (std::size_t i = 0; i < lt.size(); ++i) {
      if (!lt[i].is_string())
        return make_error(Errc::wrong_type, idx("training.lora_targets", i), "must be a module name");
      list += (list.empty() ? "" : ",") + lt[i].get<std::string>();
    }
  } else {
    return make_error(Errc::wrong_type, "training.lora_targets", "must be a list of PEFT module names");
  }
  FTCOST_CHECK(parse_lora_targets(list, "training.lora_targets"));
  return list;
}

Status read_lora(const json& t, const std::string& tp, Request& request) {
  if (has(t, "lora_rank")) {
    FTCOST_TRY(r, get_count(t, "lora_rank", tp, 1, 65536));
    request["lora-rank"] = std::to_string(r);
  }
  if (has(t, "lora_targets")) {
    FTCOST_TRY(list, read_lora_targets(t.at("lora_targets")));
    request["lora-targets"] = list;
  }
  return read_lora_dropout(t, request);
}

// --- training arguments (ftcost's names; absent ones take the estimate's defaults)
Status read_training(const json& doc, RunFile& run) {
  if (!has(doc, "training") || !doc.at("training").is_object())
    return make_error(Errc::missing_field, "training", "required object (method, precision, ...)");
  const json& t = doc.at("training");
  const std::string tp = "training";
  FTCOST_TRY(method, opt_choice(t, "method", tp, {"full", "lora", "qlora"}));
  if (method.empty())
    return make_error(Errc::missing_field, "training.method", "required: full, lora or qlora");
  run.request["method"] = method;
  FTCOST_TRY(quant, opt_choice(t, "quant", tp, {"nf4-dq", "nf4", "int8"}));
  if (!quant.empty() && method == "qlora") run.request["quant"] = quant;
  FTCOST_TRY(prec, opt_choice(t, "precision", tp, {"bf16", "fp16", "fp32"}));
  if (!prec.empty()) run.request["precision"] = prec;
  if (auto st = read_optimizer(doc, t, tp, run.request); !st.ok()) return st.error();
  FTCOST_TRY(att, opt_choice(t, "attention", tp, {"flash", "sdpa", "eager", "xformers"}));
  if (!att.empty()) run.request["attention"] = att;
  if (has(t, "checkpointing")) {
    if (!t.at("checkpointing").is_boolean())
      return make_error(Errc::wrong_type, "training.checkpointing", "must be true or false");
    run.request["checkpointing"] = t.at("checkpointing").get<bool>() ? "on" : "off";
  }
  if (method != "full")
    if (auto st = read_lora(t, tp, run.request); !st.ok()) return st.error();
  if (auto st = check_recorded_training(t); !st.ok()) return st.error();
  for (const char* k : {"precision", "optimizer", "attention", "checkpointing"})
    if (!has(t, k))
      run.notes.push_back(std::string("training.") + k + " not recorded: the estimate's default");
  return Ok{};
}

// One micro-batch record; nullopt when the callback could not see the batch (no seq_len or batch_size).
Result<std::optional<RunMicroBatch>> read_micro_batch(const json& mb, const std::string& q) {
  if (!mb.is_object()) return make_error(Errc::wrong_type, q, "must be an object");
  if (!has(mb, "seq_len") || !has(mb, "batch_size")) return std::optional<RunMicroBatch>();
  RunMicroBatch b;
  FTCOST_TRY(bs, get_count(mb, "batch_size", q, 1, 1 << 24));
  FTCOST_TRY(sl, get_count(mb, "seq_len", q, 1, 1 << 22));
  b.batch = bs;
  b.seq_len = static_cast<double>(sl);
  FTCOST_TRY(tok, opt_number(mb, "tokens", q, -1));
  if (has(mb, "tokens") && (tok < 0 || tok > static_cast<double>(bs) * static_cast<double>(sl)))
    return make_error(Errc::out_of_range, q + ".tokens",
                      "must be between 0 and batch_size x seq_len = " + std::to_string(bs * sl) + ", got " +
                          json(tok).dump());
  b.tokens = tok;
  FTCOST_CHECK(opt_count(mb, "label_tokens", q, 0, 0, bs * sl));
  FTCOST_TRY(as, opt_bool(mb, "assumed", q, false));
  b.assumed = as;
  return std::optional<RunMicroBatch>(b);
}

// A step's micro-batches; empty when any lacks its shape (time and memory unusable).
Status read_micro_batches(const json& s, const std::string& p, RunStep& st) {
  if (!has(s, "micro_batches") || !s.at("micro_batches").is_array())
    return make_error(Errc::missing_field, p + ".micro_batches", "required list of {batch_size, seq_len}");
  const json& mbs = s.at("micro_batches");
  bool complete = !mbs.empty();
  for (std::size_t j = 0; j < mbs.size(); ++j) {
    FTCOST_TRY(b, read_micro_batch(mbs[j], idx(p + ".micro_batches", j)));
    if (b)
      st.micro.push_back(*b);
    else
      complete = false;
  }
  if (!complete) st.micro.clear();
  return Ok{};
}

// The step's peak memory figures: numbers of bytes within the GPU's memory, reserved >= allocated.
Status read_step_memory(const json& s, const std::string& p, const GpuSpec& gpu, RunStep& st) {
  const double gpu_bytes = gpu.memory_gib * kGiB;
  st.max_allocated_bytes = opt_bytes(s, "max_memory_allocated_bytes");
  st.max_reserved_bytes = opt_bytes(s, "max_memory_reserved_bytes");
  for (auto [key, v] : {std::make_pair("max_memory_allocated_bytes", st.max_allocated_bytes),
                        std::make_pair("max_memory_reserved_bytes", st.max_reserved_bytes)}) {
    if (has(s, key) && !s.at(key).is_number())
      return make_error(Errc::wrong_type, p + "." + key, "must be a number of bytes or null");
    if (has(s, key) && (v <= 0 || v > gpu_bytes * 1.001))
      return make_error(Errc::out_of_range, p + "." + key,
                        "must be > 0 and at most the memory of " + gpu.id + " (" +
                            json(std::round(gpu.memory_gib * 10) / 10).dump() + " GiB), got " +
                            json(v / kGiB).dump() + " GiB");
  }
  if (st.max_allocated_bytes > 0 && st.max_reserved_bytes > 0 &&
      st.max_reserved_bytes < st.max_allocated_bytes * 0.999)
    return make_error(
        Errc::out_of_range, p + ".max_memory_reserved_bytes",
        "is below max_memory_allocated_bytes: the allocator reserves at least what it hands out");
  return Ok{};
}

Result<RunStep> read_step(const json& s, std::size_t i, const GpuSpec& gpu) {
  const std::string p = idx("steps", i);
  if (!s.is_object()) return make_error(Errc::wrong_type, p, "must be an object");
  RunStep st;
  FTCOST_TRY(sn, opt_count(s, "step", p, static_cast<std::int64_t>(i + 1), 0));
  FTCOST_TRY(cnt, opt_count(s, "count", p, 1, 1));
  FTCOST_TRY(warm, opt_bool(s, "warmup", p, false));
  st.step = sn;
  st.count = cnt;
  st.warmup = warm;
  FTCOST_TRY(wall, get_number(s, "wall_s", p));
  if (!std::isfinite(wall) || wall < 0 || (!warm && wall <= 0))
    return make_error(Errc::out_of_range, p + ".wall_s",
                      "must be a positive number of seconds, got " + json(wall).dump());
  if (wall / static_cast<double>(cnt) > 86400.0)
    return make_error(Errc::out_of_range, p + ".wall_s",
                      "more than a day per step (" + json(wall / static_cast<double>(cnt)).dump() +
                          " s): not a step time in seconds");
  st.wall_s = wall;
  if (auto r = read_micro_batches(s, p, st); !r.ok()) return r.error();
  if (auto r = read_step_memory(s, p, gpu, st); !r.ok()) return r.error();
  return st;
}

// --- steps
Status read_steps(const json& doc, const Database& db, RunFile& run) {
  if (!has(doc, "steps") || !doc.at("steps").is_array() || doc.at("steps").empty())
    return make_error(Errc::missing_field, "steps", "required non-empty list of step records");
  const json& steps = doc.at("steps");
  const GpuSpec& gpu = *db.gpu(run.gpu_id);
  std::size_t shapeless = 0;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    FTCOST_TRY(st, read_step(steps[i], i, gpu));
    if (st.micro.empty()) ++shapeless;
    run.steps.push_back(st);
  }
  if (shapeless > 0)
    run.notes.push_back(std::to_string(shapeless) +
                        " step record(s) without a batch shape: not used for fitting");
  if (run.timed_steps() == 0)
    return make_error(Errc::invalid_value, "steps",
                      "no step outside the warm-up has both a wall time and a batch shape: nothing to fit");
  // The shapes' sequence length for the request (any valid value: every prediction passes its own).
  for (const auto& s : run.steps)
    if (!s.micro.empty()) {
      run.request["seq"] = std::to_string(static_cast<long long>(s.micro[0].seq_len));
      run.request["batch"] = std::to_string(static_cast<long long>(s.micro[0].batch));
      break;
    }
  return Ok{};
}

}  // namespace

Result<RunFile> parse_run(const std::string& text, const std::string& source, const Database& db) {
  FTCOST_TRY(doc, parse_json_text(text, source));
  if (!doc.is_object()) return make_error(Errc::wrong_type, "(top level)", "must be a JSON object");
  FTCOST_TRY(schema, get_string(doc, "schema", ""));
  if (schema != "ftcost.run/1")
    return make_error(Errc::schema_mismatch, "schema", "expected \"ftcost.run/1\", got \"" + schema + "\"");
  RunFile run;
  run.source = source;
  FTCOST_TRY(rs, recorder_source(doc));
  run.recorder_source = rs;
  if (has(doc, "lacks") && doc.at("lacks").is_array())
    for (const auto& v : doc.at("lacks"))
      if (v.is_string()) run.lacks.push_back(v.get<std::string>());
  if (auto st = read_gpu(doc, db, run); !st.ok()) return st.error();
  read_software_stack(doc, db, run);
  if (auto st = read_model(doc, db, run); !st.ok()) return st.error();
  if (auto st = read_training(doc, run); !st.ok()) return st.error();
  if (auto st = read_steps(doc, db, run); !st.ok()) return st.error();
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
