// gpu-db checker, prices (prices/<provider>.json): currency, URL, and per offer the price per GPU-hour, spot
// below on-demand, GPU count, date (or a note why there is none), source, network, GPU id, duplicates.
#include "ftcost/prices.hpp"

#include "checks.hpp"

#include <map>
#include <utility>

namespace ftcost::dbcheck {

namespace {

// On-demand and spot price per GPU-hour, and the GPU count of one offer.
void check_offer_prices(const json& o, const std::string& p, Sink& sink) {
  const double od = num_field(o, "on_demand_usd_per_gpu_hour");
  const double spot = num_field(o, "spot_usd_per_gpu_hour");
  const double count = num_field(o, "gpu_count");
  for (const auto& [key, v] :
       {std::make_pair("on_demand_usd_per_gpu_hour", od), std::make_pair("spot_usd_per_gpu_hour", spot)}) {
    // > 0 and the hard limit: the field list (check_keys); here the plausible band
    if (!have(v) || sink.has_field(p + "." + key)) continue;
    if (v < 0.01 || v > 50) {
      std::string m = fmt_num(v) + " USD per GPU-hour is implausible (expected 0.01-50)";
      if (have(count) && count > 1 && v / count <= 50)
        m += "; is it the price of the whole " + fmt_num(count) + "-GPU instance? divide by gpu_count";
      sink.add(p + "." + key, Errc::out_of_range, m);
    }
  }
  if (have(od) && have(spot) && od > 0 && spot > od * 1.05)
    sink.add(p + ".spot_usd_per_gpu_hour", Errc::out_of_range,
             fmt_num(spot) + " is above the on-demand price " + fmt_num(od) + ": spot prices are discounts");
}

void check_offer_date(const json& o, const std::string& p, const DbCheckOptions& opt, Sink& sink) {
  const json* date = find_field(o, "date");
  if (date && date->is_string()) {
    auto days = parse_date_days(date->get<std::string>(), p + ".date");
    if (!days.ok()) {
      sink.add(p + ".date", Errc::invalid_value, days.error().message);
    } else {
      if (days.value() < days_from_civil(2015, 1, 1))
        sink.add(p + ".date", Errc::out_of_range,
                 in_quotes(date->get<std::string>()) + " is before 2015: not a current GPU price");
      if (opt.today_days >= 0 && days.value() > opt.today_days)
        sink.add(p + ".date", Errc::out_of_range, in_quotes(date->get<std::string>()) + " is in the future");
    }
  } else if (o.contains("date") && !date) {
    const std::string note = str_field(o, "date_note");
    if (note.find_first_not_of(" \t\r\n") == std::string::npos && !sink.has_field(p + ".date_note"))
      sink.add(p + ".date_note", Errc::missing_field,
               "an undated price needs a date_note saying why there is no date");
  }
}

void check_offer_network(const json& o, const std::string& p, Sink& sink) {
  const json* net = member(o, "network");
  if (net && net->is_object() &&
      check_keys(*net, p + ".network", "prices.offers[].network", "ftcost.prices/1", sink)) {
    // kind and gbit_per_gpu: the field list (check_keys)
    const json* nsrc = find_field(*net, "source");
    if (nsrc && nsrc->is_string()) {
      const std::string sp = source_problem(nsrc->get<std::string>());
      if (!sp.empty()) sink.add(p + ".network.source", Errc::invalid_value, sp);
    }
  }
}

}  // namespace

void check_prices_doc(const json& doc, const std::string& file, const DbCheckOptions& opt, Sink& sink) {
  if (!check_keys(doc, "", "prices", "ftcost.prices/1", sink)) return;
  check_id(doc, file, "-", sink);
  check_nonempty_text(doc, "provider", "", sink);
  const std::string url = str_field(doc, "url");
  if (!url.empty() && url.rfind("https://", 0) != 0 && url.rfind("http://", 0) != 0)
    sink.add("url", Errc::invalid_value, in_quotes(url) + " must be an http(s) URL or null");
  const json* offers = find_field(doc, "offers");
  if (!offers || !offers->is_array()) return;
  if (offers->empty()) sink.add("offers", Errc::missing_field, "a price file needs at least one offer");
  std::map<std::string, std::size_t> seen;
  for (std::size_t i = 0; i < offers->size(); ++i) {
    const std::string p = "offers[" + std::to_string(i) + "]";
    const json& o = (*offers)[i];
    if (!check_keys(o, p, "prices.offers[]", "ftcost.prices/1", sink)) continue;
    check_offer_prices(o, p, sink);
    check_offer_date(o, p, opt, sink);
    const json* src = find_field(o, "source");
    if (src && src->is_string()) {
      const std::string sp = source_problem(src->get<std::string>());
      if (!sp.empty()) sink.add(p + ".source", Errc::invalid_value, sp);
    }
    check_offer_network(o, p, sink);
    const double count = num_field(o, "gpu_count");
    const std::string gid = str_field(o, "gpu_id");
    if (find_field(o, "gpu_id") && !id_like(gid, ".-"))
      sink.add(p + ".gpu_id", Errc::invalid_value, in_quotes(gid) + " is not a GPU id");
    const std::string key = gid + "|" + str_field(o, "instance_type") + "|" + str_field(o, "region") + "|" +
                            fmt_num(count) + "|" + str_field(o, "date");
    auto [it, fresh] = seen.emplace(key, i);
    if (!fresh)
      sink.add(p, Errc::invalid_value,
               "duplicate offer: same GPU, instance type, region, GPU count and date as offers[" +
                   std::to_string(it->second) + "]");
  }
}

}  // namespace ftcost::dbcheck
