// The conversion's node and output tables, in the original toolchain's layout:
//
//   Node          ON   Subgraph  Type                Cosine Similarity  Threshold  In/Out DataType
//   conv1         BPU  id(0)     HzSQuantizedConv    0.999393           1.11671    int8/int8
//   softmax       CPU  --        Softmax             0.999100           --         float/float
//
//   Output  Cosine Similarity  L1 Distance  L2 Distance  Chebyshev Distance
//   y       0.999588           0.333628     0.000637     4.750465
//
// Cosine similarity of a node compares its output in the float (optimized) model with the
// dequantized output in the quantized model on one input (the first calibration sample).
// L1 = mean |d|, L2 = sqrt(Σ d²) / N, Chebyshev = max |d|.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "openbpu/kernels/tensor.h"
#include "openbpu/quantization/quantizer.h"

namespace openbpu::pipeline {

struct TensorComparison {
  double cosine = 0, l1 = 0, l2 = 0, chebyshev = 0;
};
TensorComparison compare_tensors(const kernels::Tensor& reference, const kernels::Tensor& candidate);

// Runs both models on `feeds` (the quantized model's inputs; `float_feeds` for the float model)
// and compares every node's output tensor (by float-model name) and every model output.
struct ModelComparison {
  std::map<std::string, TensorComparison> tensors;  // float-model tensor name → comparison
  std::vector<std::pair<std::string, TensorComparison>> outputs;
};
ModelComparison compare_models(const ir::Model& float_model, const quantization::QuantizeResult& quantized,
                               const std::map<std::string, kernels::Tensor>& float_feeds,
                               const std::map<std::string, kernels::Tensor>& quantized_feeds, int threads);

std::string node_table(const std::vector<quantization::NodeReport>& nodes, const ModelComparison* comparison);
std::string output_table(const ModelComparison& comparison);

}  // namespace openbpu::pipeline
