// control_flow_flattening: the control flow if_inlining cannot decide becomes straight-line
// operators, so its parts can be quantized and placed like any other:
// - an If with a computed condition whose branches give outputs of the same static type and
//   shape: both branches join the graph (as if_inlining copies one) and each output is a
//   Where(cond, then, else) under the If output's name — both branches are computed, the
//   condition picks;
// - a Loop with a constant trip count and no data-dependent exit (no condition input or a
//   constant true one; the body's condition is ignored then, or passes its input through, or is
//   a constant true) is unrolled: the body once per iteration with the iteration number as a
//   constant, the carried values wired from one copy to the next, each scan output the Concat
//   of the iterations' values along a new axis 0.
// Between rounds if_inlining runs (it folds constants), since an unrolled body's shape tests
// and tests of the iteration number become constant. An If or Loop that stays is named in a
// log line with the reason. Must not fire: branches whose output types differ or are not
// static, a Loop whose trip count is data or that can exit early, a body too large to unroll, a
// node the option `keep` names (run_on_cpu naming an If or Loop keeps it as control flow).
#include <algorithm>
#include <map>
#include <set>

#include "graph_rewrite.h"
#include "openbpu/common/error.h"
#include "pass_list.h"
#include "subgraph_copy.h"

namespace openbpu::passes {

namespace {

// More iterations or nodes than these stay a Loop (the graph would outgrow what the later
// stages handle in reasonable time).
constexpr int64_t kMaxIterations = 4096;
constexpr int64_t kMaxUnrolledNodes = 200000;

const ir::Graph* graph_attr(const ir::Node& node, std::string_view name) {
  for (const ir::GraphAttribute& a : node.graph_attrs()) {
    if (a.name == name && a.graphs.size() == 1) return a.graphs.front().get();
  }
  return nullptr;
}

bool same_static_type(const ir::Value* a, const ir::Value* b) {
  const std::optional<Shape> sa = static_shape_of(a), sb = static_shape_of(b);
  return sa && sb && *sa == *sb && a->type().dtype == b->type().dtype && a->type().dtype != DataType::kUndefined;
}

ir::Value* bool_true(GraphRewriter& rw, const std::string& base) {
  Tensor t(DataType::kBool, {});
  t.data<bool>()[0] = true;
  return rw.add_constant(base, std::move(t));
}

bool is_true_constant(const ir::Value* v) {
  const std::optional<double> c = uniform_constant(v);
  return c && *c != 0 && constant_of(v)->element_count() == 1;
}

std::set<std::string> split_names(const std::string& list) {
  std::set<std::string> names;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t end = std::min(list.find(';', start), list.size());
    if (end > start) names.insert(list.substr(start, end - start));
    start = end + 1;
  }
  return names;
}

class Flattener {
 public:
  Flattener(GraphRewriter& rw, const Logger& log, const std::set<std::string>& keep, std::set<std::string>& logged)
      : rw_(rw), graph_(rw.graph()), log_(log), keep_(keep), logged_(logged) {}

  bool rewrite(ir::Node* node) {
    std::string why;
    if ((is_op(node, "If") || is_op(node, "Loop")) && keep_.count(node->name())) {
      why = "run_on_cpu names it";
    } else if (is_op(node, "If")) {
      why = select_if(node);
    } else if (is_op(node, "Loop")) {
      why = unroll_loop(node);
    } else {
      return false;
    }
    if (why.empty()) return true;
    if (log_ && !rw_.was_removed(node) && logged_.insert(node->name()).second) {  // once over the rounds
      log_(str_cat("control_flow_flattening: ", node->op_type(), " '", node->name(), "' stays (it runs on the CPU): ", why));
    }
    return false;
  }

 private:
  // Gives the node's output `out` a new name so that `result` can take the old one (a subgraph
  // or the graph's outputs may read it), and moves every use over.
  void take_over(ir::Value* out, ir::Value* result) {
    const std::string name = out->name();
    graph_.rename_value(out, graph_.unique_value_name(name + ".replaced"));
    graph_.rename_value(result, name);
    graph_.replace_all_uses(out, result);
  }

