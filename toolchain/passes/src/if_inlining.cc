// if_inlining: an If whose condition is a constant (an export's shape test after constant
// folding, a flag fixed at export) is replaced by the branch it takes: the branch's constants
// and nodes join the main graph under their own names (ONNX keeps names unique across scopes,
// so the references of subgraphs nested in them stay valid), and the If's outputs become the
// branch's outputs (graph outputs keep their names). Ifs nested in an inlined branch are
// inlined in turn when their condition is constant, or becomes constant once the graph is folded
// (a shape test on a value of the inlined branch). Must not fire: a computed condition,
// a branch whose names clash with the main graph's.
#include <map>

#include "graph_rewrite.h"
#include "openbpu/common/error.h"
#include "pass_list.h"
#include "subgraph_copy.h"

namespace openbpu::passes {

namespace {

const ir::Graph* taken_branch(const ir::Node& node) {
  const Tensor* cond = constant_of(node.input(0));
  if (cond == nullptr || cond->element_count() != 1) return nullptr;
  const char* wanted = cond->float_at(0) != 0 ? "then_branch" : "else_branch";
  for (const ir::GraphAttribute& a : node.graph_attrs()) {
    if (a.name == wanted && a.graphs.size() == 1) return a.graphs.front().get();
  }
  return nullptr;
}

// The branch can join `graph` (names_fit), and an If output that is a graph output comes from
// inside the branch (an outer value passed through keeps its own name).
bool can_inline(const ir::Graph& graph, const ir::Node& node, const ir::Graph& branch) {
  if (!names_fit(graph, branch, {}, {}, false)) return false;
  for (size_t k = 0; k < node.outputs().size(); ++k) {
    const ir::Value* out = branch.outputs()[k];
    if (out->producer() == nullptr && !out->is_constant() && graph.is_output(node.output(k))) return false;
  }
  return true;
}

bool inline_branch(GraphRewriter& rw, ir::Node* node) {
  const ir::Graph* branch = is_op(node, "If") ? taken_branch(*node) : nullptr;
  ir::Graph& graph = rw.graph();
  if (branch == nullptr || branch->outputs().size() != node->outputs().size() || !can_inline(graph, *node, *branch)) {
    return false;
  }
  // A branch output computed inside the branch takes the If output's name (a subgraph may read
  // that name from the outer scope); the If's output steps aside under another name.
  std::map<std::string, std::string> renamed;  // branch value name -> its name in the graph
  std::vector<ir::Value*> stepped_aside(node->outputs().size(), nullptr);
  for (size_t k = 0; k < node->outputs().size(); ++k) {
    ir::Value* out = node->output(k);
    const ir::Value* result = branch->outputs()[k];
    if (out == nullptr || result->producer() == nullptr || renamed.count(result->name())) continue;
    renamed[result->name()] = out->name();
    graph.rename_value(out, graph.unique_value_name(out->name() + ".replaced"));
    stepped_aside[k] = out;
  }
  SubgraphCopy how;
  how.before = node;
  how.renamed = std::move(renamed);
  const std::vector<ir::Value*> results = copy_subgraph(graph, *branch, how);
  for (size_t k = 0; k < node->outputs().size(); ++k) {
    ir::Value* out = node->output(k);
    ir::Value* result = results[k];
    if (out == nullptr) continue;
    if (stepped_aside[k] != nullptr) {
      graph.replace_all_uses(out, result);
    } else if (!rw.replace_value(out, result, false)) {
      raise("if_inlining: If '", node->name(), "' output ", k, " cannot take its branch's output '", result->name(), "'");
    }
  }
  rw.erase_if_dead(node);
  return true;
}

// Nested Ifs join the graph with each inlining: sweep until none is left to take; then fold
// constants (constant_folding with its defaults), since a nested condition is often computed
// from shapes the inlined branch made static, and take the Ifs that folding decided.
int run(PassContext& ctx) {
  const PassDef* folding = find_pass("constant_folding");
  const PassOptions folding_options(folding->name, folding->options, {});
  PassContext folding_ctx{ctx.model, folding_options, ctx.log, ctx.refresh_types};
  int rewrites = 0;
  while (true) {
    int inlined = 0, swept = 0;
    do {  // a new rewriter per sweep: inlined branches bring subgraphs that pin outer names
      GraphRewriter rw(*ctx.model.graph);
      swept = rw.sweep([&](ir::Node* node) { return inline_branch(rw, node); });
      inlined += swept;
    } while (swept > 0);
    rewrites += inlined;
    if (inlined == 0) return rewrites;
    if (ctx.refresh_types) {  // the branches' own value types are stale in the graph's shapes
      ctx.model.graph->remove_unused_values();
      ctx.refresh_types(ctx.model);
    }
    if (folding->run(folding_ctx) == 0) return rewrites;
  }
}

}  // namespace

PassDef if_inlining_pass() {
  return {"if_inlining", "an If with a constant condition becomes the branch it takes", {}, run};
}

}  // namespace openbpu::passes
