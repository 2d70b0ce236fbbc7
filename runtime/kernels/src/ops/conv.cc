// Convolutions: Conv, ConvTranspose, ConvInteger, QLinearConv; and the sliding-window geometry
// (auto_pad, pads, strides, dilations) that the pooling operators share (convolution.h).
//
// Each operator has a naive reference loop. float32 Conv and ConvTranspose run an optimized path
// beside it: im2col packed straight into GEMM panels (or the input itself for 1x1 stride-1
// kernels), a direct depthwise loop, and GEMM + col2im for ConvTranspose. Tests compare the two.
#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <type_traits>

#include "families.h"
#include "openbpu/kernels/axes.h"
#include "openbpu/kernels/convolution.h"
#include "openbpu/kernels/dispatch.h"
#include "openbpu/kernels/gemm.h"
#include "openbpu/kernels/quantization.h"
#include "openbpu/kernels/quantized_convolution.h"
#include "openbpu/kernels/vector_clones.h"

namespace openbpu::kernels {

// ---------------------------------------------------------------------------------------------
// Window geometry

AutoPad parse_auto_pad(std::string_view op, const AttributeMap& attrs) {
  const std::string value = attrs.get_string("auto_pad", "NOTSET");
  if (value == "NOTSET" || value.empty()) return AutoPad::kNotSet;
  if (value == "VALID") return AutoPad::kValid;
  if (value == "SAME_UPPER") return AutoPad::kSameUpper;
  if (value == "SAME_LOWER") return AutoPad::kSameLower;
  fail(op, ": auto_pad must be NOTSET, VALID, SAME_UPPER or SAME_LOWER, got \"", value, "\"");
}

WindowAttributes WindowAttributes::read(std::string_view op, const AttributeMap& attrs) {
  WindowAttributes w;
  w.kernel_shape = attrs.get_ints("kernel_shape", {});
  w.strides = attrs.get_ints("strides", {});
  w.dilations = attrs.get_ints("dilations", {});
  w.pads = attrs.get_ints("pads", {});
  w.auto_pad = parse_auto_pad(op, attrs);
  for (int64_t k : w.kernel_shape) OPENBPU_CHECK(k > 0, op, ": kernel_shape entries must be > 0, got ", k);
  for (int64_t s : w.strides) OPENBPU_CHECK(s > 0, op, ": strides must be > 0, got ", s);
  for (int64_t d : w.dilations) OPENBPU_CHECK(d > 0, op, ": dilations must be > 0, got ", d);
  for (int64_t p : w.pads) OPENBPU_CHECK(p >= 0, op, ": pads must be >= 0, got ", p);
  return w;
}

int64_t WindowGeometry::in_size() const {
  return dims_product(in, 0, in.size());
}
int64_t WindowGeometry::out_size() const {
  return dims_product(out, 0, out.size());
}
int64_t WindowGeometry::kernel_size() const {
  return dims_product(kernel, 0, kernel.size());
}

namespace {

// Checks that an attribute list has the spatial rank (or is absent) and returns it or `fill`.
std::vector<int64_t> per_axis(std::string_view op, std::string_view name,
                              const std::vector<int64_t>& values, size_t count, int64_t fill) {
  if (values.empty()) return std::vector<int64_t>(count, fill);
  OPENBPU_CHECK(values.size() == count, op, ": ", name, " must have ", count,
        " entries (one per spatial axis), got ", values.size());
  return values;
}

}  // namespace

void resolve_window(std::string_view op, const WindowAttributes& attrs, bool ceil_mode,
                    WindowGeometry& g) {
  const size_t r = g.in.size();
  OPENBPU_CHECK(g.kernel.size() == r, op, ": kernel has ", g.kernel.size(), " spatial axes, input has ", r);
  g.strides = per_axis(op, "strides", attrs.strides, r, 1);
  g.dilations = per_axis(op, "dilations", attrs.dilations, r, 1);
  const std::vector<int64_t> pads = per_axis(op, "pads", attrs.pads, 2 * r, 0);
  g.out.assign(r, 0);
  g.pads_begin.assign(r, 0);
  g.pads_end.assign(r, 0);
  for (size_t i = 0; i < r; ++i) {
    const int64_t in = g.in[i], s = g.strides[i];
    const int64_t span = (g.kernel[i] - 1) * g.dilations[i] + 1;  // dilated kernel extent
    switch (attrs.auto_pad) {
      case AutoPad::kSameUpper:
      case AutoPad::kSameLower: {
        const int64_t out = ceil_div(in, s);
        const int64_t total = std::max<int64_t>(0, (out - 1) * s + span - in);
        const int64_t small = total / 2, large = total - total / 2;
        g.pads_begin[i] = attrs.auto_pad == AutoPad::kSameUpper ? small : large;
        g.pads_end[i] = attrs.auto_pad == AutoPad::kSameUpper ? large : small;
        g.out[i] = out;
        continue;
      }
      case AutoPad::kValid: break;
      case AutoPad::kNotSet:
        g.pads_begin[i] = pads[i];
        g.pads_end[i] = pads[i + r];
        break;
    }
    const int64_t room = in + g.pads_begin[i] + g.pads_end[i] - span;
    OPENBPU_CHECK(room >= 0, op, ": the dilated kernel (extent ", span,
          ") is larger than the padded input (", in + g.pads_begin[i] + g.pads_end[i],
          ") on spatial axis ", i);
    int64_t out = (ceil_mode ? ceil_div(room, s) : room / s) + 1;
    // A last window that would start inside the end padding is dropped.
    if (ceil_mode && out > 1 && (out - 1) * s >= in + g.pads_begin[i]) --out;
    g.out[i] = out;
  }
}

ConvGeometry conv_geometry(std::string_view op, const WindowAttributes& attrs, int64_t group,
                           const std::vector<int64_t>& x_shape,
                           const std::vector<int64_t>& w_shape) {
  OPENBPU_CHECK(x_shape.size() >= 3, op, ": X must have rank >= 3 (N x C x spatial...), got ",
        shape_to_string(x_shape));
  OPENBPU_CHECK(w_shape.size() == x_shape.size(), op, ": W must have the rank of X (", x_shape.size(),
        "), got ", shape_to_string(w_shape));
  OPENBPU_CHECK(group > 0, op, ": group must be > 0, got ", group);
  ConvGeometry g;
  g.batch = x_shape[0];
  g.in_channels = x_shape[1];
  g.out_channels = w_shape[0];
  g.group = group;
  OPENBPU_CHECK(g.in_channels % group == 0 && g.out_channels % group == 0, op, ": input channels (",
        g.in_channels, ") and output channels (", g.out_channels, ") must be divisible by group (",
        group, ")");
  OPENBPU_CHECK(w_shape[1] * group == g.in_channels, op, ": W ", shape_to_string(w_shape),
        " needs C/group = ", w_shape[1], " but X has ", g.in_channels, " channels and group ",
        group);
  g.window.in.assign(x_shape.begin() + 2, x_shape.end());
  g.window.kernel.assign(w_shape.begin() + 2, w_shape.end());
  for (int64_t k : g.window.kernel) {
    OPENBPU_CHECK(k > 0, op, ": W's kernel dimensions must be > 0, got ", shape_to_string(w_shape));
  }
  if (!attrs.kernel_shape.empty()) {
    OPENBPU_CHECK(attrs.kernel_shape == g.window.kernel, op, ": kernel_shape ",
          shape_to_string(attrs.kernel_shape), " does not match W ", shape_to_string(w_shape));
  }
  resolve_window(op, attrs, false, g.window);
  return g;
}

namespace {

// Splits a flat row-major index over `dims` into coordinates.
void unflatten(int64_t flat, const std::vector<int64_t>& dims, std::vector<int64_t>& coords) {
  for (size_t d = dims.size(); d-- > 0;) {
    coords[d] = flat % dims[d];
    flat /= dims[d];
  }
}

// The naive convolution loop: for each output element, sums term(x_index, w_index, oc) over the
// input channels of its group and the kernel positions inside the input, in a fixed order, and
// hands the sum to emit(y_index, oc, sum).
template <typename Acc, typename Term, typename Emit>
void conv_naive(const ConvGeometry& g, Term&& term, Emit&& emit) {
  const WindowGeometry& win = g.window;
  const size_t r = win.rank();
  const int64_t cin_g = g.in_channels_per_group(), cout_g = g.out_channels_per_group();
  const int64_t in_size = win.in_size(), out_size = win.out_size(), kvol = win.kernel_size();
  std::vector<int64_t> o(r), kp(r);
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t oc = 0; oc < g.out_channels; ++oc) {
      const int64_t grp = oc / cout_g;
      for (int64_t op = 0; op < out_size; ++op) {
        unflatten(op, win.out, o);
        Acc sum{};
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
            if (inside) sum += term(x_base + x_off, w_base + k, oc);
          }
        }
        emit((n * g.out_channels + oc) * out_size + op, oc, sum);
      }
    }
  }
}

