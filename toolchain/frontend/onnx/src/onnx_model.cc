#include "openbpu/frontend/onnx_model.h"

#include <onnx/checker.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <queue>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "openbpu/common/atomic_file.h"
#include "openbpu/common/error.h"
#include "openbpu/frontend/shape_inference.h"
#include "openbpu/ir/verifier.h"

namespace openbpu::frontend {

using kernels::DataType;
using kernels::Tensor;

namespace {

// ------------------------------------------------------------------ tensors

template <typename T, typename Field>
void copy_typed_field(const Field& field, Tensor& t, const std::string& origin) {
  if (static_cast<int64_t>(field.size()) != t.element_count()) {
    raise(origin, ": holds ", field.size(), " values for shape ",
          kernels::shape_to_string(t.shape()), " (", t.element_count(), " expected)");
  }
  T* out = static_cast<T*>(t.raw_data());
  for (int i = 0; i < field.size(); ++i) out[i] = static_cast<T>(field.Get(i));
}

std::string read_external_data(const onnx::TensorProto& proto, const std::string& origin,
                               const std::filesystem::path& base_dir) {
  std::string location;
  uint64_t offset = 0;
  int64_t length = -1;
  for (const auto& entry : proto.external_data()) {
    try {
      if (entry.key() == "location") location = entry.value();
      if (entry.key() == "offset") offset = std::stoull(entry.value());
      if (entry.key() == "length") length = std::stoll(entry.value());
    } catch (const std::exception&) {
      raise(origin, ": external data entry '", entry.key(), "' has a non-numeric value '",
            entry.value(), "'");
    }
  }
  if (location.empty()) raise(origin, ": external data has no 'location'");
  const std::filesystem::path rel(location);
  if (rel.is_absolute() || location.find("..") != std::string::npos) {
    raise(origin, ": external data location '", location,
          "' must be a relative path inside the model's folder");
  }
  const std::filesystem::path file = base_dir / rel;
  std::ifstream in(file, std::ios::binary);
  if (!in) raise(origin, ": cannot open external data file ", file.string());
  in.seekg(0, std::ios::end);
  const auto size = static_cast<uint64_t>(in.tellg());
  if (offset > size) {
    raise(origin, ": external data offset ", offset, " is beyond the end of ", file.string(),
          " (", size, " bytes)");
  }
  const uint64_t available = size - offset;
  const uint64_t count = length < 0 ? available : static_cast<uint64_t>(length);
  if (count > available) {
    raise(origin, ": external data file ", file.string(), " is truncated (needs ", count,
          " bytes at offset ", offset, ", has ", available, ")");
  }
  std::string data(count, '\0');
  in.seekg(static_cast<std::streamoff>(offset));
  in.read(data.data(), static_cast<std::streamsize>(count));
  if (!in) raise(origin, ": cannot read external data from ", file.string());
  return data;
}

}  // namespace

Tensor tensor_from_proto(const onnx::TensorProto& proto, const std::string& origin_in,
                         const std::filesystem::path& base_dir) {
  const std::string origin =
      proto.name().empty() ? origin_in : str_cat(origin_in, ": tensor '", proto.name(), "'");
  if (!kernels::dtype_is_known(proto.data_type())) {
    raise(origin, ": unknown element type code ", proto.data_type());
  }
  const auto dtype = static_cast<DataType>(proto.data_type());
  if (dtype == DataType::kString) {
    raise(origin, ": string tensors are not supported (no operator of this toolchain computes on "
          "strings)");
  }
  if (proto.has_segment()) raise(origin, ": segmented tensors are not supported");
  kernels::Shape shape(proto.dims().begin(), proto.dims().end());
  for (int64_t d : shape) {
    if (d < 0) raise(origin, ": negative dimension in shape ", kernels::shape_to_string(shape));
  }
  Tensor t;
  try {
    t = Tensor(dtype, shape);
  } catch (const kernels::KernelError& e) {
    raise(origin, ": ", e.what());
  }
  const size_t bytes = t.byte_size();
  std::string external;
  const std::string* raw = nullptr;
  if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    external = read_external_data(proto, origin, base_dir);
    raw = &external;
  } else if (proto.has_raw_data()) {
    raw = &proto.raw_data();
  }
  if (raw != nullptr) {
    if (raw->size() != bytes) {
      raise(origin, ": raw data has ", raw->size(), " bytes, but ", t.describe(), " needs ", bytes);
    }
    if (bytes > 0) std::memcpy(t.raw_data(), raw->data(), bytes);
    return t;
  }
  switch (dtype) {
    case DataType::kFloat32: copy_typed_field<float>(proto.float_data(), t, origin); break;
    case DataType::kFloat64: copy_typed_field<double>(proto.double_data(), t, origin); break;
    case DataType::kInt64: copy_typed_field<int64_t>(proto.int64_data(), t, origin); break;
    case DataType::kUint32: copy_typed_field<uint32_t>(proto.uint64_data(), t, origin); break;
    case DataType::kUint64: copy_typed_field<uint64_t>(proto.uint64_data(), t, origin); break;
    case DataType::kInt32: copy_typed_field<int32_t>(proto.int32_data(), t, origin); break;
    case DataType::kInt16: copy_typed_field<int16_t>(proto.int32_data(), t, origin); break;
    case DataType::kUint16: copy_typed_field<uint16_t>(proto.int32_data(), t, origin); break;
    case DataType::kInt8: copy_typed_field<int8_t>(proto.int32_data(), t, origin); break;
    case DataType::kUint8: copy_typed_field<uint8_t>(proto.int32_data(), t, origin); break;
    case DataType::kBool: copy_typed_field<uint8_t>(proto.int32_data(), t, origin); break;
    case DataType::kFloat16:
    case DataType::kBFloat16: copy_typed_field<uint16_t>(proto.int32_data(), t, origin); break;
    default: raise(origin, ": cannot read element type ", kernels::dtype_name(dtype));
  }
  return t;
}

