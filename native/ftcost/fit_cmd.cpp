// `ftcost fit`: the paper's Eq. (2) fitted to measured (batch, throughput) points.
#include "command.hpp"
#include "fileio.hpp"
#include "format.hpp"
#include "ftcost/paper.hpp"

#include <iostream>
#include <memory>
#include <string>

namespace ftcost::cli {

namespace {

struct FitState {
  std::string points_file;
  double c3 = paper::kC3Mixtral;
  bool as_json = false;
};

int run_fit(const FitState& s) {
  auto text = read_input_file(s.points_file);
  if (!text.ok()) return fail(make_error(text.error().code, "--points", text.error().to_string()));
  auto pts = paper::parse_points_csv(text.value(), s.points_file);
  if (!pts.ok()) return fail(pts.error());
  auto f = paper::fit_eq2(pts.value(), s.c3);
  if (!f.ok()) return fail(f.error());
  if (s.as_json) {
    print_json(json{{"c2", f->c2},
                    {"c3", f->c3},
                    {"c4", f->c4},
                    {"rmse", f->rmse},
                    {"rmse_exponent_everywhere", f->rmse_exponent_everywhere},
                    {"points", f->n}});
  } else {
    std::cout << "Eq. (2) fit to " << f->n << " points (C3 = " << fixed(f->c3, 2) << " fixed):\n"
              << "  C2 (slope)     = " << fixed(f->c2, 4) << "\n  C4 (intercept) = " << fixed(f->c4, 4)
              << "\n"
              << "  RMSE           = " << fixed(f->rmse, 4) << " queries/s\n";
  }
  return 0;
}

}  // namespace

Command add_fit(CLI::App& app) {
  auto s = std::make_shared<FitState>();
  auto* fit = app.add_subcommand("fit", "Fit the paper's Eq. (2) to measured (batch, throughput) points");
  fit->add_option("--points", s->points_file, "CSV with header batch,throughput[,sparsity]")->required();
  fit->add_option("--c3", s->c3, "MoE attenuation C3 (Mixtral 1.8, BlackMamba 2.5)")
      ->check(number_in(1e-9, 1e12, "between 1e-9 and 1e12"));
  fit->add_flag("--json", s->as_json, "JSON output");
  return {fit, [s] { return run_fit(*s); }};
}

}  // namespace ftcost::cli