  std::string select_if(ir::Node* node) {
    const ir::Graph* then_g = graph_attr(*node, "then_branch");
    const ir::Graph* else_g = graph_attr(*node, "else_branch");
    if (then_g == nullptr || else_g == nullptr) return "a branch is missing";
    const size_t n = node->outputs().size();
    if (then_g->outputs().size() != n || else_g->outputs().size() != n) return "the branches give other output counts";
    for (size_t k = 0; k < n; ++k) {
      if (!same_static_type(then_g->outputs()[k], else_g->outputs()[k])) {
        return str_cat("output ", k, " is ", then_g->outputs()[k]->type().to_string(), " in then_branch and ",
                       else_g->outputs()[k]->type().to_string(), " in else_branch (both branches must give one static type)");
      }
    }
    const std::vector<std::string> then_names = own_value_names(*then_g);
    if (!names_fit(graph_, *then_g, {}, {}, false) ||
        !names_fit(graph_, *else_g, {}, {then_names.begin(), then_names.end()}, false)) {
      return "the branches' value names clash with the graph's or each other's";
    }
    SubgraphCopy how;
    how.before = node;
    const std::vector<ir::Value*> then_out = copy_subgraph(graph_, *then_g, how);
    const std::vector<ir::Value*> else_out = copy_subgraph(graph_, *else_g, how);
    // If takes a one-element condition of any rank; Where's result must keep the branch shape.
    ir::Value* cond = node->input(0);
    if (rank_of(cond).value_or(-1) != 0) {
      cond = rw_.add_node(node, "Reshape", {cond, rw_.add_constant(node->name() + ".scalar", int64_tensor({0}, {}))},
                          {node->name() + ".cond"}, {ir::TensorType::of(DataType::kBool, {})})
                 ->output(0);
    }
    ir::Node* first = nullptr;
    for (size_t k = 0; k < n; ++k) {
      ir::Value* out = node->output(k);
      if (out == nullptr) continue;
      ir::Node* where = rw_.add_node(node, "Where", {cond, then_out[k], else_out[k]}, {out->name() + ".selected"},
                                     {then_g->outputs()[k]->type()});
      take_over(out, where->output(0));
      if (first == nullptr) first = where;
    }
    const std::string name = node->name();
    rw_.erase_if_dead(node);
    if (first != nullptr && rw_.was_removed(node)) first->set_name(name);  // node settings may name the If
    return {};
  }

