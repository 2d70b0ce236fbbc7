#include "openbpu/frontend/caffe_model.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/text_format.h>

#include <algorithm>
#include <limits>

#include "layers.h"
#include "network_builder.h"
#include "openbpu/common/atomic_file.h"
#include "openbpu/frontend/onnx_model.h"

namespace openbpu::frontend {

namespace {

namespace fs = std::filesystem;
using caffe_import::NetworkBuilder;
using kernels::Shape;

// Keeps the first error of the text parser, with 1-based line and column.
class FirstErrorCollector : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    if (!has_error_) {
      has_error_ = true;
      text_ = str_cat(line + 1, ":", column + 1, ": ", message);
    }
  }
  void AddWarning(int, google::protobuf::io::ColumnNumber, const std::string&) override {}
  bool has_error() const { return has_error_; }
  const std::string& text() const { return text_; }

 private:
  bool has_error_ = false;
  std::string text_;
};

caffe::NetParameter parse_prototxt(std::string_view text, const std::string& origin) {
  if (text.size() > static_cast<size_t>(std::numeric_limits<int>::max())) {
    raise(origin, ": file is larger than 2 GiB, which protobuf cannot read");
  }
  caffe::NetParameter net;
  google::protobuf::TextFormat::Parser parser;
  FirstErrorCollector errors;
  parser.RecordErrorsTo(&errors);
  // Caffe forks add layer types and parameters; fields this frontend does not model are
  // skipped (a layer whose type is unsupported is reported by name later).
  parser.AllowUnknownField(true);
  google::protobuf::io::ArrayInputStream stream(text.data(), static_cast<int>(text.size()));
  if (!parser.Parse(&stream, &net)) {
    raise(origin, ":", errors.has_error() ? errors.text() : std::string(" cannot parse"),
          " (the network text does not parse as a Caffe NetParameter)");
  }
  if (net.layer_size() == 0 && net.layers_size() > 0) {
    raise(origin,
          ": uses the V1 layer format ('layers { ... }'), which this frontend does "
          "not read; convert it with Caffe's upgrade_net_proto_text tool first");
  }
  return net;
}

caffe::NetParameter parse_caffemodel(std::string_view bytes, const std::string& origin) {
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max())) {
    raise(origin, ": file is larger than 2 GiB, which protobuf cannot read");
  }
  caffe::NetParameter net;
  if (!net.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    raise(origin,
          ": not a binary Caffe NetParameter, or the file is truncated "
          "(protobuf parse failed)");
  }
  if (net.layer_size() == 0 && net.layers_size() > 0) {
    raise(origin,
          ": uses the V1 layer format (field 'layers'), which this frontend does "
          "not read; convert it with Caffe's upgrade_net_proto_binary tool first");
  }
  return net;
}

// Whether Caffe would instantiate the layer in the TEST phase (include/exclude rules; only the
// phase of a rule is interpreted, a rule without a phase matches).
bool in_test_phase(const caffe::LayerParameter& layer) {
  auto matches = [](const caffe::NetStateRule& rule) {
    return !rule.has_phase() || rule.phase() == caffe::TEST;
  };
  if (!layer.include().empty()) {
    return std::any_of(layer.include().begin(), layer.include().end(), matches);
  }
  return std::none_of(layer.exclude().begin(), layer.exclude().end(), matches);
}

// Every layer type is checked before any layer is converted, so that an unsupported type is
// reported even when an earlier layer has a problem with its weights.
void check_layer_types(const std::vector<const caffe::LayerParameter*>& layers,
                       const std::string& origin) {
  std::vector<const caffe::LayerParameter*> unsupported;
  for (const caffe::LayerParameter* layer : layers) {
    if (caffe_import::find_layer_converter(layer->type()) == nullptr) unsupported.push_back(layer);
  }
  if (unsupported.empty()) return;
  const caffe::LayerParameter& first = *unsupported.front();
  std::string others;
  for (size_t i = 1; i < unsupported.size(); ++i) {
    others += str_cat(i == 1 ? "; also unsupported: " : ", ", "'", unsupported[i]->name(), "' (",
                      unsupported[i]->type(), ")");
  }
  raise(origin, ": layer '", first.name(), "' (", first.type(), "): layer type '", first.type(),
        "' is not supported by this frontend (see caffe_model.h for the supported types)", others);
}

// Top-level "input:" declarations with input_shape or input_dim.
void add_declared_inputs(const caffe::NetParameter& net, NetworkBuilder& builder,
                         const std::string& origin) {
  const int n = net.input_size();
  if (n == 0) {
    if (net.input_shape_size() > 0 || net.input_dim_size() > 0) {
      raise(origin, ": input_shape/input_dim are given without an input: name");
    }
    return;
  }
  if (net.input_shape_size() > 0) {
    if (net.input_shape_size() != n) {
      raise(origin, ": ", n, " inputs but ", net.input_shape_size(), " input_shape entries");
    }
    for (int i = 0; i < n; ++i) {
      const auto& dims = net.input_shape(i).dim();
      builder.add_graph_input(net.input(i), Shape(dims.begin(), dims.end()),
                              str_cat("input '", net.input(i), "'"));
    }
    return;
  }
  if (net.input_dim_size() != 4 * n) {
    raise(origin, ": ", n, " inputs need ", 4 * n, " input_dim values (N, C, H, W each), found ",
          net.input_dim_size());
  }
  for (int i = 0; i < n; ++i) {
    const Shape shape(net.input_dim().begin() + 4 * i, net.input_dim().begin() + 4 * i + 4);
    builder.add_graph_input(net.input(i), shape, str_cat("input '", net.input(i), "'"));
  }
}

}  // namespace

ir::Model load_caffe(const fs::path& prototxt, const fs::path& caffemodel) {
  const std::string text = read_file(prototxt);
  const std::string bytes = read_file(caffemodel);
  return load_caffe_from_bytes(text, bytes, prototxt.string(), caffemodel.string());
}

ir::Model load_caffe_from_bytes(std::string_view prototxt_text, std::string_view caffemodel_bytes,
                                const std::string& prototxt_origin,
                                const std::string& caffemodel_origin) {
  const caffe::NetParameter net = parse_prototxt(prototxt_text, prototxt_origin);
  const caffe::NetParameter weights = parse_caffemodel(caffemodel_bytes, caffemodel_origin);
  const std::string& origin = prototxt_origin;

  ir::Model model;
  model.ir_version = 6;  // the IR version of opset-11 exporters
  model.opsets.push_back({"", kCaffeOnnxOpset});
  model.producer_name = "openbpu-caffe-frontend";
  model.graph->set_name(net.name().empty() ? "caffe" : net.name());

  std::vector<const caffe::LayerParameter*> layers;
  for (const caffe::LayerParameter& layer : net.layer()) {
    if (in_test_phase(layer)) layers.push_back(&layer);
  }
  check_layer_types(layers, origin);

  NetworkBuilder builder(*model.graph, origin, caffemodel_origin, weights);
  add_declared_inputs(net, builder, origin);
  for (const caffe::LayerParameter* layer : layers) builder.add_layer(*layer);
  builder.finish();

  // Through the ONNX loader: onnx checker, shape inference, IR verifier.
  return load_onnx_from_bytes(serialize_onnx(model), origin, fs::path(origin).parent_path());
}

}  // namespace openbpu::frontend
