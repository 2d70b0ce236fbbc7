#include "openbpu/simulator/integer_arithmetic.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace openbpu::simulator {
namespace {

TEST(IntegerArithmetic, RoundShiftRightRoundsHalfUp) {
  EXPECT_EQ(round_shift_right(5, 1), 3);    // 2.5 → 3
  EXPECT_EQ(round_shift_right(-5, 1), -2);  // -2.5 → -2
  EXPECT_EQ(round_shift_right(7, 2), 2);    // 1.75 → 2
  EXPECT_EQ(round_shift_right(-7, 2), -2);  // -1.75 → -2
  EXPECT_EQ(round_shift_right(-6, 2), -1);  // -1.5 → -1
  EXPECT_EQ(round_shift_right(123, 0), 123);
}

TEST(IntegerArithmetic, FixedPointMultiplierIsNormalisedAndAccurate) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> exponent(-30, 20);
  for (int i = 0; i < 10000; ++i) {
    const double real = std::pow(2.0, exponent(rng));
    const FixedPointMultiplier m = to_fixed_point(real);
    ASSERT_GE(m.multiplier, 1 << 30) << "seed 7 case " << i << " real " << real;
    ASSERT_GE(m.shift, 0);
    EXPECT_NEAR(to_real(m) / real, 1.0, 1e-9) << real;
  }
  EXPECT_EQ(to_fixed_point(0.0), FixedPointMultiplier{});
  EXPECT_EQ(to_fixed_point(1.0).multiplier, 1 << 30);
  EXPECT_EQ(to_fixed_point(1.0).shift, 30);
  EXPECT_THROW(to_fixed_point(-1.0), std::invalid_argument);
  EXPECT_THROW(to_fixed_point(NAN), std::invalid_argument);
}

TEST(IntegerArithmetic, RequantizeMatchesRoundedRealProduct) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int64_t> acc(-(int64_t{1} << 40), int64_t{1} << 40);
  std::uniform_real_distribution<double> scale(1e-7, 1e-2);
  for (int i = 0; i < 20000; ++i) {
    const int64_t a = acc(rng);
    const FixedPointMultiplier m = to_fixed_point(scale(rng));
    const double exact = static_cast<double>(a) * to_real(m);
    // half-up rounding of the exact fixed-point product (doubles are exact enough here
    // except at exact ties, which the integer path resolves upwards)
    const int64_t got = apply_multiplier(a, m);
    ASSERT_LE(std::fabs(static_cast<double>(got) - exact), 0.5 + 1e-6) << "acc " << a;
  }
  EXPECT_EQ(requantize<int8_t>(1 << 20, to_fixed_point(1.0)), 127);
  EXPECT_EQ(requantize<int8_t>(-(1 << 20), to_fixed_point(1.0)), -128);
  EXPECT_EQ(requantize<int16_t>(300, to_fixed_point(0.5)), 150);
  EXPECT_EQ(requantize<int16_t>(-3, to_fixed_point(0.5)), -1);  // -1.5 → -1 (half up)
}

TEST(IntegerArithmetic, ValidMultipliersAreTheFormsOfToFixedPoint) {
  EXPECT_TRUE(is_valid_multiplier({}));
  EXPECT_TRUE(is_valid_multiplier(to_fixed_point(0.37)));
  EXPECT_TRUE(is_valid_multiplier({INT32_MAX, kMaxMultiplierShift}));
  EXPECT_FALSE(is_valid_multiplier({(1 << 30) - 1, 10}));  // not normalised
  EXPECT_FALSE(is_valid_multiplier({-(1 << 30), 10}));
  EXPECT_FALSE(is_valid_multiplier({1 << 30, -1}));
  EXPECT_FALSE(is_valid_multiplier({1 << 30, kMaxMultiplierShift + 1}));
}

