#include "run_cmd.hpp"

#include "fileio.hpp"
#include "format.hpp"
#include "ftcost/embedded_db.hpp"
#include "report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <sys/stat.h>
#include <utility>
#include <vector>

namespace ftcost::cli {

Result<std::vector<RunFile>> load_runs(const std::vector<std::string>& paths, const Database& db,
                                       const RunReader& read) {
  std::vector<RunFile> runs;
  for (const auto& p : paths) {
    FTCOST_TRY(run, read_run(p, db, read));
    runs.push_back(std::move(run));
  }
  return runs;
}

Result<std::vector<RefRow>> load_run_rows(const std::string& dir, const Database& db, const RunReader& read) {
  namespace fs = std::filesystem;
  std::vector<RefRow> rows;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return rows;
  std::vector<std::string> files;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_regular_file() && it->path().extension() == ".json") files.push_back(it->path().string());
  if (ec) return make_error(Errc::io_error, "--runs", dir + ": " + ec.message());
  std::sort(files.begin(), files.end());
  FTCOST_TRY(runs, load_runs(files, db, read));
  for (const auto& r : runs) {
    auto part = run_reference_rows(r);
    rows.insert(rows.end(), part.begin(), part.end());
  }
  return rows;
}

namespace {

// The shipped stack file as JSON (the embedded copy of gpu-db/stacks/<id>.json).
Result<json> stack_document(const std::string& id) {
  const std::string want = "stacks/" + id + ".json";
  for (const EmbeddedFile* f = kEmbeddedDbFiles; f->path != nullptr; ++f)
    if (want == f->path) return parse_json_text(f->content, want);
  return make_error(Errc::unknown_id, "--stack", "no stack file " + want);
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", std::fabs(v) < 1e-9 ? 0.0 : v);
  return buf;
}

}  // namespace

int run_fit_stack_runs(const std::vector<std::string>& paths, const Database& db, const std::string& stack_id,
                       const std::string& write_path, bool as_json, const RunReader& read) {
  auto fail = [](const Error& e) {  // names and fields from the run files: printable
    std::cerr << "ftcost: error: " << printable(e.to_string()) << "\n";
    return e.exit_code();
  };
  const StackProfile* s = db.stack(stack_id);
  if (s == nullptr) {
    std::vector<std::string> ids;
    for (const auto& [id, x] : db.stacks()) ids.push_back(id);
    return fail(make_error(Errc::unknown_id, "--stack",
                           "unknown stack \"" + stack_id + "\"" + known_ids_hint(stack_id, ids) +
                               " (the profile the runs refit: a stack id of the database, not a file)"));
  }
  // --write replaces a stack profile or writes a new file, never another file (issue 39 L3); checked before
  // the fit, so that a wrong path fails at once.
  if (!write_path.empty()) {
    struct stat st {};
    if (::stat(write_path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      auto text = read(write_path);
      auto doc = text.ok() ? parse_json_text(text.value(), write_path) : Result<json>(text.error());
      const bool profile = doc.ok() && doc->is_object() && doc->contains("schema") &&
                           doc->at("schema") == json("ftcost.stack/1");
      if (!profile)
        return fail(make_error(
            Errc::invalid_value, "--write",
            write_path + ": exists and is not an ftcost.stack/1 profile; --write with --run replaces "
                         "a stack profile or writes a new file: give a new file name"));
    }
  }
  auto runs = load_runs(paths, db, read);
  if (!runs.ok()) return fail(runs.error());
  auto fit = fit_stack_to_runs(runs.value(), db, *s);
  if (!fit.ok()) return fail(fit.error());
  const RunFitResult& r = fit.value();
  if (as_json) {
    std::cout << r.to_json().dump(2) << "\n";
  } else {
    std::cout << "ftcost fit-stack --run: " << s->id << " refitted to " << runs->size() << " run(s) on "
              << runs.value()[0].gpu_id << " (" << r.time_points << " timed steps, " << r.memory_points
              << " with memory)\n";
    std::cout << "step time, RMS log error on the run: " << fixed(100 * r.rms_log_before, 1) << "% before -> "
              << fixed(100 * r.rms_log_after, 1) << "% after\n";
    if (r.memory_points > 0)
      std::cout << "max_memory_allocated, mean |error|: " << fixed(100 * r.mem_rel_before, 1)
                << "% before -> " << fixed(100 * r.mem_rel_after, 1) << "% after\n";
    {  // measured vs predicted, by batch shape (medians of the steps of that shape)
      std::map<std::pair<std::string, std::string>, std::vector<const RunPoint*>> by;
      for (const auto& q : r.points) by[{q.file, q.shape}].push_back(&q);
      auto median = [](std::vector<double> v) {
        std::sort(v.begin(), v.end());
        const std::size_t k = v.size();
        return k % 2 ? v[k / 2] : 0.5 * (v[k / 2 - 1] + v[k / 2]);
      };
      Table m({"run", "shape", "steps", "measured s", "before s", "after s"},
              {false, false, true, true, true, true});
      for (const auto& [key, qs] : by) {
        std::vector<double> a, b, c;
        for (const auto* q : qs) {
          a.push_back(q->measured_s);
          b.push_back(q->before_s);
          c.push_back(q->after_s);
        }
        m.row({key.first, key.second, std::to_string(qs.size()), num(median(a)), num(median(b)),
               num(median(c))});
      }
      std::cout << m.str();
    }
    Table t({"parameter", "kind", "before", "after", "sigma", "95% interval", "note"},
            {false, false, true, true, true, false, false});
    for (const auto& p : r.params)
      t.row({p.name, p.kind, num(p.before), p.fitted ? num(p.value) : "-",
             p.fitted && !p.at_bound ? num(p.sigma) : "-",
             p.fitted && !p.at_bound ? num(p.ci95_lo) + " to " + num(p.ci95_hi) : "-",
             p.fitted ? p.note : "not fitted: " + p.note});
    std::cout << t.str();
    for (const auto& n : r.notes) std::cout << "note: " << printable(n) << "\n";
    for (const auto& run : runs.value())
      for (const auto& l : run.lacks) std::cout << "note: " << printable(run.source + " lacks " + l) << "\n";
    std::cout << "other configurations: the residual above holds for the shapes the run covered; batch sizes "
                 "and lengths outside them add the fitted parameters' error bars (`ftcost estimate --run` "
                 "propagates them to the estimated configuration), and other GPUs are not calibrated by "
                 "this run\n";
  }
  if (write_path.empty()) return 0;
  auto doc = stack_document(stack_id);
  if (!doc.ok()) return fail(doc.error());
  json j = doc.value();
  j["id"] = r.stack.id;
  j["display_name"] = r.stack.display_name;
  j["description"] = "User profile: " + stack_id + " with its free parameters refitted to " +
                     std::to_string(runs->size()) + " run(s) recorded on " + runs.value()[0].gpu_id +
                     " (ftcost fit-stack --run). Provenance in throughput.fit.";
  for (const auto& p : r.params) {
    if (!p.fitted) continue;
    if (p.kind == "memory")
      j["memory"][p.name] = p.value;
    else
      j["throughput"][p.name] = p.value;
  }
  j["memory"]["gc_retained_provenance"] = r.stack.gc_retained_provenance;
  j["throughput"]["fit"] = r.stack.fit;
  auto st = write_file_atomic(write_path, j.dump(2) + "\n");
  if (!st.ok()) return fail(make_error(st.error().code, "--write", st.error().to_string()));
  if (!as_json)
    std::cout << "wrote " << printable(write_path) << " (load it with --stack " << printable(write_path)
              << ")\n";
  return 0;
}

}  // namespace ftcost::cli
