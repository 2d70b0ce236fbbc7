// Dispatch of decoded instructions to the functional units.
#include <type_traits>

#include "openbpu/simulator/program.h"
#include "scratch.h"
#include "units.h"

namespace openbpu::simulator {

void execute_instruction(const Instruction& instruction, std::span<uint8_t> memory) {
  const functional::ScratchArena::Scope scratch;  // the unit's temporaries end with it
  std::visit(
      [&](const auto& p) {
        using P = std::decay_t<decltype(p)>;
        if constexpr (std::is_same_v<P, isa::FunctionBegin>) {
          // A function-call boundary: no effect on memory.
        } else if constexpr (std::is_same_v<P, isa::ConvInstruction>) {
          if (instruction.opcode == isa::Opcode::kConvTranspose) {
            functional::conv_transpose(p, memory);
          } else {
            functional::conv(p, memory);
          }
        } else if constexpr (std::is_same_v<P, isa::MatMulInstruction>) {
          functional::matmul(p, memory);
        } else if constexpr (std::is_same_v<P, isa::ElementwiseInstruction>) {
          functional::elementwise(p, memory);
        } else if constexpr (std::is_same_v<P, isa::GatherElementsInstruction>) {
          functional::gather_elements(p, memory);
        } else if constexpr (std::is_same_v<P, isa::SelectInstruction>) {
          functional::select(p, memory);
        } else if constexpr (std::is_same_v<P, isa::LutInstruction>) {
          functional::lut(p, memory);
        } else if constexpr (std::is_same_v<P, isa::LutProductInstruction>) {
          functional::lut_product(p, memory);
        } else if constexpr (std::is_same_v<P, isa::RequantizeInstruction>) {
          functional::requantize(p, memory);
        } else if constexpr (std::is_same_v<P, isa::ReduceInstruction>) {
          functional::reduce(p, memory);
        } else if constexpr (std::is_same_v<P, isa::PoolInstruction>) {
          if (instruction.opcode == isa::Opcode::kMaxPool) {
            functional::max_pool(p, memory);
          } else {
            functional::average_pool(p, memory);
          }
        } else if constexpr (std::is_same_v<P, isa::ResizeInstruction>) {
          functional::resize(p, memory);
        } else if constexpr (std::is_same_v<P, isa::CopyInstruction>) {
          functional::copy(p, memory);
        } else if constexpr (std::is_same_v<P, isa::FillInstruction>) {
          functional::fill(p, memory);
        } else if constexpr (std::is_same_v<P, isa::ClampInstruction>) {
          functional::clamp(p, memory);
        } else if constexpr (std::is_same_v<P, isa::PreprocessInstruction>) {
          functional::preprocess(p, memory);
        } else if constexpr (std::is_same_v<P, isa::SoftmaxInstruction>) {
          functional::softmax(p, memory);
        }
      },
      instruction.payload);
}

void execute(const Program& program, std::span<uint8_t> memory) {
  execute_range(program, 0, program.instructions.size(), memory);
}

size_t function_call_end(const Program& program, size_t begin) {
  const size_t n = program.instructions.size();
  if (begin >= n) return n;
  size_t end = begin + 1;
  while (end < n && program.instructions[end].opcode != isa::Opcode::kFunctionBegin) ++end;
  return end;
}

void execute_range(const Program& program, size_t begin, size_t end, std::span<uint8_t> memory) {
  for (size_t i = begin; i < end; ++i) execute_instruction(program.instructions[i], memory);
}

}  // namespace openbpu::simulator
