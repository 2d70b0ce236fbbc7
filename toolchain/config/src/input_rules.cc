// Rules on an input's shape, shared by the parser and resolve_against_model().
#include "group_parsers.h"

namespace openbpu::config {

std::optional<int64_t> image_channels(InputType type) {
  switch (type) {
    case InputType::kGray: return 1;
    case InputType::kFeaturemap: return std::nullopt;
    default: return 3;
  }
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string out;
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? "x" : "") + std::to_string(shape[i]);
  return out;
}

void check_input_shape(const CompileConfig& config, size_t index, IssueList& issues) {
  const InputSpec& spec = config.input.inputs[index];
  const std::string at = input_prefix(config, index);
  const std::string shape = shape_text(spec.shape);
  auto error = [&](std::string_view group, std::string_view key, const std::string& text) {
    issues.add(group, key, at + text);
  };
  const bool image = spec.type_train != InputType::kFeaturemap;
  if (image && spec.shape.size() != 4) {
    error("input_parameters", "input_shape",
          "'" + shape + "' has rank " + std::to_string(spec.shape.size()) + "; image inputs of " +
              std::string(to_string(config.flavour)) + " are 4-D (NCHW or NHWC)");
    return;
  }
  // Featuremap inputs (speech, radar, recurrent state) may have rank 1 to 5; one that is not
  // 4-D has no channel axis to normalise, so it takes no mean or scale.
  if (!image && (spec.shape.empty() || spec.shape.size() > 5)) {
    error("input_parameters", "input_shape",
          "'" + shape + "' has rank " + std::to_string(spec.shape.size()) + "; featuremap inputs have rank 1 to 5" +
              (spec.shape.empty() ? " (a scalar setting such as a sample rate can be bound with fixed_inputs, "
                                    "e.g. 'sr=16000', or the checker's --fixed-input)"
                                  : ""));
    return;
  }
  if (!image && spec.shape.size() != 4 && spec.norm_type != NormType::kNoPreprocess) {
    error("input_parameters", "norm_type",
          "'" + std::string(to_string(spec.norm_type)) + "' needs a 4-D input; featuremap '" + shape +
              "' has rank " + std::to_string(spec.shape.size()) + ", so its norm_type must be 'no_preprocess'");
    return;
  }
  const bool nchw = spec.layout_train == Layout::kNchw;
  if (spec.shape.size() == 4) {
    const int64_t c = spec.shape[nchw ? 1 : 3];
    const int64_t h = spec.shape[nchw ? 2 : 1];
    const int64_t w = spec.shape[nchw ? 3 : 2];
    if (auto expected = image_channels(spec.type_train); expected && c != *expected) {
      error("input_parameters", "input_layout_train",
            "input_layout_train '" + std::string(to_string(spec.layout_train)) +
                "' reads the channels of " + shape + " at dim " + (nchw ? "1" : "3") +
                ", which is " + std::to_string(c) + ", but input_type_train '" +
                std::string(to_string(spec.type_train)) + "' has " + std::to_string(*expected) +
                (*expected == 1 ? " channel" : " channels") + " (check the layout)");
    }
    if ((spec.type_rt == InputType::kNv12 || spec.type_rt == InputType::kYuv444) &&
        (h % 2 != 0 || w % 2 != 0)) {
      error("input_parameters", "input_shape",
            std::string(to_string(spec.type_rt)) + " input needs even H and W; '" + shape +
                "' has H=" + std::to_string(h) + ", W=" + std::to_string(w));
    }
  }
  if (!image && spec.shape.size() >= 2) {
    const int64_t channels = spec.shape[nchw ? 1 : spec.shape.size() - 1];
    for (const auto& [key, values] :
         {std::pair{"mean_value", &spec.mean}, std::pair{"scale_value", &spec.scale}}) {
      if (values->size() > 1 && static_cast<int64_t>(values->size()) != channels) {
        error("input_parameters", key,
              std::to_string(values->size()) + " values; give 1 (all channels) or " +
                  std::to_string(channels) + " (one per channel of " + shape + ")");
      }
    }
  }
  if (config.input.input_batch > 1 && config.input.inputs.size() == 1 && spec.shape[0] != 1) {
    issues.add("input_parameters", "input_batch",
               "input_batch " + std::to_string(config.input.input_batch) +
                   " needs the first dim of input_shape to be 1; got '" + shape + "'");
  }
  if (!spec.name.empty()) {
    if (auto it = config.compiler.input_source.find(spec.name);
        it != config.compiler.input_source.end()) {
      if (auto problem = resizer_size_problem(config, spec, it->second)) {
        error("compiler_parameters", "input_source", *problem);
      }
    }
  }
}

}  // namespace openbpu::config
