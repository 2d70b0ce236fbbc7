// ONNX models in and out of the IR, through libonnx's protobuf classes.
//
// Loading reads the file (and external data files beside it), checks that it is an ONNX model
// this toolchain accepts, sorts nodes topologically, runs the onnx checker (for opsets libonnx
// knows), infers shapes (libonnx's rules plus ours, see shape_inference.h), converts to the IR
// and verifies it. Every failure is an openbpu::Error whose text starts with the file name and
// names the problem.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "openbpu/ir/graph.h"

namespace onnx {
class ModelProto;
class TensorProto;
}  // namespace onnx

namespace openbpu::frontend {

// Accepted versions. Opsets below 10 load (real exporters such as paddle2onnx still write
// opset 9, and ONNX's own test suite covers opsets 1-9); the PTQ flow states what it supports.
inline constexpr int64_t kMaxIrVersion = 9;
inline constexpr int64_t kMinIrVersion = 3;
inline constexpr int64_t kMaxOpset = 19;

struct OnnxLoadOptions {
  bool run_checker = true;   // onnx::checker (skipped for opsets above libonnx's 17)
  bool infer_shapes = true;  // fill value types for intermediate values
  // Fold Constant nodes into initializers (named as the Constant's output). Off keeps the graph
  // exactly as written (for round-trip checks).
  bool fold_constant_nodes = true;
};

ir::Model load_onnx(const std::filesystem::path& path, const OnnxLoadOptions& options = {});
// `origin` names the model in errors; external data is resolved relative to `base_dir`.
ir::Model load_onnx_from_bytes(std::string_view bytes, const std::string& origin,
                               const std::filesystem::path& base_dir,
                               const OnnxLoadOptions& options = {});

// Writes the model atomically (tensors inline). Error naming the path on failure.
void save_onnx(const ir::Model& model, const std::filesystem::path& path);
std::string serialize_onnx(const ir::Model& model);

// Conversions used by the loader and by tools that read ONNX tensors (e.g. test data .pb).
ir::Model model_from_proto(onnx::ModelProto& proto, const std::string& origin,
                           const std::filesystem::path& base_dir, const OnnxLoadOptions& options);
void model_to_proto(const ir::Model& model, onnx::ModelProto* proto);
// libonnx's shape inference on `proto` (types into value_info; data propagation on, no type
// checks), in a child process: libonnx 1.12 crashes on some malformed models, which then get no
// types from it (libonnx_inference.cc). STFT nodes are not shown to it (it types them wrongly,
// and crashes on malformed ones: onnx/onnx#6186); our own rules type them (shape_inference.h).
// False when libonnx refused the model (declared shapes disagree) or died.
bool infer_shapes_with_libonnx(onnx::ModelProto& proto);
kernels::Tensor tensor_from_proto(const onnx::TensorProto& proto, const std::string& origin,
                                  const std::filesystem::path& base_dir = {});
void tensor_to_proto(const kernels::Tensor& tensor, const std::string& name,
                     onnx::TensorProto* proto);
// Reads a serialized onnx.TensorProto file (.pb), e.g. ONNX test data.
kernels::Tensor read_tensor_pb(const std::filesystem::path& path);

// Folds Constant nodes into initializers and sorts nodes (also done by load_onnx by default).
void fold_constant_nodes(ir::Graph& graph);

}  // namespace openbpu::frontend
