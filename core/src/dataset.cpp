#include "ftcost/dataset.hpp"

#include <algorithm>
#include <cmath>

namespace ftcost {

Result<LengthDistribution> LengthDistribution::from_quantiles(std::vector<std::pair<double, double>> pts,
                                                              const std::string& path) {
  if (pts.size() < 2)
    return make_error(Errc::invalid_value, path, "needs at least two quantile points, [0, min] and [1, max]");
  if (pts.front().first != 0.0 || pts.back().first != 1.0)
    return make_error(Errc::invalid_value, path, "must start at quantile 0 and end at quantile 1");
  for (std::size_t i = 0; i < pts.size(); ++i) {
    if (!std::isfinite(pts[i].first) || !std::isfinite(pts[i].second) || pts[i].second < 1)
      return make_error(Errc::invalid_value, path + "[" + std::to_string(i) + "]",
                        "lengths must be finite and >= 1 token");
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
  // E[min(max of n draws, cap)] = integral over u of min(Q(u), cap) d(u^n). Q is linear on each piece, so
  // each piece (split where Q crosses the cap) integrates in closed form:
  //   int_a^b (alpha + beta u) n u^(n-1) du = alpha (b^n - a^n) + beta n/(n+1) (b^(n+1) - a^(n+1)).
  auto piece = [n](double a, double b, double alpha, double beta) {
    const double an = std::pow(a, n), bn = std::pow(b, n);
    return alpha * (bn - an) + beta * n / (n + 1.0) * (bn * b - an * a);
  };
  double total = 0;
  for (std::size_t i = 1; i < points_.size(); ++i) {
    const double a = points_[i - 1].first, b = points_[i].first;
    const double qa = points_[i - 1].second, qb = points_[i].second;
    if (b <= a) continue;
    const double beta = (qb - qa) / (b - a), alpha = qa - beta * a;
    if (qb <= cap) {
      total += piece(a, b, alpha, beta);
    } else if (qa >= cap) {
      total += cap * (std::pow(b, n) - std::pow(a, n));
    } else {
      const double c = a + (cap - qa) / beta;  // Q(c) = cap; beta > 0 here
      total += piece(a, c, alpha, beta) + cap * (std::pow(b, n) - std::pow(c, n));
    }
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
    return make_error(Errc::schema_mismatch, "schema",
                      "expected \"ftcost.dataset/1\", got \"" + schema + "\"");
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
  if (tt < 0 || tt > 100000)
    return make_error(Errc::out_of_range, "template_tokens", "must be between 0 and 100000");
  d.template_tokens = tt;
  if (!has(doc, "quantiles") || !doc.at("quantiles").is_array())
    return make_error(Errc::missing_field, "quantiles", "required array of [quantile, tokens] pairs");
  std::vector<std::pair<double, double>> pts;
  const json& q = doc.at("quantiles");
  for (std::size_t i = 0; i < q.size(); ++i) {
    const json& e = q[i];
    if (!e.is_array() || e.size() != 2 || !e[0].is_number() || !e[1].is_number())
      return make_error(Errc::wrong_type, "quantiles[" + std::to_string(i) + "]",
                        "must be a [quantile, tokens] pair");
    pts.emplace_back(e[0].get<double>(), e[1].get<double>());
  }
  FTCOST_TRY(dist, LengthDistribution::from_quantiles(std::move(pts), "quantiles"));
  d.lengths = dist;
  d.median = dist.quantile(0.5);
  return d;
}

}  // namespace ftcost
