// Converters from Caffe layer types to ai.onnx (opset 11) nodes, one function per type.
#pragma once

#include <string_view>

#include "network_builder.h"

namespace openbpu::frontend::caffe_import {

using LayerConverter = void (*)(LayerContext& layer);

// The converter of a Caffe layer type ("Convolution", ...), or nullptr if unsupported.
LayerConverter find_layer_converter(std::string_view type);

}  // namespace openbpu::frontend::caffe_import
