#include "openbpu/calibration/qdq_thresholds.h"

#include <algorithm>
#include <cmath>

#include "openbpu/common/error.h"

namespace openbpu::calibration {

using kernels::DataType;

namespace {

struct IntegerRange {
  double lo, hi;
  int bits;
};

IntegerRange range_of(DataType t) {
  switch (t) {
    case DataType::kUint8: return {0, 255, 8};
    case DataType::kInt16: return {-32768, 32767, 16};
    case DataType::kUint16: return {0, 65535, 16};
    default: return {-128, 127, 8};
  }
}

}  // namespace

std::map<std::string, LoadedThreshold> load_qdq_thresholds(const ir::Model& qdq_model) {
  std::map<std::string, LoadedThreshold> out;
  for (const ir::Node* node : qdq_model.graph->nodes()) {
    if (!node->domain().empty() || node->op_type() != "QuantizeLinear") continue;
    const ir::Value* x = node->input(0);
    const ir::Value* scale = node->input(1);
    const ir::Value* zero = node->input(2);
    if (x == nullptr || scale == nullptr || !scale->is_constant()) continue;
    const kernels::Tensor& s = *scale->constant();
    // The integer type: the zero point's type, else the output's (uint8 by ONNX's default).
    DataType qtype = DataType::kUint8;
    if (zero != nullptr && zero->is_constant()) {
      qtype = zero->constant()->dtype();
    } else if (node->output(0) != nullptr &&
               node->output(0)->type().dtype != DataType::kUndefined) {
      qtype = node->output(0)->type().dtype;
    }
    const IntegerRange range = range_of(qtype);
    LoadedThreshold t;
    t.bits = range.bits;
    const int64_t n = s.element_count();
    if (n > 1) {
      int64_t axis = node->attrs().get_int("axis", 1);
      const int64_t rank = x->type().has_rank() ? static_cast<int64_t>(x->type().shape->size()) : 0;
      if (axis < 0) axis += rank;
      t.axis = static_cast<int>(axis);
    }
    for (int64_t c = 0; c < n; ++c) {
      const double z =
          (zero != nullptr && zero->is_constant())
              ? zero->constant()->float_at(zero->constant()->element_count() == n ? c : 0)
              : 0.0;
      const double steps = std::max(z - range.lo, range.hi - z);
      // Symmetric signed ranges use -(2^(b-1) - 1) .. 2^(b-1) - 1.
      const double symmetric_steps = (range.lo < 0 && z == 0) ? range.hi : steps;
      t.values.push_back(static_cast<float>(symmetric_steps * std::fabs(s.float_at(c))));
    }
    out[x->name()] = t;
    if (node->output(0) == nullptr) continue;
    for (const ir::Use& use : node->output(0)->uses()) {
      if (use.node->domain().empty() && use.node->op_type() == "DequantizeLinear" &&
          use.node->output(0) != nullptr) {
        out[use.node->output(0)->name()] = t;
      }
    }
  }
  return out;
}

}  // namespace openbpu::calibration