TEST(IntegerArithmetic, Int32MultiplierPathsEqualThe128BitOne) {
  const uint32_t seed = 23;
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> any_int32(INT32_MIN, INT32_MAX);
  std::uniform_int_distribution<int32_t> normalised(1 << 30, INT32_MAX);
  const int32_t edge_x[] = {INT32_MIN, INT32_MIN + 1, -65536, -3, -1, 0, 1, 2, 65535, INT32_MAX};
  const int32_t edge_m[] = {0, 1 << 30, (1 << 30) + 1, INT32_MAX};
  for (int shift = 0; shift <= kMaxMultiplierShift; ++shift) {
    for (int32_t x : edge_x) {
      for (int32_t m : edge_m) {
        const FixedPointMultiplier f{m, shift};
        ASSERT_EQ(apply_multiplier_int32(x, f), apply_multiplier(x, f))
            << "x " << x << " multiplier " << m << " shift " << shift;
        ASSERT_EQ(PreparedMultiplier(f).apply(x), apply_multiplier(x, f))
            << "x " << x << " multiplier " << m << " shift " << shift;
      }
    }
    for (int i = 0; i < 2000; ++i) {
      const int32_t x = any_int32(rng);
      const FixedPointMultiplier f{normalised(rng), shift};
      ASSERT_EQ(apply_multiplier_int32(x, f), apply_multiplier(x, f))
          << "seed " << seed << " x " << x << " multiplier " << f.multiplier << " shift "
          << shift;
      ASSERT_EQ(PreparedMultiplier(f).apply(x), apply_multiplier(x, f))
          << "seed " << seed << " x " << x << " multiplier " << f.multiplier << " shift "
          << shift;
    }
  }
}

TEST(IntegerArithmetic, ResizeCoordinateRoundsToTenFractionalBitsAndClamps) {
  // half_pixel, 2 -> 4: c = ((2o+1)*2 - 4) / 8
  EXPECT_EQ(resize_linear_coordinate(-2, 8, 2), 0);      // -0.25 clamps to 0
  EXPECT_EQ(resize_linear_coordinate(2, 8, 2), 256);     // 0.25
  EXPECT_EQ(resize_linear_coordinate(6, 8, 2), 768);     // 0.75
  EXPECT_EQ(resize_linear_coordinate(10, 8, 2), 1024);   // 1.25 clamps to length - 1
  EXPECT_EQ(resize_linear_coordinate(1, 3, 5), 341);     // floor(1025 / 3)
  EXPECT_EQ(resize_linear_coordinate(2, 3, 5), 683);     // floor(2049 / 3)
  EXPECT_EQ(resize_linear_coordinate(7, 2, 9), 3584);    // 3.5 exactly
  EXPECT_EQ(resize_linear_coordinate(3, 1, 1), 0);       // one input position
  EXPECT_THROW(resize_linear_coordinate(1, 0, 4), std::invalid_argument);
}

TEST(IntegerArithmetic, QuantizeRoundsHalfToEvenAndSaturates) {
  EXPECT_EQ(quantize_int8(0.25f, 0.5f), 0);   // 0.5 → 0
  EXPECT_EQ(quantize_int8(0.75f, 0.5f), 2);   // 1.5 → 2
  EXPECT_EQ(quantize_int8(-0.75f, 0.5f), -2);
  EXPECT_EQ(quantize_int8(1000.f, 1.f), 127);
  EXPECT_EQ(quantize_int8(-1000.f, 1.f), -128);
  EXPECT_EQ(quantize_int8(NAN, 1.f), 0);
  EXPECT_EQ(quantize_int16(1e9f, 1.f), 32767);
  EXPECT_EQ(quantize_bias(1.0f, 0.1, 0.01), 1000);
  EXPECT_EQ(symmetric_scale(127.f, 8), 1.0f);
  EXPECT_EQ(symmetric_scale(0.f, 8), 1.0f);
}

TEST(IntegerArithmetic, Int8LutTabulatesTheFunction) {
  const LutInt8 lut = build_lut_int8([](double x) { return 1.0 / (1.0 + std::exp(-x)); },
                                     8.0f / 127, 1.0f / 127);
  EXPECT_EQ(lut.lookup(0), 64);     // sigmoid(0) = 0.5 → 63.5 → 64 (half to even)
  EXPECT_EQ(lut.lookup(127), 127);  // sigmoid(8) ≈ 0.99966
  EXPECT_EQ(lut.lookup(-128), 0);
}

TEST(IntegerArithmetic, Int16LutInterpolatesWithinOneStep) {
  const float in_scale = 8.0f / 32767, out_scale = 1.0f / 32767;
  auto sigmoid = [](double x) { return 1.0 / (1.0 + std::exp(-x)); };
  const LutInt16 lut = build_lut_int16(sigmoid, in_scale, out_scale);
  int worst = 0;
  for (int q = -32768; q <= 32767; ++q) {
    const double exact = sigmoid(q * static_cast<double>(in_scale)) / out_scale;
    worst = std::max(worst, static_cast<int>(std::lround(std::fabs(lut.lookup(static_cast<int16_t>(q)) - exact))));
  }
  EXPECT_LE(worst, 8);  // piecewise-linear with 256 segments: error well below 1e-3 of range
}

}  // namespace
}  // namespace openbpu::simulator
