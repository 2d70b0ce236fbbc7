// operator_replacement: equivalent rewrites into operators the BPU runs well (float tensors):
//   Div(x, c)            → Mul(x, 1/c)            c a constant without zeros or non-finite values
//   Sub(x, c)            → Add(x, -c)
//   Div(a, b)            → Mul(a, Reciprocal(b))  b computed (option div_to_reciprocal); with a
//                                                 Sqrt producing b this is the Reciprocal(Sqrt)
//                                                 pair of LayerNorm that quantization runs as one
//                                                 table
//   Pow(x, 2)            → Mul(x, x);  Pow(x, 0.5) → Sqrt(x);  Pow(x, 1) → x
//   Sum(a, b, c, ...)    → Add(Add(a, b), c) ...;  Sum(a) → a
//   ReduceMean(x, axes=spatial of a 4-D x) → GlobalAveragePool (+ Reshape [N,C] if keepdims=0)
//   Mul(x, 1), Div(x, 1), Add(x, 0), Sub(x, 0) → x   when the constant does not broadcast x
//   Mul(Mul(x, c1), c2)  → Mul(x, c1·c2);  Add(Add(x, c1), c2) → Add(x, c1+c2)
// Results equal the original up to float rounding (a reciprocal times x is not bit-identical to
// a division). Integer arithmetic is never rewritten.
#include <cmath>
#include <set>

#include "constant_evaluation.h"
#include "graph_rewrite.h"
#include "pass_list.h"

namespace openbpu::passes {

namespace {

bool is_float_value(const ir::Value* v) {
  return v != nullptr && kernels::dtype_is_float(v->type().dtype);
}

// True if the node computes on floats: ONNX types inputs `same_type` and output 0 alike, so one
// known float type among them decides.
bool computes_on_floats(const ir::Node& node, std::initializer_list<size_t> same_type) {
  for (size_t i : same_type) {
    const ir::Value* v = node.input(i);
    if (v != nullptr && v->is_constant()) {
      if (kernels::dtype_is_float(v->constant()->dtype())) return true;
    } else if (is_float_value(v)) {
      return true;
    }
  }
  return is_float_value(node.output(0));
}

bool all_finite_nonzero(const Tensor& t) {
  for (int64_t i = 0; i < t.element_count(); ++i) {
    const double v = t.float_at(i);
    if (!std::isfinite(v) || v == 0) return false;
  }
  return t.element_count() > 0;
}

// True if combining x with constant c elementwise keeps x's shape: c has no more dims than x
// and each of its dims is 1 or equals x's dim (a scalar always does).
bool keeps_shape(const ir::Value* x, const Tensor& c) {
  if (c.rank() == 0) return true;
  const auto rank = rank_of(x);
  if (!rank || c.rank() > *rank) return false;
  const auto& shape = *x->type().shape;
  for (int64_t i = 0; i < c.rank(); ++i) {
    const int64_t cd = c.dim(c.rank() - 1 - i);
    const ir::Dim& xd = shape[shape.size() - 1 - static_cast<size_t>(i)];
    if (cd != 1 && !(xd.is_known() && xd.value == cd)) return false;
  }
  return true;
}

struct Replacer {
  PassContext& ctx;
  GraphRewriter& rw;
  bool div_to_reciprocal;
  int64_t opset;

  ir::Graph& graph() { return rw.graph(); }

  // Replaces node's output 0 by `value` and erases the node.
  // `value` is new (it takes the replaced value\'s name) or an existing value (it keeps its own).
  // `value` replaces the node's output. A new node computing it takes the replaced node's name
  // once that node is gone, so the yaml's node settings (run_on_cpu, node_info) naming the
  // original operator still find it.
  bool finish(ir::Node* node, ir::Value* value, bool is_new = true) {
    if (!rw.replace_value(node->output(0), value, is_new)) return false;
    const std::string name = node->name();
    rw.erase_if_dead(node);
    ir::Node* producer = value->producer();
    if (is_new && producer != nullptr && !name.empty() && rw.was_removed(node) &&
        rw.graph().unique_node_name(name) == name) {
      producer->set_name(name);
    }
    return true;
  }

