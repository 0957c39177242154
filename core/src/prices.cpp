#include "ftcost/prices.hpp"

namespace ftcost {

long days_from_civil(int y, int m, int d) {
  // Howard Hinnant's algorithm.
  y -= m <= 2 ? 1 : 0;
  const long era = (y >= 0 ? y : y - 399) / 400;
  const long yoe = y - era * 400;
  const long doy = (153L * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

Result<long> parse_date_days(const std::string& text, const std::string& field) {
  const std::string& s = text;
  auto digits = [&](std::size_t pos, std::size_t n, int& out) {
    if (pos + n > s.size()) return false;
    out = 0;
    for (std::size_t i = pos; i < pos + n; ++i) {
      if (s[i] < '0' || s[i] > '9') return false;
      out = out * 10 + (s[i] - '0');
    }
    return true;
  };
  int y = 0;
  int m = 0;
  int d = 1;
  bool ok = (s.size() == 7 || s.size() == 10) && digits(0, 4, y) && s[4] == '-' && digits(5, 2, m);
  if (ok && s.size() == 10) ok = s[7] == '-' && digits(8, 2, d);
  if (!ok || m < 1 || m > 12 || d < 1 || d > 31 || y < 1990 || y > 2200)
    return make_error(Errc::invalid_value, field, "must be a date YYYY-MM or YYYY-MM-DD, got \"" + s + "\"");
  return days_from_civil(y, m, d);
}

Result<PriceProvider> parse_prices(const json& doc, const std::string& source) {
  if (!doc.is_object()) return make_error(Errc::wrong_type, source, "must be a JSON object");
  FTCOST_TRY(schema, get_string(doc, "schema", ""));
  if (schema != "ftcost.prices/1")
    return make_error(Errc::schema_mismatch, "schema",
                      "expected \"ftcost.prices/1\", got \"" + schema + "\"");
  PriceProvider p;
  FTCOST_TRY(id, get_string(doc, "id", ""));
  FTCOST_TRY(name, get_string(doc, "provider", ""));
  FTCOST_TRY(currency, opt_string(doc, "currency", "", "USD"));
  if (currency != "USD")
    return make_error(Errc::invalid_value, "currency", "only USD prices are supported, got " + currency);
  p.id = id;
  p.name = name;
  if (!has(doc, "offers") || !doc.at("offers").is_array())
    return make_error(Errc::missing_field, "offers", "required array of price offers");
  const json& offers = doc.at("offers");
  for (std::size_t i = 0; i < offers.size(); ++i) {
    const std::string path = "offers[" + std::to_string(i) + "]";
    const json& o = offers[i];
    if (!o.is_object()) return make_error(Errc::wrong_type, path, "must be an object");
    PriceOffer off;
    off.provider_id = id;
    off.provider = name;
    FTCOST_TRY(gpu, get_string(o, "gpu_id", path));
    FTCOST_TRY(od, opt_number(o, "on_demand_usd_per_gpu_hour", path, 0));
    FTCOST_TRY(spot, opt_number(o, "spot_usd_per_gpu_hour", path, 0));
    if (od < 0 || od > 1000)
      return make_error(Errc::out_of_range, path + ".on_demand_usd_per_gpu_hour",
                        "must be between 0 and 1000 USD");
    if (spot < 0 || spot > 1000)
      return make_error(Errc::out_of_range, path + ".spot_usd_per_gpu_hour",
                        "must be between 0 and 1000 USD");
    if (od == 0 && spot == 0)
      return make_error(Errc::missing_field, path, "needs an on-demand or a spot price");
    FTCOST_TRY(date, opt_string(o, "date", path, ""));
    FTCOST_TRY(src, get_string(o, "source", path));
    FTCOST_TRY(it, opt_string(o, "instance_type", path, ""));
    FTCOST_TRY(region, opt_string(o, "region", path, ""));
    if (o.contains("gpu_count") && !o["gpu_count"].is_null()) {
      if (!o["gpu_count"].is_number_integer() || o["gpu_count"].get<long long>() < 1 ||
          o["gpu_count"].get<long long>() > 4096)
        return make_error(Errc::out_of_range, path + ".gpu_count", "must be a whole number from 1 to 4096");
      off.gpu_count = o["gpu_count"].get<int>();
    }
    if (o.contains("network") && !o["network"].is_null()) {
      const std::string np = path + ".network";
      if (!o["network"].is_object())
        return make_error(Errc::wrong_type, np, "must be an object {kind, gbit_per_gpu, source}");
      const json& n = o["network"];
      FTCOST_TRY(kind, get_string(n, "kind", np));
      if (kind != "infiniband" && kind != "roce" && kind != "ethernet")
        return make_error(Errc::invalid_value, np + ".kind",
                          "must be infiniband, roce or ethernet, got \"" + kind + "\"");
      FTCOST_TRY(gb, get_number_in(n, "gbit_per_gpu", np, 0.1, 10000));
      FTCOST_TRY(nsrc, get_string(n, "source", np));
      off.network = kind;
      off.network_gbit_per_gpu = gb;
      off.network_source = nsrc;
    }
    off.gpu_id = gpu;
    off.on_demand_usd_per_gpu_hour = od;
    off.spot_usd_per_gpu_hour = spot;
    off.date = date;
    if (!date.empty()) {
      FTCOST_TRY(days, parse_date_days(date, path + ".date"));
      off.date_days = days;
    }
    off.source = src;
    off.instance_type = it;
    off.region = region;
    p.offers.push_back(off);
  }
  return p;
}

}  // namespace ftcost