void tensor_to_proto(const Tensor& tensor, const std::string& name, onnx::TensorProto* proto) {
  proto->Clear();
  if (!name.empty()) proto->set_name(name);
  proto->set_data_type(static_cast<int32_t>(tensor.dtype()));
  for (int64_t d : tensor.shape()) proto->add_dims(d);
  proto->set_raw_data(static_cast<const char*>(tensor.raw_data()), tensor.byte_size());
}

Tensor read_tensor_pb(const std::filesystem::path& path) {
  const std::string bytes = read_file(path);
  onnx::TensorProto proto;
  if (!proto.ParseFromString(bytes)) raise(path.string(), ": not a serialized onnx.TensorProto");
  return tensor_from_proto(proto, path.string(), path.parent_path());
}

namespace {

// ------------------------------------------------------------------ proto → IR

ir::TensorType type_from_proto(const onnx::TypeProto& type) {
  ir::TensorType t;
  if (!type.has_tensor_type()) return t;
  const auto& tt = type.tensor_type();
  if (kernels::dtype_is_known(tt.elem_type())) t.dtype = static_cast<DataType>(tt.elem_type());
  if (tt.has_shape()) {
    t.shape.emplace();
    for (const auto& d : tt.shape().dim()) {
      if (d.has_dim_value() && d.dim_value() >= 0) {
        t.shape->push_back(ir::Dim::known(d.dim_value()));
      } else if (d.has_dim_param()) {
        t.shape->push_back(ir::Dim::symbolic(d.dim_param()));
      } else {
        t.shape->push_back(ir::Dim::unknown());
      }
    }
  }
  return t;
}

void type_to_proto(const ir::TensorType& t, onnx::TypeProto* proto) {
  auto* tt = proto->mutable_tensor_type();
  tt->set_elem_type(static_cast<int32_t>(t.dtype));
  if (t.shape) {
    auto* shape = tt->mutable_shape();
    for (const ir::Dim& d : *t.shape) {
      auto* dim = shape->add_dim();
      if (d.is_known()) {
        dim->set_dim_value(d.value);
      } else if (!d.symbol.empty()) {
        dim->set_dim_param(d.symbol);
      }
    }
  }
}

struct GraphLoader {
  std::string origin;
  std::filesystem::path base_dir;
  const OnnxLoadOptions& options;

