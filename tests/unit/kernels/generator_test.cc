#include "kernel_test_support.h"

namespace openbpu::kernels::testing {
namespace {

using I64 = std::vector<int64_t>;

TEST(Constant, TensorAndListAttributes) {
  AttributeMap attrs;
  attrs.set("value", make<float>({2, 2}, {1, 2, 3, 4}));
  expect_near(run_op("Constant", attrs, {})[0], {2, 2}, {1, 2, 3, 4});
  AttributeMap floats;
  floats.set("value_floats", std::vector<float>{0.5f, 1.5f});
  expect_near(run_op("Constant", floats, {})[0], {2}, {0.5, 1.5});
  AttributeMap one;
  one.set("value_int", int64_t{7});
  auto y = run_op("Constant", one, {});
  EXPECT_EQ(y[0].dtype(), DataType::kInt64);
  EXPECT_EQ(y[0].shape(), Shape{});
  EXPECT_EQ(y[0].int_at(0), 7);
}

TEST(Constant, RejectsMissingDuplicateOrStringValues) {
  EXPECT_THROW(run_op("Constant", {}, {}), KernelError);
  AttributeMap two;
  two.set("value_int", int64_t{1});
  two.set("value_float", 1.0f);
  EXPECT_THROW(run_op("Constant", two, {}), KernelError);
  AttributeMap text;
  text.set("value_string", std::string("hello"));
  EXPECT_THROW(run_op("Constant", text, {}), KernelError);
}

TEST(ConstantOfShape, FillsWithTheValue) {
  auto y = run_op("ConstantOfShape", {}, {make<int64_t>({2}, {2, 3})});
  expect_near(y[0], {2, 3}, {0, 0, 0, 0, 0, 0});
  AttributeMap attrs;
  attrs.set("value", make<int32_t>({1}, {-5}));
  y = run_op("ConstantOfShape", attrs, {make<int64_t>({1}, {3})});
  EXPECT_EQ(y[0].dtype(), DataType::kInt32);
  EXPECT_EQ(y[0].to_int64_vector(), (I64{-5, -5, -5}));
  y = run_op("ConstantOfShape", attrs, {make<int64_t>({0}, {})});
  EXPECT_EQ(y[0].shape(), Shape{});  // empty shape: a scalar
  EXPECT_THROW(run_op("ConstantOfShape", attrs, {make<int64_t>({1}, {-1})}), KernelError);
  attrs.set("value", make<int32_t>({2}, {1, 2}));
  EXPECT_THROW(run_op("ConstantOfShape", attrs, {make<int64_t>({1}, {3})}), KernelError);
}

TEST(Range, FloatAndIntegerDirections) {
  auto y = run_op("Range", {},
                  {Tensor::scalar<float>(1), Tensor::scalar<float>(5), Tensor::scalar<float>(2)});
  expect_near(y[0], {2}, {1, 3});
  y = run_op(
      "Range", {},
      {Tensor::scalar<int32_t>(10), Tensor::scalar<int32_t>(6), Tensor::scalar<int32_t>(-3)});
  EXPECT_EQ(y[0].to_int64_vector(), (I64{10, 7}));
  y = run_op("Range", {},
             {Tensor::scalar<int64_t>(0), Tensor::scalar<int64_t>(-3), Tensor::scalar<int64_t>(1)});
  EXPECT_EQ(y[0].shape(), Shape{0});
  EXPECT_THROW(
      run_op("Range", {},
             {Tensor::scalar<int64_t>(0), Tensor::scalar<int64_t>(3), Tensor::scalar<int64_t>(0)}),
      KernelError);
  EXPECT_THROW(
      run_op("Range", {},
             {Tensor::scalar<int64_t>(0), Tensor::scalar<int32_t>(3), Tensor::scalar<int64_t>(1)}),
      KernelError);
}

TEST(EyeLike, DiagonalOffsetAndType) {
  AttributeMap attrs;
  attrs.set("k", int64_t{1});
  attrs.set("dtype", int64_t{11});  // double
  auto y = run_op("EyeLike", attrs, {Tensor(DataType::kInt32, {3, 4})});
  EXPECT_EQ(y[0].dtype(), DataType::kFloat64);
  expect_near(y[0], {3, 4}, {0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1});
  attrs.set("k", int64_t{-5});
  expect_near(run_op("EyeLike", attrs, {Tensor(DataType::kInt32, {2, 2})})[0], {2, 2},
              {0, 0, 0, 0});
  EXPECT_THROW(run_op("EyeLike", {}, {Tensor(DataType::kInt32, {3})}), KernelError);
}

TEST(OneHot, AxisAndNegativeIndices) {
  const Tensor depth = Tensor::scalar<float>(4);
  const Tensor values = make<float>({2}, {1, 3});
  auto y = run_op("OneHot", {}, {make<int64_t>({3}, {0, -1, 7}), depth, values});
  expect_near(y[0], {3, 4}, {3, 1, 1, 1, 1, 1, 1, 3, 1, 1, 1, 1});
  AttributeMap attrs;
  attrs.set("axis", int64_t{0});
  y = run_op("OneHot", attrs, {make<float>({2}, {1.7f, 3}), depth, values});
  expect_near(y[0], {4, 2}, {1, 1, 3, 1, 1, 1, 1, 3});
  // before opset 11 negative indices are out of range
  y = run_op("OneHot", {}, {make<int64_t>({1}, {-1}), depth, values}, 1, 9);
  expect_near(y[0], {1, 4}, {1, 1, 1, 1});
  EXPECT_THROW(run_op("OneHot", {}, {make<int64_t>({1}, {0}), Tensor::scalar<float>(0), values}),
               KernelError);
  EXPECT_THROW(run_op("OneHot", {}, {make<int64_t>({1}, {0}), depth, make<float>({1}, {1})}),
               KernelError);
}

TEST(NonZero, ListsCoordinates) {
  Tensor x(DataType::kBool, {2, 2});
  x.data<bool>()[0] = true;
  x.data<bool>()[2] = true;
  x.data<bool>()[3] = true;
  auto y = run_op("NonZero", {}, {x});
  EXPECT_EQ(y[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(y[0].to_int64_vector(), (I64{0, 1, 1, 0, 0, 1}));
  y = run_op("NonZero", {}, {make<float>({3}, {0, -0.0f, 2})});
  EXPECT_EQ(y[0].to_int64_vector(), (I64{2}));
}

TEST(Unique, SortedAndFirstOccurrenceOrders) {
  const Tensor x = make<float>({6}, {2, 1, 1, 3, 4, 3});
  auto y = run_op("Unique", {}, {x}, 4);
  expect_near(y[0], {4}, {1, 2, 3, 4});
  EXPECT_EQ(y[1].to_int64_vector(), (I64{1, 0, 3, 4}));
  EXPECT_EQ(y[2].to_int64_vector(), (I64{1, 0, 0, 2, 3, 2}));
  EXPECT_EQ(y[3].to_int64_vector(), (I64{2, 1, 2, 1}));
  AttributeMap unsorted;
  unsorted.set("sorted", int64_t{0});
  y = run_op("Unique", unsorted, {x}, 4);
  expect_near(y[0], {4}, {2, 1, 3, 4});
  EXPECT_EQ(y[1].to_int64_vector(), (I64{0, 1, 3, 4}));
  EXPECT_EQ(y[2].to_int64_vector(), (I64{0, 1, 1, 2, 3, 2}));
  EXPECT_EQ(y[3].to_int64_vector(), (I64{1, 2, 2, 1}));
}

TEST(Unique, SlicesAlongAxis) {
  AttributeMap attrs;
  attrs.set("axis", int64_t{1});
  const Tensor x = make<float>({2, 4, 2}, {1, 1, 0, 1, 2, 1, 0, 1, 1, 1, 0, 1, 2, 1, 0, 1});
  auto y = run_op("Unique", attrs, {x}, 4);
  expect_near(y[0], {2, 3, 2}, {0, 1, 1, 1, 2, 1, 0, 1, 1, 1, 2, 1});
  EXPECT_EQ(y[1].to_int64_vector(), (I64{1, 0, 2}));
  EXPECT_EQ(y[2].to_int64_vector(), (I64{1, 0, 2, 0}));
  EXPECT_EQ(y[3].to_int64_vector(), (I64{2, 1, 1}));
  attrs.set("axis", int64_t{3});
  EXPECT_THROW(run_op("Unique", attrs, {x}, 4), KernelError);
}

}  // namespace
}  // namespace openbpu::kernels::testing
