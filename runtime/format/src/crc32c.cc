#include "openbpu/format/crc32c.h"

#include <array>
#include <cstddef>

namespace openbpu::format {

namespace {

constexpr uint32_t kPolynomial = 0x82F63B78u;  // reflected Castagnoli polynomial

// tables[0] is the classic byte-at-a-time table; tables[k][b] is the CRC of byte b followed
// by k zero bytes, which lets the main loop fold 8 input bytes per step (slicing by 8).
using Tables = std::array<std::array<uint32_t, 256>, 8>;

constexpr Tables make_tables() {
  Tables tables{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t crc = b;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1u) != 0 ? kPolynomial : 0u);
    tables[0][b] = crc;
  }
  for (size_t k = 1; k < 8; ++k) {
    for (uint32_t b = 0; b < 256; ++b) {
      const uint32_t prev = tables[k - 1][b];
      tables[k][b] = (prev >> 8) ^ tables[0][prev & 0xFFu];
    }
  }
  return tables;
}

constexpr Tables kTables = make_tables();
static_assert(kTables[0][1] == 0xF26B8303u, "CRC-32C table generation");

}  // namespace

uint32_t crc32c(std::span<const uint8_t> bytes, uint32_t crc) noexcept {
  crc = ~crc;
  const uint8_t* p = bytes.data();
  size_t n = bytes.size();
  while (n >= 8) {
    // Little-endian composition from bytes: no alignment or host byte-order assumption.
    const uint32_t lo = (static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
                         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24) ^
                        crc;
    crc = kTables[7][lo & 0xFFu] ^ kTables[6][(lo >> 8) & 0xFFu] ^ kTables[5][(lo >> 16) & 0xFFu] ^
          kTables[4][lo >> 24] ^ kTables[3][p[4]] ^ kTables[2][p[5]] ^ kTables[1][p[6]] ^
          kTables[0][p[7]];
    p += 8;
    n -= 8;
  }
  while (n > 0) {
    crc = (crc >> 8) ^ kTables[0][(crc ^ *p) & 0xFFu];
    ++p;
    --n;
  }
  return ~crc;
}

}  // namespace openbpu::format