  void load_attribute(const onnx::AttributeProto& a, const onnx::NodeProto& node, ir::Node& n,
                      ir::Graph& graph) {
    const std::string where = str_cat(origin, ": node '", node.name(), "' (", node.op_type(),
                                      ") attribute '", a.name(), "'");
    auto type = a.type();
    if (type == onnx::AttributeProto::UNDEFINED) {  // very old exporters: infer from the field
      if (a.has_f()) type = onnx::AttributeProto::FLOAT;
      else if (a.has_i()) type = onnx::AttributeProto::INT;
      else if (a.has_s()) type = onnx::AttributeProto::STRING;
      else if (a.has_t()) type = onnx::AttributeProto::TENSOR;
      else if (a.has_g()) type = onnx::AttributeProto::GRAPH;
      else if (a.floats_size()) type = onnx::AttributeProto::FLOATS;
      else if (a.ints_size()) type = onnx::AttributeProto::INTS;
      else if (a.strings_size()) type = onnx::AttributeProto::STRINGS;
      else if (a.tensors_size()) type = onnx::AttributeProto::TENSORS;
      else if (a.graphs_size()) type = onnx::AttributeProto::GRAPHS;
      else type = onnx::AttributeProto::INTS;  // an empty list
    }
    switch (type) {
      case onnx::AttributeProto::FLOAT: n.attrs().set(a.name(), a.f()); break;
      case onnx::AttributeProto::INT: n.attrs().set(a.name(), static_cast<int64_t>(a.i())); break;
      case onnx::AttributeProto::STRING: n.attrs().set(a.name(), a.s()); break;
      case onnx::AttributeProto::TENSOR:
        n.attrs().set(a.name(), tensor_from_proto(a.t(), where, base_dir));
        break;
      case onnx::AttributeProto::FLOATS:
        n.attrs().set(a.name(), std::vector<float>(a.floats().begin(), a.floats().end()));
        break;
      case onnx::AttributeProto::INTS:
        n.attrs().set(a.name(), std::vector<int64_t>(a.ints().begin(), a.ints().end()));
        break;
      case onnx::AttributeProto::STRINGS:
        n.attrs().set(a.name(), std::vector<std::string>(a.strings().begin(), a.strings().end()));
        break;
      case onnx::AttributeProto::TENSORS: {
        std::vector<Tensor> tensors;
        for (const auto& t : a.tensors()) tensors.push_back(tensor_from_proto(t, where, base_dir));
        n.attrs().set(a.name(), std::move(tensors));
        break;
      }
      case onnx::AttributeProto::GRAPH:
      case onnx::AttributeProto::GRAPHS: {
        ir::GraphAttribute ga;
        ga.name = a.name();
        ga.is_list = type == onnx::AttributeProto::GRAPHS;
        if (ga.is_list) {
          for (const auto& g : a.graphs()) ga.graphs.push_back(load_graph(g, &graph));
        } else {
          ga.graphs.push_back(load_graph(a.g(), &graph));
        }
        n.graph_attrs().push_back(std::move(ga));
        break;
      }
      default:
        raise(where, " has kind ", onnx::AttributeProto::AttributeType_Name(type),
              ", which this toolchain does not support");
    }
  }

  // Resolves a name used by a subgraph: defined in an enclosing graph → outer-scope value.
  static bool defined_in(const ir::Graph* g, const std::vector<const ir::Graph*>& chain,
                         const std::string& name) {
    (void)g;
    for (const ir::Graph* outer : chain) {
      if (outer->find_value(name) != nullptr) return true;
    }
    return false;
  }

