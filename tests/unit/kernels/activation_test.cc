#include <algorithm>
#include <cmath>
#include <limits>

#include "kernel_test_support.h"
#include "openbpu/kernels/fast_exp.h"

namespace openbpu::kernels::testing {
namespace {

AttributeMap floats(std::initializer_list<std::pair<const char*, float>> values) {
  AttributeMap attrs;
  for (const auto& [name, value] : values) attrs.set(name, value);
  return attrs;
}

TEST(Activation, ReluOnFloatsAndSignedIntegers) {
  auto y = run_op("Relu", {}, {make<float>({3}, {-1.f, 0.f, 2.5f})});
  expect_near(y[0], {3}, {0.0, 0.0, 2.5});
  auto i = run_op("Relu", {}, {make<int8_t>({3}, {-128, 0, 127})}, 1, 14);
  EXPECT_EQ(i[0].to_int64_vector(), (std::vector<int64_t>{0, 0, 127}));
}

TEST(Activation, LeakyReluEluSeluCelu) {
  const auto x = make<float>({3}, {-1.f, 0.f, 1.f});
  expect_near(run_op("LeakyRelu", floats({{"alpha", 0.1f}}), {x})[0], {3}, {-0.1, 0.0, 1.0});
  expect_near(run_op("LeakyRelu", {}, {x})[0], {3}, {-0.01, 0.0, 1.0});
  // ONNX test_elu_example: alpha 2
  expect_near(run_op("Elu", floats({{"alpha", 2.f}}), {x})[0], {3}, {-1.2642411, 0.0, 1.0});
  // ONNX test_selu_example: alpha 2, gamma 3
  expect_near(run_op("Selu", floats({{"alpha", 2.f}, {"gamma", 3.f}}), {x})[0], {3},
              {-3.7927232, 0.0, 3.0});
  expect_near(run_op("Selu", {}, {x})[0], {3}, {-1.1113307, 0.0, 1.0507010});
  expect_near(run_op("Celu", floats({{"alpha", 2.f}}), {x})[0], {3},
              {2.0 * (std::exp(-0.5) - 1.0), 0.0, 1.0});
}

TEST(Activation, SigmoidIsStableForLargeMagnitudes) {
  auto y = run_op("Sigmoid", {}, {make<float>({4}, {-1000.f, -1.f, 0.f, 1000.f})});
  expect_near(y[0], {4}, {0.0, 0.26894142, 0.5, 1.0});
  auto d = run_op("Sigmoid", {}, {make<double>({1}, {-800.0})});
  EXPECT_GE(d[0].float_at(0), 0.0);
  EXPECT_FALSE(std::isnan(d[0].float_at(0)));
}

TEST(Activation, FastExpMatchesDoubleExp) {
  double worst = 0;
  for (float v = -87.f; v < 88.f; v += 0.0137f) {
    const double want = std::exp(static_cast<double>(v));
    worst = std::max(worst, std::abs(fast_exp(v) - want) / want);
  }
  EXPECT_LT(worst, 2e-7);
  EXPECT_EQ(fast_exp(0.f), 1.f);
  EXPECT_TRUE(std::isnan(fast_exp(NAN)));
  EXPECT_LE(fast_exp(-INFINITY), 1.2e-38f);
  EXPECT_GT(fast_exp(INFINITY), 1e38f);
}

TEST(Activation, FloatSigmoidMatchesDoubleReference) {
  std::vector<float> values;
  for (float v = -100.f; v < 100.f; v += 0.0731f) values.push_back(v);
  const int64_t n = static_cast<int64_t>(values.size());
  std::vector<double> wide(values.begin(), values.end());
  auto f = run_op("Sigmoid", {}, {make<float>({n}, values)});
  auto d = run_op("Sigmoid", {}, {make<double>({n}, wide)});
  for (int64_t i = 0; i < n; ++i) {
    const double want = d[0].float_at(i);
    ASSERT_NEAR(f[0].float_at(i), want, 1e-38 + 3e-7 * want) << values[size_t(i)];
  }
}

TEST(Activation, TanhSoftplusSoftsign) {
  const auto x = make<float>({3}, {-1.f, 0.f, 1.f});
  expect_near(run_op("Tanh", {}, {x})[0], {3}, {-0.76159418, 0.0, 0.76159418});
  expect_near(run_op("Softplus", {}, {x}, 1, 1)[0], {3}, {0.31326166, 0.69314718, 1.3132616});
  expect_near(run_op("Softplus", {}, {make<float>({1}, {100.f})})[0], {1}, {100.0});
  expect_near(run_op("Softsign", {}, {x}, 1, 1)[0], {3}, {-0.5, 0.0, 0.5});
}

TEST(Activation, HardSigmoidAndHardSwish) {
  const auto x = make<float>({4}, {-4.f, -1.f, 1.f, 4.f});
  // ONNX test_hardsigmoid_example: alpha 0.5, beta 0.6
  expect_near(run_op("HardSigmoid", floats({{"alpha", 0.5f}, {"beta", 0.6f}}), {x})[0], {4},
              {0.0, 0.1, 1.0, 1.0});
  expect_near(run_op("HardSigmoid", {}, {x})[0], {4}, {0.0, 0.3, 0.7, 1.0});
  expect_near(run_op("HardSwish", {}, {x})[0], {4}, {0.0, -1.0 / 3.0, 2.0 / 3.0, 4.0});
}

TEST(Activation, ThresholdedReluAndShrink) {
  const auto x = make<float>({5}, {-2.f, -0.5f, 0.f, 1.f, 2.2f});
  expect_near(run_op("ThresholdedRelu", floats({{"alpha", 2.f}}), {x})[0], {5},
              {0.0, 0.0, 0.0, 0.0, 2.2});
  // ONNX test_shrink_soft: lambd 1.5, bias 1.5
  const auto s = make<float>({5}, {-2.f, -1.f, 0.f, 1.f, 2.f});
  expect_near(run_op("Shrink", floats({{"lambd", 1.5f}, {"bias", 1.5f}}), {s})[0], {5},
              {-0.5, 0.0, 0.0, 0.0, 0.5});
  expect_near(run_op("Shrink", floats({{"lambd", 1.5f}}), {s})[0], {5}, {-2.0, 0.0, 0.0, 0.0, 2.0});
  auto i =
      run_op("Shrink", floats({{"lambd", 1.f}, {"bias", 1.f}}), {make<int32_t>({3}, {-5, 1, 5})});
  EXPECT_EQ(i[0].to_int64_vector(), (std::vector<int64_t>{-4, 0, 4}));
}

TEST(Activation, ClipBoundsAsAttributesBeforeOpset11) {
  auto y = run_op("Clip", floats({{"min", -0.5f}, {"max", 0.5f}}),
                  {make<float>({3}, {-1.f, 0.2f, 1.f})}, 1, 6);
  expect_near(y[0], {3}, {-0.5, 0.2, 0.5});
  auto unbounded = run_op("Clip", {}, {make<float>({2}, {-1e30f, 1e30f})}, 1, 6);
  expect_near(unbounded[0], {2}, {-1e30, 1e30}, 1e24);
}

TEST(Activation, ClipBoundsAsInputsFromOpset11) {
  const auto x = make<float>({4}, {-2.f, -0.5f, 0.5f, 2.f});
  auto both = run_op("Clip", {}, {x, make<float>({}, {-1.f}), make<float>({}, {1.f})});
  expect_near(both[0], {4}, {-1.0, -0.5, 0.5, 1.0});
  auto max_only = run_op("Clip", {}, {x, std::nullopt, make<float>({}, {0.f})});
  expect_near(max_only[0], {4}, {-2.0, -0.5, 0.0, 0.0});
  auto none = run_op("Clip", {}, {x});
  expect_near(none[0], {4}, {-2.0, -0.5, 0.5, 2.0});
  // min > max: everything becomes max.
  auto inverted = run_op("Clip", {}, {x, make<float>({}, {1.f}), make<float>({}, {0.f})});
  expect_near(inverted[0], {4}, {0.0, 0.0, 0.0, 0.0});
  auto nan = run_op("Clip", {}, {make<float>({1}, {NAN}), make<float>({}, {0.f})});
  EXPECT_TRUE(std::isnan(nan[0].float_at(0)));
}

TEST(Activation, ClipIntegersFromOpset12) {
  auto y =
      run_op("Clip", {}, {make<int8_t>({3}, {-128, 5, 127}), make<int8_t>({}, {-3}), std::nullopt});
  EXPECT_EQ(y[0].to_int64_vector(), (std::vector<int64_t>{-3, 5, 127}));
}

TEST(Activation, ClipHalfFloat) {
  Tensor x(DataType::kFloat16, {2});
  x.data<Float16>()[0] = Float16(-3.0f);
  x.data<Float16>()[1] = Float16(0.25f);
  Tensor lo(DataType::kFloat16, {});
  lo.data<Float16>()[0] = Float16(-1.0f);
  expect_near(run_op("Clip", {}, {x, lo})[0], {2}, {-1.0, 0.25});
}

TEST(Activation, LargeInputWithThreadPoolMatchesSerial) {
  const int64_t n = 100003;
  std::vector<float> values(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) values[size_t(i)] = static_cast<float>((i % 200) - 100) * 0.05f;
  const auto x = make<float>({n}, values);
  ThreadPool pool(3);
  auto serial = run_op("Sigmoid", {}, {x});
  auto parallel = run_op("Sigmoid", {}, {x}, 1, 17, &pool);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(serial[0].float_at(i), parallel[0].float_at(i));
}

TEST(Activation, Errors) {
  const auto x = make<float>({2}, {1.f, 2.f});
  // Clip bounds of the wrong type or shape
  EXPECT_THROW(run_op("Clip", {}, {x, make<double>({}, {0.0})}), KernelError);
  EXPECT_THROW(run_op("Clip", {}, {x, make<float>({2}, {0.f, 1.f})}), KernelError);
  // Clip bound attributes are gone from opset 11
  EXPECT_THROW(run_op("Clip", floats({{"min", 0.f}}), {x}, 1, 11), KernelError);
  // Clip on integers needs opset 12 semantics (attributes before 11 are float-only)
  EXPECT_THROW(run_op("Clip", {}, {make<int32_t>({1}, {1})}, 1, 6), KernelError);
  // Float-only activations reject integers
  EXPECT_THROW(run_op("Sigmoid", {}, {make<int32_t>({1}, {1})}), KernelError);
  EXPECT_THROW(run_op("Celu", floats({{"alpha", 0.f}}), {x}), KernelError);
  EXPECT_THROW(run_op("Shrink", floats({{"lambd", -1.f}}), {x}), KernelError);
  AttributeMap wrong_kind;
  wrong_kind.set("alpha", int64_t{1});
  EXPECT_THROW(run_op("LeakyRelu", wrong_kind, {x}), KernelError);
  EXPECT_THROW(run_op("HardSwish", {}, {x}, 1, 13), KernelError);  // exists from opset 14
}

}  // namespace
}  // namespace openbpu::kernels::testing
