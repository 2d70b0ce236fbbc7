// input_parameters: the per-input ';' lists and the rules between them.
#include <algorithm>

#include "group_parsers.h"

namespace openbpu::config {
namespace {

using ChannelValues = std::vector<std::optional<std::vector<double>>>;  // per input; nullopt = None

constexpr InputType kTrainTypes[] = {InputType::kRgb, InputType::kBgr, InputType::kYuv444,
                                     InputType::kGray, InputType::kFeaturemap};

// The input_type_rt values that can feed an input_type_train (the original's fixed table).
std::vector<InputType> rt_types_for(InputType train) {
  switch (train) {
    case InputType::kYuv444: return {InputType::kNv12, InputType::kYuv444};
    case InputType::kRgb:
    case InputType::kBgr:
      return {InputType::kNv12, InputType::kYuv444, InputType::kRgb, InputType::kBgr};
    case InputType::kGray: return {InputType::kGray};
    case InputType::kFeaturemap: return {InputType::kFeaturemap};
    case InputType::kNv12: return {};
  }
  return {};
}

std::optional<std::vector<int64_t>> shape_from_text(const std::string& text) {
  std::vector<int64_t> dims;
  std::string lower = lowercase(text);
  for (const auto& part : split_trimmed(lower, 'x')) {
    auto dim = int_from_text(part);
    if (!dim || *dim <= 0) return std::nullopt;
    dims.push_back(*dim);
  }
  return dims;
}

// The numbers of one entry: "103.94 116.78 123.68" (blanks or commas), or 'None'.
bool numbers_of_entry(const std::string& entry, std::optional<std::vector<double>>* out,
                      std::string* problem) {
  if (equals_ignoring_case(trimmed(entry), "none")) {
    *out = std::nullopt;
    return true;
  }
  std::string spaced = entry;
  std::replace(spaced.begin(), spaced.end(), ',', ' ');
  std::vector<double> values;
  size_t pos = 0;
  while (pos < spaced.size()) {
    const size_t start = spaced.find_first_not_of(" \t", pos);
    if (start == std::string::npos) break;
    const size_t end = spaced.find_first_of(" \t", start);
    const std::string token = spaced.substr(start, end == std::string::npos ? end : end - start);
    auto value = number_from_text(token);
    if (!value) {
      *problem = "'" + token + "' is not a number";
      return false;
    }
    values.push_back(*value);
    pos = end == std::string::npos ? spaced.size() : end;
  }
  if (values.empty()) {
    *problem = "an entry is empty; write 'None' for an input without values";
    return false;
  }
  *out = values;
  return true;
}

// mean_value / scale_value: 'a b c;None;d' or a number, or a list of numbers (one input's
// channels), or a list of entries (one per input).
std::optional<ChannelValues> parse_channel_values(YamlGroup& g, std::string_view key) {
  auto node = g.value(key);
  if (!node) return std::nullopt;
  ChannelValues entries;
  std::string problem;
  auto add_entry = [&](const std::string& text) {
    std::optional<std::vector<double>> values;
    if (!numbers_of_entry(text, &values, &problem)) return false;
    entries.push_back(values);
    return true;
  };
  if (node->IsScalar()) {
    for (const auto& entry : split_trimmed(node->Scalar(), ';')) {
      if (!add_entry(entry)) break;
    }
  } else if (node->IsSequence()) {
    const bool channel_list = std::all_of(node->begin(), node->end(), [](const YAML::Node& item) {
      return item.IsScalar() && number_from_text(item.Scalar()).has_value();
    });
    if (channel_list) {
      std::vector<double> values;
      for (const auto& item : *node) values.push_back(*number_from_text(item.Scalar()));
      entries.push_back(values);
    } else {
      for (const auto& item : *node) {
        if (item.IsScalar()) {
          if (!add_entry(item.Scalar())) break;
        } else if (item.IsSequence()) {
          std::string joined;
          for (const auto& v : item) joined += (v.IsScalar() ? v.Scalar() : "?") + " ";
          if (!add_entry(joined)) break;
        } else {
          problem = "expected numbers, got a mapping";
          break;
        }
      }
    }
  } else {
    problem = "expected numbers such as '103.94 116.78 123.68', got " + describe(*node);
  }
  if (!problem.empty()) {
    g.error(key, problem);
    return std::nullopt;
  }
  return entries;
}

// fixed_inputs: fixed_input_of() entries separated by ';' (or a list of them).
std::vector<FixedInput> parse_fixed_inputs(YamlGroup& g) {
  std::vector<FixedInput> out;
  const auto entries = g.items("fixed_inputs");
  if (!entries) return out;
  for (const std::string& entry : *entries) {
    std::string problem;
    std::optional<FixedInput> parsed = fixed_input_of(entry, &problem);
    if (!parsed) {
      g.error("fixed_inputs", problem);
      continue;
    }
    FixedInput& fixed = *parsed;
    if (std::any_of(out.begin(), out.end(), [&](const FixedInput& f) { return f.name == fixed.name; })) {
      g.error("fixed_inputs", "input '" + fixed.name + "' is fixed more than once");
      continue;
    }
    out.push_back(std::move(fixed));
  }
  return out;
}

struct Column {
  std::string_view key;
  bool required;
  std::optional<std::vector<std::string>> items;
};

}  // namespace

std::string input_label(const CompileConfig& config, size_t index) {
  const auto& inputs = config.input.inputs;
  if (index < inputs.size() && !inputs[index].name.empty()) {
    return "input '" + inputs[index].name + "'";
  }
  if (inputs.size() > 1) return "input #" + std::to_string(index + 1);
  return "";
}

std::string input_prefix(const CompileConfig& config, size_t index) {
  const std::string label = input_label(config, index);
  return label.empty() ? "" : label + ": ";
}

void parse_input_parameters(YamlGroup& g, ParseContext& ctx, ParseState& state) {
  InputParameters& in = ctx.config.input;
  auto names = g.items("input_name");
  Column columns[] = {
      {"input_type_train", true, g.items("input_type_train")},
      {"input_type_rt", true, g.items("input_type_rt")},
      {"input_layout_train", true, g.items("input_layout_train")},
      {"input_layout_rt", false, g.items("input_layout_rt")},
      {"input_space_and_range", false, g.items("input_space_and_range")},
      {"input_shape", false, g.items("input_shape")},
      {"norm_type", true, g.items("norm_type")},
  };
  auto means = parse_channel_values(g, "mean_value");
  auto scales = parse_channel_values(g, "scale_value");
  auto batch = g.integer("input_batch", 1, 128);
  std::optional<bool> separate_batch;
  if (ctx.flavour == ConfigFlavour::kHbCompile) separate_batch = g.flag("separate_batch");

  const size_t errors_before = ctx.issues.size();
  std::vector<std::string> missing;
  for (const auto& c : columns) {
    if (c.required && !g.given(c.key)) missing.emplace_back(c.key);
  }
  if (!missing.empty()) {
    std::sort(missing.begin(), missing.end());
    g.group_error("Missing keys: " + quoted_list(missing));
  }

  // The number of inputs: input_name's count if given, else the first per-input key's.
  size_t count = 0;
  std::string reference;
  if (names) {
    count = names->size();
    reference = "input_name has " + std::to_string(count) + " (" + quoted_list(*names) + ")";
    for (size_t i = 0; i < names->size(); ++i) {
      for (size_t j = 0; j < i; ++j) {
        if ((*names)[i] == (*names)[j]) {
          g.error("input_name", "'" + (*names)[i] + "' is listed more than once");
        }
      }
    }
  } else {
    for (const auto& c : columns) {
      if (c.items) {
        count = c.items->size();
        reference = std::string(c.key) + " has " + std::to_string(count);
        break;
      }
    }
  }
  auto check_count = [&](std::string_view key, size_t size) {
    if (size == count) return;
    g.error(key, "has " + std::to_string(size) + (size == 1 ? " value" : " values") + " but " +
                     reference + "; give one value per input, separated by ';'");
  };
  for (const auto& c : columns) {
    if (c.items) check_count(c.key, c.items->size());
  }
  if (means) check_count("mean_value", means->size());
  if (scales) check_count("scale_value", scales->size());

  if (batch) in.input_batch = *batch;
  if (separate_batch) in.separate_batch = *separate_batch;
  in.fixed_inputs = parse_fixed_inputs(g);
  if (in.separate_batch && in.input_batch == 1) {
    ctx.warn("input_parameters: separate_batch is ignored: input_batch is 1");
  }
  // A per-input key that did not read as a list leaves nothing to build the inputs from.
  const bool column_unreadable =
      std::any_of(std::begin(columns), std::end(columns),
                  [&](const Column& c) { return !c.items && g.given(c.key); }) ||
      (names == std::nullopt && g.given("input_name"));
  if (ctx.issues.size() != errors_before || count == 0 || column_unreadable) return;
  // mean_value / scale_value that did not read are reported already; skip their rules.
  const bool means_unreadable = !means && g.given("mean_value");
  const bool scales_unreadable = !scales && g.given("scale_value");

  // One InputSpec per input.
  in.names_given = names.has_value();
  in.inputs.resize(count);
  for (size_t i = 0; i < count; ++i) {
    if (names) in.inputs[i].name = (*names)[i];
  }
  // 'None' in an optional column leaves that input's value unset.
  auto optional_column = [&](std::string_view key) {
    for (const auto& c : columns) {
      if (c.key == key) return !c.required;
    }
    return false;
  };
  auto item = [&](std::string_view key, size_t i) -> std::optional<std::string> {
    for (const auto& c : columns) {
      if (c.key == key && c.items) return (*c.items)[i];
    }
    return std::nullopt;
  };
  const simulator::MarchSpec& march = simulator::march_spec(ctx.config.model.march);
  const bool nhwc_images = state.march_known && march.image_inputs_nhwc;
  const bool nchw_yuv444 = !state.march_known || march.yuv444_nchw_input;
  for (size_t i = 0; i < count; ++i) {
    InputSpec& spec = in.inputs[i];
    const std::string at = input_prefix(ctx.config, i);
    const size_t input_errors = ctx.issues.size();
    auto parse_item = [&]<typename E>(std::string_view key, std::span<const E> allowed) {
      auto text = item(key, i);
      std::optional<E> value;
      if (!text || (optional_column(key) && equals_ignoring_case(*text, "none"))) return value;
      std::vector<E> values =
          allowed.empty() ? all_values<E>() : std::vector<E>(allowed.begin(), allowed.end());
      auto parsed = parse_enum<E>(*text);
      if (parsed && std::find(values.begin(), values.end(), *parsed) != values.end()) {
        value = parsed;
      } else {
        g.error(key, at + not_one_of(*text, spellings_of<E>(values)));
      }
      return value;
    };

    auto train_text = item("input_type_train", i);
    if (train_text && parse_enum<InputType>(*train_text) == InputType::kNv12) {
      g.error("input_type_train",
              at +
                  "nv12 is an input_type_rt only; input_type_train is the format the model was "
                  "trained on (" +
                  quoted_list(spellings_of<InputType>(kTrainTypes)) + ")");
    } else if (auto t = parse_item.operator()<InputType>("input_type_train", kTrainTypes)) {
      spec.type_train = *t;
    }
    if (auto t = parse_item.operator()<InputType>("input_type_rt", {})) spec.type_rt = *t;
    if (auto l = parse_item.operator()<Layout>("input_layout_train", {})) spec.layout_train = *l;
    auto layout_rt = parse_item.operator()<Layout>("input_layout_rt", {});
    if (auto s = parse_item.operator()<InputSpaceAndRange>("input_space_and_range", {})) {
      spec.space_and_range = *s;
    }
    if (auto n = parse_item.operator()<NormType>("norm_type", {})) spec.norm_type = *n;
    if (auto text = item("input_shape", i); text && !equals_ignoring_case(*text, "none")) {
      if (auto shape = shape_from_text(*text)) {
        spec.shape = *shape;
      } else {
        g.error("input_shape", at + "'" + *text +
                                   "' is not a shape such as 1x3x224x224 (positive dims joined "
                                   "by 'x')");
      }
    }
    if (ctx.issues.size() != input_errors) continue;  // the rules below need valid values

    // input_type_train x input_type_rt.
    const auto feeds = rt_types_for(spec.type_train);
    if (std::find(feeds.begin(), feeds.end(), spec.type_rt) == feeds.end()) {
      g.error("input_type_rt",
              at + "input_type_rt '" + std::string(to_string(spec.type_rt)) +
                  "' cannot feed input_type_train '" + std::string(to_string(spec.type_train)) +
                  "'; '" + std::string(to_string(spec.type_train)) + "' accepts input_type_rt " +
                  quoted_list(spellings_of<InputType>(feeds)));
    }
    if (spec.space_and_range == InputSpaceAndRange::kBt601Video &&
        spec.type_rt != InputType::kNv12) {
      g.error("input_space_and_range", at +
                                           "bt601_video applies to nv12 input only, "
                                           "input_type_rt is '" +
                                           std::string(to_string(spec.type_rt)) + "'");
    }

    // input_layout_rt: none for nv12; hb_compile keeps the training layout; a march may default
    // image inputs to NHWC (the table's image_inputs_nhwc).
    if (spec.type_rt == InputType::kNv12) {
      if (layout_rt) ctx.warn("input_parameters: " + at + "input_layout_rt is ignored for nv12");
    } else if (ctx.flavour == ConfigFlavour::kHbCompile) {
      if (layout_rt && *layout_rt != spec.layout_train) {
        ctx.warn("input_parameters: " + at +
                 "input_layout_rt is ignored by hb_compile: inputs keep input_layout_train");
      }
      spec.layout_rt = spec.layout_train;
    } else if (layout_rt) {
      spec.layout_rt = layout_rt;
    } else {
      spec.layout_rt =
          nhwc_images && spec.type_rt != InputType::kFeaturemap ? Layout::kNhwc : spec.layout_train;
    }
    if (!nchw_yuv444 && spec.type_rt == InputType::kYuv444 && spec.layout_rt == Layout::kNchw) {
      g.error("input_layout_rt", at + std::string(march.name) + " does not take yuv444 input in NCHW; use NHWC");
    }

    // norm_type, mean_value, scale_value.
    const bool needs_mean =
        spec.norm_type == NormType::kDataMean || spec.norm_type == NormType::kDataMeanAndScale;
    const bool needs_scale =
        spec.norm_type == NormType::kDataScale || spec.norm_type == NormType::kDataMeanAndScale;
    // Image types know their channels; a featuremap's count is checked with its shape.
    const std::optional<int64_t> channels = image_channels(spec.type_train);
    auto take_values = [&](std::string_view key, const std::optional<ChannelValues>& all,
                           bool needed, std::vector<double>* out) {
      const std::optional<std::vector<double>> values = all ? (*all)[i] : std::nullopt;
      const std::string norm(to_string(spec.norm_type));
      if (needed && !values) {
        g.error(key, at + "norm_type '" + norm + "' needs a " + std::string(key) +
                         " (one value, or one per channel)" +
                         (all ? "; this input's entry is 'None'" : ""));
        return;
      }
      if (!needed) {
        if (values) {
          ctx.warn("input_parameters: " + at + std::string(key) + " is ignored: norm_type is '" +
                   norm + "'");
        }
        return;
      }
      if (channels && values->size() != 1 && static_cast<int64_t>(values->size()) != *channels) {
        g.error(key, at + std::to_string(values->size()) + " values; give 1 (all channels) or " +
                         std::to_string(*channels) + " (one per channel)");
        return;
      }
      *out = *values;
    };
    if (!means_unreadable) take_values("mean_value", means, needs_mean, &spec.mean);
    if (!scales_unreadable) take_values("scale_value", scales, needs_scale, &spec.scale);
    if (std::find(spec.scale.begin(), spec.scale.end(), 0.0) != spec.scale.end()) {
      g.error("scale_value", at + "a scale of 0 would zero the input");
    }
    if (!spec.shape.empty()) check_input_shape(ctx.config, i, ctx.issues);
  }

  // input_batch: one input whose first dim is 1.
  if (in.input_batch > 1 && count > 1) {
    g.error("input_batch", "input_batch " + std::to_string(in.input_batch) +
                               " is for single-input models; this config has " +
                               std::to_string(count) + " inputs");
  }
  state.inputs_known = true;
}

}  // namespace openbpu::config