// Float convolution of any float type, summed in double.
template <typename T>
void conv_reference(const ConvGeometry& g, const T* x, const T* w, const T* bias, T* y) {
  conv_naive<double>(
      g,
      [&](int64_t xi, int64_t wi, int64_t) {
        return static_cast<double>(to_compute(x[xi])) * static_cast<double>(to_compute(w[wi]));
      },
      [&](int64_t yi, int64_t oc, double sum) {
        if (bias != nullptr) sum += static_cast<double>(to_compute(bias[oc]));
        y[yi] = from_compute<T>(static_cast<ComputeType<T>>(sum));
      });
}

// Writes im2col rows [k0, k0 + kc) x output columns [n0, n0 + nc) of one image's group (x points
// at its first input channel) row-major into `rows` (row stride ld >= nc). Row k is (channel, kd, kh, kw),
// column n the output position (od, oh, ow). Columns are walked in runs along one output row,
// where the input positions advance by the stride and the valid part is one contiguous range.
void im2col_rows(const Window3D& w3, const float* x, int64_t k0, int64_t kc, int64_t n0, int64_t nc,
                 float* rows, int64_t ld) {
  const int64_t in_d = w3.in[0], in_h = w3.in[1], in_w = w3.in[2];
  const int64_t out_h = w3.out[1], out_w = w3.out[2];
  const int64_t sw = w3.strides[2];
  const int64_t in_size = w3.in_size();
  for (int64_t kk = 0; kk < kc; ++kk) {
    int64_t k = k0 + kk;
    const int64_t kw = k % w3.kernel[2];
    k /= w3.kernel[2];
    const int64_t kh = k % w3.kernel[1];
    k /= w3.kernel[1];
    const int64_t kd = k % w3.kernel[0];
    const float* xc = x + (k / w3.kernel[0]) * in_size;
    const int64_t offset_w = kw * w3.dilations[2] - w3.pads[2];  // iw = ow * sw + offset_w
    float* dst = rows + kk * ld;
    int64_t ow = n0 % out_w, oh = (n0 / out_w) % out_h, od = n0 / (out_w * out_h);
    for (int64_t j = 0; j < nc;) {
      const int64_t run = std::min(nc - j, out_w - ow);
      const int64_t id = od * w3.strides[0] - w3.pads[0] + kd * w3.dilations[0];
      const int64_t ih = oh * w3.strides[1] - w3.pads[1] + kh * w3.dilations[1];
      // Valid output columns t in [lo, hi) of this run read row (id, ih) at ow + t.
      int64_t lo = run, hi = run;
      if (id >= 0 && id < in_d && ih >= 0 && ih < in_h) {
        const int64_t first = offset_w + ow * sw;  // input column of t = 0
        lo = std::clamp<int64_t>(first >= 0 ? 0 : ceil_div(-first, sw), 0, run);
        hi = std::clamp<int64_t>(floor_div(in_w - 1 - first, sw) + 1, lo, run);
      }
      float* out = dst + j;
      std::fill(out, out + lo, 0.0f);
      if (lo < hi) {
        const float* src = xc + (id * in_h + ih) * in_w + offset_w + ow * sw;
        if (sw == 1) {
          std::copy(src + lo, src + hi, out + lo);
        } else {
          for (int64_t t = lo; t < hi; ++t) out[t] = src[t * sw];
        }
      }
      std::fill(out + hi, out + run, 0.0f);
      j += run;
      ow = 0;
      if (++oh == out_h) {
        oh = 0;
        ++od;
      }
    }
  }
}

