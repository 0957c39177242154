// The paper's analytical model (arXiv 2408.04693 §V), reproduced with the tolerances stated per test.
#include "ftcost/paper.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <map>

using namespace ftcost;
using namespace ftcost::paper;

TEST_CASE("Table IV (arXiv 2408.04693): costs to the cent with 15,000 queries x 10 epochs") {
  // Published: A40 $32.7, A100 $25.4, H100 $17.9 (paper.md §3.3). The table prints one decimal; our
  // unrounded cost must round to it (|error| < $0.05).
  auto rows = table4();
  REQUIRE(rows.size() == 3);
  const double published[] = {32.7, 25.4, 17.9};
  for (std::size_t i = 0; i < 3; ++i) {
    CAPTURE(rows[i].gpu);
    CHECK(std::round(rows[i].cost * 10) / 10 == doctest::Approx(published[i]).epsilon(1e-12));
    CHECK(std::fabs(rows[i].cost - published[i]) < 0.05);
  }
  CHECK(rows[0].hours == doctest::Approx(41.4).epsilon(0.002));
  CHECK(rows[1].hours == doctest::Approx(15.2).epsilon(0.003));
  CHECK(rows[2].hours == doctest::Approx(8.5).epsilon(0.003));
}

TEST_CASE("Eq. (1) projections of paper §V-A (28 at 100 GB, 35 at 120 GB), code coefficients, L=512") {
  auto at = [](double mem) {
    return eq1_max_batch(kEq1MixtralCode, mem, kMixtralModelMemGB, 512, 0.25).value();
  };
  CHECK(at(100).batch == 27);  // raw 27.9, printed "bsz=28" (rounded in the figure)
  CHECK(std::lround(at(100).raw) == 28);
  CHECK(at(100).raw == doctest::Approx(27.9).epsilon(0.002));
  CHECK(std::lround(at(120).raw) == 35);
  CHECK(at(120).raw == doctest::Approx(35.2).epsilon(0.002));
  CHECK(at(40).batch == 6);  // paper.md §3.1: 40 GB -> 6
  CHECK(at(48).batch == 8);  // 48 GB -> 8 (A40, CS)
  CHECK(eq1_max_batch(kEq1MixtralCode, 48, kMixtralModelMemGB, 1024, 0.25).value().batch == 4);  // MATH
  CHECK(eq1_max_batch(kEq1MixtralCode, 48, kMixtralModelMemGB, 512, 1.0).value().batch == 2);
  CHECK(eq1_max_batch(kEq1MixtralCode, 48, kMixtralModelMemGB, 1024, 1.0).value().batch == 1);
}

TEST_CASE("Eq. (1) BlackMamba coefficients reproduce the A40 maxima (paper.md §3.1 consistency checks)") {
  auto bm = [](double seq, double s) {
    return eq1_max_batch(kEq1BlackMamba, 48, kBlackMambaModelMemGB, seq, s).value().batch;
  };
  CHECK(bm(512, 1.0) == 6);
  CHECK(bm(512, 0.25) == 20);
  CHECK(bm(1024, 1.0) == 3);
  CHECK(bm(1024, 0.25) == 10);
}

TEST_CASE("Eq. (1) rejects impossible inputs") {
  CHECK_FALSE(eq1_max_batch(kEq1MixtralCode, 0, 23.35, 512, 0.25).ok());
  CHECK_FALSE(eq1_max_batch(kEq1MixtralCode, 48, 23.35, 0, 0.25).ok());
  CHECK_FALSE(eq1_max_batch(kEq1MixtralCode, 48, 23.35, 512, 1.5).ok());
  CHECK(eq1_max_batch(kEq1MixtralCode, 20, 23.35, 512, 0.25).value().batch == 0);
}

