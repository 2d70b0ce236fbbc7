#include "openbpu/frontend/shape_inference.h"

#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "openbpu/common/error.h"
#include "openbpu/frontend/onnx_model.h"

namespace openbpu::frontend {

using kernels::DataType;

namespace {

bool known_type(const ir::Value* v) {
  return v != nullptr && v->type().dtype != DataType::kUndefined && v->type().shape.has_value();
}

// ---------------------------------------------------------------- own rules
// Each rule sees the node (all of whose inputs have a known type) and sets its outputs' types;
// it returns false if it cannot decide. Rules cover what libonnx 1.12 cannot infer: opset 18/19
// revisions and ops it does not know.

using Rule = std::function<bool(ir::Node&)>;

void set_type(ir::Value* v, ir::TensorType t) {
  if (v != nullptr) v->set_type(std::move(t));
}

bool same_as_input(ir::Node& n) {
  set_type(n.output(0), n.input(0)->type());
  return true;
}

std::optional<std::vector<int64_t>> constant_ints(const ir::Value* v) {
  if (v == nullptr || !v->is_constant()) return std::nullopt;
  const kernels::Tensor& t = *v->constant();
  if (kernels::dtype_is_float(t.dtype())) return std::nullopt;
  return t.to_int64_vector();
}

bool broadcast_rule(ir::Node& n, DataType out_type) {
  std::vector<ir::Dim> out;
  for (const ir::Value* in : n.inputs()) {
    if (in == nullptr) continue;
    const auto& shape = *in->type().shape;
    if (shape.size() > out.size()) out.insert(out.begin(), shape.size() - out.size(), ir::Dim::known(1));
    const size_t offset = out.size() - shape.size();
    for (size_t i = 0; i < shape.size(); ++i) {
      ir::Dim& o = out[offset + i];
      const ir::Dim& d = shape[i];
      if (d.is_known() && d.value == 1) continue;
      if (o.is_known() && o.value == 1) {
        o = d;
      } else if (!(o == d)) {
        if (!o.is_known() || !d.is_known()) {
          o = ir::Dim::unknown();
        } else {
          return false;  // incompatible; leave it to the executor's error
        }
      }
    }
  }
  ir::TensorType t;
  t.dtype = out_type == DataType::kUndefined ? n.input(0)->type().dtype : out_type;
  t.shape = out;
  set_type(n.output(0), t);
  return true;
}

bool reduce_rule(ir::Node& n) {
  const auto& in = *n.input(0)->type().shape;
  const int64_t rank = static_cast<int64_t>(in.size());
  std::vector<int64_t> axes;
  if (n.inputs().size() > 1 && n.input(1) != nullptr) {
    auto c = constant_ints(n.input(1));
    if (!c) return false;
    axes = *c;
  } else {
    axes = n.attrs().get_ints("axes", {});
  }
  const bool keep = n.attrs().get_int("keepdims", 1) != 0;
  if (axes.empty()) {
    if (n.attrs().get_int("noop_with_empty_axes", 0) != 0) return same_as_input(n);
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  }
  std::set<int64_t> reduced;
  for (int64_t a : axes) {
    if (a < -rank || a >= rank) return false;
    reduced.insert(a < 0 ? a + rank : a);
  }
  ir::TensorType t;
  t.dtype = n.input(0)->type().dtype;
  t.shape.emplace();
  for (int64_t i = 0; i < rank; ++i) {
    if (reduced.count(i)) {
      if (keep) t.shape->push_back(ir::Dim::known(1));
    } else {
      t.shape->push_back(in[static_cast<size_t>(i)]);
    }
  }
  set_type(n.output(0), t);
  return true;
}

bool split_rule(ir::Node& n) {
  const auto& in = *n.input(0)->type().shape;
  const int64_t rank = static_cast<int64_t>(in.size());
  int64_t axis = n.attrs().get_int("axis", 0);
  if (axis < -rank || axis >= rank) return false;
  if (axis < 0) axis += rank;
  const ir::Dim dim = in[static_cast<size_t>(axis)];
  std::vector<int64_t> sizes;
  if (n.inputs().size() > 1 && n.input(1) != nullptr) {
    auto c = constant_ints(n.input(1));
    if (!c) return false;
    sizes = *c;
  } else if (dim.is_known()) {
    const int64_t parts = n.attrs().get_int("num_outputs", static_cast<int64_t>(n.outputs().size()));
    if (parts <= 0) return false;
    const int64_t chunk = (dim.value + parts - 1) / parts;
    for (int64_t i = 0; i < parts; ++i) sizes.push_back(std::max<int64_t>(0, std::min(chunk, dim.value - i * chunk)));
  } else {
    return false;
  }
  if (sizes.size() != n.outputs().size()) return false;
  for (size_t i = 0; i < sizes.size(); ++i) {
    ir::TensorType t = n.input(0)->type();
    (*t.shape)[static_cast<size_t>(axis)] = ir::Dim::known(sizes[i]);
    set_type(n.output(i), t);
  }
  return true;
}

bool cast_rule(ir::Node& n) {
  ir::TensorType t = n.input(0)->type();
  t.dtype = static_cast<DataType>(n.attrs().get_int("to", 0));
  set_type(n.output(0), t);
  return true;
}

// Loop (libonnx 1.12 gives its outputs no shape): a carried value whose body output has the
// type the value starts with keeps that type; a scan output stacks the body's along a first
// dimension of the trip count when that is a constant and there is no condition input.
bool loop_rule(ir::Node& n) {
  if (n.graph_attrs().empty() || n.graph_attrs().front().graphs.size() != 1) return false;
  const ir::Graph& body = *n.graph_attrs().front().graphs.front();
  const size_t carried = n.inputs().size() < 2 ? 0 : n.inputs().size() - 2;
  if (body.outputs().size() != n.outputs().size() + 1 || carried > n.outputs().size()) return false;
  bool any = false;
  for (size_t k = 0; k < carried; ++k) {
    const ir::TensorType& start = n.input(2 + k)->type();
    if (body.outputs()[1 + k]->type() == start) {
      set_type(n.output(k), start);
      any = true;
    }
  }
  const auto trips = constant_ints(n.input(0));
  const bool fixed = trips && trips->size() == 1 && n.input(1) == nullptr;
  for (size_t s = carried; s < n.outputs().size(); ++s) {
    ir::TensorType t = body.outputs()[1 + s]->type();
    if (t.dtype == DataType::kUndefined || !t.shape) continue;
    t.shape->insert(t.shape->begin(), fixed ? ir::Dim::known(trips->front()) : ir::Dim::unknown());
    set_type(n.output(s), t);
    any = true;
  }
  return any;
}

// STFT-17 (libonnx does not infer it here: onnx_model.h): signal [batch, length, 1 or 2],
// frame_step a scalar, window 1-D, frame_length a scalar → [batch, frames, bins, 2]; frames and
// bins known when the lengths are constants. A malformed node keeps its type unknown.
bool stft_rule(ir::Node& n) {
  const ir::TensorType& signal = n.input(0)->type();
  const auto rank = [&](size_t i) { return n.input(i)->type().shape->size(); };
  const ir::Value* window = n.inputs().size() > 2 ? n.input(2) : nullptr;
  const ir::Value* length_in = n.inputs().size() > 3 ? n.input(3) : nullptr;
  if (signal.shape->size() != 3 || n.inputs().size() < 2 || n.input(1) == nullptr || rank(1) > 1 ||
      (window != nullptr && rank(2) != 1) || (length_in != nullptr && rank(3) > 1) ||
      (window == nullptr && length_in == nullptr)) {
    return false;
  }
  std::optional<int64_t> frame_length;
  if (window != nullptr && (*window->type().shape)[0].is_known()) frame_length = (*window->type().shape)[0].value;
  if (const auto given = constant_ints(length_in); given && given->size() == 1) frame_length = given->front();
  const auto step = constant_ints(n.input(1));
  const ir::Dim& length = (*signal.shape)[1];
  const bool onesided = n.attrs().get_int("onesided", 1) != 0;
  ir::Dim frames = ir::Dim::unknown(), bins = ir::Dim::unknown();
  if (frame_length && *frame_length > 0) {
    bins = ir::Dim::known(onesided ? *frame_length / 2 + 1 : *frame_length);
    if (step && step->size() == 1 && step->front() > 0 && length.is_known() && length.value >= *frame_length) {
      frames = ir::Dim::known((length.value - *frame_length) / step->front() + 1);
    }
  }
  ir::TensorType out;
  out.dtype = signal.dtype;
  out.shape = std::vector<ir::Dim>{(*signal.shape)[0], frames, bins, ir::Dim::known(2)};
  set_type(n.output(0), out);
  return true;
}

const std::map<std::string, Rule>& own_rules() {
  static const std::map<std::string, Rule> rules = [] {
    std::map<std::string, Rule> r;
    for (const char* op : {"Identity", "Relu", "Sigmoid", "Tanh", "Mish", "HardSwish",
                           "HardSigmoid", "LeakyRelu", "Elu", "Selu", "Celu", "Gelu", "Softplus",
                           "Softsign", "Abs", "Neg", "Exp", "Log", "Sqrt", "Reciprocal", "Floor",
                           "Ceil", "Round", "Erf", "Sin", "Cos", "Clip", "Softmax", "LogSoftmax",
                           "Hardmax", "BitwiseNot", "LayerNormalization", "GroupNormalization",
                           "InstanceNormalization", "BatchNormalization", "Dropout", "LRN",
                           "CumSum", "Trilu", "Shrink", "ThresholdedRelu"}) {
      r[op] = same_as_input;
    }
    for (const char* op : {"Add", "Sub", "Mul", "Div", "Pow", "Mod", "Max", "Min", "Sum", "Mean",
                           "BitwiseAnd", "BitwiseOr", "BitwiseXor", "PRelu"}) {
      r[op] = [](ir::Node& n) { return broadcast_rule(n, DataType::kUndefined); };
    }
    for (const char* op : {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And",
                           "Or", "Xor"}) {
      r[op] = [](ir::Node& n) { return broadcast_rule(n, DataType::kBool); };
    }
    r["Where"] = [](ir::Node& n) {
      if (!broadcast_rule(n, DataType::kUndefined)) return false;
      ir::TensorType t = n.output(0)->type();
      t.dtype = n.input(1)->type().dtype;
      set_type(n.output(0), t);
      return true;
    };
    for (const char* op : {"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd",
                           "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp",
                           "ReduceSumSquare"}) {
      r[op] = reduce_rule;
    }
    r["Split"] = split_rule;
    // horizon::HzPreprocess (docs/quantized_ops.md): float32 of the input's shape.
    r["HzPreprocess"] = [](ir::Node& n) {
      ir::TensorType t = n.input(0)->type();
      t.dtype = DataType::kFloat32;
      set_type(n.output(0), t);
      return true;
    };
    r["Cast"] = cast_rule;
    r["Loop"] = loop_rule;
    r["STFT"] = stft_rule;
    return r;
  }();
  return rules;
}

void apply_rules_to_graph(ir::Graph& graph, int& count) {
  for (ir::Node* n : graph.nodes()) {
    bool missing = false;
    for (const ir::Value* out : n->outputs()) {
      if (out != nullptr && !known_type(out)) missing = true;
    }
    if (!missing) continue;
    bool inputs_known = true;
    for (const ir::Value* in : n->inputs()) {
      if (in != nullptr && !known_type(in)) inputs_known = false;
    }
    // Rules read input 0, which only Loop may omit (its trip count).
    if (!inputs_known || n->inputs().empty() || (n->input(0) == nullptr && n->op_type() != "Loop")) continue;
    auto it = own_rules().find(n->op_type());
    if (it == own_rules().end()) continue;
    try {
      if (it->second(*n)) {
        for (ir::Value* out : n->outputs()) {
          if (out != nullptr && !graph.is_output(out)) graph.mark_annotated(out);
        }
        ++count;
      }
    } catch (const std::exception&) {
      // a malformed attribute: leave the type unknown, the executor reports the node
    }
  }
}

}  // namespace

int apply_own_shape_rules(const ir::Model& model, ir::Graph& graph) {
  (void)model;
  int count = 0;
  apply_rules_to_graph(graph, count);
  return count;
}

namespace {

// One libonnx pass; returns how many values got a type.
int libonnx_pass(ir::Model& model) {
  if (model.opset_version("") > 17 || model.ir_version > 8) return 0;
  int count = 0;
  onnx::ModelProto proto;
  model_to_proto(model, &proto);
  if (!infer_shapes_with_libonnx(proto)) return 0;  // keep the types we have
  std::vector<const onnx::ValueInfoProto*> infos;  // inferred types land in both lists
  for (const auto& info : proto.graph().value_info()) infos.push_back(&info);
  for (const auto& info : proto.graph().output()) infos.push_back(&info);
  for (const onnx::ValueInfoProto* pinfo : infos) {
    const onnx::ValueInfoProto& info = *pinfo;
    ir::Value* v = model.graph->find_value(info.name());
    if (v == nullptr || v->is_constant() || known_type(v)) continue;
    const auto& tt = info.type().tensor_type();
    ir::TensorType t;
    if (kernels::dtype_is_known(tt.elem_type())) t.dtype = static_cast<DataType>(tt.elem_type());
    if (tt.has_shape()) {
      t.shape.emplace();
      for (const auto& d : tt.shape().dim()) {
        t.shape->push_back(d.has_dim_value() ? ir::Dim::known(d.dim_value())
                           : d.has_dim_param() ? ir::Dim::symbolic(d.dim_param())
                                               : ir::Dim::unknown());
      }
    }
    v->set_type(t);
    if (!model.graph->is_output(v)) model.graph->mark_annotated(v);
    if (known_type(v)) ++count;
  }
  return count;
}

}  // namespace

void infer_shapes(ir::Model& model, bool recompute) {
  ir::Graph& g = *model.graph;
  std::vector<std::pair<ir::Value*, ir::TensorType>> declared_outputs;
  if (recompute) {
    for (ir::Value* v : g.outputs()) declared_outputs.emplace_back(v, v->type());
    for (ir::Value* v : g.values()) {
      if (!v->is_constant() && !g.is_input(v) && v->producer() != nullptr) v->set_type({});
    }
  }
  for (int round = 0; round < 8; ++round) {
    const int found = libonnx_pass(model) + apply_own_shape_rules(model, g);
    if (found == 0) break;
  }
  // A graph output inference could not follow keeps what the model declared: its element type
  // and rank (a graph output needs a shape to be a valid ONNX model), its sizes unknown, as
  // they may have changed with the inputs.
  for (auto& [v, declared] : declared_outputs) {
    ir::TensorType t = v->type();
    if (t.dtype == DataType::kUndefined) t.dtype = declared.dtype;
    if (!t.has_rank() && declared.has_rank()) {
      t.shape.emplace();
      for (const ir::Dim& d : *declared.shape) {
        t.shape->push_back(d.symbol.empty() ? ir::Dim::unknown() : ir::Dim::symbolic(d.symbol));
      }
    }
    v->set_type(t);
  }
}

}  // namespace openbpu::frontend
