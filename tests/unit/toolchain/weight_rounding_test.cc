// Weight rounding: GPTQ lowers a Conv's output error on the calibration samples below rounding
// to nearest, with the weights on their thresholds' grid; the corrected bias restores each
// output channel's mean, for plain, grouped and depthwise Conv; Convs it cannot handle are left
// alone.
#include "openbpu/calibration/weight_rounding.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "openbpu/calibration/calibration_nodes.h"
#include "openbpu/calibration/calibrator.h"
#include "openbpu/executor/float_executor.h"
#include "openbpu/simulator/integer_arithmetic.h"

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

WeightRoundingOptions bias_only() {
  WeightRoundingOptions o;
  o.rounding = false;
  return o;
}

void disable_activations(ir::Model& m) {
  for (ir::Node* n : m.graph->nodes()) {
    if (is_calibration_node(*n) && n->attrs().get_string("kind", "") == "activation") {
      n->attrs().set("enabled", int64_t{0});
    }
  }
}

const Tensor& weights_of(const ir::Model& m) { return *m.graph->find_value("w")->constant(); }

TEST(WeightRounding, BiasCorrectionRestoresTheOutputMeanOfPlainAndGroupedConv) {
  for (int64_t group : {int64_t{1}, int64_t{2}, kChannels}) {
    for (bool with_bias : {true, false}) {
      SCOPED_TRACE("group " + std::to_string(group) + (with_bias ? " with bias" : " without bias"));
      const ir::Model reference = conv_model(group, with_bias);
      const std::vector<float> expected = run(reference);

      ir::Model calibrated = conv_model(group, with_bias);
      const SampleStream samples = constant_samples();
      calibrate(calibrated, &samples, max_options());
      const double before = max_abs_diff(run(calibrated), expected);
      ASSERT_GT(before, 1e-4) << "weight quantization should move the output";

      const WeightRoundingSummary summary = round_conv_weights(calibrated, reference, samples, bias_only());
      EXPECT_EQ(summary.corrected, 1u);
      EXPECT_EQ(summary.rounded, 0u);
      EXPECT_LT(max_abs_diff(run(calibrated), expected), 1e-5) << "before: " << before;
    }
  }
}

// x[1,C,8,8] with correlated channels (a shared random component) -> Conv 3x3, pads 1, stride
// `stride` (weights [8, C/group, 3, 3]).
ir::Model padded_conv_model(int64_t group, int64_t stride, int64_t channels = 6) {
  ir::Model m;
  m.opsets.push_back({"", 13});
  ir::Graph& g = *m.graph;
  ir::Value* x = g.add_value("x", TensorType::of(DataType::kFloat32, {1, channels, 8, 8}));
  g.add_input(x);
  std::mt19937_64 rng(11);
  std::normal_distribution<float> normal(0.0f, 0.3f);
  Tensor w(DataType::kFloat32, {8, channels / group, 3, 3});
  for (int64_t i = 0; i < w.element_count(); ++i) w.data<float>()[i] = normal(rng);
  ir::Node* conv = g.add_node({"Conv", {x, g.add_constant("w", w)}, {"y"}, "conv", "", {}});
  conv->attrs().set("group", group);
  conv->attrs().set("pads", std::vector<int64_t>{1, 1, 1, 1});
  conv->attrs().set("strides", std::vector<int64_t>{stride, stride});
  const int64_t out = (8 + 2 - 3) / stride + 1;
  conv->output(0)->set_type(TensorType::of(DataType::kFloat32, {1, 8, out, out}));
  g.add_output(conv->output(0));
  return m;
}

SampleStream correlated_samples(size_t count, int64_t channels = 6, uint64_t seed = 100) {
  return {count, [channels, seed](size_t index) {
            std::mt19937_64 rng(seed + index);
            std::normal_distribution<float> normal(0.0f, 1.0f);
            Tensor t(DataType::kFloat32, {1, channels, 8, 8});
            for (int64_t p = 0; p < 64; ++p) {
              const float shared = normal(rng);
              for (int64_t c = 0; c < channels; ++c) {
                t.data<float>()[c * 64 + p] = shared + 0.3f * normal(rng) + 0.5f;
              }
            }
            return std::map<std::string, Tensor>{{"x", t}};
          }};
}

// Σ over the samples of ‖y(model) − y(reference)‖².
double squared_error(const ir::Model& model, const ir::Model& reference, const SampleStream& samples) {
  executor::FloatExecutor a(model), b(reference);
  double sum = 0;
  for (size_t i = 0; i < samples.count; ++i) {
    const auto feeds = samples.feeds(i);
    const Tensor ya = a.run(feeds).tensors.at(0), yb = b.run(feeds).tensors.at(0);
    for (int64_t k = 0; k < ya.element_count(); ++k) {
      const double d = double(ya.data<float>()[k]) - yb.data<float>()[k];
      sum += d * d;
    }
  }
  return sum;
}