  std::vector<const ir::Graph*> scopes;

  std::shared_ptr<ir::Graph> load_graph(const onnx::GraphProto& gp, const ir::Graph* outer) {
    auto graph = std::make_shared<ir::Graph>();
    if (outer != nullptr) scopes.push_back(outer);
    ir::Graph& g = *graph;
    g.set_name(gp.name());
    g.set_doc_string(gp.doc_string());
    for (const auto& init : gp.initializer()) {
      if (g.find_value(init.name()) != nullptr) {
        raise(origin, ": initializer '", init.name(), "' is defined twice");
      }
      g.add_constant(init.name(), tensor_from_proto(init, origin, base_dir));
    }
    for (const auto& sparse : gp.sparse_initializer()) {
      raise(origin, ": sparse initializer '", sparse.values().name(), "' is not supported");
    }
    for (const auto& in : gp.input()) {
      ir::Value* v = g.find_value(in.name());
      if (v == nullptr) {
        v = g.add_value(in.name(), type_from_proto(in.type()));
      }
      if (g.is_input(v)) raise(origin, ": graph input '", in.name(), "' is listed twice");
      if (!in.type().has_tensor_type() && in.has_type()) {
        raise(origin, ": graph input '", in.name(),
              "' is not a tensor (sequence, map and optional inputs are not supported)");
      }
      g.add_input(v);
    }
    // Create every node output first: node lists need not be sorted.
    for (const auto& node : gp.node()) {
      for (const auto& out : node.output()) {
        if (out.empty()) continue;
        if (g.find_value(out) != nullptr) {
          raise(origin, ": value '", out, "' (output of node '", node.name(), "' ",
                node.op_type(), ") is defined more than once");
        }
        g.add_value(out);
      }
    }
    for (const auto& node : gp.node()) {
      ir::NodeSpec spec;
      spec.op_type = node.op_type();
      spec.name = node.name();
      spec.domain = node.domain();
      for (const auto& in : node.input()) {
        if (in.empty()) {
          spec.inputs.push_back(nullptr);
          continue;
        }
        ir::Value* v = g.find_value(in);
        if (v == nullptr && defined_in(&g, scopes, in)) v = g.add_outer_scope_value(in);
        if (v == nullptr) {
          raise(origin, ": node '", node.name(), "' (", node.op_type(), ") input '", in,
                "' is not defined (not a graph input, initializer or node output)");
        }
        spec.inputs.push_back(v);
      }
      std::vector<ir::Value*> outputs;
      for (const auto& out : node.output()) outputs.push_back(out.empty() ? nullptr : g.find_value(out));
      ir::Node* n = g.add_node_with_outputs(std::move(spec), outputs);
      n->set_doc_string(node.doc_string());
      for (const auto& a : node.attribute()) load_attribute(a, node, *n, g);
    }
    for (const auto& out : gp.output()) {
      ir::Value* v = g.find_value(out.name());
      if (v == nullptr && defined_in(&g, scopes, out.name())) v = g.add_outer_scope_value(out.name());
      if (v == nullptr) {
        raise(origin, ": graph output '", out.name(), "' is not produced by any node");
      }
      const ir::TensorType declared = type_from_proto(out.type());
      if (declared.dtype != DataType::kUndefined || declared.shape) {
        if (!v->is_constant()) v->set_type(declared);
      }
      g.add_output(v);
    }
    for (const auto& info : gp.value_info()) {
      ir::Value* v = g.find_value(info.name());
      if (v == nullptr || v->is_constant()) continue;
      if (info.type().has_tensor_type()) {
        v->set_type(type_from_proto(info.type()));
        g.mark_annotated(v);
      }
    }
    // Graph inputs carry their declared types even when an initializer gives a default.
    if (outer != nullptr) scopes.pop_back();
    return graph;
  }
};

// Sorts the nodes of a GraphProto (and of its subgraphs) topologically, keeping the written
// order where possible. Names that no node produces (inputs, initializers, outer scope) count as
// available. A cycle leaves the order as it is; the IR verifier reports it.
void sort_graph_proto(onnx::GraphProto* graph) {
  for (auto& node : *graph->mutable_node()) {
    for (auto& attr : *node.mutable_attribute()) {
      if (attr.has_g()) sort_graph_proto(attr.mutable_g());
      for (auto& g : *attr.mutable_graphs()) sort_graph_proto(&g);
    }
  }
  const int n = graph->node_size();
  std::unordered_map<std::string, int> producer;
  for (int i = 0; i < n; ++i) {
    for (const auto& out : graph->node(i).output()) {
      if (!out.empty()) producer.emplace(out, i);
    }
  }
  // Implicit inputs of subgraphs count as inputs of the node that owns them.
  auto subgraph_refs = [&](const onnx::NodeProto& node) {
    std::vector<std::string> refs;
    std::function<void(const onnx::GraphProto&)> walk = [&](const onnx::GraphProto& g) {
      for (const auto& sn : g.node()) {
        for (const auto& in : sn.input()) refs.push_back(in);
        for (const auto& a : sn.attribute()) {
          if (a.has_g()) walk(a.g());
          for (const auto& sg : a.graphs()) walk(sg);
        }
      }
    };
    for (const auto& a : node.attribute()) {
      if (a.has_g()) walk(a.g());
      for (const auto& sg : a.graphs()) walk(sg);
    }
    return refs;
  };
  std::vector<std::vector<int>> consumers(static_cast<size_t>(n));
  std::vector<int> pending(static_cast<size_t>(n), 0);
  bool sorted = true;
  for (int i = 0; i < n; ++i) {
    std::set<int> deps;
    std::vector<std::string> names(graph->node(i).input().begin(), graph->node(i).input().end());
    for (auto& r : subgraph_refs(graph->node(i))) names.push_back(std::move(r));
    for (const auto& in : names) {
      auto it = producer.find(in);
      if (it != producer.end() && it->second != i) deps.insert(it->second);
    }
    for (int d : deps) {
      consumers[static_cast<size_t>(d)].push_back(i);
      if (d > i) sorted = false;
    }
    pending[static_cast<size_t>(i)] = static_cast<int>(deps.size());
  }
  if (sorted) return;
  std::priority_queue<int, std::vector<int>, std::greater<>> ready;
  for (int i = 0; i < n; ++i) {
    if (pending[static_cast<size_t>(i)] == 0) ready.push(i);
  }
  std::vector<int> order;
  while (!ready.empty()) {
    const int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int c : consumers[static_cast<size_t>(i)]) {
      if (--pending[static_cast<size_t>(c)] == 0) ready.push(c);
    }
  }
  if (static_cast<int>(order.size()) != n) return;
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  nodes.Swap(graph->mutable_node());
  for (int i : order) graph->add_node()->Swap(&nodes[i]);
}