  std::string unroll_loop(ir::Node* node) {
    const ir::Graph* body = graph_attr(*node, "body");
    if (body == nullptr) return "the body is missing";
    const Tensor* trips = node->input(0) == nullptr ? nullptr : constant_of(node->input(0));
    if (trips == nullptr || trips->element_count() != 1) return "its trip count is not a constant";
    const int64_t m = static_cast<int64_t>(trips->float_at(0));
    ir::Value* cond_in = node->input(1);
    if (cond_in != nullptr && !is_true_constant(cond_in)) return "its condition input is data";
    const size_t carried = node->inputs().size() - 2;
    if (body->inputs().size() != carried + 2 || body->outputs().size() < carried + 1 ||
        node->outputs().size() != body->outputs().size() - 1) {
      return "its body's inputs and outputs do not match the node's";
    }
    if (cond_in != nullptr) {
      const ir::Value* body_cond = body->outputs()[0];
      const ir::Node* producer = body_cond->producer();
      const bool passes_through = body_cond == body->inputs()[1] ||
                                  (producer != nullptr && is_op(producer, "Identity") && producer->input(0) == body->inputs()[1]);
      if (!passes_through && !is_true_constant(body_cond)) return "its body computes whether to go on (an early exit)";
    }
    if (m < 1 || m > kMaxIterations) return str_cat("its trip count ", m, " is outside [1, ", kMaxIterations, "]");
    if (m * static_cast<int64_t>(body->nodes().size()) > kMaxUnrolledNodes) {
      return str_cat(m, " iterations of ", body->nodes().size(), " nodes exceed ", kMaxUnrolledNodes, " unrolled nodes");
    }
    // Every copy renames the body's values; a subgraph nested in the body would read them by
    // their old names.
    const std::set<std::string> nested = body->subgraph_outer_names();
    for (const std::string& own : own_value_names(*body)) {
      if (nested.count(own)) return str_cat("a subgraph in its body reads the body's value '", own, "'");
    }
    const size_t scans = body->outputs().size() - 1 - carried;
    std::vector<std::optional<Shape>> scan_shapes;
    for (size_t s = 0; s < scans; ++s) {
      scan_shapes.push_back(static_shape_of(body->outputs()[1 + carried + s]));
      if (!scan_shapes.back()) return str_cat("scan output ", s, " has no static shape");
    }
    std::vector<ir::Value*> state(node->inputs().begin() + 2, node->inputs().end());
    std::vector<std::vector<ir::Value*>> scanned(scans);
    ir::Value* keep_going = bool_true(rw_, node->name() + ".cond");
    for (int64_t i = 0; i < m; ++i) {
      SubgraphCopy how;
      how.before = node;
      how.node_suffix = str_cat("@", i);
      how.bound[body->inputs()[0]] = rw_.add_constant(str_cat(node->name(), ".iteration", i), int64_tensor({}, {i}));
      how.bound[body->inputs()[1]] = keep_going;
      for (size_t c = 0; c < carried; ++c) how.bound[body->inputs()[2 + c]] = state[c];
      for (const std::string& own : own_value_names(*body)) {
        how.renamed[own] = graph_.unique_value_name(str_cat(own, "@", i));
      }
      const std::vector<ir::Value*> out = copy_subgraph(graph_, *body, how);
      if (out[0]->producer() != nullptr) rw_.erase_if_dead(out[0]->producer());  // the ignored condition
      for (size_t c = 0; c < carried; ++c) state[c] = out[1 + c];
      for (size_t s = 0; s < scans; ++s) {
        Shape one = *scan_shapes[s];
        one.insert(one.begin(), 1);
        ir::Value* v = out[1 + carried + s];
        scanned[s].push_back(rw_.add_node(node, "Reshape",
                                          {v, rw_.add_constant(v->name() + ".shape", int64_tensor({int64_t(one.size())}, one))},
                                          {v->name() + ".stacked"}, {ir::TensorType::of(v->type().dtype, one)})
                                 ->output(0));
      }
    }
    for (size_t c = 0; c < carried; ++c) {
      ir::Value* out = node->output(c);
      if (out == nullptr) continue;
      ir::Value* result = state[c];
      if (result->producer() == nullptr || graph_.is_input(result) || graph_.is_output(result)) {
        // A value carried through unchanged (or a constant): an Identity takes the output's name.
        result = rw_.add_node(node, "Identity", {result}, {out->name() + ".final"}, {out->type()})->output(0);
      }
      take_over(out, result);
    }
    for (size_t s = 0; s < scans; ++s) {
      ir::Value* out = node->output(carried + s);
      if (out == nullptr) continue;
      Shape all = *scan_shapes[s];
      all.insert(all.begin(), m);
      kernels::AttributeMap axis;
      axis.set("axis", int64_t{0});
      ir::Node* concat = rw_.add_node(node, "Concat", scanned[s], {out->name() + ".scanned"},
                                      {ir::TensorType::of(out->type().dtype == DataType::kUndefined
                                                              ? body->outputs()[1 + carried + s]->type().dtype
                                                              : out->type().dtype,
                                                          all)},
                                      std::move(axis));
      take_over(out, concat->output(0));
    }
    rw_.erase_if_dead(node);
    return {};
  }

  GraphRewriter& rw_;
  ir::Graph& graph_;
  const Logger& log_;
  const std::set<std::string>& keep_;
  std::set<std::string>& logged_;
};

int run(PassContext& ctx) {
  const PassDef* inlining = find_pass("if_inlining");
  const PassOptions inlining_options(inlining->name, inlining->options, {});
  PassContext inlining_ctx{ctx.model, inlining_options, ctx.log, ctx.refresh_types};
  const std::set<std::string> keep = split_names(ctx.options.get_string("keep"));
  std::set<std::string> logged;
  int rewrites = 0;
  while (true) {
    GraphRewriter rw(*ctx.model.graph);
    Flattener flattener(rw, ctx.log, keep, logged);
    const int flattened = rw.sweep([&](ir::Node* node) { return flattener.rewrite(node); });
    rewrites += flattened;
    if (flattened == 0) return rewrites;
    ctx.model.graph->remove_unused_values();
    if (ctx.refresh_types) ctx.refresh_types(ctx.model);
    inlining->run(inlining_ctx);
  }
}

}  // namespace

PassDef control_flow_flattening_pass() {
  return {"control_flow_flattening",
          "an If with a computed condition becomes both branches and a Where per output; a Loop with a constant trip "
          "count is unrolled",
          {{"keep", ";", "';'-separated names of If / Loop nodes left as control flow on the CPU (';': none)"}},
          run};
}

}  // namespace openbpu::passes
