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
  std::string instance_type;  // what tells two offers of one provider apart
  std::string region;
  int gpu_count = 1;             // GPUs in the instance the offer is for (the price is per GPU-hour)
  std::string network = "none";  // between the offer's instances ("none": never rented as several nodes)
  // How it prices the job: "instance" (an offer of the job's GPUs per node, as `compare` rents it),
  // "per-gpu" (no such instance is priced: the job's GPUs x the per-GPU price of another instance size),
  // "given" (--price-per-hour, --electricity).
  std::string basis = "instance";
};
// "fresh", "stale" or "undated": the price class every table shows beside a price (of an offer dated `date`,
// empty when undated, and stale or not by the staleness limit).
const char* price_class(const std::string& date, bool stale);
const char* price_class(const PriceChoice& p);
// The batch choice's note when the largest batch that fits is slower than the one chosen:
// "; the largest, L, is slower (X against Y samples/s)".
std::string slower_largest_note(std::int64_t largest, double largest_qps, double best_qps);

// The one price rule (estimate's headline, compare's row per GPU and its "cheapest", the calculator): among
// the eligible offers — on-demand ones, plus spot ones when spot is wanted, of one provider when one is named
// — a dated price within the staleness limit beats a stale one, which beats an undated one; within a tier the
// lower price wins. Returns the tier: 0 dated and fresh, 1 dated but stale, 2 undated.
int price_tier(const PriceChoice& p);
// Whether an offer rents the job's shape (in.multi: GPUs per node x nodes): an instance of that many GPUs,
// several nodes only where the offer names the network between its instances (shapes.hpp).
bool offer_rents_shape(const PriceChoice& p, int gpus_per_node, int nodes);
bool price_better(const PriceChoice& a, double cost_a, const PriceChoice& b, double cost_b);

// The multi-GPU options as given (parallel.hpp turns them into a plan; 1 GPU and no offload = today's
// single-GPU estimate).
struct MultiGpuRequest {
  int gpus = 1;  // per node
  int nodes = 1;
  std::string parallel;  // "" (none given), "auto", "ddp", "tp:4", ...
  std::string offload = "none";
  std::string nvme_gbps;  // "READ[,WRITE]" GB/s of the node's NVMe (ZeRO-Infinity); "" = assumed default
  std::string node;       // preset id
  std::string network;    // "" = from the node preset (or none)
  std::string zero3;      // --zero3 "KEY=VALUE,..." (DeepSpeed ZeRO-3 cache settings); "" = assumed defaults
  double network_gbit_per_gpu = 0;
  int sequence_parallel = 1;  // --sequence-parallel: DeepSpeed Ulysses degree (1 = off)
  double host_memory_gbps =
      0;  // --host-memory-gbps: the node's host memory bandwidth; 0 = the preset's or assumed
  bool active() const { return gpus * nodes > 1 || offload != "none"; }
};

struct Inputs {
  ModelSpec model;
  GpuSpec gpu;
  StackProfile stack;
  Workload workload;
  std::string dataset_id;                  // empty for a fixed --seq; the preset id or the user's file path
  std::shared_ptr<const Dataset> dataset;  // the preset or the user's own length file; null for --seq
  std::string model_kind = "step";         // step | paper
  std::string routing = "uniform";         // expert load distribution
  std::vector<double> expert_shares;
  std::shared_ptr<const Calibration> calibration;  // --calibration, checked against the GPU's spec
  std::string calibration_source;
  double price_per_hour = -1;  // from --price-per-hour (-1 = use the price table; 0 = a GPU you own)
  double electricity_usd_per_kwh =
      -1;                // --electricity: your GPU's board power at this price (-1 = not given)
  long today_days = -1;  // for price ages; -1 = unknown
  long stale_days = 365;
  std::string provider;               // --provider: price from this provider only
  bool spot = false;                  // --spot on: use spot prices
  MultiGpuRequest multi;              // --gpus, --nodes, --parallel, --offload, --node, --network
  std::vector<std::string> defaults;  // "flag=value (why)" for every default applied
  std::vector<std::string> warnings;
  bool advise = true;  // estimate() may price an alternative (another stack) when the step is host-bound
};

// A job above this share of the usable memory is "tight": allocator fragmentation and the memory model's
// uncertainty (the stack profiles' fit residuals are 5-10% of the activation memory) can push it over.
constexpr double kTightMemoryFraction = 0.92;
// A step whose host launch/loop time is more than this share of the step is "host-bound".
constexpr double kHostBoundFraction = 0.5;

Result<Inputs> resolve_request(const Request& req, const Database& db, const FileReader& reader,
                               long today_days = -1);

