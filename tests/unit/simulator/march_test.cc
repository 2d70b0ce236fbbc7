#include "openbpu/simulator/march.h"

#include <gtest/gtest.h>

namespace openbpu::simulator {
namespace {

TEST(MarchTable, PeakFiguresFollowThePublicChips) {
  // The virtual BPU is sized after the public TOPS of each chip (within 10%).
  struct Expect {
    March march;
    double tops;
  };
  for (const Expect e : {Expect{March::kBernoulli2, 5}, Expect{March::kBayes, 96},
                         Expect{March::kBayesE, 10}, Expect{March::kNashE, 80},
                         Expect{March::kNashM, 128}}) {
    const MarchSpec& m = march_spec(e.march);
    EXPECT_NEAR(m.peak_int8_tops() / e.tops, 1.0, 0.1) << m.name << ": " << m.peak_int8_tops();
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
