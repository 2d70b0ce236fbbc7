// Sliding-window geometry shared by the convolution and pooling operators, and the float32
// convolution: a naive reference (the oracle) and the optimized path (im2col + blocked GEMM,
// direct 1x1, direct depthwise) that the Conv kernel runs.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "openbpu/kernels/attributes.h"
#include "openbpu/kernels/gemm.h"
#include "openbpu/kernels/thread_pool.h"

namespace openbpu::kernels {

// Integer division rounding toward -infinity / +infinity (b > 0), for window bounds.
inline int64_t floor_div(int64_t a, int64_t b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}
inline int64_t ceil_div(int64_t a, int64_t b) {
  return -floor_div(-a, b);
}

enum class AutoPad { kNotSet, kValid, kSameUpper, kSameLower };

// Parses the auto_pad attribute ("NOTSET" when absent); KernelError on other values.
AutoPad parse_auto_pad(std::string_view op, const AttributeMap& attrs);

// The window attributes of Conv-like and pooling operators as given on the node; empty lists
// mean "absent" and are resolved against the input rank by resolve().
struct WindowAttributes {
  std::vector<int64_t> kernel_shape, strides, dilations, pads;
  AutoPad auto_pad = AutoPad::kNotSet;

  static WindowAttributes read(std::string_view op, const AttributeMap& attrs);
};

// A resolved N-D window over the spatial dimensions of an N x C x D1 x ... input.
struct WindowGeometry {
  std::vector<int64_t> in, out, kernel, strides, dilations, pads_begin, pads_end;

  size_t rank() const { return in.size(); }
  int64_t in_size() const;
  int64_t out_size() const;
  int64_t kernel_size() const;
};

// A window of up to 3 spatial axes seen as exactly 3 (leading unit axes), for loops that nest
// depth, height and width. `pads` are the begin pads.
struct Window3D {
  std::array<int64_t, 3> in{1, 1, 1}, out{1, 1, 1}, kernel{1, 1, 1}, strides{1, 1, 1},
      dilations{1, 1, 1}, pads{0, 0, 0};

  // Requires g.rank() <= 3.
  explicit Window3D(const WindowGeometry& g) {
    const size_t shift = 3 - g.rank();
    for (size_t i = 0; i < g.rank(); ++i) {
      in[shift + i] = g.in[i];
      out[shift + i] = g.out[i];
      kernel[shift + i] = g.kernel[i];
      strides[shift + i] = g.strides[i];
      dilations[shift + i] = g.dilations[i];
      pads[shift + i] = g.pads_begin[i];
    }
  }
  int64_t in_size() const { return in[0] * in[1] * in[2]; }
  int64_t out_size() const { return out[0] * out[1] * out[2]; }
  int64_t kernel_size() const { return kernel[0] * kernel[1] * kernel[2]; }
};

// Spatial output size rule of a sliding window. `ceil_mode` rounds the window count up (pooling)
// but never starts a window entirely inside the end padding.
// Fills out, pads_begin and pads_end of `g` from in, kernel, strides, dilations and the given
// attributes; KernelError naming `op` on inconsistent sizes.
void resolve_window(std::string_view op, const WindowAttributes& attrs, bool ceil_mode,
                    WindowGeometry& g);

// Everything a convolution needs to know about its operands.
struct ConvGeometry {
  int64_t batch = 0, in_channels = 0, out_channels = 0, group = 1;
  WindowGeometry window;

  int64_t in_channels_per_group() const { return in_channels / group; }
  int64_t out_channels_per_group() const { return out_channels / group; }
};

// Checks X (N x C x D...) and W (M x C/group x k...) against the attributes and returns the
// geometry (kernel_shape from the attribute or from W).
ConvGeometry conv_geometry(std::string_view op, const WindowAttributes& attrs, int64_t group,
                           const std::vector<int64_t>& x_shape,
                           const std::vector<int64_t>& w_shape);

// y = conv(x, w) + bias (bias may be null); x, w, y dense NC... float32.
void conv_f32_reference(const ConvGeometry& g, const float* x, const float* w, const float* bias,
                        float* y);
// packed_weights: pack_conv_weights(W, group) of these weights, or empty (packed per call).
void conv_f32(const ConvGeometry& g, const float* x, const float* w, const float* bias, float* y,
              ThreadPool* pool, std::span<const PackedGemmLhs> packed_weights = {});
// A float32 W (M x C/group x k...) as the GEMM's left operand, one per group.
std::vector<PackedGemmLhs> pack_conv_weights(const Tensor& w, int64_t group);

// The depthwise case of conv_f32 (one input channel per group, rank <= 2), with its SIMD path
// chosen by the CPU (kAuto) or forced; every path gives the same bits.
enum class DepthwisePath { kAuto, kScalar, kAvx512 };
bool depthwise_path_available(DepthwisePath path);
void depthwise_conv_f32(const ConvGeometry& g, const float* x, const float* w, const float* bias,
                        float* y, ThreadPool* pool, DepthwisePath path = DepthwisePath::kAuto);

// ConvTranspose: X (N x C x D...), W (C x M/group x k...); window.out is the output size and
// pads_begin/pads_end the padding removed from the full transposed output (pads_end may be
// negative when output_shape asks for more than the full extent: zeros are appended).
ConvGeometry conv_transpose_geometry(const WindowAttributes& attrs, int64_t group,
                                     const std::vector<int64_t>& output_padding,
                                     const std::vector<int64_t>& output_shape,
                                     const std::vector<int64_t>& x_shape,
                                     const std::vector<int64_t>& w_shape);
void conv_transpose_f32_reference(const ConvGeometry& g, const float* x, const float* w,
                                  const float* bias, float* y);
void conv_transpose_f32(const ConvGeometry& g, const float* x, const float* w, const float* bias,
                        float* y, ThreadPool* pool);

}  // namespace openbpu::kernels