void inline_external_data(onnx::GraphProto* graph, const std::string& origin,
                          const std::filesystem::path& base_dir) {
  for (auto& init : *graph->mutable_initializer()) {
    if (init.data_location() == onnx::TensorProto::EXTERNAL) {
      const std::string where = str_cat(origin, ": initializer '", init.name(), "'");
      init.set_raw_data(read_external_data(init, where, base_dir));
      init.clear_external_data();
      init.set_data_location(onnx::TensorProto::DEFAULT);
    }
  }
  for (auto& node : *graph->mutable_node()) {
    for (auto& attr : *node.mutable_attribute()) {
      if (attr.has_t() && attr.t().data_location() == onnx::TensorProto::EXTERNAL) {
        auto* t = attr.mutable_t();
        t->set_raw_data(read_external_data(*t, origin, base_dir));
        t->clear_external_data();
        t->set_data_location(onnx::TensorProto::DEFAULT);
      }
      if (attr.has_g()) inline_external_data(attr.mutable_g(), origin, base_dir);
      for (auto& g : *attr.mutable_graphs()) inline_external_data(&g, origin, base_dir);
    }
  }
}

int64_t default_opset(const onnx::ModelProto& proto) {
  for (const auto& o : proto.opset_import()) {
    if (o.domain().empty() || o.domain() == "ai.onnx") return o.version();
  }
  return 0;
}

}  // namespace

