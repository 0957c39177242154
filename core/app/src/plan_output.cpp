// A plan search's result as JSON (`ftcost plan --json`) and as CSV.
#include "ftcost/compare.hpp"
#include "ftcost/options.hpp"
#include "ftcost/parallel.hpp"
#include "ftcost/plan.hpp"
#include "ftcost/plan_config.hpp"
#include "ftcost/shapes.hpp"
#include "ftcost/units.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <memory>
#include <set>
#include <sstream>

namespace ftcost {

json plan_to_json(const PlanResult& r) {
  json front = json::array();
  auto entry_json = [](const PlanEntry& e) {
    json req = json::object();
    for (const auto& [k, v] : e.request) req[k] = v;
    return json_object(
        {"id", e.id}, {"gpu", e.shape.gpu_id}, {"gpu_name", e.gpu_name},
        {"gpus_per_node", e.shape.gpus_per_node}, {"nodes", e.shape.nodes}, {"provider", e.shape.provider},
        {"provider_id", e.shape.provider_id}, {"instance_type", e.shape.instance_type},
        {"region", e.shape.region}, {"price_date", e.shape.date.empty() ? json(nullptr) : json(e.shape.date)},
        {"price_stale", e.shape.stale}, {"spot", e.shape.spot}, {"usd_per_hour", e.shape.usd_per_hour},
        {"usd_per_gpu_hour", e.shape.usd_per_gpu_hour}, {"method", e.method}, {"stack", e.stack},
        {"parallel", e.parallel}, {"offload", e.offload}, {"checkpointing", e.checkpointing},
        {"optimizer", e.optimizer}, {"micro_batch", e.micro_batch}, {"max_micro_batch", e.max_micro_batch},
        {"grad_accum", e.grad_accum}, {"effective_batch", e.effective_batch}, {"hours", e.hours},
        {"cost_usd", e.cost_usd}, {"step_time_s", e.step_s}, {"throughput_queries_per_s", e.throughput_qps},
        {"peak_gib_per_gpu", e.peak_gib_per_gpu}, {"usable_gib_per_gpu", e.usable_gib},
        {"memory_gib", e.memory_gib}, {"bottleneck", e.bottleneck}, {"bottleneck_share", e.bottleneck_share},
        {"why", e.why}, {"warnings", e.warnings}, {"request", req});
  };
  for (const auto& e : r.front) front.push_back(entry_json(e));
  json pruned = json::object();
  for (const char* k : {"does_not_fit", "deadline", "budget", "effective_batch"}) pruned[k] = 0;
  for (const auto& [k, v] : r.pruned) pruned[k] = v;
  json alts = json::array();
  for (const auto& a : r.alternatives) alts.push_back(json{{"what", a.what}, {"why_not", a.why_not}});
  const PlanConstraints& c = r.constraints;
  json cons = {{"deadline_hours", c.deadline_hours > 0 ? json(c.deadline_hours) : json(nullptr)},
               {"budget_usd", c.budget_usd > 0 ? json(c.budget_usd) : json(nullptr)},
               {"max_gpus", c.max_gpus > 0 ? json(c.max_gpus) : json(nullptr)},
               {"providers", c.providers},
               {"spot", c.spot},
               {"gpu_types", c.gpus},
               {"methods", c.methods},
               {"stacks", c.stacks},
               {"effective_batch", c.effective_batch > 0 ? json(c.effective_batch) : json(nullptr)}};
  return json{{"front", front},
              {"best", r.best},
              {"minimize", c.minimize},
              {"constraints", cons},
              {"considered", r.considered},
              {"estimates", r.estimates},
              {"pruned", pruned},
              {"alternatives", alts},
              {"notes", r.notes},
              {"cheapest_single_gpu",
               r.cheapest_single_gpu.micro_batch > 0 ? entry_json(r.cheapest_single_gpu) : json(nullptr)},
              {"search_ms", r.search_ms}};
}

std::string plan_to_csv(const PlanResult& r) {
  std::string out =
      "id,best,gpu,gpus_per_node,nodes,provider,instance_type,spot,usd_per_hour,method,stack,parallel,"
      "checkpointing,optimizer,micro_batch,grad_accum,effective_batch,hours,cost_usd,peak_gib_per_gpu,"
      "bottleneck\n";
  const auto q = csv_field;
  for (const auto& e : r.front)
    out += std::to_string(e.id) + "," + (e.id == r.best ? "yes" : "no") + "," + q(e.shape.gpu_id) + "," +
           std::to_string(e.shape.gpus_per_node) + "," + std::to_string(e.shape.nodes) + "," +
           q(e.shape.provider) + "," + q(e.shape.instance_type) + "," + (e.shape.spot ? "yes" : "no") + "," +
           json(e.shape.usd_per_hour).dump() + "," + e.method + "," + q(e.stack) + "," + e.parallel + "," +
           e.checkpointing + "," + e.optimizer + "," + std::to_string(e.micro_batch) + "," +
           std::to_string(e.grad_accum) + "," + std::to_string(e.effective_batch) + "," +
           json(e.hours).dump() + "," + json(e.cost_usd).dump() + "," + json(e.peak_gib_per_gpu).dump() +
           "," + e.bottleneck + "\n";
  return out;
}

}  // namespace ftcost
