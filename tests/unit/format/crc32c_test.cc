// CRC-32C against published check values and a bit-at-a-time reference.
#include "openbpu/format/crc32c.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string_view>
#include <vector>

namespace openbpu::format {
namespace {

std::span<const uint8_t> bytes_of(std::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

// The definition, one bit at a time.
uint32_t reference_crc32c(std::span<const uint8_t> bytes) {
  uint32_t crc = 0xFFFFFFFFu;
  for (uint8_t b : bytes) {
    crc ^= b;
    for (int i = 0; i < 8; ++i) crc = (crc >> 1) ^ ((crc & 1u) != 0 ? 0x82F63B78u : 0u);
  }
  return ~crc;
}

TEST(Crc32c, CheckValue) { EXPECT_EQ(crc32c(bytes_of("123456789")), 0xE3069283u); }

TEST(Crc32c, Rfc3720TestVectors) {
  std::vector<uint8_t> zeros(32, 0x00), ones(32, 0xFF), ascending(32), descending(32);
  for (int i = 0; i < 32; ++i) {
    ascending[i] = static_cast<uint8_t>(i);
    descending[i] = static_cast<uint8_t>(31 - i);
  }
  EXPECT_EQ(crc32c(zeros), 0x8A9136AAu);
  EXPECT_EQ(crc32c(ones), 0x62A8AB43u);
  EXPECT_EQ(crc32c(ascending), 0x46DD794Eu);
  EXPECT_EQ(crc32c(descending), 0x113FDB5Cu);
}

TEST(Crc32c, EmptyIsZero) { EXPECT_EQ(crc32c({}), 0u); }

TEST(Crc32c, MatchesBitwiseReferenceAtEveryLengthAndOffset) {
  std::mt19937 rng(20240611);
  std::vector<uint8_t> data(300);
  for (auto& b : data) b = static_cast<uint8_t>(rng());
  for (size_t offset = 0; offset < 9; ++offset) {
    for (size_t length = 0; offset + length <= data.size(); length += 7) {
      const std::span<const uint8_t> piece(data.data() + offset, length);
      ASSERT_EQ(crc32c(piece), reference_crc32c(piece)) << "offset " << offset << " length " << length;
    }
  }
}

TEST(Crc32c, ContinuesAcrossPieces) {
  const std::string_view text = "The quick brown fox jumps over the lazy dog";
  const auto all = bytes_of(text);
  for (size_t split = 0; split <= all.size(); ++split) {
    EXPECT_EQ(crc32c(all.subspan(split), crc32c(all.first(split))), crc32c(all)) << split;
  }
}

}  // namespace
}  // namespace openbpu::format