  // A new binary node typed like `like` (element type from a constant operand if unknown).
  ir::Node* binary(ir::Node* before, const std::string& op, ir::Value* a, ir::Value* b,
                   const ir::Value* like) {
    ir::TensorType type = like->type();
    for (const ir::Value* v : {a, b}) {
      if (type.dtype == DataType::kUndefined && v->is_constant())
        type.dtype = v->constant()->dtype();
    }
    return rw.add_node(before, op, {a, b}, {like->name()}, {type});
  }

  // The constant operand of a commutative/right-constant binary node: (x, c) or nullopt.
  std::optional<std::pair<ir::Value*, ir::Value*>> split_constant(ir::Node* node,
                                                                  bool commutative) {
    ir::Value* a = node->input(0);
    ir::Value* b = node->input(1);
    if (a == nullptr || b == nullptr) return std::nullopt;
    if (b->is_constant() && !a->is_constant()) return std::make_pair(a, b);
    if (commutative && a->is_constant() && !b->is_constant()) return std::make_pair(b, a);
    return std::nullopt;
  }

  bool rewrite(ir::Node* node) {
    if (!node->domain().empty() || node->outputs().size() != 1 || node->output(0) == nullptr) {
      return false;
    }
    const std::string& op = node->op_type();
    ir::Value* out = node->output(0);
    if (op == "Mul" || op == "Add" || op == "Sub" || op == "Div") {
      const bool commutative = op == "Mul" || op == "Add";
      auto split = split_constant(node, commutative);
      if (!split) {
        if (op == "Div" && div_to_reciprocal && node->input(0) != nullptr &&
            node->input(1) != nullptr && computes_on_floats(*node, {0, 1}) &&
            !node->input(1)->is_constant()) {
          ir::Value* b = node->input(1);
          ir::Node* recip =
              rw.add_node(node, "Reciprocal", {b}, {b->name() + ".reciprocal"}, {b->type()});
          return finish(node,
                        binary(node, "Mul", node->input(0), recip->output(0), out)->output(0));
        }
        return false;
      }
      auto [x, c] = *split;
      const Tensor& ct = *c->constant();
      if (!kernels::dtype_is_float(ct.dtype())) return false;  // x has the same type as c
      const auto uniform = uniform_constant(c);
      const bool neutral =
          uniform && ((op == "Mul" || op == "Div") ? *uniform == 1 : *uniform == 0);
      if (neutral && keeps_shape(x, ct)) {
        return finish(node, x, false);
      }
      if (op == "Div" && all_finite_nonzero(ct)) {
        auto inverse = evaluate_op("Reciprocal", {}, opset, {&ct});
        if (!inverse) return false;
        ir::Value* k = rw.add_constant(c->name() + ".reciprocal", std::move(*inverse));
        return finish(node, binary(node, "Mul", x, k, out)->output(0));
      }
      if (op == "Sub") {
        auto negated = evaluate_op("Neg", {}, opset, {&ct});
        if (!negated) return false;
        ir::Value* k = rw.add_constant(c->name() + ".negated", std::move(*negated));
        return finish(node, binary(node, "Add", x, k, out)->output(0));
      }
      // Mul(Mul(x, c1), c2) → Mul(x, c1·c2), same for Add.
      ir::Node* inner = x->producer();
      if (commutative && is_op(inner, op) && has_single_use(graph(), x)) {
        auto inner_split = split_constant(inner, true);
        if (inner_split && kernels::dtype_is_float(inner_split->second->constant()->dtype())) {
          auto combined = evaluate_op(op, {}, opset, {inner_split->second->constant(), &ct});
          if (!combined) return false;
          ir::Value* k = rw.add_constant(c->name() + ".combined", std::move(*combined));
          return finish(node, binary(node, op, inner_split->first, k, out)->output(0));
        }
      }
      return false;
    }
    if (op == "Pow") {
      ir::Value* x = node->input(0);
      const auto exponent = uniform_constant(node->input(1));
      const Tensor* e = constant_of(node->input(1));
      if (!exponent || !computes_on_floats(*node, {0}) || e->element_count() != 1 ||
          (e->rank() > 0 && e->rank() > rank_of(x).value_or(-1))) {
        return false;
      }
      if (*exponent == 1) return finish(node, x, false);
      if (*exponent == 2) return finish(node, binary(node, "Mul", x, x, out)->output(0));
      if (*exponent == 0.5) {
        return finish(node,
                      rw.add_node(node, "Sqrt", {x}, {out->name()}, {out->type()})->output(0));
      }
      return false;
    }
    if (op == "ReduceMean") return reduce_mean_to_pool(node);
    if (op == "Sum") return sum_to_adds(node);
    return false;
  }

