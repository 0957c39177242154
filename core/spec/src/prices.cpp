#include "ftcost/prices.hpp"

#include "ftcost/fields.hpp"

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

namespace {

// The network between instances of an offer's type ("network": {kind, gbit_per_gpu, source}).
Status parse_network(const json& n, const std::string& path, PriceOffer& off) {
  const FieldReader r(n, *field_list("prices.offers[].network"), path);
  FTCOST_CHECK(r.check_object());
  FTCOST_CHECK(r.texts({{"kind", &off.network}}));
  FTCOST_CHECK(r.numbers({{"gbit_per_gpu", &off.network_gbit_per_gpu}}));
  return r.texts({{"source", &off.network_source}});
}

// One offer, read through its field list (fields.cpp); the rules between fields here.
Result<PriceOffer> parse_offer(const json& o, const std::string& path) {
  const FieldReader r(o, *field_list("prices.offers[]"), path);
  FTCOST_CHECK(r.check_object());
  PriceOffer off;
  FTCOST_CHECK(r.texts({{"gpu_id", &off.gpu_id}}));
  FTCOST_CHECK(r.numbers({{"on_demand_usd_per_gpu_hour", &off.on_demand_usd_per_gpu_hour},
                          {"spot_usd_per_gpu_hour", &off.spot_usd_per_gpu_hour}}));
  if (off.on_demand_usd_per_gpu_hour == 0 && off.spot_usd_per_gpu_hour == 0)
    return make_error(Errc::missing_field, path, "needs an on-demand or a spot price");
  FTCOST_CHECK(r.texts({{"date", &off.date},
                        {"source", &off.source},
                        {"instance_type", &off.instance_type},
                        {"region", &off.region}}));
  FTCOST_TRY(count, r.integer("gpu_count", 1));
  off.gpu_count = static_cast<int>(count);
  FTCOST_TRY(net, r.member("network"));
  if (net) {
    FTCOST_CHECK(parse_network(*net, r.path_of("network"), off));
  }
  if (!off.date.empty()) {
    FTCOST_TRY(days, parse_date_days(off.date, r.path_of("date")));
    off.date_days = days;
  }
  return off;
}

}  // namespace

// A price file read through its field list (fields.cpp).
Result<PriceProvider> parse_prices(const json& doc, const std::string& source) {
  FTCOST_TRY(r, FieldReader::file(doc, "prices", source));
  PriceProvider p;
  FTCOST_CHECK(r.texts({{"id", &p.id}, {"provider", &p.name}}));
  FTCOST_CHECK(r.choice("currency", "USD"));  // the list allows USD only
  FTCOST_TRY(offers, r.member("offers"));
  for (std::size_t i = 0; i < offers->size(); ++i) {
    FTCOST_TRY(off, parse_offer((*offers)[i], "offers[" + std::to_string(i) + "]"));
    off.provider_id = p.id;
    off.provider = p.name;
    p.offers.push_back(off);
  }
  return p;
}

}  // namespace ftcost
