// Scoring a calibrated model: run it (HzCalibration nodes as fake quantization) on a few samples
// and compare its outputs with the float model's by cosine similarity.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "openbpu/executor/float_executor.h"
#include "openbpu/ir/graph.h"

namespace openbpu::calibration {

using kernels::Tensor;

struct EvaluationSet {
  std::vector<std::map<std::string, Tensor>> feeds;    // per sample
  std::vector<std::vector<Tensor>> reference_outputs;  // per sample, graph output order
};

// Cosine similarity of two tensors of the same element count (any float or integer type),
// accumulated in double in element order. 1 if both are all zero, 0 if only one is.
double cosine_similarity(const Tensor& a, const Tensor& b);

// Prepares an executor for the model as it is now (attributes are read at prepare) and returns
// the mean, over samples and graph outputs, of the outputs' cosine with the references.
double output_cosine(const ir::Model& model, const EvaluationSet& set,
                     const executor::ExecutorOptions& options);

}  // namespace openbpu::calibration
