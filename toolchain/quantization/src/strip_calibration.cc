#include "openbpu/common/error.h"
#include "openbpu/quantization/quantizer.h"

namespace openbpu::quantization {

std::map<std::string, TensorCalibration> strip_calibration(ir::Model& model) {
  ir::Graph& g = *model.graph;
  std::map<std::string, TensorCalibration> out;
  std::vector<ir::Node*> nodes;
  for (ir::Node* n : g.nodes()) {
    if (n->domain() == "horizon" && n->op_type() == "HzCalibration") nodes.push_back(n);
  }
  for (ir::Node* n : nodes) {
    ir::Value* in = n->input(0);
    ir::Value* calibrated = n->output(0);
    if (in == nullptr || calibrated == nullptr) raise("HzCalibration node '", n->name(), "' is malformed");
    TensorCalibration c;
    const auto& a = n->attrs();
    c.thresholds = a.get_floats("thresholds", {});
    c.bits = static_cast<int>(a.get_int("bits", 8));
    c.axis = static_cast<int>(a.get_int("axis", 1));
    c.weight = a.get_string("kind", "activation") == "weight";
    c.enabled = a.get_int("enabled", 1) != 0;
    c.method = a.get_string("method", "");
    if (c.bits != 8 && c.bits != 16) {
      raise("HzCalibration node '", n->name(), "': bits must be 8 or 16, got ", c.bits);
    }
    const bool output = g.is_output(calibrated);
    const std::string output_name = calibrated->name();
    g.replace_all_uses(calibrated, in);
    g.remove_node(n);
    if (output) g.rename_value(in, output_name);
    out[in->name()] = std::move(c);
  }
  return out;
}

}  // namespace openbpu::quantization
