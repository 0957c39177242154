#include "ftcost/run.hpp"

#include "ftcost/memory.hpp"
#include "ftcost/units.hpp"

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

namespace {

const char* const kConfigPath = "run/config.json";  // the virtual path of the recorded config.json

std::string idx(const std::string& base, std::size_t i) { return base + "[" + std::to_string(i) + "]"; }

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

// "5.17.0" -> {5, 17}; {-1, -1} when it does not start with two numbers.
std::pair<int, int> major_minor(const std::string& v) {
  int a = -1;
  int b = -1;
  std::istringstream in(v);
  char dot = 0;
  if (!(in >> a) || !(in >> dot) || dot != '.' || !(in >> b)) return {-1, -1};
  return {a, b};
}

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
  run.software_stack = stack_for_software(doc.at("software"), run.software_stack_why);
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
    FTCOST_TRY(field, opt_string(rec, k, "recorder", ""));
    (void)field;
  }
  FTCOST_TRY(warm, opt_count(rec, "warmup_steps", "recorder", 0, 0, 1 << 30));
  (void)warm;
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
    FTCOST_TRY(n, opt_count(t, k, "training", 1, 1, std::int64_t{1} << 40));
    (void)n;
  }
  FTCOST_TRY(packing, opt_bool(t, "packing", "training", false));
  (void)packing;
  return Ok{};
}

}  // namespace

std::string stack_for_software(const json& software, std::string& why) {
  why.clear();
  for (const char* other : {"unsloth", "torchtune"})
    if (!version_of(software, other).empty()) {
      why = std::string(other) + " " + version_of(software, other) + " recorded: no rule, the default stack";
      return "";
    }
  const std::string tf = version_of(software, "transformers");
  const std::string trl = version_of(software, "trl");
  const auto t = major_minor(tf);
  const auto r = major_minor(trl);
  // Trainers on top of transformers, with their own model preparation (QLoRA norms and embeddings bf16) and
  // the model's own loss: the transformers their release installed decides its bytes (docs/sources/stacks/
  // trl-peft.md: axolotl and LLaMA-Factory read at their release tags).
  for (const auto& [pkg, older, newer] :
       {std::tuple<const char*, const char*, const char*>{"axolotl", "axolotl-2024q4", "axolotl-2025"},
        {"llamafactory", "llamafactory-2024", "llamafactory-2025"}}) {
    const std::string v = version_of(software, pkg);
    if (v.empty()) continue;
    why = std::string(pkg) + " " + v + " on transformers " + (tf.empty() ? "(not recorded)" : tf);
    if (t.first < 0) {
      why += ": the transformers version decides the profile, the default stack";
      return "";
    }
    if (t.first >= 5) {
      why += ": no profile of it on transformers 5; a plain Trainer's (QLoRA: --kbit-upcast off)";
      return "hf-trainer-2026";
    }
    return t >= std::make_pair(4, 49) ? newer : older;
  }
  if (!trl.empty() && r.first >= 0) {
    why = "trl " + trl;
    if (r >= std::make_pair(1, 4)) return "hf-trl-2026";
    // transformers 4.49 stopped copying the shifted fp32 logits (PR #35646): hf-trl-2025's 10 B loss
    if (r >= std::make_pair(0, 12)) return t >= std::make_pair(4, 49) ? "hf-trl-2025" : "hf-trl-2024q4";
    if (r >= std::make_pair(0, 7)) return "hf-trl-2024q1";
    why += ": older than every profile, the default stack";
    return "";
  }
  if (t.first < 0) return "";
  why = "transformers " + tf + " without trl (the model's own loss)";
  if (t.first >= 5) return "hf-trainer-2026";
  if (t >= std::make_pair(4, 49)) return "hf-trl-2025";
  if (t >= std::make_pair(4, 46)) return "hf-trl-2024q4";
  if (t >= std::make_pair(4, 36)) return "hf-trl-2024q1";
  why += ": older than every profile, the default stack";
  return "";
}

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
  for (const char* list : {"lacks"}) {
    if (has(doc, list) && doc.at(list).is_array())
      for (const auto& v : doc.at(list))
        if (v.is_string()) run.lacks.push_back(v.get<std::string>());
  }

  // --- GPU
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
  read_software_stack(doc, db, run);

  // --- model
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
  } else {
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
  }

  // --- training arguments (ftcost's names; absent ones take the estimate's defaults)
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
  if (method != "full") {
    if (has(t, "lora_rank")) {
      FTCOST_TRY(r, get_count(t, "lora_rank", tp, 1, 65536));
      run.request["lora-rank"] = std::to_string(r);
    }
    if (has(t, "lora_targets")) {
      const json& lt = t.at("lora_targets");
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
      FTCOST_TRY(parsed, parse_lora_targets(list, "training.lora_targets"));
      (void)parsed;
      run.request["lora-targets"] = list;
    }
    if (auto st = read_lora_dropout(t, run.request); !st.ok()) return st.error();
  }
  if (auto st = check_recorded_training(t); !st.ok()) return st.error();
  for (const char* k : {"precision", "optimizer", "attention", "checkpointing"})
    if (!has(t, k))
      run.notes.push_back(std::string("training.") + k + " not recorded: the estimate's default");

  // --- steps
  if (!has(doc, "steps") || !doc.at("steps").is_array() || doc.at("steps").empty())
    return make_error(Errc::missing_field, "steps", "required non-empty list of step records");
  const json& steps = doc.at("steps");
  const GpuSpec& gpu = *db.gpu(run.gpu_id);
  const double gpu_bytes = gpu.memory_gib * kGiB;
  std::size_t shapeless = 0;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const std::string p = idx("steps", i);
    const json& s = steps[i];
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
    if (!has(s, "micro_batches") || !s.at("micro_batches").is_array())
      return make_error(Errc::missing_field, p + ".micro_batches", "required list of {batch_size, seq_len}");
    const json& mbs = s.at("micro_batches");
    bool complete = !mbs.empty();
    for (std::size_t j = 0; j < mbs.size(); ++j) {
      const std::string q = idx(p + ".micro_batches", j);
      const json& mb = mbs[j];
      if (!mb.is_object()) return make_error(Errc::wrong_type, q, "must be an object");
      if (!has(mb, "seq_len") || !has(mb, "batch_size")) {
        complete = false;  // the callback could not see the batch: time unusable, memory unusable
        continue;
      }
      RunMicroBatch b;
      FTCOST_TRY(bs, get_count(mb, "batch_size", q, 1, 1 << 24));
      FTCOST_TRY(sl, get_count(mb, "seq_len", q, 1, 1 << 22));
      b.batch = bs;
      b.seq_len = static_cast<double>(sl);
      FTCOST_TRY(tok, opt_number(mb, "tokens", q, -1));
      if (has(mb, "tokens") && (tok < 0 || tok > static_cast<double>(bs) * static_cast<double>(sl)))
        return make_error(Errc::out_of_range, q + ".tokens",
                          "must be between 0 and batch_size x seq_len = " + std::to_string(bs * sl) +
                              ", got " + json(tok).dump());
      b.tokens = tok;
      FTCOST_TRY(labels, opt_count(mb, "label_tokens", q, 0, 0, bs * sl));
      (void)labels;
      FTCOST_TRY(as, opt_bool(mb, "assumed", q, false));
      b.assumed = as;
      st.micro.push_back(b);
    }
    if (!complete) {
      st.micro.clear();
      ++shapeless;
    }
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

