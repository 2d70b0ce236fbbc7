// Task metrics of a candidate model and the float model, sample by sample.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "openbpu/accuracy/ocr_dataset.h"
#include "openbpu/kernels/tensor.h"

namespace openbpu::accuracy {

class TaskScorer {
 public:
  virtual ~TaskScorer() = default;
  // Scores one sample from the first output of each model; returns a one-line description of
  // the sample's result (for --verbose).
  virtual std::string add(const OcrSample& sample, const kernels::Tensor& float_output,
                          const kernels::Tensor& candidate_output) = 0;
  // Metrics so far, rates in percent: {"float": {...}, "candidate": {...}, "agreement": {...}}
  // (float and candidate against the ground truth, agreement of candidate with float).
  virtual nlohmann::json report() const = 0;
};

}  // namespace openbpu::accuracy