// An im2col block as the GEMM's B panel, row-major: the micro-kernels read it in place.
int64_t pack_im2col_panel(const Window3D& w3, const float* x, int64_t k0, int64_t kc, int64_t n0,
                          int64_t nc, float* panel) {
  const int64_t ld = ceil_div(nc, kGemmStripCols) * kGemmStripCols;
  im2col_rows(w3, x, k0, kc, n0, nc, panel, ld);
  if (ld != nc) {
    for (int64_t kk = 0; kk < kc; ++kk) std::fill(panel + kk * ld + nc, panel + (kk + 1) * ld, 0.0f);
  }
  return ld;
}

// Stride-1 windows of 1-D/2-D convolutions as a GEMM over a zero-padded copy of the input.
// With output positions numbered in the padded input's row width (n = oh * wp + ow, columns
// ow >= out_w computed and dropped), im2col row (c, kh, kw) is the padded input shifted by
// c * hp * wp + kh * dh * wp + kw * dw, read in place by the GEMM (gemm_f32_rows): no im2col
// copy. The GEMM sees the same depth order and the same zeros as through im2col_rows, so the
// results are the same bits.
struct ShiftedInput {
  int64_t hp = 0, wp = 0;
  std::vector<int64_t> offsets;  // per depth row (c, kh, kw)
  float* padded = nullptr;       // channels x hp x wp, then zeros the last shifts read
  float* out = nullptr;          // channels_out x out_h x wp

  static bool applies(const Window3D& w3) {
    return w3.in[0] == 1 && w3.kernel[0] == 1 && w3.strides[1] == 1 && w3.strides[2] == 1 &&
           w3.kernel[1] * w3.kernel[2] > 1;
  }

  ShiftedInput(const Window3D& w3, int64_t channels, int64_t out_channels)
      : hp(w3.out[1] + (w3.kernel[1] - 1) * w3.dilations[1]),
        wp(w3.out[2] + (w3.kernel[2] - 1) * w3.dilations[2]) {
    for (int64_t c = 0; c < channels; ++c) {
      for (int64_t kh = 0; kh < w3.kernel[1]; ++kh) {
        for (int64_t kw = 0; kw < w3.kernel[2]; ++kw) {
          offsets.push_back(c * hp * wp + kh * w3.dilations[1] * wp + kw * w3.dilations[2]);
        }
      }
    }
    // The thread's buffers, kept between calls (no fresh pages per convolution).
    thread_local std::vector<float> padded_buffer, out_buffer;
    padded_buffer.resize(
        std::max(padded_buffer.size(), static_cast<size_t>(padded_size(channels))));
    out_buffer.resize(
        std::max(out_buffer.size(), static_cast<size_t>(out_channels * w3.out[1] * wp)));
    padded = padded_buffer.data();
    out = out_buffer.data();
  }

  // The last shifted rows read up to (kw - 1) * dw floats past the planes.
  int64_t padded_size(int64_t channels) const { return channels * hp * wp + wp; }

  // Writes every element of the padded planes: the input rows between zeros.
  void fill(const Window3D& w3, const float* x, int64_t channels) {
    const int64_t ih = w3.in[1], iw = w3.in[2], pt = w3.pads[1];
    const int64_t pl = std::min(w3.pads[2], wp);
    const int64_t cols = std::clamp<int64_t>(std::min(iw, wp - pl), 0, iw);
    for (int64_t c = 0; c < channels; ++c) {
      for (int64_t r = 0; r < hp; ++r) {
        float* dst = padded + (c * hp + r) * wp;
        const int64_t in_row = r - pt;
        if (in_row < 0 || in_row >= ih) {
          std::fill(dst, dst + wp, 0.0f);
          continue;
        }
        const float* src = x + (c * ih + in_row) * iw;
        std::fill(dst, dst + pl, 0.0f);
        std::copy(src, src + cols, dst + pl);
        std::fill(dst + pl + cols, dst + wp, 0.0f);
      }
    }
    std::fill(padded + channels * hp * wp, padded + padded_size(channels), 0.0f);
  }
};

// conv_f32 of one image's group through ShiftedInput.
void conv_shifted(const Window3D& w3, const PackedGemmLhs& weights, int64_t cin_g, const float* xg,
                  const float* row_bias, float* yg, ThreadPool* pool, ShiftedInput& s) {
  s.fill(w3, xg, cin_g);
  const int64_t oh = w3.out[1], ow = w3.out[2], rows = weights.rows();
  const int64_t n = oh * s.wp;
  gemm_f32_rows(weights, n, GemmRowsB{s.padded, s.offsets.data()}, 1.0f, 0.0f, row_bias, s.out, n,
                pool);
  parallel_for(pool, rows * oh, 64, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const float* src = s.out + r * s.wp;  // row (m, h) of m x oh x wp
      std::copy(src, src + ow, yg + r * ow);
    }
  });
}

}  // namespace

void conv_f32_reference(const ConvGeometry& g, const float* x, const float* w, const float* bias,
                        float* y) {
  conv_reference<float>(g, x, w, bias, y);
}

std::vector<PackedGemmLhs> pack_conv_weights(const Tensor& w, int64_t group) {
  const int64_t cout_g = w.dim(0) / group;
  const int64_t depth = w.element_count() / std::max<int64_t>(1, w.dim(0));
  std::vector<PackedGemmLhs> packed;
  for (int64_t grp = 0; grp < group; ++grp) {
    packed.emplace_back(cout_g, depth,
                        MatrixViewF32::row_major(w.data<float>() + grp * cout_g * depth, depth));
  }
  return packed;
}

