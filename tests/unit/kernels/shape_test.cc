#include "kernel_test_support.h"

namespace openbpu::kernels::testing {
namespace {

using I64 = std::vector<int64_t>;

TEST(Reshape, ZeroCopiesAndMinusOneInfers) {
  const Tensor x = iota_floats({2, 3, 4});
  auto y = run_op("Reshape", {}, {x, make<int64_t>({4}, {2, 0, 1, -1})});
  EXPECT_EQ(y[0].shape(), (Shape{2, 3, 1, 4}));
  EXPECT_EQ(y[0].raw_data(), x.raw_data());  // shares the input's storage
  y = run_op("Reshape", {}, {x, make<int64_t>({2}, {-1, 6})});
  EXPECT_EQ(y[0].shape(), (Shape{4, 6}));
}

TEST(Reshape, AllowZeroKeepsLiteralZero) {
  AttributeMap attrs;
  attrs.set("allowzero", int64_t{1});
  const Tensor x(DataType::kFloat32, {0, 3, 4});
  auto y = run_op("Reshape", attrs, {x, make<int64_t>({3}, {3, 4, 0})});
  EXPECT_EQ(y[0].shape(), (Shape{3, 4, 0}));
  EXPECT_THROW(run_op("Reshape", attrs, {x, make<int64_t>({2}, {0, -1})}), KernelError);
}

TEST(Reshape, RejectsBadShapes) {
  const Tensor x = iota_floats({2, 3});
  EXPECT_THROW(run_op("Reshape", {}, {x, make<int64_t>({2}, {-1, -1})}), KernelError);
  EXPECT_THROW(run_op("Reshape", {}, {x, make<int64_t>({2}, {4, 2})}), KernelError);
  EXPECT_THROW(run_op("Reshape", {}, {x, make<int64_t>({2}, {-2, 3})}), KernelError);
  EXPECT_THROW(run_op("Reshape", {}, {x, make<int64_t>({3}, {1, 1, 0})}), KernelError);
  EXPECT_THROW(run_op("Reshape", {}, {x, make<int32_t>({2}, {3, 2})}), KernelError);
}

TEST(Shape, StartAndEndAreClamped) {
  const Tensor x(DataType::kFloat32, {3, 4, 5});
  EXPECT_EQ(run_op("Shape", {}, {x})[0].to_int64_vector(), (I64{3, 4, 5}));
  AttributeMap attrs;
  attrs.set("start", int64_t{-10});
  attrs.set("end", int64_t{-1});
  EXPECT_EQ(run_op("Shape", attrs, {x})[0].to_int64_vector(), (I64{3, 4}));
  AttributeMap empty;
  empty.set("start", int64_t{2});
  empty.set("end", int64_t{1});
  EXPECT_EQ(run_op("Shape", empty, {x})[0].shape(), (Shape{0}));
}

TEST(Size, CountsElements) {
  auto y = run_op("Size", {}, {Tensor(DataType::kInt8, {3, 4, 5})});
  EXPECT_EQ(y[0].shape(), Shape{});
  EXPECT_EQ(y[0].int_at(0), 60);
}

TEST(Flatten, AxisSplitsTheShape) {
  const Tensor x(DataType::kFloat16, {2, 3, 4, 5});
  EXPECT_EQ(run_op("Flatten", {}, {x})[0].shape(), (Shape{2, 60}));
  AttributeMap attrs;
  attrs.set("axis", int64_t{0});
  EXPECT_EQ(run_op("Flatten", attrs, {x})[0].shape(), (Shape{1, 120}));
  attrs.set("axis", int64_t{-1});
  EXPECT_EQ(run_op("Flatten", attrs, {x})[0].shape(), (Shape{24, 5}));
  attrs.set("axis", int64_t{5});
  EXPECT_THROW(run_op("Flatten", attrs, {x}), KernelError);
}

TEST(Squeeze, AxesAsAttributeInputOrAllOnes) {
  const Tensor x(DataType::kFloat32, {1, 3, 1, 5});
  AttributeMap attrs;
  attrs.set("axes", I64{-2});
  EXPECT_EQ(run_op("Squeeze", attrs, {x}, 1, 11)[0].shape(), (Shape{1, 3, 5}));
  EXPECT_EQ(run_op("Squeeze", {}, {x, make<int64_t>({1}, {0})})[0].shape(), (Shape{3, 1, 5}));
  EXPECT_EQ(run_op("Squeeze", {}, {x})[0].shape(), (Shape{3, 5}));
  EXPECT_THROW(run_op("Squeeze", {}, {x, make<int64_t>({1}, {1})}), KernelError);
  EXPECT_THROW(run_op("Squeeze", attrs, {x}, 1, 13), KernelError);  // attribute removed in 13
}

TEST(Unsqueeze, InsertsAxesOfTheOutputRank) {
  const Tensor x(DataType::kFloat32, {3, 4, 5});
  auto y = run_op("Unsqueeze", {}, {x, make<int64_t>({3}, {5, 4, 2})});
  EXPECT_EQ(y[0].shape(), (Shape{3, 4, 1, 5, 1, 1}));
  AttributeMap attrs;
  attrs.set("axes", I64{0, -1});
  EXPECT_EQ(run_op("Unsqueeze", attrs, {x}, 1, 11)[0].shape(), (Shape{1, 3, 4, 5, 1}));
  EXPECT_THROW(run_op("Unsqueeze", {}, {x, make<int64_t>({2}, {1, 1})}), KernelError);
  EXPECT_THROW(run_op("Unsqueeze", {}, {x, make<int64_t>({1}, {4})}), KernelError);
  EXPECT_THROW(run_op("Unsqueeze", {}, {x}, 1, 11), KernelError);  // axes attribute required
}

TEST(Expand, BroadcastsBothWays) {
  const Tensor x = make<float>({3, 1}, {1, 2, 3});
  auto y = run_op("Expand", {}, {x, make<int64_t>({3}, {2, 1, 2})});
  expect_near(y[0], {2, 3, 2}, {1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3});
  y = run_op("Expand", {}, {make<int16_t>({2}, {7, 8}), make<int64_t>({2}, {2, 1})});
  EXPECT_EQ(y[0].shape(), (Shape{2, 2}));
  EXPECT_EQ(y[0].to_int64_vector(), (I64{7, 8, 7, 8}));
  EXPECT_THROW(run_op("Expand", {}, {x, make<int64_t>({2}, {2, 1})}), KernelError);
}

TEST(Identity, SharesStorage) {
  const Tensor x = make<int32_t>({2}, {1, 2});
  auto y = run_op("Identity", {}, {x});
  EXPECT_EQ(y[0].raw_data(), x.raw_data());
  EXPECT_EQ(y[0].shape(), x.shape());
}

TEST(Dropout, InferencePassesThroughWithTrueMask) {
  const Tensor x = make<float>({3}, {-1, 0, 1});
  auto y = run_op("Dropout", {}, {x, Tensor::scalar<float>(0.3f)}, 2);
  expect_near(y[0], {3}, {-1, 0, 1});
  EXPECT_EQ(y[1].dtype(), DataType::kBool);
  EXPECT_EQ(y[1].to_int64_vector(), (I64{1, 1, 1}));
  AttributeMap old;
  old.set("ratio", 0.2f);
  expect_near(run_op("Dropout", old, {x}, 1, 11)[0], {3}, {-1, 0, 1});
}

TEST(Dropout, TrainingMaskFollowsTheSeededReference) {
  // numpy: np.random.seed(0); np.random.uniform(0, 1, 10) >= 0.5
  //   -> T T T T F T F T T F
  AttributeMap attrs;
  attrs.set("seed", int64_t{0});
  Tensor training(DataType::kBool, {});
  training.data<bool>()[0] = true;
  Tensor x(DataType::kFloat32, {10});
  for (int i = 0; i < 10; ++i) x.data<float>()[i] = 1.0f;
  auto y = run_op("Dropout", attrs, {x, Tensor::scalar<float>(0.5f), training}, 2);
  EXPECT_EQ(y[1].to_int64_vector(), (I64{1, 1, 1, 1, 0, 1, 0, 1, 1, 0}));
  expect_near(y[0], {10}, {2, 2, 2, 2, 0, 2, 0, 2, 2, 0});
  EXPECT_THROW(run_op("Dropout", attrs, {x, Tensor::scalar<float>(1.0f), training}), KernelError);
}

}  // namespace
}  // namespace openbpu::kernels::testing
