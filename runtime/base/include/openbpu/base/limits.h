// Limits on what an input may claim, shared by the layers that check them, so that a hostile
// but valid file is refused with the rule it breaks before it exhausts memory.
#pragma once

#include <cstdint>

namespace openbpu::base {

// The most bytes one tensor may hold: 2^31 - 1, what the hbDNN C API's int32 alignedByteSize
// can state. Checked by the model-file verifier (every tensor of a .bin / .hbm), the IR verifier
// (every statically shaped value of a model the toolchain loads, after every stage) and by
// kernels::Tensor before it allocates a computed shape.
inline constexpr uint64_t kMaxTensorBytes = (uint64_t{1} << 31) - 1;

}  // namespace openbpu::base
