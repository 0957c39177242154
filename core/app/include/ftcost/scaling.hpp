// The same job on 1, 2, 4, 8... GPUs of one kind: time, cost, throughput, speedup and scaling efficiency (of
// the job's time) against the GPU count (`ftcost scale`, window.ftcost.scaling). Each point is
// estimate_parallel of the job on that many GPUs (--parallel as given, default auto; one GPU is exactly the
// single-GPU estimate), priced with the estimate's price choice per GPU-hour x GPUs.
#pragma once

#include "ftcost/database.hpp"
#include "ftcost/estimate.hpp"
#include "ftcost/json_util.hpp"

#include <string>
#include <vector>

namespace ftcost {

struct ScalingPoint {
  int gpus = 1;  // in all
  int gpus_per_node = 1;
  int nodes = 1;
  std::string strategy = "single";
  bool fits = false;
  std::string error;              // this count could not be estimated (the message names the option)
  std::int64_t micro_batch = 0;   // per GPU
  std::int64_t global_batch = 0;  // per optimizer step
  double per_rank_peak_gib = 0;
  double step_s = 0;
  double comm_exposed_s = 0;  // per optimizer step
  double qps = 0, tps = 0;
  double hours = 0;
  double data_tps = 0;  // tokens of data per second (tps counts padding)
  double cost_usd = 0;  // 0 when no price
  // The point's price by the one price rule for its shape (an instance of that many GPUs where one is
  // priced, else the per-GPU price of another size: basis "per-gpu").
  double usd_per_gpu_hour = 0;
  std::string price_provider, price_basis;
  double speedup = 0;     // the base point's time / this point's (more than one GPU: whole optimizer steps)
  double efficiency = 0;  // speedup x the base point's GPUs / this point's GPUs
  bool global_batch_exceeds_data = false;  // one step per epoch holds all the data: more GPUs only idle
};

struct ScalingSeries {
  std::string gpu;
  int node_gpus = 8;  // GPUs per node: --gpus, else the --node preset's, else 8 (assumed)
  std::string network = "none";
  int base_gpus = 0;  // the smallest count where the job fits (efficiency 1); 0 when none fits
  double usd_per_gpu_hour = 0;
  std::string price_provider;
  std::vector<ScalingPoint> points;
};

// The GPU counts when none are given: 1, 2, 4... up to a node, then 2 and 4 nodes when the request names a
// network between nodes (--node preset with a network, or --network).
std::vector<int> default_scaling_counts(int node_gpus, bool networked);

// `job` is an estimate request with "gpu"; its "gpus" (GPUs per node), "node" and "network" give the node
// size and the network; "nodes" is replaced. A count above the node size must be a multiple of it and needs
// a network. Errors of the request (or of `counts`, named "--counts") are returned; a count where the job
// cannot be estimated (e.g. tp:4 on 2 GPUs) keeps its error in its point.
Result<ScalingSeries> scaling_series(const Request& job, const Database& db, const FileReader& reader,
                                     long today_days, const std::vector<int>& counts = {});

// "1,2,4,8,16" -> counts (each 1..4096, increasing); errors name --counts.
Result<std::vector<int>> parse_counts(const std::string& text);

// {"gpu", "node_gpus", "network", "base_gpus", "price": {provider, usd_per_gpu_hour} | null, "points": [...]}
json scaling_to_json(const ScalingSeries& s);
std::string scaling_to_csv(const ScalingSeries& s);

}  // namespace ftcost
