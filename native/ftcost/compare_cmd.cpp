#include "compare_cmd.hpp"

#include "format.hpp"

#include <algorithm>
#include <iostream>
#include <map>
#include <vector>

namespace ftcost::cli {

namespace {

// Display order: priced rows that fit, cheapest first (rows on GPUs the stack does not run on after them);
// rows that fit without a price, fastest first; then what does not fit, largest memory first; errors last.
int rank(const CompareRow& r) {
  if (!r.error.empty()) return 4;
  if (!r.fits) return 3;
  if (!r.has_price) return 2;
  return r.stack_warning.empty() ? 0 : 1;
}

bool before(const CompareRow& a, const CompareRow& b) {
  const int ra = rank(a), rb = rank(b);
  if (ra != rb) return ra < rb;
  if (ra <= 1) return a.cost < b.cost;
  if (ra == 2) return a.hours < b.hours;
  if (ra == 3) return a.memory_gib > b.memory_gib;
  return a.gpu_id < b.gpu_id;
}

std::string duration(double hours) {
  if (hours < 1.0) return fixed(hours * 60.0, 0) + " min";
  if (hours < 48.0) return fixed(hours, 1) + " h";
  return fixed(hours / 24.0, 1) + " d";
}

}  // namespace

int run_compare(const Request& req, const Database& db, const FileReader& reader, long today_days,
                const CompareOptions& opt) {
  auto all = compare_gpus(req, db, reader, today_days);
  if (!all.ok()) {
    std::cerr << "ftcost: error: " << all.error().to_string() << "\n";
    return all.error().exit_code();
  }
  std::vector<CompareRow> rows;
  for (const auto& r : all.value()) {
    if (r.spot && !opt.spot) continue;
    if (opt.fits_only && !r.fits) continue;
    rows.push_back(r);
  }
  if (!opt.offers) {
    // each GPU's cheapest offer (or its one row when it has none)
    std::map<std::string, std::size_t> best;
    std::vector<CompareRow> one;
    for (const auto& r : rows) {
      auto it = best.find(r.gpu_id);
      if (it == best.end()) {
        best[r.gpu_id] = one.size();
        one.push_back(r);
      } else if (r.has_price && (!one[it->second].has_price || r.cost < one[it->second].cost)) {
        one[it->second] = r;
      }
    }
    rows.swap(one);
  }
  std::stable_sort(rows.begin(), rows.end(), before);
  const int cheapest = cheapest_row(rows, opt.spot);

  if (opt.as_csv) {
    std::cout << compare_to_csv(rows);
    return 0;
  }
  if (opt.as_json) {
    json out = json::array();
    for (std::size_t i = 0; i < rows.size(); ++i) {
      json j = compare_row_to_json(rows[i]);
      j["cheapest"] = static_cast<int>(i) == cheapest;
      out.push_back(j);
    }
    std::cout << json{{"rows", out}, {"spot_included", opt.spot}}.dump(2) << "\n";
    return 0;
  }

  Table t({"GPU", "memory", "max batch", "queries/s", "time", "provider", "$/GPU-h", "cost", "note"},
          {false, true, true, true, true, false, true, true, false});
  int fitting = 0, stack_na = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    std::string note;
    if (static_cast<int>(i) == cheapest) note = "cheapest";
    if (!r.stack_warning.empty()) {
      note = "stack n/a";
      ++stack_na;
    }
    if (r.has_price && r.stale) note += std::string(note.empty() ? "" : ", ") + "stale price";
    if (!r.error.empty()) {
      t.row({r.gpu_name, fixed(r.memory_gib, 0) + " GiB", "-", "-", "-", "-", "-", "-", "error: " + r.error});
      continue;
    }
    if (!r.fits) {
      t.row({r.gpu_name, fixed(r.memory_gib, 0) + " GiB",
             r.max_batch > 0 ? fixed(r.max_batch, 0) : std::string("0"), "-", "-", "-", "-", "-",
             r.max_batch > 0 ? "the batch asked for does not fit" : "does not fit at batch 1"});
      continue;
    }
    ++fitting;
    t.row({r.gpu_name, fixed(r.memory_gib, 0) + " GiB", fixed(r.max_batch, 0), fixed(r.qps, 2),
           duration(r.hours), r.has_price ? r.provider + (r.spot ? " (spot)" : "") : "no price",
           r.has_price ? fixed(r.usd_per_hour, 2) : "-", r.has_price ? money(r.cost) : "-", note});
  }
  std::cout << "ftcost compare: the job on " << rows.size() << (opt.offers ? " offers" : " GPUs") << " ("
            << fitting << " fit); " << (opt.spot ? "on-demand and spot" : "on-demand") << " prices"
            << (opt.spot ? "" : " (--spot on adds spot offers)")
            << (opt.offers ? "" : ", each GPU's cheapest") << "\n"
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

}  // namespace ftcost::cli
