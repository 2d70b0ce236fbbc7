// Whole-output comparisons of a candidate model with the float model.
#pragma once

#include <cstdint>

#include "openbpu/kernels/tensor.h"

namespace openbpu::accuracy {

// Cosine similarity of two tensors of the same shape, as flat vectors (double accumulation).
// 1 when both are all zeros, 0 when only one is. Throws Error if the shapes differ.
double cosine_similarity(const kernels::Tensor& a, const kernels::Tensor& b);

// Index of the largest element of the last axis of an output [1, C] (any leading dimensions
// of size 1); the first one on ties. Throws Error naming the shape for anything else.
int64_t top1_class(const kernels::Tensor& scores);

}  // namespace openbpu::accuracy
