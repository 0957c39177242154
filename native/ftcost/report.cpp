#include "report.hpp"

#include "fileio.hpp"
#include "format.hpp"
#include "ftcost/json_util.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <sys/stat.h>

namespace ftcost::cli {

Result<std::vector<RefRow>> load_reference_dir(const std::string& dir, const Reader& read) {
  std::error_code ec;
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().extension() == ".json") files.push_back(e.path().string());
  if (ec) return make_error(Errc::io_error, "--dir", dir + ": " + ec.message());
  std::sort(files.begin(), files.end());
  if (files.empty()) return make_error(Errc::io_error, "--dir", dir + " holds no reference JSON files");
  std::vector<RefRow> rows;
  for (const auto& f : files) {
    FTCOST_TRY(text, read(f));
    FTCOST_TRY(part, parse_reference(text, f));
    rows.insert(rows.end(), part.begin(), part.end());
  }
  FTCOST_CHECK(check_unique_ids(rows));
  return rows;
}

namespace {

std::string pct(double v) { return fixed(100.0 * v, 1) + "%"; }

std::string svg_plot(const std::vector<RowResult>& res) {
  // log-log predicted vs measured for the time/throughput rows, training vs validation marked.
  const double W = 560, H = 580, pad = 70;
  double lo = 1e9, hi = 1e-9;
  for (const auto& r : res) {
    if (!r.error.empty() || r.row->metric == "max_batch_size") continue;
    lo = std::min({lo, r.row->measured, r.predicted});
    hi = std::max({hi, r.row->measured, r.predicted});
  }
  if (lo >= hi) {
    lo = 0.01;
    hi = 100;
  }
  const double l0 = std::floor(std::log10(lo)), l1 = std::ceil(std::log10(hi));
  auto X = [&](double v) { return pad + (std::log10(v) - l0) / (l1 - l0) * (W - 2 * pad); };
  auto Y = [&](double v) { return H - pad - (std::log10(v) - l0) / (l1 - l0) * (H - 2 * pad); };
  std::ostringstream o;
  o << "<svg xmlns='http://www.w3.org/2000/svg' width='" << W << "' height='" << H
    << "' font-family='sans-serif' font-size='12'>\n";
  o << "<rect width='100%' height='100%' fill='white'/>\n";
  for (double e = l0; e <= l1; e += 1) {
    const double v = std::pow(10.0, e);
    o << "<line x1='" << X(v) << "' y1='" << pad << "' x2='" << X(v) << "' y2='" << H - pad
      << "' stroke='#ddd'/>\n";
    o << "<line x1='" << pad << "' y1='" << Y(v) << "' x2='" << W - pad << "' y2='" << Y(v)
      << "' stroke='#ddd'/>\n";
    o << "<text x='" << X(v) << "' y='" << H - pad + 16 << "' text-anchor='middle'>" << v << "</text>\n";
    o << "<text x='" << pad - 6 << "' y='" << Y(v) + 4 << "' text-anchor='end'>" << v << "</text>\n";
  }
  const double a = std::pow(10.0, l0), b = std::pow(10.0, l1);
  o << "<line x1='" << X(a) << "' y1='" << Y(a) << "' x2='" << X(b) << "' y2='" << Y(b)
    << "' stroke='#888' stroke-dasharray='4 4'/>\n";
  for (double f : {0.85, 1.15}) {
    o << "<line x1='" << X(a) << "' y1='" << Y(a * f) << "' x2='" << X(b) << "' y2='" << Y(b * f)
      << "' stroke='#bbb' stroke-dasharray='2 4'/>\n";
  }
  for (const auto& r : res) {
    if (!r.error.empty() || r.row->metric == "max_batch_size") continue;
    const bool train = r.row->role == "training";
    const bool stage = r.row->metric.rfind("stage_", 0) == 0;
    const char* color = train ? (stage ? "#e08a00" : "#1f77b4") : "#d62728";
    if (train) {
      o << "<circle cx='" << X(r.row->measured) << "' cy='" << Y(r.predicted) << "' r='3.5' fill='" << color
        << "' fill-opacity='0.75'><title>" << r.row->id << "</title></circle>\n";
    } else {
      const double x = X(r.row->measured), y = Y(r.predicted);
      o << "<rect x='" << x - 5 << "' y='" << y - 5 << "' width='10' height='10' fill='" << color
        << "'><title>" << r.row->id << "</title></rect>\n";
    }
  }
  o << "<text x='" << W / 2 << "' y='" << H - 15
    << "' text-anchor='middle'>measured (queries/s or seconds)</text>\n";
  o << "<text x='15' y='" << H / 2 << "' text-anchor='middle' transform='rotate(-90 15 " << H / 2
    << ")'>predicted</text>\n";
  o << "<text x='" << pad
    << "' y='24' font-size='14'>ftcost validate: predicted vs measured (dashed: ±15%)</text>\n";
  o << "<circle cx='" << pad + 10 << "' cy='40' r='4' fill='#1f77b4'/><text x='" << pad + 20
    << "' y='44'>A40 throughput (training)</text>\n";
  o << "<circle cx='" << pad + 190 << "' cy='40' r='4' fill='#e08a00'/><text x='" << pad + 200
    << "' y='44'>A40 stage times (training)</text>\n";
  o << "<rect x='" << pad + 5 << "' y='51' width='9' height='9' fill='#d62728'/><text x='" << pad + 20
    << "' y='60'>Table IV throughput on A100-80GB and H100 (development: not fitted, informed "
       "choices)</text>\n";
  o << "</svg>\n";
  return o.str();
}

}  // namespace