void conv_f32(const ConvGeometry& g, const float* x, const float* w, const float* bias, float* y,
              ThreadPool* pool, std::span<const PackedGemmLhs> packed_weights) {
  const WindowGeometry& win = g.window;
  if (win.rank() > 3) {
    conv_f32_reference(g, x, w, bias, y);
    return;
  }
  const int64_t cin_g = g.in_channels_per_group(), cout_g = g.out_channels_per_group();
  if (cin_g == 1 && win.rank() <= 2) {
    depthwise_conv_f32(g, x, w, bias, y, pool);
    return;
  }
  const Window3D w3(win);
  const int64_t in_size = w3.in_size(), out_size = w3.out_size();
  const int64_t depth = cin_g * w3.kernel_size();
  bool pointwise = true;
  for (size_t i = 0; i < win.rank(); ++i) {
    pointwise = pointwise && win.kernel[i] == 1 && win.strides[i] == 1 && win.pads_begin[i] == 0 &&
                win.pads_end[i] == 0;
  }
  const bool prepacked = static_cast<int64_t>(packed_weights.size()) == g.group &&
                        packed_weights[0].rows() == cout_g && packed_weights[0].depth() == depth;
  std::optional<ShiftedInput> shifted;
  if (!pointwise && ShiftedInput::applies(w3)) shifted.emplace(w3, cin_g, cout_g);
  for (int64_t grp = 0; grp < g.group; ++grp) {
    std::optional<PackedGemmLhs> local;
    if (!prepacked) {
      local.emplace(cout_g, depth, MatrixViewF32::row_major(w + grp * cout_g * depth, depth));
    }
    const PackedGemmLhs& weights = prepacked ? packed_weights[size_t(grp)] : *local;
    for (int64_t n = 0; n < g.batch; ++n) {
      const float* xg = x + (n * g.in_channels + grp * cin_g) * in_size;
      float* yg = y + (n * g.out_channels + grp * cout_g) * out_size;
      const float* row_bias = bias != nullptr ? bias + grp * cout_g : nullptr;
      if (shifted) {
        conv_shifted(w3, weights, cin_g, xg, row_bias, yg, pool, *shifted);
        continue;
      }
      GemmPanelPacker packer;
      if (pointwise) {
        const MatrixViewF32 b = MatrixViewF32::row_major(xg, in_size);
        packer = [b](int64_t k0, int64_t kc, int64_t n0, int64_t nc, float* panel) {
          return pack_gemm_panel(b, k0, kc, n0, nc, panel);
        };
      } else {
        packer = [&w3, xg](int64_t k0, int64_t kc, int64_t n0, int64_t nc, float* panel) {
          return pack_im2col_panel(w3, xg, k0, kc, n0, nc, panel);
        };
      }
      gemm_f32_packed(weights, out_size, packer, 1.0f, 0.0f, row_bias, yg, out_size, pool);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// ConvTranspose geometry and computation

ConvGeometry conv_transpose_geometry(const WindowAttributes& attrs, int64_t group,
                                     const std::vector<int64_t>& output_padding_attr,
                                     const std::vector<int64_t>& output_shape_attr,
                                     const std::vector<int64_t>& x_shape,
                                     const std::vector<int64_t>& w_shape) {
  constexpr std::string_view op = "ConvTranspose";
  OPENBPU_CHECK(x_shape.size() >= 3, op, ": X must have rank >= 3 (N x C x spatial...), got ",
        shape_to_string(x_shape));
  OPENBPU_CHECK(w_shape.size() == x_shape.size(), op, ": W must have the rank of X (", x_shape.size(),
        "), got ", shape_to_string(w_shape));
  OPENBPU_CHECK(group > 0, op, ": group must be > 0, got ", group);
  ConvGeometry g;
  g.batch = x_shape[0];
  g.in_channels = x_shape[1];
  g.group = group;
  OPENBPU_CHECK(w_shape[0] == g.in_channels, op, ": W ", shape_to_string(w_shape),
        " must have X's channel count (", g.in_channels, ") as its first dimension");
  OPENBPU_CHECK(g.in_channels % group == 0, op, ": input channels (", g.in_channels,
        ") must be divisible by group (", group, ")");
  g.out_channels = w_shape[1] * group;
  WindowGeometry& win = g.window;
  const size_t r = x_shape.size() - 2;
  win.in.assign(x_shape.begin() + 2, x_shape.end());
  win.kernel.assign(w_shape.begin() + 2, w_shape.end());
  for (int64_t k : win.kernel) {
    OPENBPU_CHECK(k > 0, op, ": W's kernel dimensions must be > 0, got ", shape_to_string(w_shape));
  }
  if (!attrs.kernel_shape.empty()) {
    OPENBPU_CHECK(attrs.kernel_shape == win.kernel, op, ": kernel_shape ",
          shape_to_string(attrs.kernel_shape), " does not match W ", shape_to_string(w_shape));
  }
  win.strides = per_axis(op, "strides", attrs.strides, r, 1);
  win.dilations = per_axis(op, "dilations", attrs.dilations, r, 1);
  const std::vector<int64_t> pads = per_axis(op, "pads", attrs.pads, 2 * r, 0);
  const std::vector<int64_t> output_padding =
      per_axis(op, "output_padding", output_padding_attr, r, 0);
  std::vector<int64_t> output_shape = output_shape_attr;
  if (output_shape.size() == r + 2)
    output_shape.erase(output_shape.begin(), output_shape.begin() + 2);
  if (!output_shape.empty()) {
    OPENBPU_CHECK(output_shape.size() == r, op, ": output_shape must have ", r, " entries, got ",
          output_shape_attr.size());
  }
  win.out.assign(r, 0);
  win.pads_begin.assign(r, 0);
  win.pads_end.assign(r, 0);
  for (size_t i = 0; i < r; ++i) {
    OPENBPU_CHECK(output_padding[i] >= 0, op, ": output_padding must be >= 0, got ", output_padding[i]);
    const int64_t full = win.strides[i] * (win.in[i] - 1) + output_padding[i] +
                         (win.kernel[i] - 1) * win.dilations[i] + 1;
    int64_t out = -1;
    if (!output_shape.empty()) {
      out = output_shape[i];
      OPENBPU_CHECK(out >= 0, op, ": output_shape entries must be >= 0, got ", out);
    } else if (attrs.auto_pad == AutoPad::kSameUpper || attrs.auto_pad == AutoPad::kSameLower) {
      out = win.in[i] * win.strides[i];
    }
    if (out >= 0) {
      // Padding is derived from the requested size; a negative total extends the end.
      const int64_t total = full - out;
      if (total >= 0) {
        const int64_t small = total / 2, large = total - total / 2;
        win.pads_begin[i] = attrs.auto_pad == AutoPad::kSameUpper ? small : large;
        win.pads_end[i] = attrs.auto_pad == AutoPad::kSameUpper ? large : small;
      } else {
        win.pads_end[i] = total;
      }
      win.out[i] = out;
    } else {
      if (attrs.auto_pad == AutoPad::kNotSet) {
        win.pads_begin[i] = pads[i];
        win.pads_end[i] = pads[i + r];
      }
      win.out[i] = full - win.pads_begin[i] - win.pads_end[i];
      OPENBPU_CHECK(win.out[i] >= 0, op, ": pads (", win.pads_begin[i], ", ", win.pads_end[i],
            ") exceed the output extent ", full, " on spatial axis ", i);
    }
  }
  return g;
}

namespace {

// Reference ConvTranspose: scatters every input x kernel product into a double buffer.
template <typename T>
void conv_transpose_reference(const ConvGeometry& g, const T* x, const T* w, const T* bias, T* y) {
  const WindowGeometry& win = g.window;
  const size_t r = win.rank();
  const int64_t cin_g = g.in_channels_per_group(), cout_g = g.out_channels_per_group();
  const int64_t in_size = win.in_size(), out_size = win.out_size(), kvol = win.kernel_size();
  std::vector<double> acc(static_cast<size_t>(g.batch * g.out_channels * out_size), 0.0);
  std::vector<int64_t> ip(r), kp(r);
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t ic = 0; ic < g.in_channels; ++ic) {
      const int64_t grp = ic / cin_g;
      for (int64_t i = 0; i < in_size; ++i) {
        unflatten(i, win.in, ip);
        const double xv = to_compute(x[(n * g.in_channels + ic) * in_size + i]);
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
            const double wv = to_compute(w[(ic * cout_g + ocg) * kvol + k]);
            acc[size_t((n * g.out_channels + oc) * out_size + o_off)] += xv * wv;
          }
        }
      }
    }
  }
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t oc = 0; oc < g.out_channels; ++oc) {
      const double b = bias != nullptr ? static_cast<double>(to_compute(bias[oc])) : 0.0;
      for (int64_t o = 0; o < out_size; ++o) {
        const size_t idx = size_t((n * g.out_channels + oc) * out_size + o);
        y[idx] = from_compute<T>(static_cast<ComputeType<T>>(acc[idx] + b));
      }
    }
  }
}

