// A program of chained LUT instructions on one int8 tensor, for the device and queue-model
// tests: a permutation table first, then two buffers the LUTs ping-pong between.
#pragma once

#include <cstdint>
#include <functional>

#include "openbpu/simulator/isa.h"
#include "openbpu/simulator/program.h"

namespace openbpu::simulator::testing {

constexpr uint32_t kTableBytes = 256;
constexpr uint32_t kBytes = 4096;  // int8 elements of the tensor the chain transforms

// `calls` function calls, call c running `luts_in_call(c)` LUTs, each call behind a
// FunctionBegin unless `boundaries` is false. With `alternate_on_chip` every other LUT of a
// call keeps its input on chip (so instruction costs differ within a call).
inline Program lut_chain(uint32_t calls, const std::function<uint32_t(uint32_t)>& luts_in_call,
                         bool boundaries, bool alternate_on_chip = false) {
  Program p;
  const uint32_t a = kTableBytes, b = kTableBytes + kBytes;
  p.constant_bytes = kTableBytes;
  p.memory_bytes = kTableBytes + 2 * kBytes;
  const int64_t dims[] = {1, 16, 16, 16};
  const isa::TensorDesc da = dense_desc(a, isa::ElementType::kInt8, dims);
  const isa::TensorDesc db = dense_desc(b, isa::ElementType::kInt8, dims);
  p.inputs.push_back(da);
  bool in_a = true;
  for (uint32_t c = 0; c < calls; ++c) {
    if (boundaries)
      p.instructions.push_back({isa::Opcode::kFunctionBegin, isa::FunctionBegin{c}, 0});
    for (uint32_t k = 0; k < luts_in_call(c); ++k) {
      const uint32_t hints = alternate_on_chip && (k % 2) ? uint32_t{isa::kHintInputOnChip} : 0u;
      p.instructions.push_back(
          {isa::Opcode::kLut, isa::LutInstruction{in_a ? da : db, in_a ? db : da, 0}, hints});
      in_a = !in_a;
    }
  }
  p.outputs.push_back(in_a ? da : db);
  return p;
}

}  // namespace openbpu::simulator::testing
