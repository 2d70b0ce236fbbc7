// Type-agnostic element movement for data-movement kernels (Transpose, Slice, Expand, Tile,
// Concat, Gather, ...): elements are moved as opaque values of their byte width, so one code
// path serves every element type of that width (bool, int8 .. int64, float16, float, double...).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "openbpu/kernels/error.h"
#include "openbpu/kernels/thread_pool.h"

namespace openbpu::kernels {

// Calls f.template operator()<U>() with U the unsigned integer type of `width` bytes (1, 2, 4
// or 8); KernelError naming `op` for any other width (e.g. strings).
template <typename F>
void dispatch_by_width(size_t width, std::string_view op, F&& f) {
  switch (width) {
    case 1: f.template operator()<uint8_t>(); return;
    case 2: f.template operator()<uint16_t>(); return;
    case 4: f.template operator()<uint32_t>(); return;
    case 8: f.template operator()<uint64_t>(); return;
    default: fail(op, " cannot move elements of ", width, " bytes");
  }
}

// Copies the elements of a strided view: for every index i of `shape`,
//   dst[sum(i[d] * dst_strides[d])] = src[sum(i[d] * src_strides[d])]
// Strides count elements (of `width` bytes) and may be zero (broadcast) or negative (reversal).
// Contiguous inner runs are copied with memcpy; outer rows run in parallel on `pool` (may be
// null). The caller guarantees every addressed element lies inside its buffer and that distinct
// indices address distinct destination elements.
void copy_strided(ThreadPool* pool, size_t width, std::span<const int64_t> shape, const void* src,
                  std::span<const int64_t> src_strides, void* dst,
                  std::span<const int64_t> dst_strides);

// Fills `count` elements of `width` bytes at dst with copies of the element at `value`.
void fill_elements(ThreadPool* pool, size_t width, void* dst, int64_t count, const void* value);

}  // namespace openbpu::kernels
