// det: DB boxes of both models matched against the ground-truth line boxes (recall, precision)
// and the candidate's boxes against the float model's (box_recall, box_precision).
#pragma once

#include "openbpu/accuracy/box_matching.h"
#include "openbpu/accuracy/db_postprocess.h"
#include "openbpu/accuracy/task_scorer.h"

namespace openbpu::accuracy {

class DetectionScorer : public TaskScorer {
 public:
  explicit DetectionScorer(DbOptions db = {}, double min_iou = 0.5) : db_(db), min_iou_(min_iou) {}
  std::string add(const OcrSample& sample, const kernels::Tensor& float_output,
                  const kernels::Tensor& candidate_output) override;
  nlohmann::json report() const override;

 private:
  DbOptions db_;
  double min_iou_;
  MatchCount float_vs_truth_, candidate_vs_truth_, candidate_vs_float_;
};

}  // namespace openbpu::accuracy
