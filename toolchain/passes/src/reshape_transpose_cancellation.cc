// reshape_transpose_cancellation: data movement that cancels or composes.
//   Transpose(Transpose(x, p), q)   → Transpose(x, p∘q), or x if that is the identity
//   Transpose(x, identity)          → x
//   Transpose that keeps the order of the dims larger than 1 (static shapes) → Reshape
//   Reshape/Flatten/Squeeze/Unsqueeze of a value with the same static shape → x
//   a chain of two of them          → one Reshape to the final static shape (or x)
//   Reshape(Reshape(x, s1), s2)     → Reshape(x, s2) when s2 is a constant without 0 entries
//   Squeeze(Unsqueeze(x, a), a), Unsqueeze(Squeeze(x, a), a) → x
// Static shapes come from value types (fill them with a type refresher after loading) or from
// constant Reshape targets of statically shaped inputs.
#include <algorithm>
#include <numeric>
#include <set>

#include "graph_rewrite.h"
#include "pass_list.h"

namespace openbpu::passes {

namespace {

bool is_reshape_like(const ir::Node* n) {
  return is_op(n, "Reshape") || is_op(n, "Flatten") || is_op(n, "Squeeze") || is_op(n, "Unsqueeze");
}

// ONNX Reshape's output shape for a static input and a constant target.
std::optional<Shape> reshape_result(const Shape& in, const std::vector<int64_t>& target,
                                    bool allowzero) {
  Shape out;
  int64_t known = 1, infer_at = -1;
  for (size_t i = 0; i < target.size(); ++i) {
    int64_t d = target[i];
    if (d == 0 && !allowzero) {
      if (i >= in.size()) return std::nullopt;
      d = in[i];
    }
    if (d == -1) {
      if (infer_at >= 0) return std::nullopt;
      infer_at = static_cast<int64_t>(i);
      out.push_back(1);
      continue;
    }
    if (d < 0) return std::nullopt;
    known *= d;
    out.push_back(d);
  }
  const int64_t total = kernels::shape_element_count(in);
  if (infer_at >= 0) {
    if (known == 0 || total % known != 0) return std::nullopt;
    out[static_cast<size_t>(infer_at)] = total / known;
  } else if (known != total) {
    return std::nullopt;
  }
  return out;
}

// Squeeze/Unsqueeze axes (attribute before opset 13, input from 13), normalized against `rank`.
std::optional<std::set<int64_t>> axes_of(const ir::Node* node, std::optional<int64_t> rank);

// The output shape of a Reshape/Flatten/Squeeze/Unsqueeze: from its type, else computed from
// its input's static shape (itself from the type or, through reshape-like producers, computed).
std::optional<Shape> output_shape(const ir::Node* node, int depth = 0) {
  if (auto s = static_shape_of(node->output(0))) return s;
  const ir::Value* x = node->input(0);
  std::optional<Shape> in = static_shape_of(x);
  if (!in && depth < 8 && x != nullptr && is_reshape_like(x->producer())) {
    in = output_shape(x->producer(), depth + 1);
  }
  if (!in) return std::nullopt;
  const int64_t rank = static_cast<int64_t>(in->size());
  if (is_op(node, "Reshape")) {
    const auto target = int_values(node->input(1));
    if (!target) return std::nullopt;
    return reshape_result(*in, *target, node->attrs().get_int("allowzero", 0) != 0);
  }
  if (is_op(node, "Flatten")) {
    const auto axis = normalize_axis(node->attrs().get_int("axis", 1), rank + 1);
    if (!axis) return std::nullopt;
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < rank; ++i) (i < *axis ? outer : inner) *= (*in)[static_cast<size_t>(i)];
    return Shape{outer, inner};
  }
  const bool squeeze = is_op(node, "Squeeze");
  if (squeeze && !node->attrs().has("axes") && node->input(1) == nullptr) {
    Shape out;
    for (int64_t d : *in) {
      if (d != 1) out.push_back(d);
    }
    return out;
  }
  if (squeeze) {
    const auto axes = axes_of(node, rank);
    if (!axes) return std::nullopt;
    Shape out;
    for (int64_t i = 0; i < rank; ++i) {
      if (axes->count(i) == 0) out.push_back((*in)[static_cast<size_t>(i)]);
    }
    return out;
  }
  // Unsqueeze: axes refer to the output's dims.
  std::vector<int64_t> raw;
  if (node->attrs().has("axes")) {
    raw = node->attrs().get_ints("axes");
  } else if (const auto v = int_values(node->input(1))) {
    raw = *v;
  } else {
    return std::nullopt;
  }
  const auto axes = axes_of(node, rank + static_cast<int64_t>(raw.size()));
  if (!axes) return std::nullopt;
  Shape out;
  size_t next = 0;
  for (int64_t i = 0; i < rank + static_cast<int64_t>(raw.size()); ++i) {
    if (axes->count(i) != 0) {
      out.push_back(1);
    } else if (next < in->size()) {
      out.push_back((*in)[next++]);
    } else {
      return std::nullopt;
    }
  }
  return out;
}

// Squeeze/Unsqueeze axes (attribute before opset 13, input from 13), normalized against `rank`.
std::optional<std::set<int64_t>> axes_of(const ir::Node* node, std::optional<int64_t> rank) {
  std::vector<int64_t> axes;
  if (node->attrs().has("axes")) {
    axes = node->attrs().get_ints("axes");
  } else if (node->input(1) != nullptr) {
    const auto v = int_values(node->input(1));
    if (!v) return std::nullopt;
    axes = *v;
  } else {
    return std::nullopt;  // Squeeze of all 1-dims
  }
  std::set<int64_t> out;
  for (int64_t a : axes) {
    if (a < 0) {
      if (!rank) return std::nullopt;
      a += *rank;
    }
    out.insert(a);
  }
  return out;
}

struct Canceller {
  GraphRewriter& rw;

