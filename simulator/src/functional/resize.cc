// Functional unit kResize (isa.h, ResizeInstruction): selection or bilinear blending with the
// compiler's coordinate tables {i0, i1, f} per output row and column.
#include <cstring>
#include <vector>

#include "openbpu/simulator/integer_arithmetic.h"
#include "access.h"
#include "isa_clones.h"
#include "parallel.h"
#include "scratch.h"
#include "units.h"

namespace openbpu::simulator::functional {

namespace {

using isa::ElementType;
using simulator::HostIsa;

// One entry of a coordinate table, with the input indices as byte offsets along the axis.
struct Coordinate {
  int64_t o0, o1;  // i0 · stride, i1 · stride
  int64_t f;       // weight of i1, in [0, 1024]
};

ScratchVector<Coordinate> read_table(const uint8_t* memory, uint32_t address, int64_t count,
                                   int64_t stride) {
  ScratchVector<Coordinate> table(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    const uint8_t* e = memory + address + 12 * i;
    table[size_t(i)] = {load<int32_t>(e) * stride, load<int32_t>(e + 4) * stride, load<int32_t>(e + 8)};
  }
  return table;
}

// One output pixel's C channels (element strides xc, yc bytes). |sum| < 2^15 · 2^20 · 4, so the
// int64 rounding shift is the definition's.
template <typename T>
OPENBPU_INLINE void resize_pixel(isa::ResizeMode mode, const uint8_t* xn, const Coordinate& r, const Coordinate& c,
                                 int64_t C, int64_t xc, uint8_t* out, int64_t yc) {
  constexpr int64_t kOne = int64_t{1} << kResizeFractionBits;
  if (mode == isa::ResizeMode::kNearest) {
    const uint8_t* src = xn + r.o0 + c.o0;
    for (int64_t ch = 0; ch < C; ++ch) store<T>(out + ch * yc, load<T>(src + ch * xc));
    return;
  }
  const uint8_t* p00 = xn + r.o0 + c.o0;
  const uint8_t* p01 = xn + r.o0 + c.o1;
  const uint8_t* p10 = xn + r.o1 + c.o0;
  const uint8_t* p11 = xn + r.o1 + c.o1;
  const int64_t w00 = (kOne - r.f) * (kOne - c.f), w01 = (kOne - r.f) * c.f, w10 = r.f * (kOne - c.f),
                w11 = r.f * c.f;
  for (int64_t ch = 0; ch < C; ++ch) {
    const int64_t o = ch * xc;
    const int64_t sum =
        load<T>(p00 + o) * w00 + load<T>(p01 + o) * w01 + load<T>(p10 + o) * w10 + load<T>(p11 + o) * w11;
    store<T>(out + ch * yc, saturate<T>(round_shift_right_int64(sum, 2 * kResizeFractionBits)));
  }
}

// The output rows [r0, r1) (n·OH + oh) of a resize, compiled per host ISA; channels contiguous
// in both tensors (NHWC) take unit strides.
template <typename T>
struct ResizeRows {
  struct Context {
    const isa::ResizeInstruction& in;
    const Coordinate* rows;
    const Coordinate* cols;
    uint8_t* memory;
  };
  template <HostIsa>
  OPENBPU_INLINE static void run(const Context& c, const int64_t& r0, const int64_t& r1, const int64_t&) {
    const isa::TensorDesc &x = c.in.input, &y = c.in.output;
    const int64_t C = y.dims[1], OH = y.dims[2], OW = y.dims[3];
    const int64_t xc = x.strides[1], yc = y.strides[1];
    const bool dense = xc == int64_t{sizeof(T)} && yc == int64_t{sizeof(T)};
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t n = r / OH, oh = r % OH;
      const uint8_t* xn = c.memory + x.address + n * x.strides[0];
      for (int64_t ow = 0; ow < OW; ++ow) {
        uint8_t* out = c.memory + y.address + n * y.strides[0] + oh * y.strides[2] + ow * y.strides[3];
        const Coordinate &row = c.rows[oh], &col = c.cols[ow];
        if (dense) {
          resize_pixel<T>(c.in.mode, xn, row, col, C, sizeof(T), out, sizeof(T));
        } else {
          resize_pixel<T>(c.in.mode, xn, row, col, C, xc, out, yc);
        }
      }
    }
  }
};

// The unit: its coordinate tables, then its output rows split over the host threads.
template <typename T>
struct ResizeKernel {
  template <HostIsa kIsa>
  OPENBPU_INLINE static void run(const isa::ResizeInstruction& in, uint8_t* const& memory) {
    const isa::TensorDesc &x = in.input, &y = in.output;
    const int64_t rows = int64_t{y.dims[0]} * y.dims[2], per_row = int64_t{y.dims[1]} * y.dims[3];
    const ScratchVector<Coordinate> row_table = read_table(memory, in.row_table, y.dims[2], x.strides[2]);
    const ScratchVector<Coordinate> col_table = read_table(memory, in.col_table, y.dims[3], x.strides[3]);
    split_rows<ResizeRows<T>, kIsa>(typename ResizeRows<T>::Context{in, row_table.data(), col_table.data(), memory},
                                    rows, row_parts(rows, per_row));
  }
};

}  // namespace

void resize(const isa::ResizeInstruction& in, Memory memory) {
  with_activation_type(in.input.type, [&](auto t) { host_dispatch<ResizeKernel<decltype(t)>>(in, memory.data()); });
}

}  // namespace openbpu::simulator::functional
