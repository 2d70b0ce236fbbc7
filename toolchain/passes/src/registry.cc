#include <algorithm>
#include <cstdlib>

#include "openbpu/common/error.h"
#include "openbpu/passes/pass.h"
#include "pass_list.h"

namespace openbpu::passes {

std::span<const PassDef> all_passes() {
  static const std::vector<PassDef> passes = {
      dropout_identity_removal_pass(),
      constant_folding_pass(),
      softmax_axis_canonicalization_pass(),
      operator_replacement_pass(),
      activation_canonicalization_pass(),
      fuse_conv_affine_pass(),
      fuse_batchnorm_pass(),
      gemm_to_conv_pass(),
      matmul_to_conv_pass(),
      reshape_transpose_cancellation_pass(),
      dead_code_elimination_pass(),
      qdq_removal_pass(),
      float16_to_float32_pass(),
      dynamic_quantization_removal_pass(),
      conv1d_as_conv2d_pass(),
      conv3d_as_conv2d_pass(),
      prelu_decomposition_pass(),
      recurrent_unrolling_pass(),
      if_inlining_pass(),
      control_flow_flattening_pass(),
  };
  return passes;
}

const PassDef* find_pass(std::string_view name) {
  for (const PassDef& def : all_passes()) {
    if (def.name == name) return &def;
  }
  return nullptr;
}

// ---------------------------------------------------------------- options

namespace {

bool parse_bool(const std::string& text, bool* out) {
  if (text == "true" || text == "1") {
    *out = true;
  } else if (text == "false" || text == "0") {
    *out = false;
  } else {
    return false;
  }
  return true;
}

bool parse_double(const std::string& text, double* out) {
  char* end = nullptr;
  *out = std::strtod(text.c_str(), &end);
  return !text.empty() && end == text.c_str() + text.size();
}

}  // namespace

PassOptions::PassOptions(std::string_view pass_name, std::span<const PassOptionSpec> specs,
                         const std::map<std::string, std::string>& values)
    : pass_name_(pass_name) {
  for (const PassOptionSpec& spec : specs) {
    values_[std::string(spec.name)] = std::string(spec.default_value);
  }
  for (const auto& [name, value] : values) {
    auto it = values_.find(name);
    if (it == values_.end()) {
      std::string known;
      for (const PassOptionSpec& spec : specs)
        known += str_cat(known.empty() ? "" : ", ", spec.name);
      raise("pass '", pass_name_, "' has no option '", name,
            "' (options: ", known.empty() ? "none" : known, ")");
    }
    // The default's form decides the option's form.
    const std::string& fallback = it->second;
    const bool boolean = fallback == "true" || fallback == "false";
    bool b = false;
    double d = 0;
    if (boolean && !parse_bool(value, &b)) {
      raise("pass '", pass_name_, "' option '", name, "' must be true or false, got '", value, "'");
    }
    if (!boolean && parse_double(fallback, &d) && !parse_double(value, &d)) {
      raise("pass '", pass_name_, "' option '", name, "' must be a number, got '", value, "'");
    }
    it->second = value;
  }
}

const std::string& PassOptions::get_string(std::string_view name) const {
  auto it = values_.find(name);
  if (it == values_.end()) raise("pass '", pass_name_, "' reads an undeclared option '", name, "'");
  return it->second;
}

double PassOptions::get_double(std::string_view name) const {
  double d = 0;
  if (!parse_double(get_string(name), &d)) {
    raise("pass '", pass_name_, "' option '", name, "' is not a number");
  }
  return d;
}

int64_t PassOptions::get_int(std::string_view name) const {
  return static_cast<int64_t>(get_double(name));
}

bool PassOptions::get_bool(std::string_view name) const {
  bool b = false;
  if (!parse_bool(get_string(name), &b)) {
    raise("pass '", pass_name_, "' option '", name, "' is not true or false");
  }
  return b;
}

}  // namespace openbpu::passes
