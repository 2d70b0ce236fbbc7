#include "kernel_test_support.h"

namespace openbpu::kernels::testing {
namespace {

TEST(Unary, AbsOfIntegersAndFloats) {
  auto y = run_op("Abs", {}, {make<int32_t>({3}, {-2, 0, 5})});
  EXPECT_EQ(y[0].to_int64_vector(), (std::vector<int64_t>{2, 0, 5}));
  auto f = run_op("Abs", {}, {make<float>({2}, {-1.5f, 2.f})});
  expect_near(f[0], {2}, {1.5, 2.0});
}

TEST(Unary, SqrtRejectsIntegers) {
  EXPECT_THROW(run_op("Sqrt", {}, {make<int32_t>({1}, {4})}), KernelError);
}

TEST(Unary, RoundHalvesToEven) {
  auto y = run_op("Round", {}, {make<float>({4}, {0.5f, 1.5f, 2.5f, -0.5f})});
  expect_near(y[0], {4}, {0.0, 2.0, 2.0, -0.0});
}

TEST(Unary, Float16ComputesInFloat) {
  Tensor x(DataType::kFloat16, {2});
  x.data<Float16>()[0] = Float16(4.0f);
  x.data<Float16>()[1] = Float16(0.25f);
  auto y = run_op("Sqrt", {}, {x});
  expect_near(y[0], {2}, {2.0, 0.5});
}

TEST(Unary, IsInfHonoursDirection) {
  AttributeMap attrs;
  attrs.set("detect_negative", int64_t{0});
  auto y = run_op("IsInf", attrs, {make<float>({3}, {INFINITY, -INFINITY, 1.f})});
  EXPECT_EQ(y[0].to_int64_vector(), (std::vector<int64_t>{1, 0, 0}));
}

TEST(Unary, UnknownAttributeIsRejected) {
  AttributeMap attrs;
  attrs.set("alpha", 1.0f);
  EXPECT_THROW(run_op("Abs", attrs, {make<float>({1}, {1.f})}), KernelError);
}

TEST(Float16, RoundTripsAndRoundsToNearestEven) {
  EXPECT_EQ(Float16(1.0f).bits, 0x3c00);
  EXPECT_EQ(Float16(65504.0f).bits, 0x7bff);
  EXPECT_EQ(Float16(65520.0f).bits, 0x7c00);
  EXPECT_EQ(Float16(5.960464477539063e-08f).bits, 0x0001);
  EXPECT_FLOAT_EQ(static_cast<float>(Float16::from_bits(0x0001)), 5.960464477539063e-08f);
  EXPECT_FLOAT_EQ(static_cast<float>(Float16::from_bits(0xc000)), -2.0f);
  for (uint32_t b = 0; b < 0x7c00; ++b) {
    const auto h = Float16::from_bits(static_cast<uint16_t>(b));
    ASSERT_EQ(Float16(static_cast<float>(h)).bits, b);
  }
}

}  // namespace
}  // namespace openbpu::kernels::testing
