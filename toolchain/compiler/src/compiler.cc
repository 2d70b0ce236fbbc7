// The compiler driver (compiler.h): a short linear list of stages per segment.
#include <set>

#include "segment_builder.h"

namespace openbpu::compiler {

namespace {

struct Boundary {
  std::vector<const ir::Value*> inputs;
  std::vector<const ir::Value*> outputs;
};

Boundary segment_boundary(const ir::Graph& graph, const std::vector<const ir::Node*>& nodes) {
  const std::set<const ir::Node*> inside(nodes.begin(), nodes.end());
  Boundary b;
  std::set<const ir::Value*> seen;
  for (const ir::Node* n : nodes) {
    for (const ir::Value* v : n->inputs()) {
      if (v == nullptr || v->name().empty() || v->is_constant()) continue;
      if (v->producer() != nullptr && inside.count(v->producer())) continue;
      if (seen.insert(v).second) b.inputs.push_back(v);
    }
  }
  for (const ir::Node* n : nodes) {
    for (const ir::Value* v : n->outputs()) {
      if (v == nullptr || v->name().empty()) continue;
      bool escapes = graph.is_output(v);
      for (const ir::Use& use : v->uses()) escapes = escapes || !inside.count(use.node);
      if (escapes) b.outputs.push_back(v);
    }
  }
  return b;
}

}  // namespace

std::vector<CompiledSegment> compile_bpu_segments(const ir::Graph& graph, const TensorInfos& tensors,
                                                  const CompileOptions& options) {
  if (options.march == nullptr) raise("compile_bpu_segments: no march given");
  std::vector<CompiledSegment> compiled;
  const std::vector<std::vector<const ir::Node*>> segments = find_bpu_segments(graph, tensors);
  for (size_t s = 0; s < segments.size(); ++s) {
    const std::vector<const ir::Node*>& nodes = segments[s];
    const Boundary boundary = segment_boundary(graph, nodes);
    SegmentBuilder builder(options, tensors);
    for (const ir::Value* v : boundary.inputs) builder.define(v);
    std::vector<std::string> names;
    for (const ir::Node* n : nodes) {
      names.push_back(n->name());
      builder.set_current_node(n->name());
      if (!lower_compute(builder, *n) && !lower_movement(builder, *n)) {
        raise("node '", n->name(), "' (", n->domain().empty() ? "" : n->domain() + ":", n->op_type(),
              "): the BPU compiler has no lowering for this operator");
      }
    }
    if (boundary.outputs.empty()) raise("BPU subgraph ", s, " (from node '", nodes.front()->name(), "') has no outputs");
    compiled.push_back(builder.finish("subgraph_" + std::to_string(s), std::move(names), boundary.inputs,
                                      boundary.outputs));
  }
  return compiled;
}

}  // namespace openbpu::compiler
