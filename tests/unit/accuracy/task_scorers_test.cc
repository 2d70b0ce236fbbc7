#include <gtest/gtest.h>

#include "openbpu/accuracy/classification_scorer.h"
#include "openbpu/accuracy/detection_scorer.h"
#include "openbpu/accuracy/recognition_scorer.h"

namespace openbpu::accuracy {
namespace {

using kernels::Tensor;

// A rec output [1, T, 5] for dictionary {a, b, c} (+ blank, space) spelling `classes`.
Tensor rec_output(const std::vector<int>& classes) {
  std::vector<float> v(classes.size() * 5, 0.0f);
  for (size_t t = 0; t < classes.size(); ++t) v[t * 5 + static_cast<size_t>(classes[t])] = 1.0f;
  return Tensor::from_values<float>({1, static_cast<int64_t>(classes.size()), 5}, v);
}

TEST(RecognitionScorer, GroundTruthIgnoresSpacesAgreementDoesNot) {
  RecognitionScorer scorer(CtcDictionary({"a", "b", "c"}));
  OcrSample s;
  s.text = "ab c";
  // float "abc" (right once spaces are ignored), candidate "ab c": equal to the truth but not
  // to the float text.
  scorer.add(s, rec_output({1, 2, 3}), rec_output({1, 2, 4, 3}));
  s.text = "cc";
  // both "c": one deletion each.
  scorer.add(s, rec_output({3, 0}), rec_output({3, 3}));
  const auto r = scorer.report();
  EXPECT_DOUBLE_EQ(r["float"]["cer"].get<double>(), 100.0 * 1 / 5);
  EXPECT_DOUBLE_EQ(r["candidate"]["cer"].get<double>(), 100.0 * 1 / 5);
  EXPECT_DOUBLE_EQ(r["float"]["line_accuracy"].get<double>(), 50.0);
  EXPECT_DOUBLE_EQ(r["candidate"]["line_accuracy"].get<double>(), 50.0);
  EXPECT_DOUBLE_EQ(r["agreement"]["text_equal"].get<double>(), 50.0);
  EXPECT_DOUBLE_EQ(r["agreement"]["text_equal_ignoring_spaces"].get<double>(), 100.0);
  EXPECT_DOUBLE_EQ(r["agreement"]["cer_vs_float"].get<double>(), 100.0 * 1 / 4);
}

TEST(ClassificationScorer, Top1AgainstLabelAndFloat) {
  ClassificationScorer scorer;
  OcrSample s;
  const auto scores = [](float p0, float p1) {
    return Tensor::from_values<float>({1, 2}, std::vector<float>{p0, p1});
  };
  s.label = 0;
  scorer.add(s, scores(0.9f, 0.1f), scores(0.6f, 0.4f));  // both right
  s.label = 1;
  scorer.add(s, scores(0.2f, 0.8f), scores(0.7f, 0.3f));  // candidate wrong, differs
  s.label = 1;
  scorer.add(s, scores(0.6f, 0.4f), scores(0.9f, 0.1f));  // both wrong, agree
  s.label = 0;
  scorer.add(s, scores(0.9f, 0.1f), scores(0.9f, 0.1f));
  const auto r = scorer.report();
  EXPECT_DOUBLE_EQ(r["float"]["top1"].get<double>(), 75.0);
  EXPECT_DOUBLE_EQ(r["candidate"]["top1"].get<double>(), 50.0);
  EXPECT_DOUBLE_EQ(r["agreement"]["top1_equal"].get<double>(), 75.0);
}

TEST(DetectionScorer, BoxesAgainstTruthAndFloat) {
  // 40x100 maps; truth: two lines. Float finds both, the candidate only the first.
  const auto map = [](bool second) {
    std::vector<float> v(40 * 100, 0.0f);
    const auto fill = [&](int x0, int y0, int x1, int y1) {
      for (int y = y0; y <= y1; ++y)
        for (int x = x0; x <= x1; ++x) v[static_cast<size_t>(y * 100 + x)] = 0.9f;
    };
    fill(10, 5, 80, 12);
    if (second) fill(10, 25, 60, 32);
    return Tensor::from_values<float>({1, 1, 40, 100}, v);
  };
  OcrSample s;
  s.lines = {{"first", {5, 1, 86, 17, 1}}, {"second", {5, 21, 66, 37, 1}}};
  DetectionScorer scorer;
  scorer.add(s, map(true), map(false));
  const auto r = scorer.report();
  EXPECT_DOUBLE_EQ(r["float"]["recall"].get<double>(), 100.0);
  EXPECT_DOUBLE_EQ(r["float"]["precision"].get<double>(), 100.0);
  EXPECT_DOUBLE_EQ(r["candidate"]["recall"].get<double>(), 50.0);
  EXPECT_DOUBLE_EQ(r["candidate"]["precision"].get<double>(), 100.0);
  EXPECT_DOUBLE_EQ(r["agreement"]["box_recall"].get<double>(), 50.0);
  EXPECT_DOUBLE_EQ(r["agreement"]["box_precision"].get<double>(), 100.0);
}

}  // namespace
}  // namespace openbpu::accuracy
