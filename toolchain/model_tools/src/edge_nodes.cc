#include "openbpu/model_tools/edge_nodes.h"

#include <algorithm>
#include <optional>

#include "openbpu/common/error.h"

namespace openbpu::model_tools {
namespace {

using format::TensorRefInfo;
using format::TensorRefKind;

// Calls fn(ref) for every tensor reference of the model's segments (the top-level table; a
// control-flow operator's graphs have tables of their own). Model: ModelInfo, maybe const.
template <typename Model, typename Fn>
void for_each_ref(Model& model, Fn&& fn) {
  for (auto& s : model.segments) {
    if (auto* bpu = std::get_if<format::BpuSegmentInfo>(&s.body)) {
      for (auto& r : bpu->inputs) fn(r);
      for (auto& r : bpu->outputs) fn(r);
    } else {
      for (auto& op : std::get<format::CpuSegmentInfo>(s.body).ops) {
        for (auto& r : op.inputs) fn(r);
        for (auto& r : op.outputs) fn(r);
      }
    }
  }
}

// References to `ref`, its writer's included.
int references_to(const format::ModelInfo& model, const TensorRefInfo& ref) {
  int count = 0;
  for_each_ref(model, [&](const TensorRefInfo& r) { count += r == ref ? 1 : 0; });
  return count;
}

// The op's one data input (not a constant, not absent), or nullopt.
std::optional<TensorRefInfo> data_input(const format::CpuOpInfo& op) {
  std::optional<TensorRefInfo> found;
  for (const TensorRefInfo& r : op.inputs) {
    if (r.kind == TensorRefKind::OP_CONSTANT || r.kind == TensorRefKind::ABSENT) continue;
    if (found) return std::nullopt;
    found = r;
  }
  return found;
}

// Why `op` cannot be removed now ("" when it can); sets *at_input.
std::string refusal(const format::ModelInfo& model, const format::CpuOpInfo& op, bool* at_input) {
  const std::optional<TensorRefInfo> in = data_input(op);
  if (!in || op.outputs.size() != 1)
    return "it does not have exactly one data input and one output";
  const TensorRefInfo out = op.outputs[0];
  if (in->kind == TensorRefKind::MODEL_INPUT && out.kind == TensorRefKind::INTERMEDIATE) {
    *at_input = true;
    if (!removable_at_input(op.op_type))
      return "at a model input only Quantize and Transpose may be removed";
    if (references_to(model, *in) != 1) return "its model input is read by other nodes too";
    return "";
  }
  if (in->kind == TensorRefKind::INTERMEDIATE && out.kind == TensorRefKind::MODEL_OUTPUT) {
    *at_input = false;
    if (!removable_at_output(op.op_type)) {
      return "at a model output only Transpose, Dequantize, Cast, Reshape and Softmax may be "
             "removed";
    }
    if (references_to(model, *in) != 2)
      return "its input tensor is read by other nodes too";  // its writer and op
    return "";
  }
  return "it neither reads a model input nor writes a model output (only nodes at the model's "
         "edges may be removed)";
}

struct Found {
  size_t segment;
  size_t op;
};

std::optional<Found> find_op(const format::ModelInfo& model, const std::string& name) {
  for (size_t s = 0; s < model.segments.size(); ++s) {
    const auto* cpu = std::get_if<format::CpuSegmentInfo>(&model.segments[s].body);
    if (cpu == nullptr) continue;
    for (size_t i = 0; i < cpu->ops.size(); ++i) {
      if (cpu->ops[i].name == name) return Found{s, i};
    }
  }
  return std::nullopt;
}

// Names of the op's inputs as the deleted-node record lists them.
std::string ref_name(const format::ModelInfo& model, const format::CpuOpInfo& op,
                     const TensorRefInfo& r) {
  switch (r.kind) {
    case TensorRefKind::MODEL_INPUT: return model.inputs.at(r.index).name;
    case TensorRefKind::MODEL_OUTPUT: return model.outputs.at(r.index).name;
    case TensorRefKind::INTERMEDIATE: return model.tensors.at(r.index).name;
    case TensorRefKind::OP_CONSTANT: return op.constants.at(r.index).name;
    default: return "";
  }
}

// Drops intermediate `t` (no reference to it is left) and renumbers the later ones.
void erase_intermediate(format::ModelInfo& model, uint32_t t) {
  model.tensors.erase(model.tensors.begin() + t);
  for_each_ref(model, [&](TensorRefInfo& r) {
    if (r.kind == TensorRefKind::INTERMEDIATE && r.index > t) --r.index;
  });
}

// Drops segment `s` (empty) and renumbers the debug map's later segments.
void erase_segment(format::ModelInfo& model, uint32_t s) {
  model.segments.erase(model.segments.begin() + s);
  for (format::DebugEntryInfo& e : model.debug_map) {
    if (e.segment_index > s) --e.segment_index;
  }
}

// A model input's / output's description of the tensor `t` describes inside the model: its
// logical shape, dense, as the compiler describes graph inputs and outputs (the runtime converts
// between that and the BPU's layout). An NHWC intermediate lists its shape as N, H, W, C.
format::TensorInfo logical_port(format::TensorInfo t) {
  if (t.layout == format::TensorLayout::NHWC && t.valid_shape.size() == 4) {
    const std::vector<int64_t> v = t.valid_shape;
    t.valid_shape = {v[0], v[3], v[1], v[2]};
    t.layout = format::TensorLayout::NCHW;
    if (t.quantize_axis == 3) t.quantize_axis = 1;
  }
  t.aligned_shape = t.valid_shape;
  uint64_t bytes = format::element_bits(t.tensor_type) / 8;
  t.stride.assign(t.valid_shape.size(), 0);
  for (size_t i = t.valid_shape.size(); i-- > 0;) {
    t.stride[i] = static_cast<int64_t>(bytes);
    bytes *= static_cast<uint64_t>(t.valid_shape[i]);
  }
  t.aligned_byte_size = bytes;
  return t;
}

}  // namespace

bool removable_at_input(const std::string& op_type) {
  return op_type == "Quantize" || op_type == "Transpose";
}

bool removable_at_output(const std::string& op_type) {
  return op_type == "Transpose" || op_type == "Dequantize" || op_type == "Cast" ||
         op_type == "Reshape" || op_type == "Softmax";
}

std::vector<EdgeNode> removable_nodes(const format::ModelInfo& model) {
  std::vector<EdgeNode> nodes;
  for (const format::SegmentInfo& s : model.segments) {
    const auto* cpu = std::get_if<format::CpuSegmentInfo>(&s.body);
    if (cpu == nullptr) continue;
    for (const format::CpuOpInfo& op : cpu->ops) {
      bool at_input = false;
      if (refusal(model, op, &at_input).empty()) nodes.push_back({op.name, op.op_type, at_input});
    }
  }
  return nodes;
}

format::DeletedNodeInfo remove_edge_node(format::ModelInfo& model, const std::string& name) {
  const std::optional<Found> found = find_op(model, name);
  if (!found)
    raise("model '", model.name, "' has no CPU node named '", name,
          "' (BPU nodes cannot be removed)");
  auto& ops = std::get<format::CpuSegmentInfo>(model.segments[found->segment].body).ops;
  const format::CpuOpInfo op = ops[found->op];
  bool at_input = false;
  if (const std::string why = refusal(model, op, &at_input); !why.empty()) {
    raise("node '", name, "' (", op.op_type, ") cannot be removed: ", why);
  }
  format::DeletedNodeInfo deleted{op.name, op.op_type, {}, {}, {}};
  for (const TensorRefInfo& r : op.inputs) deleted.inputs.push_back(ref_name(model, op, r));
  deleted.outputs.push_back(ref_name(model, op, op.outputs[0]));
  for (const format::AttributeInfo& a : op.attributes) {
    if (a.type != format::AttributeType::GRAPH) deleted.attributes.push_back(a);
  }
  // The intermediate on the node's other side takes the model input's / output's place.
  const TensorRefInfo edge = at_input ? *data_input(op) : op.outputs[0];
  const TensorRefInfo inner = at_input ? op.outputs[0] : *data_input(op);
  std::vector<format::TensorInfo>& ports = at_input ? model.inputs : model.outputs;
  format::TensorInfo port = logical_port(model.tensors.at(inner.index));
  if (at_input) port.input_source = ports.at(edge.index).input_source;
  ports.at(edge.index) = std::move(port);
  ops.erase(ops.begin() + static_cast<std::ptrdiff_t>(found->op));
  if (ops.empty()) erase_segment(model, static_cast<uint32_t>(found->segment));
  for_each_ref(model, [&](TensorRefInfo& r) {
    if (r == inner) r = edge;
  });
  erase_intermediate(model, inner.index);
  model.deleted_nodes.push_back(deleted);
  return deleted;
}

}  // namespace openbpu::model_tools
