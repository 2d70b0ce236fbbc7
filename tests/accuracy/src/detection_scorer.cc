#include "openbpu/accuracy/detection_scorer.h"

#include "openbpu/common/error.h"

namespace openbpu::accuracy {

std::string DetectionScorer::add(const OcrSample& sample, const kernels::Tensor& float_output,
                                 const kernels::Tensor& candidate_output) {
  std::vector<Box> truth;
  for (const OcrTextLine& line : sample.lines) truth.push_back(line.box);
  const std::vector<Box> float_boxes = db_boxes(float_output, db_);
  const std::vector<Box> candidate_boxes = db_boxes(candidate_output, db_);
  const MatchCount f = match_boxes(truth, float_boxes, min_iou_);
  const MatchCount c = match_boxes(truth, candidate_boxes, min_iou_);
  const MatchCount cf = match_boxes(float_boxes, candidate_boxes, min_iou_);
  float_vs_truth_ += f;
  candidate_vs_truth_ += c;
  candidate_vs_float_ += cf;
  return str_cat(sample.id, " [", sample.condition, "] lines ", truth.size(), ": float ", f.matched,
                 "/", float_boxes.size(), " boxes right, candidate ", c.matched, "/",
                 candidate_boxes.size(), ", candidate boxes matching float ", cf.matched);
}

nlohmann::json DetectionScorer::report() const {
  const auto side = [](const MatchCount& m) {
    return nlohmann::json{{"recall", 100 * m.recall()},
                          {"precision", 100 * m.precision()},
                          {"matched", m.matched},
                          {"truth_boxes", m.reference},
                          {"boxes", m.predicted}};
  };
  return {{"float", side(float_vs_truth_)},
          {"candidate", side(candidate_vs_truth_)},
          {"agreement",
           {{"box_recall", 100 * candidate_vs_float_.recall()},
            {"box_precision", 100 * candidate_vs_float_.precision()}}}};
}

}  // namespace openbpu::accuracy
