#include <cmath>
#include <numeric>

#include "kernel_test_support.h"

namespace openbpu::kernels::testing {
namespace {

std::vector<float> counting(size_t n, float first = 1.0f) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), first);
  return v;
}

AttributeMap pool_attrs(std::vector<int64_t> kernel, std::vector<int64_t> strides = {},
                        std::vector<int64_t> pads = {}) {
  AttributeMap a;
  a.set("kernel_shape", std::move(kernel));
  if (!strides.empty()) a.set("strides", std::move(strides));
  if (!pads.empty()) a.set("pads", std::move(pads));
  return a;
}

TEST(AveragePool, DefaultAndCeilMode) {
  auto y = run_op("AveragePool", pool_attrs({2, 2}), {make<float>({1, 1, 3, 3}, counting(9))});
  expect_near(y[0], {1, 1, 2, 2}, {3, 4, 6, 7});
  AttributeMap ceil = pool_attrs({3, 3}, {2, 2});
  ceil.set("ceil_mode", int64_t{1});
  auto c = run_op("AveragePool", ceil, {make<float>({1, 1, 4, 4}, counting(16))});
  expect_near(c[0], {1, 1, 2, 2}, {6, 7.5, 12, 13.5});
}

TEST(AveragePool, CountIncludePad) {
  const Tensor x = make<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  auto excl = run_op("AveragePool", pool_attrs({2, 2}, {}, {1, 1, 1, 1}), {x});
  expect_near(excl[0], {1, 1, 3, 3}, {1, 1.5, 2, 2, 2.5, 3, 3, 3.5, 4});
  AttributeMap incl = pool_attrs({2, 2}, {}, {1, 1, 1, 1});
  incl.set("count_include_pad", int64_t{1});
  auto i = run_op("AveragePool", incl, {x});
  expect_near(i[0], {1, 1, 3, 3}, {0.25, 0.75, 0.5, 1, 2.5, 1.5, 0.75, 1.75, 1});
}

TEST(AveragePool, SameUpperAndThreeD) {
  AttributeMap same = pool_attrs({2});
  same.set("auto_pad", std::string("SAME_UPPER"));
  auto y = run_op("AveragePool", same, {make<double>({1, 1, 3}, {1, 2, 3})});
  expect_near(y[0], {1, 1, 3}, {1.5, 2.5, 3});
  auto d =
      run_op("AveragePool", pool_attrs({2, 2, 2}), {make<float>({1, 1, 2, 2, 2}, counting(8))});
  expect_near(d[0], {1, 1, 1, 1, 1}, {4.5});
}

TEST(MaxPool, IndicesInBothStorageOrders) {
  const Tensor x = make<float>({1, 1, 5, 5}, counting(25));
  auto y = run_op("MaxPool", pool_attrs({2, 2}, {2, 2}), {x}, 2);
  expect_near(y[0], {1, 1, 2, 2}, {7, 9, 17, 19});
  EXPECT_EQ(y[1].to_int64_vector(), (std::vector<int64_t>{6, 8, 16, 18}));
  AttributeMap col = pool_attrs({2, 2}, {2, 2});
  col.set("storage_order", int64_t{1});
  auto c = run_op("MaxPool", col, {x}, 2);
  EXPECT_EQ(c[1].to_int64_vector(), (std::vector<int64_t>{6, 16, 8, 18}));
  // Indices count the batch and channel planes.
  auto two = run_op("MaxPool", pool_attrs({2}), {make<float>({1, 2, 2}, {1, 0, 0, 1})}, 2);
  EXPECT_EQ(two[1].to_int64_vector(), (std::vector<int64_t>{0, 3}));
}

TEST(MaxPool, DilationsPadsAndIntegers) {
  AttributeMap dil = pool_attrs({2, 2});
  dil.set("dilations", std::vector<int64_t>{2, 2});
  auto y = run_op("MaxPool", dil, {make<float>({1, 1, 4, 4}, counting(16))});
  expect_near(y[0], {1, 1, 2, 2}, {11, 12, 15, 16});
  auto u =
      run_op("MaxPool", pool_attrs({3}, {}, {1, 1}), {make<uint8_t>({1, 1, 4}, {200, 3, 7, 255})});
  EXPECT_EQ(u[0].to_int64_vector(), (std::vector<int64_t>{200, 200, 255, 255}));
  auto s = run_op("MaxPool", pool_attrs({2}), {make<int8_t>({1, 1, 3}, {-5, -7, -6})});
  EXPECT_EQ(s[0].to_int64_vector(), (std::vector<int64_t>{-5, -6}));
}

