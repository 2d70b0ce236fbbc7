// BPU segments of a quantized model (compiler.h).

#include "openbpu/bpu_support/partitioner.h"
#include "openbpu/common/error.h"
#include "openbpu/compiler/compiler.h"
#include "segment_builder.h"

namespace openbpu::compiler {

namespace {

const TensorInfo* info_of(const TensorInfos& tensors, const ir::Value* v) {
  if (v == nullptr) return nullptr;
  auto it = tensors.find(v->name());
  return it == tensors.end() ? nullptr : &it->second;
}

}  // namespace

bool is_bpu_type(kernels::DataType t) {
  return t == kernels::DataType::kInt8 || t == kernels::DataType::kInt16 || t == kernels::DataType::kInt32;
}

Lowering lowering_of(const ir::Node& node) {
  using bpu_support::LowerAs;
  if (node.domain() == "horizon") {
    if (node.op_type() == bpu_support::kRequantizeType) return {LowerAs::kRequantize, nullptr};
    const bpu_support::OpDef* def = bpu_support::find_op_def_by_bpu_type(node.op_type());
    return def != nullptr ? Lowering{def->lower, def} : Lowering{};
  }
  if (!node.domain().empty() && node.domain() != "ai.onnx") return {};
  // Standard operators on the BPU move or select integers (or clamp them).
  const bpu_support::OpDef* def = bpu_support::find_op_def(node.op_type());
  if (def == nullptr) return {};
  if (def->activation != bpu_support::FusedActivation::kNone) return {LowerAs::kClamp, def};
  const bool moves = def->quantize == bpu_support::QuantizeAs::kMove || def->quantize == bpu_support::QuantizeAs::kConcat;
  return moves ? Lowering{def->lower, def} : Lowering{};
}

bool is_bpu_node(const ir::Node& node, const TensorInfos& tensors) {
  if (node.domain() == "horizon") return bpu_support::is_bpu_horizon_node(node);
  if (!node.domain().empty() && node.domain() != "ai.onnx") return false;
  // A Cast changes the element type (the int64 indices after an ArgMax): a CPU operator.
  if (node.op_type() == "Cast") return false;
  // A standard operator on the BPU moves or selects integers: its data input is an integer
  // feature map (CPU operators are float, with Quantize / Dequantize at their borders).
  const ir::Value* data = node.input(0);
  if (data == nullptr || data->is_constant()) return false;
  const TensorInfo* info = info_of(tensors, data);
  return info != nullptr && is_bpu_type(info->dtype);
}

std::vector<std::vector<const ir::Node*>> find_bpu_segments(const ir::Graph& graph,
                                                            const TensorInfos& tensors) {
  // The partitioner's grouping rule, applied to the quantized model's integer nodes.
  const std::vector<const ir::Node*> nodes(graph.nodes().begin(), graph.nodes().end());
  std::vector<bool> on_bpu;
  for (const ir::Node* n : nodes) on_bpu.push_back(is_bpu_node(*n, tensors));
  const std::vector<int> group = bpu_support::group_subgraphs(nodes, on_bpu);
  std::vector<std::vector<const ir::Node*>> segments;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (group[i] < 0) continue;
    if (segments.size() <= size_t(group[i])) segments.resize(size_t(group[i]) + 1);
    segments[size_t(group[i])].push_back(nodes[i]);
  }
  return segments;
}

}  // namespace openbpu::compiler