int run_validate(const std::vector<RefRow>& rows, const Database& db, bool as_json,
                 const std::string& markdown_path, const std::string& svg_path) {
  auto res = evaluate(rows, db);
  auto groups = group_stats(res);
  int failed = 0;
  bool bad_input = false;  // a row's request is wrong (unknown model, bad value): exit 2, not 1
  for (const auto& r : res) {
    if (r.error.empty()) continue;
    ++failed;
    if (!bad_input && errc_exit_code(r.code) == 2 && r.code != Errc::does_not_fit) {
      bad_input = true;
      std::cerr << "ftcost: error: reference row \"" << printable(r.row->id) << "\": " << printable(r.error)
                << "\n";
    }
  }
  if (bad_input) return 2;
  if (as_json) {
    json jr = json::array();
    for (const auto& r : res)
      jr.push_back(json{{"id", r.row->id},
                        {"role", r.row->role},
                        {"group", r.row->group},
                        {"metric", r.row->metric},
                        {"measured", r.row->measured},
                        {"predicted", r.error.empty() ? json(r.predicted) : json(nullptr)},
                        {"rel_error", r.error.empty() ? json(r.rel_error) : json(nullptr)},
                        {"error", r.error}});
    json jg = json::array();
    for (const auto& g : groups)
      jg.push_back(json_object({"group", g.group}, {"role", g.role}, {"n", g.n}, {"mape", g.mape},
                               {"max_abs_error", g.max_abs}, {"worst", g.worst_id}));
    std::cout << json{{"rows", jr}, {"groups", jg}}.dump(2) << "\n";
  } else {
    Table t({"row", "role", "metric", "measured", "predicted", "error"},
            {false, false, false, true, true, true});
    for (const auto& r : res)
      t.row({r.row->id, r.row->role, r.row->metric, fixed(r.row->measured, 3),
             r.error.empty() ? fixed(r.predicted, 3) : "-", r.error.empty() ? pct(r.rel_error) : r.error});
    Table g({"group", "role", "n", "MAPE", "max |error|", "worst row"},
            {false, false, true, true, true, false});
    for (const auto& s : groups)
      g.row({s.group, s.role, std::to_string(s.n), pct(s.mape), pct(s.max_abs), s.worst_id});
    std::cout << t.str() << "\n" << g.str();
  }
  // --svg and --markdown together: both written or neither
  std::vector<OutputFile> outputs;
  if (!svg_path.empty()) outputs.push_back({svg_path, svg_plot(res), "--svg", "the --svg plot"});
  if (!markdown_path.empty()) {
    std::ostringstream md;
    md << "| group | role | n | MAPE | max abs error | worst row |\n|---|---|---|---|---|---|\n";
    for (const auto& s : groups)
      md << "| " << s.group << " | " << s.role << " | " << s.n << " | " << pct(s.mape) << " | "
         << pct(s.max_abs) << " | `" << s.worst_id << "` |\n";
    md << "\n| row | role | metric | measured | predicted | error |\n|---|---|---|---|---|---|\n";
    for (const auto& r : res)
      md << "| `" << r.row->id << "` | " << r.row->role << " | " << r.row->metric << " | "
         << fixed(r.row->measured, 3) << " | " << (r.error.empty() ? fixed(r.predicted, 3) : "-") << " | "
         << (r.error.empty() ? pct(r.rel_error) : r.error) << " |\n";
    outputs.push_back({markdown_path, md.str(), "--markdown", "the --markdown table"});
  }
  if (auto st = write_files_atomic(outputs); !st.ok()) {
    std::cerr << "ftcost: error: " << printable(st.error().to_string()) << "\n";
    return 2;
  }
  if (failed > 0) {
    std::cerr << "ftcost: error: " << failed << " reference row(s) could not be predicted (see the table)\n";
    return 1;
  }
  return 0;
}