namespace {

struct MicroTime {
  double fwd_bwd = 0, opt = 0;
};

MicroTime micro_time(const Inputs& in, std::int64_t b, double len) {
  const StepTime t =
      step_model(in.model, in.workload, in.stack, in.gpu, in.calibration.get(), b, len, in.expert_shares);
  MicroTime out;
  out.opt = t.by_stage[static_cast<std::size_t>(Stage::optimizer)];
  out.fwd_bwd = t.total_s - out.opt;
  return out;
}

using MicroCache = std::map<std::pair<std::int64_t, double>, MicroTime>;

double step_s_cached(const Inputs& in, const RunStep& step, MicroCache& cache) {
  double fb = 0;
  double opt = 0;
  for (const auto& mb : step.micro) {
    auto key = std::make_pair(mb.batch, mb.seq_len);
    auto it = cache.find(key);
    if (it == cache.end()) it = cache.emplace(key, micro_time(in, mb.batch, mb.seq_len)).first;
    fb += it->second.fwd_bwd;
    opt = it->second.opt;
  }
  return static_cast<double>(step.count) * (fb + opt);
}

}  // namespace

double predict_run_step_s(const Inputs& in, const RunStep& step) {
  MicroCache cache;
  return step_s_cached(in, step, cache);
}

double predict_run_allocated_bytes(const Inputs& in, const RunStep& step) {
  double best = 0;
  for (const auto& mb : step.micro) {
    const MemoryBreakdown m = memory_for_batch(in.model, in.workload, in.stack, mb.batch, mb.seq_len);
    best = std::max(best, m.total() - m.cuda_context - m.allocator_overhead);
  }
  return best;
}

