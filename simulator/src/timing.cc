// The timing model (timing.h).
#include "openbpu/simulator/timing.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <type_traits>

namespace openbpu::simulator {

namespace {

uint64_t extent_bytes(const isa::TensorDesc& d) {
  if (d.rank == 0 && d.dims[0] == 0) return 0;
  const ByteRange r = byte_range(d);
  return static_cast<uint64_t>(r.hi - r.lo);
}

uint64_t ceil_div(uint64_t a, uint64_t b) { return b == 0 ? 0 : (a + b - 1) / b; }

bool is_int16(const isa::TensorDesc& d) { return d.type == isa::ElementType::kInt16; }

// Cycles of work for the MAC array at the int16 rate when an operand is int16, spread over
// `cores` (output channels split evenly, kCoreSyncCycles per extra core).
uint64_t mac_cycles(const MacWork& w, const MarchSpec& march, bool int16, uint64_t cores) {
  uint64_t cycles = mac_array_cycles(w, march);
  if (int16) {
    const uint64_t int8_rate = static_cast<uint64_t>(march.int8_macs_per_cycle());
    cycles *= ceil_div(int8_rate, static_cast<uint64_t>(std::max(1, march.int16_macs_per_cycle)));
  }
  return ceil_div(cycles, cores) + kCoreSyncCycles * (cores - 1);
}

// Element operations on the vector lanes (int8 MACs per cycle / 16; half as many for int16).
uint64_t vector_cycles(uint64_t element_ops, const MarchSpec& march, bool int16) {
  const uint64_t lanes8 = std::max<uint64_t>(1, static_cast<uint64_t>(march.int8_macs_per_cycle()) / 16);
  return ceil_div(element_ops, int16 ? std::max<uint64_t>(1, lanes8 / 2) : lanes8);
}

uint64_t dma_cycles(uint64_t bytes, const MarchSpec& march) {
  const double bytes_per_cycle = march.ddr_gbytes_per_s * 1e9 / (march.clock_mhz * 1e6);
  return static_cast<uint64_t>(std::ceil(static_cast<double>(bytes) / bytes_per_cycle));
}

uint64_t tiles_of(const isa::Tiling& t, const isa::TensorDesc& out, uint32_t row_axis, uint32_t channel_axis) {
  const uint64_t rows = out.rank > row_axis ? out.dims[row_axis] : 1;
  const uint64_t channels = out.rank > channel_axis ? out.dims[channel_axis] : 1;
  return ceil_div(rows, t.rows == 0 ? rows : t.rows) * ceil_div(channels, t.channels == 0 ? channels : t.channels);
}

}  // namespace

uint64_t mac_array_cycles(const MacWork& w, const MarchSpec& march) {
  const uint64_t in_lanes = static_cast<uint64_t>(std::max(1, march.mac_input_lanes));
  const uint64_t out_lanes = static_cast<uint64_t>(std::max(1, march.mac_output_lanes));
  const uint64_t cin = std::max<uint64_t>(1, w.input_channels),
                 cout = std::max<uint64_t>(1, w.output_channels);
  const uint64_t groups = std::max<uint64_t>(1, w.groups), taps = std::max<uint64_t>(1, w.taps);
  uint64_t passes = 0;
  if (groups > 1 && cin < in_lanes && cout < out_lanes) {
    // Narrow groups share the array block-diagonally (a depthwise conv: one MAC per output lane).
    const uint64_t per_pass = std::min(in_lanes / cin, out_lanes / cout);
    passes = ceil_div(groups, per_pass) * taps;
  } else if (cin < in_lanes) {
    // Few input channels (an image's 3): the kernel taps fill the idle input lanes (im2col).
    passes = groups * ceil_div(taps * cin, in_lanes) * ceil_div(cout, out_lanes);
  } else {
    passes = groups * taps * ceil_div(cin, in_lanes) * ceil_div(cout, out_lanes);
  }
  return ceil_div(w.positions, static_cast<uint64_t>(std::max(1, march.mac_positions))) * passes;
}

uint64_t ProgramEstimate::ops() const {
  uint64_t element_ops = 0;
  for (const InstructionCost& c : instructions) element_ops += c.element_ops;
  return 2 * macs + element_ops;
}

uint64_t ProgramEstimate::working_ops() const {
  uint64_t ops = 0;
  for (const InstructionCost& c : instructions) ops += 2 * c.working_macs + c.element_ops;
  return ops;
}

ProgramEstimate estimate_program(const Program& program, const MarchSpec& march, int cores) {
  const uint64_t core_count = static_cast<uint64_t>(std::max(1, cores));
  ProgramEstimate e;
  for (const Instruction& in : program.instructions) {
    InstructionCost c;
    c.opcode = in.opcode;
    bool int16 = false;
    const isa::TensorDesc* first_input = nullptr;
    std::vector<const isa::TensorDesc*> inputs;
    const isa::TensorDesc* output = nullptr;
    uint64_t constant_bytes = 0;
    MacWork work;  // conv, conv transpose, matmul
    std::visit(
        [&](const auto& p) {
          using P = std::decay_t<decltype(p)>;
          if constexpr (std::is_same_v<P, isa::ConvInstruction>) {
            inputs = {&p.input};
            if (p.residual.rank != 0) inputs.push_back(&p.residual);
            output = &p.output;
            const uint64_t cg = p.input.dims[1] / std::max<uint32_t>(1, p.group);
            const uint64_t taps = uint64_t{p.kernel_h} * p.kernel_w * cg;
            const uint64_t positions = in.opcode == isa::Opcode::kConvTranspose
                                           ? element_count(p.output) / std::max<uint64_t>(1, uint64_t{p.stride_h} * p.stride_w)
                                           : element_count(p.output);
            c.macs = positions * taps;
            const uint64_t m = p.output.dims[1], groups = std::max<uint32_t>(1, p.group);
            work = {positions / std::max<uint64_t>(1, m), cg, m / groups, groups,
                    uint64_t{p.kernel_h} * p.kernel_w};
            constant_bytes = uint64_t{p.output.dims[1]} * (taps + 4 + 8);
            int16 = is_int16(p.input);
            c.tiles = tiles_of(p.tiling, p.output, 2, 1);
            if (p.tiling.channels != 0 && p.tiling.rows != 0) {
              constant_bytes *= ceil_div(p.output.dims[2], p.tiling.rows);  // weights re-read per row tile
            }
          } else if constexpr (std::is_same_v<P, isa::MatMulInstruction>) {
            inputs = {&p.a, &p.b};
            output = &p.output;
            c.macs = element_count(p.output) * p.a.dims[p.a.rank - 1];
            const uint64_t n = p.output.dims[p.output.rank - 1];
            work = {element_count(p.output) / std::max<uint64_t>(1, n), p.a.dims[p.a.rank - 1], n};
            int16 = is_int16(p.a) || is_int16(p.b);
            c.tiles = tiles_of(p.tiling, p.output, p.output.rank - 2, p.output.rank - 1);
          } else if constexpr (std::is_same_v<P, isa::ElementwiseInstruction>) {
            inputs = {&p.a, &p.b};
            output = &p.output;
            c.element_ops = element_count(p.output);
            int16 = is_int16(p.a) || is_int16(p.b) || is_int16(p.output);
          } else if constexpr (std::is_same_v<P, isa::GatherElementsInstruction>) {
            // One indexed read per output element; the index table streams from the constants.
            inputs = {&p.input};
            output = &p.output;
            c.element_ops = element_count(p.output);
            constant_bytes = 4 * element_count(p.output);
            int16 = is_int16(p.input);
          } else if constexpr (std::is_same_v<P, isa::SelectInstruction>) {
            inputs = {&p.condition, &p.a, &p.b};
            output = &p.output;
            c.element_ops = element_count(p.output);
            int16 = is_int16(p.a) || is_int16(p.b) || is_int16(p.output);
          } else if constexpr (std::is_same_v<P, isa::PoolInstruction>) {
            inputs = {&p.input};
            output = &p.output;
            c.element_ops = element_count(p.output) * p.kernel_h * p.kernel_w;
            int16 = is_int16(p.input);
            c.tiles = tiles_of(p.tiling, p.output, 2, 1);
          } else if constexpr (std::is_same_v<P, isa::ReduceInstruction>) {
            inputs = {&p.input};
            output = &p.output;
            c.element_ops = element_count(p.input);
            int16 = is_int16(p.input);
          } else if constexpr (std::is_same_v<P, isa::SoftmaxInstruction>) {
            // Three passes over each row (max; exponent and sum; scale and store).
            inputs = {&p.input};
            output = &p.output;
            c.element_ops = 3 * element_count(p.input);
            int16 = is_int16(p.input) || is_int16(p.output);
          } else if constexpr (std::is_same_v<P, isa::ResizeInstruction>) {
            inputs = {&p.input};
            output = &p.output;
            c.element_ops = element_count(p.output) * (p.mode == isa::ResizeMode::kLinear ? 4 : 1);
            constant_bytes = 12 * (uint64_t{p.output.dims[2]} + p.output.dims[3]);
            int16 = is_int16(p.input);
          } else if constexpr (std::is_same_v<P, isa::CopyInstruction>) {
            inputs = {&p.source};
            output = &p.destination;
          } else if constexpr (std::is_same_v<P, isa::FillInstruction>) {
            output = &p.destination;
          } else if constexpr (std::is_same_v<P, isa::PreprocessInstruction>) {
            inputs = {&p.source};
            output = &p.output;
            c.element_ops = element_count(p.output);
          } else if constexpr (std::is_same_v<P, isa::FunctionBegin>) {
          } else {
            // Lut, LutProduct, Requantize, Clamp
            inputs = {&p.input};
            output = &p.output;
            c.element_ops = element_count(p.output);
            int16 = is_int16(p.input) || is_int16(p.output);
            if constexpr (std::is_same_v<P, isa::LutInstruction>) constant_bytes = is_int16(p.input) ? 257 * 4 : 256;
            if constexpr (std::is_same_v<P, isa::LutProductInstruction>) {
              // Rescale, look up and multiply: three vector operations per element, one pass.
              c.element_ops = 3 * element_count(p.output);
              constant_bytes = p.table_type == isa::ElementType::kInt16 ? 257 * 4 : 256;
              int16 = int16 || p.table_type == isa::ElementType::kInt16;
            }
          }
        },
        in.payload);
    if (!inputs.empty()) first_input = inputs.front();
    for (const isa::TensorDesc* d : inputs) {
      if (d == first_input && (in.hints & isa::kHintInputOnChip)) continue;
      c.loaded_bytes += extent_bytes(*d);
    }
    c.loaded_bytes += constant_bytes;
    if (output != nullptr && !(in.hints & isa::kHintOutputOnChip)) c.stored_bytes = extent_bytes(*output);
    if (c.macs > 0) {
      c.compute_cycles = mac_cycles(work, march, int16, core_count);
      const uint64_t rate = int16 ? static_cast<uint64_t>(std::max(1, march.int16_macs_per_cycle))
                                  : static_cast<uint64_t>(march.int8_macs_per_cycle());
      c.working_macs = (c.compute_cycles - kCoreSyncCycles * (core_count - 1)) * core_count * rate;
    } else if (c.element_ops > 0) {
      c.compute_cycles = vector_cycles(c.element_ops, march, int16);
    }
    c.dma_cycles = dma_cycles(c.loaded_bytes + c.stored_bytes, march);
    if (in.opcode == isa::Opcode::kFunctionBegin) {
      c.cycles = static_cast<uint64_t>(march.function_call_cycles);
    } else {
      const uint64_t body = (in.hints & isa::kHintDoubleBuffered) ? std::max(c.compute_cycles, c.dma_cycles)
                                                                 : c.compute_cycles + c.dma_cycles;
      c.cycles =
          body + static_cast<uint64_t>(march.instruction_cycles) + kTileLaunchCycles * c.tiles;
    }
    e.macs += c.macs;
    e.loaded_bytes += c.loaded_bytes;
    e.stored_bytes += c.stored_bytes;
    e.cycles += c.cycles;
    e.instructions.push_back(c);
  }
  e.latency_us = static_cast<double>(e.cycles) / march.clock_mhz;
  return e;
}

uint64_t operation_cycles(const OperationWork& w, const MarchSpec& march, bool int16) {
  const uint64_t compute = w.macs.positions > 0 ? mac_cycles(w.macs, march, int16, 1)
                                                : vector_cycles(w.element_ops, march, int16);
  const uint64_t bytes = (int16 ? 2 : 1) * w.activation_elements + w.constant_bytes;
  return compute + dma_cycles(bytes, march) + static_cast<uint64_t>(march.instruction_cycles);
}

std::string estimate_json(const ProgramEstimate& e, const MarchSpec& march) {
  std::ostringstream out;
  out << "{\"march\": \"" << march.name << "\", \"clock_mhz\": " << march.clock_mhz << ", \"cycles\": " << e.cycles
      << ", \"latency_us\": " << e.latency_us << ", \"macs\": " << e.macs << ", \"loaded_bytes\": " << e.loaded_bytes
      << ", \"stored_bytes\": " << e.stored_bytes << ", \"instructions\": [";
  for (size_t i = 0; i < e.instructions.size(); ++i) {
    const InstructionCost& c = e.instructions[i];
    out << (i ? ", " : "") << "{\"index\": " << i << ", \"opcode\": \"" << opcode_name(c.opcode)
        << "\", \"macs\": " << c.macs << ", \"element_ops\": " << c.element_ops << ", \"loaded_bytes\": "
        << c.loaded_bytes << ", \"stored_bytes\": " << c.stored_bytes << ", \"tiles\": " << c.tiles
        << ", \"compute_cycles\": " << c.compute_cycles << ", \"dma_cycles\": " << c.dma_cycles
        << ", \"cycles\": " << c.cycles << "}";
  }
  out << "]}";
  return out.str();
}

}  // namespace openbpu::simulator
