// Functional units kCopy and kFill (isa.h): strided DMA and constant fill.
//
// The index space is walked row by row (the innermost axis after merging axes that are
// contiguous in every operand and dropping axes of extent 1; in the destination's memory
// order); rows contiguous in both operands are one memcpy. A copy's rows are split over the host
// threads; the runtime's moves between dense tensors and device memory are copies too.
#include <array>
#include <cstring>

#include "openbpu/simulator/integer_arithmetic.h"
#include "access.h"
#include "isa_clones.h"
#include "parallel.h"
#include "units.h"

namespace openbpu::simulator::functional {

namespace {

using isa::ElementType;
using isa::kMaxRank;
using simulator::HostIsa;

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

// The rows [r0, r1) of a copy's walk: operand 0 the destination (bytes from `to`), 1 the source
// (from `from`).
struct CopyRows {
  struct Context {
    Walk<2> w;
    std::array<int64_t, 2> base;
    int64_t width;
    uint8_t* to;
    const uint8_t* from;
  };
  template <HostIsa>
  OPENBPU_INLINE static void run(const Context& c, const int64_t& r0, const int64_t& r1, const int64_t&) {
    const int64_t n = c.w.dims[c.w.rank - 1], width = c.width;
    const int64_t dst_stride = c.w.strides[0][c.w.rank - 1], src_stride = c.w.strides[1][c.w.rank - 1];
    const bool contiguous = dst_stride == width && src_stride == width;
    for_rows(c.w, c.base, r0, r1, [&](const std::array<int64_t, 2>& o) {
      uint8_t* dst = c.to + o[0];
      const uint8_t* src = c.from + o[1];
      if (contiguous) {
        std::memmove(dst, src, static_cast<size_t>(n * width));
      } else if (width == 1) {
        for (int64_t i = 0; i < n; ++i) dst[i * dst_stride] = src[i * src_stride];
      } else if (width == 2) {
        for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * dst_stride, src + i * src_stride, 2);
      } else {
        for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * dst_stride, src + i * src_stride, size_t(width));
      }
    });
  }
};

// Copies every element of `source` (bytes from `from`) to the same index of `destination`
// (bytes from `to`), the walk in the memory order of whichever operand gives the longer rows,
// split over the host threads. The two byte ranges must not overlap.
void copy_elements(const isa::TensorDesc& destination, uint8_t* to, const isa::TensorDesc& source,
                   const uint8_t* from) {
  const Walk<2> by_destination = make_walk<2>({&destination, &source}, 0);
  const Walk<2> by_source = make_walk<2>({&destination, &source}, 1);
  CopyRows::Context c{by_source.dims[by_source.rank - 1] > by_destination.dims[by_destination.rank - 1]
                          ? by_source
                          : by_destination,
                      {int64_t{destination.address}, int64_t{source.address}},
                      isa::element_bytes(source.type),
                      to,
                      from};
  cut_long_rows(c.w);
  const int64_t rows = row_count(c.w);
  split_rows<CopyRows, HostIsa::kScalar>(c, rows, row_parts(rows, c.w.dims[c.w.rank - 1]));
}

}  // namespace

void copy(const isa::CopyInstruction& in, Memory memory) {
  // The verifier refuses copies whose source and destination bytes overlap, so neither the
  // order nor the split over host threads can change the result.
  copy_elements(in.destination, memory.data(), in.source, memory.data());
}

namespace {
// desc's dims, dense row-major at address 0.
isa::TensorDesc packed_desc(const isa::TensorDesc& desc) {
  isa::TensorDesc packed = desc;
  packed.address = 0;
  int64_t stride = isa::element_bytes(desc.type);
  for (uint32_t d = desc.rank; d-- > 0;) {
    packed.strides[d] = static_cast<int32_t>(stride);
    stride *= desc.dims[d];
  }
  return packed;
}
}  // namespace

void dense_to_device(const isa::TensorDesc& desc, const uint8_t* dense, uint8_t* device) {
  copy_elements(desc, device, packed_desc(desc), dense);
}

void device_to_dense(const isa::TensorDesc& desc, const uint8_t* device, uint8_t* dense) {
  copy_elements(packed_desc(desc), dense, desc, device);
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