ir::Model model_from_proto(onnx::ModelProto& proto, const std::string& origin,
                           const std::filesystem::path& base_dir, const OnnxLoadOptions& options) {
  if (!proto.has_graph() || proto.ir_version() <= 0) {
    raise(origin, ": not an ONNX model (no graph or no ir_version)");
  }
  if (proto.ir_version() > kMaxIrVersion) {
    raise(origin, ": ONNX IR version ", proto.ir_version(), " is newer than this toolchain supports (",
          kMinIrVersion, "..", kMaxIrVersion, ")");
  }
  if (proto.ir_version() < kMinIrVersion) {
    raise(origin, ": ONNX IR version ", proto.ir_version(), " is too old (supported: ",
          kMinIrVersion, "..", kMaxIrVersion, ")");
  }
  const int64_t opset = default_opset(proto);
  if (opset <= 0) raise(origin, ": the model imports no ai.onnx opset");
  if (opset > kMaxOpset) {
    raise(origin, ": opset ", opset, " is newer than this toolchain supports (1..", kMaxOpset, ")");
  }

  inline_external_data(proto.mutable_graph(), origin, base_dir);
  sort_graph_proto(proto.mutable_graph());

  // libonnx 1.12 knows IR version 8 and opset 17; newer models skip its checker and inference
  // and rely on the IR verifier and our own shape rules.
  const bool libonnx_knows = opset <= 17 && proto.ir_version() <= 8;
  if (options.run_checker && libonnx_knows) {
    try {
      onnx::checker::check_model(proto);
    } catch (const std::exception& e) {
      std::string message = e.what();
      while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
      raise(origin, ": onnx checker: ", message);
    }
  }
  if (options.infer_shapes && libonnx_knows) {
    // false: inconsistent declared shapes; keep what the file says and let our rules fill the rest.
    (void)infer_shapes_with_libonnx(proto);
  }

  ir::Model model;
  model.ir_version = proto.ir_version();
  for (const auto& o : proto.opset_import()) {
    model.opsets.push_back({o.domain() == "ai.onnx" ? "" : o.domain(), o.version()});
  }
  model.producer_name = proto.producer_name();
  model.producer_version = proto.producer_version();
  model.domain = proto.domain();
  model.model_version = proto.model_version();
  model.doc_string = proto.doc_string();
  for (const auto& m : proto.metadata_props()) model.metadata.emplace_back(m.key(), m.value());
  if (proto.functions_size() > 0) {
    raise(origin, ": model-local functions are not supported (", proto.functions(0).name(), ")");
  }
  GraphLoader loader{origin, base_dir, options, {}};
  model.graph = loader.load_graph(proto.graph(), nullptr);

  if (options.fold_constant_nodes) fold_constant_nodes(*model.graph);
  ir::verify_or_throw(*model.graph, origin);
  if (options.infer_shapes) apply_own_shape_rules(model, *model.graph);
  return model;
}

ir::Model load_onnx_from_bytes(std::string_view bytes, const std::string& origin,
                               const std::filesystem::path& base_dir,
                               const OnnxLoadOptions& options) {
  if (bytes.empty()) raise(origin, ": empty file, not an ONNX model");
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max())) {
    raise(origin, ": file is larger than 2 GiB; store weights as external data");
  }
  onnx::ModelProto proto;
  if (!proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    raise(origin, ": not an ONNX model, or the file is truncated (protobuf parse failed)");
  }
  return model_from_proto(proto, origin, base_dir, options);
}

