#include "openbpu/pipeline/preprocess.h"

#include "openbpu/common/error.h"

namespace openbpu::pipeline {

using config::InputType;
using config::NormType;

std::string intermediate_type_name(InputType rt) {
  switch (rt) {
    case InputType::kNv12:
    case InputType::kYuv444: return "yuv444_128";
    case InputType::kRgb: return "RGB_128";
    case InputType::kBgr: return "BGR_128";
    case InputType::kGray: return "GRAY_128";
    case InputType::kFeaturemap: return "featuremap";
  }
  return "featuremap";
}

namespace {

std::string type_string(InputType t) {
  switch (t) {
    case InputType::kRgb: return "rgb";
    case InputType::kBgr: return "bgr";
    case InputType::kYuv444: return "yuv444";
    case InputType::kNv12: return "nv12";
    case InputType::kGray: return "gray";
    case InputType::kFeaturemap: return "featuremap";
  }
  return "featuremap";
}

std::vector<float> to_floats(const std::vector<double>& v) { return {v.begin(), v.end()}; }

}  // namespace

std::vector<std::string> insert_preprocess(ir::Model& model, const config::CompileConfig& config) {
  ir::Graph& g = *model.graph;
  std::vector<std::string> lines;
  std::vector<ir::Value*> inputs = g.inputs();
  bool added = false;
  for (const config::InputSpec& spec : config.input.inputs) {
    ir::Value* old = g.find_value(spec.name);
    if (old == nullptr || !g.is_input(old)) raise("model input '", spec.name, "' not found");
    const ir::TensorType train_type = ir::TensorType::of(
        old->type().dtype == kernels::DataType::kUndefined ? kernels::DataType::kFloat32 : old->type().dtype,
        spec.shape);
    const bool image = spec.type_train != InputType::kFeaturemap;
    const bool normalize = spec.norm_type != NormType::kNoPreprocess;
    if (!image && !normalize) {
      old->set_type(train_type);
      lines.push_back(str_cat("input '", spec.name, "': featuremap ", train_type.to_string(), ", no preprocessing"));
      continue;
    }
    kernels::AttributeMap attrs;
    attrs.set("input_type_rt", type_string(spec.type_rt));
    attrs.set("input_type_train", type_string(spec.type_train));
    attrs.set("input_layout", std::string(spec.layout_train == config::Layout::kNhwc ? "NHWC" : "NCHW"));
    const bool use_mean = spec.norm_type == NormType::kDataMean || spec.norm_type == NormType::kDataMeanAndScale;
    const bool use_scale = spec.norm_type == NormType::kDataScale || spec.norm_type == NormType::kDataMeanAndScale;
    attrs.set("mean", use_mean ? to_floats(spec.mean) : std::vector<float>{});
    attrs.set("scale", use_scale ? to_floats(spec.scale) : std::vector<float>{});
    attrs.set("color_range", std::string(spec.space_and_range == config::InputSpaceAndRange::kBt601Video ? "video" : "full"));

    // The original input becomes the preprocessed tensor; a new input takes its name.
    g.rename_value(old, g.unique_value_name(spec.name + "_preprocessed"));
    old->set_type(train_type);
    ir::TensorType in_type = train_type;
    if (image) in_type.dtype = kernels::DataType::kInt8;
    ir::Value* fresh = g.add_value(spec.name, in_type);
    for (ir::Value*& v : inputs) {
      if (v == old) v = fresh;
    }
    ir::Node* first = g.nodes().empty() ? nullptr : g.nodes().front();
    g.add_node_with_outputs({"HzPreprocess", {fresh}, {}, "HZ_PREPROCESS_FOR_" + spec.name, "horizon", attrs},
                            {old}, first);
    g.mark_annotated(old);
    added = true;
    lines.push_back(str_cat("input '", spec.name, "': ", image ? intermediate_type_name(spec.type_rt) : "featuremap",
                            " ", in_type.to_string(), " -> HzPreprocess -> ", type_string(spec.type_train), " ",
                            train_type.to_string()));
  }
  g.set_inputs(inputs);
  if (added) model.set_opset_version("horizon", 1);
  return lines;
}

}  // namespace openbpu::pipeline
