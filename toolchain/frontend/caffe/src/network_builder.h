// Building an IR graph from Caffe layers: blob versions (SSA for in-place layers), the
// .caffemodel's weights, node and value naming, graph outputs.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "openbpu/caffe/caffe.pb.h"
#include "openbpu/common/error.h"
#include "openbpu/ir/graph.h"

namespace openbpu::frontend::caffe_import {

using kernels::AttributeMap;
using kernels::Shape;
using kernels::Tensor;

class NetworkBuilder;

// One layer being converted: its bottoms (already resolved to the current blob versions), its
// weights, and the nodes it adds. Converters (layers.cc) see only this.
class LayerContext {
 public:
  LayerContext(NetworkBuilder& net, const caffe::LayerParameter& layer,
               std::vector<ir::Value*> inputs, std::vector<Shape> input_shapes);

  const caffe::LayerParameter& layer() const { return layer_; }
  const std::string& name() const { return layer_.name(); }
  // "layer 'conv1' (Convolution)"
  std::string describe() const;

  // An error about the layer's definition: "<prototxt>: layer 'x' (Type): <message>".
  template <typename... Args>
  [[noreturn]] void fail(Args&&... args) const {
    raise(prototxt_origin(), ": ", describe(), ": ", std::forward<Args>(args)...);
  }

  size_t num_inputs() const { return inputs_.size(); }
  size_t num_outputs() const { return static_cast<size_t>(layer_.top_size()); }
  ir::Value* input(size_t i) const { return inputs_.at(i); }
  const Shape& input_shape(size_t i) const { return input_shapes_.at(i); }
  int64_t input_rank(size_t i) const { return static_cast<int64_t>(input_shapes_.at(i).size()); }
  // Errors unless the number of bottoms / tops is in [min, max].
  void require_inputs(size_t min, size_t max) const;
  void require_outputs(size_t min, size_t max) const;
  // A Caffe axis (negative counts from the end) as an index into a tensor of `rank`.
  int64_t axis(int64_t value, int64_t rank, const char* what) const;

  // ---- weights (from the .caffemodel layer of the same name)
  // Errors unless the caffemodel has this layer with `count` blobs.
  void require_blobs(size_t count, const char* roles) const;
  // Blob i as a float tensor of `shape`; error if its element count differs.
  Tensor blob(size_t i, const Shape& shape, const char* role) const;

  // ---- graph construction
  // A float/int initializer named "<layer>/<role>".
  ir::Value* constant(const std::string& role, Tensor data);
  ir::Value* int64_constant(const std::string& role, const std::vector<int64_t>& values);
  ir::Value* float_scalar(const std::string& role, float value);
  // Adds a node; `suffix` "" names it after the layer (the layer's main node), otherwise
  // "<layer>/<suffix>". One output per shape, typed float32.
  std::vector<ir::Value*> add_node(const std::string& op, std::vector<ir::Value*> inputs,
                                   AttributeMap attrs, const std::vector<Shape>& output_shapes,
                                   const std::string& suffix = "");
  ir::Value* add_node(const std::string& op, std::vector<ir::Value*> inputs, AttributeMap attrs,
                      const Shape& output_shape, const std::string& suffix = "");
  // Makes `value` (of `shape`) the new version of top i.
  void set_output(size_t i, ir::Value* value, const Shape& shape);
  // Declares top i a graph input of `shape` (Input layers).
  void set_graph_input(size_t i, const Shape& shape);

 private:
  const std::string& prototxt_origin() const;

  NetworkBuilder& net_;
  const caffe::LayerParameter& layer_;
  std::vector<ir::Value*> inputs_;
  std::vector<Shape> input_shapes_;
  std::set<const ir::Value*> created_;  // values this layer's nodes produced
};

class NetworkBuilder {
 public:
  // Builds into `graph`. `weights` is the parsed .caffemodel; both must outlive the builder.
  NetworkBuilder(ir::Graph& graph, std::string prototxt_origin, std::string caffemodel_origin,
                 const caffe::NetParameter& weights);

  ir::Graph& graph() { return graph_; }
  const std::string& prototxt_origin() const { return prototxt_origin_; }
  const std::string& caffemodel_origin() const { return caffemodel_origin_; }

  // A graph input for blob `name` (top-level input: fields and Input layers).
  void add_graph_input(const std::string& name, const Shape& shape, const std::string& where);
  // Converts one layer (resolving its bottoms, dispatching on its type).
  void add_layer(const caffe::LayerParameter& layer);
  // Picks graph outputs and final names. Errors if the network has no input.
  void finish();

  // The .caffemodel layer holding `name`'s weights, or nullptr.
  const caffe::LayerParameter* weights_of(const std::string& name) const;

 private:
  friend class LayerContext;
  struct Blob {
    ir::Value* value = nullptr;
    Shape shape;
    bool read = false;        // read by a layer since its last write
    bool from_layer = false;  // last written by a layer (not a graph input declaration)
    std::string writer;       // layer that wrote it last
    int64_t written_at = 0;   // sequence number of the last write
  };
  void write_blob(const std::string& name, ir::Value* value, const Shape& shape,
                  const std::string& writer, bool from_layer);
  // Gives `value` the name `name` (moving an unrelated value that holds it out of the way).
  // False if `value` is a graph input or the name belongs to a graph input.
  bool claim_name(ir::Value* value, const std::string& name);

  std::string prototxt_origin_;
  std::string caffemodel_origin_;
  std::map<std::string, const caffe::LayerParameter*> weights_;
  ir::Graph& graph_;
  std::map<std::string, Blob> blobs_;
  int64_t sequence_ = 0;
};

}  // namespace openbpu::frontend::caffe_import
