// Bias correction of quantized Conv weights (the analytic form of Nagel et al., "Data-Free
// Quantization Through Weight Equalization and Bias Correction", 2019).
//
// Quantizing a Conv's weights W to Q(W) shifts the mean of output channel m by
// sum over (c, k) of (W - Q(W))[m, c, k] * E[x_c], where E[x_c] is the calibration mean of input
// channel c. Adding that shift to the bias restores each output channel's mean; depthwise and
// other thin convolutions, whose few weights per channel round coarsely, gain most. Padding is
// ignored (the mean is taken as uniform over the window).
#pragma once

#include <map>
#include <string>

#include "openbpu/calibration/tensor_statistics.h"
#include "openbpu/ir/graph.h"

namespace openbpu::calibration {

struct BiasCorrectionSummary {
  size_t corrected = 0;  // Conv nodes whose bias changed
  double largest = 0;    // largest |shift| relative to the channel's |bias| + 1
  std::string largest_node;
};

// For every Conv of a calibrated model whose weights pass through an HzCalibration weight node
// (with thresholds) and whose activation input passes through an HzCalibration node with
// statistics, replaces the bias (a new constant `<node>_corrected_bias`; one is added if the
// Conv has none) by bias + shift. `statistics` is by calibrated tensor name.
BiasCorrectionSummary correct_conv_biases(
    ir::Model& calibrated_model, const std::map<std::string, TensorStatistics>& statistics);

}  // namespace openbpu::calibration
