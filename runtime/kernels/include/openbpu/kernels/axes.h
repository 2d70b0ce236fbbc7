// Axis handling shared by kernels: negative axes, axes lists, strides.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "openbpu/kernels/error.h"
#include "openbpu/kernels/tensor.h"

namespace openbpu::kernels {

// Maps axis in [-rank, rank) to [0, rank); KernelError naming `what` otherwise.
inline int64_t normalize_axis(int64_t axis, int64_t rank, std::string_view what = "axis") {
  OPENBPU_CHECK(axis >= -rank && axis < rank, what, " ", axis, " is out of range for rank ", rank,
        " (must be in [", -rank, ", ", rank - 1, "])");
  return axis < 0 ? axis + rank : axis;
}

// Normalises a list of axes; rejects duplicates.
inline std::vector<int64_t> normalize_axes(std::span<const int64_t> axes, int64_t rank,
                                           std::string_view what = "axes") {
  std::vector<int64_t> out;
  out.reserve(axes.size());
  for (int64_t a : axes) {
    const int64_t n = normalize_axis(a, rank, what);
    for (int64_t seen : out) OPENBPU_CHECK(seen != n, what, " lists axis ", a, " twice");
    out.push_back(n);
  }
  return out;
}

// Row-major element strides of a shape.
inline std::vector<int64_t> contiguous_strides(std::span<const int64_t> shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i > 1; --i) strides[i - 2] = strides[i - 1] * shape[i - 1];
  return strides;
}

// Product of dims [begin, end).
inline int64_t dims_product(std::span<const int64_t> shape, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end && i < shape.size(); ++i) p *= shape[i];
  return p;
}

}  // namespace openbpu::kernels
