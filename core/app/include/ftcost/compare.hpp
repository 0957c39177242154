// The same fine-tuning job on every GPU of the database: fits or not, maximum batch, throughput, time,
// and the cost with every dated price offer. Shared by `ftcost compare` and the calculator's table.
#pragma once

#include "ftcost/database.hpp"
#include "ftcost/estimate.hpp"
#include "ftcost/json_util.hpp"

#include <map>
#include <string>
#include <vector>

namespace ftcost {

struct CompareRow {
  std::string gpu_id, gpu_name;
  double memory_gib = 0;
  double max_batch = 0;
  std::int64_t batch = 0;  // micro-batch per GPU the row is timed at (the estimate's choice)
  double qps = 0;
  double hours = 0;
  bool fits = false;
  bool has_price = false;
  std::string provider;  // empty: no price in the database
  bool spot = false;
  bool stale = false;
  std::string date;
  std::string instance_type, region;  // what tells two offers of one provider apart
  int gpu_count = 1;                  // GPUs in the offer's instance
  double usd_per_hour = 0;            // per GPU-hour (the offer's price, or --electricity's)
  std::string price_source;           // --electricity: "700 W board power x $0.3/kWh" (else empty)
  // "instance": the offer's own instance; "per-gpu": no instance of this size is priced, the GPUs at the
  // per-GPU price of another size (as `estimate` prices the job, estimate.hpp's price rule)
  std::string price_basis = "instance";
  // The instance shape the row is for (shapes.hpp): GPUs per node x nodes, the strategy the estimate used
  // ("single" on one GPU; --parallel, default auto), each rank's peak memory and the whole shape's price.
  int gpus_per_node = 1;
  int nodes = 1;
  std::string network = "none";  // between nodes
  std::string strategy = "single";
  double per_rank_peak_gib = 0;
  double shape_usd_per_hour = 0;  // usd_per_hour x GPUs of the shape; cost = this x hours
  int gpus() const { return gpus_per_node * nodes; }
  double cost = 0, cost_low = 0, cost_high = 0;
  bool calibrated = false;    // the request carries a calibration for this GPU
  std::string stack_warning;  // non-empty: the chosen stack's software does not run on this GPU's vendor
  std::string error;          // the job could not be estimated on this GPU (the message names the field)
};

// One row per instance shape (shapes.hpp: each price offer's whole instance, and 2, 4... of them where the
// offer names its network) and price kind (on-demand, spot) of every GPU where the job fits on that shape,
// and one row for a GPU that has no offer, fits on none of its shapes or fails. A shape of one GPU is
// today's single-GPU estimate; a larger one is estimate_parallel with the request's --parallel (default
// auto) and --offload, costed as the whole shape x hours. "gpu", "calibration", "provider" and
// "price-per-hour" of `req` are replaced; `calibration_for` gives the calibration (a name `reader`
// resolves) to use for a GPU id. Filters: "gpus" of `req` keeps shapes with that many GPUs per node,
// "nodes" that many nodes, `max_gpus` (> 0) at most that many GPUs in all (default kDefaultMaxShapeGpus);
// with a filter, GPUs without a matching shape are left out. "node", "network" and
// "network-gbit-per-gpu" are refused: the hardware comes from each offer. With "electricity" every shape that
// fits is one row of your own GPUs priced at their board power x $/kWh (as `estimate --electricity`), not the
// offers' prices.
// Errors of the request itself (a bad flag) are returned; a GPU-specific failure is kept in its row.
Result<std::vector<CompareRow>> compare_gpus(const Request& req, const Database& db, const FileReader& reader,
                                             long today_days,
                                             const std::map<std::string, std::string>& calibration_for = {},
                                             int max_gpus = 0);

// The cheapest row: it fits, has a price (spot only with `include_spot`) and is on a GPU the request's
// stack runs on; -1 when none.
int cheapest_row(const std::vector<CompareRow>& rows, bool include_spot);

// What `ftcost compare` shows: spot offers or not, every offer or each GPU's cheapest, all GPUs or only
// those where the job fits.
struct CompareView {
  bool spot = false;
  bool offers = false;
  bool fits_only = false;
  std::vector<std::string> gpu_types;  // --gpu-types: only these GPU ids (empty: all)
};

// The rows `view` keeps, in display order: priced rows that fit, cheapest first (rows on GPUs the stack does
// not run on after them); rows that fit without a price, fastest first; then what does not fit, largest
// memory first; errors last.
std::vector<CompareRow> compare_view(const std::vector<CompareRow>& all, const CompareView& view);

// The display order compare_view sorts by (the one price rule among priced rows that fit).
bool compare_row_before(const CompareRow& a, const CompareRow& b);

// {"rows": [...compare_row_to_json, "cheapest": bool], "spot_included": bool}: what `ftcost compare --json`
// prints for rows from compare_view.
json compare_to_json(const std::vector<CompareRow>& shown, const CompareView& view);

// A CSV field, quoted when it holds a comma, a quote or a line break.
std::string csv_field(const std::string& s);
std::string compare_to_csv(const std::vector<CompareRow>& rows);
json compare_row_to_json(const CompareRow& r);

// Any JSON result flattened to "field,value" rows (nested keys joined with ".", arrays of scalars with ";"):
// the CSV form of `ftcost estimate`.
std::string json_to_field_csv(const json& result);

}  // namespace ftcost
