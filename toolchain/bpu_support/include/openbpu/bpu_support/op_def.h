// The operator registry (design invariant 6, style rule 4): one OpDef per ONNX operator the BPU
// can run. It carries everything the stages need to know about the operator:
// - support: its BPU type name, the marches and data types, and its constraints. Each constraint
//   is a small named check whose text is its rule ("kernel H and W must be in [1, 7]"); the same
//   rows drive the partitioner, the checker's "why is this node on CPU" message, the generated
//   docs/supported_ops.md and one unit test per rule;
// - quantization (stage 4): how the quantizer emits it (QuantizeAs) and how it fuses;
// - lowering (stage 5): which compiler lowering turns its quantized node into instructions.
// The float kernel is the runtime kernel registered under op_type. The rows are in
// src/ops/*.cc, one file per family; docs/adding_an_operator.md walks through adding one.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "openbpu/ir/graph.h"
#include "openbpu/simulator/isa.h"
#include "openbpu/simulator/march.h"

namespace openbpu::bpu_support {

using simulator::March;
using simulator::MarchSpec;

enum class OpKind {
  kCompute,  // integer arithmetic with requantization (conv, elementwise, pooling, ...)
  kLut,      // elementwise nonlinear function by table (HzLut)
  kPassive,  // data movement; the output keeps the input's scale (Reshape, Concat, ...)
};

// How the quantizer emits a BPU node (toolchain/quantization/src/emit_*.cc).
enum class QuantizeAs {
  // Accumulating anchors: Σ x·w with a constant weight (input 1) and per-channel weight scales;
  // they absorb a following Relu / Clip and may output int32.
  kConv,               // Conv, ConvTranspose (OpDef::lower says which)
  kGemm,               // as a 1x1 convolution
  kPreprocess,         // HzPreprocess: colour conversion, mean and scale as a 1x1 convolution
  kMatMul,             // featuremap x featuremap; with a constant right-hand side, like kGemm
  kElementwise,        // per-input rescaling (OpDef::elementwise); a fusion anchor
  kTable,              // a lookup table of the float function
  kGlobalAveragePool,  // sum and one multiplier
  kAveragePool,        // sum and one multiplier per window size
  kReduceMean,         // sum over axes and one multiplier
  kArgMax,             // ArgMax, ArgMin: int32 indices, not a quantized tensor
  kSoftmax,            // integer exp and one reciprocal per row
  kResize,             // interpolation; the output keeps the input's scale
  kMove,               // data movement; the output keeps the input's scale
  kConcat,             // inputs requantized to the output's scale
  kCompare,            // Equal, Greater, Less: both operands at the finer scale; an int8 mask out
  kSelect,             // Where: a mask selects between two operands rescaled to the output's scale
};

// Which lowering of the BPU compiler turns the quantized node into instructions
// (toolchain/compiler/src/lower_*.cc); kNone: the compiler has no lowering yet.
enum class LowerAs {
  kNone,
  kConv,
  kConvTranspose,
  kMatMul,
  kElementwise,
  kLut,
  kGlobalAveragePool,
  kReduceMean,
  kAveragePool,
  kMaxPool,
  kArgMax,
  kArgMin,
  kSoftmax,
  kResize,
  kReshape,
  kTranspose,
  kConcat,
  kSlice,
  kSplit,
  kGlobalMaxPool,
  kPad,
  kDepthToSpace,
  kSpaceToDepth,
  kGather,
  kReduceMax,
  kExpand,
  kTile,
  kSelect,
  kGatherElements,
  // Not in rows: the nodes the quantizer adds (HzRequantize), and a Relu / Clip on integers
  // that no anchor absorbed (a clamp).
  kRequantize,
  kClamp,
};

// An activation a fusion anchor absorbs: kRelu clamps at 0, kClip at constant bounds.
enum class FusedActivation { kNone, kRelu, kClip };

struct Constraint {
  std::string_view id;  // stable name, e.g. "conv.kernel_size"
  // The rule as users read it, with the march's numbers filled in.
  std::function<std::string(const MarchSpec&)> rule;
  // True if the node satisfies the rule. Unknown shapes satisfy shape rules (checked again
  // once shapes are known); attributes are read from the node.
  std::function<bool(const ir::Node&, const MarchSpec&)> holds;
};

// Every march of the march table (the default of OpDef::marches).
std::vector<March> every_march();

struct OpDef {
  std::string_view op_type;   // ONNX operator (domain ai.onnx)
  std::string_view bpu_type;  // the name in node tables and of the quantized node
  OpKind kind;
  QuantizeAs quantize;
  LowerAs lower;
  std::vector<Constraint> constraints = {};
  std::string_view note = {};  // one line for the docs
  std::vector<March> marches = every_march();  // marches whose BPU runs it
  bool int16 = true;                         // int16 activations allowed (where the march has int16)
  bool cpu_by_default = false;               // runs on CPU unless run_on_bpu asks (e.g. Softmax)
  // With cpu_by_default: the march-table flag that puts the operator on the BPU by default on
  // marches that set it (Softmax: &MarchSpec::softmax_on_bpu_default), or none.
  bool MarchSpec::*bpu_by_default_on = nullptr;
  // kElementwise: the instruction's operation.
  simulator::isa::ElementwiseOp elementwise = simulator::isa::ElementwiseOp::kAdd;
  // A Relu / Clip after a fusion anchor is absorbed by it as the anchor's output clamp.
  FusedActivation activation = FusedActivation::kNone;
  // Conv: absorbs a following Add of a featuremap of the same shape (residual connection).
  bool absorbs_residual_add = false;
  // Accumulating anchors: the output-channel axis of the constant weight (input 1); -1 when
  // input 1 has no such axis.
  int (*weight_axis)(const ir::Node&) = nullptr;
};

// Whether nodes of `def` run on the CPU of `march` unless run_on_bpu names them:
// cpu_by_default, unless the march sets the entry's bpu_by_default_on flag.
bool cpu_by_default(const OpDef& def, const MarchSpec& march);

// The whole registry, in the order of docs/supported_ops.md.
std::span<const OpDef> op_defs();
// The row of an ONNX operator (or HzPreprocess), or nullptr.
const OpDef* find_op_def(std::string_view op_type);
// The row of a node: standard-domain ("") operators by op_type, horizon HzPreprocess; else nullptr.
const OpDef* find_op_def(const ir::Node& node);
// The first row whose quantized node is named `bpu_type` (HzSQuantizedConv, HzLut, ...).
const OpDef* find_op_def_by_bpu_type(std::string_view bpu_type);

// The BPU operator no row owns: the quantizer's change of scale or width between two BPU nodes.
inline constexpr std::string_view kRequantizeType = "HzRequantize";
// True for a horizon-domain node of a quantized model that runs on the BPU: a row's BPU type or
// kRequantizeType (the others, HzQuantize, HzDequantize, HzPreprocess, HzCalibration, are CPU).
bool is_bpu_horizon_node(const ir::Node& node);

// Whether the quantizer emits the node as a fusion anchor: an accumulating one (kConv, kGemm,
// kPreprocess, kMatMul with a constant right-hand side), or kElementwise.
bool is_fusion_anchor(const OpDef& def, const ir::Node& node);
bool accumulates(const OpDef& def, const ir::Node& node);  // an accumulating anchor

// Why a node cannot run on the BPU of `march` ("" if it can): the first broken rule, or that
// the operator has no BPU implementation on this march.
struct SupportVerdict {
  bool on_bpu_possible = false;
  const OpDef* support = nullptr;  // nullptr: no entry for this op
  std::vector<std::string> broken_rules;
  std::string reason() const;          // one line: "kernel H and W must be in [1, 7]; ..."
};
SupportVerdict check_node(const ir::Node& node, const MarchSpec& march);

// Operators with no row that stage 2 (docs/passes.md) rewrites into ones with rows, so they reach
// the BPU all the same: the operator and what it becomes.
struct OptimizerForm {
  std::string_view op_type;
  std::string_view becomes;
};
std::span<const OptimizerForm> optimizer_forms();

// docs/supported_ops.md, generated from the registry and optimizer_forms().
std::string supported_ops_markdown();

}  // namespace openbpu::bpu_support
