// The step model's names (stages, layer types, kernel classes: what its breakdowns print) and the MoE
// routing distributions (expert_shares); ftcost/throughput.hpp declares them.
#include "ftcost/enum_names.hpp"
#include "ftcost/throughput.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace ftcost {

constexpr EnumName<Stage> kStageNames[] = {{Stage::forward, "forward"},
                                           {Stage::recompute, "recompute"},
                                           {Stage::backward, "backward"},
                                           {Stage::optimizer, "optimizer"}};
const char* stage_name(Stage s) { return enum_name(kStageNames, s, "forward"); }

constexpr EnumName<LayerType> kLayerTypeNames[] = {
    {LayerType::attention, "attention"}, {LayerType::moe, "moe"},
    {LayerType::mamba, "mamba"},         {LayerType::mlp, "mlp"},
    {LayerType::norm, "norm"},           {LayerType::other, "other"}};
const char* layer_type_name(LayerType l) { return enum_name(kLayerTypeNames, l, "other"); }

constexpr EnumName<KernelClass> kKernelClassNames[] = {{KernelClass::gemm, "gemm"},
                                                       {KernelClass::expert_gemm, "expert_gemm"},
                                                       {KernelClass::attention, "attention"},
                                                       {KernelClass::dequant, "dequant"},
                                                       {KernelClass::elementwise, "elementwise"},
                                                       {KernelClass::scan, "selective_scan"},
                                                       {KernelClass::routing, "routing"},
                                                       {KernelClass::loss, "loss"},
                                                       {KernelClass::optimizer, "optimizer"}};
const char* kernel_class_name(KernelClass k) { return enum_name(kKernelClassNames, k, "elementwise"); }

Result<std::vector<double>> expert_shares(const std::string& routing, std::int64_t experts) {
  std::vector<double> s;
  if (experts <= 0) return s;
  const auto E = static_cast<std::size_t>(experts);
  auto normalise = [&](std::vector<double> v) {
    double t = 0;
    for (double x : v) t += x;
    for (double& x : v) x /= t;
    return v;
  };
  if (routing.empty() || routing == "uniform") return std::vector<double>(E, 1.0 / static_cast<double>(E));
  // paper.md §2.6 (Fig. 11): average tokens per query routed to each expert, before fine-tuning.
  if (routing == "paper-mixtral" || routing == "paper-blackmamba") {
    if (experts != 8)
      return make_error(Errc::invalid_value, "--routing",
                        routing + " is a measured 8-expert distribution; this model has " +
                            std::to_string(experts) + " experts");
    if (routing == "paper-mixtral") return normalise({46.2, 50.5, 52.7, 59.2, 38.6, 62.9, 50.2, 51.2});
    return normalise({44.7, 61.5, 59.7, 56.2, 27.4, 35.4, 42.0, 39.0});
  }
  if (routing.rfind("skew:", 0) == 0) {
    const std::string v = routing.substr(5);
    char* end = nullptr;
    double a = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0' || !std::isfinite(a) || a < 0 || a > 4)
      return make_error(Errc::invalid_value, "--routing",
                        "skew:S needs 0 <= S <= 4 (Zipf exponent), got \"" + v + "\"");
    std::vector<double> z(E);
    for (std::size_t i = 0; i < E; ++i) z[i] = std::pow(static_cast<double>(i + 1), -a);
    return normalise(z);
  }
  return make_error(Errc::invalid_value, "--routing",
                    "must be uniform, paper-mixtral, paper-blackmamba or skew:S, got \"" + routing + "\"");
}

}  // namespace ftcost
