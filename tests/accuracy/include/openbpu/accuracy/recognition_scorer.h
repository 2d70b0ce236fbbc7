// rec: greedy CTC text of both models; against the ground truth the character error rate and
// the share of exactly right lines, both ignoring spaces as PaddleOCR's RecMetric does; the
// candidate against the float model: the share of lines whose decoded text is identical
// (text_equal, spaces included; text_equal_ignoring_spaces for information) and the CER of the
// candidate's text taking the float model's as the reference.
#pragma once

#include "openbpu/accuracy/ctc_decoder.h"
#include "openbpu/accuracy/task_scorer.h"
#include "openbpu/accuracy/text_distance.h"

namespace openbpu::accuracy {

class RecognitionScorer : public TaskScorer {
 public:
  explicit RecognitionScorer(CtcDictionary dictionary) : dictionary_(std::move(dictionary)) {}
  std::string add(const OcrSample& sample, const kernels::Tensor& float_output,
                  const kernels::Tensor& candidate_output) override;
  nlohmann::json report() const override;

 private:
  CtcDictionary dictionary_;
  CharacterErrorRate float_cer_, candidate_cer_, candidate_vs_float_cer_;
  int64_t lines_ = 0, float_correct_ = 0, candidate_correct_ = 0, text_equal_ = 0;
  int64_t text_equal_ignoring_spaces_ = 0;
};

}  // namespace openbpu::accuracy
