// Internal: what the convolution engines share (conv.cc, conv_lanes.cc) — one instruction's
// geometry, its output stage's tables (PreparedTable: the requantize unit's too), and the engines
// other files define.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <utility>

#include "isa_clones.h"
#include "openbpu/simulator/integer_arithmetic.h"
#include "openbpu/simulator/isa.h"
#include "scratch.h"

namespace openbpu::simulator::functional {

// A valid kernel tap of one output row (or column): kernel index and input index.
struct Tap {
  int64_t k;
  int64_t i;
};

// The taps of each output row (or column), in one array: (*this)[o] for o < size().
class TapTable {
 public:
  TapTable() = default;
  // taps in output order; start[o] is the first of output o's, start.back() their count.
  TapTable(ScratchVector<Tap> taps, ScratchVector<int64_t> start)
      : taps_(std::move(taps)), start_(std::move(start)) {}
  std::span<const Tap> operator[](size_t o) const {
    return {taps_.data() + start_[o], taps_.data() + start_[o + 1]};
  }

 private:
  ScratchVector<Tap> taps_;
  ScratchVector<int64_t> start_;
};
using TapSpan = std::span<const Tap>;

// An output pixel.
struct Pixel {
  int64_t n, oh, ow;
};

// Geometry and operands of one instruction, in int64.
struct Conv {
  int64_t N, C, H, W, M, OH, OW, KH, KW, group, Cg, Mg;
  int64_t x_address, xs[4];  // input address and byte strides (N, C, H, W)
  TapTable rows, cols;
  bool transposed;
  int64_t stride_w;       // input columns between adjacent output columns' taps (1 if transposed)
  int64_t dilation_w;
  int64_t memory_bytes;   // the device memory's size
  int64_t col_period;     // output columns with the same taps: the stride of a transposed conv, else 1
  const int8_t* weights;  // [M][KH][KW][Cg]
};

// A table of prepared multipliers (PreparedMultiplier's fields), one array per field.
struct PreparedTable {
  ScratchVector<int32_t> multiplier;
  ScratchVector<int64_t> rounding, shift;
  void push_back(FixedPointMultiplier f) {
    const PreparedMultiplier p(f);
    multiplier.push_back(p.multiplier);
    rounding.push_back(p.rounding);
    shift.push_back(p.shift);
  }
  void set(int64_t i, FixedPointMultiplier f) {
    const PreparedMultiplier p(f);
    multiplier[size_t(i)] = p.multiplier;
    rounding[size_t(i)] = p.rounding;
    shift[size_t(i)] = p.shift;
  }
  // Entries [from, from + n) copied to [to, to + n) (within the size; none if empty).
  void copy_row(int64_t from, int64_t to, int64_t n) {
    if (multiplier.empty()) return;
    std::copy_n(multiplier.begin() + from, n, multiplier.begin() + to);
    std::copy_n(rounding.begin() + from, n, rounding.begin() + to);
    std::copy_n(shift.begin() + from, n, shift.begin() + to);
  }
};

// The output stage of isa.h for up to kFinishPixels output pixels at once, from their
// accumulators Σ x·w (without bias) laid out [pixel][M]: the per-channel tables are repeated
// for that many pixels, so that the stage is one long loop over pixel × channel.
inline constexpr int64_t kFinishPixels = 8;

struct OutputStage {
  int64_t M;
  int64_t batch;                                // pixels per call: kFinishPixels, more when M is small
  ScratchVector<int64_t> bias;                  // batch × M (zeros without a bias)
  ScratchVector<FixedPointMultiplier> requant;  // M entries, empty for an int32 output
  PreparedTable prepared;                       // batch × M, prepared requant
  PreparedTable residual;                       // M entries when there is a residual
  int64_t clip_min, clip_max;
  isa::TensorDesc y, r;
};

// Runs the output stage for `count` <= s.batch pixels from acc[p·M + m] (conv.cc, finisher).
using FinishFn = void (*)(const OutputStage&, uint8_t*, const Pixel*, int64_t, int64_t*);

#if OPENBPU_HOST_X86
// The lane engine (conv_lanes.cc; AVX-512 VNNI hosts): whether it runs a convolution (group 1,
// at most 16 output channels, dense channels, every gathered dword inside memory), and running it.
template <typename TX>
bool lane_engine_fits(const Conv& g);
template <typename TX>
void conv_lanes(const Conv& g, const OutputStage& s, FinishFn finish, uint8_t* memory);
#endif

}  // namespace openbpu::simulator::functional
