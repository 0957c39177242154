#include "ftcost/shapes.hpp"

#include "ftcost/parallel.hpp"

namespace ftcost {

double InstanceShape::usd_per_hour(bool spot) const {
  const double per_gpu = spot ? offer.spot_usd_per_gpu_hour : offer.on_demand_usd_per_gpu_hour;
  return per_gpu > 0 ? per_gpu * gpus() : 0;
}

json InstanceShape::request_keys() const {
  json j = json::object();
  if (gpus() <= 1) return j;
  j["gpus"] = gpus_per_node;
  j["nodes"] = nodes;
  if (nodes > 1) {
    j["network"] = offer.network;
    j["network-gbit-per-gpu"] = offer.network_gbit_per_gpu;
  }
  return j;
}

std::vector<InstanceShape> offer_shapes(const PriceOffer& offer, const Database& db, const ShapeFilter& f) {
  std::vector<InstanceShape> out;
  const int max_gpus = f.max_gpus > 0 ? f.max_gpus : kDefaultMaxShapeGpus;
  const int per_node = offer.gpu_count;
  if (f.gpus_per_node > 0 && per_node != f.gpus_per_node) return out;
  std::string intra = "none";
  if (per_node > 1) {
    const GpuSpec* g = db.gpu(offer.gpu_id);
    intra = g ? link_kind_name(intra_node_link(*g, per_node, -1).kind) : "";
  }
  const bool networked = offer.network != "none" && offer.network_gbit_per_gpu > 0;
  for (int nodes = 1; nodes <= 4096; nodes *= 2) {
    if (nodes > 1 && !networked) break;
    if (static_cast<long long>(nodes) * per_node > max_gpus) break;
    if (f.nodes > 0 && nodes != f.nodes) continue;
    InstanceShape s;
    s.offer = offer;
    s.gpus_per_node = per_node;
    s.nodes = nodes;
    s.intra = intra;
    out.push_back(s);
  }
  return out;
}

std::vector<InstanceShape> instance_shapes(const Database& db, const std::string& gpu_id,
                                           const ShapeFilter& f) {
  std::vector<InstanceShape> out;
  for (const auto& p : db.providers())
    for (const auto& o : p.offers) {
      if (!gpu_id.empty() && o.gpu_id != gpu_id) continue;
      for (auto& s : offer_shapes(o, db, f)) out.push_back(std::move(s));
    }
  return out;
}

json shape_to_json(const InstanceShape& s) {
  auto price = [](double v) { return v > 0 ? json(v) : json(nullptr); };
  json net = nullptr;
  if (s.offer.network != "none")
    net = json{{"kind", s.offer.network},
               {"gbit_per_gpu", s.offer.network_gbit_per_gpu},
               {"source", s.offer.network_source}};
  return json_object(
      {"provider", s.offer.provider}, {"provider_id", s.offer.provider_id},
      {"instance_type", s.offer.instance_type}, {"region", s.offer.region}, {"gpu", s.offer.gpu_id},
      {"gpus_per_node", s.gpus_per_node}, {"nodes", s.nodes}, {"gpus", s.gpus()}, {"intra_node", s.intra},
      {"network", net},
      {"usd_per_gpu_hour",
       {{"on_demand", price(s.offer.on_demand_usd_per_gpu_hour)},
        {"spot", price(s.offer.spot_usd_per_gpu_hour)}}},
      {"usd_per_hour", {{"on_demand", price(s.usd_per_hour(false))}, {"spot", price(s.usd_per_hour(true))}}},
      {"date", s.offer.date.empty() ? json(nullptr) : json(s.offer.date)}, {"source", s.offer.source});
}

}  // namespace ftcost