  ir::Graph& graph() { return rw.graph(); }

  // `value` is new (it takes the replaced value\'s name) or an existing value (it keeps its own).
  bool finish(ir::Node* node, ir::Value* value, bool is_new = true) {
    if (!rw.replace_value(node->output(0), value, is_new)) return false;
    rw.erase_if_dead(node);
    return true;
  }

  ir::Value* reshape_to(ir::Node* before, ir::Value* x, const Shape& shape, const ir::Value* like) {
    ir::Value* target = rw.add_constant(like->name() + ".shape",
                                        int64_tensor({static_cast<int64_t>(shape.size())}, shape));
    return rw
        .add_node(before, "Reshape", {x, target}, {like->name()},
                  {ir::TensorType::of(like->type().dtype, shape)})
        ->output(0);
  }

  std::optional<std::vector<int64_t>> perm_of(const ir::Node* t) {
    if (t->attrs().has("perm")) return t->attrs().get_ints("perm");
    const auto rank = rank_of(t->input(0));
    if (!rank) return std::nullopt;
    std::vector<int64_t> p(static_cast<size_t>(*rank));
    std::iota(p.rbegin(), p.rend(), 0);
    return p;
  }

  static bool is_identity(const std::vector<int64_t>& p) {
    for (size_t i = 0; i < p.size(); ++i) {
      if (p[i] != static_cast<int64_t>(i)) return false;
    }
    return true;
  }

