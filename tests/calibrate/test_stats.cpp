// Statistics, the stopping rule, rate conversion.
#include "ftcost/calibrate/stats.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>

using namespace ftcost::calib;

TEST_CASE("percentiles interpolate linearly like numpy") {
  std::vector<double> v = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  CHECK(percentile_sorted(v, 0.5) == doctest::Approx(5.5));
  CHECK(percentile_sorted(v, 0.1) == doctest::Approx(1.9));
  CHECK(percentile_sorted(v, 0.9) == doctest::Approx(9.1));
  CHECK(percentile_sorted(v, 0.0) == 1);
  CHECK(percentile_sorted(v, 1.0) == 10);
  CHECK(percentile_sorted({42}, 0.9) == 42);
}

TEST_CASE("summarize sorts and reports") {
  Summary s = summarize({5, 1, 3});
  CHECK(s.n == 3);
  CHECK(s.median == 3);
  CHECK(s.min == 1);
  CHECK(s.max == 5);
  CHECK(s.p10 == doctest::Approx(1.4));
  CHECK(s.p90 == doctest::Approx(4.6));
  CHECK(summarize({}).n == 0);
}

TEST_CASE("relative standard error of the median") {
  Summary s = summarize(std::vector<double>(100, 2.0));
  CHECK(relative_stderr_of_median(s) == 0);
  Summary one = summarize({1.0});
  CHECK(std::isinf(relative_stderr_of_median(one)));
  // spread 10% (p10..p90) over 16 samples: 1.2533 * (0.1/2.5631) / 4 ~ 1.22%
  std::vector<double> v;
  for (int i = 0; i < 16; ++i) v.push_back(1.0 + 0.1 * (i / 15.0) - 0.05);
  Summary w = summarize(v);
  double expect = 1.2533 * ((w.p90 - w.p10) / 2.5631) / 4.0 / w.median;
  CHECK(relative_stderr_of_median(w) == doctest::Approx(expect));
}

TEST_CASE("stopping rule: min samples, precision, caps") {
  TimingPolicy p{0, 5, 50, 1.0, 0.01};
  std::vector<double> quiet(4, 1e-3);
  CHECK_FALSE(should_stop(summarize(quiet), 0.01, p));  // below min_iters
  quiet.push_back(1e-3);
  CHECK(should_stop(summarize(quiet), 0.01, p));  // 5 identical samples: precise
  std::vector<double> noisy;
  for (int i = 0; i < 10; ++i) noisy.push_back(i % 2 ? 1e-3 : 2e-3);
  CHECK_FALSE(should_stop(summarize(noisy), 0.01, p));  // +-50%: keep going
  CHECK(should_stop(summarize(noisy), 1.5, p));         // time cap
  std::vector<double> many(50, 0);
  for (int i = 0; i < 50; ++i) many[static_cast<std::size_t>(i)] = i % 2 ? 1.0 : 3.0;
  CHECK(should_stop(summarize(many), 0.0, p));      // iteration cap
  CHECK_FALSE(should_stop(summarize({}), 100, p));  // never stop before one sample
  CHECK(should_stop(summarize({0.5}), 2.0, p));     // one long sample past the cap
}

TEST_CASE("Sampler follows the policy") {
  Sampler s(TimingPolicy{0, 3, 5, 10, 0.0});
  s.add(1);
  s.add(2);
  CHECK_FALSE(s.done(0));
  s.add(3);
  s.add(4);
  CHECK_FALSE(s.done(0));
  s.add(5);
  CHECK(s.done(0));
  CHECK(s.count() == 5);
  CHECK(s.summary().median == 3);
}

TEST_CASE("rate statistics invert the time percentiles") {
  Summary t;
  t.median = 2e-3;
  t.p10 = 1e-3;
  t.p90 = 4e-3;
  t.n = 10;
  ftcost::CalStat r = rate_stat(t, 8e9, 1e9);  // 8 GB of work
  CHECK(r.median == doctest::Approx(4000));
  CHECK(r.p10 == doctest::Approx(2000));  // from the slow sample
  CHECK(r.p90 == doctest::Approx(8000));
  CHECK(r.p10 <= r.median);
  CHECK(r.median <= r.p90);
  ftcost::CalStat us = micros_stat(t);
  CHECK(us.median == doctest::Approx(2000));
  CHECK(us.p90 == doctest::Approx(4000));
}
