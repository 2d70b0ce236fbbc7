#include "openbpu/passes/activation_patterns.h"

#include <cfloat>
#include <cmath>

#include "graph_rewrite.h"

namespace openbpu::passes {

bool ClipBounds::is_relu() const {
  return min == 0 && std::isinf(max) && max > 0;
}
bool ClipBounds::is_relu6() const {
  return min == 0 && max == 6;
}

std::optional<ClipBounds> clip_bounds(const ir::Model& model, const ir::Node& clip) {
  if (!is_op(&clip, "Clip")) return std::nullopt;
  ClipBounds bounds;
  auto widen = [](float v) {
    if (v >= FLT_MAX) return std::numeric_limits<float>::infinity();
    if (v <= -FLT_MAX) return -std::numeric_limits<float>::infinity();
    return v;
  };
  if (onnx_opset(model) < 11) {
    bounds.min = widen(clip.attrs().get_float("min", -FLT_MAX));
    bounds.max = widen(clip.attrs().get_float("max", FLT_MAX));
    return bounds;
  }
  for (size_t i = 1; i <= 2; ++i) {
    const ir::Value* v = clip.input(i);
    if (v == nullptr) continue;
    const auto c = uniform_constant(v);
    if (!c || v->constant()->element_count() != 1) return std::nullopt;
    (i == 1 ? bounds.min : bounds.max) = widen(static_cast<float>(*c));
  }
  return bounds;
}

ir::Value* match_swish(const ir::Node& mul) {
  if (!is_op(&mul, "Mul") || mul.inputs().size() != 2) return nullptr;
  for (size_t k = 0; k < 2; ++k) {
    ir::Value* x = mul.input(k);
    const ir::Node* sigmoid = producer_if(&mul, 1 - k, "Sigmoid");
    if (x != nullptr && sigmoid != nullptr && sigmoid->input(0) == x) return x;
  }
  return nullptr;
}

bool is_hard_swish_sigmoid(const ir::Node& node) {
  return is_op(&node, "HardSigmoid") &&
         std::fabs(node.attrs().get_float("alpha", 0.2f) - 1.0f / 6.0f) < 1e-6f &&
         node.attrs().get_float("beta", 0.5f) == 0.5f;
}

ir::Value* match_hard_swish(const ir::Node& node) {
  if (is_op(&node, "HardSwish")) return node.input(0);
  if (!is_op(&node, "Mul") || node.inputs().size() != 2) return nullptr;
  for (size_t k = 0; k < 2; ++k) {
    ir::Value* x = node.input(k);
    const ir::Node* hs = producer_if(&node, 1 - k, "HardSigmoid");
    if (x != nullptr && hs != nullptr && hs->input(0) == x && is_hard_swish_sigmoid(*hs)) return x;
  }
  return nullptr;
}

}  // namespace openbpu::passes
