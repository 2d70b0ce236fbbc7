#include "kernel_test_support.h"

namespace openbpu::kernels::testing {
namespace {

using I64 = std::vector<int64_t>;

AttributeMap axis_attr(int64_t axis) {
  AttributeMap a;
  a.set("axis", axis);
  return a;
}

TEST(Gather, AxisZeroAndOneWithNegativeIndices) {
  const Tensor data = make<float>({3, 2}, {1.0f, 1.2f, 2.3f, 3.4f, 4.5f, 5.7f});
  auto y = run_op("Gather", {}, {data, make<int64_t>({2, 2}, {0, 1, -2, 2})});
  expect_near(y[0], {2, 2, 2}, {1.0, 1.2, 2.3, 3.4, 2.3, 3.4, 4.5, 5.7});
  const Tensor data3 = make<int8_t>({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  y = run_op("Gather", axis_attr(1), {data3, make<int32_t>({1, 2}, {0, -1})});
  EXPECT_EQ(y[0].shape(), (Shape{3, 1, 2}));
  EXPECT_EQ(y[0].to_int64_vector(), (I64{1, 3, 4, 6, 7, 9}));
  y = run_op("Gather", {}, {data3, Tensor::scalar<int64_t>(2)});
  EXPECT_EQ(y[0].shape(), (Shape{3}));
  EXPECT_EQ(y[0].to_int64_vector(), (I64{7, 8, 9}));
}

TEST(Gather, RejectsOutOfRangeIndices) {
  const Tensor data = make<float>({3, 2}, {1, 2, 3, 4, 5, 6});
  EXPECT_THROW(run_op("Gather", {}, {data, make<int64_t>({1}, {3})}), KernelError);
  EXPECT_THROW(run_op("Gather", {}, {data, make<int64_t>({1}, {-4})}), KernelError);
  EXPECT_THROW(run_op("Gather", {}, {data, make<float>({1}, {0})}), KernelError);
  EXPECT_THROW(run_op("Gather", axis_attr(2), {data, make<int64_t>({1}, {0})}), KernelError);
}

TEST(GatherElements, PicksAlongAxis) {
  const Tensor data = make<float>({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  auto y = run_op("GatherElements", {}, {data, make<int64_t>({2, 3}, {-1, -2, 0, -2, 0, 0})});
  expect_near(y[0], {2, 3}, {7, 5, 3, 4, 2, 3});
  y = run_op("GatherElements", axis_attr(1),
             {make<int32_t>({2, 2}, {1, 2, 3, 4}), make<int64_t>({2, 2}, {0, 0, 1, 0})});
  EXPECT_EQ(y[0].to_int64_vector(), (I64{1, 1, 4, 3}));
  EXPECT_THROW(run_op("GatherElements", {}, {data, make<int64_t>({1, 1}, {3})}), KernelError);
  EXPECT_THROW(run_op("GatherElements", {}, {data, make<int64_t>({3}, {0, 0, 0})}), KernelError);
  EXPECT_THROW(run_op("GatherElements", {}, {data, make<int64_t>({1, 4}, {0, 0, 0, 0})}),
               KernelError);  // indices wider than the data outside the axis
}

TEST(GatherND, TuplesAndBatchDims) {
  const Tensor data = make<int32_t>({2, 2}, {0, 1, 2, 3});
  EXPECT_EQ(
      run_op("GatherND", {}, {data, make<int64_t>({2, 2}, {0, 0, 1, 1})})[0].to_int64_vector(),
      (I64{0, 3}));
  auto y = run_op("GatherND", {}, {data, make<int64_t>({2, 1}, {1, 0})});
  EXPECT_EQ(y[0].shape(), (Shape{2, 2}));
  EXPECT_EQ(y[0].to_int64_vector(), (I64{2, 3, 0, 1}));
  AttributeMap batch;
  batch.set("batch_dims", int64_t{1});
  const Tensor data3 = make<int32_t>({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  y = run_op("GatherND", batch, {data3, make<int64_t>({2, 1}, {1, 0})});
  EXPECT_EQ(y[0].shape(), (Shape{2, 2}));
  EXPECT_EQ(y[0].to_int64_vector(), (I64{2, 3, 4, 5}));
  EXPECT_THROW(run_op("GatherND", {}, {data, make<int64_t>({1, 2}, {0, 2})}), KernelError);
  EXPECT_THROW(run_op("GatherND", {}, {data, make<int64_t>({1, 3}, {0, 0, 0})}), KernelError);
}

TEST(ScatterElements, ReplacesAndReduces) {
  const Tensor data = make<float>({1, 5}, {1, 2, 3, 4, 5});
  const Tensor indices = make<int64_t>({1, 2}, {1, -2});
  const Tensor updates = make<float>({1, 2}, {1.1f, 2.1f});
  expect_near(run_op("ScatterElements", axis_attr(1), {data, indices, updates})[0], {1, 5},
              {1, 1.1, 3, 2.1, 5});
  AttributeMap add = axis_attr(1);
  add.set("reduction", std::string("add"));
  const Tensor dup = make<int64_t>({1, 2}, {1, 1});
  expect_near(run_op("ScatterElements", add, {data, dup, updates})[0], {1, 5}, {1, 5.2, 3, 4, 5});
  AttributeMap mx = axis_attr(1);
  mx.set("reduction", std::string("max"));
  expect_near(
      run_op("ScatterElements", mx, {data, make<int64_t>({1, 2}, {4, 0}), updates}, 1, 18)[0],
      {1, 5}, {2.1, 2, 3, 4, 5});
  // the deprecated opset-9 name
  expect_near(run_op("Scatter", axis_attr(1), {data, indices, updates}, 1, 10)[0], {1, 5},
              {1, 1.1, 3, 2.1, 5});
}

TEST(ScatterElements, RejectsBadInputs) {
  const Tensor data = make<float>({1, 5}, {1, 2, 3, 4, 5});
  const Tensor updates = make<float>({1, 2}, {1, 2});
  EXPECT_THROW(
      run_op("ScatterElements", axis_attr(1), {data, make<int64_t>({1, 2}, {5, 0}), updates}),
      KernelError);
  EXPECT_THROW(run_op("ScatterElements", axis_attr(1), {data, make<int64_t>({1, 1}, {0}), updates}),
               KernelError);
  AttributeMap bad = axis_attr(1);
  bad.set("reduction", std::string("sum"));
  EXPECT_THROW(run_op("ScatterElements", bad, {data, make<int64_t>({1, 2}, {0, 1}), updates}),
               KernelError);
}

TEST(ScatterND, SlicesAndReductions) {
  const Tensor data = make<float>({8}, {1, 2, 3, 4, 5, 6, 7, 8});
  const Tensor indices = make<int64_t>({4, 1}, {4, 3, 1, 7});
  const Tensor updates = make<float>({4}, {9, 10, 11, 12});
  expect_near(run_op("ScatterND", {}, {data, indices, updates})[0], {8},
              {1, 11, 3, 10, 9, 6, 7, 12});
  const Tensor matrix = make<int32_t>({2, 2}, {1, 2, 3, 4});
  AttributeMap mul;
  mul.set("reduction", std::string("mul"));
  auto y = run_op("ScatterND", mul,
                  {matrix, make<int64_t>({2, 1}, {1, 1}), make<int32_t>({2, 2}, {2, 3, 4, 5})});
  EXPECT_EQ(y[0].to_int64_vector(), (I64{1, 2, 24, 60}));
  EXPECT_THROW(run_op("ScatterND", {}, {data, indices, make<float>({3}, {1, 2, 3})}), KernelError);
  EXPECT_THROW(run_op("ScatterND", {}, {data, make<int64_t>({1, 1}, {8}), make<float>({1}, {1})}),
               KernelError);
}

}  // namespace
}  // namespace openbpu::kernels::testing
