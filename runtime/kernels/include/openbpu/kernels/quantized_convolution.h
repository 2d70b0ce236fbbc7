// Integer convolutions of the horizon domain (HzSQuantizedConv, HzSQuantizedConvTranspose in
// docs/quantized_ops.md): int8/int16 activations, int8 weights, int32 bias, an optional residual
// input, per-output-channel requantization with the one definition of the BPU's integer
// arithmetic (simulator/integer_arithmetic.h) and an activation clamp.
//
// Two implementations with identical results, integer for integer (tested on random shapes):
//  - *_reference: the spec's loop nest with int64 accumulators, any number of spatial axes
//    (the oracle);
//  - quantized_conv: im2col into the exact int16-pair GEMM of integer_gemm.h, or a direct loop
//    for depthwise convolutions; quantized_conv_transpose: a direct scatter per output plane.
//    Up to 3 spatial axes (more fall back to the reference), parallel over output tiles or
//    planes; results do not depend on the number of threads.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "openbpu/kernels/convolution.h"
#include "openbpu/kernels/integer_gemm.h"
#include "openbpu/kernels/tensor.h"
#include "openbpu/kernels/thread_pool.h"
#include "openbpu/simulator/integer_arithmetic.h"

namespace openbpu::kernels {

// What happens to an output channel's accumulator acc = bias[m] + Σ x·w:
//   with a residual r: acc += apply_multiplier(r, residual_multipliers[m]);
//   y = int32 output ? saturate<int32>(acc) : saturate<T>(apply_multiplier(acc, multipliers[m]));
//   y = min(max(y, clip_min), clip_max).
struct QuantizedConvOutputStage {
  DataType output_type = DataType::kInt8;                             // int8, int16 or int32
  std::vector<simulator::FixedPointMultiplier> multipliers;           // per channel; none for int32
  std::vector<simulator::FixedPointMultiplier> residual_multipliers;  // per channel with residual
  int64_t clip_min = -128;  // in the output type's range, clip_min <= clip_max
  int64_t clip_max = 127;
};

// The tensors of one convolution. Shapes and types must already be checked against the
// geometry (the kernels do this): x int8/int16 N x C x in; w int8, M x C/group x kernel
// (ConvTranspose: C x M/group x kernel); bias M values or null (zeros); residual int8/int16 of y's
// shape or null; y of the stage's output type, N x M x out.
struct QuantizedConvOperands {
  const Tensor* x = nullptr;
  const int8_t* w = nullptr;
  const int32_t* bias = nullptr;
  const Tensor* residual = nullptr;
  Tensor* y = nullptr;
  // w packed for the GEMM, one per group (pack_quantized_conv_weights), when the caller prepared
  // it from these weights; empty: quantized_conv packs w itself on each call.
  std::span<const PackedIntGemmLhs> packed_weights = {};
};

// The GEMM packing of int8 weights w (M x C/group x kernel) per group, for weights used many
// times (a constant of a prepared kernel). Empty for a depthwise convolution (one input channel
// per group, at most 2 spatial axes), which quantized_conv computes directly.
std::vector<PackedIntGemmLhs> pack_quantized_conv_weights(const Tensor& w, int64_t group);

void quantized_conv_reference(const ConvGeometry& g, const QuantizedConvOperands& operands,
                              const QuantizedConvOutputStage& stage);
void quantized_conv(const ConvGeometry& g, const QuantizedConvOperands& operands,
                    const QuantizedConvOutputStage& stage, ThreadPool* pool);

// ConvTranspose geometry (conv_transpose_geometry); pads_end may be negative (zeros appended).
void quantized_conv_transpose_reference(const ConvGeometry& g,
                                        const QuantizedConvOperands& operands,
                                        const QuantizedConvOutputStage& stage);
void quantized_conv_transpose(const ConvGeometry& g, const QuantizedConvOperands& operands,
                              const QuantizedConvOutputStage& stage, ThreadPool* pool);

// ConvInteger's sums y = Σ (x - x_zero)·(w - w_zero[m]) (x and w uint8 or int8, y int32 N x M x
// out, wrapping as an int32 accumulation does) through the exact integer GEMM when every
// w - w_zero fits int8 and the window has at most 3 spatial axes; false (y untouched) otherwise.
bool conv_integer_gemm(const ConvGeometry& g, const Tensor& x, const Tensor& w, int32_t x_zero,
                       const std::vector<int32_t>& w_zero, int32_t* y, ThreadPool* pool);

}  // namespace openbpu::kernels