namespace {
// The indent of a JSON text as written: the spaces before its second line's first character (2 if none).
int json_indent(const std::string& text) {
  const auto nl = text.find('\n');
  if (nl == std::string::npos) return 2;
  std::size_t i = nl + 1;
  while (i < text.size() && text[i] == ' ') ++i;
  const auto n = static_cast<int>(i - nl - 1);
  return n > 0 && n <= 8 ? n : 2;
}
}  // namespace

int run_fit_stack(const std::vector<RefRow>& rows, const Database& db, const std::string& stack_id,
                  const std::string& write_path, const Reader& read) {
  const StackProfile* s = db.stack(stack_id);
  if (s == nullptr) {
    std::cerr << "ftcost: error: --stack: unknown stack \"" << stack_id << "\"\n";
    return 2;
  }
  // The file --write updates is read (and checked) before the fit, so that a wrong path fails at once.
  json j;
  std::optional<std::string> written_text;  // the file --write updates, as read
  if (!write_path.empty()) {
    auto text = read(write_path);
    if (!text.ok()) {
      std::string msg = text.error().to_string();
      struct stat st {};
      if (::stat(write_path.c_str(), &st) != 0 && errno == ENOENT)
        msg = write_path +
              ": no such file; --write updates an existing stack profile JSON (e.g. gpu-db/stacks/" +
              stack_id + ".json): it keeps the profile and replaces its throughput parameters";
      std::cerr << "ftcost: error: --write: " << printable(msg) << "\n";
      return 2;
    }
    auto doc = parse_json_text(text.value(), write_path);
    if (!doc.ok()) {
      std::cerr << "ftcost: error: --write: " << printable(doc.error().to_string()) << "\n";
      return 2;
    }
    if (!doc.value().is_object()) {
      std::cerr << "ftcost: error: --write: " << printable(write_path)
                << ": must be a stack profile JSON object\n";
      return 2;
    }
    j = doc.value();
    written_text = text.value();
    if (j.contains("throughput") && !j.at("throughput").is_object()) {
      std::cerr << "ftcost: error: --write: " << printable(write_path) << ": throughput: must be an object\n";
      return 2;
    }
  }
  // Memory parameters first (memory.fit_parameters), then the throughput parameters on that profile.
  auto mem = fit_stack_memory(rows, db, *s);
  if (!mem.ok()) {
    std::cerr << "ftcost: error: " << mem.error().to_string() << "\n";
    return mem.error().exit_code();
  }
  auto fitted = fit_stack(rows, db, mem.value());
  if (!fitted.ok()) {
    std::cerr << "ftcost: error: " << fitted.error().to_string() << "\n";
    return fitted.error().exit_code();
  }
  // Only what was refitted is written: a --dir without memory rows keeps the profile's memory values and fit.
  const bool memory_fitted = !s->memory_fit_parameters.empty() && !mem->memory_fit["parameters"].empty();
  if (memory_fitted) std::cout << "memory:\n" << mem->memory_fit.dump(2) << "\nthroughput:\n";
  std::cout << fitted->fit.dump(2) << "\n";
  if (write_path.empty()) return 0;
  if (memory_fitted && j.contains("memory") && !j.at("memory").is_object()) {
    std::cerr << "ftcost: error: --write: " << printable(write_path) << ": memory: must be an object\n";
    return 2;
  }
  // The profile is rewritten in its own key order and indent, so that a refit's diff shows only the values
  // (the text was checked by parse_json_text above, so this parse cannot fail).
  using ordered = nlohmann::ordered_json;
  ordered out = ordered::parse(*written_text);
  const auto as_ordered = [](const json& v) { return ordered::parse(v.dump()); };
  if (memory_fitted) {
    for (auto it = mem->memory_fit["parameters"].begin(); it != mem->memory_fit["parameters"].end(); ++it)
      out["memory"][it.key()] = as_ordered(it.value());
    out["memory"]["fit"] = as_ordered(mem->memory_fit);
  }
  for (auto it = fitted->fit["parameters"].begin(); it != fitted->fit["parameters"].end(); ++it)
    out["throughput"][it.key()] = as_ordered(it.value());
  out["throughput"]["fit"] = as_ordered(fitted->fit);
  auto st = write_file_atomic(write_path, out.dump(json_indent(*written_text)) + "\n");
  if (!st.ok()) {
    std::cerr << "ftcost: error: --write: " << printable(st.error().to_string()) << "\n";
    return 2;
  }
  std::cout << "wrote " << write_path << "\n";
  return 0;
}

}  // namespace ftcost::cli
