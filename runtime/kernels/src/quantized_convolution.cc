#include "openbpu/kernels/quantized_convolution.h"

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <type_traits>

#include "openbpu/kernels/dispatch.h"
#include "openbpu/kernels/error.h"
#include "openbpu/kernels/integer_gemm.h"

namespace openbpu::kernels {

namespace sim = openbpu::simulator;

namespace {

using ActivationTypes = TypeList<int8_t, int16_t>;
using ConvOutputTypes = TypeList<int8_t, int16_t, int32_t>;

// Largest |value| of an activation type.
template <typename T>
constexpr int64_t max_magnitude() {
  return int64_t{1} << (8 * sizeof(T) - 1);
}

// Splits a flat row-major index over `dims` into coordinates.
void unflatten(int64_t flat, const std::vector<int64_t>& dims, std::vector<int64_t>& coords) {
  for (size_t d = dims.size(); d-- > 0;) {
    coords[d] = flat % dims[d];
    flat /= dims[d];
  }
}

// ---------------------------------------------------------------------------------------------
// Output stage

// The reference output stage of one element (the spec's formula with the generic 128-bit
// arithmetic); stores into y[index].
void finish_reference(const QuantizedConvOutputStage& stage, const QuantizedConvOperands& op,
                      int64_t m, int64_t index, int64_t acc) {
  if (op.bias != nullptr) acc += op.bias[m];
  if (op.residual != nullptr) {
    acc += sim::apply_multiplier(op.residual->int_at(index),
                                 stage.residual_multipliers[static_cast<size_t>(m)]);
  }
  int64_t v = 0;
  switch (stage.output_type) {
    case DataType::kInt32: v = sim::saturate<int32_t>(acc); break;
    case DataType::kInt16:
      v = sim::requantize<int16_t>(acc, stage.multipliers[static_cast<size_t>(m)]);
      break;
    default: v = sim::requantize<int8_t>(acc, stage.multipliers[static_cast<size_t>(m)]); break;
  }
  v = std::min(std::max(v, stage.clip_min), stage.clip_max);
  dispatch<ConvOutputTypes>(stage.output_type, "quantized convolution",
                            [&]<typename TY>() { op.y->data<TY>()[index] = static_cast<TY>(v); });
}

// The optimized output stage for one run of `count` outputs of channel m starting at y index
// `offset`, from accumulators without the bias whose magnitude is at most `acc_bound`. When the
// bound shows that every value fits int32, the loop uses the 64-bit multiplier path (equal to
// the 128-bit one, see integer_arithmetic.h) without per-element checks. The clamp bounds lie
// in the output type's range, so clamping also saturates.
template <typename TY, typename TR>
struct RowFinisher {
  const QuantizedConvOutputStage& stage;
  const int32_t* bias;
  const TR* residual;  // null without residual
  TY* y;

