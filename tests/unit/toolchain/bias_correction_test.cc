// Bias correction: the corrected bias restores each output channel's mean that weight
// quantization shifted, for plain, grouped and depthwise Conv; nodes it cannot correct are left
// alone.
#include "openbpu/calibration/bias_correction.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "openbpu/calibration/calibration_nodes.h"
#include "openbpu/calibration/calibrator.h"
#include "openbpu/executor/float_executor.h"

namespace openbpu::calibration {
namespace {

using ir::TensorType;
using kernels::DataType;

constexpr int64_t kChannels = 4;

// x[1,4,3,3] -> Conv 3x3 without padding (weights [4, 4/group, 3, 3] of awkward values, bias)
// -> y[1,4,1,1]: every window lies inside the input, so a channel's mean is exact.
ir::Model conv_model(int64_t group, bool with_bias) {
  ir::Model m;
  m.opsets.push_back({"", 13});
  ir::Graph& g = *m.graph;
  ir::Value* x = g.add_value("x", TensorType::of(DataType::kFloat32, {1, kChannels, 3, 3}));
  g.add_input(x);
  std::mt19937_64 rng(7);
  Tensor w(DataType::kFloat32, {kChannels, kChannels / group, 3, 3});
  for (int64_t i = 0; i < w.element_count(); ++i) {
    // Values between the int8 steps: quantization moves every one of them.
    w.data<float>()[i] =
        static_cast<float>((static_cast<double>(rng() % 1000) / 997.0 - 0.5) * 0.37);
  }
  std::vector<ir::Value*> inputs = {x, g.add_constant("w", w)};
  if (with_bias) {
    inputs.push_back(g.add_constant(
        "b", Tensor::from_values<float>({kChannels}, std::vector<float>{0.5f, -0.25f, 0.f, 1.f})));
  }
  ir::Node* conv = g.add_node({"Conv", inputs, {"y"}, "conv", "", {}});
  conv->attrs().set("group", group);
  conv->output(0)->set_type(TensorType::of(DataType::kFloat32, {1, kChannels, 1, 1}));
  g.add_output(conv->output(0));
  return m;
}

// Every sample holds, in channel c, the constant value kValues[c] (all exactly representable in
// int8 once the max threshold is 2: multiples of 2/127), so the only error left in the
// calibrated model is the weights'.
constexpr float kValues[kChannels] = {2.0f, -2.0f, 2.0f * 64 / 127, -2.0f * 100 / 127};

Tensor constant_input() {
  Tensor t(DataType::kFloat32, {1, kChannels, 3, 3});
  for (int64_t c = 0; c < kChannels; ++c) {
    for (int64_t i = 0; i < 9; ++i) t.data<float>()[c * 9 + i] = kValues[c];
  }
  return t;
}

SampleStream constant_samples() {
  return {3, [](size_t) { return std::map<std::string, Tensor>{{"x", constant_input()}}; }};
}

std::vector<float> run(const ir::Model& m) {
  executor::FloatExecutor exec(m);
  const executor::RunResult r = exec.run({{"x", constant_input()}});
  const Tensor& y = r.tensors.at(0);
  return std::vector<float>(y.data<float>(), y.data<float>() + y.element_count());
}

double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i)
    d = std::max(d, std::fabs(static_cast<double>(a[i]) - b[i]));
  return d;
}

CalibrationOptions max_options() {
  CalibrationOptions o;
  o.type = config::CalibrationType::kMax;
  o.evaluation_samples = 0;
  return o;
}

TEST(BiasCorrection, RestoresTheOutputMeanOfPlainAndGroupedConv) {
  for (int64_t group : {int64_t{1}, int64_t{2}, kChannels}) {
    for (bool with_bias : {true, false}) {
      SCOPED_TRACE("group " + std::to_string(group) + (with_bias ? " with bias" : " without bias"));
      const ir::Model reference = conv_model(group, with_bias);
      const std::vector<float> expected = run(reference);

      ir::Model calibrated = conv_model(group, with_bias);
      const SampleStream samples = constant_samples();
      const CalibrationReport report = calibrate(calibrated, &samples, max_options());
      const double before = max_abs_diff(run(calibrated), expected);
      ASSERT_GT(before, 1e-4) << "weight quantization should move the output";

      const BiasCorrectionSummary summary = correct_conv_biases(calibrated, report.statistics);
      EXPECT_EQ(summary.corrected, 1u);
      EXPECT_EQ(summary.largest_node, "conv");
      EXPECT_LT(max_abs_diff(run(calibrated), expected), 1e-5) << "before: " << before;
    }
  }
}

TEST(BiasCorrection, LeavesConvWithDisabledWeightCalibrationAlone) {
  ir::Model calibrated = conv_model(1, true);
  const SampleStream samples = constant_samples();
  const CalibrationReport report = calibrate(calibrated, &samples, max_options());
  for (ir::Node* n : calibrated.graph->nodes()) {
    if (is_calibration_node(*n) && n->attrs().get_string("kind", "") == "weight") {
      n->attrs().set("enabled", int64_t{0});
    }
  }
  const std::vector<float> before = run(calibrated);
  const BiasCorrectionSummary summary = correct_conv_biases(calibrated, report.statistics);
  EXPECT_EQ(summary.corrected, 0u);
  EXPECT_EQ(max_abs_diff(run(calibrated), before), 0.0);
}

TEST(BiasCorrection, WithoutStatisticsNothingChanges) {
  ir::Model calibrated = conv_model(1, true);
  const SampleStream samples = constant_samples();
  calibrate(calibrated, &samples, max_options());
  const BiasCorrectionSummary summary = correct_conv_biases(calibrated, {});
  EXPECT_EQ(summary.corrected, 0u);
}

}  // namespace
}  // namespace openbpu::calibration
