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