// A job that compare and plan price on many GPUs, resolved before their search: on the first of `gpu_ids`
// it is valid for, with `reader` made summarised_reader's. An error only when the job is wrong whatever the
// GPU: on every GPU, or on two with the same error (a bad flag or file does not depend on the GPU). The GPUs
// it cannot be resolved on (a --headroom above their memory: issue 39 R3) are listed with their error, for
// the search to leave out with a note.
struct GpuProbe {
  Inputs in;
  std::string gpu;  // the GPU `in` is for
  FileReader reader;
  std::vector<std::pair<std::string, Error>> skipped;  // GPUs tried before `gpu`, and why not
};
Result<GpuProbe> probe_gpus(const Request& req, const std::vector<std::string>& gpu_ids, const Database& db,
                            const FileReader& reader, long today_days = -1);

// The step model's range (+/- relative): the stack profile's fit residual (log-space RMS on the data it was
// fitted to), widened off the GPUs it was fitted on without a calibration, and a calibration's measurement
// spread; an unfitted profile gets a wide default. `dominant` (optional) says which term dominates.
double step_range_fraction(const Inputs& in, std::string* dominant = nullptr);

// The reader for resolving one job many times (compare, plan and scale resolve it once per GPU, shape,
// method and strategy): the user's own length file that `in` was resolved from (in.dataset_id, own data
// with a histogram) is served as the compact ftcost.dataset/1 file it reduced to (Dataset::to_file_json,
// which reads back to the same distribution), every other path through `reader`. A list of 4.19 million
// lengths is then read and binned once instead of once per resolve (issue 39: 100 s in `plan`).
FileReader summarised_reader(const Inputs& in, const FileReader& reader);

struct ProviderCost {
  PriceChoice price;
  double hours = 0;
  double cost_usd = 0;
  double cost_low = 0, cost_high = 0;
};

// How the micro-batch (and, with --effective-batch, the grad-accum) was chosen, and why: what the cards and
// the CLI say beside the batch.
struct BatchChoice {
  std::string rule = "given";  // "fastest" (the default), "largest" (--batch max) or "given" (--batch N)
  std::int64_t largest = 0;    // the largest batch whose memory range's upper end fits
  double largest_qps = 0;      // its throughput (0 when not evaluated)
  std::int64_t grad_accum = 1;
  std::string reason;  // one line: why this batch
  int evaluated = 0;   // step-model evaluations of the search
};

struct Estimate {
  Inputs in;
  MaxBatch max_batch;
  std::int64_t batch = 0;  // the batch the time/cost is for
  double padded_len = 0;   // mean padded tokens per sample at `batch`
  MemoryBreakdown memory;  // at `batch`
  // Memory range from the stack's uncertainty (memory_uncertainty_fraction of the activation, loss and
  // allocator part), and the longest padded sequence that fits at batch 1.
  double memory_low = 0, memory_high = 0;
  // The largest batch whose memory range's upper end still fits (max_batch.batch when the stack states no
  // uncertainty): what a plan runs at, so that a recommended job does not depend on the low end.
  std::int64_t max_batch_range_fit = 0;
  MaxSeq max_seq;
  ParamBreakdown params;
  StepTime step;
  double throughput_qps = 0, throughput_tps = 0;
  double throughput_data_tps = 0;  // tokens of data (no padding) per second; throughput_tps counts padding
  double throughput_low = 0, throughput_high = 0;
  double time_hours = 0;
  double precompute_hours = 0;  // of time_hours: DPO/KTO reference log-probs precomputed before training
  BatchChoice batch_choice;
  std::vector<ProviderCost> costs;  // sorted by cost; cheapest first
  bool has_price = false;
  ProviderCost chosen;         // --price-per-hour, or the cheapest offer
  std::string memory_state;    // "fits", "tight" (above kTightMemoryFraction) or "does_not_fit"
  double memory_fraction = 0;  // peak memory at `batch` / usable memory
  std::vector<std::string> warnings;
};

Result<Estimate> estimate(const Inputs& given, const Database& db);
// GPUs the job rents on its node: the training GPUs, and with GRPO's vLLM server mode the server's.
int rented_gpus(const Inputs& in);
// The prices of an estimate at its time_hours: every offer for the GPU and the headline by the one price rule
// (--electricity, --price-per-hour, else the best offer that rents the job's shape, in.multi): what
// estimate() ends with, for a caller that times the job itself (the multi-GPU layer).
void estimate_costs(Estimate& e, const Database& db);
// --seq max: the inputs at the longest sequence that fits at batch 1 on one GPU (a fixed length, batch 1,
// and the default it applied); unchanged without --seq max. estimate() and the multi-GPU estimate both
// resolve it before anything is timed.
Result<Inputs> resolve_longest_seq(const Inputs& in);
// `in` at a fixed length of `seq` tokens and batch 1, as --seq max resolves it; the defaults list says
// "seq=N (--seq max: `why`)".
Inputs at_fixed_length(const Inputs& in, double seq, const std::string& why);
json estimate_to_json(const Estimate& e);
// The step's top ops and its device vs host time per stage: `estimate --json`'s step_top_ops.
json step_top_ops_json(const StepTime& step);
// A job that does not fit has no step time, throughput, time or cost: those keys of its JSON, null (one GPU's
// and the multi-GPU estimate's).
void null_timing(json& j);

}  // namespace ftcost