ir::Model load_onnx(const std::filesystem::path& path, const OnnxLoadOptions& options) {
  const std::string bytes = read_file(path);
  return load_onnx_from_bytes(bytes, path.string(), path.parent_path(), options);
}

// ------------------------------------------------------------------ IR → proto

namespace {

void attribute_to_proto(const std::string& name, const kernels::AttributeValue& value,
                        onnx::AttributeProto* a) {
  a->set_name(name);
  struct Visitor {
    onnx::AttributeProto* a;
    void operator()(int64_t i) const {
      a->set_type(onnx::AttributeProto::INT);
      a->set_i(i);
    }
    void operator()(float f) const {
      a->set_type(onnx::AttributeProto::FLOAT);
      a->set_f(f);
    }
    void operator()(const std::string& s) const {
      a->set_type(onnx::AttributeProto::STRING);
      a->set_s(s);
    }
    void operator()(const Tensor& t) const {
      a->set_type(onnx::AttributeProto::TENSOR);
      tensor_to_proto(t, "", a->mutable_t());
    }
    void operator()(const std::vector<int64_t>& v) const {
      a->set_type(onnx::AttributeProto::INTS);
      for (int64_t i : v) a->add_ints(i);
    }
    void operator()(const std::vector<float>& v) const {
      a->set_type(onnx::AttributeProto::FLOATS);
      for (float f : v) a->add_floats(f);
    }
    void operator()(const std::vector<std::string>& v) const {
      a->set_type(onnx::AttributeProto::STRINGS);
      for (const auto& s : v) a->add_strings(s);
    }
    void operator()(const std::vector<Tensor>& v) const {
      a->set_type(onnx::AttributeProto::TENSORS);
      for (const auto& t : v) tensor_to_proto(t, "", a->add_tensors());
    }
  };
  std::visit(Visitor{a}, value);
}

void value_info_to_proto(const ir::Value& v, onnx::ValueInfoProto* info) {
  info->set_name(v.name());
  if (!v.doc_string().empty()) info->set_doc_string(v.doc_string());
  if (v.type().dtype != DataType::kUndefined || v.type().shape) {
    type_to_proto(v.type(), info->mutable_type());
  }
}

void graph_to_proto(const ir::Graph& g, onnx::GraphProto* gp) {
  gp->set_name(g.name());
  if (!g.doc_string().empty()) gp->set_doc_string(g.doc_string());
  for (const ir::Value* c : g.constants()) tensor_to_proto(*c->constant(), c->name(), gp->add_initializer());
  for (const ir::Value* in : g.inputs()) value_info_to_proto(*in, gp->add_input());
  for (const ir::Value* out : g.outputs()) value_info_to_proto(*out, gp->add_output());
  for (const ir::Node* n : g.nodes()) {
    auto* np = gp->add_node();
    if (!n->name().empty()) np->set_name(n->name());
    np->set_op_type(n->op_type());
    if (!n->domain().empty()) np->set_domain(n->domain());
    if (!n->doc_string().empty()) np->set_doc_string(n->doc_string());
    for (const ir::Value* in : n->inputs()) np->add_input(in == nullptr ? "" : in->name());
    for (const ir::Value* out : n->outputs()) np->add_output(out == nullptr ? "" : out->name());
    for (const auto& [name, value] : n->attrs().items()) attribute_to_proto(name, value, np->add_attribute());
    for (const ir::GraphAttribute& ga : n->graph_attrs()) {
      auto* a = np->add_attribute();
      a->set_name(ga.name);
      if (ga.is_list) {
        a->set_type(onnx::AttributeProto::GRAPHS);
        for (const auto& sub : ga.graphs) graph_to_proto(*sub, a->add_graphs());
      } else {
        a->set_type(onnx::AttributeProto::GRAPH);
        graph_to_proto(*ga.graphs.front(), a->mutable_g());
      }
    }
  }
  // An annotation without a shape (a Loop output of unknown rank) is left out: the onnx checker
  // wants a shape in every value_info of the main graph.
  for (const ir::Value* v : g.values()) {
    if (g.is_annotated(v) && !g.is_input(v) && !g.is_output(v) && !v->is_constant() && v->type().shape) {
      value_info_to_proto(*v, gp->add_value_info());
    }
  }
}

}  // namespace