  // Sum(a) → a; Sum(a, b, c, ...) → Add(Add(a, b), c) ...: the BPU adds two tensors at a time.
  bool sum_to_adds(ir::Node* node) {
    std::vector<ir::Value*> terms;
    for (ir::Value* v : node->inputs()) {
      if (v == nullptr) return false;
      terms.push_back(v);
    }
    if (terms.empty() || !computes_on_floats(*node, {0})) return false;
    ir::Value* out = node->output(0);
    if (terms.size() == 1) return finish(node, terms[0], false);
    ir::Value* acc = terms[0];
    for (size_t i = 1; i < terms.size(); ++i) {
      const bool last = i + 1 == terms.size();
      ir::Node* add = rw.add_node(node, "Add", {acc, terms[i]}, {last ? out->name() : out->name() + ".partial"},
                                  {last ? out->type() : ir::TensorType{out->type().dtype, std::nullopt}});
      acc = add->output(0);
    }
    return finish(node, acc);
  }

  bool reduce_mean_to_pool(ir::Node* node) {
    ir::Value* x = node->input(0);
    ir::Value* out = node->output(0);
    if (rank_of(x) != 4 || !is_float_value(x)) return false;
    std::vector<int64_t> axes;
    if (node->attrs().has("axes")) {
      axes = node->attrs().get_ints("axes");
    } else if (node->input(1) != nullptr) {
      const auto v = int_values(node->input(1));
      if (!v) return false;
      axes = *v;
    }
    std::set<int64_t> normalized;
    for (int64_t a : axes) {
      const auto n = normalize_axis(a, 4);
      if (!n) return false;
      normalized.insert(*n);
    }
    if (normalized != std::set<int64_t>{2, 3}) return false;
    const bool keepdims = node->attrs().get_int("keepdims", 1) != 0;
    ir::TensorType pooled_type;
    pooled_type.dtype = x->type().dtype;
    if (x->type().shape) {
      pooled_type.shape = std::vector<ir::Dim>{(*x->type().shape)[0], (*x->type().shape)[1],
                                               ir::Dim::known(1), ir::Dim::known(1)};
    }
    ir::Node* pool = rw.add_node(node, "GlobalAveragePool", {x},
                                 {keepdims ? out->name() : out->name() + ".pooled"}, {pooled_type});
    if (keepdims) return finish(node, pool->output(0));
    ir::Value* shape = rw.add_constant(out->name() + ".shape", int64_tensor({2}, {0, -1}));
    ir::Node* reshape =
        rw.add_node(node, "Reshape", {pool->output(0), shape}, {out->name()}, {out->type()});
    return finish(node, reshape->output(0));
  }
};

int run(PassContext& ctx) {
  ir::Graph& graph = *ctx.model.graph;
  GraphRewriter rw(graph);
  Replacer replacer{ctx, rw, ctx.options.get_bool("div_to_reciprocal"), onnx_opset(ctx.model)};
  int total = 0;
  for (int round = 0; round < 8; ++round) {
    int rewrites = rw.sweep([&](ir::Node* node) { return replacer.rewrite(node); });
    total += rewrites;
    if (rewrites == 0) break;
  }
  return total;
}

}  // namespace

PassDef operator_replacement_pass() {
  return {"operator_replacement",
          "equivalent BPU-friendly rewrites: Div→Mul, Sub→Add, Pow 2→Mul, ReduceMean→GAP, ...",
          {{"div_to_reciprocal", "true", "Div by a computed tensor → Mul by its Reciprocal"}},
          run};
}

}  // namespace openbpu::passes
