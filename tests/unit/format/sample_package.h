// A valid two-model package exercising every part of the schema, and helpers to serialize,
// verify and re-seal files, shared by the format tests.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "openbpu/format/model_file.h"

namespace openbpu::format::test_support {

inline std::vector<uint8_t> float_bytes(const std::vector<float>& values) {
  std::vector<uint8_t> out(values.size() * sizeof(float));
  if (!values.empty()) std::memcpy(out.data(), values.data(), out.size());
  return out;
}

inline std::vector<uint8_t> pattern_bytes(size_t n, uint8_t seed) {
  std::vector<uint8_t> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<uint8_t>(seed + i * 37);
  return out;
}

// Model "mobilenet": NV12 input (W padded 222 -> 224, strides all zero as for images),
// a BPU segment writing an S32 per-channel SCALE intermediate, then a CPU segment
// (HzDequantize with a constant and an ABSENT input, Softmax with every attribute kind)
// writing the F32 output. Deleted nodes, debug map, compile parameters and deps info set.
inline ModelInfo mobilenet_model() {
  ModelInfo m;
  m.name = "mobilenet";
  m.march = "bayes-e";

  TensorInfo data;
  data.name = "data";
  data.valid_shape = {1, 3, 222, 222};
  data.aligned_shape = {1, 3, 222, 224};
  data.layout = TensorLayout::NCHW;
  data.tensor_type = TensorType::IMG_TYPE_NV12;
  data.quanti_type = QuantiType::NONE;
  data.aligned_byte_size = 1 * 3 * 222 * 224 / 2;  // 12 bits per pixel
  data.stride = {0, 0, 0, 0};
  data.input_source = InputSource::RESIZER;  // format 1.2
  m.inputs.push_back(data);

  TensorInfo prob;
  prob.name = "prob";
  prob.valid_shape = {1, 10};
  prob.aligned_shape = {1, 10};
  prob.layout = TensorLayout::NONE;
  prob.tensor_type = TensorType::TENSOR_TYPE_F32;
  prob.aligned_byte_size = 40;
  prob.stride = {40, 4};
  m.outputs.push_back(prob);

  TensorInfo logits_int;
  logits_int.name = "logits_int";
  logits_int.valid_shape = {1, 1, 1, 10};
  logits_int.aligned_shape = {1, 1, 1, 16};
  logits_int.layout = TensorLayout::NHWC;
  logits_int.tensor_type = TensorType::TENSOR_TYPE_S32;
  logits_int.quanti_type = QuantiType::SCALE;
  logits_int.scale = {0.5f, 0.25f, 0.125f, 1.0f, 2.0f, 0.75f, 0.0625f, 3.5f, 1e-3f, 7.0f};
  logits_int.zero_point = {0, 1, -1, 2, -2, 3, -3, 4, -4, 5};
  logits_int.quantize_axis = 3;
  logits_int.aligned_byte_size = 16 * 4;
  logits_int.stride = {64, 64, 64, 4};
  m.tensors.push_back(logits_int);

  TensorInfo logits;
  logits.name = "logits";
  logits.valid_shape = {1, 10};
  logits.aligned_shape = {1, 10};
  logits.tensor_type = TensorType::TENSOR_TYPE_F32;
  logits.aligned_byte_size = 40;
  m.tensors.push_back(logits);

  BpuSegmentInfo bpu;
  bpu.isa_version = 1;
  bpu.program = pattern_bytes(100, 7);
  bpu.weights = pattern_bytes(300, 11);
  bpu.inputs = {TensorRefInfo::model_input(0)};
  bpu.outputs = {TensorRefInfo::intermediate(0)};
  m.segments.push_back({"BPU_mobilenet_subgraph_0", bpu});

  CpuOpInfo dequantize;
  dequantize.name = "mobilenet_HzDequantize";
  dequantize.op_type = "HzDequantize";
  dequantize.domain = "horizon";
  dequantize.inputs = {TensorRefInfo::intermediate(0), TensorRefInfo::op_constant(0),
                       TensorRefInfo::absent()};
  dequantize.outputs = {TensorRefInfo::intermediate(1)};
  dequantize.constants.push_back(
      {"logits_scale", TensorType::TENSOR_TYPE_F32, {10},
       float_bytes({0.5f, 0.25f, 0.125f, 1.0f, 2.0f, 0.75f, 0.0625f, 3.5f, 1e-3f, 7.0f})});
  AttributeInfo axis;
  axis.name = "axis";
  axis.type = AttributeType::INT;
  axis.i = 3;
  dequantize.attributes.push_back(axis);

  CpuOpInfo softmax;
  softmax.name = "prob_Softmax";
  softmax.op_type = "Softmax";
  softmax.opset = 13;  // format 1.1
  softmax.inputs = {TensorRefInfo::intermediate(1)};
  softmax.outputs = {TensorRefInfo::model_output(0)};
  AttributeInfo a;
  a.name = "axis";
  a.type = AttributeType::INT;
  a.i = -1;
  softmax.attributes.push_back(a);
  a = {};
  a.name = "temperature";
  a.type = AttributeType::FLOAT;
  a.f = 0.875f;
  softmax.attributes.push_back(a);
  a = {};
  a.name = "mode";
  a.type = AttributeType::STRING;
  a.s = std::string("exact\0bytes", 11);
  softmax.attributes.push_back(a);
  a = {};
  a.name = "pads";
  a.type = AttributeType::INTS;
  a.ints = {0, 1, -2, int64_t{1} << 40};
  softmax.attributes.push_back(a);
  a = {};
  a.name = "weights";
  a.type = AttributeType::FLOATS;
  a.floats = {1.5f, -0.0f, 3e-8f};
  softmax.attributes.push_back(a);
  a = {};
  a.name = "labels";
  a.type = AttributeType::STRINGS;
  a.strings = {"cat", "", "dog"};
  softmax.attributes.push_back(a);
  a = {};
  a.name = "table";
  a.type = AttributeType::TENSOR;
  a.t = ConstTensorInfo{"lut", TensorType::TENSOR_TYPE_S4, {3}, {0x21, 0x03}};
  softmax.attributes.push_back(a);
  // Format 1.3: a graph attribute reading the op's last input (implicit) from outside; its
  // table: input 0, outer value 1, then what its two ops write (2, 3); the second op's graph
  // reads tensor 2 as its outer value 0.
  CpuGraphInfo inner{"inner", 0, 1, 2, {}, {TensorRefInfo::intermediate(1)}};
  inner.ops.push_back({"inner_copy", "Identity", "", {TensorRefInfo::intermediate(0)}, {TensorRefInfo::intermediate(1)}, {}, {}, 13, 0});
  CpuGraphInfo body{"body", 1, 1, 4, {}, {TensorRefInfo::intermediate(3)}};
  body.ops.push_back({"body_add", "Add", "", {TensorRefInfo::intermediate(0), TensorRefInfo::intermediate(1)},
                      {TensorRefInfo::intermediate(2)}, {}, {}, 13, 0});
  CpuOpInfo nested{"body_if", "If", "", {TensorRefInfo::op_constant(0), TensorRefInfo::intermediate(2)},
                   {TensorRefInfo::intermediate(3)}, {}, {ConstTensorInfo{"yes", TensorType::TENSOR_TYPE_U8, {}, {1}}}, 13, 1};
  AttributeInfo branch;
  branch.name = "then_branch";
  branch.type = AttributeType::GRAPH;
  branch.g = {inner};
  nested.attributes.push_back(branch);
  body.ops.push_back(nested);
  a = {};
  a.name = "body";
  a.type = AttributeType::GRAPH;
  a.g = {body};
  softmax.attributes.push_back(a);
  softmax.inputs.push_back(TensorRefInfo::intermediate(1));  // what the graph reads from outside
  softmax.implicit_inputs = 1;

  CpuSegmentInfo cpu;
  cpu.ops = {dequantize, softmax};
  m.segments.push_back({"CPU_mobilenet_subgraph_1", cpu});

  m.compile_parameters = {{"hbdk_pass_through_params", "--fast --O3"},
                          {"input-source", "{'data': 'pyramid', '_default_value': 'ddr'}"},
                          {"optimize_level", "O3"}};
  m.deps_info = {{"hb_mapper version", "0.1.0"},
                 {"hbdk version", "0.1.0"},
                 {"hbdk runtime version", "0.1.0"},
                 {"horizon_nn version", "0.1.0"}};
  AttributeInfo scales;
  scales.name = "scales";
  scales.type = AttributeType::FLOATS;
  scales.floats = {0.0125f};
  m.deleted_nodes = {
      {"prob_HzDequantize_removed", "Dequantize", {"prob_int"}, {"prob_f"}, {scales}}};
  m.debug_map = {{0, 3, "Conv_0"}, {0, 7, "Relu_1"}, {0, 11, ""}};
  return m;
}

// Model "tiny": one BPU segment, an S8 per-tensor SCALE input with a zero point and padded
// strides, an S32 per-channel SHIFT output.
inline ModelInfo tiny_model() {
  ModelInfo m;
  m.name = "tiny";
  m.march = "bayes-e";

  TensorInfo x;
  x.name = "x";
  x.valid_shape = {1, 8, 8, 4};
  x.aligned_shape = {1, 8, 8, 8};
  x.layout = TensorLayout::NHWC;
  x.tensor_type = TensorType::TENSOR_TYPE_S8;
  x.quanti_type = QuantiType::SCALE;
  x.scale = {0.0078125f};
  x.zero_point = {-3};
  x.quantize_axis = -1;
  x.aligned_byte_size = 512;
  x.stride = {512, 64, 8, 1};
  m.inputs.push_back(x);

  TensorInfo y;
  y.name = "y";
  y.valid_shape = {1, 4, 4, 4};
  y.aligned_shape = {1, 4, 4, 4};
  y.layout = TensorLayout::NHWC;
  y.tensor_type = TensorType::TENSOR_TYPE_S32;
  y.quanti_type = QuantiType::SHIFT;
  y.shift = {3, 4, 5, 6};
  y.quantize_axis = 3;
  y.aligned_byte_size = 256;
  y.stride = {256, 64, 16, 4};
  m.outputs.push_back(y);

  BpuSegmentInfo bpu;
  bpu.isa_version = 2;
  bpu.program = pattern_bytes(48, 1);
  bpu.weights = pattern_bytes(64, 2);
  bpu.inputs = {TensorRefInfo::model_input(0)};
  bpu.outputs = {TensorRefInfo::model_output(0)};
  m.segments.push_back({"BPU_tiny_subgraph_0", bpu});
  return m;
}

inline PackageInfo sample_package() {
  PackageInfo p;
  p.toolchain_name = "openbpu";
  p.toolchain_version = "0.1.0";
  p.models = {mobilenet_model(), tiny_model()};
  return p;
}

inline std::vector<uint8_t> serialize_or_die(const PackageInfo& package) {
  std::vector<uint8_t> file;
  const Status status = serialize_package(package, &file);
  EXPECT_TRUE(status.ok()) << status_code_name(status.code) << ": " << status.message;
  return file;
}

inline std::vector<uint8_t> serialize_unchecked_or_die(const PackageInfo& package) {
  std::vector<uint8_t> file;
  const Status status = serialize_package_unchecked(package, &file);
  EXPECT_TRUE(status.ok()) << status_code_name(status.code) << ": " << status.message;
  return file;
}

// The flatbuffer part of a file, to patch and re-seal.
inline std::vector<uint8_t> flatbuffer_of(const std::vector<uint8_t>& file) {
  return std::vector<uint8_t>(file.begin(), file.end() - static_cast<std::ptrdiff_t>(kFooterSize));
}

inline std::vector<uint8_t> seal(const std::vector<uint8_t>& flatbuffer) {
  std::vector<uint8_t> file;
  const Status status = seal_flatbuffer(flatbuffer, &file);
  EXPECT_TRUE(status.ok()) << status.message;
  return file;
}

inline Status verify(const std::vector<uint8_t>& file) { return verify_package(file, nullptr); }

}  // namespace openbpu::format::test_support