// Floats of GEMM result (rows x a chunk of input positions) buffered per col2im round.
constexpr int64_t kColumnBufferFloats = int64_t{1} << 18;

}  // namespace

void conv_transpose_f32_reference(const ConvGeometry& g, const float* x, const float* w,
                                  const float* bias, float* y) {
  conv_transpose_reference<float>(g, x, w, bias, y);
}

namespace {

// Walks input positions [i0, i0 + count) in runs along one input row: f(j, run, iw, row) for
// each run whose output row (that of tap (kd, kh)) lies inside the output; row is that output
// row's start in the plane `out`, j the run's offset from i0, iw its first input column.
template <typename F>
void for_each_input_run(const Window3D& w3, int64_t kd, int64_t kh, int64_t i0, int64_t count,
                        float* out, F&& f) {
  const int64_t in_h = w3.in[1], in_w = w3.in[2];
  const int64_t out_d = w3.out[0], out_h = w3.out[1], out_w = w3.out[2];
  int64_t iw = i0 % in_w, ih = (i0 / in_w) % in_h, id = i0 / (in_w * in_h);
  for (int64_t j = 0; j < count;) {
    const int64_t run = std::min(count - j, in_w - iw);
    const int64_t od = id * w3.strides[0] + kd * w3.dilations[0] - w3.pads[0];
    const int64_t oh = ih * w3.strides[1] + kh * w3.dilations[1] - w3.pads[1];
    if (od >= 0 && od < out_d && oh >= 0 && oh < out_h)
      f(j, run, iw, out + (od * out_h + oh) * out_w);
    j += run;
    iw = 0;
    if (++ih == in_h) {
      ih = 0;
      ++id;
    }
  }
}

// Adds one GEMM result row (kernel tap (kd, kh, kw) of one output channel, input positions
// [i0, i0 + count)) into the output plane `out`; along a run the output positions advance by
// the stride.
void col2im_row(const Window3D& w3, int64_t kd, int64_t kh, int64_t kw, const float* src,
                int64_t i0, int64_t count, float* out) {
  const int64_t out_w = w3.out[2], sw = w3.strides[2];
  const int64_t offset_w = kw * w3.dilations[2] - w3.pads[2];  // ow = iw * sw + offset_w
  for_each_input_run(
      w3, kd, kh, i0, count, out, [&](int64_t j, int64_t run, int64_t iw, float* orow) {
        const int64_t first = iw * sw + offset_w;  // output column of t = 0
        const int64_t lo = std::clamp<int64_t>(first >= 0 ? 0 : ceil_div(-first, sw), 0, run);
        const int64_t hi = std::clamp<int64_t>(floor_div(out_w - 1 - first, sw) + 1, lo, run);
        float* row = orow + first;
        const float* in = src + j;
        for (int64_t t = lo; t < hi; ++t) row[t * sw] += in[t];
      });
}

// The row taps of one (kd, kh) when they tile an output row: stride == kernel width, no
// dilation or left padding along W, so output column iw * sw + kw takes tap kw of input column
// iw (each output at most once per (kd, kh): the same additions as col2im_row's, in one
// contiguous pass instead of one strided pass per tap).
template <int kK>
struct TiledRowAdd {
  OPENBPU_KERNEL_INLINE static void run(const float* src, int64_t ld, int64_t n, int64_t k,
                                        float* row) {
    const int64_t taps = kK > 0 ? kK : k;
    for (int64_t t = 0; t < n; ++t) {
      for (int64_t kw = 0; kw < taps; ++kw) row[t * taps + kw] += src[kw * ld + t];
    }
  }
};

bool taps_tile_rows(const Window3D& w3) {
  return w3.strides[2] == w3.kernel[2] && w3.dilations[2] == 1 && w3.pads[2] == 0;
}

// col2im_row for every kw of (kd, kh) at once (taps_tile_rows): `src` is tap kw = 0's GEMM
// row, the others follow `ld` floats apart.
void col2im_tiled_rows(const Window3D& w3, int64_t kd, int64_t kh, const float* src, int64_t ld,
                       int64_t i0, int64_t count, float* out) {
  const int64_t out_w = w3.out[2], k = w3.kernel[2];
  for_each_input_run(w3, kd, kh, i0, count, out,
                     [&](int64_t j, int64_t run, int64_t iw, float* row) {
                       // Whole tiles inside the row (a right padding may cut the last ones).
                       const int64_t full = std::clamp<int64_t>(out_w / k - iw, 0, run);
                       float* tiles = row + iw * k;
                       if (k == 2) {
                         vector_dispatch<TiledRowAdd<2>>(src + j, ld, full, k, tiles);
                       } else {
                         vector_dispatch<TiledRowAdd<0>>(src + j, ld, full, k, tiles);
                       }
                       for (int64_t t = full; t < run; ++t) {
                         for (int64_t kw = 0; kw < k && (iw + t) * k + kw < out_w; ++kw) {
                           row[(iw + t) * k + kw] += src[kw * ld + j + t];
                         }
                       }
                     });
}

}  // namespace

