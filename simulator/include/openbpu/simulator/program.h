// A virtual BPU program (isa.h) in memory: encoding, verified decoding, and the tensor helpers
// that move data between a dense row-major buffer and a descriptor's layout.
//
// decode_program() is the only way from bytes to a Program the functional units accept: it
// checks the header, every opcode, payload size and enumerated field, every descriptor's rank,
// types and extent against the device memory, and each instruction's operand shapes against
// each other (the rules of isa.h). After it succeeds, execution needs no checks (prepare, then
// run). Nothing here throws; errors come back as text naming the instruction and the rule.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "openbpu/simulator/isa.h"

namespace openbpu::simulator {

using InstructionPayload =
    std::variant<isa::FunctionBegin, isa::ConvInstruction, isa::MatMulInstruction,
                 isa::ElementwiseInstruction, isa::LutInstruction, isa::RequantizeInstruction,
                 isa::ReduceInstruction, isa::PoolInstruction, isa::ResizeInstruction,
                 isa::CopyInstruction, isa::FillInstruction, isa::ClampInstruction,
                 isa::PreprocessInstruction, isa::SoftmaxInstruction, isa::SelectInstruction,
                 isa::GatherElementsInstruction, isa::LutProductInstruction>;

struct Instruction {
  isa::Opcode opcode = isa::Opcode::kFunctionBegin;
  InstructionPayload payload;
  uint32_t hints = 0;  // isa::HintBits (timing only)
};

struct Program {
  uint32_t memory_bytes = 0;    // device memory the program addresses
  uint32_t constant_bytes = 0;  // weights blob size, loaded at address 0
  std::vector<isa::TensorDesc> inputs;
  std::vector<isa::TensorDesc> outputs;
  std::vector<Instruction> instructions;
};

// The bytes of `program` (header, bindings, instructions), deterministic.
std::vector<uint8_t> encode_program(const Program& program);

struct DecodeResult {
  bool ok = false;
  std::string error;  // when !ok: "instruction 12 (Conv): weights [...] end past memory (...)"
  Program program;
};

// Decodes and verifies `bytes` for the segment's weights blob `constants` (the tables an
// instruction reads from it are checked too: multipliers, pool divisors, resize coordinates).
DecodeResult decode_program(std::span<const uint8_t> bytes, std::span<const uint8_t> constants);

// The device memory a program's encoding `bytes` claims (ProgramHeader::memory_bytes), read
// without decoding; 0 for bytes shorter than the header (decode_program() refuses those).
uint64_t program_memory_bytes(std::span<const uint8_t> bytes);

// Checks one decoded instruction against a memory of `memory_bytes` bytes whose constant
// region holds `constants`; "" when valid. `isa_version` is the program's version: an
// instruction may use only what that version defines (isa.h, kIsaVersion).
std::string verify_instruction(const Instruction& instruction, uint64_t memory_bytes,
                               std::span<const uint8_t> constants,
                               uint32_t isa_version = isa::kIsaVersion);

// Opcode name for messages ("Conv", "Copy", ...); "unknown" for other values.
const char* opcode_name(isa::Opcode opcode);

// ---------------------------------------------------------------- descriptors

// Number of elements (product of dims[0..rank)); 1 for rank 0.
uint64_t element_count(const isa::TensorDesc& desc);
// Lowest and one-past-highest byte address any element of desc touches (lo == hi when empty).
struct ByteRange {
  int64_t lo = 0;
  int64_t hi = 0;
};
ByteRange byte_range(const isa::TensorDesc& desc);

// A descriptor of `dims` stored dense row-major at `address`.
isa::TensorDesc dense_desc(uint32_t address, isa::ElementType type, std::span<const int64_t> dims);

// Copies a dense row-major tensor (element_count(desc) elements of desc.type) into memory at
// desc's layout, and back. `memory` is the whole device memory.
void scatter_dense(const isa::TensorDesc& desc, std::span<const uint8_t> dense,
                   std::span<uint8_t> memory);
void gather_dense(const isa::TensorDesc& desc, std::span<const uint8_t> memory,
                  std::span<uint8_t> dense);

// Runs the instructions of a decoded program on `memory` (memory_bytes bytes, constants already
// at address 0, inputs already in place). The functional units: bit-exact, no timing.
void execute(const Program& program, std::span<uint8_t> memory);
// Runs one instruction (the program's instructions call this in order).
void execute_instruction(const Instruction& instruction, std::span<uint8_t> memory);

// Function calls (isa.h, FunctionBegin): the unit of preemption. The call starting at
// instruction `begin` runs up to, not including, the next FunctionBegin after `begin`, or to the
// program's end; function_call_end() returns that index (the program's size when `begin` is at
// or past the end). A program without FunctionBegin is one call.
size_t function_call_end(const Program& program, size_t begin);
// Runs the instructions [begin, end) of a decoded program, as execute() does for all of them:
// running the calls one after the other, in any pieces, gives execute()'s bytes.
void execute_range(const Program& program, size_t begin, size_t end, std::span<uint8_t> memory);

}  // namespace openbpu::simulator
