// Internal: tables of a unit's output for each of the 65,536 int16 inputs, derived from an
// instruction's parameters and kept per host thread, as tile_weights (conv_tile.h) keeps packed
// weights. elementwise.cc's kLutProduct rows on int16 inputs gather from them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace openbpu::simulator::functional {

// Entries of a table: one per int16 input, at index input + 32768.
constexpr size_t kInt16Inputs = size_t{1} << 16;

// The table for `key` (every byte the outputs depend on; compared whole), entry_bytes per
// entry, followed by four zero bytes (whole-int32 gathers may read past the last entry).
// A key's table is built, by `build` into the zeroed table, the second time this thread sees
// the key, or the first when `build_now`; until then the result is nullptr, so an instruction
// run once pays nothing for it. The table stays valid until this thread's next call.
const uint8_t* int16_input_table(const std::vector<uint8_t>& key, size_t entry_bytes,
                                 bool build_now, const std::function<void(uint8_t*)>& build);

}  // namespace openbpu::simulator::functional
