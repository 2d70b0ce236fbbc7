// The operator registry: the rows of the families (ops/*.cc), their lookups, the support check
// and the generated docs/supported_ops.md.
#include <algorithm>
#include <set>
#include <sstream>

#include "openbpu/bpu_support/op_def.h"
#include "openbpu/common/error.h"
#include "ops/families.h"

namespace openbpu::bpu_support {

namespace {

std::vector<OpDef> build_registry() {
  std::vector<OpDef> registry;
  ops::add_convolutions(registry);
  ops::add_elementwise(registry);
  ops::add_reductions(registry);
  ops::add_axis_functions(registry);
  ops::add_resizes(registry);
  ops::add_table_functions(registry);
  ops::add_data_movement(registry);
  return registry;
}

}  // namespace

std::vector<March> every_march() {
  std::vector<March> marches;
  for (const MarchSpec& m : simulator::all_marches()) marches.push_back(m.march);
  return marches;
}

std::span<const OpDef> op_defs() {
  static const std::vector<OpDef> registry = build_registry();
  return registry;
}

const OpDef* find_op_def(std::string_view op_type) {
  for (const OpDef& d : op_defs()) {
    if (d.op_type == op_type) return &d;
  }
  return nullptr;
}

const OpDef* find_op_def(const ir::Node& node) {
  if (!node.domain().empty() && !(node.domain() == "horizon" && node.op_type() == "HzPreprocess")) return nullptr;
  return find_op_def(node.op_type());
}

const OpDef* find_op_def_by_bpu_type(std::string_view bpu_type) {
  for (const OpDef& d : op_defs()) {
    if (d.bpu_type == bpu_type) return &d;
  }
  return nullptr;
}

bool is_bpu_horizon_node(const ir::Node& node) {
  if (node.domain() != "horizon") return false;
  return node.op_type() == kRequantizeType || find_op_def_by_bpu_type(node.op_type()) != nullptr;
}

bool accumulates(const OpDef& def, const ir::Node& node) {
  const QuantizeAs q = def.quantize;
  if (q == QuantizeAs::kConv || q == QuantizeAs::kGemm || q == QuantizeAs::kPreprocess) return true;
  const ir::Value* weight = node.input(1);
  return def.quantize == QuantizeAs::kMatMul && weight != nullptr && weight->is_constant();
}

bool is_fusion_anchor(const OpDef& def, const ir::Node& node) {
  return accumulates(def, node) || def.quantize == QuantizeAs::kElementwise;
}

bool cpu_by_default(const OpDef& def, const MarchSpec& march) {
  return def.cpu_by_default && !(def.bpu_by_default_on != nullptr && march.*def.bpu_by_default_on);
}

std::string SupportVerdict::reason() const {
  std::string out;
  for (const std::string& r : broken_rules) out += (out.empty() ? "" : "; ") + r;
  return out;
}

namespace {

// How many nodes of the node's graphs (at any depth) the BPU could run, and their types.
void count_bpu_capable(const ir::Node& node, const MarchSpec& march, int& total, std::set<std::string>& capable) {
  for (const ir::GraphAttribute& a : node.graph_attrs()) {
    for (const auto& g : a.graphs) {
      for (const ir::Node* n : g->nodes()) {
        ++total;
        if (n->graph_attrs().empty() && check_node(*n, march).on_bpu_possible) capable.insert(n->op_type());
        count_bpu_capable(*n, march, total, capable);
      }
    }
  }
}

}  // namespace

SupportVerdict check_node(const ir::Node& node, const MarchSpec& march) {
  SupportVerdict v;
  if (!node.graph_attrs().empty()) {  // what control_flow_flattening left: If / Loop on the CPU
    int total = 0;
    std::set<std::string> capable;
    count_bpu_capable(node, march, total, capable);
    std::string types;
    for (const std::string& t : capable) types += (types.empty() ? "" : ", ") + t;
    v.broken_rules.push_back(str_cat("control flow runs on the CPU with its graphs (", total, " nodes",
                                     capable.empty() ? std::string() : "; the BPU could run their " + types, ")"));
    return v;
  }
  v.support = find_op_def(node);
  if (v.support == nullptr) {
    const std::string domain = node.domain().empty() ? "" : node.domain() + "::";
    v.broken_rules.push_back("operator " + domain + node.op_type() + " has no BPU implementation");
    return v;
  }
  const auto& marches = v.support->marches;
  if (std::find(marches.begin(), marches.end(), march.march) == marches.end()) {
    v.broken_rules.push_back("operator " + node.op_type() + " has no BPU implementation on " +
                             std::string(march.name));
    return v;
  }
  // The BPU computes fixed shapes; a tensor whose shape depends on the data (behind an If whose
  // branches differ, a Loop's stacked outputs) keeps its readers and writer on the CPU. (A value
  // shape inference knows nothing about is left to the rules.)
  for (const auto* list : {&node.inputs(), &node.outputs()}) {
    for (const ir::Value* t : *list) {
      const ir::TensorType& type = t == nullptr ? ir::TensorType{} : t->type();
      const bool known = type.has_rank() || type.dtype != kernels::DataType::kUndefined;
      if (known && !t->is_constant() && !type.static_shape()) {
        v.broken_rules.push_back(str_cat("the shape of '", t->name(), "' (", t->type().to_string(), ") is not static"));
        v.on_bpu_possible = false;
        return v;
      }
    }
  }
  for (const Constraint& c : v.support->constraints) {
    if (!c.holds(node, march)) v.broken_rules.push_back(c.rule(march));
  }
  v.on_bpu_possible = v.broken_rules.empty();
  return v;
}

std::string supported_ops_markdown() {
  std::ostringstream out;
  out << "# Operators on the BPU\n\n"
         "Generated from the operator support table "
         "(`toolchain/bpu_support/src/ops/`) by `hb_mapper supported-ops`; a test "
         "keeps this file in sync. An operator runs on the BPU when the march supports it, its "
         "tensors have static shapes and every rule holds; otherwise it runs on the CPU in float, and `hb_mapper checker` prints "
         "the broken rule. The limits come from the virtual BPU's march table "
         "(`simulator/src/march.cc`).\n\n";
  for (const MarchSpec& m : simulator::all_marches()) {
    out << "## " << m.name << " (" << m.chip << ")\n\n";
    out << "| ONNX operator | BPU type | kind | int16 | rules |\n|---|---|---|---|---|\n";
    for (const OpDef& s : op_defs()) {
      if (std::find(s.marches.begin(), s.marches.end(), m.march) == s.marches.end()) continue;
      const char* kind = s.kind == OpKind::kCompute ? "compute" : s.kind == OpKind::kLut ? "lut" : "passive";
      out << "| " << s.op_type << " | " << s.bpu_type << " | " << kind << " | "
          << (s.int16 && m.supports_int16() ? "yes" : "no") << " | ";
      std::string rules;
      for (const Constraint& c : s.constraints) rules += (rules.empty() ? "" : "; ") + c.rule(m);
      if (cpu_by_default(s, m)) rules += (rules.empty() ? "" : "; ") + std::string("CPU unless run_on_bpu");
      if (!s.note.empty()) rules += (rules.empty() ? "" : " — ") + std::string(s.note);
      out << (rules.empty() ? "—" : rules) << " |\n";
    }
    out << "\n";
  }
  out << "## Rewritten by stage 2\n\n"
         "These have no row of their own: the optimizer (`docs/passes.md`) turns them into operators "
         "above, so they reach the BPU on every march where those do.\n\n"
         "| ONNX operator | becomes |\n|---|---|\n";
  for (const OptimizerForm& f : optimizer_forms()) out << "| " << f.op_type << " | " << f.becomes << " |\n";
  out << "\nEvery other operator runs on the CPU (float kernels of `runtime/kernels`).\n";
  return out.str();
}

std::span<const OptimizerForm> optimizer_forms() {
  static constexpr OptimizerForm kForms[] = {
      {"BatchNormalization", "folded into the Conv / ConvTranspose / Gemm / MatMul before it, else a depthwise 1x1 Conv (fuse_batchnorm)"},
      {"PRelu", "LeakyRelu (one slope) or Relu·(1 − slope) + x·slope (prelu_decomposition)"},
      {"Div", "Mul by the constant's reciprocal, or by Reciprocal(b) for a computed b (operator_replacement)"},
      {"Sum", "a chain of Adds (operator_replacement)"},
      {"Dropout", "removed (inference mode; dropout_identity_removal)"},
      {"Identity", "removed (dropout_identity_removal)"},
      {"Constant", "an initializer (constant_folding)"},
      {"ConstantOfShape", "an initializer (constant_folding)"},
      {"Shape", "a constant for a static shape (constant_folding)"},
      {"Size", "a constant for a static shape (constant_folding)"},
      {"ConvInteger", "Conv with dequantized weights, after DynamicQuantizeLinear (dynamic_quantization_removal)"},
      {"MatMulInteger", "MatMul with dequantized weights, after DynamicQuantizeLinear (dynamic_quantization_removal)"},
      {"LSTM", "per time step: a 1x1 Conv per gate, Sigmoid/Tanh tables, elementwise Mul/Add; known sequence length, constant weights (recurrent_unrolling)"},
      {"GRU", "per time step, as LSTM; both linear_before_reset forms (recurrent_unrolling)"},
      {"RNN", "per time step, as LSTM (recurrent_unrolling)"},
  };
  return kForms;
}

}  // namespace openbpu::bpu_support