TEST(WeightRounding, LowersTheOutputErrorWithWeightsOnTheGrid) {
  for (int64_t group : {int64_t{1}, int64_t{2}}) {
    for (int64_t stride : {int64_t{1}, int64_t{2}}) {
      SCOPED_TRACE("group " + std::to_string(group) + " stride " + std::to_string(stride));
      const ir::Model reference = padded_conv_model(group, stride);
      const SampleStream samples = correlated_samples(8);
      ir::Model nearest = padded_conv_model(group, stride), rounded = padded_conv_model(group, stride);
      calibrate(nearest, &samples, max_options());
      calibrate(rounded, &samples, max_options());
      disable_activations(nearest);
      disable_activations(rounded);
      round_conv_weights(nearest, reference, samples, bias_only());
      const WeightRoundingSummary summary = round_conv_weights(rounded, reference, samples, {});
      EXPECT_EQ(summary.rounded, 1u);
      EXPECT_LT(summary.median_error_ratio, 0.9);
      const double e_nearest = squared_error(nearest, reference, samples);
      const double e_rounded = squared_error(rounded, reference, samples);
      EXPECT_LT(e_rounded, 0.9 * e_nearest) << "nearest " << e_nearest;

      // On the grid of the (unchanged) thresholds: stage 4 quantizes them exactly.
      const Tensor& w = weights_of(rounded);
      const std::vector<float> th =
          rounded.graph->find_value("w")->uses().at(0).node->attrs().get_floats("thresholds", {});
      ASSERT_EQ(static_cast<int64_t>(th.size()), w.dim(0));
      const int64_t per = w.element_count() / w.dim(0);
      bool moved = false;
      for (int64_t i = 0; i < w.element_count(); ++i) {
        const float s = simulator::symmetric_scale(th[size_t(i / per)], 8);
        const float v = w.data<float>()[i];
        EXPECT_EQ(v, simulator::dequantize(simulator::quantize_int8(v, s), s)) << "weight " << i;
        moved |= v != weights_of(nearest).data<float>()[i];
      }
      EXPECT_TRUE(moved) << "GPTQ should round some weight away from the nearest grid point";
    }
  }
}

// A depth of 32 x 3 x 3 = 288: the input moments come from row panels of the product (and the
// kernel threads).
TEST(WeightRounding, LowersTheOutputErrorOfADeepConv) {
  const ir::Model reference = padded_conv_model(1, 1, 32);
  const SampleStream samples = correlated_samples(48, 32);
  ir::Model nearest = padded_conv_model(1, 1, 32), rounded = padded_conv_model(1, 1, 32);
  calibrate(nearest, &samples, max_options());
  calibrate(rounded, &samples, max_options());
  disable_activations(nearest);
  disable_activations(rounded);
  round_conv_weights(nearest, reference, samples, bias_only());
  WeightRoundingOptions options;
  options.executor.threads = 2;
  const WeightRoundingSummary summary = round_conv_weights(rounded, reference, samples, options);
  EXPECT_EQ(summary.rounded, 1u);
  EXPECT_LT(summary.median_error_ratio, 0.9);
  const double e_nearest = squared_error(nearest, reference, samples);
  EXPECT_LT(squared_error(rounded, reference, samples), 0.9 * e_nearest) << "nearest " << e_nearest;
}

std::vector<float> values(const ir::Model& m, const std::string& name) {
  const Tensor& t = *m.graph->find_value(name)->constant();
  return std::vector<float>(t.data<float>(), t.data<float>() + t.element_count());
}

TEST(WeightRounding, DeeperConvsThanTheBoundRoundToNearest) {
  const ir::Model reference = padded_conv_model(1, 1);  // depth 6 x 3 x 3 = 54
  const SampleStream samples = correlated_samples(4);
  ir::Model nearest = padded_conv_model(1, 1), bounded = padded_conv_model(1, 1);
  calibrate(nearest, &samples, max_options());
  calibrate(bounded, &samples, max_options());
  round_conv_weights(nearest, reference, samples, bias_only());
  WeightRoundingOptions options;
  options.max_depth = 53;
  const WeightRoundingSummary summary = round_conv_weights(bounded, reference, samples, options);
  EXPECT_EQ(summary.rounded, 0u);
  EXPECT_EQ(summary.corrected, 1u);
  EXPECT_EQ(values(bounded, "w"), values(nearest, "w"));
}

