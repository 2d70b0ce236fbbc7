#include "openbpu/accuracy/classification_scorer.h"

#include "openbpu/accuracy/output_similarity.h"
#include "openbpu/common/error.h"

namespace openbpu::accuracy {

std::string ClassificationScorer::add(const OcrSample& sample, const kernels::Tensor& float_output,
                                      const kernels::Tensor& candidate_output) {
  const int64_t f = top1_class(float_output);
  const int64_t c = top1_class(candidate_output);
  ++samples_;
  float_correct_ += f == sample.label;
  candidate_correct_ += c == sample.label;
  top1_equal_ += f == c;
  return str_cat(sample.id, " [", sample.condition, "] label ", sample.label, " float ", f,
                 " candidate ", c, f == c ? "" : "  <- differs");
}

nlohmann::json ClassificationScorer::report() const {
  const auto percent = [this](int64_t n) {
    return samples_ ? 100.0 * static_cast<double>(n) / static_cast<double>(samples_) : 0.0;
  };
  return {{"float", {{"top1", percent(float_correct_)}}},
          {"candidate", {{"top1", percent(candidate_correct_)}}},
          {"agreement", {{"top1_equal", percent(top1_equal_)}}}};
}

}  // namespace openbpu::accuracy