// Optimized ConvTranspose: per image and group, cols = W_g^T x X_g (GEMM) in chunks of input
// positions, then col2im parallel over output channels (each output sums in a fixed order).
void conv_transpose_f32(const ConvGeometry& g, const float* x, const float* w, const float* bias,
                        float* y, ThreadPool* pool) {
  const WindowGeometry& win = g.window;
  if (win.rank() > 3) {
    conv_transpose_f32_reference(g, x, w, bias, y);
    return;
  }
  const Window3D w3(win);
  const int64_t cin_g = g.in_channels_per_group(), cout_g = g.out_channels_per_group();
  const int64_t in_size = w3.in_size(), out_size = w3.out_size(), kvol = w3.kernel_size();
  const int64_t rows = cout_g * kvol;
  const int64_t chunk = std::max<int64_t>(1, std::min(in_size, kColumnBufferFloats / rows));
  std::vector<float> cols(static_cast<size_t>(rows * chunk));
  const bool tiled = taps_tile_rows(w3);
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t oc = 0; oc < g.out_channels; ++oc) {
      float* out = y + (n * g.out_channels + oc) * out_size;
      std::fill(out, out + out_size, bias != nullptr ? bias[oc] : 0.0f);
    }
  }
  for (int64_t grp = 0; grp < g.group; ++grp) {
    // W is (C, M/group, k...): the group's block is cin_g x rows; the GEMM needs its transpose.
    const PackedGemmLhs weights(
        rows, cin_g, MatrixViewF32::row_major(w + grp * cin_g * rows, rows).transposed());
    for (int64_t n = 0; n < g.batch; ++n) {
      const float* xg = x + (n * g.in_channels + grp * cin_g) * in_size;
      float* yg = y + (n * g.out_channels + grp * cout_g) * out_size;
      for (int64_t i0 = 0; i0 < in_size; i0 += chunk) {
        const int64_t cn = std::min(chunk, in_size - i0);
        const MatrixViewF32 xs{xg + i0, in_size, 1};
        gemm_f32_packed(
            weights, cn,
            [&xs](int64_t k0, int64_t kc, int64_t n0, int64_t nc, float* panel) {
              return pack_gemm_panel(xs, k0, kc, n0, nc, panel);
            },
            1.0f, 0.0f, nullptr, cols.data(), cn, pool);
        parallel_for(pool, cout_g, 1, [&](int64_t begin, int64_t end) {
          for (int64_t ocg = begin; ocg < end; ++ocg) {
            if (tiled) {
              for (int64_t k = 0; k < kvol; k += w3.kernel[2]) {
                const int64_t kh = (k / w3.kernel[2]) % w3.kernel[1],
                              kd = k / (w3.kernel[2] * w3.kernel[1]);
                col2im_tiled_rows(w3, kd, kh, cols.data() + (ocg * kvol + k) * cn, cn, i0, cn,
                                  yg + ocg * out_size);
              }
              continue;
            }
            for (int64_t k = 0; k < kvol; ++k) {
              const int64_t kw = k % w3.kernel[2], kh = (k / w3.kernel[2]) % w3.kernel[1],
                            kd = k / (w3.kernel[2] * w3.kernel[1]);
              col2im_row(w3, kd, kh, kw, cols.data() + (ocg * kvol + k) * cn, i0, cn,
                         yg + ocg * out_size);
            }
          }
        });
      }
    }
  }
}

