// The same float model exported the two other ways users bring it, for the benchmarks:
//  - half precision as the usual float16 converters write it with float32 inputs and outputs
//    kept (float32 initializers and intermediate values become float16, except Resize's roi
//    and scales; a Cast after each graph input and before each graph output);
//  - dynamically quantized as ONNX Runtime's quantize_dynamic writes a Conv with constant
//    weights: DynamicQuantizeLinear on the input, ConvInteger with uint8 weights (per-tensor
//    scale max|w| / 127, zero point 128), Cast to float, a Mul by input scale x weight scale and
//    an Add of the bias.
// Both rewrite the model in place; the model must have been loaded with shape inference. The
// dynamic export raises opset 10 to 11 (rewriting Clip) and needs no other upgrade.
#pragma once

#include "openbpu/ir/graph.h"

namespace openbpu::bench {

void make_float16_export(ir::Model& model);
// Returns the number of Conv nodes replaced.
int make_dynamic_quantized_export(ir::Model& model);

}  // namespace openbpu::bench
