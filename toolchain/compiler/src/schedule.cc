// Scheduling (docs/compiler.md): tiling to the SRAM, double buffering, on-chip chaining of a
// producer and its consumer, and function-call boundaries. These set the fields and hints the
// timing model reads (simulator/timing.h); they never change what a program computes.
#include <algorithm>
#include <map>

#include "segment_builder.h"
#include "openbpu/simulator/timing.h"

namespace openbpu::compiler {

namespace {

uint64_t aligned(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

// SRAM a layer's tiles may use: all of it, or half when double-buffered.
uint64_t tile_budget(const simulator::MarchSpec& march, bool double_buffered) {
  const uint64_t sram = static_cast<uint64_t>(march.sram_kib) * 1024;
  return double_buffered ? sram / 2 : sram;
}

// Output rows (and channels) per tile such that input rows, output rows and the weights of
// the channel tile fit the budget.
isa::Tiling tile_conv(const isa::ConvInstruction& c, const simulator::MarchSpec& march, uint64_t budget) {
  const uint64_t align = static_cast<uint64_t>(march.channel_align);
  const uint64_t in_width = isa::element_bytes(c.input.type), out_width = isa::element_bytes(c.output.type);
  const uint64_t cg = c.input.dims[1] / std::max<uint32_t>(1, c.group);
  const uint64_t M = c.output.dims[1];
  const uint64_t weights_per_channel = uint64_t{c.kernel_h} * c.kernel_w * cg + 12;
  uint64_t channels = M;
  if (weights_per_channel * M > budget / 2) {
    channels = std::max<uint64_t>(align, (budget / 2) / weights_per_channel / align * align);
    channels = std::min(channels, M);
  }
  const uint64_t in_row = uint64_t{c.input.dims[3]} * aligned(c.input.dims[1], align) * in_width;
  const uint64_t out_row = uint64_t{c.output.dims[3]} * aligned(channels, align) * out_width;
  const uint64_t halo = uint64_t{c.kernel_h - 1} * c.dilation_h;
  const uint64_t left = budget - std::min(budget, weights_per_channel * channels);
  // rows r: (r·stride + halo)·in_row + r·out_row <= left
  const uint64_t per_row = c.stride_h * in_row + out_row;
  uint64_t rows = left > halo * in_row ? (left - halo * in_row) / std::max<uint64_t>(1, per_row) : 1;
  rows = std::clamp<uint64_t>(rows, 1, c.output.dims[2]);
  return {rows == c.output.dims[2] ? 0u : static_cast<uint32_t>(rows),
          channels == M ? 0u : static_cast<uint32_t>(channels)};
}

isa::Tiling tile_rows(const isa::TensorDesc& in, const isa::TensorDesc& out, uint32_t row_axis, uint64_t budget) {
  const uint64_t rows = out.dims[row_axis];
  const uint64_t bytes = simulator::element_count(in) * isa::element_bytes(in.type) +
                         simulator::element_count(out) * isa::element_bytes(out.type);
  const uint64_t per_row = std::max<uint64_t>(1, bytes / std::max<uint64_t>(1, rows));
  const uint64_t fit = std::clamp<uint64_t>(budget / per_row, 1, rows);
  return {fit == rows ? 0u : static_cast<uint32_t>(fit), 0u};
}

// Position of the output among an instruction's operands (descriptor order of isa.h).
size_t output_slot(const simulator::Instruction& in, size_t operands) {
  const bool conv = in.opcode == isa::Opcode::kConv || in.opcode == isa::Opcode::kConvTranspose;
  return conv ? 1 : operands - 1;
}

bool double_buffered(const CompileOptions& o) {
  if (!optimizations_of(o.optimize_level).double_buffering) return false;
  switch (o.compile_mode) {
    case CompileMode::kLatency: return true;
    case CompileMode::kBandwidth: return false;
    case CompileMode::kBalance: return o.balance_factor >= 50;
  }
  return true;
}

uint64_t chaining_limit(const CompileOptions& o) {
  const uint64_t sram = static_cast<uint64_t>(o.march->sram_kib) * 1024;
  switch (o.compile_mode) {
    case CompileMode::kLatency: return sram / 2;
    case CompileMode::kBandwidth: return sram;
    case CompileMode::kBalance: return sram / 2 + sram / 2 * static_cast<uint64_t>(100 - o.balance_factor) / 100;
  }
  return sram / 2;
}

}  // namespace

Optimizations optimizations_of(int level) {
  static constexpr Optimizations kLevels[] = {
      {.double_buffering = false, .chaining = false, .shared_chaining = false},  // O0
      {.double_buffering = true, .chaining = false, .shared_chaining = false},   // O1
      {.double_buffering = true, .chaining = true, .shared_chaining = false},    // O2
      {.double_buffering = true, .chaining = true, .shared_chaining = true},     // O3
  };
  if (level < 0 || level >= static_cast<int>(std::size(kLevels))) raise("optimize_level ", level, " is not one of 0..3");
  return kLevels[level];
}

void schedule(std::vector<simulator::Instruction>& instructions, const std::vector<std::vector<int>>& buffers,
              const std::vector<uint64_t>& buffer_bytes, const std::vector<bool>& pinned,
              const CompileOptions& options) {
  const Optimizations features = optimizations_of(options.optimize_level);
  const bool overlap = double_buffered(options);
  const uint64_t budget = tile_budget(*options.march, overlap);
  // Readers of each buffer (instruction indices, ascending).
  std::map<int, std::vector<size_t>> readers;
  for (size_t i = 0; i < instructions.size(); ++i) {
    const std::vector<int>& ids = buffers[i];
    if (ids.empty()) continue;
    const size_t out = output_slot(instructions[i], ids.size());
    for (size_t k = 0; k < ids.size(); ++k) {
      if (k != out && ids[k] >= 0) readers[ids[k]].push_back(i);
    }
  }
  for (size_t i = 0; i < instructions.size(); ++i) {
    simulator::Instruction& in = instructions[i];
    if (overlap) in.hints |= isa::kHintDoubleBuffered;
    std::visit(
        [&](auto& p) {
          using P = std::decay_t<decltype(p)>;
          if constexpr (std::is_same_v<P, isa::ConvInstruction>) {
            p.tiling = tile_conv(p, *options.march, budget);
          } else if constexpr (std::is_same_v<P, isa::MatMulInstruction>) {
            p.tiling = tile_rows(p.a, p.output, p.output.rank - 2, budget);
          } else if constexpr (std::is_same_v<P, isa::PoolInstruction>) {
            p.tiling = tile_rows(p.input, p.output, 2, budget);
          }
        },
        in.payload);
    // On-chip chaining: the output of i is the first input of i + 1.
    if (!features.chaining || i + 1 >= instructions.size()) continue;
    if (buffers[i].empty()) continue;
    const int out = buffers[i][output_slot(in, buffers[i].size())];
    const std::vector<int>& next = buffers[i + 1];
    if (out < 0 || next.size() < 2 || next.front() != out || pinned[size_t(out)]) continue;
    if (buffer_bytes[size_t(out)] > chaining_limit(options)) continue;
    const std::vector<size_t>& users = readers[out];
    const bool only_next = !users.empty() && users.front() == i + 1 && users.back() == i + 1;
    if (only_next) {
      in.hints |= isa::kHintOutputOnChip;
      instructions[i + 1].hints |= isa::kHintInputOnChip;
    } else if (features.shared_chaining) {
      instructions[i + 1].hints |= isa::kHintInputOnChip;  // stored for the later readers too
    }
  }
}

uint32_t split_function_calls(simulator::Program& program, const CompileOptions& options) {
  if (options.max_time_per_fc_us == 0) return 1;
  const simulator::ProgramEstimate e = simulator::estimate_program(program, *options.march, options.core_num);
  std::vector<simulator::Instruction> out;
  uint32_t calls = 0;
  // The current call's time so far, its own cost (function_call_cycles) included.
  double elapsed = 0;
  const double mhz = options.march->clock_mhz;
  const double call_cost = static_cast<double>(options.march->function_call_cycles) / mhz;
  const double limit = static_cast<double>(options.max_time_per_fc_us);
  for (size_t i = 0; i < program.instructions.size(); ++i) {
    const simulator::Instruction& in = program.instructions[i];
    if (in.opcode == isa::Opcode::kFunctionBegin) continue;
    const double t = static_cast<double>(e.instructions[i].cycles) / mhz;
    // A boundary never separates a producer from the consumer reading its output on chip. Every
    // call holds at least one instruction: once `out` has its first FunctionBegin, its last entry
    // is always an instruction when the next is considered.
    const bool chained = !out.empty() && (out.back().hints & isa::kHintOutputOnChip) != 0;
    if (out.empty() || (elapsed + t > limit && !chained)) {
      out.push_back({isa::Opcode::kFunctionBegin, isa::FunctionBegin{calls++}, 0});
      elapsed = call_cost;
    }
    out.push_back(in);
    elapsed += t;
  }
  program.instructions = std::move(out);
  return calls;
}

}  // namespace openbpu::compiler