TEST_CASE("Eq. (2) A40 refits: coefficients and RMSE of paper.md §3.2 within 0.01") {
  struct Expect {
    const char* id;
    double c2, c4, rmse, rmse_exp;
  };
  const Expect expect[] = {{"mixtral-cs", 0.281, 0.317, 0.05, 0.055},
                           {"mixtral-math", 0.222, 0.303, 0.02, 0.022},
                           {"blackmamba-cs", 2.345, 3.936, 0.79, 1.06},
                           {"blackmamba-math", 2.499, 2.539, 0.42, 0.56}};
  for (const auto& e : expect) {
    CAPTURE(e.id);
    const Sweep* sw = nullptr;
    for (const auto& s : a40_sweeps())
      if (std::string(s.id) == e.id) sw = &s;
    REQUIRE(sw != nullptr);
    auto f = fit_eq2(sw->points, sw->c3);
    REQUIRE(f.ok());
    CHECK(std::fabs(f->c2 - e.c2) < 0.01);
    CHECK(std::fabs(f->c4 - e.c4) < 0.01);
    CHECK(std::fabs(f->rmse - e.rmse) < 0.01);
    CHECK(std::fabs(f->rmse_exponent_everywhere - e.rmse_exp) < 0.01);
  }
}

TEST_CASE("the A40 sweeps come from the embedded reference file: 54 points, dense before sparse, by batch") {
  // paper.md §2.4: mixtral cs 2 dense + 8 sparse, math 1 + 4; blackmamba cs 6 + 20, math 3 + 10.
  const std::map<std::string, std::pair<int, int>> counts = {{"mixtral-cs", {2, 8}},
                                                             {"mixtral-math", {1, 4}},
                                                             {"blackmamba-cs", {6, 20}},
                                                             {"blackmamba-math", {3, 10}}};
  REQUIRE(a40_sweeps().size() == 4);
  for (const auto& sw : a40_sweeps()) {
    CAPTURE(sw.id);
    int dense = 0;
    int sparse = 0;
    for (std::size_t i = 0; i < sw.points.size(); ++i) {
      const Point& p = sw.points[i];
      (p.sparsity == 1.0 ? dense : sparse) += 1;
      if (i > 0 && sw.points[i - 1].sparsity == p.sparsity) CHECK(p.batch == sw.points[i - 1].batch + 1);
      if (p.sparsity == 1.0) CHECK(sparse == 0);  // dense points first
    }
    CHECK(dense == counts.at(sw.id).first);
    CHECK(sparse == counts.at(sw.id).second);
  }
  // First and last point of the Mixtral commonsense sweep (paper.md §2.4).
  const Sweep& mx = a40_sweeps().front();
  CHECK(mx.points.front().throughput == 0.321);
  CHECK(mx.points.back().throughput == 1.655);
}

TEST_CASE("Eq. (2) fit recovers known coefficients and rejects degenerate input") {
  std::vector<Point> pts;
  for (int b = 1; b <= 8; ++b) pts.push_back(Point{double(b), eq2_throughput(0.3, 1.8, 0.4, 0.25, b), 0.25});
  auto f = fit_eq2(pts, 1.8);
  REQUIRE(f.ok());
  CHECK(f->c2 == doctest::Approx(0.3).epsilon(1e-9));
  CHECK(f->c4 == doctest::Approx(0.4).epsilon(1e-9));
  CHECK(f->rmse < 1e-9);
  CHECK_FALSE(fit_eq2({{4, 1.0, 0.25}, {4, 1.1, 0.25}}, 1.8).ok());
  CHECK_FALSE(fit_eq2({{4, 1.0, 0.25}}, 1.8).ok());
}

TEST_CASE("points CSV: parsed, and bad rows named by line") {
  auto ok = parse_points_csv("batch,throughput,sparsity\n1,0.341,0.25\n2,0.657,0.25\n", "p.csv");
  REQUIRE(ok.ok());
  CHECK(ok->size() == 2);
  auto bad = parse_points_csv("batch,throughput\n1,0.3\n2,abc\n", "p.csv");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().field == "p.csv:3");
  CHECK_FALSE(parse_points_csv("", "p.csv").ok());
  CHECK_FALSE(parse_points_csv("x,y\n1,2\n", "p.csv").ok());
  CHECK_FALSE(parse_points_csv("batch,throughput\n1.5,0.3\n", "p.csv").ok());
  CHECK_FALSE(parse_points_csv("batch,throughput\n1,nan\n", "p.csv").ok());
  CHECK_FALSE(parse_points_csv("batch,throughput\n1,-2\n", "p.csv").ok());
}