namespace {

// ---------------------------------------------------------------------------------------------
// Kernels

const std::vector<AttrSpec> kConvAttributes = {
    {"auto_pad", AttrKind::kString}, {"dilations", AttrKind::kInts},
    {"group", AttrKind::kInt},       {"kernel_shape", AttrKind::kInts},
    {"pads", AttrKind::kInts},       {"strides", AttrKind::kInts}};

void check_bias(std::string_view op, const Tensor* b, const ConvGeometry& g, DataType type) {
  if (b == nullptr) return;
  OPENBPU_CHECK(b->dtype() == type, op, ": B must be ", dtype_name(type), ", got ", b->describe());
  OPENBPU_CHECK(b->rank() == 1 && b->dim(0) == g.out_channels, op, ": B must have shape [", g.out_channels,
        "], got ", b->describe());
}

Shape conv_output_shape(const ConvGeometry& g) {
  Shape s{g.batch, g.out_channels};
  s.insert(s.end(), g.window.out.begin(), g.window.out.end());
  return s;
}

class ConvKernel final : public Kernel {
 public:
  explicit ConvKernel(const NodeInfo& node)
      : attrs_(WindowAttributes::read("Conv", node.attrs)),
        group_(node.attrs.get_int("group", 1)) {
    // Constant float32 weights of a GEMM convolution are packed once, as they are used; the
    // kernel keeps a reference to their storage and uses the packing only for that storage.
    const Tensor* w = node.constant_inputs.size() > 1 ? node.constant_inputs[1] : nullptr;
    if (w != nullptr && w->dtype() == DataType::kFloat32 && w->rank() >= 3 && w->rank() <= 5 &&
        group_ > 0 && w->dim(0) % group_ == 0 && !(w->dim(1) == 1 && w->rank() <= 4)) {
      packed_ = pack_conv_weights(*w, group_);
      packed_from_ = *w;
    }
  }

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    const Tensor* b = ctx.optional_input(2);
    OPENBPU_CHECK(w.dtype() == x.dtype(), "Conv: W must have X's type ", dtype_name(x.dtype()), ", got ",
          w.describe());
    const ConvGeometry g = conv_geometry("Conv", attrs_, group_, x.shape(), w.shape());
    check_bias("Conv", b, g, x.dtype());
    Tensor& y = ctx.allocate_output_for_overwrite(0, x.dtype(), conv_output_shape(g));
    if (y.element_count() == 0) return;
    dispatch<FloatTypes>(x.dtype(), "Conv", [&]<typename T>() {
      const T* bias = b != nullptr ? b->data<T>() : nullptr;
      if constexpr (std::is_same_v<T, float>) {
        const bool packed = !packed_.empty() && w.buffer() == packed_from_.buffer() &&
                            w.byte_offset() == packed_from_.byte_offset() &&
                            w.shape() == packed_from_.shape();
        conv_f32(g, x.data<float>(), w.data<float>(), bias, y.data<float>(), ctx.thread_pool(),
                 packed ? std::span<const PackedGemmLhs>(packed_) : std::span<const PackedGemmLhs>());
      } else {
        conv_reference<T>(g, x.data<T>(), w.data<T>(), bias, y.data<T>());
      }
    });
  }

 private:
  WindowAttributes attrs_;
  int64_t group_;
  std::vector<PackedGemmLhs> packed_;  // per group, from the constant weights packed_from_
  Tensor packed_from_;
};

class ConvTransposeKernel final : public Kernel {
 public:
  explicit ConvTransposeKernel(const NodeInfo& node)
      : attrs_(WindowAttributes::read("ConvTranspose", node.attrs)),
        group_(node.attrs.get_int("group", 1)),
        output_padding_(node.attrs.get_ints("output_padding", {})),
        output_shape_(node.attrs.get_ints("output_shape", {})) {}

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    const Tensor* b = ctx.optional_input(2);
    OPENBPU_CHECK(w.dtype() == x.dtype(), "ConvTranspose: W must have X's type ", dtype_name(x.dtype()),
          ", got ", w.describe());
    const ConvGeometry g = conv_transpose_geometry(attrs_, group_, output_padding_, output_shape_,
                                                   x.shape(), w.shape());
    check_bias("ConvTranspose", b, g, x.dtype());
    Tensor& y = ctx.allocate_output_for_overwrite(0, x.dtype(), conv_output_shape(g));
    if (y.element_count() == 0) return;
    dispatch<FloatTypes>(x.dtype(), "ConvTranspose", [&]<typename T>() {
      const T* bias = b != nullptr ? b->data<T>() : nullptr;
      if constexpr (std::is_same_v<T, float>) {
        conv_transpose_f32(g, x.data<float>(), w.data<float>(), bias, y.data<float>(),
                           ctx.thread_pool());
      } else {
        conv_transpose_reference<T>(g, x.data<T>(), w.data<T>(), bias, y.data<T>());
      }
    });
  }

 private:
  WindowAttributes attrs_;
  int64_t group_;
  std::vector<int64_t> output_padding_, output_shape_;
};

// Zero point (or scale) of W: one value, or one per output channel.
std::vector<double> per_channel_values(std::string_view op, std::string_view what, const Tensor* t,
                                       int64_t channels, double fallback) {
  if (t == nullptr) return std::vector<double>(size_t(channels), fallback);
  if (t->element_count() == 1) return std::vector<double>(size_t(channels), t->float_at(0));
  OPENBPU_CHECK(t->rank() == 1 && t->dim(0) == channels, op, ": ", what,
        " must be a scalar or have one value per output channel (", channels, "), got ",
        t->describe());
  std::vector<double> v(static_cast<size_t>(channels));
  for (int64_t i = 0; i < channels; ++i) v[size_t(i)] = t->float_at(i);
  return v;
}

double scalar_value(std::string_view op, std::string_view what, const Tensor* t, double fallback) {
  if (t == nullptr) return fallback;
  OPENBPU_CHECK(t->element_count() == 1, op, ": ", what, " must be a scalar, got ", t->describe());
  return t->float_at(0);
}

void check_same_type(std::string_view op, std::string_view what, const Tensor* t, DataType type) {
  if (t == nullptr) return;
  OPENBPU_CHECK(t->dtype() == type, op, ": ", what, " must be ", dtype_name(type), ", got ", t->describe());
}