  bool transpose(ir::Node* node) {
    ir::Value* x = node->input(0);
    const auto p = perm_of(node);
    if (x == nullptr || !p) return false;
    if (is_identity(*p)) return finish(node, x, false);
    if (ir::Node* inner = x->producer(); is_op(inner, "Transpose") && inner->input(0) != nullptr) {
      const auto q = perm_of(inner);
      if (q && q->size() == p->size()) {
        std::vector<int64_t> composed(p->size());
        for (size_t i = 0; i < p->size(); ++i) {
          const int64_t pi = (*p)[i];
          if (pi < 0 || pi >= static_cast<int64_t>(q->size())) return false;
          composed[i] = (*q)[static_cast<size_t>(pi)];
        }
        if (is_identity(composed)) return finish(node, inner->input(0), false);
        kernels::AttributeMap attrs;
        attrs.set("perm", composed);
        ir::Value* out = node->output(0);
        return finish(node, rw.add_node(node, "Transpose", {inner->input(0)}, {out->name()},
                                        {out->type()}, attrs)
                                ->output(0));
      }
    }
    // Only size-1 dims move: the same bytes in the same order, i.e. a Reshape.
    const auto in = static_shape_of(x);
    if (in && in->size() == p->size()) {
      std::vector<int64_t> order;
      Shape out_shape;
      for (int64_t axis : *p) {
        if (axis < 0 || axis >= static_cast<int64_t>(in->size())) return false;
        out_shape.push_back((*in)[static_cast<size_t>(axis)]);
        if ((*in)[static_cast<size_t>(axis)] != 1) order.push_back(axis);
      }
      if (std::is_sorted(order.begin(), order.end())) {
        return finish(node, reshape_to(node, x, out_shape, node->output(0)));
      }
    }
    return false;
  }

  bool reshape_like(ir::Node* node) {
    ir::Value* x = node->input(0);
    if (x == nullptr) return false;
    const auto out_shape = output_shape(node);
    const auto in_shape = static_shape_of(x);
    if (out_shape && in_shape && *out_shape == *in_shape) return finish(node, x, false);
    ir::Node* inner = x->producer();
    if (!is_reshape_like(inner) || inner->input(0) == nullptr) return false;
    ir::Value* source = inner->input(0);
    if (out_shape) {
      const auto source_shape = static_shape_of(source);
      if (source_shape && *source_shape == *out_shape) return finish(node, source, false);
      return finish(node, reshape_to(node, source, *out_shape, node->output(0)));
    }
    if (is_op(node, "Reshape") && is_op(inner, "Reshape") &&
        node->attrs().get_int("allowzero", 0) == 0) {
      const auto target = int_values(node->input(1));
      if (target && std::find(target->begin(), target->end(), 0) == target->end()) {
        ir::Value* out = node->output(0);
        return finish(node, rw.add_node(node, "Reshape", {source, node->input(1)}, {out->name()},
                                        {out->type()})
                                ->output(0));
      }
    }
    const bool squeeze_unsqueeze = is_op(node, "Squeeze") && is_op(inner, "Unsqueeze");
    const bool unsqueeze_squeeze = is_op(node, "Unsqueeze") && is_op(inner, "Squeeze");
    if (squeeze_unsqueeze || unsqueeze_squeeze) {
      const auto rank = rank_of(squeeze_unsqueeze ? x : source);  // the larger rank
      const auto a = axes_of(node, rank);
      const auto b = axes_of(inner, rank);
      if (a && b && *a == *b) return finish(node, source, false);
    }
    return false;
  }

  bool rewrite(ir::Node* node) {
    if (node->output(0) == nullptr) return false;
    if (is_op(node, "Transpose")) return transpose(node);
    if (is_reshape_like(node)) return reshape_like(node);
    return false;
  }
};

int run(PassContext& ctx) {
  GraphRewriter rw(*ctx.model.graph);
  Canceller canceller{rw};
  int total = 0;
  for (int round = 0; round < 8; ++round) {
    int rewrites = rw.sweep([&](ir::Node* node) { return canceller.rewrite(node); });
    total += rewrites;
    if (rewrites == 0) break;
  }
  return total;
}

}  // namespace

PassDef reshape_transpose_cancellation_pass() {
  return {"reshape_transpose_cancellation",
          "composes and cancels Transpose/Reshape/Squeeze/Unsqueeze chains",
          {},
          run};
}

}  // namespace openbpu::passes
