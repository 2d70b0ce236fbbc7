// The operator families: each file of ops/ appends its rows to the registry (op_defs.cc calls
// them in the order of docs/supported_ops.md).
#pragma once

#include <vector>

#include "openbpu/bpu_support/op_def.h"

namespace openbpu::bpu_support::ops {

void add_convolutions(std::vector<OpDef>& registry);      // Conv, HzPreprocess, ConvTranspose, Gemm, MatMul
void add_elementwise(std::vector<OpDef>& registry);       // Add, Sub, Mul
void add_reductions(std::vector<OpDef>& registry);        // GlobalAveragePool, AveragePool, ReduceMean
void add_axis_functions(std::vector<OpDef>& registry);    // ArgMax, Softmax
void add_resizes(std::vector<OpDef>& registry);           // Resize, Upsample
void add_table_functions(std::vector<OpDef>& registry);   // Sigmoid ... Mish, Pow, Relu, Clip
void add_data_movement(std::vector<OpDef>& registry);     // MaxPool, Concat, Reshape, ...

}  // namespace openbpu::bpu_support::ops
