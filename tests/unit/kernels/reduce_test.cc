#include <cmath>
#include <limits>

#include "kernel_test_support.h"

namespace openbpu::kernels::testing {
namespace {

AttributeMap reduce_attrs(std::vector<int64_t> axes, int64_t keepdims) {
  AttributeMap attrs;
  if (!axes.empty()) attrs.set("axes", std::move(axes));
  attrs.set("keepdims", keepdims);
  return attrs;
}

// ONNX reduce examples use this [3,2,2] tensor.
Tensor example() {
  return make<float>({3, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
}

TEST(Reduce, AxesAttributeBeforeOpset18) {
  auto sum = run_op("ReduceSum", reduce_attrs({1}, 1), {example()}, 1, 11);
  expect_near(sum[0], {3, 1, 2}, {4, 6, 12, 14, 20, 22});
  auto mean = run_op("ReduceMean", reduce_attrs({1}, 0), {example()}, 1, 13);
  expect_near(mean[0], {3, 2}, {2, 3, 6, 7, 10, 11});
  auto max = run_op("ReduceMax", reduce_attrs({-2}, 1), {example()}, 1, 13);
  expect_near(max[0], {3, 1, 2}, {3, 4, 7, 8, 11, 12});
  auto min_all = run_op("ReduceMin", reduce_attrs({}, 1), {example()}, 1, 13);
  expect_near(min_all[0], {1, 1, 1}, {1});
  auto prod = run_op("ReduceProd", reduce_attrs({0, 2}, 0), {example()}, 1, 13);
  expect_near(prod[0], {2}, {1.0 * 2 * 5 * 6 * 9 * 10, 3.0 * 4 * 7 * 8 * 11 * 12});
}

TEST(Reduce, AxesInputFromOpset13ForSumAnd18ForOthers) {
  const auto axes = make<int64_t>({1}, {2});
  auto sum = run_op("ReduceSum", reduce_attrs({}, 0), {example(), axes}, 1, 13);
  expect_near(sum[0], {3, 2}, {3, 7, 11, 15, 19, 23});
  auto l2 = run_op("ReduceL2", reduce_attrs({}, 0), {example(), axes}, 1, 18);
  expect_near(
      l2[0], {3, 2},
      {std::sqrt(5.0), 5.0, std::sqrt(61.0), std::sqrt(113.0), std::sqrt(181.0), std::sqrt(265.0)});
  // the axes attribute is not allowed once axes is an input
  EXPECT_THROW(run_op("ReduceSum", reduce_attrs({1}, 1), {example()}, 1, 13), KernelError);
  EXPECT_THROW(run_op("ReduceMean", reduce_attrs({1}, 1), {example()}, 1, 18), KernelError);
}

TEST(Reduce, EmptyAxesReduceAllOrNoop) {
  AttributeMap noop;
  noop.set("noop_with_empty_axes", int64_t{1});
  auto same = run_op("ReduceSum", noop, {example(), make<int64_t>({0}, {})}, 1, 13);
  expect_near(same[0], {3, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  auto all = run_op("ReduceSum", {}, {example(), make<int64_t>({0}, {})}, 1, 13);
  expect_near(all[0], {1, 1, 1}, {78});
  auto all_omitted = run_op("ReduceSum", {}, {example()}, 1, 13);
  expect_near(all_omitted[0], {1, 1, 1}, {78});
}

TEST(Reduce, AllOperatorsOnOneAxis) {
  const auto x = make<float>({2, 2}, {-1, 2, 3, -4});
  const auto attrs = reduce_attrs({1}, 0);
  expect_near(run_op("ReduceL1", attrs, {x}, 1, 13)[0], {2}, {3, 7});
  expect_near(run_op("ReduceL2", attrs, {x}, 1, 13)[0], {2}, {std::sqrt(5.0), 5});
  expect_near(run_op("ReduceSumSquare", attrs, {x}, 1, 13)[0], {2}, {5, 25});
  expect_near(run_op("ReduceLogSum", attrs, {make<float>({2, 2}, {1, 2, 3, 4})}, 1, 13)[0], {2},
              {std::log(3.0), std::log(7.0)});
  expect_near(run_op("ReduceLogSumExp", attrs, {x}, 1, 13)[0], {2},
              {std::log(std::exp(-1.0) + std::exp(2.0)), std::log(std::exp(3.0) + std::exp(-4.0))});
  // no overflow for large inputs
  expect_near(run_op("ReduceLogSumExp", attrs, {make<float>({1, 2}, {1000, 1000})}, 1, 13)[0], {1},
              {1000 + std::log(2.0)}, 1e-3);
}

TEST(Reduce, EmptySetGivesIdentities) {
  const Tensor empty(DataType::kFloat32, {2, 0});
  const auto attrs = reduce_attrs({1}, 0);
  expect_near(run_op("ReduceSum", attrs, {empty}, 1, 11)[0], {2}, {0, 0});
  expect_near(run_op("ReduceProd", attrs, {empty}, 1, 13)[0], {2}, {1, 1});
  EXPECT_EQ(run_op("ReduceMax", attrs, {empty}, 1, 13)[0].float_at(0),
            -std::numeric_limits<double>::infinity());
  EXPECT_EQ(run_op("ReduceMin", attrs, {empty}, 1, 13)[0].float_at(0),
            std::numeric_limits<double>::infinity());
  EXPECT_EQ(run_op("ReduceLogSumExp", attrs, {empty}, 1, 13)[0].float_at(0),
            -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(run_op("ReduceMean", attrs, {empty}, 1, 13)[0].float_at(0)));
  const Tensor empty_int(DataType::kInt32, {0});
  EXPECT_EQ(run_op("ReduceMax", {}, {empty_int}, 1, 13)[0].int_at(0),
            std::numeric_limits<int32_t>::min());
}

TEST(Reduce, IntegersAndNaN) {
  auto sum =
      run_op("ReduceSum", reduce_attrs({0}, 0), {make<int32_t>({2, 2}, {1, -2, 3, 4})}, 1, 11);
  EXPECT_EQ(sum[0].to_int64_vector(), (std::vector<int64_t>{4, 2}));
  auto mean = run_op("ReduceMean", reduce_attrs({0}, 0), {make<int64_t>({2}, {-3, 0})}, 1, 13);
  EXPECT_EQ(mean[0].int_at(0), -1);  // truncates toward zero
  auto max = run_op("ReduceMax", reduce_attrs({0}, 0), {make<float>({3}, {1, NAN, 2})}, 1, 13);
  EXPECT_TRUE(std::isnan(max[0].float_at(0)));
  auto l1 = run_op("ReduceL1", {}, {make<int8_t>({3}, {-100, 20, 3})}, 1, 13);
  EXPECT_EQ(l1[0].int_at(0), 123);
}

TEST(Reduce, ParallelResultsMatchSerial) {
  const Shape shape{3, 40, 50, 7};
  std::vector<float> values(static_cast<size_t>(shape_element_count(shape)));
  for (size_t i = 0; i < values.size(); ++i) values[i] = std::sin(static_cast<float>(i));
  const auto x = make<float>(shape, values);
  ThreadPool pool(3);
  for (const auto& axes : std::vector<std::vector<int64_t>>{{3}, {1, 2}, {0, 2}, {1}, {}}) {
    auto serial = run_op("ReduceMean", reduce_attrs(axes, 1), {x}, 1, 13);
    auto parallel = run_op("ReduceMean", reduce_attrs(axes, 1), {x}, 1, 13, &pool);
    ASSERT_EQ(serial[0].shape(), parallel[0].shape());
    for (int64_t i = 0; i < serial[0].element_count(); ++i) {
      ASSERT_EQ(serial[0].float_at(i), parallel[0].float_at(i));
    }
  }
  // axes {0, 2}: element [0, 0, 0, 0] of the result
  auto split = run_op("ReduceSum", reduce_attrs({0, 2}, 1), {x}, 1, 11);
  double want = 0;
  for (int64_t a = 0; a < 3; ++a) {
    for (int64_t c = 0; c < 50; ++c) want += values[size_t(a * 40 * 50 * 7 + c * 7)];
  }
  EXPECT_NEAR(split[0].float_at(0), want, 1e-4);
}

TEST(Reduce, MiddleBlockTilesMatchDirectSums) {
  // axis 1 of [2, 3, 1500]: kept dimensions on both sides, inner wider than one tile.
  const Shape shape{2, 3, 1500};
  std::vector<float> values(9000);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 97) - 40.f;
  const auto x = make<float>(shape, values);
  auto sum = run_op("ReduceSum", reduce_attrs({1}, 0), {x}, 1, 11);
  auto l1 = run_op("ReduceL1", reduce_attrs({-2}, 1), {x}, 1, 13);
  ASSERT_EQ(sum[0].shape(), (Shape{2, 1500}));
  ASSERT_EQ(l1[0].shape(), (Shape{2, 1, 1500}));
  for (int64_t o = 0; o < 2; ++o) {
    for (int64_t i = 0; i < 1500; ++i) {
      double want = 0, want_l1 = 0;
      for (int64_t r = 0; r < 3; ++r) {
        want += values[size_t(o * 4500 + r * 1500 + i)];
        want_l1 += std::abs(values[size_t(o * 4500 + r * 1500 + i)]);
      }
      ASSERT_EQ(sum[0].float_at(o * 1500 + i), want);
      ASSERT_EQ(l1[0].float_at(o * 1500 + i), want_l1);
    }
  }
  // leading reduced block of integers: ReduceMean over axis 0 truncates each column's mean
  auto mean = run_op("ReduceMean", reduce_attrs({0}, 0),
                     {make<int32_t>({2, 3}, {1, -4, 7, 2, 1, 8})}, 1, 13);
  EXPECT_EQ(mean[0].to_int64_vector(), (std::vector<int64_t>{1, -1, 7}));
  // an empty reduced block gives the identity for every output
  auto prod =
      run_op("ReduceProd", reduce_attrs({0}, 0), {Tensor(DataType::kFloat32, {0, 3})}, 1, 13);
  expect_near(prod[0], {3}, {1, 1, 1});
}

TEST(ArgMaxMin, KeepdimsAndSelectLastIndex) {
  // ONNX test_argmax_keepdims_example / _select_last_index
  const auto x = make<float>({2, 2}, {2, 2, 3, 10});
  AttributeMap attrs;
  attrs.set("axis", int64_t{1});
  auto y = run_op("ArgMax", attrs, {x}, 1, 13);
  EXPECT_EQ(y[0].shape(), (Shape{2, 1}));
  EXPECT_EQ(y[0].to_int64_vector(), (std::vector<int64_t>{0, 1}));
  attrs.set("select_last_index", int64_t{1});
  EXPECT_EQ(run_op("ArgMax", attrs, {x}, 1, 13)[0].to_int64_vector(), (std::vector<int64_t>{1, 1}));
  AttributeMap defaults;
  defaults.set("keepdims", int64_t{0});
  auto m = run_op("ArgMin", defaults, {x}, 1, 13);
  EXPECT_EQ(m[0].shape(), (Shape{2}));
  EXPECT_EQ(m[0].to_int64_vector(), (std::vector<int64_t>{0, 0}));
  AttributeMap bad_axis;
  bad_axis.set("axis", int64_t{2});
  EXPECT_THROW(run_op("ArgMax", bad_axis, {x}, 1, 13), KernelError);
  EXPECT_THROW(run_op("ArgMax", {}, {Tensor(DataType::kFloat32, {0, 2})}, 1, 13), KernelError);
}

TEST(CumSum, ExclusiveReverseAndAxis) {
  const auto x = make<float>({5}, {1, 2, 3, 4, 5});
  const auto axis0 = make<int32_t>({}, {0});
  expect_near(run_op("CumSum", {}, {x, axis0}, 1, 14)[0], {5}, {1, 3, 6, 10, 15});
  AttributeMap exclusive, reverse, both;
  exclusive.set("exclusive", int64_t{1});
  reverse.set("reverse", int64_t{1});
  both.set("exclusive", int64_t{1});
  both.set("reverse", int64_t{1});
  expect_near(run_op("CumSum", exclusive, {x, axis0}, 1, 14)[0], {5}, {0, 1, 3, 6, 10});
  expect_near(run_op("CumSum", reverse, {x, axis0}, 1, 14)[0], {5}, {15, 14, 12, 9, 5});
  expect_near(run_op("CumSum", both, {x, axis0}, 1, 14)[0], {5}, {14, 12, 9, 5, 0});
  const auto m = make<int64_t>({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(run_op("CumSum", {}, {m, make<int64_t>({1}, {-1})}, 1, 14)[0].to_int64_vector(),
            (std::vector<int64_t>{1, 3, 6, 4, 9, 15}));
  EXPECT_EQ(run_op("CumSum", {}, {m, make<int64_t>({}, {0})}, 1, 14)[0].to_int64_vector(),
            (std::vector<int64_t>{1, 2, 3, 5, 7, 9}));
  EXPECT_THROW(run_op("CumSum", {}, {m, make<int64_t>({}, {2})}, 1, 14), KernelError);
  EXPECT_THROW(run_op("CumSum", {}, {m, make<float>({}, {0})}, 1, 14), KernelError);
}

TEST(TopK, LargestSmallestTiesAndOpsetRevisions) {
  const auto x = make<float>({2, 4}, {0, 1, 2, 3, 5, 5, 1, 5});
  const auto k = make<int64_t>({1}, {3});
  auto top = run_op("TopK", {}, {x, k}, 2, 11);
  expect_near(top[0], {2, 3}, {3, 2, 1, 5, 5, 5});
  EXPECT_EQ(top[1].to_int64_vector(), (std::vector<int64_t>{3, 2, 1, 0, 1, 3}));
  AttributeMap smallest;
  smallest.set("largest", int64_t{0});
  smallest.set("axis", int64_t{0});
  auto low = run_op("TopK", smallest, {x, make<int64_t>({1}, {1})}, 2, 11);
  expect_near(low[0], {1, 4}, {0, 1, 1, 3});
  EXPECT_EQ(low[1].to_int64_vector(), (std::vector<int64_t>{0, 0, 1, 0}));
  // opset 1: k is an attribute
  AttributeMap k_attr;
  k_attr.set("k", int64_t{1});
  auto v1 = run_op("TopK", k_attr, {x}, 2, 1);
  expect_near(v1[0], {2, 1}, {3, 5});
  EXPECT_EQ(v1[1].to_int64_vector(), (std::vector<int64_t>{3, 0}));
  EXPECT_THROW(run_op("TopK", {}, {x}, 2, 1), KernelError);                            // k missing
  EXPECT_THROW(run_op("TopK", k_attr, {x, k}, 2, 10), KernelError);                    // attr at 10
  EXPECT_THROW(run_op("TopK", {}, {x, make<int64_t>({1}, {5})}, 2, 11), KernelError);  // k > n
  EXPECT_THROW(run_op("TopK", {}, {x, make<int64_t>({1}, {-1})}, 2, 11), KernelError);
}

TEST(Reduce, Errors) {
  EXPECT_THROW(run_op("ReduceSum", reduce_attrs({3}, 1), {example()}, 1, 11), KernelError);
  EXPECT_THROW(run_op("ReduceSum", reduce_attrs({1, -2}, 1), {example()}, 1, 11), KernelError);
  EXPECT_THROW(run_op("ReduceSum", {}, {example(), make<int32_t>({1}, {0})}, 1, 13), KernelError);
  EXPECT_THROW(run_op("ReduceMax", {}, {make<bool>({1}, {true})}, 1, 13), KernelError);
}

}  // namespace
}  // namespace openbpu::kernels::testing
