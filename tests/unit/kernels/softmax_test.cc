#include <cmath>
#include <numeric>

#include "kernel_test_support.h"

namespace openbpu::kernels::testing {
namespace {

AttributeMap axis(int64_t a) {
  AttributeMap attrs;
  attrs.set("axis", a);
  return attrs;
}

std::vector<double> softmax_of(std::vector<double> v) {
  double max = v[0], sum = 0;
  for (double x : v) max = std::max(max, x);
  for (double& x : v) sum += (x = std::exp(x - max));
  for (double& x : v) x /= sum;
  return v;
}

TEST(Softmax, ExampleAndLargeNumbers) {
  // ONNX test_softmax_example and test_softmax_large_number
  const auto x = make<float>({1, 3}, {-1, 0, 1});
  expect_near(run_op("Softmax", {}, {x})[0], {1, 3}, {0.09003058, 0.24472848, 0.66524094});
  const auto big = make<float>({2, 4}, {1, 2, 3, 4, 10000, 10001, 10002, 10003});
  const auto want = softmax_of({1, 2, 3, 4});
  std::vector<double> both = want;
  both.insert(both.end(), want.begin(), want.end());
  expect_near(run_op("Softmax", {}, {big})[0], {2, 4}, both);
}

TEST(Softmax, SingleAxisFromOpset13) {
  // axis 0 of a [2,2]: columns are normalised
  const auto x = make<float>({2, 2}, {0, 1, 2, 3});
  const auto col = softmax_of({0, 2});
  expect_near(run_op("Softmax", axis(0), {x}, 1, 13)[0], {2, 2}, {col[0], col[0], col[1], col[1]});
  const auto row = softmax_of({0, 1});
  expect_near(run_op("Softmax", {}, {x}, 1, 13)[0], {2, 2}, {row[0], row[1], row[0], row[1]});
}

TEST(Softmax, CoercedTo2DBeforeOpset13) {
  // [2,2,2] at axis 1: each row of 4 elements is one softmax.
  const auto x = make<float>({2, 2, 2}, {0, 1, 2, 3, 0, 0, 0, 0});
  auto first = softmax_of({0, 1, 2, 3});
  std::vector<double> want = first;
  for (int i = 0; i < 4; ++i) want.push_back(0.25);
  expect_near(run_op("Softmax", {}, {x}, 1, 11)[0], {2, 2, 2}, want);
  // the same model at opset 13 normalises along the last axis only
  auto pair = softmax_of({0, 1});
  expect_near(run_op("Softmax", axis(1), {make<float>({1, 2, 2}, {0, 5, 1, 5})}, 1, 13)[0],
              {1, 2, 2}, {pair[0], 0.5, pair[1], 0.5});
}

TEST(Softmax, InnerTilesMatchPerColumnComputation) {
  // axis 1 of [2, 3, 300]: exercises the strided path across more than one tile.
  const Shape shape{2, 3, 300};
  std::vector<float> values(1800);
  for (size_t i = 0; i < values.size(); ++i) values[i] = std::cos(static_cast<float>(i) * 0.37f);
  ThreadPool pool(3);
  auto y = run_op("LogSoftmax", axis(1), {make<float>(shape, values)}, 1, 13, &pool);
  for (int64_t o = 0; o < 2; ++o) {
    for (int64_t i = 0; i < 300; ++i) {
      std::vector<double> column;
      for (int64_t r = 0; r < 3; ++r) column.push_back(values[size_t(o * 900 + r * 300 + i)]);
      const auto s = softmax_of(column);
      for (int64_t r = 0; r < 3; ++r) {
        ASSERT_NEAR(y[0].float_at(o * 900 + r * 300 + i), std::log(s[size_t(r)]), 1e-5);
      }
    }
  }
}

TEST(LogSoftmax, Example) {
  // ONNX test_logsoftmax_example_1
  const auto x = make<float>({1, 3}, {-1, 0, 1});
  expect_near(run_op("LogSoftmax", {}, {x})[0], {1, 3}, {-2.40760596, -1.40760596, -0.40760596});
  expect_near(run_op("LogSoftmax", {}, {make<float>({1, 2}, {10000, 10000})})[0], {1, 2},
              {-std::log(2.0), -std::log(2.0)});
}

TEST(Hardmax, FirstMaximumWins) {
  // ONNX test_hardmax_example / test_hardmax_one_hot
  const auto x = make<float>({4, 4}, {3, 0, 1, 2, 2, 5, 1, 0, 0, 1, 3, 2, 0, 1, 2, 3});
  expect_near(run_op("Hardmax", {}, {x})[0], {4, 4},
              {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1});
  const auto ties = make<float>({1, 1, 4}, {2, 3, 3, 1});
  expect_near(run_op("Hardmax", {}, {ties})[0], {1, 1, 4}, {0, 1, 0, 0});
  expect_near(run_op("Hardmax", axis(1), {make<float>({1, 2, 2}, {1, 4, 3, 2})}, 1, 13)[0],
              {1, 2, 2}, {0, 1, 1, 0});
}

TEST(Softmax, HalfFloat) {
  Tensor x(DataType::kFloat16, {2});
  x.data<Float16>()[0] = Float16(0.0f);
  x.data<Float16>()[1] = Float16(0.0f);
  expect_near(run_op("Softmax", {}, {x})[0], {2}, {0.5, 0.5});
}

TEST(Softmax, Errors) {
  const auto x = make<float>({2, 2}, {0, 1, 2, 3});
  EXPECT_THROW(run_op("Softmax", axis(2), {x}, 1, 13), KernelError);
  EXPECT_THROW(run_op("Softmax", axis(3), {x}, 1, 11), KernelError);
  EXPECT_THROW(run_op("LogSoftmax", {}, {make<int32_t>({2}, {1, 2})}), KernelError);
  EXPECT_THROW(run_op("Hardmax", {}, {make<float>({}, {1})}, 1, 13), KernelError);
  AttributeMap wrong;
  wrong.set("axis", 1.0f);
  EXPECT_THROW(run_op("Softmax", wrong, {x}), KernelError);
}

}  // namespace
}  // namespace openbpu::kernels::testing
