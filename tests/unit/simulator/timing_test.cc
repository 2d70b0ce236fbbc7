// The timing model's terms (timing.h), each on hand-computed cases: the MAC array's lane
// utilisation (dense, depthwise, image input, channels rounded up to lanes, int16, cores), the
// DDR term, and the fixed costs of an instruction and of a function call.
#include "openbpu/simulator/timing.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "openbpu/simulator/isa.h"
#include "openbpu/simulator/march.h"
#include "openbpu/simulator/program.h"
#include "simulator/lut_chain_program.h"

namespace openbpu::simulator {
namespace {

// bayes-e: 32 x 32 lanes, 4 positions; bernoulli2: 8 x 8 lanes, 4 positions.
const MarchSpec& bayes_e() {
  return march_spec(March::kBayesE);
}
const MarchSpec& bernoulli2() {
  return march_spec(March::kBernoulli2);
}

uint64_t ideal_cycles(const MacWork& w, const MarchSpec& m) {
  const uint64_t macs = w.positions * w.groups * w.input_channels * w.output_channels * w.taps;
  return macs / static_cast<uint64_t>(m.int8_macs_per_cycle());
}

TEST(MacArray, DenseConvWithAlignedChannelsUsesEveryLane) {
  const MacWork w{
      .positions = 100, .input_channels = 64, .output_channels = 64, .groups = 1, .taps = 9};
  // ceil(100 / 4) position blocks x 9 taps x 2 input blocks x 2 output blocks.
  EXPECT_EQ(mac_array_cycles(w, bayes_e()), 25u * 9 * 2 * 2);
  EXPECT_EQ(mac_array_cycles(w, bayes_e()), ideal_cycles(w, bayes_e()));
  EXPECT_EQ(mac_array_cycles(w, bernoulli2()), ideal_cycles(w, bernoulli2()));
}

TEST(MacArray, ChannelsAndPositionsRoundUpToWholeLanes) {
  const MacWork w{
      .positions = 101, .input_channels = 33, .output_channels = 40, .groups = 1, .taps = 1};
  EXPECT_EQ(mac_array_cycles(w, bayes_e()), 26u * 2 * 2);
  EXPECT_EQ(mac_array_cycles(w, bernoulli2()), 26u * 5 * 5);
}

TEST(MacArray, DepthwiseConvKeepsOneMacPerOutputLaneBusy) {
  const MacWork w{
      .positions = 100, .input_channels = 1, .output_channels = 1, .groups = 64, .taps = 9};
  // 32 channels share a pass on bayes-e: 2 passes per tap.
  EXPECT_EQ(mac_array_cycles(w, bayes_e()), 25u * 2 * 9);
  // The share of the array it uses is 1 / input lanes: 1/32 on bayes-e, 1/8 on bernoulli2, so
  // a depthwise layer costs a wide array relatively more.
  const uint64_t macs = 100 * 64 * 9;
  EXPECT_EQ(mac_array_cycles(w, bayes_e()) * static_cast<uint64_t>(bayes_e().int8_macs_per_cycle()),
            32 * macs);
  EXPECT_EQ(
      mac_array_cycles(w, bernoulli2()) * static_cast<uint64_t>(bernoulli2().int8_macs_per_cycle()),
      8 * macs);
  // Grouped convs with several channels per group pack fewer groups per pass.
  const MacWork g{
      .positions = 100, .input_channels = 8, .output_channels = 8, .groups = 16, .taps = 9};
  EXPECT_EQ(mac_array_cycles(g, bayes_e()), 25u * 4 * 9);
}

TEST(MacArray, AnImageInputFoldsTheKernelTapsIntoTheInputLanes) {
  // 3 channels x 3 x 3 taps = 27 products per output fit the 32 input lanes in one pass.
  const MacWork w{
      .positions = 100, .input_channels = 3, .output_channels = 32, .groups = 1, .taps = 9};
  EXPECT_EQ(mac_array_cycles(w, bayes_e()), 25u);
  // On 8 lanes: ceil(27 / 8) = 4 passes per output-lane block, 4 blocks.
  EXPECT_EQ(mac_array_cycles(w, bernoulli2()), 25u * 4 * 4);
}

// A one-instruction program: a 3x3 conv of `cin` channels into `cout` over a 16x16 int8 map (or
// int16 input), groups as given.
Program conv_program(uint32_t cin, uint32_t cout, uint32_t groups, isa::ElementType input_type,
                     uint32_t hints) {
  Program p;
  const int64_t in_dims[] = {1, cin, 16, 16}, out_dims[] = {1, cout, 16, 16};
  const uint32_t in_bytes = cin * 256 * isa::element_bytes(input_type);
  isa::ConvInstruction c{};
  c.input = dense_desc(0, input_type, in_dims);
  c.output = dense_desc(in_bytes, isa::ElementType::kInt8, out_dims);
  c.weights = in_bytes + cout * 256;
  c.bias = c.requant = c.residual_requant = isa::kNoAddress;
  c.kernel_h = c.kernel_w = 3;
  c.stride_h = c.stride_w = c.dilation_h = c.dilation_w = 1;
  c.pad_top = c.pad_left = 1;
  c.group = groups;
  c.clip_min = -128;
  c.clip_max = 127;
  p.instructions.push_back({isa::Opcode::kConv, c, hints});
  return p;
}

TEST(TimingModel, ConvComputeIsTheArrayCyclesAtTheInt16RateForInt16) {
  const MarchSpec& m = bayes_e();
  const uint32_t on_chip =
      isa::kHintInputOnChip | isa::kHintOutputOnChip | isa::kHintDoubleBuffered;
  const ProgramEstimate dense =
      estimate_program(conv_program(64, 64, 1, isa::ElementType::kInt8, on_chip), m);
  const MacWork w{
      .positions = 256, .input_channels = 64, .output_channels = 64, .groups = 1, .taps = 9};
  ASSERT_EQ(dense.instructions.size(), 1u);
  EXPECT_EQ(dense.instructions[0].compute_cycles, mac_array_cycles(w, m));
  EXPECT_EQ(dense.instructions[0].macs, 256u * 64 * 64 * 9);
  const ProgramEstimate wide =
      estimate_program(conv_program(64, 64, 1, isa::ElementType::kInt16, on_chip), m);
  EXPECT_EQ(wide.instructions[0].compute_cycles,
            mac_array_cycles(w, m) *
                static_cast<uint64_t>(m.int8_macs_per_cycle() / m.int16_macs_per_cycle));
  const ProgramEstimate depthwise =
      estimate_program(conv_program(64, 64, 64, isa::ElementType::kInt8, on_chip), m);
  EXPECT_EQ(depthwise.instructions[0].compute_cycles, 64u * 2 * 9);
  // Two cores split the cycles and pay kCoreSyncCycles for the second.
  const ProgramEstimate two =
      estimate_program(conv_program(64, 64, 1, isa::ElementType::kInt8, on_chip), m, 2);
  EXPECT_EQ(two.instructions[0].compute_cycles, mac_array_cycles(w, m) / 2 + kCoreSyncCycles);
  // hb_perf's working OPs: the array's capacity over those cycles. Every lane busy in the dense
  // conv, 1 in 32 in the depthwise one; the cores' sync cycles do not count.
  EXPECT_EQ(dense.instructions[0].working_macs, dense.instructions[0].macs);
  EXPECT_EQ(dense.working_ops(), dense.ops());
  EXPECT_EQ(depthwise.instructions[0].working_macs, 32 * depthwise.instructions[0].macs);
  EXPECT_EQ(two.instructions[0].working_macs, dense.instructions[0].macs);
}

TEST(TimingModel, DmaCyclesAreTheBytesOverTheMarchBandwidth) {
  for (const MarchSpec& m : all_marches()) {
    SCOPED_TRACE(std::string(m.name));
    // Nothing on chip: the input (64 x 256 bytes), the weights, biases and multipliers
    // (64 x (9 x 64 + 4 + 8)) and the output (64 x 256) cross the DDR.
    const ProgramEstimate e =
        estimate_program(conv_program(64, 64, 1, isa::ElementType::kInt8, 0), m);
    const InstructionCost& c = e.instructions[0];
    EXPECT_EQ(c.loaded_bytes, 64u * 256 + 64 * (9 * 64 + 12));
    EXPECT_EQ(c.stored_bytes, 64u * 256);
    const double bytes_per_cycle = m.ddr_gbytes_per_s * 1e3 / m.clock_mhz;
    EXPECT_NEAR(static_cast<double>(c.dma_cycles),
                static_cast<double>(c.loaded_bytes + c.stored_bytes) / bytes_per_cycle, 1.0);
    // Not double-buffered: compute and DMA add up, plus the instruction's fixed cost and one tile.
    EXPECT_EQ(c.cycles, c.compute_cycles + c.dma_cycles +
                            static_cast<uint64_t>(m.instruction_cycles) + kTileLaunchCycles);
    const ProgramEstimate overlapped = estimate_program(
        conv_program(64, 64, 1, isa::ElementType::kInt8, isa::kHintDoubleBuffered), m);
    EXPECT_EQ(overlapped.instructions[0].cycles, std::max(c.compute_cycles, c.dma_cycles) +
                                                     static_cast<uint64_t>(m.instruction_cycles) +
                                                     kTileLaunchCycles);
  }
}

TEST(TimingModel, EveryInstructionAndCallPaysTheMarchFixedCosts) {
  for (const MarchSpec& m : all_marches()) {
    SCOPED_TRACE(std::string(m.name));
    // Calls of 2 LUTs each: the second call adds one FunctionBegin and two LUTs.
    const Program one = testing::lut_chain(
        1, [](uint32_t) { return 2u; }, true);
    const Program two = testing::lut_chain(
        2, [](uint32_t) { return 2u; }, true);
    const ProgramEstimate a = estimate_program(one, m), b = estimate_program(two, m);
    ASSERT_EQ(a.instructions.size(), 3u);
    EXPECT_EQ(a.instructions[0].cycles, static_cast<uint64_t>(m.function_call_cycles));
    const InstructionCost& lut = a.instructions[1];
    const uint64_t lanes = static_cast<uint64_t>(m.int8_macs_per_cycle()) / 16;
    EXPECT_EQ(lut.compute_cycles, (4096 + lanes - 1) / lanes);
    EXPECT_EQ(lut.cycles, lut.compute_cycles + lut.dma_cycles +
                              static_cast<uint64_t>(m.instruction_cycles) + kTileLaunchCycles);
    EXPECT_EQ(b.cycles, a.cycles + a.instructions[0].cycles + 2 * lut.cycles);
    EXPECT_DOUBLE_EQ(a.latency_us, static_cast<double>(a.cycles) / m.clock_mhz);
  }
}

}  // namespace
}  // namespace openbpu::simulator
