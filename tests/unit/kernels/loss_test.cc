#include <cmath>

#include "kernel_test_support.h"

namespace openbpu::kernels::testing {
namespace {

AttributeMap loss_attrs(const std::string& reduction, std::optional<int64_t> ignore = {}) {
  AttributeMap a;
  a.set("reduction", reduction);
  if (ignore) a.set("ignore_index", *ignore);
  return a;
}

const std::vector<float> kInput{-1, -2, -3, -4, -5, -6};  // N=2, C=3

TEST(NegativeLogLikelihoodLoss, Reductions) {
  const Tensor input = make<float>({2, 3}, kInput);
  const Tensor target = make<int64_t>({2}, {2, 0});
  expect_near(run_op("NegativeLogLikelihoodLoss", loss_attrs("none"), {input, target})[0], {2},
              {3, 4});
  expect_near(run_op("NegativeLogLikelihoodLoss", loss_attrs("sum"), {input, target})[0], {}, {7});
  expect_near(run_op("NegativeLogLikelihoodLoss", {}, {input, target})[0], {}, {3.5});
}

TEST(NegativeLogLikelihoodLoss, WeightsAndIgnoreIndex) {
  const Tensor input = make<float>({2, 3}, kInput);
  const Tensor weight = make<float>({3}, {0.5f, 1, 2});
  const Tensor target = make<int32_t>({2}, {2, 0});
  // (3 * 2 + 4 * 0.5) / (2 + 0.5)
  expect_near(run_op("NegativeLogLikelihoodLoss", {}, {input, target, weight})[0], {}, {3.2});
  // Ignoring class 0: only the first element counts.
  expect_near(
      run_op("NegativeLogLikelihoodLoss", loss_attrs("mean", 0), {input, target, weight})[0], {},
      {3});
  expect_near(run_op("NegativeLogLikelihoodLoss", loss_attrs("none", -1),
                     {input, make<int64_t>({2}, {-1, 1})})[0],
              {2}, {0, 5});
}

TEST(NegativeLogLikelihoodLoss, SpatialDimensions) {
  // N=1, C=2, d1=2: input[0, c, d]
  auto y = run_op("NegativeLogLikelihoodLoss", loss_attrs("none"),
                  {make<float>({1, 2, 2}, {1, 2, 3, 4}), make<int64_t>({1, 2}, {1, 0})});
  expect_near(y[0], {1, 2}, {-3, -2});
}

TEST(NegativeLogLikelihoodLoss, RejectsBadTargets) {
  const Tensor input = make<float>({2, 3}, kInput);
  EXPECT_THROW(run_op("NegativeLogLikelihoodLoss", {}, {input, make<int64_t>({2}, {3, 0})}),
               KernelError);
  EXPECT_THROW(run_op("NegativeLogLikelihoodLoss", {}, {input, make<int64_t>({3}, {0, 0, 0})}),
               KernelError);
  EXPECT_THROW(run_op("NegativeLogLikelihoodLoss", {}, {input, make<float>({2}, {0, 0})}),
               KernelError);
  EXPECT_THROW(
      run_op("NegativeLogLikelihoodLoss", loss_attrs("avg"), {input, make<int64_t>({2}, {0, 0})}),
      KernelError);
}

TEST(SoftmaxCrossEntropyLoss, LossAndLogProb) {
  const Tensor scores = make<float>({1, 3}, {1, 2, 3});
  const double lse = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0));
  auto y = run_op("SoftmaxCrossEntropyLoss", {}, {scores, make<int64_t>({1}, {1})}, 2);
  expect_near(y[0], {}, {lse - 2});
  expect_near(y[1], {1, 3}, {1 - lse, 2 - lse, 3 - lse});
  auto w = run_op(
      "SoftmaxCrossEntropyLoss", loss_attrs("sum"),
      {make<float>({2, 2}, {0, 0, 0, 0}), make<int64_t>({2}, {0, 1}), make<float>({2}, {1, 3})});
  expect_near(w[0], {}, {4 * std::log(2.0)});
  auto ii = run_op("SoftmaxCrossEntropyLoss", loss_attrs("mean", 5),
                   {make<float>({2, 2}, {0, 0, 0, 0}), make<int64_t>({2}, {5, 1})});
  expect_near(ii[0], {}, {std::log(2.0)});
  EXPECT_THROW(run_op("SoftmaxCrossEntropyLoss", {}, {scores, make<int64_t>({1}, {-1})}),
               KernelError);
}

}  // namespace
}  // namespace openbpu::kernels::testing
