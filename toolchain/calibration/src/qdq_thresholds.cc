#include "openbpu/calibration/qdq_thresholds.h"

#include <algorithm>
#include <cmath>

#include "openbpu/common/error.h"
#include "openbpu/executor/float_executor.h"

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

namespace {

struct Fingerprint {
  int64_t count = 0;
  double abs_max = 0;
  double abs_mean = 0;
};

// Fingerprints of the float tensors named in `names` that `model` computes on `feeds`.
std::map<std::string, Fingerprint> fingerprints(const ir::Model& model,
                                                const std::map<std::string, kernels::Tensor>& feeds,
                                                const std::map<std::string, LoadedThreshold>& names,
                                                int threads) {
  std::map<std::string, Fingerprint> out;
  auto record = [&](const std::string& name, const kernels::Tensor& t) {
    if (!names.count(name) || !kernels::dtype_is_float(t.dtype())) return;
    Fingerprint f;
    f.count = t.element_count();
    double sum = 0;
    for (int64_t i = 0; i < f.count; ++i) {
      const double a = std::fabs(t.float_at(i));
      f.abs_max = std::max(f.abs_max, a);
      sum += a;
    }
    f.abs_mean = f.count ? sum / static_cast<double>(f.count) : 0.0;
    out[name] = f;
  };
  for (const auto& [name, t] : feeds) record(name, t);
  executor::FloatExecutor exec(model, {threads});
  executor::RunOptions options;
  options.observer = [&](const ir::Node&, const ir::Value& v, const kernels::Tensor& t) {
    record(v.name(), t);
  };
  exec.run(feeds, options);
  return out;
}

}  // namespace

std::vector<std::string> drop_moved_thresholds(const ir::Model& before, const ir::Model& after,
                                               const std::map<std::string, kernels::Tensor>& feeds,
                                               std::map<std::string, LoadedThreshold>& loaded,
                                               int threads) {
  const auto a = fingerprints(before, feeds, loaded, threads);
  const auto b = fingerprints(after, feeds, loaded, threads);
  std::vector<std::string> dropped;
  for (const auto& [name, fa] : a) {
    auto it = b.find(name);
    if (it == b.end()) continue;
    const Fingerprint& fb = it->second;
    const double tolerance = 1e-3 * std::max(fa.abs_max, 1e-12);
    if (fa.count != fb.count || std::fabs(fa.abs_max - fb.abs_max) > tolerance ||
        std::fabs(fa.abs_mean - fb.abs_mean) > tolerance) {
      dropped.push_back(name);
      loaded.erase(name);
    }
  }
  return dropped;
}

}  // namespace openbpu::calibration
