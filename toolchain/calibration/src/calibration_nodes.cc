#include "openbpu/calibration/calibration_nodes.h"

#include <algorithm>
#include <unordered_map>

#include "openbpu/common/error.h"

namespace openbpu::calibration {

namespace {

constexpr std::string_view kSuffix = "_HzCalibration";

}  // namespace

std::string calibration_node_name(const std::string& tensor) {
  return tensor + std::string(kSuffix);
}

bool is_calibration_node(const ir::Node& node) {
  return node.domain() == kHorizonDomain && node.op_type() == kCalibrationOp;
}

std::map<std::string, ir::Node*> insert_calibration_nodes(
    ir::Model& model, const std::vector<CalibrationPoint>& points) {
  ir::Graph& graph = *model.graph;
  if (model.opset_version(kHorizonDomain) < 1) model.set_opset_version(kHorizonDomain, 1);

  std::unordered_map<const ir::Node*, size_t> position;
  for (size_t i = 0; i < graph.nodes().size(); ++i) position[graph.nodes()[i]] = i;

  std::map<std::string, ir::Node*> inserted;
  for (const CalibrationPoint& point : points) {
    ir::Value* value = graph.find_value(point.tensor);
    if (value == nullptr) raise("calibration: the model has no tensor '", point.tensor, "'");
    const std::string node_name = calibration_node_name(point.tensor);
    for (const ir::Node* n : graph.nodes()) {
      if (n->name() == node_name) {
        raise("calibration: tensor '", point.tensor, "' already has a node named '", node_name,
              "'");
      }
    }
    // Readers now (before the calibration node exists), and the first of them in graph order.
    const std::vector<ir::Use> uses = value->uses();
    ir::Node* before = nullptr;
    for (const ir::Use& use : uses) {
      if (before == nullptr || position[use.node] < position[before]) before = use.node;
    }
    const bool graph_output = graph.is_output(value);
    std::string out_name = graph.unique_value_name(point.tensor + "_calibrated");
    if (graph_output) {
      graph.rename_value(value, graph.unique_value_name(point.tensor + "_float"));
      out_name = point.tensor;
    }

    ir::NodeSpec spec;
    spec.op_type = kCalibrationOp;
    spec.domain = kHorizonDomain;
    spec.name = node_name;
    spec.inputs = {value};
    spec.output_names = {out_name};
    const bool weight = point.kind == CalibrationKind::kWeight;
    spec.attrs.set("kind", std::string(weight ? "weight" : "activation"));
    spec.attrs.set("bits", int64_t{8});
    spec.attrs.set("axis", int64_t{point.axis});
    spec.attrs.set("thresholds", std::vector<float>{});
    spec.attrs.set("method", std::string());
    spec.attrs.set("enabled", int64_t{1});
    ir::Node* node = graph.add_node(std::move(spec), before);
    ir::Value* out = node->output(0);
    out->set_type(value->type());

    for (const ir::Use& use : uses) {
      graph.set_node_input(use.node, static_cast<size_t>(use.input_index), out);
    }
    if (graph_output) {
      std::vector<ir::Value*> outputs = graph.outputs();
      for (ir::Value*& o : outputs) {
        if (o == value) o = out;
      }
      graph.set_outputs(std::move(outputs));
    }
    inserted[point.tensor] = node;
  }
  return inserted;
}

std::map<std::string, ir::Node*> calibration_nodes(const ir::Graph& graph) {
  std::map<std::string, ir::Node*> out;
  for (ir::Node* n : graph.nodes()) {
    if (!is_calibration_node(*n)) continue;
    std::string tensor = n->name();
    if (tensor.ends_with(kSuffix)) {
      tensor.resize(tensor.size() - kSuffix.size());
    } else if (n->input(0) != nullptr) {
      tensor = n->input(0)->name();
    }
    out[tensor] = n;
  }
  return out;
}

std::vector<CalibrationPoint> calibration_points_of(const ir::Graph& graph,
                                                    const CalibrationRules& rules) {
  std::map<const ir::Node*, std::string> tensor_of;
  for (const auto& [tensor, node] : calibration_nodes(graph)) tensor_of[node] = tensor;
  std::vector<CalibrationPoint> points;
  for (const ir::Node* n : graph.nodes()) {
    auto it = tensor_of.find(n);
    if (it == tensor_of.end()) continue;
    CalibrationPoint p;
    p.tensor = it->second;
    p.kind = n->attrs().get_string("kind", "activation") == "weight" ? CalibrationKind::kWeight
                                                                     : CalibrationKind::kActivation;
    p.axis =
        static_cast<int>(n->attrs().get_int("axis", p.kind == CalibrationKind::kWeight ? 0 : 1));
    const ir::Value* out = n->outputs().empty() ? nullptr : n->output(0);
    if (out != nullptr) {
      for (const ir::Use& use : out->uses()) {
        const bool quantized = rules.quantized_node && rules.quantized_node(*use.node);
        if (quantized &&
            std::find(p.nodes.begin(), p.nodes.end(), use.node->name()) == p.nodes.end()) {
          p.nodes.push_back(use.node->name());
        }
      }
    }
    const ir::Node* producer = n->input(0) != nullptr ? n->input(0)->producer() : nullptr;
    if (p.nodes.empty() && producer != nullptr) p.nodes.push_back(producer->name());
    points.push_back(std::move(p));
  }
  return points;
}

void set_calibration_thresholds(ir::Node& node, const std::vector<float>& thresholds,
                                const std::string& method) {
  node.attrs().set("thresholds", thresholds);
  node.attrs().set("method", method);
}

void set_calibration_enabled(ir::Node& node, bool enabled) {
  node.attrs().set("enabled", int64_t{enabled ? 1 : 0});
}

std::vector<ir::Node*> set_node_calibration_bits(ir::Graph& graph, const std::string& node_name,
                                                 int bits) {
  if (bits != 8 && bits != 16) raise("calibration bits must be 8 or 16, not ", bits);
  const ir::Node* target = nullptr;
  for (const ir::Node* n : graph.nodes()) {
    if (n->name() == node_name) target = n;
  }
  if (target == nullptr)
    raise("set_node_calibration_bits: the model has no node '", node_name, "'");
  auto is_activation_calibration = [](const ir::Node* n) {
    return n != nullptr && is_calibration_node(*n) &&
           n->attrs().get_string("kind", "activation") == "activation";
  };
  std::vector<ir::Node*> changed;
  auto change = [&](ir::Node* n) {
    for (const ir::Node* c : changed) {
      if (c == n) return;
    }
    n->attrs().set("bits", int64_t{bits});
    changed.push_back(n);
  };
  for (const ir::Value* in : target->inputs()) {
    if (in != nullptr && is_activation_calibration(in->producer())) change(in->producer());
  }
  for (const ir::Value* out : target->outputs()) {
    if (out == nullptr) continue;
    for (const ir::Use& use : out->uses()) {
      if (is_activation_calibration(use.node)) change(use.node);
    }
  }
  return changed;
}

}  // namespace openbpu::calibration
