// model_parameters.
#include <algorithm>

#include "config_keys.h"
#include "group_parsers.h"

namespace openbpu::config {
namespace {

std::string missing_keys_text(std::vector<std::string> keys) {
  std::sort(keys.begin(), keys.end());
  return "Missing keys: " + quoted_list(keys);
}

}  // namespace

void parse_model_parameters(YamlGroup& g, ParseContext& ctx, ParseState& state) {
  ModelParameters& m = ctx.config.model;
  std::vector<std::string> missing;

  // The model files: onnx_model for onnx; caffe_model and prototxt for caffe.
  auto onnx_model = g.text("onnx_model");
  auto caffe_model = g.text("caffe_model");
  auto prototxt = g.text("prototxt");
  if (ctx.model_type == ModelType::kOnnx) {
    if (onnx_model)
      m.onnx_model = *onnx_model;
    else
      if (!g.given("onnx_model")) missing.push_back("onnx_model");
    if (caffe_model || prototxt) {
      ctx.warn("model_parameters: caffe_model/prototxt are ignored for an onnx model");
    }
  } else {
    if (caffe_model)
      m.caffe_model = *caffe_model;
    else
      if (!g.given("caffe_model")) missing.push_back("caffe_model");
    if (prototxt)
      m.prototxt = *prototxt;
    else
      if (!g.given("prototxt")) missing.push_back("prototxt");
    if (onnx_model) ctx.warn("model_parameters: onnx_model is ignored for a caffe model");
  }

  if (auto raw = g.text("march")) {
    const auto allowed = marches_of(ctx.flavour);
    auto parsed = parse_enum<March>(*raw);
    if (parsed && std::find(allowed.begin(), allowed.end(), *parsed) != allowed.end()) {
      m.march = *parsed;
      state.march_known = true;
    } else if (parsed) {
      const bool compile_march = ctx.flavour == ConfigFlavour::kHbMapper;
      g.error("march", "'" + *raw + "' is a march of " +
                           (compile_march ? "hb_compile" : "hb_mapper") + "; " +
                           std::string(to_string(ctx.flavour)) + " accepts " +
                           quoted_list(spellings_of<March>(allowed)));
    } else {
      g.error("march", not_one_of(*raw, spellings_of<March>(allowed)));
    }
  } else {
    if (!g.given("march")) missing.push_back("march");
  }

  if (auto prefix = g.text("output_model_file_prefix")) {
    if (prefix->find('/') != std::string::npos || prefix->find('\\') != std::string::npos) {
      g.error("output_model_file_prefix",
              "'" + *prefix + "' must be a file name prefix inside working_dir, without '/'");
    } else {
      m.output_model_file_prefix = *prefix;
    }
  } else {
    if (!g.given("output_model_file_prefix")) missing.push_back("output_model_file_prefix");
  }
  if (!missing.empty()) g.group_error(missing_keys_text(missing));

  if (auto dir = g.text("working_dir")) m.working_dir = *dir;
  if (auto dump = g.flag("layer_out_dump")) m.layer_out_dump = *dump;
  if (auto nodes = g.items("output_nodes")) m.output_nodes = *nodes;
  if (auto types = g.items("remove_node_type")) {
    for (const auto& t : *types) {
      if (auto v = g.choice_from_text<RemovableNodeType>("remove_node_type", t)) {
        m.remove_node_type.push_back(*v);
      }
    }
  }
  if (auto names = g.items("remove_node_name")) m.remove_node_name = *names;
  if (auto modes = g.items("debug_mode")) {
    for (const auto& mode : *modes) {
      if (auto v = g.choice_from_text<DebugMode>("debug_mode", mode)) m.debug_mode.push_back(*v);
    }
  }
  if (auto node = g.value("node_info")) {
    m.node_info = parse_node_info(*node, g, "node_info");
    state.node_info_given = true;
    state.node_info_group = "model_parameters";
  }
  if (auto node = g.value("set_node_data_type")) {
    m.set_node_data_type = parse_set_node_data_type(*node, g, "set_node_data_type");
  }
  if (auto level = g.choice<LogLevel>("log_level")) m.log_level = level;
}

void parse_custom_op(YamlGroup& g, ParseContext& ctx) {
  CustomOp op;
  if (auto method = g.choice<CustomOpMethod>("custom_op_method")) op.custom_op_method = *method;
  if (auto files = g.items("op_register_files")) {
    for (const auto& file : *files) {
      if (!file.ends_with(".py")) {
        g.error("op_register_files", "'" + file + "' is not a .py file");
      }
    }
    op.op_register_files = *files;
  }
  if (auto dir = g.text("custom_op_dir")) {
    if (dir->starts_with("/")) {
      g.error("custom_op_dir", "'" + *dir + "' must be a relative path");
    }
    op.custom_op_dir = *dir;
  }
  ctx.config.custom_op = op;
}

}  // namespace openbpu::config
