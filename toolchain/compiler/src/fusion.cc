// Fusion of x · table(x) chains into one kLutProduct (segment_builder.h).
#include <array>
#include <optional>

#include "segment_builder.h"

namespace openbpu::compiler {

namespace {

// The one node reading `v` inside the segment, if nothing else (no other node, no graph output)
// reads it.
const ir::Node* sole_reader(const ir::Graph& graph, const ir::Value* v, const std::set<const ir::Node*>& inside) {
  if (v == nullptr || graph.is_output(v) || v->uses().size() != 1) return nullptr;
  const ir::Node* reader = v->uses().front().node;
  return inside.count(reader) ? reader : nullptr;
}

bool is_activation(const TensorInfos& tensors, const ir::Value* v) {
  auto it = tensors.find(v->name());
  return it != tensors.end() &&
         (it->second.dtype == kernels::DataType::kInt8 || it->second.dtype == kernels::DataType::kInt16);
}

// The chain ending in `lut`'s only reader, if it is a Mul of x and the table's output.
std::optional<LutProductChain> chain_of(const ir::Graph& graph, const TensorInfos& tensors, const ir::Node& lut,
                                        const std::set<const ir::Node*>& inside) {
  LutProductChain c;
  c.lut = &lut;
  const ir::Node* mul = sole_reader(graph, lut.output(0), inside);
  if (mul == nullptr || mul->inputs().size() != 2) return std::nullopt;
  const Lowering m = lowering_of(*mul);
  if (m.how != bpu_support::LowerAs::kElementwise || m.def->elementwise != isa::ElementwiseOp::kMul) return std::nullopt;
  c.mul = mul;
  const ir::Value* n = lut.input(0);
  const ir::Node* producer = n->producer();
  if (producer != nullptr && inside.count(producer) && lowering_of(*producer).how == bpu_support::LowerAs::kRequantize &&
      !producer->attrs().has("multipliers") && sole_reader(graph, n, inside) == &lut) {
    c.requantize = producer;
    c.x = producer->input(0);
  } else {
    c.x = n;
  }
  const ir::Value* other = mul->input(0) == lut.output(0) ? mul->input(1) : mul->input(0);
  if (other != c.x || mul->input(0) == mul->input(1)) return std::nullopt;
  for (const ir::Value* v : std::array<const ir::Value*, 4>{c.x, n, lut.output(0), mul->output(0)}) {
    if (!is_activation(tensors, v)) return std::nullopt;
  }
  if (tensors.at(n->name()).dtype != tensors.at(lut.output(0)->name()).dtype) return std::nullopt;
  const kernels::Shape& shape = tensors.at(c.x->name()).shape;
  if (tensors.at(lut.output(0)->name()).shape != shape || tensors.at(mul->output(0)->name()).shape != shape) {
    return std::nullopt;
  }
  return c;
}

}  // namespace

std::map<const ir::Node*, LutProductChain> find_lut_products(const ir::Graph& graph, const TensorInfos& tensors,
                                                             const std::vector<const ir::Node*>& nodes) {
  const std::set<const ir::Node*> inside(nodes.begin(), nodes.end());
  std::map<const ir::Node*, LutProductChain> chains;
  for (const ir::Node* n : nodes) {
    if (lowering_of(*n).how != bpu_support::LowerAs::kLut) continue;
    if (std::optional<LutProductChain> c = chain_of(graph, tensors, *n, inside)) chains.emplace(c->mul, *c);
  }
  return chains;
}

}  // namespace openbpu::compiler
