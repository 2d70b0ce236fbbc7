// CRC-32C (Castagnoli), the checksum of the model file footer (see model_file.h).
//
// Reflected polynomial 0x82F63B78, initial value 0xFFFFFFFF, final XOR 0xFFFFFFFF — the
// CRC of iSCSI (RFC 3720), ext4 and SSE4.2's crc32 instruction: crc32c("123456789") ==
// 0xE3069283. Software, table-driven (slicing by 8), the same result on every host.
#pragma once

#include <cstdint>
#include <span>

namespace openbpu::format {

// CRC-32C of `bytes`. To checksum data in pieces pass the previous result as `crc`:
// crc32c(b, crc32c(a)) == crc32c(a followed by b). crc32c({}) == 0.
uint32_t crc32c(std::span<const uint8_t> bytes, uint32_t crc = 0) noexcept;

}  // namespace openbpu::format
