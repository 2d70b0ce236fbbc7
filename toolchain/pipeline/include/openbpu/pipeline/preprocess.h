// Stage 1: the original float model. Applies the configured input shapes and inserts an
// HzPreprocess node (docs/quantized_ops.md) before every input that needs one:
// - image inputs (input_type_train rgb/bgr/yuv444/gray): the graph input becomes the
//   intermediate type of input_type_rt (int8 = pixel − 128: yuv444_128 for nv12/yuv444,
//   RGB_128, BGR_128, GRAY_128) in input_layout_train, and HzPreprocess converts it to
//   input_type_train and applies norm_type's mean/scale;
// - featuremap inputs with a norm_type other than no_preprocess: float in, float out.
// The node is named HZ_PREPROCESS_FOR_<input>; the graph input keeps its name, and the tensor
// the model's first operators read is renamed <input>_preprocessed.
#pragma once

#include <string>
#include <vector>

#include "openbpu/config/compile_config.h"
#include "openbpu/ir/graph.h"

namespace openbpu::pipeline {

// The intermediate type name of an input_type_rt ("yuv444_128", "RGB_128", ..., "featuremap").
std::string intermediate_type_name(config::InputType rt);

// Applies input shapes and inserts the preprocessing; returns one log line per input.
std::vector<std::string> insert_preprocess(ir::Model& model, const config::CompileConfig& config);

}  // namespace openbpu::pipeline
