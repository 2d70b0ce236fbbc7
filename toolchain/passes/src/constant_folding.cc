// constant_folding: a node whose inputs are all constants is evaluated with the kernel library
// and its outputs become initializers (named as the outputs were). Shape and Size of a value
// with a static shape fold too, so shape arithmetic (Shape → Cast → Slice → Concat → Reshape)
// collapses into constant Reshape targets. Sweeps in node order (a chain folds in one sweep);
// with a type refresher, sweeps again after refreshing types until nothing folds.
//
// Not folded: nodes producing a graph output (the interface keeps its producer), operators with
// random outputs, QuantizeLinear/DequantizeLinear while keep_qdq is set (stage 3 reads QDQ
// models' thresholds from them), nodes of other domains, control flow, and results much larger
// than their inputs (ConstantOfShape/Expand/Tile/Range blow-ups): a result is folded only if
// its size is at most max_growth × the size of the node's inputs, or at most always_fold_bytes
// (a Constant's value is in the model already: it always becomes an initializer).
#include <cstring>
#include <set>

#include "constant_evaluation.h"
#include "graph_rewrite.h"
#include "openbpu/common/error.h"
#include "pass_list.h"

namespace openbpu::passes {

namespace {

const std::set<std::string_view>& random_ops() {
  static const std::set<std::string_view> ops = {"RandomNormal",  "RandomNormalLike",
                                                 "RandomUniform", "RandomUniformLike",
                                                 "Multinomial",   "Bernoulli"};
  return ops;
}

// Shape (with opset-15 start/end) and Size of a statically shaped value.
std::optional<Tensor> fold_shape_query(const ir::Node& node) {
  const auto shape = static_shape_of(node.input(0));
  if (!shape) return std::nullopt;
  if (node.op_type() == "Size") {
    return Tensor::scalar<int64_t>(kernels::shape_element_count(*shape));
  }
  const int64_t rank = static_cast<int64_t>(shape->size());
  auto clamp = [&](int64_t v) {
    if (v < 0) v += rank;
    return std::min(std::max<int64_t>(v, 0), rank);
  };
  const int64_t start = clamp(node.attrs().get_int("start", 0));
  const int64_t end = clamp(node.attrs().get_int("end", rank));
  std::vector<int64_t> dims;
  for (int64_t i = start; i < end; ++i) dims.push_back((*shape)[static_cast<size_t>(i)]);
  return int64_tensor({static_cast<int64_t>(dims.size())}, dims);
}

struct Folder {
  PassContext& ctx;
  double max_growth;
  int64_t always_fold_bytes;
  bool keep_qdq;

  bool foldable_kind(const ir::Graph& graph, const ir::Node& node) const {
    if (!node.domain().empty() || !node.graph_attrs().empty()) return false;
    if (random_ops().count(node.op_type()) != 0) return false;
    if (keep_qdq && (node.op_type() == "QuantizeLinear" || node.op_type() == "DequantizeLinear")) {
      return false;
    }
    for (const ir::Value* out : node.outputs()) {
      if (out != nullptr && graph.is_output(out)) return false;
    }
    return !node.outputs().empty();
  }

  // The folded outputs, or nullopt.
  std::optional<std::vector<Tensor>> evaluate(const ir::Node& node) const {
    if (node.op_type() == "Shape" || node.op_type() == "Size") {
      auto t = fold_shape_query(node);
      if (!t) return std::nullopt;
      return std::vector<Tensor>{std::move(*t)};
    }
    std::vector<const Tensor*> inputs;
    int64_t input_bytes = 0;
    for (const ir::Value* in : node.inputs()) {
      if (in != nullptr && !in->is_constant()) return std::nullopt;
      inputs.push_back(constant_of(in));
      if (in != nullptr) input_bytes += static_cast<int64_t>(in->constant()->byte_size());
    }
    if (node.op_type() == "Dropout" && node.input(2) != nullptr) {
      const auto training = uniform_constant(node.input(2));
      if (!training || *training != 0) return std::nullopt;  // random in training mode
    }
    auto outputs = evaluate_node(ctx.model, node, inputs);
    if (!outputs) return std::nullopt;
    int64_t output_bytes = 0;
    for (const Tensor& t : *outputs) output_bytes += static_cast<int64_t>(t.byte_size());
    if (node.op_type() != "Constant" && output_bytes > always_fold_bytes &&
        static_cast<double>(output_bytes) > max_growth * static_cast<double>(input_bytes)) {
      if (ctx.log) {
        ctx.log(str_cat("constant_folding: kept node '", node.name(), "' (", node.op_type(),
                        "): its result (", output_bytes, " bytes) is more than ", max_growth,
                        "x its inputs (", input_bytes, " bytes)"));
      }
      return std::nullopt;
    }
    return outputs;
  }

  int sweep() {
    ir::Graph& graph = *ctx.model.graph;
    GraphRewriter rewriter(graph);
    int folded = 0;
    for (ir::Node* node : rewriter.snapshot()) {
      if (rewriter.was_removed(node) || !foldable_kind(graph, *node)) continue;
      auto outputs = evaluate(*node);
      if (!outputs) continue;
      for (size_t k = 0; k < node->outputs().size(); ++k) {
        ir::Value* old = node->output(k);
        if (old == nullptr || k >= outputs->size()) continue;
        const std::string name = old->name();
        graph.rename_value(old, graph.unique_value_name(name + ".unfolded"));
        ir::Value* folded_value = graph.add_constant(name, std::move((*outputs)[k]));
        graph.replace_all_uses(old, folded_value);
      }
      rewriter.erase_if_dead(node);
      ++folded;
    }
    return folded;
  }
};

int run(PassContext& ctx) {
  Folder folder{ctx, ctx.options.get_double("max_growth"), ctx.options.get_int("always_fold_bytes"),
                ctx.options.get_bool("keep_qdq")};
  int total = 0;
  for (int round = 0; round < 16; ++round) {
    const int folded = folder.sweep();
    total += folded;
    if (folded == 0 || !ctx.refresh_types) break;
    ctx.model.graph->remove_unused_values();
    ctx.refresh_types(ctx.model);
  }
  return total;
}

}  // namespace

PassDef constant_folding_pass() {
  return {
      "constant_folding",
      "evaluates nodes whose inputs are constants (and Shape/Size of static shapes)",
      {{"max_growth", "2", "fold only if the result is at most this many times its inputs' size"},
       {"always_fold_bytes", "65536", "results up to this many bytes are always folded"},
       {"keep_qdq", "true", "keep QuantizeLinear/DequantizeLinear (QDQ thresholds)"}},
      run};
}

}  // namespace openbpu::passes
