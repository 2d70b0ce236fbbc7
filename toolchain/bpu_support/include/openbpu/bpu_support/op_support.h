// The BPU operator support table (design invariant 6 and style rule 4): for every ONNX operator
// the BPU can run, its BPU type name, its kind, the marches and data types it supports, and its
// constraints. Each constraint is a small named check whose text is its rule ("kernel H and W
// must be in [1, 7]"); the same table drives the partitioner, the checker's "why is this node
// on CPU" message, the generated docs/supported_ops.md and one unit test per rule.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "openbpu/ir/graph.h"
#include "openbpu/simulator/march.h"

namespace openbpu::bpu_support {

using simulator::March;
using simulator::MarchSpec;

enum class OpKind {
  kCompute,  // integer arithmetic with requantization (conv, elementwise, pooling, ...)
  kLut,      // elementwise nonlinear function by table (HzLut)
  kPassive,  // data movement; the output keeps the input's scale (Reshape, Concat, ...)
};

struct Constraint {
  std::string_view id;  // stable name, e.g. "conv.kernel_size"
  // The rule as users read it, with the march's numbers filled in.
  std::function<std::string(const MarchSpec&)> rule;
  // True if the node satisfies the rule. Unknown shapes satisfy shape rules (checked again
  // once shapes are known); attributes are read from the node.
  std::function<bool(const ir::Node&, const MarchSpec&)> holds;
};

struct OpSupport {
  std::string_view op_type;   // ONNX operator (domain ai.onnx)
  std::string_view bpu_type;  // the name in node tables, e.g. "HzSQuantizedConv"
  OpKind kind;
  std::vector<March> marches;  // marches whose BPU runs it
  bool int16;                  // int16 activations allowed (where the march has int16)
  bool cpu_by_default;         // runs on CPU unless run_on_bpu asks (e.g. Softmax)
  std::vector<Constraint> constraints;
  std::string_view note;       // one line for the docs
  // With cpu_by_default: the march-table flag that puts the operator on the BPU by default on
  // marches that set it (Softmax: &MarchSpec::softmax_on_bpu_default), or none.
  bool MarchSpec::*bpu_by_default_on = nullptr;
};

// Whether nodes of `support` run on the CPU of `march` unless run_on_bpu names them:
// cpu_by_default, unless the march sets the entry's bpu_by_default_on flag.
bool cpu_by_default(const OpSupport& support, const MarchSpec& march);

// The whole table, in the order of docs/supported_ops.md.
std::span<const OpSupport> op_support_table();
const OpSupport* find_op_support(std::string_view op_type);

// Why a node cannot run on the BPU of `march` ("" if it can): the first broken rule, or that
// the operator has no BPU implementation on this march.
struct SupportVerdict {
  bool on_bpu_possible = false;
  const OpSupport* support = nullptr;  // nullptr: no entry for this op
  std::vector<std::string> broken_rules;
  std::string reason() const;          // one line: "kernel H and W must be in [1, 7]; ..."
};
SupportVerdict check_node(const ir::Node& node, const MarchSpec& march);

// docs/supported_ops.md, generated from the table.
std::string supported_ops_markdown();

}  // namespace openbpu::bpu_support
