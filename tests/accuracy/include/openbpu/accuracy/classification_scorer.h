// cls: top-1 of both models against the orientation label, and the share of samples where the
// candidate's top-1 equals the float model's.
#pragma once

#include "openbpu/accuracy/task_scorer.h"

namespace openbpu::accuracy {

class ClassificationScorer : public TaskScorer {
 public:
  std::string add(const OcrSample& sample, const kernels::Tensor& float_output,
                  const kernels::Tensor& candidate_output) override;
  nlohmann::json report() const override;

 private:
  int64_t samples_ = 0, float_correct_ = 0, candidate_correct_ = 0, top1_equal_ = 0;
};

}  // namespace openbpu::accuracy
