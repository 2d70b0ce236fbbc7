#include <cmath>

#include "kernel_test_support.h"

namespace openbpu::kernels::testing {
namespace {

TEST(BatchNormalization, InferenceOnnxExample) {
  const Tensor x = make<float>({1, 2, 1, 3}, {-1, 0, 1, 2, 3, 4});
  auto y = run_op("BatchNormalization", {},
                  {x, make<float>({2}, {1.0f, 1.5f}), make<float>({2}, {0, 1}),
                   make<float>({2}, {0, 3}), make<float>({2}, {1, 1.5f})});
  const double s0 = 1 / std::sqrt(1 + 1e-5), s1 = 1.5 / std::sqrt(1.5 + 1e-5);
  expect_near(y[0], {1, 2, 1, 3}, {-s0, 0, s0, -s1 + 1, 1, s1 + 1});
}

TEST(BatchNormalization, TrainingModeUpdatesRunningStatistics) {
  AttributeMap attrs;
  attrs.set("training_mode", int64_t{1});
  attrs.set("momentum", 0.5f);
  const Tensor x = make<float>({2, 1, 2}, {1, 3, 5, 7});  // mean 4, population variance 5
  auto y = run_op("BatchNormalization", attrs,
                  {x, make<float>({1}, {2}), make<float>({1}, {1}), make<float>({1}, {0}),
                   make<float>({1}, {1})},
                  3, 15);
  const double inv = 1 / std::sqrt(5 + 1e-5);
  expect_near(y[0], {2, 1, 2}, {1 - 6 * inv, 1 - 2 * inv, 1 + 2 * inv, 1 + 6 * inv});
  expect_near(y[1], {1}, {2});
  expect_near(y[2], {1}, {3});
}

TEST(BatchNormalization, OldOpsetsAndPerActivationParameters) {
  AttributeMap attrs;
  attrs.set("is_test", int64_t{1});
  attrs.set("spatial", int64_t{0});
  attrs.set("epsilon", 0.0f);
  auto y = run_op(
      "BatchNormalization", attrs,
      {make<float>({1, 1, 2}, {1, 2}), make<float>({1, 2}, {1, 2}), make<float>({1, 2}, {0, 0}),
       make<float>({1, 2}, {1, 0}), make<float>({1, 2}, {1, 4})},
      1, 6);
  expect_near(y[0], {1, 1, 2}, {0, 2});
  EXPECT_THROW(
      run_op("BatchNormalization", {},
             {make<float>({1, 2, 1}, {1, 2}), make<float>({3}, {1, 1, 1}), make<float>({2}, {0, 0}),
              make<float>({2}, {0, 0}), make<float>({2}, {1, 1})}),
      KernelError);
}

TEST(InstanceNormalization, NormalizesEachPlane) {
  AttributeMap attrs;
  attrs.set("epsilon", 0.0f);
  auto y = run_op(
      "InstanceNormalization", attrs,
      {make<float>({1, 2, 2}, {1, 3, 10, 12}), make<float>({2}, {2, 1}), make<float>({2}, {0, 5})});
  expect_near(y[0], {1, 2, 2}, {-2, 2, 4, 6});
  EXPECT_THROW(run_op("InstanceNormalization", {},
                      {make<float>({1, 2, 2}, {1, 3, 10, 10}), make<float>({1}, {2}),
                       make<float>({2}, {0, 5})}),
               KernelError);
}

TEST(LayerNormalization, LastAxisWithStatistics) {
  AttributeMap attrs;
  attrs.set("epsilon", 0.0f);
  auto y = run_op(
      "LayerNormalization", attrs,
      {make<float>({2, 2}, {1, 3, 0, 4}), make<float>({2}, {1, 2}), make<float>({2}, {0, 1})}, 3);
  expect_near(y[0], {2, 2}, {-1, 3, -1, 3});
  expect_near(y[1], {2, 1}, {2, 2});
  expect_near(y[2], {2, 1}, {1, 0.5});
  AttributeMap axis0;
  axis0.set("axis", int64_t{0});
  auto z = run_op("LayerNormalization", axis0,
                  {make<float>({2, 1}, {1, 3}), make<float>({2, 1}, {1, 1})}, 3);
  expect_near(z[0], {2, 1}, {-1, 1}, 1e-4);
  EXPECT_EQ(z[1].shape(), (Shape{1, 1}));
  AttributeMap bad;
  bad.set("axis", int64_t{2});
  EXPECT_THROW(
      run_op("LayerNormalization", bad, {make<float>({2, 1}, {1, 3}), make<float>({1}, {1})}),
      KernelError);
  EXPECT_THROW(run_op("LayerNormalization", {},
                      {make<float>({2, 2}, {1, 3, 1, 1}), make<float>({3}, {1, 1, 1})}),
               KernelError);
}

TEST(Lrn, ChannelWindow) {
  AttributeMap attrs;
  attrs.set("size", int64_t{2});
  attrs.set("alpha", 2.0f);
  attrs.set("beta", 1.0f);
  attrs.set("bias", 1.0f);
  auto y = run_op("LRN", attrs, {make<float>({1, 3, 1}, {1, 2, 3})});
  // size 2: window [c, c + 1]; y = x / (1 + 2/2 * sum of squares)
  expect_near(y[0], {1, 3, 1}, {1.0 / 6, 2.0 / 14, 3.0 / 10});
  EXPECT_THROW(run_op("LRN", {}, {make<float>({1, 3, 1}, {1, 2, 3})}), KernelError);
}

TEST(MeanVarianceNormalization, DefaultAxesAndCustom) {
  auto y = run_op("MeanVarianceNormalization", {}, {make<float>({2, 1, 1, 1}, {1, 3})});
  expect_near(y[0], {2, 1, 1, 1}, {-1, 1}, 1e-6);
  AttributeMap attrs;
  attrs.set("axes", std::vector<int64_t>{1});
  auto z = run_op("MeanVarianceNormalization", attrs, {make<float>({2, 2}, {0, 2, 5, 5})});
  expect_near(z[0], {2, 2}, {-1, 1, 0, 0}, 1e-6);
  attrs.set("axes", std::vector<int64_t>{3});
  EXPECT_THROW(run_op("MeanVarianceNormalization", attrs, {make<float>({2, 2}, {0, 2, 5, 5})}),
               KernelError);
}

}  // namespace
}  // namespace openbpu::kernels::testing
