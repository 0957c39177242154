// From a request (the `ftcost estimate` flags as key/value pairs) to an Estimate: memory breakdown,
// maximum batch, step time, throughput, time and cost for every provider.
#pragma once

#include "ftcost/database.hpp"
#include "ftcost/memory.hpp"
#include "ftcost/throughput.hpp"
#include "ftcost/workload.hpp"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ftcost {

// Raw request: flag name (without dashes) -> value as text. Both the CLI and the browser build one.
using Request = std::map<std::string, std::string>;

// The keys `estimate` understands, in display order.
const std::vector<std::string>& request_keys();

// From a JSON object (values: strings or numbers; booleans for "checkpointing" accepted). Unknown keys
// and non-scalar values are errors naming the key.
Result<Request> request_from_json(const json& obj);

// Reads a file given on the command line (model config, GPU spec, calibration). Front ends without a
// file system pass nullptr: path arguments are then rejected with a clear message.
using FileReader = std::function<Result<std::string>(const std::string& path)>;

struct PriceChoice {
  std::string provider;
  std::string provider_id;
  double usd_per_hour = 0;
  std::string date;
  long age_days = -1;
  bool stale = false;
  bool spot = false;
  std::string source;
};

// The multi-GPU options as given (parallel.hpp turns them into a plan; 1 GPU and no offload = today's
// single-GPU estimate).
struct MultiGpuRequest {
  int gpus = 1;  // per node
  int nodes = 1;
  std::string parallel;  // "" (none given), "auto", "ddp", "tp:4", ...
  std::string offload = "none";
  std::string node;     // preset id
  std::string network;  // "" = from the node preset (or none)
  double network_gbit_per_gpu = 0;
  bool active() const { return gpus * nodes > 1 || offload != "none"; }
};

struct Inputs {
  ModelSpec model;
  GpuSpec gpu;
  StackProfile stack;
  Workload workload;
  std::string dataset_id;           // empty for a fixed --seq
  std::string model_kind = "step";  // step | paper
  std::string routing = "uniform";  // expert load distribution
  std::vector<double> expert_shares;
  std::shared_ptr<const Calibration> calibration;  // --calibration, checked against the GPU's spec
  std::string calibration_source;
  double price_per_hour = 0;  // from --price-per-hour (0 = use the price table)
  long today_days = -1;       // for price ages; -1 = unknown
  long stale_days = 365;
  std::string provider;               // --provider: price from this provider only
  bool spot = false;                  // --spot on: use spot prices
  MultiGpuRequest multi;              // --gpus, --nodes, --parallel, --offload, --node, --network
  std::vector<std::string> defaults;  // "flag=value (why)" for every default applied
  std::vector<std::string> warnings;
};

Result<Inputs> resolve_request(const Request& req, const Database& db, const FileReader& reader,
                               long today_days = -1);

struct ProviderCost {
  PriceChoice price;
  double hours = 0;
  double cost_usd = 0;
  double cost_low = 0, cost_high = 0;
};

struct Estimate {
  Inputs in;
  MaxBatch max_batch;
  std::int64_t batch = 0;  // the batch the time/cost is for
  double padded_len = 0;   // mean padded tokens per sample at `batch`
  MemoryBreakdown memory;  // at `batch`
  ParamBreakdown params;
  StepTime step;
  double throughput_qps = 0, throughput_tps = 0;
  double throughput_low = 0, throughput_high = 0;
  double time_hours = 0;
  std::vector<ProviderCost> costs;  // sorted by cost; cheapest first
  bool has_price = false;
  ProviderCost chosen;  // --price-per-hour, or the cheapest offer
  std::vector<std::string> warnings;
};

Result<Estimate> estimate(const Inputs& in, const Database& db);
json estimate_to_json(const Estimate& e);

}  // namespace ftcost
