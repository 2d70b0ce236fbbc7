// The model writer (model_writer.h).
#include "openbpu/compiler/model_writer.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <map>
#include <set>

#include "openbpu/common/error.h"
#include "openbpu/simulator/program.h"

namespace openbpu::compiler {

namespace {

using format::TensorRefInfo;
using kernels::DataType;

format::TensorType tensor_type(DataType t, const std::string& what) {
  switch (t) {
    case DataType::kFloat32: return format::TensorType::TENSOR_TYPE_F32;
    case DataType::kFloat16: return format::TensorType::TENSOR_TYPE_F16;
    case DataType::kFloat64: return format::TensorType::TENSOR_TYPE_F64;
    case DataType::kInt8: return format::TensorType::TENSOR_TYPE_S8;
    case DataType::kUint8: return format::TensorType::TENSOR_TYPE_U8;
    case DataType::kBool: return format::TensorType::TENSOR_TYPE_U8;
    case DataType::kInt16: return format::TensorType::TENSOR_TYPE_S16;
    case DataType::kUint16: return format::TensorType::TENSOR_TYPE_U16;
    case DataType::kInt32: return format::TensorType::TENSOR_TYPE_S32;
    case DataType::kUint32: return format::TensorType::TENSOR_TYPE_U32;
    case DataType::kInt64: return format::TensorType::TENSOR_TYPE_S64;
    case DataType::kUint64: return format::TensorType::TENSOR_TYPE_U64;
    default: raise(what, ": element type ", kernels::dtype_name(t), " cannot be stored in the model file");
  }
}

// Properties of a dense tensor, or of a BPU binding's device layout when `desc` is given.
format::TensorInfo tensor_info(const std::string& name, const TensorInfo& t,
                               const simulator::isa::TensorDesc* desc) {
  format::TensorInfo info;
  info.name = name;
  info.valid_shape = t.shape;
  info.aligned_shape = t.shape;
  info.tensor_type = tensor_type(t.dtype, "tensor '" + name + "'");
  info.layout = t.shape.size() == 4 ? format::TensorLayout::NCHW : format::TensorLayout::NONE;
  const uint64_t width = kernels::dtype_size(t.dtype);
  if (desc != nullptr) {
    for (uint32_t i = 0; i < desc->rank; ++i) info.stride.push_back(desc->strides[i]);
    const simulator::ByteRange r = simulator::byte_range(*desc);
    info.aligned_byte_size = static_cast<uint64_t>(r.hi - r.lo);
    if (t.shape.size() == 4 && desc->strides[1] == static_cast<int32_t>(width) && t.shape[3] > 0) {
      // NHWC with padded channels: the aligned C is the W stride over the element size.
      info.layout = format::TensorLayout::NHWC;
      info.aligned_shape = {t.shape[0], t.shape[2], t.shape[3], desc->strides[3] / static_cast<int64_t>(width)};
      info.valid_shape = {t.shape[0], t.shape[2], t.shape[3], t.shape[1]};
      info.stride = {desc->strides[0], desc->strides[2], desc->strides[3], desc->strides[1]};
      info.aligned_byte_size = static_cast<uint64_t>(t.shape[0] * desc->strides[0]);
    }
  } else {
    int64_t stride = static_cast<int64_t>(width);
    info.stride.assign(t.shape.size(), 0);
    for (size_t i = t.shape.size(); i-- > 0;) {
      info.stride[i] = stride;
      stride *= t.shape[i];
    }
    info.aligned_byte_size = static_cast<uint64_t>(stride);
  }
  return info;
}

// The scale(s) of an integer tensor of the quantized model, from the operators around it: a
// Dequantize reading it (scales, axis), the Quantize producing it (scale), the producer's
// output_scale, an int32 convolution accumulator (input_scale · weight_scales[m], axis 1), a
// consumer's input_scale, or — through passive operators (Reshape, Slice, Concat, ...), which
// keep their input's scale — the same for their data input. Empty when none says.
void set_quantization(format::TensorInfo& info, const ir::Value* v, int depth = 0) {
  auto per_tensor = [&](float scale) {
    info.quanti_type = format::QuantiType::SCALE;
    info.scale = {scale};
    info.quantize_axis = -1;
  };
  for (const ir::Use& use : v->uses()) {
    if (use.node->domain() == "horizon" && use.node->op_type() == "Dequantize") {
      const std::vector<float> scales = use.node->attrs().get_floats("scales", {});
      if (scales.empty()) continue;
      info.quanti_type = format::QuantiType::SCALE;
      info.scale = scales;
      int64_t axis = use.node->attrs().get_int("axis", 1);
      if (axis < 0) axis += static_cast<int64_t>(info.valid_shape.size());
      info.quantize_axis = scales.size() > 1 ? static_cast<int32_t>(axis) : -1;
      return;
    }
  }
  if (const ir::Node* p = v->producer(); p != nullptr && p->domain() == "horizon") {
    const kernels::AttributeMap& a = p->attrs();
    if (p->op_type() == "Quantize" && a.has("scale")) return per_tensor(a.get_float("scale"));
    if (a.has("output_scale")) return per_tensor(a.get_float("output_scale"));
    if (a.has("input_scale") && a.has("weight_scales")) {  // an int32 accumulator
      info.quanti_type = format::QuantiType::SCALE;
      info.scale.clear();
      for (float w : a.get_floats("weight_scales")) info.scale.push_back(a.get_float("input_scale") * w);
      info.quantize_axis = info.scale.size() > 1 ? 1 : -1;
      return;
    }
  }
  for (const ir::Use& use : v->uses()) {
    const kernels::AttributeMap& a = use.node->attrs();
    if (use.node->domain() == "horizon" && use.input_index == 0 && a.has("input_scale")) {
      return per_tensor(a.get_float("input_scale"));
    }
  }
  const ir::Node* p = v->producer();
  if (p != nullptr && p->domain().empty() && p->input(0) != nullptr && depth < 64) {
    set_quantization(info, p->input(0), depth + 1);
    if (info.quantize_axis >= 0) {  // a per-channel scale does not survive a reshape
      info.quanti_type = format::QuantiType::NONE;
      info.scale.clear();
      info.quantize_axis = -1;
    }
  }
}

format::ConstTensorInfo const_tensor(const std::string& name, const kernels::Tensor& t) {
  format::ConstTensorInfo c;
  c.name = name;
  c.data_type = tensor_type(t.dtype(), "constant '" + name + "'");
  c.shape = t.shape();
  const auto* p = static_cast<const uint8_t*>(t.raw_data());
  c.data.assign(p, p + t.byte_size());
  return c;
}

format::AttributeInfo attribute(const std::string& op, const std::string& name, const kernels::AttributeValue& v) {
  format::AttributeInfo a;
  a.name = name;
  std::visit(
      [&](const auto& x) {
        using X = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<X, int64_t>) {
          a.type = format::AttributeType::INT;
          a.i = x;
        } else if constexpr (std::is_same_v<X, float>) {
          a.type = format::AttributeType::FLOAT;
          a.f = x;
        } else if constexpr (std::is_same_v<X, std::string>) {
          a.type = format::AttributeType::STRING;
          a.s = x;
        } else if constexpr (std::is_same_v<X, kernels::Tensor>) {
          a.type = format::AttributeType::TENSOR;
          a.t = const_tensor(name, x);
        } else if constexpr (std::is_same_v<X, std::vector<int64_t>>) {
          a.type = format::AttributeType::INTS;
          a.ints = x;
        } else if constexpr (std::is_same_v<X, std::vector<float>>) {
          a.type = format::AttributeType::FLOATS;
          a.floats = x;
        } else if constexpr (std::is_same_v<X, std::vector<std::string>>) {
          a.type = format::AttributeType::STRINGS;
          a.strings = x;
        } else {
          raise("node '", op, "': attribute '", name, "' (a list of tensors) cannot be stored in the model file");
        }
      },
      v);
  return a;
}

// Where a CPU operator's non-constant tensors are, by name (in the model's tables or a graph
// attribute's own).
using Resolve = std::function<TensorRefInfo(const std::string& name)>;

format::CpuGraphInfo cpu_graph(const ir::Graph& g, const std::vector<std::string>& outer, const ModelWriterOptions& options);

// An IR node of `scope` as a CPU operator: constant inputs become its constants; a control-flow
// node's graphs become GRAPH attributes and what they read from `scope` its implicit inputs.
format::CpuOpInfo cpu_op(const ir::Node& n, const ir::Graph& scope, const Resolve& ref, const ModelWriterOptions& options) {
  format::CpuOpInfo op;
  op.name = n.name();
  op.op_type = n.op_type();
  op.domain = n.domain();
  auto opset = options.opsets.find(n.domain() == "ai.onnx" ? std::string() : n.domain());
  op.opset = opset == options.opsets.end() ? 0 : static_cast<uint32_t>(opset->second);
  auto input = [&](const ir::Value* v, const std::string& name) {
    if (v != nullptr && v->is_constant()) {
      op.inputs.push_back(TensorRefInfo::op_constant(static_cast<uint32_t>(op.constants.size())));
      op.constants.push_back(const_tensor(v->name(), *v->constant()));
    } else {
      op.inputs.push_back(name.empty() ? TensorRefInfo::absent() : ref(name));
    }
  };
  for (const ir::Value* v : n.inputs()) input(v, v == nullptr ? std::string() : v->name());
  for (const ir::Value* v : n.outputs()) op.outputs.push_back(v == nullptr ? TensorRefInfo::absent() : ref(v->name()));
  for (const auto& [name, value] : n.attrs().items()) op.attributes.push_back(attribute(n.name(), name, value));
  const std::vector<std::string> implicit = ir::implicit_input_names(n);
  for (const std::string& name : implicit) input(scope.find_value(name), name);
  op.implicit_inputs = static_cast<uint32_t>(implicit.size());
  for (const ir::GraphAttribute& a : n.graph_attrs()) {
    if (a.is_list || a.graphs.size() != 1) raise("node '", n.name(), "': graph-list attribute '", a.name, "' cannot be stored");
    format::AttributeInfo attr;
    attr.name = a.name;
    attr.type = format::AttributeType::GRAPH;
    attr.g.push_back(cpu_graph(*a.graphs.front(), implicit, options));
    op.attributes.push_back(std::move(attr));
  }
  return op;
}

// A graph attribute with its own tensor table: inputs, the outer values, then what its ops write
// (a constant graph output is written by an Identity).
format::CpuGraphInfo cpu_graph(const ir::Graph& g, const std::vector<std::string>& outer, const ModelWriterOptions& options) {
  format::CpuGraphInfo info;
  info.name = g.name();
  std::map<std::string, uint32_t> index;
  auto slot = [&](const std::string& name) { return index.emplace(name, static_cast<uint32_t>(index.size())).first->second; };
  for (const ir::Value* in : g.inputs()) slot(in->name());
  for (const std::string& name : outer) slot(name);
  info.input_count = static_cast<uint32_t>(g.inputs().size());
  info.outer_count = static_cast<uint32_t>(outer.size());
  const Resolve ref = [&](const std::string& name) { return TensorRefInfo::intermediate(slot(name)); };
  for (const ir::Node* n : g.nodes()) info.ops.push_back(cpu_op(*n, g, ref, options));
  for (const ir::Value* out : g.outputs()) {
    if (out->is_constant() && !index.count(out->name())) {
      format::CpuOpInfo identity;
      identity.name = g.name() + "/" + out->name();
      identity.op_type = "Identity";
      identity.opset = static_cast<uint32_t>(options.opsets.count("") ? options.opsets.at("") : 0);
      identity.inputs.push_back(TensorRefInfo::op_constant(0));
      identity.constants.push_back(const_tensor(out->name(), *out->constant()));
      identity.outputs.push_back(ref(out->name()));
      info.ops.push_back(std::move(identity));
    }
    info.outputs.push_back(ref(out->name()));
  }
  info.tensor_count = static_cast<uint32_t>(index.size());
  return info;
}

}  // namespace