// Integer convolution of uint8/int8 X and W with zero points; emit(y_index, oc, int32 sum).
template <typename Emit>
void conv_integer(std::string_view op, const ConvGeometry& g, const Tensor& x, const Tensor& w,
                  int32_t x_zero, const std::vector<double>& w_zero, Emit&& emit) {
  dispatch<TypeList<uint8_t, int8_t>>(x.dtype(), op, [&]<typename TX>() {
    dispatch<TypeList<uint8_t, int8_t>>(w.dtype(), op, [&]<typename TW>() {
      const TX* px = x.data<TX>();
      const TW* pw = w.data<TW>();
      std::vector<int32_t> wz(w_zero.size());
      for (size_t i = 0; i < w_zero.size(); ++i) wz[i] = static_cast<int32_t>(w_zero[i]);
      conv_naive<int32_t>(
          g,
          [&](int64_t xi, int64_t wi, int64_t oc) {
            return (int32_t(px[xi]) - x_zero) * (int32_t(pw[wi]) - wz[size_t(oc)]);
          },
          emit);
    });
  });
}

class ConvIntegerKernel final : public Kernel {
 public:
  explicit ConvIntegerKernel(const NodeInfo& node)
      : attrs_(WindowAttributes::read("ConvInteger", node.attrs)),
        group_(node.attrs.get_int("group", 1)) {}

  void run(KernelContext& ctx) const override {
    constexpr std::string_view op = "ConvInteger";
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    const Tensor* x_zp = ctx.optional_input(2);
    const Tensor* w_zp = ctx.optional_input(3);
    check_same_type(op, "x_zero_point", x_zp, x.dtype());
    check_same_type(op, "w_zero_point", w_zp, w.dtype());
    const ConvGeometry g = conv_geometry(op, attrs_, group_, x.shape(), w.shape());
    const int32_t xz = static_cast<int32_t>(scalar_value(op, "x_zero_point", x_zp, 0.0));
    const std::vector<double> wz = per_channel_values(op, "w_zero_point", w_zp, g.out_channels, 0);
    Tensor& y = ctx.allocate_output(0, DataType::kInt32, conv_output_shape(g));
    int32_t* py = y.data<int32_t>();
    const std::vector<int32_t> w_zero(wz.begin(), wz.end());
    if (x.dtype() == DataType::kUint8 || x.dtype() == DataType::kInt8) {
      if (conv_integer_gemm(g, x, w, xz, w_zero, py, ctx.thread_pool())) return;
    }
    conv_integer(op, g, x, w, xz, wz, [&](int64_t yi, int64_t, int32_t sum) { py[yi] = sum; });
  }

 private:
  WindowAttributes attrs_;
  int64_t group_;
};

class QLinearConvKernel final : public Kernel {
 public:
  explicit QLinearConvKernel(const NodeInfo& node)
      : attrs_(WindowAttributes::read("QLinearConv", node.attrs)),
        group_(node.attrs.get_int("group", 1)) {}

  void run(KernelContext& ctx) const override {
    constexpr std::string_view op = "QLinearConv";
    const Tensor& x = ctx.input(0);
    const Tensor& x_scale = ctx.input(1);
    const Tensor& x_zp = ctx.input(2);
    const Tensor& w = ctx.input(3);
    const Tensor& w_scale = ctx.input(4);
    const Tensor& w_zp = ctx.input(5);
    const Tensor& y_scale = ctx.input(6);
    const Tensor& y_zp = ctx.input(7);
    const Tensor* b = ctx.optional_input(8);
    check_same_type(op, "x_zero_point", &x_zp, x.dtype());
    check_same_type(op, "w_zero_point", &w_zp, w.dtype());
    check_same_type(op, "x_scale", &x_scale, DataType::kFloat32);
    check_same_type(op, "w_scale", &w_scale, DataType::kFloat32);
    check_same_type(op, "y_scale", &y_scale, DataType::kFloat32);
    const ConvGeometry g = conv_geometry(op, attrs_, group_, x.shape(), w.shape());
    check_bias(op, b, g, DataType::kInt32);
    const int32_t xz = static_cast<int32_t>(scalar_value(op, "x_zero_point", &x_zp, 0.0));
    const float xs = static_cast<float>(scalar_value(op, "x_scale", &x_scale, 1.0));
    const float ys = static_cast<float>(scalar_value(op, "y_scale", &y_scale, 1.0));
    const int64_t yz = static_cast<int64_t>(scalar_value(op, "y_zero_point", &y_zp, 0.0));
    const std::vector<double> wz = per_channel_values(op, "w_zero_point", &w_zp, g.out_channels, 0);
    const std::vector<double> ws = per_channel_values(op, "w_scale", &w_scale, g.out_channels, 1);
    std::vector<double> multiplier(ws.size());
    for (size_t i = 0; i < ws.size(); ++i) {
      multiplier[i] = static_cast<double>(xs * static_cast<float>(ws[i]) / ys);
    }
    const int32_t* bias = b != nullptr ? b->data<int32_t>() : nullptr;
    Tensor& y = ctx.allocate_output(0, y_zp.dtype(), conv_output_shape(g));
    dispatch<TypeList<uint8_t, int8_t>>(y_zp.dtype(), op, [&]<typename TY>() {
      TY* py = y.data<TY>();
      conv_integer(op, g, x, w, xz, wz, [&](int64_t yi, int64_t oc, int32_t sum) {
        const int64_t acc = int64_t{sum} + (bias != nullptr ? bias[oc] : 0);
        py[yi] = quantize_rounded<TY>(static_cast<double>(acc) * multiplier[size_t(oc)], yz);
      });
    });
  }

 private:
  WindowAttributes attrs_;
  int64_t group_;
};

}  // namespace

void register_conv_kernels(std::vector<KernelDef>& defs) {
  defs.push_back({"", "Conv", 1, kConvAttributes, &make_kernel<ConvKernel>});
  std::vector<AttrSpec> transpose_attrs = kConvAttributes;
  transpose_attrs.push_back({"output_padding", AttrKind::kInts});
  transpose_attrs.push_back({"output_shape", AttrKind::kInts});
  defs.push_back({"", "ConvTranspose", 1, transpose_attrs, &make_kernel<ConvTransposeKernel>});
  defs.push_back({"", "ConvInteger", 10, kConvAttributes, &make_kernel<ConvIntegerKernel>});
  defs.push_back({"", "QLinearConv", 10, kConvAttributes, &make_kernel<QLinearConvKernel>});
}

}  // namespace openbpu::kernels
