// Building a fully connected layer as a 1x1 Conv (shared by gemm_to_conv and matmul_to_conv).
#pragma once

#include <optional>
#include <vector>

#include "graph_rewrite.h"

namespace openbpu::passes {

// y[r, m] = bias[m] + Σ_k x[r, k]·weight[m, k] for the rows r of `rows` ([R, K] or any tensor
// with the rows along axis 0 after `to_nchw`): inserts before `before`
//   Reshape(x, to_nchw) → Conv(weight as [M, K, 1, 1], bias) → Reshape(·, from_nchw)
// and returns the last value, typed `result_type`. The Reshape targets are int64 constants;
// `nchw_shape` (the Conv input shape, if known) types the intermediate values.
struct LinearAsConv {
  ir::Value* input;
  std::vector<float> weight;               // [M, K] row-major
  int64_t out_channels;                    // M
  int64_t in_channels;                     // K
  std::optional<std::vector<float>> bias;  // [M]
  std::vector<int64_t> to_nchw;
  std::vector<int64_t> from_nchw;
  std::optional<Shape> nchw_shape;
  ir::TensorType result_type;
  std::string name;  // base for new names
};
ir::Value* insert_linear_as_conv(GraphRewriter& rw, ir::Node* before, const LinearAsConv& spec);

// An ir::TensorType for a known shape.
ir::TensorType typed(DataType dtype, const std::optional<Shape>& shape);

}  // namespace openbpu::passes
