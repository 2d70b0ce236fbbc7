#include "openbpu/debugger/metrics.h"

#include <array>
#include <utility>

#include "openbpu/common/error.h"

namespace openbpu::debugger {

namespace {

constexpr std::array<std::pair<Metric, const char*>, 5> kNames = {{
    {Metric::kCosine, "cosine-similarity"},
    {Metric::kMse, "mse"},
    {Metric::kMre, "mre"},
    {Metric::kSqnr, "sqnr"},
    {Metric::kChebyshev, "chebyshev"},
}};

}  // namespace

Metric parse_metric(std::string_view name) {
  for (const auto& [metric, text] : kNames) {
    if (name == text) return metric;
  }
  raise("metric '", name, "': expected one of cosine-similarity, mse, mre, sqnr, chebyshev");
}

std::string metric_name(Metric metric) {
  for (const auto& [m, text] : kNames) {
    if (m == metric) return text;
  }
  return "?";
}

std::string metric_unit(Metric metric) {
  return metric == Metric::kSqnr ? "dB" : "";
}

double metric_value(const calibration::OutputMetrics& v, Metric metric) {
  switch (metric) {
    case Metric::kCosine: return v.cosine;
    case Metric::kMse: return v.mse;
    case Metric::kMre: return v.mre;
    case Metric::kSqnr: return v.sqnr;
    case Metric::kChebyshev: return v.chebyshev;
  }
  return 0;
}

bool higher_is_better(Metric metric) {
  return metric == Metric::kCosine || metric == Metric::kSqnr;
}

bool worse(Metric metric, double a, double b) {
  return higher_is_better(metric) ? a < b : a > b;
}

}  // namespace openbpu::debugger
