// The model writer: a quantized model and its compiled BPU segments → the model file's
// description (runtime/format: PackageInfo), which serialize_package() turns into the .bin /
// .hbm bytes.
//
// Execution order: BPU segments and CPU operators ordered topologically (graph order where
// free), consecutive CPU operators joined into one CPU segment. Tensors: the model's inputs and
// outputs, and every tensor a segment hands to another as an intermediate; BPU segment
// boundaries carry the device layout (aligned shape, strides); an image input of a BPU segment
// (input_type_rt nv12) is an IMG_TYPE_NV12 model input. CPU operators keep their ONNX
// name, type, domain, attributes and constant inputs.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "openbpu/compiler/compiler.h"
#include "openbpu/format/model_file.h"

namespace openbpu::compiler {

struct ModelWriterOptions {
  std::string model_name;  // output_model_file_prefix
  std::string march;
  format::KeyValueList compile_parameters;
  format::KeyValueList deps_info;
  bool debug_map = false;  // compiler_parameters.debug: instruction → ONNX node entries
  // Packed image inputs (input_type_rt rgb / bgr / yuv444 / gray): their hbDNN type and the
  // layout of their bytes (input_layout_rt). NV12 inputs need no entry.
  std::map<std::string, std::pair<format::TensorType, format::TensorLayout>> image_types;
  // compiler_parameters.input_source of the image inputs read from a pyramid or a resizer
  // (absent: ddr). Only an NV12 or Y input may have one.
  std::map<std::string, format::InputSource> input_sources;
  // The quantized model's opset imports (domain → version; "" = ai.onnx): each CPU operator
  // records its domain's version, which decides its semantics in the runtime.
  std::map<std::string, int64_t> opsets;
};

format::ModelInfo build_model_info(const ir::Graph& quantized, const TensorInfos& tensors,
                                   const std::vector<CompiledSegment>& segments,
                                   const ModelWriterOptions& options);

}  // namespace openbpu::compiler

namespace openbpu::compiler {

// The hb_model_info layout of one model: the deps block, the model / input / calibration /
// compiler parameter blocks (from compile_parameters' "<section>.<key>" entries), the input
// and output types, and the deleted nodes if any. Also printed at the end of makertbin.
std::string describe_model(const format::ModelInfo& model);

// One line about a node hb_model_modifier removed: "[name: N; ]op_type: T; inputs: [...];
// outputs: [...]" and each attribute ("scales: [0.0125]"; floats with 9 significant digits).
std::string describe_deleted_node(const format::DeletedNodeInfo& node, bool with_name = true);
// An attribute's value as describe_deleted_node writes it.
std::string attribute_value(const format::AttributeInfo& a);

}  // namespace openbpu::compiler