namespace {

struct Param {
  const char* name;
  double StackProfile::*field;
  double lo, hi;
};
// The same physical ranges as the reference fit (core/app/src/validate.cpp kParams).
const Param kTimeParams[] = {
    {"gemm_efficiency", &StackProfile::gemm_efficiency, 0.5, 0.9},
    {"memory_efficiency", &StackProfile::memory_efficiency, 0.5, 0.92},
    {"host_us_per_kernel", &StackProfile::host_us_per_kernel, 0.5, 60},
    {"dequant_efficiency", &StackProfile::dequant_efficiency, 0.3, 0.92},
    {"optimizer_efficiency", &StackProfile::optimizer_efficiency, 0.05, 0.92},
};

double logistic(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double to_x(const Param& p, double v) {
  double t = (v - p.lo) / (p.hi - p.lo);
  t = std::min(std::max(t, 1e-6), 1 - 1e-6);
  return std::log(t / (1 - t));
}
double from_x(const Param& p, double x) { return p.lo + (p.hi - p.lo) * logistic(x); }

// 97.5% quantile of Student's t with `dof` degrees of freedom.
double t975(std::size_t dof) {
  static const double tab[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                               2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                               2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
  if (dof == 0) return 0;
  if (dof <= 30) return tab[dof - 1];
  return 1.96 + 2.5 / static_cast<double>(dof);
}

// Solves A x = b (n <= 8) by Gaussian elimination with partial pivoting; false when singular.
bool solve(std::vector<std::vector<double>> a, std::vector<double> b, std::vector<double>& x) {
  const std::size_t n = b.size();
  for (std::size_t c = 0; c < n; ++c) {
    std::size_t piv = c;
    for (std::size_t r = c + 1; r < n; ++r)
      if (std::fabs(a[r][c]) > std::fabs(a[piv][c])) piv = r;
    if (std::fabs(a[piv][c]) < 1e-300) return false;
    std::swap(a[c], a[piv]);
    std::swap(b[c], b[piv]);
    for (std::size_t r = c + 1; r < n; ++r) {
      const double f = a[r][c] / a[c][c];
      for (std::size_t k = c; k < n; ++k) a[r][k] -= f * a[c][k];
      b[r] -= f * b[c];
    }
  }
  x.assign(n, 0);
  for (std::size_t c = n; c-- > 0;) {
    double s = b[c];
    for (std::size_t k = c + 1; k < n; ++k) s -= a[c][k] * x[k];
    x[c] = s / a[c][c];
  }
  return true;
}

bool invert(const std::vector<std::vector<double>>& a, std::vector<std::vector<double>>& inv) {
  const std::size_t n = a.size();
  inv.assign(n, std::vector<double>(n, 0));
  for (std::size_t j = 0; j < n; ++j) {
    std::vector<double> e(n, 0);
    std::vector<double> col;
    e[j] = 1;
    if (!solve(a, e, col)) return false;
    for (std::size_t i = 0; i < n; ++i) inv[i][j] = col[i];
  }
  return true;
}

struct TimePoint {
  std::size_t run;
  const RunStep* step;
};

}  // namespace

json RunFitResult::to_json() const {
  json ps = json::array();
  for (const auto& p : params) {
    json j = {
        {"name", p.name}, {"kind", p.kind}, {"before", p.before}, {"value", p.value}, {"fitted", p.fitted}};
    if (p.fitted) {  // no error bar at the edge of the range (the logistic map flattens there)
      j["sigma"] = p.at_bound ? json(nullptr) : json(p.sigma);
      j["ci95"] = p.at_bound ? json(nullptr) : json{p.ci95_lo, p.ci95_hi};
      j["at_bound"] = p.at_bound;
    }
    if (!p.note.empty()) j["note"] = p.note;
    ps.push_back(j);
  }
  json pts = json::array();
  auto opt = [](double v) { return v >= 0 ? json(v) : json(nullptr); };
  for (const auto& q : points)
    pts.push_back(json{{"file", q.file},
                       {"step", q.step},
                       {"shape", q.shape},
                       {"measured_s", q.measured_s},
                       {"predicted_before_s", q.before_s},
                       {"predicted_after_s", q.after_s},
                       {"measured_allocated_bytes", opt(q.measured_alloc_bytes)},
                       {"predicted_before_allocated_bytes", opt(q.before_alloc_bytes)},
                       {"predicted_after_allocated_bytes", opt(q.after_alloc_bytes)}});
  return json{
      {"stack", stack.id},
      {"points", pts},
      {"time_points", time_points},
      {"memory_points", memory_points},
      {"step_time_rms_log_error", {{"before", rms_log_before}, {"after", rms_log_after}}},
      {"memory_allocated_mean_abs_rel_error",
       memory_points > 0 ? json{{"before", mem_rel_before}, {"after", mem_rel_after}} : json(nullptr)},
      {"parameters", ps},
      {"notes", notes},
      {"provenance", stack.fit}};
}

namespace {

double rms_of(const std::vector<double>& r) {
  double s = 0;
  for (double v : r) s += v * v;
  return r.empty() ? 0.0 : std::sqrt(s / static_cast<double>(r.size()));
}

double sse_of(const std::vector<double>& rv) {
  double s = 0;
  for (double v : rv) s += v * v;
  return s;
}

double mean_of(const std::vector<double>& v) {
  double m = 0;
  for (double e : v) m += e;
  return v.empty() ? 0.0 : m / static_cast<double>(v.size());
}

// J'J of an n x p Jacobian.
std::vector<std::vector<double>> normal_matrix(const std::vector<std::vector<double>>& jm, std::size_t p) {
  std::vector<std::vector<double>> jtj(p, std::vector<double>(p, 0));
  for (const auto& row : jm)
    for (std::size_t a = 0; a < p; ++a)
      for (std::size_t b = 0; b < p; ++b) jtj[a][b] += row[a] * row[b];
  return jtj;
}

// The refit of a stack profile to recorded runs (fit_stack_to_runs), one step per member function: the
// runs' inputs, the timed steps (nonsense timings refused), the identifiable step-time parameters, the
// Levenberg-Marquardt fit with its standard errors, the memory parameters and the provenance.
class RunFitter {
 public:
  RunFitter(const std::vector<RunFile>& runs, const Database& db, const StackProfile& stack)
      : runs_(runs), db_(db), stack_(stack) {}

  Result<RunFitResult> fit() {
    if (auto st = load_inputs(); !st.ok()) return st.error();
    if (auto st = collect_time_points(); !st.ok()) return st.error();
    res_.time_points = pts_.size();
    n_ = pts_.size();
    candidates();
    const std::vector<double> r0 = residuals(stack_);
    res_.rms_log_before = rms_of(r0);
    choose_identifiable();
    fit_time_params();
    StackProfile fitted = profile_at(x_);
    res_.rms_log_after = rms_of(r_);
    time_points_out(r0);
    std::set<std::string> shapes;
    for (const auto& q : res_.points) shapes.insert(q.shape);
    res_.time_shapes = shapes.size();
    res_.time_params_fitted = chosen_.size();
    json pv = json::object();
    json ps = json::object();
    json nf = json::object();
    time_params_out(fitted, pv, ps, nf);
    const json mem_prov = fit_memory(fitted);
    fitted.fit =
        json{{"method",
              "Levenberg-Marquardt on the log step-time residuals of the run(s), over the parameters "
              "they can tell apart; memory parameters by least squares on max_memory_allocated"},
             {"data", "user run(s), ftcost.run/1"},
             {"runs", run_sources()},
             {"gpu", runs_[0].gpu_id},
             {"rows", n_},
             {"rms_log_residual", res_.rms_log_after},
             {"rms_log_residual_before", res_.rms_log_before},
             {"parameters", pv},
             {"parameters_sigma", ps},
             {"not_fitted", nf},
             {"memory_parameters", mem_prov},
             {"based_on", stack_.id},
             {"command", "ftcost fit-stack --stack " + stack_.id + " --run ..."}};
    fitted.id = stack_.id + "+run";
    fitted.display_name = stack_.display_name + ", refitted to a user run";
    res_.stack = fitted;
    return res_;
  }

 private:
  // Sensitivity of one candidate parameter at the profile's values: d residual / d log(value).
  struct Col {
    const Param* p;
    std::vector<double> d;
    double norm;
  };

  const std::vector<RunFile>& runs_;
  const Database& db_;
  const StackProfile& stack_;
  RunFitResult res_;
  std::vector<Inputs> ins_;                     // one per run, with the stack being tried
  std::vector<TimePoint> pts_;                  // the timed steps
  std::size_t n_ = 0;                           // pts_.size()
  std::vector<const Param*> cand_;              // step-time parameters that apply to these runs
  std::vector<const Param*> chosen_;            // those being fitted
  std::map<std::string, std::string> why_not_;  // the others, and why
  // The fit over chosen_: its p parameters in x (logit space), residuals r, SSE f, standard errors sig.
  std::size_t p_ = 0;
  std::vector<double> x_, r_, sig_;
  double f_ = 0;
  std::size_t dof_ = 0;

  // The runs' inputs (one GPU; the step model), with `stack`, and their notes.
  Status load_inputs() {
    if (runs_.empty()) return make_error(Errc::missing_field, "--run", "give at least one run file");
    for (const auto& r : runs_)
      if (r.gpu_id != runs_[0].gpu_id)
        return make_error(Errc::invalid_value, r.source + ": gpu",
                          "recorded on " + r.gpu_id + ", " + runs_[0].source + " on " + runs_[0].gpu_id +
                              ": fit one GPU's runs at a time");
    for (const auto& r : runs_) {
      FTCOST_TRY(in, run_inputs(r, db_));
      if (in.model_kind != "step")
        return make_error(Errc::invalid_value, r.source, "runs are fitted with the step model only");
      in.stack = stack_;
      ins_.push_back(in);
      for (const auto& n : r.notes) res_.notes.push_back(r.source + ": " + n);
    }
    return Ok{};
  }

  // The timed steps of run ri; an error for a nonsense timing (faster than the forward pass's FLOPs at the
  // GPU's dense peak).
  Status time_points_of(std::size_t ri) {
    const Inputs& in = ins_[ri];
    // the GPU's highest dense peak of any dtype (FP8 included): the floor must not flag a run that used a
    // faster dtype than the one recorded
    const double peak = std::max({in.gpu.fp8_tflops, in.gpu.bf16_tflops, in.gpu.fp16_tflops,
                                  in.gpu.tf32_tflops, in.gpu.fp32_tflops}) *
                        1e12;
    const auto active = static_cast<double>(
        in.model.active_params(in.model.is_moe() ? in.workload.active_experts(in.model) : 0));
    for (std::size_t si = 0; si < runs_[ri].steps.size(); ++si) {
      const RunStep& st = runs_[ri].steps[si];
      if (st.warmup || st.micro.empty() || st.wall_s <= 0) continue;
      double tokens = 0;
      for (const auto& mb : st.micro) tokens += static_cast<double>(mb.batch) * mb.seq_len;
      if (peak > 0) {
        const double floor_s = static_cast<double>(st.count) * 2.0 * active * tokens / peak;
        if (st.wall_s < 0.5 * floor_s)
          return make_error(Errc::out_of_range, runs_[ri].source + ": " + idx("steps", si) + ".wall_s",
                            json(st.wall_s).dump() + " s is less than half the forward pass alone at " +
                                in.gpu.id + "'s highest dense peak (" + json(floor_s).dump() +
                                " s for 2 x active params x padded tokens): not a real step time of this "
                                "model on this GPU");
      }
      pts_.push_back({ri, &st});
    }
    return Ok{};
  }

  // A step's peak memory holds at least the model's weights as stored (16-bit, NF4 + absmax, int8: the
  // memory model's weights term): a smaller max_memory_allocated is not a figure of this run. 10% below the
  // term is allowed for what the parameter count can get wrong (tied or untied embeddings, buffers).
  Status memory_floor_of(std::size_t ri) const {
    const Inputs& in = ins_[ri];
    const double weights = memory_for_batch(in.model, in.workload, in.stack, 1, 1).weights;
    const double floor_bytes = 0.9 * weights;
    for (std::size_t si = 0; si < runs_[ri].steps.size(); ++si) {
      const RunStep& st = runs_[ri].steps[si];
      for (const auto& [key, v] : {std::make_pair("max_memory_allocated_bytes", st.max_allocated_bytes),
                                   std::make_pair("max_memory_reserved_bytes", st.max_reserved_bytes)})
        if (v >= 0 && v < floor_bytes)
          return make_error(Errc::out_of_range, runs_[ri].source + ": " + idx("steps", si) + "." + key,
                            json(v).dump() + " bytes is less than the weights of " + in.model.id + " (" +
                                json(std::round(weights / kGiB * 100) / 100).dump() + " GiB as " +
                                method_name(in.workload.method) + " stores them): not a peak of this run");
    }
    return Ok{};
  }

  Status collect_time_points() {
    for (std::size_t ri = 0; ri < runs_.size(); ++ri) {
      if (auto st = memory_floor_of(ri); !st.ok()) return st;
      if (auto st = time_points_of(ri); !st.ok()) return st;
    }
    return Ok{};
  }

  // The step-time parameters that apply (dequant_efficiency with QLoRA only).
  void candidates() {
    bool any_qlora = false;
    for (const auto& in : ins_) any_qlora = any_qlora || in.workload.method == Method::qlora;
    for (const auto& p : kTimeParams)
      if (std::string(p.name) != "dequant_efficiency" || any_qlora) cand_.push_back(&p);
  }

  // Log residuals of the predicted step times with profile s.
  std::vector<double> residuals(const StackProfile& s) {
    std::vector<double> r;
    r.reserve(pts_.size());
    std::vector<MicroCache> caches(ins_.size());  // one step-model evaluation per run and shape
    for (auto& in : ins_) in.stack = s;
    for (const auto& tp : pts_) {
      const double pred = step_s_cached(ins_[tp.run], *tp.step, caches[tp.run]);
      r.push_back(pred > 0 ? std::log(pred / tp.step->wall_s) : 25.0);
    }
    return r;
  }

  Col sensitivity(const Param* p) {
    StackProfile a = stack_;
    StackProfile b = stack_;
    const double v = stack_.*(p->field);
    const double h = 0.02;
    a.*(p->field) = v * std::exp(h);
    b.*(p->field) = v * std::exp(-h);
    auto ra = residuals(a);
    auto rb = residuals(b);
    Col c{p, std::vector<double>(n_), 0};
    for (std::size_t i = 0; i < n_; ++i) {
      c.d[i] = (ra[i] - rb[i]) / (2 * h);
      c.norm += c.d[i] * c.d[i];
    }
    c.norm = std::sqrt(c.norm / static_cast<double>(std::max<std::size_t>(n_, 1)));
    return c;
  }

  // The candidates the runs can tell apart, most sensitive first (Gram-Schmidt on the sensitivities); the
  // others get their reason in why_not_.
  void choose_identifiable() {
    std::vector<Col> cols;
    for (const Param* p : cand_) cols.push_back(sensitivity(p));
    std::sort(cols.begin(), cols.end(), [](const Col& a, const Col& b) { return a.norm > b.norm; });
    std::vector<std::vector<double>> basis;  // orthonormal (Gram-Schmidt) of the chosen columns
    for (const auto& c : cols) {
      if (c.norm < 0.01) {
        why_not_[c.p->name] =
            "not identifiable from these runs: doubling it moves their step time by less than 1%";
        continue;
      }
      std::vector<double> v = c.d;
      for (const auto& e : basis) {
        double dot = 0;
        for (std::size_t i = 0; i < n_; ++i) dot += v[i] * e[i];
        for (std::size_t i = 0; i < n_; ++i) v[i] -= dot * e[i];
      }
      double nv = 0;
      for (double x : v) nv += x * x;
      nv = std::sqrt(nv / static_cast<double>(n_));
      if (nv < 0.1 * c.norm) {
        why_not_[c.p->name] = "not separable from " + std::string(chosen_.empty() ? "" : chosen_[0]->name) +
                              (chosen_.size() > 1 ? " and the other fitted parameters" : "") +
                              " with these batch shapes (record other batch sizes or lengths to fit it)";
        continue;
      }
      if (chosen_.size() + 1 > (n_ > 1 ? n_ - 1 : 1)) {
        why_not_[c.p->name] = "too few timed steps for another parameter";
        continue;
      }
      for (double& x : v) x /= nv * std::sqrt(static_cast<double>(n_));
      basis.push_back(v);
      chosen_.push_back(c.p);
    }
  }

  StackProfile profile_at(const std::vector<double>& xv) const {
    StackProfile s = stack_;
    for (std::size_t j = 0; j < p_; ++j) s.*(chosen_[j]->field) = from_x(*chosen_[j], xv[j]);
    return s;
  }

  std::vector<std::vector<double>> jacobian(const std::vector<double>& xv) {
    std::vector<std::vector<double>> jm(n_, std::vector<double>(p_));
    for (std::size_t j = 0; j < p_; ++j) {
      std::vector<double> xa = xv;
      std::vector<double> xb = xv;
      const double h = 1e-4;
      xa[j] += h;
      xb[j] -= h;
      auto ra = residuals(profile_at(xa));
      auto rb = residuals(profile_at(xb));
      for (std::size_t i = 0; i < n_; ++i) jm[i][j] = (ra[i] - rb[i]) / (2 * h);
    }
    return jm;
  }

  // One Levenberg-Marquardt iteration: up to 30 damping tries for a step that lowers the SSE. Returns
  // false when none does; sets converged when the gain is negligible.
  bool lm_iteration(double& lambda, bool& converged) {
    auto jm = jacobian(x_);
    std::vector<std::vector<double>> jtj(p_, std::vector<double>(p_, 0));
    std::vector<double> jtr(p_, 0);
    for (std::size_t i = 0; i < n_; ++i)
      for (std::size_t a = 0; a < p_; ++a) {
        jtr[a] += jm[i][a] * r_[i];
        for (std::size_t b = 0; b < p_; ++b) jtj[a][b] += jm[i][a] * jm[i][b];
      }
    for (int tries = 0; tries < 30; ++tries) {
      auto a = jtj;
      for (std::size_t k = 0; k < p_; ++k) a[k][k] += lambda * (jtj[k][k] + 1e-12);
      std::vector<double> neg(p_);
      std::vector<double> dx;
      for (std::size_t k = 0; k < p_; ++k) neg[k] = -jtr[k];
      if (!solve(a, neg, dx)) {
        lambda *= 10;
        continue;
      }
      std::vector<double> xn = x_;
      for (std::size_t k = 0; k < p_; ++k) xn[k] += std::max(-3.0, std::min(3.0, dx[k]));
      auto rn = residuals(profile_at(xn));
      const double fn = sse_of(rn);
      if (fn < f_) {
        const double gain = f_ - fn;
        x_ = xn;
        r_ = rn;
        f_ = fn;
        lambda = std::max(lambda / 10, 1e-9);
        converged = gain < 1e-14 * (1 + f_);
        return true;
      }
      lambda *= 10;
    }
    return false;
  }

  // Standard errors: cov(x) = s^2 (J'J)^-1 with s^2 = SSE / (n - p); delta method to the values.
  void standard_errors() {
    sig_.assign(p_, 0);
    dof_ = n_ > p_ ? n_ - p_ : 0;
    if (p_ == 0 || dof_ == 0) return;
    const auto jtj = normal_matrix(jacobian(x_), p_);
    std::vector<std::vector<double>> inv;
    const double s2 = f_ / static_cast<double>(dof_);
    if (!invert(jtj, inv)) return;
    for (std::size_t j = 0; j < p_; ++j) {
      const double l = logistic(x_[j]);
      sig_[j] = std::sqrt(std::max(0.0, s2 * inv[j][j])) * (chosen_[j]->hi - chosen_[j]->lo) * l * (1 - l);
    }
  }

  // Fit; then drop the parameter the run pins down worst (1-sigma wider than a quarter of its range) and
  // fit again, until every fitted parameter is determined.
  void fit_time_params() {
    for (;;) {
      p_ = chosen_.size();
      x_.assign(p_, 0);
      for (std::size_t j = 0; j < p_; ++j) x_[j] = to_x(*chosen_[j], stack_.*(chosen_[j]->field));
      r_ = residuals(profile_at(x_));
      f_ = sse_of(r_);
      double lambda = 1e-3;
      bool converged = false;
      for (int iter = 0; iter < 200 && p_ > 0 && !converged; ++iter)
        if (!lm_iteration(lambda, converged)) break;
      standard_errors();
      std::size_t worst = p_;
      double worst_rel = 0.25;
      for (std::size_t j = 0; j < p_ && dof_ > 0; ++j) {
        const double rel = sig_[j] / (chosen_[j]->hi - chosen_[j]->lo);
        if (rel > worst_rel) {
          worst = j;
          worst_rel = rel;
        }
      }
      if (worst == p_) break;
      why_not_[chosen_[worst]->name] = "the run cannot pin it down: fitted, its 1-sigma error bar was " +
                                       json(std::round(worst_rel * 100)).dump() + "% of its range [" +
                                       json(chosen_[worst]->lo).dump() + ", " +
                                       json(chosen_[worst]->hi).dump() + "]; kept at the profile's value";
      chosen_.erase(chosen_.begin() + static_cast<std::ptrdiff_t>(worst));
    }
  }

  // Every timed step, measured against predicted before (r0) and after (r_) the fit.
  void time_points_out(const std::vector<double>& r0) {
    for (std::size_t i = 0; i < n_; ++i) {
      const RunStep& st = *pts_[i].step;
      RunPoint q;
      q.file = runs_[pts_[i].run].source;
      q.step = st.step;
      const RunMicroBatch& mb = st.micro[0];
      q.shape = std::to_string(mb.batch) + "x" + std::to_string(static_cast<long long>(mb.seq_len));
      if (st.micro.size() > 1) q.shape = std::to_string(st.micro.size()) + "x(" + q.shape + ")";
      q.measured_s = st.wall_s;
      q.before_s = st.wall_s * std::exp(r0[i]);
      q.after_s = st.wall_s * std::exp(r_[i]);
      res_.points.push_back(q);
    }
  }

  // A fitted step-time parameter's error bar, interval and notes (chosen_[j]).
  void fitted_param(RunFitParam& rp, const Param* c, std::size_t j) const {
    rp.fitted = true;
    rp.sigma = sig_[j];
    const double t = t975(dof_);
    rp.ci95_lo = std::max(c->lo, rp.value - t * sig_[j]);
    rp.ci95_hi = std::min(c->hi, rp.value + t * sig_[j]);
    const double rel = (rp.value - c->lo) / (c->hi - c->lo);
    if (rel < 1e-3 || rel > 1 - 1e-3) {
      rp.at_bound = true;
      rp.note =
          "at the edge of its physical range [" + json(c->lo).dump() + ", " + json(c->hi).dump() +
          "]: the run asks for more than this parameter can give; the residual says how much (no error bar "
          "at the edge)";
    }
    if (dof_ == 0)
      rp.note += (rp.note.empty() ? "" : "; ") + std::string("no degrees of freedom left: no error bar");
  }

  // The step-time parameters into res_.params, and their provenance (values, sigmas, why not fitted).
  void time_params_out(const StackProfile& fitted, json& pv, json& ps, json& nf) {
    for (const Param* c : cand_) {
      RunFitParam rp;
      rp.name = c->name;
      rp.kind = "step-time";
      rp.before = stack_.*(c->field);
      rp.value = fitted.*(c->field);
      auto it = std::find(chosen_.begin(), chosen_.end(), c);
      if (it != chosen_.end()) {
        fitted_param(rp, c, static_cast<std::size_t>(it - chosen_.begin()));
        pv[c->name] = rp.value;
        ps[c->name] = rp.at_bound ? json(nullptr) : json(rp.sigma);
      } else {
        rp.note = why_not_.count(c->name) ? why_not_[c->name] : "not fitted";
        nf[c->name] = rp.note;
      }
      res_.params.push_back(rp);
    }
  }

  using MemPoints = std::vector<std::pair<std::size_t, const RunStep*>>;

  // Mean |relative error| of max_memory_allocated with profile s.
  double mem_err(const MemPoints& mpts, const StackProfile& s) {
    double e = 0;
    for (const auto& [ri, st] : mpts) {
      Inputs& in = ins_[ri];
      in.stack = s;
      e += std::fabs(predict_run_allocated_bytes(in, *st) / st->max_allocated_bytes - 1);
    }
    return e / static_cast<double>(mpts.size());
  }

  // gc_retained_fraction: allocated(g) is linear in g, least squares on relative errors, closed form.
  RunFitParam fit_gc(const MemPoints& mpts, StackProfile& fitted) {
    bool all_gc = true;
    for (const auto& in : ins_) all_gc = all_gc && in.workload.checkpointing;
    RunFitParam g;
    g.name = "gc_retained_fraction";
    g.kind = "memory";
    g.before = stack_.gc_retained_fraction;
    g.value = g.before;
    if (!all_gc) {
      g.note = "applies with gradient checkpointing only; the run(s) train without it";
      return g;
    }
    double sxx = 0;
    double sxy = 0;
    std::vector<std::pair<double, double>> rows;  // (slope/meas, (meas-base)/meas)
    for (const auto& [ri, st] : mpts) {
      Inputs& in = ins_[ri];
      StackProfile s0 = fitted;
      StackProfile s1 = fitted;
      s0.gc_retained_fraction = 0;
      s1.gc_retained_fraction = 1;
      in.stack = s0;
      const double b0 = predict_run_allocated_bytes(in, *st);
      in.stack = s1;
      const double slope = predict_run_allocated_bytes(in, *st) - b0;
      const double a = slope / st->max_allocated_bytes;
      const double y = (st->max_allocated_bytes - b0) / st->max_allocated_bytes;
      rows.emplace_back(a, y);
      sxx += a * a;
      sxy += a * y;
    }
    if (sxx <= 0) {
      g.note = "not identifiable: the run's activations are too small to move the allocated peak";
      return g;
    }
    const double gv = sxy / sxx;
    double ss = 0;
    for (const auto& [a, y] : rows) ss += (y - gv * a) * (y - gv * a);
    const std::size_t mdof = rows.size() > 1 ? rows.size() - 1 : 0;
    g.fitted = true;
    g.sigma = mdof > 0 ? std::sqrt(ss / static_cast<double>(mdof) / sxx) : 0;
    g.value = std::min(1.0, std::max(0.0, gv));
    g.at_bound = g.value != gv;
    if (g.at_bound)
      g.note = "the run needs " + json(gv).dump() +
               ", outside [0, 1]: another memory component is off for this stack; kept at the bound";
    const double t = t975(mdof);
    g.ci95_lo = std::max(0.0, g.value - t * g.sigma);
    g.ci95_hi = std::min(1.0, g.value + t * g.sigma);
    fitted.gc_retained_fraction = g.value;
    fitted.gc_retained_provenance = "fitted to max_memory_allocated of the run(s) (ftcost fit-stack --run)";
    return g;
  }

  // f = (reserved - allocated) / (activations + logits + dequant buffers) per step with profile prof.
  std::vector<double> reserved_ratios(const MemPoints& mpts, const StackProfile& prof) {
    std::vector<double> out;
    for (const auto& [ri, st] : mpts) {
      if (st->max_reserved_bytes <= 0) continue;
      Inputs& in = ins_[ri];
      double transient = 0;
      for (const auto& mb : st->micro) {
        const MemoryBreakdown m = memory_for_batch(in.model, in.workload, prof, mb.batch, mb.seq_len);
        transient = std::max(transient, m.activations + m.logits + m.dequant_buffers);
      }
      if (transient > 0) out.push_back((st->max_reserved_bytes - st->max_allocated_bytes) / transient);
    }
    return out;
  }

  // allocator_overhead_fraction: the mean of the ratios; the transient bytes depend on
  // gc_retained_fraction, so its error bar (g) is carried into f's.
  RunFitParam fit_allocator(const MemPoints& mpts, const RunFitParam& g, StackProfile& fitted) {
    RunFitParam a;
    a.name = "allocator_overhead_fraction";
    a.kind = "memory";
    a.before = stack_.allocator_overhead_fraction;
    a.value = a.before;
    const std::vector<double> fs = reserved_ratios(mpts, fitted);
    double f_from_g = 0;
    if (g.fitted && g.sigma > 0) {
      StackProfile hi = fitted;
      hi.gc_retained_fraction = std::min(1.0, g.value + g.sigma);
      f_from_g = std::fabs(mean_of(reserved_ratios(mpts, hi)) - mean_of(fs));
    }
    if (fs.empty()) {
      a.note = "needs max_memory_reserved_bytes next to max_memory_allocated_bytes";
      return a;
    }
    double mean = 0;
    for (double v : fs) mean += v;
    mean /= static_cast<double>(fs.size());
    double var = 0;
    for (double v : fs) var += (v - mean) * (v - mean);
    const std::size_t adof = fs.size() > 1 ? fs.size() - 1 : 0;
    a.fitted = true;
    a.sigma = adof > 0 ? std::sqrt(var / static_cast<double>(adof) / static_cast<double>(fs.size()) +
                                   f_from_g * f_from_g)
                       : 0;
    a.value = std::min(1.0, std::max(0.0, mean));
    a.at_bound = a.value != mean;
    if (a.at_bound) a.note = "the run gives " + json(mean).dump() + ", outside [0, 1]; kept at the bound";
    const double t = t975(adof);
    a.ci95_lo = std::max(0.0, a.value - t * a.sigma);
    a.ci95_hi = std::min(1.0, a.value + t * a.sigma);
    fitted.allocator_overhead_fraction = a.value;
    return a;
  }

  // The memory figures of the timed points, before and after.
  void memory_points_out(const MemPoints& mpts, const StackProfile& fitted) {
    for (auto& q : res_.points) {
      for (const auto& [ri, st] : mpts) {
        if (runs_[ri].source != q.file || st->step != q.step) continue;
        Inputs& in = ins_[ri];
        q.measured_alloc_bytes = st->max_allocated_bytes;
        in.stack = stack_;
        q.before_alloc_bytes = predict_run_allocated_bytes(in, *st);
        in.stack = fitted;
        q.after_alloc_bytes = predict_run_allocated_bytes(in, *st);
        break;
      }
    }
  }

  // The memory parameters, only from runs that have the figures; their provenance (null without).
  json fit_memory(StackProfile& fitted) {
    MemPoints mpts;
    for (std::size_t ri = 0; ri < runs_.size(); ++ri)
      for (const auto& st : runs_[ri].steps)
        if (!st.warmup && !st.micro.empty() && st.max_allocated_bytes > 0) mpts.emplace_back(ri, &st);
    res_.memory_points = mpts.size();
    if (mpts.empty()) {
      res_.notes.emplace_back(
          "no memory figures in the run(s) (e.g. a CPU run or an import without peak memory): no memory "
          "parameter is fitted; the memory model keeps the profile's values");
      return nullptr;
    }
    res_.mem_rel_before = mem_err(mpts, stack_);
    const RunFitParam g = fit_gc(mpts, fitted);
    res_.params.push_back(g);
    res_.params.push_back(fit_allocator(mpts, g, fitted));
    res_.mem_rel_after = mem_err(mpts, fitted);
    memory_points_out(mpts, fitted);
    json mp = json::object();
    for (const auto& q : res_.params)
      if (q.kind == "memory" && q.fitted) mp[q.name] = q.value;
    return mp;
  }

  // The runs the fit used, for the provenance.
  json run_sources() const {
    json src = json::array();
    for (std::size_t ri = 0; ri < runs_.size(); ++ri) {
      std::size_t used = 0;
      for (const auto& tp : pts_) used += tp.run == ri ? 1 : 0;
      src.push_back(json{{"file", runs_[ri].source},
                         {"recorder", runs_[ri].recorder_source},
                         {"gpu", runs_[ri].gpu_id},
                         {"model", ins_[ri].model.id},
                         {"timed_steps_used", used},
                         {"lacks", runs_[ri].lacks}});
    }
    return src;
  }
};

}  // namespace

Result<RunFitResult> fit_stack_to_runs(const std::vector<RunFile>& runs, const Database& db,
                                       const StackProfile& stack) {
  return RunFitter(runs, db, stack).fit();
}

std::vector<RefRow> run_reference_rows(const RunFile& run) {
  std::vector<RefRow> out;
  auto it = run.request.find("model");
  if (it == run.request.end() || it->second == kConfigPath) return out;
  struct Shape {
    std::vector<double> walls, allocated, reserved;
  };
  std::map<std::pair<std::int64_t, double>, Shape> by_shape;
  for (const auto& s : run.steps) {
    if (s.warmup || s.count != 1 || s.micro.size() != 1 || s.wall_s <= 0) continue;
    Shape& sh = by_shape[{s.micro[0].batch, s.micro[0].seq_len}];
    sh.walls.push_back(s.wall_s);
    if (s.max_allocated_bytes >= 0) sh.allocated.push_back(s.max_allocated_bytes);
    if (s.max_reserved_bytes >= 0) sh.reserved.push_back(s.max_reserved_bytes);
  }
  std::string stem = run.source;
  stem = stem.substr(stem.find_last_of('/') + 1);
  stem = stem.substr(0, stem.rfind(".json"));
  const std::string recorder =
      run.recorder_source.empty() ? std::string("ftcost_probe.py") : run.recorder_source;
  const std::string stack_note = run.software_stack.empty()
                                     ? std::string()
                                     : "; stack " + run.software_stack + " (" + run.software_stack_why + ")";
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t k = v.size();
    return k % 2 ? v[k / 2] : 0.5 * (v[k / 2 - 1] + v[k / 2]);
  };
  // "<file>: median <what> of <n> step(s) recorded by <recorder>[; stack <id> (<why>)]"
  auto describe = [&](const std::string& what, std::size_t n) {
    std::string s = run.source;
    s += ": median ";
    s += what;
    s += " of ";
    s += std::to_string(n);
    s += " step(s) recorded by ";
    s += recorder;
    s += stack_note;
    return s;
  };
  for (auto& [shape, sh] : by_shape) {
    RefRow row;
    row.id = "run-" + run.gpu_id + "-" + stem + "-b" + std::to_string(shape.first) + "-s" +
             std::to_string(static_cast<long long>(shape.second));
    row.role = "validation";
    row.group = "contributed runs (gpu-db/runs, not fitted)";
    row.request = run.request;
    row.request["batch"] = std::to_string(shape.first);
    row.request["seq"] = std::to_string(static_cast<long long>(shape.second));
    if (!run.software_stack.empty()) row.request["stack"] = run.software_stack;
    row.metric = "step_time_s";
    row.measured = median(sh.walls);
    row.source = describe("wall time", sh.walls.size());
    out.push_back(row);
    // Peak memory of the same steps, as torch's counters see it (no CUDA context; reserved = allocated +
    // the caching allocator's blocks).
    for (const auto& [values, metric, what] :
         {std::make_tuple(&sh.allocated, "peak_allocated_gib", "max_memory_allocated"),
          std::make_tuple(&sh.reserved, "peak_reserved_gib", "max_memory_reserved")}) {
      if (values->empty()) continue;
      RefRow mem = row;
      mem.id = row.id + (std::string(metric) == "peak_allocated_gib" ? "-allocated" : "-reserved");
      mem.group = "contributed runs, memory (gpu-db/runs, not fitted)";
      mem.metric = metric;
      mem.measured = median(*values) / kGiB;
      mem.source = describe(what, values->size());
      out.push_back(mem);
    }
  }
  return out;
}

Result<RunFitResult> apply_runs(Inputs& in, const std::vector<RunFile>& runs, const Database& db) {
  if (runs.empty()) return make_error(Errc::missing_field, "--run", "give at least one run file");
  if (runs[0].gpu_id != in.gpu.id)
    return make_error(Errc::invalid_value, runs[0].source + ": gpu",
                      "the run was recorded on " + runs[0].gpu_id + ", this estimate is for " + in.gpu.id +
                          ": a run calibrates the GPU it ran on (estimate with --gpu " + runs[0].gpu_id +
                          ", or fit a profile with fit-stack --run and read its parameters as a guide)");
  if (in.model_kind != "step")
    return make_error(Errc::invalid_value, "--run", "applies to the step model (--model-kind step) only");
  FTCOST_TRY(fit, fit_stack_to_runs(runs, db, in.stack));
  // Uncertainty at this configuration: the run residual and the fitted parameters' error bars
  // propagated through the step model at the estimate's batch.
  Inputs probe = in;
  probe.stack = fit.stack;
  double prop2 = 0;
  auto mb = max_batch_size(probe.model, probe.workload, probe.stack, probe.gpu);
  const std::int64_t b = in.workload.batch > 0 ? in.workload.batch : std::max<std::int64_t>(mb.batch, 1);
  const double len = in.workload.mean_padded_len(b);
  auto step_s = [&](const StackProfile& s) {
    probe.stack = s;
    return step_model(probe.model, probe.workload, s, probe.gpu, probe.calibration.get(), b, len,
                      probe.expert_shares)
        .total_s;
  };
  const double t0 = step_s(fit.stack);
  for (const auto& p : fit.params) {
    if (!p.fitted || p.kind != "step-time" || p.sigma <= 0) continue;
    for (const auto& kp : kTimeParams) {
      if (p.name != kp.name) continue;
      StackProfile s = fit.stack;
      s.*(kp.field) = std::min(kp.hi, std::max(kp.lo, p.value + p.sigma));
      const double d = std::log(step_s(s) / t0);
      prop2 += d * d;
    }
  }
  double total = std::sqrt(fit.rms_log_after * fit.rms_log_after + prop2);
  if (fit.time_shapes <= fit.time_params_fitted) {
    // A fit through as many shapes as parameters (one step, identical steps) has a zero residual and no
    // error bars: it says nothing of its error here, so the profile's own range stands (issue 39 W6).
    const double own = std::log1p(step_range_fraction(in));  // in.stack: the profile before the run
    if (total < own) {
      total = own;
      in.warnings.push_back("the run has " + std::to_string(fit.time_shapes) + " step shape(s) for " +
                            std::to_string(fit.time_params_fitted) +
                            " fitted step-time parameter(s): no degrees of freedom to measure the fit's "
                            "error, so the range is " +
                            in.stack.id +
                            "'s own (record steps of other batch sizes or lengths to narrow it)");
    }
  }
  for (const auto& p : fit.params)
    if (p.fitted && p.at_bound)
      in.warnings.push_back(p.name + " from the run sits at its bound (" +
                            json(std::round(p.value * 1e4) / 1e4).dump() + ", " + p.note +
                            "): the estimate uses the bound; check the run's " +
                            (p.kind == "memory" ? "memory figures" : "step times"));
  fit.stack.fit["rms_log_residual"] = total;
  fit.stack.fit["rms_log_residual_on_run"] = fit.rms_log_after;
  fit.stack.fit["parameter_uncertainty_at_this_config"] = std::sqrt(prop2);
  in.stack = fit.stack;
  const std::string memory_part =
      fit.memory_points > 0
          ? "; max_memory_allocated error " + json(std::round(fit.mem_rel_before * 1000) / 10).dump() +
                "% -> " + json(std::round(fit.mem_rel_after * 1000) / 10).dump() + "%"
          : "; memory not refitted (the run has no memory figures: steps[].max_memory_allocated_bytes)";
  in.warnings.push_back("stack refitted to " + std::to_string(runs.size()) + " run(s) (" + runs[0].source +
                        (runs.size() > 1 ? ", ..." : "") + "): step-time error on the run " +
                        json(std::round(fit.rms_log_before * 1000) / 10).dump() + "% -> " +
                        json(std::round(fit.rms_log_after * 1000) / 10).dump() + "% (RMS log)" + memory_part);
  return fit;
}

Status apply_run_file(Inputs& in, const std::string& path, const Database& db, const FileReader& reader) {
  if (!reader)
    return make_error(Errc::io_error, "--run",
                      "file paths are not available here; load the run file in the UI");
  auto text = reader(path);
  if (!text.ok()) return make_error(Errc::io_error, "--run", text.error().to_string());
  auto run = parse_run(text.value(), path, db);
  if (!run.ok()) {
    Error e = run.error();
    e.field = path + ": " + e.field;
    return e;
  }
  FTCOST_TRY(fit, apply_runs(in, {run.value()}, db));
  (void)fit;
  return Ok{};
}

}  // namespace ftcost
