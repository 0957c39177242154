// Instance shapes: what a user can rent under each price offer (gpu-db/prices), as GPUs per node x nodes,
// with the whole shape's price per hour and the links the estimate uses. `ftcost compare` ranks them and the
// scaling series (parallel.hpp's estimate_parallel over GPU counts) is priced with them.
//
// Rules (docs/sources/parallel.md, "Instance shapes"):
// - An offer is for a whole instance of `gpu_count` GPUs: its shape is gpu_count GPUs on one node, at
//   gpu_count x the per-GPU price. A user cannot rent part of an 8-GPU instance, and ftcost does not invent
//   smaller or larger sizes: a single-GPU offer (marketplaces included) gives only the 1-GPU shape, unless
//   the database lists the provider's 2/4/8-GPU instances as offers of their own.
// - Inside the instance the GPUs are joined as the GPU file says (NVLink/NVSwitch where its interconnect
//   fields give it for that many GPUs, else PCIe; parallel.hpp's intra_node_link).
// - Several instances (2, 4, 8... nodes) only where the offer names the network between instances (the
//   offer's optional "network": {kind, gbit_per_gpu, source}); an offer without one is never multi-node.
#pragma once

#include "ftcost/database.hpp"
#include "ftcost/json_util.hpp"
#include "ftcost/prices.hpp"

#include <string>
#include <vector>

namespace ftcost {

struct InstanceShape {
  PriceOffer offer;       // the offer the shape is rented under (per-GPU prices, date, source, network)
  int gpus_per_node = 1;  // = offer.gpu_count
  int nodes = 1;          // instances joined by offer.network
  std::string intra;      // link kind inside a node as parallel.hpp names it (nvswitch, pcie_p2p, ...);
                          // "none" for one GPU; empty when the GPU is not in the database
  int gpus() const { return gpus_per_node * nodes; }
  // The whole shape's price per hour (on-demand or spot); 0 when the offer has no such price.
  double usd_per_hour(bool spot) const;
  // The request keys that estimate the job on this shape: {"gpus", "nodes"} plus {"network",
  // "network-gbit-per-gpu"} for several nodes. Nothing for a 1-GPU shape.
  json request_keys() const;
};

// Which shapes to list. Counts of 0 mean "any".
struct ShapeFilter {
  int gpus_per_node = 0;  // only shapes with this many GPUs per node (compare --gpus)
  int nodes = 0;          // only this many nodes (compare --nodes)
  int max_gpus = 0;       // at most this many GPUs in all (compare --max-gpus); 0 = kDefaultMaxShapeGpus
};
constexpr int kDefaultMaxShapeGpus =
    64;  // multi-node shapes are listed up to this many GPUs (1,2,4,... nodes)

// The shapes of one offer: 1 node, and 2, 4, 8... nodes when the offer has a network, within the filter.
std::vector<InstanceShape> offer_shapes(const PriceOffer& offer, const Database& db,
                                        const ShapeFilter& f = {});
// The shapes of every offer of every provider for `gpu_id` (all GPUs when empty), in database order.
std::vector<InstanceShape> instance_shapes(const Database& db, const std::string& gpu_id = "",
                                           const ShapeFilter& f = {});

// {"provider", "instance_type", "region", "gpu", "gpus_per_node", "nodes", "gpus", "intra_node", "network"
//  {kind, gbit_per_gpu, source} or null, "usd_per_hour" {on_demand, spot} (null where absent),
//  "usd_per_gpu_hour" {...}, "date", "source"}
json shape_to_json(const InstanceShape& s);

}  // namespace ftcost
