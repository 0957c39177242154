// Dated cloud prices per GPU-hour (gpu-db/prices/<provider>.json).
#pragma once

#include "ftcost/error.hpp"
#include "ftcost/json_util.hpp"

#include <string>
#include <vector>

namespace ftcost {

// A calendar date as days since 1970-01-01 (civil, proleptic Gregorian).
Result<long> parse_date_days(const std::string& text, const std::string& field);  // "YYYY-MM" or "YYYY-MM-DD"
long days_from_civil(int y, int m, int d);

struct PriceOffer {
  std::string provider_id;
  std::string provider;
  std::string gpu_id;
  double on_demand_usd_per_gpu_hour = 0;  // 0 = not offered on demand
  double spot_usd_per_gpu_hour = 0;       // 0 = none
  std::string date;                       // as written ("2024-07"); empty when the source has no date
  long date_days = -1;                    // -1 when undated
  std::string instance_type;
  std::string region;
  int gpu_count = 1;  // GPUs in the instance (the price is per GPU-hour)
  std::string source;
  // The network between instances of this type, where the provider documents one (the offer's optional
  // "network": {kind, gbit_per_gpu, source}); "none" otherwise. Only an offer with a network is rented as
  // several nodes (shapes.hpp).
  std::string network = "none";     // "infiniband" | "roce" | "ethernet" | "none"
  double network_gbit_per_gpu = 0;  // NIC line rate per GPU, Gbit/s
  std::string network_source;
};

struct PriceProvider {
  std::string id;
  std::string name;
  std::vector<PriceOffer> offers;
};

Result<PriceProvider> parse_prices(const json& doc, const std::string& source);

}  // namespace ftcost
