// Functional units kCopy and kFill (isa.h): strided DMA and constant fill.
//
// The index space is walked row by row (the innermost axis after merging axes that are
// contiguous in every operand and dropping axes of extent 1; in the destination's memory
// order); rows contiguous in both operands are one memcpy.
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
  const Walk<1> w = make_walk<1>({&y}, 0);
  const int64_t n = w.dims[w.rank - 1], stride = w.strides[0][w.rank - 1];
  for_each_row(w, {int64_t{y.address}}, [&](const std::array<int64_t, 1>& o) {
    uint8_t* p = memory + o[0];
    for (int64_t i = 0; i < n; ++i) std::memcpy(p + i * stride, &v, sizeof(T));
  });
}

}  // namespace

void copy(const isa::CopyInstruction& in, Memory memory) {
  // In the destination's memory order (contiguous rows there): the verifier refuses copies whose
  // source and destination bytes overlap, so the order cannot change the result.
  const Walk<2> w = make_walk<2>({&in.destination, &in.source}, 0);
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

void gather_elements(const isa::GatherElementsInstruction& in, Memory memory) {
  const isa::TensorDesc &x = in.input, &y = in.output;
  const int64_t width = isa::element_bytes(x.type);
  uint8_t* mem = memory.data();
  std::array<uint32_t, kMaxRank> index{};
  uint64_t count = 1;
  for (uint32_t d = 0; d < y.rank; ++d) count *= y.dims[d];
  for (uint64_t k = 0; k < count; ++k) {
    int32_t at = 0;
    std::memcpy(&at, mem + in.table + 4 * k, sizeof(at));
    int64_t src = x.address, dst = y.address;
    for (uint32_t d = 0; d < y.rank; ++d) {
      src += int64_t{d == in.axis ? static_cast<uint32_t>(at) : index[d]} * x.strides[d];
      dst += int64_t{index[d]} * y.strides[d];
    }
    std::memcpy(mem + dst, mem + src, size_t(width));
    for (uint32_t d = y.rank; d-- > 0;) {  // the next index, row-major
      if (++index[d] < y.dims[d]) break;
      index[d] = 0;
    }
  }
}

void fill(const isa::FillInstruction& in, Memory memory) {
  switch (in.destination.type) {
    case ElementType::kInt32: fill_typed<int32_t>(in.destination, in.value, memory.data()); break;
    case ElementType::kInt16: fill_typed<int16_t>(in.destination, in.value, memory.data()); break;
    default: fill_typed<int8_t>(in.destination, in.value, memory.data()); break;
  }
}

}  // namespace openbpu::simulator::functional
