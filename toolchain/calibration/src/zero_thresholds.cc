// Thresholds of 0 (zero_thresholds.h).
#include "openbpu/calibration/zero_thresholds.h"

#include <algorithm>
#include <deque>
#include <set>

#include "openbpu/calibration/calibration_nodes.h"
#include "openbpu/common/error.h"

namespace openbpu::calibration {

using base::str_cat;

namespace {

float largest(const std::vector<float>& thresholds) {
  float m = 0;
  for (float t : thresholds) m = std::max(m, t);
  return m;
}

// The nearest HzCalibration node upstream of `node`'s input with a threshold above 0 (breadth
// first over producers), or null.
const ir::Node* calibrated_upstream(const ir::Node& node) {
  std::deque<const ir::Node*> queue;
  std::set<const ir::Node*> seen;
  auto push_producers = [&](const ir::Node& n, size_t first_input) {
    for (size_t i = first_input; i < n.inputs().size(); ++i) {
      const ir::Value* v = n.input(i);
      if (v != nullptr && v->producer() != nullptr && seen.insert(v->producer()).second) queue.push_back(v->producer());
    }
  };
  push_producers(node, 0);
  while (!queue.empty()) {
    const ir::Node* n = queue.front();
    queue.pop_front();
    if (n->domain() == kHorizonDomain && n->op_type() == kCalibrationOp &&
        largest(n->attrs().get_floats("thresholds", {})) > 0) {
      return n;
    }
    push_producers(*n, 0);
  }
  return nullptr;
}

}  // namespace

std::vector<std::string> replace_zero_thresholds(const std::map<std::string, ir::Node*>& nodes,
                                                 const std::map<std::string, TensorStatistics>& statistics,
                                                 size_t samples) {
  std::vector<std::string> warnings;
  for (const auto& [tensor, node] : nodes) {
    const std::vector<float> thresholds = node->attrs().get_floats("thresholds", {});
    if (thresholds.empty() || largest(thresholds) > 0) continue;
    auto st = statistics.find(tensor);
    const float abs_max = st == statistics.end() ? 0.0f : st->second.abs_max;
    if (abs_max > 0) {
      set_calibration_thresholds(*node, {abs_max}, "max");
      continue;
    }
    const ir::Node* producer = node->input(0) != nullptr ? node->input(0)->producer() : nullptr;
    const ir::Node* upstream = producer != nullptr ? calibrated_upstream(*producer) : nullptr;
    const float taken = upstream != nullptr ? largest(upstream->attrs().get_floats("thresholds", {})) : 1.0f;
    set_calibration_thresholds(*node, {taken}, "zero");
    warnings.push_back(str_cat(
        "tensor '", tensor, "' is 0 on all ", samples, " calibration sample(s), so its threshold would be 0 (no scale); it takes ",
        upstream != nullptr ? str_cat("the threshold of '", upstream->input(0)->name(), "' upstream, ", taken)
                            : std::string("1.0 (no calibrated tensor upstream)"),
        ". Calibrate with data that exercises it if it should not be 0"));
  }
  return warnings;
}

}  // namespace openbpu::calibration
