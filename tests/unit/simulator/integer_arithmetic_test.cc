#include "openbpu/simulator/integer_arithmetic.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

namespace openbpu::simulator {
namespace {

// The int64 form equals the definition on its domain: |x| < 2^62, shift in [0, 62].
TEST(IntegerArithmetic, RoundShiftRightInt64MatchesTheDefinition) {
  std::mt19937_64 rng(5);
  const int64_t limit = (int64_t{1} << 62) - 1;
  for (int i = 0; i < 200000; ++i) {
    const int bits = int(rng() % 63);
    int64_t x = static_cast<int64_t>(rng() >> (64 - bits - 1)) - (bits ? int64_t{1} << bits : 0);
    x = std::clamp<int64_t>(x, -limit, limit);
    const int shift = int(rng() % 63);
    ASSERT_EQ(round_shift_right_int64(x, shift), round_shift_right(x, shift)) << x << " >> " << shift;
  }
  for (int64_t x : {-limit, limit, int64_t{-1}, int64_t{0}, int64_t{1}}) {
    for (int shift = 0; shift <= 62; ++shift) EXPECT_EQ(round_shift_right_int64(x, shift), round_shift_right(x, shift));
  }
}

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

// The span forms (AVX-512 where the CPU has it) equal the scalar definition element by element:
// ties, saturation, NaN, infinities, denormals, the largest floats, a tail shorter than a
// vector, and 8- and 16-bit fake quantization.
TEST(IntegerArithmetic, QuantizeSpansEqualScalarQuantization) {
  std::mt19937 rng(41);
  std::uniform_real_distribution<float> wide(-300.0f, 300.0f);
  std::vector<float> x = {0.25f,
                          0.75f,
                          -0.75f,
                          1.25f,
                          -1.25f,
                          127.5f,
                          -128.5f,
                          126.5f,
                          1e30f,
                          -1e30f,
                          std::numeric_limits<float>::max(),
                          -std::numeric_limits<float>::max(),
                          std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity(),
                          std::nanf(""),
                          -std::nanf(""),
                          std::numeric_limits<float>::denorm_min(),
                          -0.0f,
                          0.0f,
                          32767.5f,
                          -32768.5f,
                          32766.5f};
  for (int i = 0; i < 1000; ++i) x.push_back(wide(rng));
  for (float scale : {1.0f, 0.5f, 0.0137f, 3e-5f, 2.5f}) {
    for (size_t n : {x.size(), size_t{7}, size_t{16}, size_t{33}}) {
      std::vector<int8_t> q8(n);
      std::vector<int16_t> q16(n);
      std::vector<float> f8(n), f16(n);
      quantize_int8(x.data(), int64_t(n), scale, q8.data());
      quantize_int16(x.data(), int64_t(n), scale, q16.data());
      fake_quantize(x.data(), int64_t(n), scale, 8, f8.data());
      fake_quantize(x.data(), int64_t(n), scale, 16, f16.data());
      for (size_t i = 0; i < n; ++i) {
        const int8_t w8 = quantize_int8(x[i], scale);
        const int16_t w16 = quantize_int16(x[i], scale);
        ASSERT_EQ(q8[i], w8) << "x=" << x[i] << " scale=" << scale;
        ASSERT_EQ(q16[i], w16) << "x=" << x[i] << " scale=" << scale;
        ASSERT_EQ(std::bit_cast<uint32_t>(f8[i]), std::bit_cast<uint32_t>(dequantize(w8, scale)));
        ASSERT_EQ(std::bit_cast<uint32_t>(f16[i]), std::bit_cast<uint32_t>(dequantize(w16, scale)));
      }
    }
  }
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

TEST(IntegerArithmetic, SoftmaxExp2TableIsTwoToTheMinusFraction) {
  EXPECT_EQ(kSoftmaxExp2Q30.front(), int64_t{1} << 30);
  EXPECT_EQ(kSoftmaxExp2Q30.back(), int64_t{1} << 29);
  for (size_t j = 0; j < kSoftmaxExp2Q30.size(); ++j) {
    EXPECT_NEAR(double(kSoftmaxExp2Q30[j]), std::ldexp(std::exp2(-double(j) / 256.0), 30), 0.5) << j;
  }
  // Within 2 units of Q30 (interpolation) over 40 binades, then 0.
  for (int64_t t = 0; t < (int64_t{40} << 16); t += 977) {
    const double want = std::ldexp(std::exp2(-double(t) / 65536.0), 30);
    ASSERT_NEAR(double(softmax_exp2_q30(t)), want, 2.0 + want * 1e-5) << "t " << t;
  }
  EXPECT_EQ(softmax_exp2_q30(0), int64_t{1} << 30);
  EXPECT_EQ(softmax_exp2_q30(int64_t{1} << 16), int64_t{1} << 29);
  EXPECT_EQ(softmax_exp2_q30(int64_t{63} << 16), 0);
  EXPECT_EQ(softmax_exp2_q30(std::numeric_limits<int64_t>::max() / 2), 0);
  EXPECT_THROW(softmax_exp2_q30(-1), std::invalid_argument);
}

TEST(IntegerArithmetic, SoftmaxMultipliersRefuseScalesOutOfRange) {
  const SoftmaxMultipliers m = softmax_multipliers(0.1, 1.0 / 32767);
  EXPECT_NEAR(to_real(m.exponent) / (0.1 * 1.4426950408889634 * 65536), 1.0, 1e-9);
  EXPECT_NEAR(to_real(m.output), std::ldexp(1.0, -30) * 32767, 1e-15);
  EXPECT_THROW(softmax_multipliers(30000.0, 1.0 / 127), std::invalid_argument);
  EXPECT_THROW(softmax_multipliers(0.0, 1.0 / 127), std::invalid_argument);
  EXPECT_THROW(softmax_multipliers(0.1, -1.0), std::invalid_argument);
  EXPECT_THROW(softmax_multipliers(std::nan(""), 1.0 / 127), std::invalid_argument);
}

// The integer softmax against the float one on random rows: within one output step (int8 and
// int16), the maximum's probability never above the float one by more than a step, and every
// row sums to 1 within n/2 steps (each element is rounded once).
template <typename T>
void check_softmax_rows(uint32_t seed, int bits) {
  std::mt19937 rng(seed);
  const int64_t qmax = (int64_t{1} << (bits - 1)) - 1;
  for (int row = 0; row < 400; ++row) {
    const int64_t n = std::uniform_int_distribution<int64_t>(1, 300)(rng);
    const double in_scale = std::ldexp(1.0, std::uniform_int_distribution<int>(-14, 2)(rng)) * (bits == 8 ? 8 : 1);
    const double out_scale = 1.0 / double(qmax);
    std::vector<T> x(static_cast<size_t>(n)), y(static_cast<size_t>(n));
    std::uniform_int_distribution<int64_t> value(-qmax - 1, qmax);
    for (T& v : x) v = static_cast<T>(value(rng));
    const SoftmaxMultipliers m = softmax_multipliers(in_scale, out_scale);
    std::vector<int32_t> exps(static_cast<size_t>(n));
    softmax_row<T>(n, m, exps.data(), [&](int64_t k) { return x[size_t(k)]; }, [&](int64_t k, T v) { y[size_t(k)] = v; });
    double max_x = -1e300, sum = 0;
    for (T v : x) max_x = std::max(max_x, double(v) * in_scale);
    for (T v : x) sum += std::exp(double(v) * in_scale - max_x);
    double total = 0;
    for (int64_t k = 0; k < n; ++k) {
      const double p = std::exp(double(x[size_t(k)]) * in_scale - max_x) / sum;
      ASSERT_NEAR(double(y[size_t(k)]), p / out_scale, 1.0)
          << "seed " << seed << " row " << row << " n " << n << " in_scale " << in_scale << " k " << k;
      total += double(y[size_t(k)]) * out_scale;
    }
    EXPECT_NEAR(total, 1.0, (0.5 * double(n) + 1) * out_scale) << "seed " << seed << " row " << row;
  }
}

TEST(IntegerArithmetic, SoftmaxRowIsWithinOneStepOfTheFloatSoftmax) {
  check_softmax_rows<int8_t>(3, 8);
  check_softmax_rows<int16_t>(4, 16);
}

// softmax_row's 64-bit arithmetic against the steps as written (128-bit apply_multiplier and
// round_shift_right, the checked exp2) on random rows, int16 and int8 inputs, every binade of
// input scale and output widths.
TEST(IntegerArithmetic, SoftmaxRowEqualsTheStepsAsWritten) {
  std::mt19937 rng(9);
  for (int row = 0; row < 3000; ++row) {
    const bool int16_in = row % 2 == 0;
    const int64_t n = std::uniform_int_distribution<int64_t>(1, 200)(rng);
    const double in_scale = std::ldexp(1.0, std::uniform_int_distribution<int>(-16, 6)(rng));
    const double out_scale = row % 3 == 0 ? 1.0 / 127 : std::ldexp(1.0, -std::uniform_int_distribution<int>(7, 15)(rng));
    const SoftmaxMultipliers m = softmax_multipliers(in_scale, out_scale);
    const int64_t lo = int16_in ? -32768 : -128, hi = int16_in ? 32767 : 127;
    std::vector<int64_t> x(static_cast<size_t>(n));
    for (int64_t& v : x) v = std::uniform_int_distribution<int64_t>(lo, hi)(rng);
    std::vector<int16_t> fast(static_cast<size_t>(n));
    std::vector<int32_t> exps(static_cast<size_t>(n));
    softmax_row<int16_t>(n, m, exps.data(), [&](int64_t k) { return x[size_t(k)]; },
                         [&](int64_t k, int16_t v) { fast[size_t(k)] = v; });
    const int64_t mx = *std::max_element(x.begin(), x.end());
    Int128 sum = 0;
    for (int64_t v : x) sum += softmax_exp2_q30(apply_multiplier(mx - v, m.exponent));
    const int64_t reciprocal = static_cast<int64_t>((Int128{1} << 62) / sum);
    for (int64_t k = 0; k < n; ++k) {
      const int64_t e = softmax_exp2_q30(apply_multiplier(mx - x[size_t(k)], m.exponent));
      const int64_t p = round_shift_right(static_cast<Int128>(e) * reciprocal, 32);
      ASSERT_EQ(fast[size_t(k)], saturate<int16_t>(apply_multiplier(p, m.output)))
          << "row " << row << " n " << n << " in_scale " << in_scale << " k " << k;
    }
  }
}

TEST(IntegerArithmetic, SoftmaxRowOfEqualValuesIsUniformAndAllowsInPlace) {
  const SoftmaxMultipliers m = softmax_multipliers(0.25, 1.0 / 32767);
  std::vector<int16_t> x(4, int16_t{-700});
  int32_t exps[4];
  softmax_row<int16_t>(4, m, exps, [&](int64_t k) { return x[size_t(k)]; },
                       [&](int64_t k, int16_t v) { x[size_t(k)] = v; });
  for (int16_t v : x) EXPECT_EQ(v, 8192);  // round(0.25 * 32767)
  // One element: probability 1.
  std::vector<int8_t> one = {-5};
  softmax_row<int8_t>(1, softmax_multipliers(0.5, 1.0 / 127), exps, [&](int64_t) { return one[0]; },
                      [&](int64_t, int8_t v) { one[0] = v; });
  EXPECT_EQ(one[0], 127);
}

}  // namespace
}  // namespace openbpu::simulator
