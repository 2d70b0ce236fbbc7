#include "openbpu/kernels/broadcast.h"

#include <algorithm>

#include "openbpu/kernels/error.h"

namespace openbpu::kernels {

Shape broadcast_shapes(std::span<const Shape* const> shapes, std::string_view op) {
  size_t rank = 0;
  for (const Shape* s : shapes) rank = std::max(rank, s->size());
  Shape out(rank, 1);
  for (const Shape* s : shapes) {
    const size_t offset = rank - s->size();
    for (size_t i = 0; i < s->size(); ++i) {
      const int64_t d = (*s)[i];
      int64_t& o = out[offset + i];
      if (d == o || d == 1) continue;
      if (o == 1) {
        o = d;
        continue;
      }
      std::string list;
      for (const Shape* t : shapes) list += (list.empty() ? "" : " and ") + shape_to_string(*t);
      fail(op, ": shapes ", list, " cannot be broadcast (dimension ", offset + i, ": ", o,
           " vs ", d, ")");
    }
  }
  return out;
}

Shape broadcast_shapes(const Shape& a, const Shape& b, std::string_view op) {
  const Shape* shapes[] = {&a, &b};
  return broadcast_shapes(shapes, op);
}

BinaryBroadcastRuns::BinaryBroadcastRuns(const Shape& a, const Shape& b, const Shape& out) {
  const std::vector<int64_t> sa = broadcast_strides(a, out);
  const std::vector<int64_t> sb = broadcast_strides(b, out);
  for (size_t d = 0; d < out.size(); ++d) {
    const int64_t n = out[d];
    if (n == 1) continue;
    if (!dims_.empty() && a_strides_.back() == sa[d] * n && b_strides_.back() == sb[d] * n) {
      dims_.back() *= n;
      a_strides_.back() = sa[d];
      b_strides_.back() = sb[d];
    } else {
      dims_.push_back(n);
      a_strides_.push_back(sa[d]);
      b_strides_.push_back(sb[d]);
    }
  }
  if (dims_.empty()) {
    dims_ = {1};
    a_strides_ = {0};
    b_strides_ = {0};
  }
  inner_ = dims_.back();
  a_step_ = a_strides_.back();
  b_step_ = b_strides_.back();
}

std::vector<int64_t> broadcast_strides(const Shape& shape, const Shape& out_shape) {
  const size_t rank = out_shape.size();
  std::vector<int64_t> strides(rank, 0);
  const size_t offset = rank - shape.size();
  int64_t stride = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[offset + i] = shape[i] == 1 ? 0 : stride;
    stride *= shape[i];
  }
  return strides;
}

}  // namespace openbpu::kernels
