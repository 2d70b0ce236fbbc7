// fuse_conv_affine: per-channel constant affine maps next to a Conv fold into its weights.
//
// After the Conv (Conv or ConvTranspose): conv → Mul / Add / Sub (conv − c) / Div (conv / c) by
// a per-channel or per-tensor constant becomes the Conv alone with scaled weights and a shifted
// bias (ConvTranspose → Add(bias); MobileOne's Conv → Mul(scale) → Add(shift)). Fires if the
// Conv's result has no other use and the constant does not vary along another axis than the
// channels or enlarge the output.
//
// Before a Conv: x·s + t (Mul/Div then Add/Sub, or one of them, by constants per input
// channel) feeding only a Conv becomes the Conv on x with weights W·s and bias b + Σ W·t. The
// shift part is exact only without padding (padding adds zeros, not t), so with padding only a
// scale folds: x·s + t = (x + t/s)·s leaves Add(x, t/s) before the Conv. The affine map may also
// reach the Conv through the Reshape [.., K] → [R, K, 1, 1] that matmul_to_conv puts before a
// linear layer (LayerNorm's gamma/beta fold into the next linear layer).
//
// Weights and biases must be float32 constants.
#include <algorithm>
#include <cmath>

#include "conv_affine_folding.h"
#include "pass_list.h"

