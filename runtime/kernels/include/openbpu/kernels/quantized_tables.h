// Index and divisor tables of the integer resize and average-pool operators
// (docs/quantized_ops.md), defined once: the kernels use them (the float AveragePool too), and
// the BPU compiler stores the
// same tables in the program's constants (simulator/isa.h: ResizeInstruction, PoolInstruction),
// so the quantized ONNX model and the simulator select and divide identically.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "openbpu/kernels/convolution.h"

namespace openbpu::kernels {

// Per output index of one axis of HzQuantizedResizeUpsample: the input indices and the
// fixed-point weight (simulator::kResizeFractionBits) of i1. For "nearest", i1 = i0 and the
// fraction is 0. KernelError for an unknown mode / coordinate transformation / nearest mode.
struct ResizeAxisTable {
  std::vector<int64_t> i0, i1, fraction;
};
ResizeAxisTable quantized_resize_axis(std::string_view mode,
                                      std::string_view coordinate_transformation_mode,
                                      std::string_view nearest_mode, int64_t in, int64_t out);

// The divisor of HzSQuantizedAveragePool factorizes per spatial axis: for each axis of the
// resolved window (as Window3D: leading unit axes), the number of taps per output position
// inside the input, or inside the padded input with count_include_pad (taps past the end
// padding that ceil_mode adds never count). divisor(o) = Π counts[a][o_a].
std::array<std::vector<int64_t>, 3> average_pool_axis_counts(const WindowGeometry& g,
                                                             bool count_include_pad);

}  // namespace openbpu::kernels