// padded_conv_model(1, 1) and a second Conv 1x1 on x with its own weight "w2" (or with "w"
// itself when `shared`, as a 3x3).
ir::Model two_conv_model(bool shared) {
  ir::Model m = padded_conv_model(1, 1);
  ir::Graph& g = *m.graph;
  ir::Value* w2 = g.find_value("w");
  if (!shared) {
    Tensor t(DataType::kFloat32, {4, 6, 1, 1});
    for (int64_t i = 0; i < t.element_count(); ++i) t.data<float>()[i] = 0.37f * std::sin(float(i) * 1.7f);
    w2 = g.add_constant("w2", t);
  }
  ir::Node* conv = g.add_node({"Conv", {g.find_value("x"), w2}, {"y2"}, "conv2", "", {}});
  if (shared) conv->attrs().set("pads", std::vector<int64_t>{1, 1, 1, 1});
  conv->output(0)->set_type(TensorType::of(DataType::kFloat32, {1, shared ? 8 : 4, 8, 8}));
  g.add_output(conv->output(0));
  return m;
}

TEST(WeightRounding, SeveralPassesGiveTheSameWeights) {
  const ir::Model reference = two_conv_model(false);
  const SampleStream samples = correlated_samples(4);
  ir::Model one = two_conv_model(false), tight = two_conv_model(false);
  calibrate(one, &samples, max_options());
  calibrate(tight, &samples, max_options());
  WeightRoundingOptions small;
  small.memory_budget = 1;  // one Conv per pass
  EXPECT_EQ(round_conv_weights(one, reference, samples, {}).passes, 1u);
  EXPECT_EQ(round_conv_weights(tight, reference, samples, small).passes, 2u);
  EXPECT_EQ(values(one, "w"), values(tight, "w"));
  EXPECT_EQ(values(one, "w2"), values(tight, "w2"));
}

// The moments gathered while the calibration statistics run the float model (one or two
// workers; with no memory budget, every Conv gets a pass of its own) round the weights as a
// pass of round_conv_weights does.
TEST(WeightRounding, MomentsGatheredByTheStatisticsPassGiveTheSameWeights) {
  const ir::Model reference = two_conv_model(false);
  const SampleStream samples = correlated_samples(5);
  ir::Model own = two_conv_model(false);
  calibrate(own, &samples, max_options());
  EXPECT_EQ(round_conv_weights(own, reference, samples, {}).passes, 1u);
  for (int threads : {1, 2}) {
    for (size_t budget : {size_t{512} << 20, size_t{1}}) {
      SCOPED_TRACE("threads " + std::to_string(threads) + " budget " + std::to_string(budget));
      WeightRoundingOptions options;
      options.executor.threads = threads;
      options.memory_budget = budget;
      ConvMoments moments(reference, samples.count, options);
      EXPECT_EQ(moments.conv_count(), budget == 1 ? 0u : 2u);
      ir::Model gathered = two_conv_model(false), first = two_conv_model(false);
      CalibrationOptions copts = max_options();
      copts.executor.threads = threads;
      copts.observer = &moments;
      const SampleStream other = correlated_samples(5, 6, 900);
      calibrate(first, &other, copts);  // a second pass replaces this one's moments
      calibrate(gathered, &samples, copts);
      EXPECT_EQ(round_conv_weights(gathered, reference, samples, options, &moments).passes, budget == 1 ? 2u : 0u);
      EXPECT_EQ(values(gathered, "w"), values(own, "w"));
      EXPECT_EQ(values(gathered, "w2"), values(own, "w2"));
    }
  }
}

TEST(WeightRounding, LeavesConvWithDisabledWeightCalibrationAlone) {
  const ir::Model reference = conv_model(1, true);
  ir::Model calibrated = conv_model(1, true);
  const SampleStream samples = constant_samples();
  calibrate(calibrated, &samples, max_options());
  for (ir::Node* n : calibrated.graph->nodes()) {
    if (is_calibration_node(*n) && n->attrs().get_string("kind", "") == "weight") {
      n->attrs().set("enabled", int64_t{0});
    }
  }
  const std::vector<float> before = run(calibrated);
  const WeightRoundingSummary summary = round_conv_weights(calibrated, reference, samples, {});
  EXPECT_EQ(summary.corrected, 0u);
  EXPECT_EQ(max_abs_diff(run(calibrated), before), 0.0);
}

TEST(WeightRounding, LeavesSharedWeightsAlone) {
  // Two Convs reading one weight tensor: rounding it for one input would change the other.
  const ir::Model reference = two_conv_model(true);
  ir::Model calibrated = two_conv_model(true);
  const SampleStream samples = correlated_samples(2);
  calibrate(calibrated, &samples, max_options());
  const std::vector<float> before = values(calibrated, "w");
  EXPECT_EQ(round_conv_weights(calibrated, reference, samples, {}).corrected, 0u);
  EXPECT_EQ(values(calibrated, "w"), before);
}

}  // namespace
}  // namespace openbpu::calibration
