// Functional units kCopy and kFill (isa.h): strided DMA and constant fill.
//
// The index space is walked row by row (the innermost axis after merging axes that are
// contiguous in every operand and dropping axes of extent 1); rows contiguous in both operands
// are one memcpy.
#include <array>
#include <cstring>

#include "openbpu/simulator/integer_arithmetic.h"
#include "access.h"
#include "units.h"

namespace openbpu::simulator::functional {

namespace {

using isa::ElementType;
using isa::kMaxRank;

template <typename T>
void fill_typed(const isa::TensorDesc& y, int64_t value, uint8_t* memory) {
  const T v = saturate<T>(value);
  const Walk<1> w = make_walk<1>({&y});
  const int64_t n = w.dims[w.rank - 1], stride = w.strides[0][w.rank - 1];
  for_each_row(w, {int64_t{y.address}}, [&](const std::array<int64_t, 1>& o) {
    uint8_t* p = memory + o[0];
    for (int64_t i = 0; i < n; ++i) std::memcpy(p + i * stride, &v, sizeof(T));
  });
}

}  // namespace

void copy(const isa::CopyInstruction& in, Memory memory) {
  const Walk<2> w = make_walk<2>({&in.destination, &in.source});
  const int64_t n = w.dims[w.rank - 1];
  const int64_t dst_stride = w.strides[0][w.rank - 1], src_stride = w.strides[1][w.rank - 1];
  const int64_t width = isa::element_bytes(in.source.type);
  uint8_t* mem = memory.data();
  const bool contiguous = dst_stride == width && src_stride == width;
  for_each_row(w, {int64_t{in.destination.address}, int64_t{in.source.address}},
               [&](const std::array<int64_t, 2>& o) {
                 uint8_t* dst = mem + o[0];
                 const uint8_t* src = mem + o[1];
                 if (contiguous) {
                   std::memmove(dst, src, static_cast<size_t>(n * width));
                 } else if (width == 1) {
                   for (int64_t i = 0; i < n; ++i) dst[i * dst_stride] = src[i * src_stride];
                 } else {
                   for (int64_t i = 0; i < n; ++i) {
                     std::memcpy(dst + i * dst_stride, src + i * src_stride, size_t(width));
                   }
                 }
               });
}

void fill(const isa::FillInstruction& in, Memory memory) {
  switch (in.destination.type) {
    case ElementType::kInt32: fill_typed<int32_t>(in.destination, in.value, memory.data()); break;
    case ElementType::kInt16: fill_typed<int16_t>(in.destination, in.value, memory.data()); break;
    default: fill_typed<int8_t>(in.destination, in.value, memory.data()); break;
  }
}

}  // namespace openbpu::simulator::functional