TEST(Pool, RejectsBadWindows) {
  const Tensor x = make<float>({1, 1, 3, 3}, counting(9));
  EXPECT_THROW(run_op("MaxPool", {}, {x}), KernelError);  // kernel_shape is required
  EXPECT_THROW(run_op("MaxPool", pool_attrs({4, 4}), {x}), KernelError);
  EXPECT_THROW(run_op("AveragePool", pool_attrs({2}), {x}), KernelError);
  EXPECT_THROW(run_op("AveragePool", pool_attrs({2, 2}, {0, 1}), {x}), KernelError);
  EXPECT_THROW(run_op("MaxPool", pool_attrs({2, 2}), {make<int32_t>({1, 1, 2, 2}, {1, 2, 3, 4})}),
               KernelError);
}

TEST(GlobalPool, AverageMaxAndLp) {
  const Tensor x = make<float>({1, 2, 2, 2}, {1, 2, 3, 4, -1, -2, -3, -8});
  expect_near(run_op("GlobalAveragePool", {}, {x})[0], {1, 2, 1, 1}, {2.5, -3.5});
  expect_near(run_op("GlobalMaxPool", {}, {x})[0], {1, 2, 1, 1}, {4, -1});
  AttributeMap p1;
  p1.set("p", int64_t{1});
  expect_near(run_op("GlobalLpPool", p1, {x})[0], {1, 2, 1, 1}, {10, 14});
  expect_near(run_op("GlobalLpPool", {}, {x})[0], {1, 2, 1, 1}, {std::sqrt(30.0), std::sqrt(78.0)});
}

TEST(LpPool, PTwoAndThree) {
  auto y = run_op("LpPool", pool_attrs({2}), {make<float>({1, 1, 3}, {3, -4, 0})});
  expect_near(y[0], {1, 1, 2}, {5, 4});
  AttributeMap p3 = pool_attrs({2});
  p3.set("p", int64_t{3});
  auto c = run_op("LpPool", p3, {make<float>({1, 1, 2}, {1, 2})});
  expect_near(c[0], {1, 1, 1}, {std::cbrt(9.0)});
}

TEST(MaxUnpool, ScattersAtIndices) {
  auto y = run_op(
      "MaxUnpool", pool_attrs({2, 2}, {2, 2}),
      {make<float>({1, 1, 2, 2}, {1, 2, 3, 4}), make<int64_t>({1, 1, 2, 2}, {5, 7, 13, 15})});
  expect_near(y[0], {1, 1, 4, 4}, {0, 0, 0, 0, 0, 1, 0, 2, 0, 0, 0, 0, 0, 3, 0, 4});
  auto shaped = run_op("MaxUnpool", pool_attrs({2, 2}, {2, 2}),
                       {make<float>({1, 1, 1, 1}, {9}), make<int64_t>({1, 1, 1, 1}, {4}),
                        make<int64_t>({4}, {1, 1, 3, 3})});
  expect_near(shaped[0], {1, 1, 3, 3}, {0, 0, 0, 0, 9, 0, 0, 0, 0});
  EXPECT_THROW(run_op("MaxUnpool", pool_attrs({2, 2}, {2, 2}),
                      {make<float>({1, 1, 1, 1}, {9}), make<int64_t>({1, 1, 1, 1}, {4})}),
               KernelError);
}

}  // namespace
}  // namespace openbpu::kernels::testing

namespace openbpu::kernels::testing {
namespace {

TEST(Pool, HalfPrecision) {
  Tensor x(DataType::kFloat16, {1, 1, 4});
  const float values[] = {1, 2, 3, 5};
  for (int i = 0; i < 4; ++i) x.data<Float16>()[i] = Float16(values[i]);
  AttributeMap attrs;
  attrs.set("kernel_shape", std::vector<int64_t>{2});
  attrs.set("strides", std::vector<int64_t>{2});
  expect_near(run_op("AveragePool", attrs, {x})[0], {1, 1, 2}, {1.5, 4});
  expect_near(run_op("MaxPool", attrs, {x})[0], {1, 1, 2}, {2, 5});
  expect_near(run_op("GlobalAveragePool", {}, {x})[0], {1, 1, 1}, {2.75});
}

}  // namespace
}  // namespace openbpu::kernels::testing
