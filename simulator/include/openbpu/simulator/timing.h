// The virtual BPU's timing model: a separate layer over the functional units (it reads a
// decoded program and the march table, never data). Per instruction it counts the work and the
// DDR traffic and turns them into cycles:
//
//   compute cycles = MAC-array cycles (conv, conv transpose, matmul: mac_array_cycles() below,
//                    times int8/int16 MAC rates when an operand is int16), or element operations
//                    / vector lanes (everything else; lanes = int8 MACs per cycle / 16, halved
//                    for int16); copies and fills have none (the DMA engine moves them)
//   DMA cycles     = (bytes loaded + bytes stored) / DDR bytes per cycle, where loaded = the byte
//                    extent of every input operand, weights and tables, unless the instruction's
//                    kHintInputOnChip says the first input is still in SRAM; stored = the
//                    output's extent unless kHintOutputOnChip
//   cycles         = max(compute, DMA) with kHintDoubleBuffered (tiles overlap), else their sum;
//                    plus the march's instruction_cycles and kTileLaunchCycles per tile
//   a call         = the march's function_call_cycles (its FunctionBegin)
//
//   weights    = re-read once per row tile when the output channels are tiled too
//
// The march figures (march.cc) were fitted to two published board latencies; docs/bpu_isa.md
// has the comparison. The figures are a model of a virtual BPU, not a measurement of real
// hardware.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "openbpu/simulator/march.h"
#include "openbpu/simulator/program.h"

namespace openbpu::simulator {

// Fixed costs of the model (cycles); the larger per-instruction and per-call costs are march
// figures (MarchSpec::instruction_cycles, function_call_cycles).
inline constexpr uint64_t kTileLaunchCycles = 16;
inline constexpr uint64_t kCoreSyncCycles = 32;

// Work for the MAC array: a convolution (positions = output pixels, taps = kernel H x W, channels
// per group) or a matrix product (positions = output rows, input channels = the inner dimension,
// output channels = the columns).
struct MacWork {
  uint64_t positions = 0;
  uint64_t input_channels = 0;   // per group
  uint64_t output_channels = 0;  // per group
  uint64_t groups = 1;
  uint64_t taps = 1;
};

// Int8 cycles of `w` on one core's MAC array (MarchSpec::mac_*): each cycle it multiplies
// mac_input_lanes input channels into mac_output_lanes output channels at mac_positions
// positions. A layer takes ceil(positions / P) · passes cycles, a pass being one kernel tap of
// one block of input lanes into one block of output lanes:
//   dense          passes = groups · taps · ceil(cin / in_lanes) · ceil(cout / out_lanes)
//   cin < lanes    the taps fill the idle input lanes (an image's 3 channels, im2col):
//                  passes = groups · ceil(taps · cin / in_lanes) · ceil(cout / out_lanes)
//   narrow groups  min(in_lanes / cin, out_lanes / cout) groups share a pass, so a depthwise
//                  conv keeps one MAC per output lane busy
uint64_t mac_array_cycles(const MacWork& w, const MarchSpec& march);

struct InstructionCost {
  isa::Opcode opcode = isa::Opcode::kFunctionBegin;
  uint64_t macs = 0;            // multiply-accumulates (conv, conv transpose, matmul)
  uint64_t element_ops = 0;     // vector-unit element operations (the other compute instructions)
  uint64_t working_macs = 0;    // MACs the array could do in its compute cycles (idle lanes too)
  uint64_t loaded_bytes = 0;    // DDR → SRAM
  uint64_t stored_bytes = 0;    // SRAM → DDR
  uint64_t tiles = 1;
  uint64_t compute_cycles = 0;
  uint64_t dma_cycles = 0;
  uint64_t cycles = 0;
};

struct ProgramEstimate {
  std::vector<InstructionCost> instructions;  // one per program instruction
  uint64_t macs = 0;
  uint64_t loaded_bytes = 0;
  uint64_t stored_bytes = 0;
  uint64_t cycles = 0;
  double latency_us = 0;  // cycles at the march's clock
  // Operations as the original counts them ("BPU OPs per frame"): 2 per MAC plus element ops.
  uint64_t ops() const;
  // As hb_perf's "working" OPs: 2 per MAC the array is occupied for, plus element ops.
  uint64_t working_ops() const;
  double fps() const { return latency_us > 0 ? 1e6 / latency_us : 0; }
};

// `cores`: BPU cores a convolution / matmul is spread over (output channels split evenly; each
// instruction then pays kCoreSyncCycles per extra core).
ProgramEstimate estimate_program(const Program& program, const MarchSpec& march, int cores = 1);

// One operation's cycles before it is compiled (the quantizer weighs int16 against int8 with
// it): the MAC array's cycles for `macs` when it has positions, else `element_ops` on the vector
// lanes; plus the DMA of the activations (1 byte an element, 2 for int16) and the constants;
// plus the march's instruction_cycles. As estimate_program() counts an instruction on one core,
// without tiles or on-chip hints.
struct OperationWork {
  MacWork macs;                      // positions 0: not a MAC-array operation
  uint64_t element_ops = 0;          // vector-unit operations otherwise
  uint64_t activation_elements = 0;  // elements read and written
  uint64_t constant_bytes = 0;       // weights and tables
};
uint64_t operation_cycles(const OperationWork& work, const MarchSpec& march, bool int16);

// The counters as JSON: {"march":..., "cycles":..., "latency_us":..., "instructions": [{...}]}.
std::string estimate_json(const ProgramEstimate& estimate, const MarchSpec& march);

}  // namespace openbpu::simulator
