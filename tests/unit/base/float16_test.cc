#include "openbpu/base/float16.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace openbpu::base {
namespace {

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

TEST(Float16, KnownValues) {
  EXPECT_EQ(Float16::from_float(1.0f), 0x3c00);
  EXPECT_EQ(Float16::from_float(-2.0f), 0xc000);
  EXPECT_EQ(Float16::from_float(65504.0f), 0x7bff);
  EXPECT_EQ(Float16::from_float(65520.0f), 0x7c00);               // rounds up to inf
  EXPECT_EQ(Float16::from_float(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(Float16::from_float(std::ldexp(1.0f, -25)), 0x0000);  // halfway: to even
  EXPECT_EQ(Float16::from_float(-0.0f), 0x8000);
  EXPECT_EQ(Float16::from_float(std::numeric_limits<float>::quiet_NaN()), 0x7e00);
  EXPECT_EQ(Float16::to_float(0x3555), 0.333251953125f);
  EXPECT_EQ(Float16::to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(bits_of(Float16::to_float(0xfc00)), bits_of(-std::numeric_limits<float>::infinity()));
}

// Every non-NaN binary16 value converts to float and back to the same bits.
TEST(Float16, EveryValueRoundTrips) {
  for (uint32_t b = 0; b <= 0xffff; ++b) {
    const auto h = static_cast<uint16_t>(b);
    const float f = Float16::to_float(h);
    if (std::isnan(f)) {
      EXPECT_EQ((b >> 10) & 0x1f, 0x1fu);
      EXPECT_NE(b & 0x3ff, 0u);
      continue;
    }
    EXPECT_EQ(Float16::from_float(f), h) << std::hex << b;
  }
}

// The span conversions (and the in-place rounding) give the scalar codec's bits: every binary16
// pattern (signalling NaNs included) one way, and the other way every such value, its neighbours
// halfway between, the overflow edge, tiny values and NaN payloads.
TEST(Float16, SpanConversionsEqualTheScalarCodec) {
  std::vector<uint16_t> all(0x10000);
  for (uint32_t b = 0; b <= 0xffff; ++b) all[b] = static_cast<uint16_t>(b);
  std::vector<float> widened(all.size());
  float16_to_float(all.data(), widened.data(), static_cast<int64_t>(all.size()));
  for (uint32_t b = 0; b <= 0xffff; ++b) {
    ASSERT_EQ(bits_of(widened[b]), bits_of(Float16::to_float(static_cast<uint16_t>(b))))
        << std::hex << b;
  }
  std::vector<float> values;
  for (uint32_t b = 0; b <= 0xffff; b += 3) {
    const float f = Float16::to_float(static_cast<uint16_t>(b));
    values.push_back(f);
    values.push_back(std::nextafter(f, 0.0f));
    values.push_back(std::nextafter(f, std::numeric_limits<float>::infinity()));
  }
  for (uint32_t u : {0x477fefffu, 0x477ff000u, 0x33000000u, 0x33000001u, 0x7fc12345u, 0xff812345u,
                     0x7f800001u, 0x00000001u, 0x80000001u}) {
    float f;
    std::memcpy(&f, &u, sizeof f);
    values.push_back(f);
  }
  for (int64_t n : {static_cast<int64_t>(values.size()), int64_t{7}, int64_t{33}}) {
    std::vector<uint16_t> narrowed(static_cast<size_t>(n));
    float_to_float16(values.data(), narrowed.data(), n);
    std::vector<float> rounded(values.begin(), values.begin() + n);
    round_to_float16(rounded.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      const uint16_t want = Float16::from_float(values[size_t(i)]);
      ASSERT_EQ(narrowed[size_t(i)], want) << std::hex << bits_of(values[size_t(i)]);
      ASSERT_EQ(bits_of(rounded[size_t(i)]), bits_of(Float16::to_float(want)))
          << std::hex << bits_of(values[size_t(i)]);
    }
  }
}

TEST(BFloat16, RoundsToNearestEvenAndKeepsNaN) {
  EXPECT_EQ(BFloat16::from_float(1.0f), 0x3f80);
  EXPECT_EQ(BFloat16(1.00390625f).bits, 0x3f80);  // halfway, even stays
  EXPECT_EQ(BFloat16(1.01171875f).bits, 0x3f82);  // halfway, odd rounds up
  EXPECT_TRUE(std::isnan(static_cast<float>(BFloat16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(BFloat16::to_float(0xc000), -2.0f);
}

}  // namespace
}  // namespace openbpu::base
