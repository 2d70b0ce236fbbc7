// qdq_removal: turns a QDQ model (QuantizeLinear/DequantizeLinear pairs, as QAT exporters and
// ONNX Runtime's static quantization write them) back into a float model, for
// calibration_type 'load', which reads the thresholds from the pairs first
// (calibration/qdq_thresholds.h).
//
// - An activation pair x → QuantizeLinear → DequantizeLinear → y: y's readers read x (x keeps
//   its name; a graph output y passes its name to x). A pair whose integer range stands for
//   values of one sign only — uint8 with zero point 0 is [0, 255·s] — also clamps, and
//   exporters rely on that: ONNX Runtime drops a Relu or Clip(0, 6) in front of such a pair.
//   There the pair becomes Clip((lo − z)·s, (hi − z)·s) (output named y), so the float model
//   computes what the QDQ model does.
// - A DequantizeLinear of constants (int8 weights, int32 biases), or a pair on a constant
//   float weight: evaluated with the kernel library into a float constant named as y was, so
//   weights keep the values the QDQ model computes with (on the int8 grid).
// A QuantizeLinear that no DequantizeLinear reads stays (the model then has integer tensors the
// float pipeline cannot take, and says so later), as does anything producing a graph input's
// replacement that cannot take a graph output's name.
#include <algorithm>

#include "constant_evaluation.h"
#include "graph_rewrite.h"
#include "pass_list.h"

namespace openbpu::passes {

namespace {

bool all_constant(const ir::Node& node) {
  for (const ir::Value* in : node.inputs()) {
    if (in != nullptr && !in->is_constant()) return false;
  }
  return true;
}

// The node's single output evaluated from its constant inputs, or nullopt.
std::optional<Tensor> evaluate_constant(const ir::Model& model, const ir::Node& node,
                                        const std::vector<const Tensor*>& inputs) {
  auto outputs = evaluate_node(model, node, inputs);
  if (!outputs || outputs->empty()) return std::nullopt;
  return std::move(outputs->front());
}

std::vector<const Tensor*> constant_inputs(const ir::Node& node) {
  std::vector<const Tensor*> inputs;
  for (const ir::Value* in : node.inputs()) inputs.push_back(in ? in->constant() : nullptr);
  return inputs;
}

// The values a QuantizeLinear's integers stand for, [(lo − z)·s, (hi − z)·s], if its scale and
// zero point are constant scalars (a missing zero point is uint8 0).
std::optional<std::pair<float, float>> represented_range(const ir::Node& q) {
  const ir::Value* scale = q.input(1);
  const ir::Value* zero = q.input(2);
  if (scale == nullptr || !scale->is_constant() || scale->constant()->element_count() != 1) {
    return std::nullopt;
  }
  if (zero != nullptr && (!zero->is_constant() || zero->constant()->element_count() != 1)) {
    return std::nullopt;
  }
  const DataType type = zero ? zero->constant()->dtype() : DataType::kUint8;
  double lo = 0, hi = 0;
  switch (type) {
    case DataType::kUint8: hi = 255; break;
    case DataType::kInt8:
      lo = -128;
      hi = 127;
      break;
    case DataType::kUint16: hi = 65535; break;
    case DataType::kInt16:
      lo = -32768;
      hi = 32767;
      break;
    default: return std::nullopt;
  }
  const double s = scale->constant()->float_at(0);
  const double z = zero ? zero->constant()->float_at(0) : 0.0;
  return std::pair<float, float>{static_cast<float>((lo - z) * s),
                                 static_cast<float>((hi - z) * s)};
}

// Clip(x, lower, upper) before `before`, its output named after `base`.
ir::Value* add_clip(const ir::Model& model, GraphRewriter& rewriter, ir::Node* before, ir::Value* x,
                    const std::string& base, float lower, float upper) {
  if (model.opset_version("") >= 11) {
    ir::Value* lo = rewriter.add_constant(base + "_min", float32_tensor({}, {lower}));
    ir::Value* hi = rewriter.add_constant(base + "_max", float32_tensor({}, {upper}));
    return rewriter.add_node(before, "Clip", {x, lo, hi}, {base}, {x->type()})->output(0);
  }
  kernels::AttributeMap attrs;
  attrs.set("min", lower);
  attrs.set("max", upper);
  return rewriter.add_node(before, "Clip", {x}, {base}, {x->type()}, std::move(attrs))->output(0);
}

int run(PassContext& ctx) {
  ir::Graph& graph = *ctx.model.graph;
  GraphRewriter rewriter(graph);
  int rewrites = 0;
  for (ir::Node* dq : rewriter.snapshot()) {
    if (rewriter.was_removed(dq) || !is_op(dq, "DequantizeLinear")) continue;
    ir::Value* y = dq->output(0);
    if (y == nullptr) continue;
    ir::Node* q = producer_if(dq, 0, "QuantizeLinear");
    std::optional<Tensor> folded;
    if (all_constant(*dq)) {
      folded = evaluate_constant(ctx.model, *dq, constant_inputs(*dq));
    } else if (q != nullptr && all_constant(*q) &&
               std::all_of(dq->inputs().begin() + 1, dq->inputs().end(),
                           [](const ir::Value* v) { return v == nullptr || v->is_constant(); })) {
      // A pair on a constant float weight: Q then DQ on constants.
      const std::optional<Tensor> quantized = evaluate_constant(ctx.model, *q, constant_inputs(*q));
      if (quantized) {
        std::vector<const Tensor*> inputs = constant_inputs(*dq);
        inputs[0] = &*quantized;
        folded = evaluate_constant(ctx.model, *dq, inputs);
      }
    }
    if (folded) {
      if (graph.is_output(y)) continue;  // the interface keeps its producer
      const std::string node_name = dq->name();
      const std::string base = y->name();
      ir::Value* constant = rewriter.add_constant(base, std::move(*folded));
      if (!rewriter.replace_value(y, constant, true)) continue;
      rewriter.erase_if_dead(dq);
      ++rewrites;
      if (ctx.log) ctx.log("folded " + node_name + " into constant " + constant->name());
      continue;
    }
    if (q == nullptr || q->input(0) == nullptr) continue;
    ir::Value* x = q->input(0);
    const auto range = represented_range(*q);
    if (range && (range->first >= 0 || range->second <= 0)) {
      ir::Value* clipped =
          add_clip(ctx.model, rewriter, dq, x, y->name() + "_clip", range->first, range->second);
      if (!rewriter.replace_value(y, clipped, true)) {
        rewriter.erase_if_dead(clipped->producer());
        continue;
      }
    } else if (!rewriter.replace_value(y, x, false)) {
      continue;
    }
    rewriter.erase_if_dead(dq);
    ++rewrites;
  }
  return rewrites;
}

}  // namespace

PassDef qdq_removal_pass() {
  return {"qdq_removal",
          "removes QuantizeLinear/DequantizeLinear pairs and folds dequantized constants "
          "(calibration_type load)",
          {},
          run};
}

}  // namespace openbpu::passes
