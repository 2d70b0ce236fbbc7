// calibration_type 'load': thresholds from a QAT/QDQ model (QuantizeLinear/DequantizeLinear).
//
// For every QuantizeLinear with a constant scale, the threshold of the tensor it quantizes is
// the symmetric range its integers stand for: with zero point z and integer range [lo, hi]
// (int8 [-128, 127], uint8 [0, 255], int16, uint16), T = max(z - lo, hi - z) * scale, which is
// 127 * scale for symmetric int8 (z = 0; the -128 code is not used by symmetric ranges).
// Per-axis scales give one threshold per channel. Each threshold is recorded under the
// QuantizeLinear's input name and under the output names of the DequantizeLinear nodes that read
// it (the names a model keeps after the QDQ pairs are removed differ by exporter).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "openbpu/ir/graph.h"
#include "openbpu/kernels/tensor.h"

namespace openbpu::calibration {

struct LoadedThreshold {
  std::vector<float> values;  // one, or one per channel along `axis`
  int axis = 1;
  int bits = 8;  // 16 for an int16/uint16 QuantizeLinear
};

std::map<std::string, LoadedThreshold> load_qdq_thresholds(const ir::Model& qdq_model);

// Thresholds are found by tensor name, and graph rewrites can give a name to a different value
// (ONNX Runtime names the Add in front of a Relu it dropped after the Relu; an optimizer pass
// may move a scale across a tensor). This keeps a loaded threshold only where the name still
// holds the same value: `before` (the float model as the QDQ model defines it) and `after` (the
// model being calibrated) run on `feeds`; a name both compute whose element count, max |x| or
// mean |x| differ (by more than 1e-3 of max |x|) loses its threshold (the calibration then
// treats the tensor as one the QDQ model does not cover). Returns the names dropped, sorted.
std::vector<std::string> drop_moved_thresholds(const ir::Model& before, const ir::Model& after,
                                               const std::map<std::string, kernels::Tensor>& feeds,
                                               std::map<std::string, LoadedThreshold>& loaded,
                                               int threads);

}  // namespace openbpu::calibration
