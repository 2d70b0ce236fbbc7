// fuse_conv_affine: a Conv or ConvTranspose followed by a per-channel or per-tensor constant
// Mul, Add, Sub (conv − c) or Div (conv / c) becomes the Conv alone with scaled weights and a
// shifted bias (e.g. ConvTranspose → Add(bias), MobileOne's Conv → Mul(scale) → Add(shift)).
// Fires only if the Conv's result has no other use, its weight and bias are float32 constants,
// and the constant does not vary along another axis than the channels or enlarge the output.
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

int run(PassContext& ctx) {
  GraphRewriter rw(*ctx.model.graph);
  int total = 0;
  for (int round = 0; round < 8; ++round) {
    int rewrites = 0;
    for (ir::Node* node : rw.snapshot()) {
      if (!rw.was_removed(node) && fuse(rw, node)) ++rewrites;
    }
    total += rewrites;
    if (rewrites == 0) break;
  }
  return total;
}

}  // namespace

PassDef fuse_conv_affine_pass() {
  return {"fuse_conv_affine",
          "folds a per-channel constant Mul/Add/Sub/Div after a Conv into its weights and bias",
          {},
          run};
}

}  // namespace openbpu::passes
