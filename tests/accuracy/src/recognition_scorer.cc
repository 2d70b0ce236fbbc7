#include "openbpu/accuracy/recognition_scorer.h"

#include "openbpu/common/error.h"

namespace openbpu::accuracy {

std::string RecognitionScorer::add(const OcrSample& sample, const kernels::Tensor& float_output,
                                   const kernels::Tensor& candidate_output) {
  const std::string float_text = ctc_greedy_decode(float_output, dictionary_);
  const std::string candidate_text = ctc_greedy_decode(candidate_output, dictionary_);
  const std::string truth = without_spaces(sample.text);
  float_cer_.add(truth, without_spaces(float_text));
  candidate_cer_.add(truth, without_spaces(candidate_text));
  candidate_vs_float_cer_.add(float_text, candidate_text);
  ++lines_;
  float_correct_ += without_spaces(float_text) == truth;
  candidate_correct_ += without_spaces(candidate_text) == truth;
  text_equal_ += candidate_text == float_text;
  text_equal_ignoring_spaces_ += without_spaces(candidate_text) == without_spaces(float_text);
  return str_cat(sample.id, " [", sample.condition, "] truth '", sample.text, "' float '",
                 float_text, "' candidate '", candidate_text, "'",
                 candidate_text == float_text ? "" : "  <- differs");
}

nlohmann::json RecognitionScorer::report() const {
  const auto percent = [this](int64_t n) {
    return lines_ ? 100.0 * static_cast<double>(n) / static_cast<double>(lines_) : 0.0;
  };
  return {{"float", {{"cer", 100 * float_cer_.rate()}, {"line_accuracy", percent(float_correct_)}}},
          {"candidate",
           {{"cer", 100 * candidate_cer_.rate()}, {"line_accuracy", percent(candidate_correct_)}}},
          {"agreement",
           {{"text_equal", percent(text_equal_)},
            {"text_equal_ignoring_spaces", percent(text_equal_ignoring_spaces_)},
            {"cer_vs_float", 100 * candidate_vs_float_cer_.rate()}}}};
}

}  // namespace openbpu::accuracy