void model_to_proto(const ir::Model& model, onnx::ModelProto* proto) {
  proto->Clear();
  proto->set_ir_version(model.ir_version);
  for (const ir::OpsetImport& o : model.opsets) {
    auto* op = proto->add_opset_import();
    op->set_domain(o.domain);
    op->set_version(o.version);
  }
  if (!model.producer_name.empty()) proto->set_producer_name(model.producer_name);
  if (!model.producer_version.empty()) proto->set_producer_version(model.producer_version);
  if (!model.domain.empty()) proto->set_domain(model.domain);
  if (model.model_version != 0) proto->set_model_version(model.model_version);
  if (!model.doc_string.empty()) proto->set_doc_string(model.doc_string);
  for (const auto& [k, v] : model.metadata) {
    auto* m = proto->add_metadata_props();
    m->set_key(k);
    m->set_value(v);
  }
  graph_to_proto(*model.graph, proto->mutable_graph());
}

std::string serialize_onnx(const ir::Model& model) {
  onnx::ModelProto proto;
  model_to_proto(model, &proto);
  std::string bytes;
  if (proto.ByteSizeLong() > static_cast<size_t>(std::numeric_limits<int>::max())) {
    raise("model '", model.graph->name(), "' is larger than 2 GiB and cannot be serialized inline");
  }
  proto.SerializeToString(&bytes);
  return bytes;
}

void save_onnx(const ir::Model& model, const std::filesystem::path& path) {
  write_file_atomically(path, serialize_onnx(model));
}

// ------------------------------------------------------------------ normalisation

void fold_constant_nodes(ir::Graph& graph) {
  std::vector<ir::Node*> constants;
  for (ir::Node* n : graph.nodes()) {
    if (n->op_type() == "Constant" && n->domain().empty() && n->outputs().size() == 1 &&
        n->output(0) != nullptr) {
      constants.push_back(n);
    }
  }
  for (ir::Node* n : constants) {
    const kernels::AttributeMap& a = n->attrs();
    std::optional<Tensor> data;
    if (const auto* v = a.find("value"); v && std::holds_alternative<Tensor>(*v)) {
      data = std::get<Tensor>(*v);
    } else if (const auto* f = a.find("value_float"); f && std::holds_alternative<float>(*f)) {
      data = Tensor::scalar(std::get<float>(*f));
    } else if (const auto* i = a.find("value_int"); i && std::holds_alternative<int64_t>(*i)) {
      data = Tensor::scalar(std::get<int64_t>(*i));
    } else if (const auto* fs = a.find("value_floats");
               fs && std::holds_alternative<std::vector<float>>(*fs)) {
      const auto& floats = std::get<std::vector<float>>(*fs);
      data = Tensor::from_values<float>({static_cast<int64_t>(floats.size())}, floats);
    } else if (const auto* is = a.find("value_ints");
               is && std::holds_alternative<std::vector<int64_t>>(*is)) {
      const auto& ints = std::get<std::vector<int64_t>>(*is);
      data = Tensor::from_values<int64_t>({static_cast<int64_t>(ints.size())}, ints);
    }
    if (!data) continue;  // leave unusual Constant nodes to the Constant kernel
    ir::Value* out = n->output(0);
    const std::string name = out->name();
    // Move the uses (and a graph output) to a new constant value, then take over the name.
    ir::Value* c = graph.add_constant(graph.unique_value_name(name + "__folded"), *data);
    graph.replace_all_uses(out, c);
    graph.remove_node(n);
    graph.rename_value(c, name);
  }
}

}  // namespace openbpu::frontend
