// Activations whose calibrated threshold is 0 have no scale. Two causes:
// - a method returned 0 for a tensor that is not 0 on the samples (a safeguard: the histogram
//   methods return a bin edge above 0): it takes its maximum |x| over the samples;
// - the tensor is 0 on every calibration sample (a branch the data never exercises, a Concat of
//   zero constants, a Cast(Equal(...)) that is always false), which the reference toolchain
//   refuses as an illegal threshold: it takes the threshold of the nearest calibrated tensor
//   upstream that is not 0 (1.0 if there is none), so it keeps the scale of the data it is
//   computed from, and a warning names it and what it took.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "openbpu/calibration/tensor_statistics.h"
#include "openbpu/ir/graph.h"

namespace openbpu::calibration {

// Fixes the thresholds of `nodes` (HzCalibration nodes by tensor, in the calibrated model) that
// are all 0; `statistics` are the tensors' statistics over `samples` samples. Returns one
// warning per tensor that was 0 on every sample.
std::vector<std::string> replace_zero_thresholds(const std::map<std::string, ir::Node*>& nodes,
                                                 const std::map<std::string, TensorStatistics>& statistics,
                                                 size_t samples);

}  // namespace openbpu::calibration
