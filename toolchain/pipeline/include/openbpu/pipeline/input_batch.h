// input_batch / separate_batch on the quantized model.
//
// Calibration runs at the input_shape of the yaml (first dim 1); the quantized model, which the
// backend compiles, then takes `batch` items at once: the input's first dim becomes `batch`,
// Reshape targets whose first entry is the batch of 1 passing through become `batch`, and types
// are set from a batched run. With separate_batch (hb_compile) the input is split into `batch`
// inputs of one item each, named <input>_<i>, that a Concat along axis 0 joins under the input's
// name.
//
// A model can hide the batch of 1 elsewhere (a Reshape that merges it into another dim, Expand,
// a Slice on axis 0, a reduction over axis 0); so the batched model is checked: every item of a
// batched run must equal the batch-1 model's result on that item alone, bit for bit. If not, or
// if the batched model does not run, the Error names the input_batch value and the first output and
// item that differ.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "openbpu/ir/graph.h"
#include "openbpu/kernels/tensor.h"

namespace openbpu::pipeline {

struct InputBatchResult {
  std::vector<std::string> log;  // lines for the conversion log
};

// `items`: `batch` feeds of the batch-1 model (one tensor per input, first dim 1), used for the
// check; the value types of the result are those of the batched check run. Throws Error.
InputBatchResult apply_input_batch(ir::Model& model, int64_t batch, bool separate,
                                   const std::vector<std::map<std::string, kernels::Tensor>>& items,
                                   int threads);

}  // namespace openbpu::pipeline