format::ModelInfo build_model_info(const ir::Graph& graph, const TensorInfos& tensors,
                                   const std::vector<CompiledSegment>& segments,
                                   const ModelWriterOptions& options) {
  format::ModelInfo m;
  m.name = options.model_name;
  m.march = options.march;
  m.compile_parameters = options.compile_parameters;
  m.deps_info = options.deps_info;

  auto info_of = [&](const std::string& name) -> const TensorInfo& {
    auto it = tensors.find(name);
    if (it == tensors.end()) raise("tensor '", name, "': no type and shape known for the model file");
    return it->second;
  };
  std::map<std::string, TensorRefInfo> refs;
  // BPU boundary tensors that are intermediates carry the device layout.
  std::map<std::string, const simulator::isa::TensorDesc*> layouts;
  for (const CompiledSegment& s : segments) {
    for (size_t i = 0; i < s.inputs.size(); ++i) layouts.emplace(s.inputs[i], &s.input_descs[i]);
    for (size_t i = 0; i < s.outputs.size(); ++i) layouts.emplace(s.outputs[i], &s.output_descs[i]);
  }
  auto describe = [&](const ir::Value* v, const simulator::isa::TensorDesc* layout) {
    format::TensorInfo info = tensor_info(v->name(), info_of(v->name()), layout);
    if (is_bpu_type(info_of(v->name()).dtype)) set_quantization(info, v);
    // The ONNX channel axis is the last one of an NHWC device layout.
    if (info.layout == format::TensorLayout::NHWC && info.quantize_axis == 1) info.quantize_axis = 3;
    return info;
  };
  for (const ir::Value* v : graph.inputs()) {
    if (v->is_constant()) continue;
    refs[v->name()] = TensorRefInfo::model_input(static_cast<uint32_t>(m.inputs.size()));
    auto layout = layouts.find(v->name());
    if (layout != layouts.end() && layout->second->type == simulator::isa::ElementType::kUint8) {
      // An image input (the BPU's Preprocess reads it): NV12 of the model's N x 3 x H x W, or
      // packed bytes in the image's own axis order.
      const simulator::isa::TensorDesc& d = *layout->second;
      format::TensorInfo info;
      info.name = v->name();
      info.aligned_byte_size = simulator::element_count(d);
      if (d.rank == 3) {
        info.valid_shape = info_of(v->name()).shape;
        info.layout = format::TensorLayout::NCHW;
        info.tensor_type = format::TensorType::IMG_TYPE_NV12;
      } else {
        auto type = options.image_types.find(v->name());
        if (type == options.image_types.end()) raise("input '", v->name(), "': no image type given for the model file");
        info.valid_shape.assign(d.dims, d.dims + d.rank);
        info.tensor_type = type->second.first;
        info.layout = type->second.second;
        for (uint32_t i = 0; i < d.rank; ++i) info.stride.push_back(d.strides[i]);
      }
      info.aligned_shape = info.valid_shape;
      if (auto source = options.input_sources.find(v->name()); source != options.input_sources.end()) {
        if (info.tensor_type != format::TensorType::IMG_TYPE_NV12 && info.tensor_type != format::TensorType::IMG_TYPE_Y) {
          raise("input '", v->name(), "': input_source ", format::EnumNameInputSource(source->second),
                " delivers NV12 or Y images, not ", format::EnumNameTensorType(info.tensor_type));
        }
        info.input_source = source->second;
      }
      m.inputs.push_back(std::move(info));
      continue;
    }
    if (options.input_sources.count(v->name()) != 0) {
      raise("input '", v->name(), "': input_source ", format::EnumNameInputSource(options.input_sources.at(v->name())),
            " needs an image input (input_type_rt nv12 or gray)");
    }
    m.inputs.push_back(describe(v, nullptr));
  }
  for (const ir::Value* v : graph.outputs()) {
    refs[v->name()] = TensorRefInfo::model_output(static_cast<uint32_t>(m.outputs.size()));
    m.outputs.push_back(describe(v, nullptr));
  }
  auto ref = [&](const ir::Value* v) -> TensorRefInfo {
    if (v == nullptr || v->name().empty()) return TensorRefInfo::absent();
    auto it = refs.find(v->name());
    if (it != refs.end()) return it->second;
    auto layout = layouts.find(v->name());
    const TensorRefInfo r = TensorRefInfo::intermediate(static_cast<uint32_t>(m.tensors.size()));
    m.tensors.push_back(describe(v, layout == layouts.end() ? nullptr : layout->second));
    refs[v->name()] = r;
    return r;
  };

  // Units: BPU segments (0..S-1) and CPU nodes (S + position), ordered topologically.
  const std::vector<ir::Node*>& nodes = graph.nodes();
  std::map<std::string, int> segment_of;
  for (size_t s = 0; s < segments.size(); ++s) {
    for (const std::string& n : segments[s].nodes) segment_of[n] = static_cast<int>(s);
  }
  const int S = static_cast<int>(segments.size());
  std::map<const ir::Node*, int> unit_of;
  std::map<int, size_t> first_position;
  for (size_t i = 0; i < nodes.size(); ++i) {
    auto it = segment_of.find(nodes[i]->name());
    const int unit = it != segment_of.end() ? it->second : S + static_cast<int>(i);
    unit_of[nodes[i]] = unit;
    first_position.emplace(unit, i);
  }
  std::map<int, std::set<int>> depends;
  for (const ir::Node* n : nodes) {
    std::vector<const ir::Value*> reads(n->inputs().begin(), n->inputs().end());
    for (const std::string& name : ir::implicit_input_names(*n)) reads.push_back(graph.find_value(name));
    for (const ir::Value* v : reads) {
      if (v == nullptr || v->producer() == nullptr) continue;
      const int from = unit_of.at(v->producer()), to = unit_of.at(n);
      if (from != to) depends[to].insert(from);
    }
  }
  std::vector<int> order;
  std::set<int> done;
  while (order.size() < first_position.size()) {
    int pick = -1;
    size_t best = SIZE_MAX;
    for (const auto& [unit, position] : first_position) {
      if (done.count(unit) || position >= best) continue;
      bool ready = true;
      for (int d : depends[unit]) ready = ready && done.count(d) != 0;
      if (ready) {
        pick = unit;
        best = position;
      }
    }
    if (pick < 0) raise("the BPU segments and CPU operators form a cycle; the model cannot be ordered");
    order.push_back(pick);
    done.insert(pick);
  }

  format::CpuSegmentInfo cpu;
  int cpu_segments = 0;
  auto flush_cpu = [&] {
    if (cpu.ops.empty()) return;
    m.segments.push_back({options.model_name + "_cpu_segment_" + std::to_string(cpu_segments++), std::move(cpu)});
    cpu = {};
  };
  for (int unit : order) {
    if (unit >= S) {
      const ir::Node* n = nodes[size_t(unit - S)];
      cpu.ops.push_back(cpu_op(*n, graph, [&](const std::string& name) { return ref(graph.find_value(name)); }, options));
      continue;
    }
    flush_cpu();
    const CompiledSegment& s = segments[size_t(unit)];
    format::BpuSegmentInfo bpu;
    bpu.isa_version = simulator::isa::kIsaVersion;
    bpu.program = s.program;
    bpu.weights = s.weights;
    for (const std::string& name : s.inputs) bpu.inputs.push_back(ref(graph.find_value(name)));
    for (const std::string& name : s.outputs) bpu.outputs.push_back(ref(graph.find_value(name)));
    const uint32_t index = static_cast<uint32_t>(m.segments.size());
    m.segments.push_back({"BPU_" + options.model_name + "_" + s.name, std::move(bpu)});
    if (options.debug_map) {
      for (size_t i = 0; i < s.instruction_nodes.size(); ++i) {
        if (!s.instruction_nodes[i].empty()) m.debug_map.push_back({index, static_cast<uint32_t>(i), s.instruction_nodes[i]});
      }
    }
  }
  flush_cpu();
  return m;
}

}  // namespace openbpu::compiler
