// hmct-debugger's metrics by name (calibration::OutputMetrics holds the values).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "openbpu/calibration/fake_quant_evaluation.h"

namespace openbpu::debugger {

enum class Metric { kCosine, kMse, kMre, kSqnr, kChebyshev };

// "cosine-similarity", "mse", "mre", "sqnr", "chebyshev"; Error listing them for another name.
Metric parse_metric(std::string_view name);
std::string metric_name(Metric metric);
std::string metric_unit(Metric metric);  // for plot axes: "" or "dB"
double metric_value(const calibration::OutputMetrics& values, Metric metric);
// Cosine and SQNR grow as the quantized model nears the float one; the others shrink.
bool higher_is_better(Metric metric);
// True if `a` is worse (more sensitive) than `b` by this metric.
bool worse(Metric metric, double a, double b);

}  // namespace openbpu::debugger
