#include "network_builder.h"

#include <algorithm>
#include <utility>

#include "layers.h"

namespace openbpu::frontend::caffe_import {

using ir::TensorType;
using kernels::DataType;

namespace {

// Shape of a stored blob: BlobShape, else the older four-axis fields, else its element count.
Shape blob_shape(const caffe::BlobProto& blob) {
  if (blob.has_shape()) return Shape(blob.shape().dim().begin(), blob.shape().dim().end());
  if (blob.has_num() || blob.has_channels() || blob.has_height() || blob.has_width()) {
    return {blob.num(), blob.channels(), blob.height(), blob.width()};
  }
  return {static_cast<int64_t>(std::max(blob.data_size(), blob.double_data_size()))};
}

int64_t blob_values(const caffe::BlobProto& blob) {
  return blob.data_size() > 0 ? blob.data_size() : blob.double_data_size();
}

}  // namespace

// ------------------------------------------------------------------ LayerContext

LayerContext::LayerContext(NetworkBuilder& net, const caffe::LayerParameter& layer,
                           std::vector<ir::Value*> inputs, std::vector<Shape> input_shapes)
    : net_(net),
      layer_(layer),
      inputs_(std::move(inputs)),
      input_shapes_(std::move(input_shapes)) {}

std::string LayerContext::describe() const {
  return str_cat("layer '", layer_.name(), "' (", layer_.type(), ")");
}

const std::string& LayerContext::prototxt_origin() const {
  return net_.prototxt_origin();
}

void LayerContext::require_inputs(size_t min, size_t max) const {
  const size_t n = num_inputs();
  if (n < min || n > max) {
    if (min == max) fail("has ", n, " bottoms, expected ", min);
    fail("has ", n, " bottoms, expected ", min, " to ", max);
  }
}

void LayerContext::require_outputs(size_t min, size_t max) const {
  const size_t n = num_outputs();
  if (n < min || n > max) {
    if (min == max) fail("has ", n, " tops, expected ", min);
    fail("has ", n, " tops, expected ", min, " to ", max);
  }
}

int64_t LayerContext::axis(int64_t value, int64_t rank, const char* what) const {
  if (value < -rank || value >= rank) {
    fail(what, " ", value, " is out of range for a ", rank, "-D bottom (shape ",
         kernels::shape_to_string(input_shape(0)), ")");
  }
  return value < 0 ? value + rank : value;
}

void LayerContext::require_blobs(size_t count, const char* roles) const {
  const caffe::LayerParameter* w = net_.weights_of(layer_.name());
  if (w == nullptr) {
    raise(net_.caffemodel_origin(), ": no weights for ", describe(),
          net_.weights_.empty() ? ": the caffemodel holds no layers at all"
                                : ": the caffemodel has no layer of that name");
  }
  const auto got = static_cast<size_t>(w->blobs_size());
  if (got == 0) {
    raise(net_.caffemodel_origin(), ": no weights for ", describe(),
          ": its layer in the caffemodel has no blobs (expected ", count, ": ", roles, ")");
  }
  if (got != count) {
    raise(net_.caffemodel_origin(), ": ", describe(), " has ", got, " blobs, expected ", count,
          " (", roles, ")");
  }
}

Tensor LayerContext::blob(size_t i, const Shape& shape, const char* role) const {
  const caffe::LayerParameter* w = net_.weights_of(layer_.name());
  const caffe::BlobProto& b = w->blobs(static_cast<int>(i));
  const int64_t expected = kernels::shape_element_count(shape);
  const int64_t got = blob_values(b);
  const Shape stored = blob_shape(b);
  if (got != expected) {
    raise(net_.caffemodel_origin(), ": ", describe(), " blob ", i, " (", role, ") has ", got,
          " values (stored shape ", kernels::shape_to_string(stored), "), expected ", expected,
          " for shape ", kernels::shape_to_string(shape));
  }
  Tensor t(DataType::kFloat32, shape);
  float* out = t.data<float>();
  if (b.data_size() > 0) {
    std::copy(b.data().begin(), b.data().end(), out);
  } else {
    for (int k = 0; k < b.double_data_size(); ++k) out[k] = static_cast<float>(b.double_data(k));
  }
  return t;
}

ir::Value* LayerContext::constant(const std::string& role, Tensor data) {
  ir::Graph& g = net_.graph();
  return g.add_constant(g.unique_value_name(layer_.name() + "/" + role), std::move(data));
}

ir::Value* LayerContext::int64_constant(const std::string& role,
                                        const std::vector<int64_t>& values) {
  return constant(role,
                  Tensor::from_values<int64_t>({static_cast<int64_t>(values.size())}, values));
}

ir::Value* LayerContext::float_scalar(const std::string& role, float value) {
  return constant(role, Tensor::scalar(value));
}

std::vector<ir::Value*> LayerContext::add_node(const std::string& op,
                                               std::vector<ir::Value*> inputs, AttributeMap attrs,
                                               const std::vector<Shape>& output_shapes,
                                               const std::string& suffix) {
  ir::Graph& g = net_.graph();
  const std::string base = suffix.empty() ? layer_.name() : layer_.name() + "/" + suffix;
  ir::NodeSpec spec;
  spec.op_type = op;
  spec.inputs = std::move(inputs);
  spec.name = g.unique_node_name(base);
  spec.attrs = std::move(attrs);
  for (size_t i = 0; i < output_shapes.size(); ++i) {
    // Distinct bases, so the unique names cannot collide with each other.
    spec.output_names.push_back(
        g.unique_value_name(output_shapes.size() == 1 ? base : str_cat(base, "/", i)));
  }
  ir::Node* node = g.add_node(std::move(spec));
  std::vector<ir::Value*> outputs = node->outputs();
  for (size_t i = 0; i < outputs.size(); ++i) {
    outputs[i]->set_type(TensorType::of(DataType::kFloat32, output_shapes[i]));
    created_.insert(outputs[i]);
  }
  return outputs;
}

ir::Value* LayerContext::add_node(const std::string& op, std::vector<ir::Value*> inputs,
                                  AttributeMap attrs, const Shape& output_shape,
                                  const std::string& suffix) {
  return add_node(op, std::move(inputs), std::move(attrs), std::vector<Shape>{output_shape}, suffix)
      .front();
}

void LayerContext::set_output(size_t i, ir::Value* value, const Shape& shape) {
  const std::string& top = layer_.top(static_cast<int>(i));
  if (created_.count(value) != 0) {
    // A version written by this layer: "<blob>/<layer>" until finish() names final versions.
    ir::Graph& g = net_.graph();
    const std::string name = top + "/" + layer_.name();
    if (value->name() != name) g.rename_value(value, g.unique_value_name(name));
    value->set_type(TensorType::of(DataType::kFloat32, shape));
  }
  net_.write_blob(top, value, shape, layer_.name(), /*from_layer=*/true);
}

void LayerContext::set_graph_input(size_t i, const Shape& shape) {
  net_.add_graph_input(layer_.top(static_cast<int>(i)), shape, describe());
}

// ------------------------------------------------------------------ NetworkBuilder

NetworkBuilder::NetworkBuilder(ir::Graph& graph, std::string prototxt_origin,
                               std::string caffemodel_origin, const caffe::NetParameter& weights)
    : prototxt_origin_(std::move(prototxt_origin)),
      caffemodel_origin_(std::move(caffemodel_origin)),
      graph_(graph) {
  // A training net may list a layer name twice (per phase); the one with blobs holds weights.
  for (const caffe::LayerParameter& layer : weights.layer()) {
    auto [it, inserted] = weights_.emplace(layer.name(), &layer);
    if (!inserted && it->second->blobs_size() == 0) it->second = &layer;
  }
}

const caffe::LayerParameter* NetworkBuilder::weights_of(const std::string& name) const {
  auto it = weights_.find(name);
  return it == weights_.end() ? nullptr : it->second;
}

void NetworkBuilder::add_graph_input(const std::string& name, const Shape& shape,
                                     const std::string& where) {
  if (name.empty()) raise(prototxt_origin_, ": ", where, ": an input has an empty name");
  if (blobs_.count(name) != 0) {
    raise(prototxt_origin_, ": ", where, ": input '", name, "' is declared twice");
  }
  for (int64_t d : shape) {
    if (d <= 0) {
      raise(prototxt_origin_, ": ", where, ": input '", name, "' has shape ",
            kernels::shape_to_string(shape), "; every dimension must be positive");
    }
  }
  ir::Value* v = graph_.find_value(name);
  if (v != nullptr) {
    // Only a temporary name can be in the way: move it.
    graph_.rename_value(v, graph_.unique_value_name(name + "/tmp"));
  }
  v = graph_.add_value(name, TensorType::of(DataType::kFloat32, shape));
  graph_.add_input(v);
  write_blob(name, v, shape, "", /*from_layer=*/false);
}

void NetworkBuilder::write_blob(const std::string& name, ir::Value* value, const Shape& shape,
                                const std::string& writer, bool from_layer) {
  Blob& b = blobs_[name];
  b.value = value;
  b.shape = shape;
  b.read = false;
  b.from_layer = from_layer;
  b.writer = writer;
  b.written_at = ++sequence_;
}

void NetworkBuilder::add_layer(const caffe::LayerParameter& layer) {
  if (layer.name().empty()) {
    // Node and value names, and the weights' lookup, come from the layer's name.
    raise(prototxt_origin_, ": a layer of type '", layer.type(),
          "' has no name; every layer needs a non-empty name: (its weights are found by it)");
  }
  const std::string where = str_cat("layer '", layer.name(), "' (", layer.type(), ")");
  const LayerConverter convert = find_layer_converter(layer.type());
  if (convert == nullptr) {
    raise(prototxt_origin_, ": ", where, ": layer type '", layer.type(),
          "' is not supported by this frontend (see caffe_model.h for the supported types)");
  }
  std::vector<ir::Value*> inputs;
  std::vector<Shape> shapes;
  for (const std::string& bottom : layer.bottom()) {
    auto it = blobs_.find(bottom);
    if (it == blobs_.end()) {
      raise(prototxt_origin_, ": ", where, ": bottom '", bottom,
            "' is not produced by any earlier layer or declared as an input");
    }
    inputs.push_back(it->second.value);
    shapes.push_back(it->second.shape);
  }
  // Reads come before writes: an in-place layer reads the previous version of its blob.
  for (const std::string& bottom : layer.bottom()) blobs_[bottom].read = true;
  for (const std::string& top : layer.top()) {
    if (top.empty()) raise(prototxt_origin_, ": ", where, ": a top has an empty name");
  }
  LayerContext context(*this, layer, std::move(inputs), std::move(shapes));
  convert(context);
}

bool NetworkBuilder::claim_name(ir::Value* value, const std::string& name) {
  if (value->name() == name) return true;
  if (graph_.is_input(value)) return false;
  if (ir::Value* holder = graph_.find_value(name)) {
    if (graph_.is_input(holder)) return false;
    const std::string owner = holder->producer() != nullptr ? holder->producer()->name() : "value";
    graph_.rename_value(holder, graph_.unique_value_name(name + "/" + owner));
  }
  graph_.rename_value(value, name);
  return true;
}

void NetworkBuilder::finish() {
  if (graph_.inputs().empty()) {
    raise(prototxt_origin_,
          ": the network declares no input (no Input layer and no top-level input: field)");
  }
  // Outputs: tops written by a layer and not read afterwards, in the order of their last write.
  std::vector<std::pair<int64_t, std::string>> outputs;
  for (const auto& [name, blob] : blobs_) {
    if (blob.from_layer && !blob.read) outputs.emplace_back(blob.written_at, name);
  }
  std::sort(outputs.begin(), outputs.end());
  if (outputs.empty()) raise(prototxt_origin_, ": the network has no output (every top is read)");

  std::set<const ir::Value*> claimed;
  auto name_is_claimed = [&](const std::string& name) {
    const ir::Value* holder = graph_.find_value(name);
    return holder != nullptr && claimed.count(holder) != 0;
  };
  for (const auto& [sequence, name] : outputs) {
    const Blob& blob = blobs_.at(name);
    ir::Value* v = blob.value;
    if (claimed.count(v) == 0 && !name_is_claimed(name) && claim_name(v, name)) {
      claimed.insert(v);
      graph_.add_output(v);
      continue;
    }
    // The blob is another blob (or an input) under a new name: give it its own value.
    ir::Value* holder = graph_.find_value(name);
    std::string out_name = name;
    if (holder != nullptr) {
      if (graph_.is_input(holder) || claimed.count(holder) != 0) {
        out_name = graph_.unique_value_name(name + "/out");
      } else {
        graph_.rename_value(holder, graph_.unique_value_name(name + "/value"));
      }
    }
    ir::NodeSpec spec;
    spec.op_type = "Identity";
    spec.inputs = {v};
    spec.output_names = {out_name};
    spec.name = graph_.unique_node_name(blob.writer.empty() ? name : blob.writer);
    ir::Value* out = graph_.add_node(std::move(spec))->output(0);
    out->set_type(v->type());
    claimed.insert(out);
    graph_.add_output(out);
  }
  // Final versions of the other blobs take the blob's name where it is free to take.
  std::vector<std::pair<int64_t, std::string>> rest;
  for (const auto& [name, blob] : blobs_) {
    if (blob.from_layer) rest.emplace_back(blob.written_at, name);
  }
  std::sort(rest.begin(), rest.end());
  for (const auto& [sequence, name] : rest) {
    ir::Value* v = blobs_.at(name).value;
    if (claimed.count(v) != 0 || name_is_claimed(name)) continue;
    if (claim_name(v, name)) claimed.insert(v);
  }
}

}  // namespace openbpu::frontend::caffe_import
