#include "ftcost/dataset.hpp"

#include <algorithm>
#include <cmath>

namespace ftcost {

Result<LengthDistribution> LengthDistribution::from_quantiles(std::vector<std::pair<double, double>> pts,
                                                              const std::string& path) {
  if (pts.size() < 2) return make_error(Errc::invalid_value, path, "needs at least two quantile points, [0, min] and [1, max]");
  if (pts.front().first != 0.0 || pts.back().first != 1.0)
    return make_error(Errc::invalid_value, path, "must start at quantile 0 and end at quantile 1");
  for (std::size_t i = 0; i < pts.size(); ++i) {
    if (!std::isfinite(pts[i].first) || !std::isfinite(pts[i].second) || pts[i].second < 1)
      return make_error(Errc::invalid_value, path + "[" + std::to_string(i) + "]", "lengths must be finite and >= 1 token");
    if (i > 0 && (pts[i].first <= pts[i - 1].first || pts[i].second < pts[i - 1].second))
      return make_error(Errc::invalid_value, path + "[" + std::to_string(i) + "]",
                        "quantiles must increase and lengths must not decrease");
  }
  LengthDistribution d;
  d.points_ = std::move(pts);
  return d;
}

LengthDistribution LengthDistribution::fixed(double length) {
  LengthDistribution d;
  d.points_ = {{0.0, length}, {1.0, length}};
  return d;
}

double LengthDistribution::quantile(double u) const {
  if (u <= 0) return points_.front().second;
  if (u >= 1) return points_.back().second;
  auto it = std::upper_bound(points_.begin(), points_.end(), u,
                             [](double v, const std::pair<double, double>& p) { return v < p.first; });
  const auto& hi = *it;
  const auto& lo = *(it - 1);
  double t = (u - lo.first) / (hi.first - lo.first);
  return lo.second + t * (hi.second - lo.second);
}

double LengthDistribution::truncated_mean(double cap) const { return expected_max(1.0, cap); }

double LengthDistribution::mean() const { return expected_max(1.0, points_.back().second); }

double LengthDistribution::expected_max(double n, double cap) const {
  // Integrate min(Q(u), cap) against d(u^n) exactly per linear piece with Simpson's rule on a fine grid
  // (the integrand is smooth within a piece).
  double total = 0;
  for (std::size_t i = 1; i < points_.size(); ++i) {
    const double a = points_[i - 1].first, b = points_[i].first;
    const int steps = 32;
    const double h = (b - a) / steps;
    auto f = [&](double u) { return std::min(quantile(u), cap) * n * std::pow(u, n - 1.0); };
    double s = f(a) + f(b);
    for (int k = 1; k < steps; ++k) s += f(a + k * h) * (k % 2 == 1 ? 4.0 : 2.0);
    total += s * h / 3.0;
  }
  return total;
}

json Dataset::to_json() const {
  return json{{"id", id},
              {"name", display_name},
              {"queries", queries},
              {"median_tokens", median},
              {"mean_tokens", lengths.mean()},
              {"max_tokens", lengths.max()}};
}

Result<Dataset> parse_dataset(const json& doc, const std::string& source) {
  if (!doc.is_object()) return make_error(Errc::wrong_type, source, "must be a JSON object");
  FTCOST_TRY(schema, get_string(doc, "schema", ""));
  if (schema != "ftcost.dataset/1")
    return make_error(Errc::schema_mismatch, "schema", "expected \"ftcost.dataset/1\", got \"" + schema + "\"");
  Dataset d;
  FTCOST_TRY(id, get_string(doc, "id", ""));
  FTCOST_TRY(name, opt_string(doc, "display_name", "", id));
  FTCOST_TRY(queries, get_count(doc, "queries", "", 1, std::int64_t{1} << 40));
  FTCOST_TRY(qp, opt_count(doc, "queries_published", "", queries, 1, std::int64_t{1} << 40));
  FTCOST_TRY(src, get_string(doc, "source", ""));
  d.id = id;
  d.display_name = name;
  d.queries = static_cast<double>(queries);
  d.queries_published = static_cast<double>(qp);
  d.source = src;
  FTCOST_TRY(tt, opt_number(doc, "template_tokens", "", 0));
  if (tt < 0 || tt > 100000) return make_error(Errc::out_of_range, "template_tokens", "must be between 0 and 100000");
  d.template_tokens = tt;
  if (!has(doc, "quantiles") || !doc.at("quantiles").is_array())
    return make_error(Errc::missing_field, "quantiles", "required array of [quantile, tokens] pairs");
  std::vector<std::pair<double, double>> pts;
  const json& q = doc.at("quantiles");
  for (std::size_t i = 0; i < q.size(); ++i) {
    const json& e = q[i];
    if (!e.is_array() || e.size() != 2 || !e[0].is_number() || !e[1].is_number())
      return make_error(Errc::wrong_type, "quantiles[" + std::to_string(i) + "]", "must be a [quantile, tokens] pair");
    pts.emplace_back(e[0].get<double>(), e[1].get<double>());
  }
  FTCOST_TRY(dist, LengthDistribution::from_quantiles(std::move(pts), "quantiles"));
  d.lengths = dist;
  d.median = dist.quantile(0.5);
  return d;
}

}  // namespace ftcost
