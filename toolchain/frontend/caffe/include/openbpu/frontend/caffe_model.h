// Caffe models into the IR: the network text (.prototxt) and the trained weights (.caffemodel).
//
// The result is an ordinary ONNX model (ai.onnx opset 11, float32, NCHW): weights become
// initializers named "<layer>/<role>" (weight, bias, mean, ...), graph inputs carry the shapes
// the prototxt declares, and the model goes through the ONNX loader's checks (onnx checker,
// shape inference, IR verifier), so every value has its type. Nodes are named after their
// Caffe layer; a layer that becomes several nodes names the extra ones "<layer>/<what>".
//
// Supported layer types (anything else is an error naming the layer and its type):
//   Input (and the top-level input: + input_shape / input_dim)  → graph inputs
//   Convolution     → Conv (group, dilation, pads, strides, bias)
//   Deconvolution   → ConvTranspose (Caffe's weight layout [in, out/group, k...] is ONNX's)
//   Pooling MAX/AVE → MaxPool / AveragePool; global_pooling → GlobalMaxPool/GlobalAveragePool
//   InnerProduct    → Flatten(axis) + Gemm (transB=1 unless transpose), Reshape back when
//                     axes before `axis` are more than one
//   ReLU            → Relu, or LeakyRelu when negative_slope ≠ 0;  ReLU6 → Clip(0, 6)
//   Sigmoid, TanH   → Sigmoid, Tanh
//   BatchNorm       → BatchNormalization (scale 1, bias 0, eps from the layer)
//   Scale           → Mul by the learned factor (+ Add of the bias when bias_term); with two
//                     bottoms the second one is the factor
//   Eltwise         → SUM: Add / Sum (with Mul by each coeff ≠ 1), PROD: Mul, MAX: Max
//   Concat          → Concat (axis, or the older concat_dim)
//   Softmax         → Softmax; when `axis` is not the last axis with more than one element,
//                     Transpose → Softmax(last axis) → Transpose (opset 11 Softmax flattens)
//   Flatten         → Flatten (axis 1 to the end) or Reshape
//   Reshape         → Reshape (0 copies a dimension, -1 is inferred; axis / num_axes honoured)
//   Permute (SSD)   → Transpose
//   Slice           → Split at the slice points (equal parts when none are given)
//   Split           → nothing: every top is the bottom
//   Dropout         → nothing: the top is the bottom (inference)
// Layers whose include/exclude rules leave them out of the TEST phase are skipped.
//
// Mapping rules:
//   - Pooling: Caffe rounds the output size up and never starts a window in the end padding;
//     when that differs from rounding down the node gets ceil_mode=1 (the kernels drop such a
//     window as Caffe does). round_mode: FLOOR (some Caffe forks) rounds down. AVE divides by
//     the window clipped to the padded input, i.e. count_include_pad=1. STOCHASTIC is refused.
//   - BatchNorm blobs are (mean, variance, scale factor s): mean/s and variance/s are used
//     (s = 0 gives 0, as in Caffe). A following Scale layer stays a separate Mul/Add; the
//     optimizer folds the pair later.
//   - In-place layers (top == bottom) make a new version of the blob each time. Every
//     version is its own value; the last version of a blob gets the blob's name (earlier
//     versions are named "<blob>/<layer that wrote it>"), so the names a user sees in the
//     prototxt name the final tensors.
//   - Graph outputs are the tops that no later layer reads, in the order they were written.
//     A top that is only another blob under a new name (Dropout, Split) becomes an Identity
//     node when it is an output.
//   - Weights are taken from the .caffemodel's layer of the same name; blob shapes come from
//     BlobShape or the older num/channels/height/width.
//
// Errors are openbpu::Error; each message starts with the file it is about:
//   - a missing or unreadable file;
//   - prototxt text that does not parse (line:column and the parser's message); a
//     .caffemodel that is not a NetParameter; V1 models (`layers { ... }`), with the Caffe
//     tool that upgrades them (upgrade_net_proto_text / upgrade_net_proto_binary);
//   - a layer type this frontend does not support (layer name and type);
//   - a layer that needs weights but has no layer of that name (or no blobs) in the
//     caffemodel; a wrong number of blobs or a blob of the wrong size (layer, blob, expected
//     and actual count);
//   - a bottom that no earlier layer produced (layer and blob);
//   - invalid parameters (kernel sizes, axes, slice points, reshape dims...) naming the layer;
//   - a network that declares no input.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "openbpu/ir/graph.h"

namespace openbpu::frontend {

// Opset of the models load_caffe returns.
inline constexpr int64_t kCaffeOnnxOpset = 11;

// Reads a Caffe model: the network text (.prototxt) and the trained weights (.caffemodel).
ir::Model load_caffe(const std::filesystem::path& prototxt,
                     const std::filesystem::path& caffemodel);
// The same from the two files' contents; the origins name them in errors (as the paths do).
ir::Model load_caffe_from_bytes(std::string_view prototxt_text, std::string_view caffemodel_bytes,
                                const std::string& prototxt_origin,
                                const std::string& caffemodel_origin);

}  // namespace openbpu::frontend
