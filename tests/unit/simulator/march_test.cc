#include "openbpu/simulator/march.h"

#include <gtest/gtest.h>

namespace openbpu::simulator {
namespace {

TEST(MarchTable, PeakFiguresStayWithinThePublicChips) {
  // The virtual BPU is sized after the public TOPS of each chip, never above them (within 10%).
  // X3's and X5's are "equivalent" figures; their arrays follow the boards' measured latencies
  // (march.cc) and stay below: at least a fifth of the public figure.
  struct Expect {
    March march;
    double tops;
  };
  for (const Expect e : {Expect{March::kBernoulli2, 5}, Expect{March::kBayes, 96},
                         Expect{March::kBayesE, 10}, Expect{March::kNashE, 80},
                         Expect{March::kNashM, 128}}) {
    const MarchSpec& m = march_spec(e.march);
    EXPECT_LE(m.peak_int8_tops() / e.tops, 1.1) << m.name << ": " << m.peak_int8_tops();
    EXPECT_GE(m.peak_int8_tops() / e.tops, 0.2) << m.name << ": " << m.peak_int8_tops();
  }
}

TEST(MarchTable, MacArraysAreAsWideAsTheChannelAlignment) {
  for (const MarchSpec& m : all_marches()) {
    EXPECT_EQ(m.mac_input_lanes, m.channel_align) << m.name;
    EXPECT_EQ(m.mac_output_lanes, m.channel_align) << m.name;
    EXPECT_EQ(m.int8_macs_per_cycle(), m.mac_input_lanes * m.mac_output_lanes * m.mac_positions);
    EXPECT_GT(m.instruction_cycles, 0) << m.name;
    EXPECT_EQ(m.function_call_cycles, m.clock_mhz) << m.name << ": a call costs 1 us";
  }
}

TEST(MarchTable, NamesRoundTripAndOrderMatchesTheEnum) {
  for (size_t i = 0; i < all_marches().size(); ++i) {
    const MarchSpec& m = all_marches()[i];
    EXPECT_EQ(static_cast<size_t>(m.march), i);
    EXPECT_EQ(march_from_name(m.name), m.march);
  }
  EXPECT_FALSE(march_from_name("bayes_e").has_value());
  EXPECT_FALSE(march_spec(March::kBernoulli2).supports_int16());
  EXPECT_TRUE(march_spec(March::kBayesE).supports_int16());
}

}  // namespace
}  // namespace openbpu::simulator
