// dead_code_elimination: removes nodes none of whose outputs is used, is a graph output or is
// referenced by a subgraph (repeatedly, so whole dead chains go), then initializers and other
// values nothing refers to. Graph inputs stay even if unused: the interface does not change.
#include "graph_rewrite.h"
#include "pass_list.h"

namespace openbpu::passes {

namespace {

int run(PassContext& ctx) {
  ir::Graph& graph = *ctx.model.graph;
  GraphRewriter rw(graph);
  const size_t before = graph.nodes().size();
  std::vector<ir::Node*> nodes = rw.snapshot();
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    if (!rw.was_removed(*it) && !(*it)->outputs().empty()) rw.erase_if_dead(*it);
  }
  const size_t removed_values = graph.remove_unused_values();
  return static_cast<int>(before - graph.nodes().size() + removed_values);
}

}  // namespace

PassDef dead_code_elimination_pass() {
  return {"dead_code_elimination",
          "removes nodes whose results nothing uses, and unused initializers",
          {},
          run};
}

}  // namespace openbpu::passes
