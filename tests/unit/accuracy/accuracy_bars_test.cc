#include "openbpu/accuracy/accuracy_bars.h"

#include <gtest/gtest.h>

#include "openbpu/common/error.h"

namespace openbpu::accuracy {
namespace {

nlohmann::json rec_report() {
  return {{"kind", "rec"},
          {"output_cosine", {{"mean", 0.97}, {"min", 0.6}}},
          {"float", {{"cer", 6.0}}},
          {"candidate", {{"cer", 7.5}}},
          {"agreement", {{"text_equal", 91.0}}}};
}

TEST(AccuracyBars, ChecksOnlyTheBarsThatAreSet) {
  EXPECT_TRUE(check_bars(rec_report(), {}).empty());
  AccuracyBars bars;
  bars.min_cosine = 0.99;
  bars.min_text_equal = 90;
  bars.max_cer_delta = 1;
  const auto checks = check_bars(rec_report(), bars);
  ASSERT_EQ(checks.size(), 3u);
  EXPECT_EQ(checks[0].option, "--min-cosine");
  EXPECT_FALSE(checks[0].met);
  EXPECT_TRUE(checks[1].met);
  EXPECT_DOUBLE_EQ(checks[2].value, 1.5);  // candidate CER - float CER
  EXPECT_FALSE(checks[2].met);
}

TEST(AccuracyBars, BoxDeltaIsTheLargerLossAndIgnoresGains) {
  nlohmann::json det = {{"kind", "det"},
                        {"float", {{"recall", 99.0}, {"precision", 97.0}}},
                        {"candidate", {{"recall", 98.5}, {"precision", 100.0}}}};
  AccuracyBars bars;
  bars.max_box_delta = 1;
  auto checks = check_bars(det, bars);
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_DOUBLE_EQ(checks[0].value, 0.5);
  EXPECT_TRUE(checks[0].met);
  det["candidate"]["recall"] = 97.5;
  EXPECT_FALSE(check_bars(det, bars)[0].met);
}

TEST(AccuracyBars, RejectsABarOfAnotherKind) {
  AccuracyBars bars;
  bars.min_top1_agree = 99;
  EXPECT_THROW(check_bars(rec_report(), bars), Error);
  bars = {};
  bars.max_box_delta = 1;
  EXPECT_THROW(check_bars(rec_report(), bars), Error);
  EXPECT_THROW(require_bars_apply("rec", bars), Error);
  EXPECT_NO_THROW(require_bars_apply("det", bars));
}

}  // namespace
}  // namespace openbpu::accuracy