namespace openbpu::passes {

namespace {

bool fuse(GraphRewriter& rw, ir::Node* node) {
  const std::string& op = node->op_type();
  if (!node->domain().empty() || (op != "Mul" && op != "Add" && op != "Sub" && op != "Div") ||
      node->inputs().size() != 2 || node->output(0) == nullptr) {
    return false;
  }
  for (size_t k = 0; k < 2; ++k) {
    ir::Value* y = node->input(k);
    ir::Value* c = node->input(1 - k);
    if (y == nullptr || c == nullptr || !c->is_constant() || y->is_constant()) continue;
    if (k == 1 && (op == "Sub" || op == "Div")) continue;  // c − conv, c / conv
    ir::Node* conv = y->producer();
    if (conv == nullptr || !has_single_use(rw.graph(), y)) continue;
    const auto channels = foldable_conv_channels(*conv);
    if (!channels) continue;
    const int64_t rank = conv->input(1)->constant()->rank();
    auto values = per_channel_values(c, rank, *channels);
    if (!values) continue;
    std::vector<float> scale(values->size(), 1.0f), shift(values->size(), 0.0f);
    for (size_t m = 0; m < values->size(); ++m) {
      const float v = (*values)[m];
      if (op == "Mul") scale[m] = v;
      if (op == "Add") shift[m] = v;
      if (op == "Sub") shift[m] = -v;
      if (op == "Div") {
        if (v == 0 || !std::isfinite(v)) return false;
        scale[m] = 1.0f / v;
      }
    }
    if (!rw.can_replace(node->output(0), y)) return false;
    fold_affine_into_conv(rw, conv, scale, shift);
    rw.replace_value(node->output(0), y, true);
    rw.erase_if_dead(node);
    return true;
  }
  return false;
}

// The affine map y = x·scale + shift in front of a Conv, peeled off its producers.
struct InputAffine {
  ir::Value* x = nullptr;          // the value before the map
  ir::Node* shift_node = nullptr;  // Add/Sub (or nullptr)
  ir::Node* scale_node = nullptr;  // Mul/Div (or nullptr)
  std::vector<float> scale, shift;
};

bool has_padding(const ir::Node& conv) {
  const std::string auto_pad = conv.attrs().get_string("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID") return true;
  for (int64_t p : conv.attrs().get_ints("pads", {})) {
    if (p != 0) return true;
  }
  return false;
}

// `node` = x ∘ c with a per-channel constant c: (x, values of c), else nullopt. `ops` lists the
// accepted ops; for Sub and Div the constant must be the second operand.
std::optional<std::pair<ir::Value*, std::vector<float>>> constant_operand(
    const ir::Node* node, std::initializer_list<std::string_view> ops, int64_t rank,
    int64_t channels, int64_t axis) {
  if (node == nullptr || !node->domain().empty() || node->inputs().size() != 2) return std::nullopt;
  if (std::find(ops.begin(), ops.end(), node->op_type()) == ops.end()) return std::nullopt;
  const bool commutative = node->op_type() == "Add" || node->op_type() == "Mul";
  for (size_t k = 0; k < 2; ++k) {
    ir::Value* x = node->input(k);
    const ir::Value* c = node->input(1 - k);
    if (x == nullptr || c == nullptr || x->is_constant() || !c->is_constant()) continue;
    if (k == 1 && !commutative) continue;
    auto values = per_channel_values(c, rank, channels, axis);
    if (!values) return std::nullopt;
    if (node->op_type() == "Sub") {
      for (float& v : *values) v = -v;
    }
    if (node->op_type() == "Div") {
      for (float& v : *values) {
        if (v == 0 || !std::isfinite(v)) return std::nullopt;
        v = 1.0f / v;
      }
    }
    return std::make_pair(x, std::move(*values));
  }
  return std::nullopt;
}

std::optional<InputAffine> input_affine(const ir::Graph& graph, ir::Value* value, int64_t rank,
                                        int64_t channels, int64_t axis) {
  if (!has_single_use(graph, value)) return std::nullopt;
  InputAffine a;
  a.scale.assign(static_cast<size_t>(channels), 1.0f);
  a.shift.assign(static_cast<size_t>(channels), 0.0f);
  ir::Node* node = value->producer();
  if (auto t = constant_operand(node, {"Add", "Sub"}, rank, channels, axis)) {
    a.shift_node = node;
    a.shift = std::move(t->second);
    a.x = t->first;
    node = has_single_use(graph, a.x) ? a.x->producer() : nullptr;
  }
  if (auto s = constant_operand(node, {"Mul", "Div"}, rank, channels, axis)) {
    a.scale_node = node;
    a.scale = std::move(s->second);
    a.x = s->first;
  }
  if (a.x == nullptr) return std::nullopt;
  return a;
}

// x·s + t → Conv: folds into a padding-free Conv, or (with padding) moves only the scale.
bool fuse_input(GraphRewriter& rw, ir::Node* conv) {
  if (!is_op(conv, "Conv") || !foldable_conv_channels(*conv) || conv->input(0) == nullptr) {
    return false;
  }
  const Tensor& w = *conv->input(1)->constant();
  const int64_t group = conv->attrs().get_int("group", 1);
  const int64_t in_channels = w.dim(1) * group;
  ir::Graph& graph = rw.graph();
  ir::Value* v = conv->input(0);
  if (!has_single_use(graph, v)) return false;
  // Directly, or through a Reshape [.., K] → [R, K, 1, ...] (rows of a linear layer).
  ir::Node* reshape = nullptr;
  ir::Value* mapped = v;
  int64_t rank = w.rank(), axis = 1;
  if (ir::Node* r = v->producer(); is_op(r, "Reshape") && r->input(0) != nullptr) {
    const auto in = static_shape_of(r->input(0));
    const auto out = static_shape_of(v);
    bool rows = in && out && out->size() == static_cast<size_t>(w.rank()) && !in->empty() &&
                in->back() == in_channels && (*out)[1] == in_channels;
    for (size_t i = 2; rows && i < out->size(); ++i) rows = (*out)[i] == 1;
    if (rows) {
      reshape = r;
      mapped = r->input(0);
      rank = static_cast<int64_t>(in->size());
      axis = rank - 1;
    }
  }
  auto a = input_affine(graph, mapped, rank, in_channels, axis);
  if (!a) return false;
  const bool shifts = std::any_of(a->shift.begin(), a->shift.end(), [](float t) { return t != 0; });
  const bool padded = has_padding(*conv);
  if (shifts && padded) {
    // Only the scale moves: (x·s + t) = (x + t/s)·s.
    if (a->scale_node == nullptr || a->shift_node == nullptr) return false;
    for (size_t c = 0; c < a->scale.size(); ++c) {
      if (a->scale[c] == 0 || !std::isfinite(a->scale[c])) return false;
      a->shift[c] /= a->scale[c];
    }
  }

  const int64_t out_channels = w.dim(0);
  const int64_t per_group_out = out_channels / group;
  const int64_t kernel = w.element_count() / (w.dim(0) * w.dim(1));
  const auto src = w.values<float>();
  std::vector<float> weights(src.begin(), src.end());
  std::vector<float> bias(static_cast<size_t>(out_channels), 0.0f);
  if (const auto b = float32_values(conv->input(2))) bias = *b;
  for (int64_t m = 0; m < out_channels; ++m) {
    double added = 0;
    for (int64_t cl = 0; cl < w.dim(1); ++cl) {
      const size_t c = static_cast<size_t>((m / per_group_out) * w.dim(1) + cl);
      for (int64_t k = 0; k < kernel; ++k) {
        const size_t i = static_cast<size_t>((m * w.dim(1) + cl) * kernel + k);
        if (!padded) added += static_cast<double>(src[i]) * a->shift[c];
        weights[i] = src[i] * a->scale[c];
      }
    }
    bias[static_cast<size_t>(m)] += static_cast<float>(added);
  }
  const std::string base = conv->output(0)->name();
  graph.set_node_input(conv, 1,
                       rw.add_constant(base + ".weight", float32_tensor(w.shape(), weights)));
  ir::Value* b = rw.add_constant(base + ".bias", float32_tensor({out_channels}, bias));
  if (conv->inputs().size() > 2) {
    graph.set_node_input(conv, 2, b);
  } else {
    graph.add_node_input(conv, b);
  }
  ir::Node* old_head = mapped->producer();
  ir::Value* fed = a->x;
  if (shifts && padded) {
    // Keep the Add, now of x and t/s per channel (shape [C, 1, ...] up to the last axis).
    ir::Node* add = a->shift_node;
    const size_t x_index = add->input(0) != nullptr && add->input(0)->is_constant() ? 1 : 0;
    std::vector<float> moved = a->shift;
    if (add->op_type() == "Sub") {
      for (float& t : moved) t = -t;
    }
    Shape moved_shape(static_cast<size_t>(rank - axis), 1);
    moved_shape[0] = in_channels;
    graph.set_node_input(add, 1 - x_index,
                         rw.add_constant(base + ".shift", float32_tensor(moved_shape, moved)));
    graph.set_node_input(add, x_index, a->x);
    fed = add->output(0);
    old_head = nullptr;
  }
  if (reshape != nullptr) {
    graph.set_node_input(reshape, 0, fed);
  } else {
    graph.set_node_input(conv, 0, fed);
  }
  if (old_head != nullptr) rw.erase_if_dead(old_head);
  if (a->scale_node != nullptr) rw.erase_if_dead(a->scale_node);
  return true;
}

int run(PassContext& ctx) {
  GraphRewriter rw(*ctx.model.graph);
  int total = 0;
  for (int round = 0; round < 8; ++round) {
    int rewrites = rw.sweep([&](ir::Node* node) { return fuse(rw, node); });
    rewrites += rw.sweep([&](ir::Node* node) { return fuse_input(rw, node); });
    total += rewrites;
    if (rewrites == 0) break;
  }
  return total;
}

}  // namespace

PassDef fuse_conv_affine_pass() {
  return {"fuse_conv_affine",
          "folds per-channel constant Mul/Add/Sub/Div before or after a Conv into its weights",
          {},
          run};
}

}  // namespace openbpu::passes
