#include "openbpu/calibration/bias_correction.h"

#include <cmath>

#include "openbpu/calibration/calibration_nodes.h"
#include "openbpu/common/error.h"
#include "openbpu/simulator/integer_arithmetic.h"

namespace openbpu::calibration {

using kernels::DataType;

namespace {

// W - Q(W) of a weight [M, C/group, k...] quantized per output channel (axis 0).
std::vector<double> weight_error(const Tensor& w, const std::vector<float>& thresholds, int bits) {
  const int64_t m = w.dim(0);
  const int64_t per_channel = w.element_count() / m;
  std::vector<double> error(static_cast<size_t>(w.element_count()));
  const float* p = w.data<float>();
  for (int64_t o = 0; o < m; ++o) {
    const float t = thresholds.size() == 1 ? thresholds[0] : thresholds[static_cast<size_t>(o)];
    const float s = simulator::symmetric_scale(t, bits);
    for (int64_t i = 0; i < per_channel; ++i) {
      const float v = p[o * per_channel + i];
      const int64_t q =
          bits == 16 ? simulator::quantize_int16(v, s) : simulator::quantize_int8(v, s);
      error[static_cast<size_t>(o * per_channel + i)] =
          static_cast<double>(v) - static_cast<double>(simulator::dequantize(q, s));
    }
  }
  return error;
}

}  // namespace

BiasCorrectionSummary correct_conv_biases(
    ir::Model& calibrated_model, const std::map<std::string, TensorStatistics>& statistics) {
  ir::Graph& graph = *calibrated_model.graph;
  std::map<const ir::Node*, std::string> tensor_of;
  for (const auto& [tensor, node] : calibration_nodes(graph)) tensor_of[node] = tensor;

  BiasCorrectionSummary summary;
  const std::vector<ir::Node*> nodes = graph.nodes();
  for (ir::Node* conv : nodes) {
    if (!conv->domain().empty() || conv->op_type() != "Conv") continue;
    const ir::Node* wcal = conv->input(1) ? conv->input(1)->producer() : nullptr;
    const ir::Node* xcal = conv->input(0) ? conv->input(0)->producer() : nullptr;
    if (wcal == nullptr || xcal == nullptr || !is_calibration_node(*wcal) ||
        !is_calibration_node(*xcal) || wcal->attrs().get_string("kind", "") != "weight" ||
        wcal->attrs().get_int("enabled", 1) == 0) {
      continue;
    }
    const ir::Value* wv = wcal->input(0);
    if (wv == nullptr || !wv->is_constant() || wv->constant()->dtype() != DataType::kFloat32 ||
        wv->constant()->rank() < 2) {
      continue;
    }
    const std::vector<float> thresholds = wcal->attrs().get_floats("thresholds", {});
    const Tensor& w = *wv->constant();
    const int64_t m = w.dim(0);
    if (thresholds.empty() ||
        (thresholds.size() != 1 && static_cast<int64_t>(thresholds.size()) != m)) {
      continue;
    }
    auto stats = statistics.find(tensor_of.count(xcal) ? tensor_of.at(xcal) : "");
    if (stats == statistics.end()) continue;
    const std::vector<double> mean = stats->second.channel_means();
    const int64_t group = conv->attrs().get_int("group", 1);
    const int64_t c_per_group = w.dim(1);
    if (group <= 0 || m % group != 0 || static_cast<int64_t>(mean.size()) != c_per_group * group) {
      continue;
    }
    const std::vector<double> error =
        weight_error(w, thresholds, static_cast<int>(wcal->attrs().get_int("bits", 8)));
    const int64_t kernel = w.element_count() / (m * c_per_group);
    const ir::Value* bias = conv->input(2);
    if (bias != nullptr &&
        (!bias->is_constant() || bias->constant()->dtype() != DataType::kFloat32 ||
         bias->constant()->element_count() != m)) {
      continue;
    }
    Tensor corrected(DataType::kFloat32, {m});
    float* b = corrected.data<float>();
    for (int64_t o = 0; o < m; ++o) {
      const int64_t first_channel = (o / (m / group)) * c_per_group;
      double shift = 0;
      for (int64_t c = 0; c < c_per_group; ++c) {
        double e = 0;
        for (int64_t k = 0; k < kernel; ++k)
          e += error[static_cast<size_t>((o * c_per_group + c) * kernel + k)];
        shift += e * mean[static_cast<size_t>(first_channel + c)];
      }
      const double old = bias ? bias->constant()->data<float>()[o] : 0.0;
      b[o] = static_cast<float>(old + shift);
      const double relative = std::fabs(shift) / (std::fabs(old) + 1.0);
      if (relative > summary.largest) {
        summary.largest = relative;
        summary.largest_node = conv->name();
      }
    }
    ir::Value* value =
        graph.add_constant(graph.unique_value_name(conv->name() + "_corrected_bias"), corrected);
    if (conv->inputs().size() > 2) {
      graph.set_node_input(conv, 2, value);
    } else {
      graph.add_node_input(conv, value);
    }
    ++summary.corrected;
  }
  graph.remove_unused_values();
  return summary;
}

}  // namespace openbpu::calibration