  template <typename Acc>
  void operator()(int64_t m, int64_t offset, int64_t count, const Acc* acc,
                  int64_t acc_bound) const {
    const int64_t b = bias != nullptr ? bias[m] : 0;
    const sim::FixedPointMultiplier f =
        stage.multipliers.empty() ? sim::FixedPointMultiplier{} : stage.multipliers[size_t(m)];
    const sim::FixedPointMultiplier fr =
        residual != nullptr ? stage.residual_multipliers[size_t(m)] : sim::FixedPointMultiplier{};
    const int64_t lo = stage.clip_min, hi = stage.clip_max;
    TY* out = y + offset;
    const TR* r = residual != nullptr ? residual + offset : nullptr;
    // min/max rather than branches: outputs below a ReLU's bound are frequent and random.
    auto clamp = [lo, hi](int64_t v) { return static_cast<TY>(std::min(std::max(v, lo), hi)); };
    if constexpr (std::is_same_v<TY, int32_t>) {
      for (int64_t i = 0; i < count; ++i) {
        int64_t a = static_cast<int64_t>(acc[i]) + b;
        if (r != nullptr) a += sim::apply_multiplier_int32(r[i], fr);
        out[i] = clamp(a);
      }
      return;
    }
    const int64_t residual_bound =
        r != nullptr ? sim::apply_multiplier(max_magnitude<TR>(), fr) + 1 : 0;
    const bool fits = acc_bound + std::abs(b) + residual_bound <= INT32_MAX;
    if (fits && r == nullptr) {
      const sim::PreparedMultiplier pf(f);
      for (int64_t i = 0; i < count; ++i) {
        out[i] = clamp(pf.apply(static_cast<int32_t>(acc[i] + b)));
      }
    } else if (fits) {
      const sim::PreparedMultiplier pf(f), pfr(fr);
      for (int64_t i = 0; i < count; ++i) {
        const int64_t a = static_cast<int64_t>(acc[i]) + b + pfr.apply(r[i]);
        out[i] = clamp(pf.apply(static_cast<int32_t>(a)));
      }
    } else {
      for (int64_t i = 0; i < count; ++i) {
        int64_t a = static_cast<int64_t>(acc[i]) + b;
        if (r != nullptr) a += sim::apply_multiplier_int32(r[i], fr);
        out[i] = clamp(sim::saturate<TY>(sim::apply_multiplier(a, f)));
      }
    }
  }
};

// Calls body(finisher) with the RowFinisher for the operands' output and residual types.
template <typename Body>
void with_row_finisher(const QuantizedConvOperands& op, const QuantizedConvOutputStage& stage,
                       Body&& body) {
  dispatch<ConvOutputTypes>(stage.output_type, "quantized convolution", [&]<typename TY>() {
    const DataType residual_type = op.residual != nullptr ? op.residual->dtype() : DataType::kInt8;
    dispatch<ActivationTypes>(residual_type, "quantized convolution residual", [&]<typename TR>() {
      const TR* r = op.residual != nullptr ? op.residual->data<TR>() : nullptr;
      body(RowFinisher<TY, TR>{stage, op.bias, r, op.y->data<TY>()});
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Convolution: GEMM over im2col

// Row k (channel, kd, kh, kw) of one group's im2col matrix, columns [n0, n0 + nc), as int16.
// Columns are walked in runs along one output row, where the input column advances by the
// stride and the valid part is one contiguous range.
template <typename TX>
void im2col_row(const Window3D& w3, const TX* x, int64_t k, int64_t n0, int64_t nc, int16_t* dst) {
  const int64_t in_d = w3.in[0], in_h = w3.in[1], in_w = w3.in[2];
  const int64_t out_h = w3.out[1], out_w = w3.out[2];
  const int64_t sw = w3.strides[2];
  const int64_t kw = k % w3.kernel[2];
  k /= w3.kernel[2];
  const int64_t kh = k % w3.kernel[1];
  k /= w3.kernel[1];
  const int64_t kd = k % w3.kernel[0];
  const TX* xc = x + (k / w3.kernel[0]) * w3.in_size();
  const int64_t offset_w = kw * w3.dilations[2] - w3.pads[2];  // iw = ow * sw + offset_w
  int64_t ow = n0 % out_w, oh = (n0 / out_w) % out_h, od = n0 / (out_w * out_h);
  for (int64_t j = 0; j < nc;) {
    const int64_t run = std::min(nc - j, out_w - ow);
    const int64_t id = od * w3.strides[0] - w3.pads[0] + kd * w3.dilations[0];
    const int64_t ih = oh * w3.strides[1] - w3.pads[1] + kh * w3.dilations[1];
    int64_t lo = run, hi = run;
    if (id >= 0 && id < in_d && ih >= 0 && ih < in_h) {
      const int64_t first = offset_w + ow * sw;  // input column of t = 0
      lo = std::clamp<int64_t>(first >= 0 ? 0 : ceil_div(-first, sw), 0, run);
      hi = std::clamp<int64_t>(floor_div(in_w - 1 - first, sw) + 1, lo, run);
    }
    int16_t* out = dst + j;
    std::fill(out, out + lo, int16_t{0});
    if (lo < hi) {
      // Input column of output column t is first + t * sw, >= 0 from t = lo on.
      const TX* src = xc + (id * in_h + ih) * in_w + (offset_w + ow * sw + lo * sw);
      for (int64_t t = lo; t < hi; ++t) out[t] = src[(t - lo) * sw];
    }
    std::fill(out + hi, out + run, int16_t{0});
    j += run;
    ow = 0;
    if (++oh == out_h) {
      oh = 0;
      ++od;
    }
  }
}

// Writes depth pair p of the GEMM panel from two rows of nc columns (r1 null: zeros); columns
// past nc in the last strip are 0.
template <typename T>
void interleave_pair(const T* r0, const T* r1, int64_t nc, int64_t pairs, int64_t p,
                     int16_t* panel) {
  constexpr int64_t kCols = kIntGemmStripCols;
  const int64_t full = nc / kCols;
  for (int64_t j = 0; j < full; ++j) {
    int16_t* dst = panel + (j * pairs + p) * kCols * 2;
    const T* s0 = r0 + j * kCols;
    if (r1 != nullptr) {
      const T* s1 = r1 + j * kCols;
      for (int64_t q = 0; q < kCols; ++q) {
        dst[2 * q] = s0[q];
        dst[2 * q + 1] = s1[q];
      }
    } else {
      for (int64_t q = 0; q < kCols; ++q) {
        dst[2 * q] = s0[q];
        dst[2 * q + 1] = 0;
      }
    }
  }
  if (full * kCols < nc) {
    int16_t* dst = panel + (full * pairs + p) * kCols * 2;
    for (int64_t q = 0; q < kCols; ++q) {
      const int64_t c = full * kCols + q;
      dst[2 * q] = c < nc ? static_cast<int16_t>(r0[c]) : int16_t{0};
      dst[2 * q + 1] = c < nc && r1 != nullptr ? static_cast<int16_t>(r1[c]) : int16_t{0};
    }
  }
}

// True if the im2col matrix is the input itself (1x1 kernel, stride 1, no padding).
bool is_pointwise(const Window3D& w3) {
  for (size_t i = 0; i < 3; ++i) {
    if (w3.kernel[i] != 1 || w3.strides[i] != 1 || w3.pads[i] != 0 || w3.in[i] != w3.out[i]) {
      return false;
    }
  }
  return true;
}

// Packs columns [n0, n0 + nc) of the im2col matrix (depth rows) in the GEMM's pair layout.
template <typename TX>
void pack_im2col_pairs(const Window3D& w3, const TX* x, int64_t depth, int64_t n0, int64_t nc,
                       int64_t pairs, int16_t* panel) {
  if (is_pointwise(w3)) {  // depth rows are the input channels
    const int64_t in_size = w3.in_size();
    for (int64_t p = 0; p < pairs; ++p) {
      const TX* r0 = x + 2 * p * in_size + n0;
      const TX* r1 = 2 * p + 1 < depth ? r0 + in_size : nullptr;
      interleave_pair(r0, r1, nc, pairs, p, panel);
    }
    return;
  }
  thread_local std::vector<int16_t> rows;
  rows.resize(static_cast<size_t>(2 * nc));
  int16_t* r0 = rows.data();
  int16_t* r1 = rows.data() + nc;
  for (int64_t p = 0; p < pairs; ++p) {
    im2col_row(w3, x, 2 * p, n0, nc, r0);
    const bool second = 2 * p + 1 < depth;
    if (second) im2col_row(w3, x, 2 * p + 1, n0, nc, r1);
    interleave_pair<int16_t>(r0, second ? r1 : nullptr, nc, pairs, p, panel);
  }
}

template <typename TX, typename Finisher>
void conv_gemm(const ConvGeometry& g, const TX* x, const int8_t* w,
               std::span<const PackedIntGemmLhs> packed, const Finisher& finish, ThreadPool* pool) {
  const Window3D w3(g.window);
  const int64_t cin_g = g.in_channels_per_group(), cout_g = g.out_channels_per_group();
  const int64_t in_size = w3.in_size(), out_size = w3.out_size();
  const int64_t depth = cin_g * w3.kernel_size();
  const int64_t acc_bound = depth * 128 * max_magnitude<TX>();  // |Σ x·w|
  for (int64_t grp = 0; grp < g.group; ++grp) {
    std::optional<PackedIntGemmLhs> local;
    if (static_cast<int64_t>(packed.size()) != g.group) local.emplace(cout_g, depth, w + grp * cout_g * depth, depth);
    const PackedIntGemmLhs& weights = local ? *local : packed[size_t(grp)];
    for (int64_t n = 0; n < g.batch; ++n) {
      const TX* xg = x + (n * g.in_channels + grp * cin_g) * in_size;
      const int64_t y_base = (n * g.out_channels + grp * cout_g) * out_size;
      int_gemm_packed(
          weights, out_size, max_magnitude<TX>(),
          [&](int64_t n0, int64_t nc, int64_t pairs, int16_t* panel) {
            pack_im2col_pairs(w3, xg, depth, n0, nc, pairs, panel);
          },
          [&](const IntGemmTile& tile) {
            for (int64_t r = 0; r < tile.rows; ++r) {
              const int64_t ocg = tile.row0 + r;
              const int64_t m = grp * cout_g + ocg, offset = y_base + ocg * out_size + tile.col0;
              if (tile.narrow != nullptr) {
                finish(m, offset, tile.cols, tile.narrow + r * kIntGemmStripCols, acc_bound);
              } else {
                finish(m, offset, tile.cols, tile.wide + r * kIntGemmStripCols, acc_bound);
              }
            }
          },
          pool);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Convolution: direct depthwise (one input channel per group), 1-D or 2-D

template <typename Acc, typename TX, typename Finisher>
void conv_depthwise(const ConvGeometry& g, const TX* x, const int8_t* w, const Finisher& finish,
                    ThreadPool* pool) {
  const Window3D w3(g.window);
  const int64_t ih_n = w3.in[1], iw_n = w3.in[2], oh_n = w3.out[1], ow_n = w3.out[2];
  const int64_t kh_n = w3.kernel[1], kw_n = w3.kernel[2];
  const int64_t sh = w3.strides[1], sw = w3.strides[2], dh = w3.dilations[1], dw = w3.dilations[2],
                ph = w3.pads[1], pw = w3.pads[2];
  const int64_t multiplier = g.out_channels_per_group();
  const int64_t in_plane = ih_n * iw_n, out_plane = oh_n * ow_n;
  const int64_t acc_bound = kh_n * kw_n * 128 * max_magnitude<TX>();  // |Σ x·w|
  parallel_for(pool, g.batch * g.out_channels, 1, [&](int64_t begin, int64_t end) {
    std::vector<Acc> acc(static_cast<size_t>(ow_n));
    for (int64_t plane = begin; plane < end; ++plane) {
      const int64_t n = plane / g.out_channels, oc = plane % g.out_channels;
      const TX* xin = x + (n * g.in_channels + oc / multiplier) * in_plane;
      const int8_t* wk = w + oc * kh_n * kw_n;
      for (int64_t oh = 0; oh < oh_n; ++oh) {
        Acc* row = acc.data();
        std::fill(row, row + ow_n, Acc{0});
        for (int64_t kh = 0; kh < kh_n; ++kh) {
          const int64_t ih = oh * sh - ph + kh * dh;
          if (ih < 0 || ih >= ih_n) continue;
          const TX* irow = xin + ih * iw_n;
          for (int64_t kw = 0; kw < kw_n; ++kw) {
            const Acc wv = wk[kh * kw_n + kw];
            if (wv == 0) continue;
            const int64_t offset = kw * dw - pw;  // iw = ow * sw + offset
            const int64_t lo = offset >= 0 ? 0 : ceil_div(-offset, sw);
            const int64_t hi = std::min(ow_n, floor_div(iw_n - 1 - offset, sw) + 1);
            if (lo >= hi) continue;
            const TX* src = irow + (lo * sw + offset);  // input column of output column lo
            Acc* dst = row + lo;
            const int64_t count = hi - lo;
            if (sw == 1 && std::is_same_v<TX, int8_t>) {
              // |w·x| <= 2^14: the product is an int16 (vectorises as 16-bit multiplies).
              const int16_t w16 = static_cast<int16_t>(wv);
              for (int64_t t = 0; t < count; ++t) {
                dst[t] += static_cast<int16_t>(w16 * static_cast<int16_t>(src[t]));
              }
            } else if (sw == 2 && std::is_same_v<TX, int8_t>) {
              const int16_t w16 = static_cast<int16_t>(wv);
              for (int64_t t = 0; t < count; ++t) {
                dst[t] += static_cast<int16_t>(w16 * static_cast<int16_t>(src[2 * t]));
              }
            } else if (sw == 1) {
              for (int64_t t = 0; t < count; ++t) dst[t] += wv * static_cast<Acc>(src[t]);
            } else {
              for (int64_t t = 0; t < count; ++t) dst[t] += wv * static_cast<Acc>(src[t * sw]);
            }
          }
        }
        finish(oc, plane * out_plane + oh * ow_n, ow_n, row, acc_bound);
      }
    }
  });
}

// ---------------------------------------------------------------------------------------------
// ConvTranspose: direct scatter per output plane

template <typename TX, typename Finisher>
void conv_transpose_direct(const ConvGeometry& g, const TX* x, const int8_t* w,
                           const Finisher& finish, ThreadPool* pool) {
  const Window3D w3(g.window);
  const int64_t cin_g = g.in_channels_per_group(), cout_g = g.out_channels_per_group();
  const int64_t in_size = w3.in_size(), out_size = w3.out_size(), kvol = w3.kernel_size();
  // |Σ x·w|: every output receives at most cin_g · kvol products.
  const int64_t acc_bound = cin_g * kvol * 128 * max_magnitude<TX>();
  parallel_for(pool, g.batch * g.out_channels, 1, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> acc(static_cast<size_t>(out_size));
    for (int64_t plane = begin; plane < end; ++plane) {
      const int64_t n = plane / g.out_channels, oc = plane % g.out_channels;
      const int64_t grp = oc / cout_g, ocg = oc % cout_g;
      std::fill(acc.begin(), acc.end(), int64_t{0});
      for (int64_t icg = 0; icg < cin_g; ++icg) {
        const int64_t ic = grp * cin_g + icg;
        const TX* xin = x + (n * g.in_channels + ic) * in_size;
        const int8_t* wk = w + (ic * cout_g + ocg) * kvol;
        for (int64_t k = 0; k < kvol; ++k) {
          const int64_t wv = wk[k];
          if (wv == 0) continue;
          const int64_t kw = k % w3.kernel[2], kh = (k / w3.kernel[2]) % w3.kernel[1],
                        kd = k / (w3.kernel[2] * w3.kernel[1]);
          const int64_t offset_w = kw * w3.dilations[2] - w3.pads[2];  // ow = iw * sw + offset_w
          const int64_t lo = offset_w >= 0 ? 0 : ceil_div(-offset_w, w3.strides[2]);
          const int64_t hi =
              std::min(w3.in[2], floor_div(w3.out[2] - 1 - offset_w, w3.strides[2]) + 1);
          if (lo >= hi) continue;
          for (int64_t id = 0; id < w3.in[0]; ++id) {
            const int64_t od = id * w3.strides[0] + kd * w3.dilations[0] - w3.pads[0];
            if (od < 0 || od >= w3.out[0]) continue;
            for (int64_t ih = 0; ih < w3.in[1]; ++ih) {
              const int64_t oh = ih * w3.strides[1] + kh * w3.dilations[1] - w3.pads[1];
              if (oh < 0 || oh >= w3.out[1]) continue;
              const TX* xrow = xin + (id * w3.in[1] + ih) * w3.in[2];
              // Output column of input column iw is iw * sw + offset_w, >= 0 from iw = lo on.
              int64_t* orow =
                  acc.data() + (od * w3.out[1] + oh) * w3.out[2] + (lo * w3.strides[2] + offset_w);
              for (int64_t iw = lo; iw < hi; ++iw) {
                orow[(iw - lo) * w3.strides[2]] += wv * xrow[iw];
              }
            }
          }
        }
      }
      finish(oc, plane * out_size, out_size, acc.data(), acc_bound);
    }
  });
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Entry points

void quantized_conv_reference(const ConvGeometry& g, const QuantizedConvOperands& op,
                              const QuantizedConvOutputStage& stage) {
  const WindowGeometry& win = g.window;
  const size_t r = win.rank();
  const int64_t cin_g = g.in_channels_per_group(), cout_g = g.out_channels_per_group();
  const int64_t in_size = win.in_size(), out_size = win.out_size(), kvol = win.kernel_size();
  std::vector<int64_t> o(r), kp(r);
  dispatch<ActivationTypes>(op.x->dtype(), "quantized convolution", [&]<typename TX>() {
    const TX* x = op.x->data<TX>();
    for (int64_t n = 0; n < g.batch; ++n) {
      for (int64_t oc = 0; oc < g.out_channels; ++oc) {
        const int64_t grp = oc / cout_g;
        for (int64_t opos = 0; opos < out_size; ++opos) {
          unflatten(opos, win.out, o);
          int64_t acc = 0;
          for (int64_t icg = 0; icg < cin_g; ++icg) {
            const int64_t x_base = (n * g.in_channels + grp * cin_g + icg) * in_size;
            const int64_t w_base = (oc * cin_g + icg) * kvol;
            for (int64_t k = 0; k < kvol; ++k) {
              unflatten(k, win.kernel, kp);
              int64_t x_off = 0;
              bool inside = true;
              for (size_t d = 0; d < r && inside; ++d) {
                const int64_t pos =
                    o[d] * win.strides[d] - win.pads_begin[d] + kp[d] * win.dilations[d];
                inside = pos >= 0 && pos < win.in[d];
                x_off = x_off * win.in[d] + pos;
              }
              if (inside) acc += int64_t{x[x_base + x_off]} * op.w[w_base + k];
            }
          }
          finish_reference(stage, op, oc, (n * g.out_channels + oc) * out_size + opos, acc);
        }
      }
    }
  });
}

void quantized_conv(const ConvGeometry& g, const QuantizedConvOperands& op,
                    const QuantizedConvOutputStage& stage, ThreadPool* pool) {
  const WindowGeometry& win = g.window;
  if (win.rank() > 3) {
    quantized_conv_reference(g, op, stage);
    return;
  }
  dispatch<ActivationTypes>(op.x->dtype(), "quantized convolution", [&]<typename TX>() {
    const TX* x = op.x->data<TX>();
    with_row_finisher(op, stage, [&](const auto& finish) {
      if (g.in_channels_per_group() == 1 && win.rank() <= 2) {
        // int32 sums cannot overflow when kernel taps x 128 x max|x| < 2^31.
        if (win.kernel_size() * 128 * max_magnitude<TX>() < (int64_t{1} << 31)) {
          conv_depthwise<int32_t>(g, x, op.w, finish, pool);
        } else {
          conv_depthwise<int64_t>(g, x, op.w, finish, pool);
        }
      } else {
        conv_gemm(g, x, op.w, op.packed_weights, finish, pool);
      }
    });
  });
}

std::vector<PackedIntGemmLhs> pack_quantized_conv_weights(const Tensor& w, int64_t group) {
  std::vector<PackedIntGemmLhs> packed;
  const int64_t spatial = w.rank() - 2, m = w.rank() >= 3 ? w.dim(0) : 0;
  if (w.dtype() != DataType::kInt8 || spatial < 1 || spatial > 3 || group <= 0 || m % group != 0 ||
      (w.dim(1) == 1 && spatial <= 2)) {
    return packed;
  }
  const int64_t cout_g = m / group, depth = w.element_count() / std::max<int64_t>(m, 1);
  for (int64_t grp = 0; grp < group; ++grp) {
    packed.emplace_back(cout_g, depth, w.data<int8_t>() + grp * cout_g * depth, depth);
  }
  return packed;
}

void quantized_conv_transpose_reference(const ConvGeometry& g, const QuantizedConvOperands& op,
                                        const QuantizedConvOutputStage& stage) {
  OPENBPU_CHECK(op.residual == nullptr, "quantized ConvTranspose has no residual input");
  const WindowGeometry& win = g.window;
  const size_t r = win.rank();
  const int64_t cin_g = g.in_channels_per_group(), cout_g = g.out_channels_per_group();
  const int64_t in_size = win.in_size(), out_size = win.out_size(), kvol = win.kernel_size();
  std::vector<int64_t> acc(static_cast<size_t>(g.batch * g.out_channels * out_size), 0);
  std::vector<int64_t> ip(r), kp(r);
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t ic = 0; ic < g.in_channels; ++ic) {
      const int64_t grp = ic / cin_g;
      for (int64_t i = 0; i < in_size; ++i) {
        unflatten(i, win.in, ip);
        const int64_t xv = op.x->int_at((n * g.in_channels + ic) * in_size + i);
        for (int64_t ocg = 0; ocg < cout_g; ++ocg) {
          const int64_t oc = grp * cout_g + ocg;
          for (int64_t k = 0; k < kvol; ++k) {
            unflatten(k, win.kernel, kp);
            int64_t o_off = 0;
            bool inside = true;
            for (size_t d = 0; d < r && inside; ++d) {
              const int64_t pos =
                  ip[d] * win.strides[d] + kp[d] * win.dilations[d] - win.pads_begin[d];
              inside = pos >= 0 && pos < win.out[d];
              o_off = o_off * win.out[d] + pos;
            }
            if (!inside) continue;
            acc[size_t((n * g.out_channels + oc) * out_size + o_off)] +=
                xv * op.w[(ic * cout_g + ocg) * kvol + k];
          }
        }
      }
    }
  }
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t oc = 0; oc < g.out_channels; ++oc) {
      for (int64_t o = 0; o < out_size; ++o) {
        const int64_t index = (n * g.out_channels + oc) * out_size + o;
        finish_reference(stage, op, oc, index, acc[size_t(index)]);
      }
    }
  }
}

void quantized_conv_transpose(const ConvGeometry& g, const QuantizedConvOperands& op,
                              const QuantizedConvOutputStage& stage, ThreadPool* pool) {
  OPENBPU_CHECK(op.residual == nullptr, "quantized ConvTranspose has no residual input");
  if (g.window.rank() > 3) {
    quantized_conv_transpose_reference(g, op, stage);
    return;
  }
  dispatch<ActivationTypes>(op.x->dtype(), "quantized convolution", [&]<typename TX>() {
    const TX* x = op.x->data<TX>();
    with_row_finisher(op, stage,
                      [&](const auto& finish) { conv_transpose_direct(g, x, op.w, finish, pool); });
  });
}

bool conv_integer_gemm(const ConvGeometry& g, const Tensor& x, const Tensor& w, int32_t x_zero,
                       const std::vector<int32_t>& w_zero, int32_t* y, ThreadPool* pool) {
  if (g.window.rank() > 3 || static_cast<int64_t>(w_zero.size()) != g.out_channels) return false;
  // The weights less their zero points as int8 (the GEMM's A), the input less its zero point
  // as int16 (|x - x_zero| <= 255; padding contributes 0 as in the reference loop).
  const int64_t per_channel = w.element_count() / std::max<int64_t>(g.out_channels, 1);
  std::vector<int8_t> w8(static_cast<size_t>(w.element_count()));
  bool fits = true;
  dispatch<TypeList<uint8_t, int8_t>>(w.dtype(), "ConvInteger", [&]<typename TW>() {
    const TW* pw = w.data<TW>();
    for (int64_t m = 0; m < g.out_channels && fits; ++m) {
      const int32_t zero = w_zero[static_cast<size_t>(m)];
      for (int64_t i = m * per_channel; i < (m + 1) * per_channel; ++i) {
        const int32_t v = int32_t{pw[i]} - zero;
        fits = fits && v >= -128 && v <= 127;
        w8[static_cast<size_t>(i)] = static_cast<int8_t>(v);
      }
    }
  });
  if (!fits) return false;
  std::vector<int16_t> x16(static_cast<size_t>(x.element_count()));
  dispatch<TypeList<uint8_t, int8_t>>(x.dtype(), "ConvInteger", [&]<typename TX>() {
    const TX* px = x.data<TX>();
    for (size_t i = 0; i < x16.size(); ++i) x16[i] = static_cast<int16_t>(int32_t{px[i]} - x_zero);
  });
  auto finish = [&](int64_t, int64_t offset, int64_t cols, const auto* sums, int64_t) {
    for (int64_t c = 0; c < cols; ++c) {
      y[offset + c] = static_cast<int32_t>(static_cast<uint32_t>(static_cast<int64_t>(sums[c])));
    }
  };
  conv_gemm(g, x16.data(), w8.data(), {}, finish, pool);
  return true;
}

}  // namespace openbpu::kernels
