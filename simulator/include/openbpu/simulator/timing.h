// The virtual BPU's timing model: a separate layer over the functional units (it reads a
// decoded program and the march table, never data). Per instruction it counts the work and the
// DDR traffic and turns them into cycles:
//
//   compute cycles = MACs / MACs-per-cycle (conv, conv transpose, matmul; the int16 rate when an
//                    operand is int16), or element operations / vector lanes (everything else;
//                    lanes = int8 MACs per cycle / 16, halved for int16); copies and fills have
//                    none (the DMA engine moves them)
//   DMA cycles     = (bytes loaded + bytes stored) / DDR bytes per cycle, where loaded = the byte
//                    extent of every input operand, weights and tables, unless the instruction's
//                    kHintInputOnChip says the first input is still in SRAM; stored = the
//                    output's extent unless kHintOutputOnChip
//   cycles         = max(compute, DMA) with kHintDoubleBuffered (tiles overlap), else their sum;
//                    plus a fixed launch cost per instruction and per tile
//
//   weights    = re-read once per row tile when the output channels are tiled too
//
// The figures are a model of a virtual BPU (march.h), not a
// measurement of real hardware.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "openbpu/simulator/march.h"
#include "openbpu/simulator/program.h"

namespace openbpu::simulator {

// Fixed costs of the model (cycles).
inline constexpr uint64_t kInstructionLaunchCycles = 64;
inline constexpr uint64_t kTileLaunchCycles = 16;
inline constexpr uint64_t kCoreSyncCycles = 32;
// A function call's own cost (its FunctionBegin): the core fetches the call's descriptor and
// sets up its registers, and the call's end raises the interrupt the driver answers before the
// next call (or another job's) may start. 1 µs at the 1200 MHz of every march in march.cc.
inline constexpr uint64_t kFunctionCallCycles = 1200;

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

// The counters as JSON: {"march":..., "cycles":..., "latency_us":..., "instructions": [{...}]}.
std::string estimate_json(const ProgramEstimate& estimate, const MarchSpec& march);

}  // namespace openbpu::simulator
