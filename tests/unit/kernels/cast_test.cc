#include <cmath>
#include <limits>

#include "kernel_test_support.h"
#include "openbpu/kernels/numeric_cast.h"

namespace openbpu::kernels::testing {
namespace {

AttributeMap cast_to(DataType type) {
  AttributeMap attrs;
  attrs.set("to", static_cast<int64_t>(type));
  return attrs;
}

TEST(Cast, FloatToIntegersTruncatesAndSaturates) {
  const auto x = make<float>({6}, {1.9f, -1.9f, 300.f, -300.f, NAN, INFINITY});
  auto y = run_op("Cast", cast_to(DataType::kInt8), {x});
  EXPECT_EQ(y[0].dtype(), DataType::kInt8);
  EXPECT_EQ(y[0].to_int64_vector(), (std::vector<int64_t>{1, -1, 127, -128, 0, 127}));
  auto u = run_op("Cast", cast_to(DataType::kUint8), {x});
  EXPECT_EQ(u[0].to_int64_vector(), (std::vector<int64_t>{1, 0, 255, 0, 0, 255}));
  auto big = run_op("Cast", cast_to(DataType::kInt64), {make<double>({2}, {1e30, -1e30})});
  EXPECT_EQ(big[0].to_int64_vector(), (std::vector<int64_t>{std::numeric_limits<int64_t>::max(),
                                                            std::numeric_limits<int64_t>::min()}));
}

TEST(Cast, IntegerNarrowingWrapsAndBoolIsNonZero) {
  auto y = run_op("Cast", cast_to(DataType::kUint8), {make<int32_t>({3}, {256, 257, -1})});
  EXPECT_EQ(y[0].to_int64_vector(), (std::vector<int64_t>{0, 1, 255}));
  auto b = run_op("Cast", cast_to(DataType::kBool), {make<float>({3}, {0.f, -0.5f, NAN})});
  EXPECT_EQ(b[0].dtype(), DataType::kBool);
  EXPECT_EQ(b[0].to_int64_vector(), (std::vector<int64_t>{0, 1, 1}));
  auto f = run_op("Cast", cast_to(DataType::kFloat32), {make<bool>({2}, {true, false})});
  expect_near(f[0], {2}, {1.0, 0.0});
}

TEST(Cast, HalfFloatTypes) {
  auto h = run_op("Cast", cast_to(DataType::kFloat16), {make<double>({3}, {1.0, 0.1, 1e6})});
  EXPECT_EQ(h[0].dtype(), DataType::kFloat16);
  EXPECT_EQ(h[0].data<Float16>()[0].bits, 0x3c00);
  EXPECT_EQ(h[0].data<Float16>()[1].bits, 0x2e66);  // 0.1 rounded to nearest
  EXPECT_EQ(h[0].data<Float16>()[2].bits, 0x7c00);  // overflow → inf
  auto back = run_op("Cast", cast_to(DataType::kFloat64), {h[0]});
  EXPECT_DOUBLE_EQ(back[0].float_at(1),
                   static_cast<double>(static_cast<float>(Float16::from_bits(0x2e66))));
  auto bf = run_op("Cast", cast_to(DataType::kBFloat16), {make<float>({2}, {1.0f, 3.0f})});
  EXPECT_EQ(bf[0].data<BFloat16>()[0].bits, 0x3f80);
  EXPECT_EQ(bf[0].data<BFloat16>()[1].bits, 0x4040);
  auto i = run_op("Cast", cast_to(DataType::kInt32), {bf[0]});
  EXPECT_EQ(i[0].to_int64_vector(), (std::vector<int64_t>{1, 3}));
}

TEST(Cast, CastLikeTakesTheSecondInputsType) {
  auto y = run_op("CastLike", {}, {make<float>({2}, {1.5f, -2.5f}), make<int16_t>({1}, {0})});
  EXPECT_EQ(y[0].dtype(), DataType::kInt16);
  EXPECT_EQ(y[0].to_int64_vector(), (std::vector<int64_t>{1, -2}));
}

TEST(Cast, SaturateAttributeIsAccepted) {
  AttributeMap attrs = cast_to(DataType::kFloat32);
  attrs.set("saturate", int64_t{0});
  expect_near(run_op("Cast", attrs, {make<int32_t>({1}, {3})})[0], {1}, {3.0});
}

TEST(Cast, NumericCastEdgeCases) {
  EXPECT_EQ(numeric_cast<int64_t>(9.2233720368547758e18), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(numeric_cast<uint64_t>(1.8446744073709552e19), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(numeric_cast<uint64_t>(-1.0), 0u);
  EXPECT_EQ(numeric_cast<int32_t>(-2147483648.5), std::numeric_limits<int32_t>::min());
  EXPECT_EQ(numeric_cast<int16_t>(Float16(-3.75f)), -3);
  EXPECT_EQ(numeric_cast<bool>(BFloat16(0.0f)), false);
}

TEST(Cast, Errors) {
  const auto x = make<float>({1}, {1.f});
  EXPECT_THROW(run_op("Cast", {}, {x}), KernelError);                          // 'to' is required
  EXPECT_THROW(run_op("Cast", cast_to(DataType::kString), {x}), KernelError);  // strings
  AttributeMap unknown;
  unknown.set("to", int64_t{99});
  EXPECT_THROW(run_op("Cast", unknown, {x}), KernelError);
  AttributeMap bad_saturate = cast_to(DataType::kFloat32);
  bad_saturate.set("saturate", int64_t{2});
  EXPECT_THROW(run_op("Cast", bad_saturate, {x}), KernelError);
  EXPECT_THROW(run_op("CastLike", {}, {x}), KernelError);  // needs the target input
}

}  // namespace
}  // namespace openbpu::kernels::testing
