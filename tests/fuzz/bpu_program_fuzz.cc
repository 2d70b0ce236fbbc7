// Fuzz target: the virtual BPU's program decoder and verifier (decode_program, what the
// runtime's device load and the tools run on a BPU segment's program and weights). The
// input is a 4-byte little-endian length, that many bytes of weights (the segment's constant
// blob), then the program bytes.
//
// A program that decodes must keep the decoder's promises: encoding it again gives a program
// that decodes to the same bytes, and it runs (prepare, then run: execution has no checks of
// its own) on a device memory of its size with the weights at address 0 — run only when that
// memory is small and the timing model counts little work (MACs and element operations; the
// verifier bounds every operand's elements by its bytes, not a convolution's taps), so that
// one input stays fast.
#include <cstdint>
#include <string_view>
#include <cstring>
#include <span>
#include <vector>

#include "fuzz_support.h"
#include "openbpu/simulator/program.h"
#include "openbpu/simulator/timing.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace sim = openbpu::simulator;
  constexpr const char* kTarget = "bpu_program";
  openbpu::fuzz::InputReader in(data, size);
  const std::string_view weights = in.take(in.u32());
  const std::string_view program = in.rest();
  const auto bytes_of = [](std::string_view v) {
    return std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(v.data()), v.size());
  };
  const sim::DecodeResult decoded = sim::decode_program(bytes_of(program), bytes_of(weights));
  if (!decoded.ok) {
    openbpu::fuzz::require(!decoded.error.empty(), kTarget, "a refused program has no error text");
    return 0;
  }
  const std::vector<uint8_t> encoded = sim::encode_program(decoded.program);
  const sim::DecodeResult again = sim::decode_program(encoded, bytes_of(weights));
  openbpu::fuzz::require(again.ok, kTarget, "a decoded program, encoded again, does not decode: " + again.error);
  openbpu::fuzz::require(sim::encode_program(again.program) == encoded, kTarget,
                         "decode(encode(program)) differs from the program");
  constexpr uint32_t kMaxRunMemory = 16 * 1024;
  constexpr uint64_t kMaxRunWork = uint64_t{1} << 24;
  if (decoded.program.memory_bytes > kMaxRunMemory || weights.size() > decoded.program.memory_bytes) return 0;
  const sim::ProgramEstimate estimate =
      sim::estimate_program(decoded.program, sim::march_spec(sim::March::kBayesE));
  uint64_t work = 0;
  for (const sim::InstructionCost& c : estimate.instructions) work += c.macs + c.element_ops;
  if (work <= kMaxRunWork) {
    std::vector<uint8_t> memory(decoded.program.memory_bytes, 0);
    if (!weights.empty()) std::memcpy(memory.data(), weights.data(), weights.size());
    sim::execute(decoded.program, memory);
  }
  return 0;
}
