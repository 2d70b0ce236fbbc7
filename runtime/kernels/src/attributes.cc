#include "openbpu/kernels/attributes.h"

#include "openbpu/kernels/error.h"

namespace openbpu::kernels {

std::string_view attr_kind_name(AttrKind kind) {
  switch (kind) {
    case AttrKind::kInt: return "int";
    case AttrKind::kFloat: return "float";
    case AttrKind::kString: return "string";
    case AttrKind::kTensor: return "tensor";
    case AttrKind::kInts: return "ints";
    case AttrKind::kFloats: return "floats";
    case AttrKind::kStrings: return "strings";
    case AttrKind::kTensors: return "tensors";
  }
  return "unknown";
}

void AttributeMap::set(std::string name, AttributeValue value) {
  for (auto& item : items_) {
    if (item.first == name) {
      item.second = std::move(value);
      return;
    }
  }
  items_.emplace_back(std::move(name), std::move(value));
}

const AttributeValue* AttributeMap::find(std::string_view name) const {
  for (const auto& item : items_) {
    if (item.first == name) return &item.second;
  }
  return nullptr;
}

namespace {
// An attribute list with no elements carries no element kind in ONNX; accept it as any list.
bool is_empty_list(const AttributeValue& v) {
  switch (attr_kind(v)) {
    case AttrKind::kInts: return std::get<std::vector<int64_t>>(v).empty();
    case AttrKind::kFloats: return std::get<std::vector<float>>(v).empty();
    case AttrKind::kStrings: return std::get<std::vector<std::string>>(v).empty();
    case AttrKind::kTensors: return std::get<std::vector<Tensor>>(v).empty();
    default: return false;
  }
}
bool is_list_kind(AttrKind k) {
  return k == AttrKind::kInts || k == AttrKind::kFloats || k == AttrKind::kStrings ||
         k == AttrKind::kTensors;
}
}  // namespace

const AttributeValue& AttributeMap::require(std::string_view name, AttrKind kind) const {
  const AttributeValue* v = find(name);
  OPENBPU_CHECK(v != nullptr, "required attribute '", name, "' is missing");
  OPENBPU_CHECK(attr_kind(*v) == kind, "attribute '", name, "' must be of kind ", attr_kind_name(kind),
        ", got ", attr_kind_name(attr_kind(*v)));
  return *v;
}

int64_t AttributeMap::get_int(std::string_view name) const {
  return std::get<int64_t>(require(name, AttrKind::kInt));
}
int64_t AttributeMap::get_int(std::string_view name, int64_t fallback) const {
  return has(name) ? get_int(name) : fallback;
}
float AttributeMap::get_float(std::string_view name) const {
  return std::get<float>(require(name, AttrKind::kFloat));
}
float AttributeMap::get_float(std::string_view name, float fallback) const {
  return has(name) ? get_float(name) : fallback;
}
std::string AttributeMap::get_string(std::string_view name) const {
  return std::get<std::string>(require(name, AttrKind::kString));
}
std::string AttributeMap::get_string(std::string_view name, std::string_view fallback) const {
  return has(name) ? get_string(name) : std::string(fallback);
}
const Tensor& AttributeMap::get_tensor(std::string_view name) const {
  return std::get<Tensor>(require(name, AttrKind::kTensor));
}
std::vector<int64_t> AttributeMap::get_ints(std::string_view name) const {
  if (const AttributeValue* v = find(name); v && is_empty_list(*v)) return {};
  return std::get<std::vector<int64_t>>(require(name, AttrKind::kInts));
}
std::vector<int64_t> AttributeMap::get_ints(std::string_view name,
                                            std::vector<int64_t> fallback) const {
  return has(name) ? get_ints(name) : fallback;
}
std::vector<float> AttributeMap::get_floats(std::string_view name) const {
  if (const AttributeValue* v = find(name); v && is_empty_list(*v)) return {};
  return std::get<std::vector<float>>(require(name, AttrKind::kFloats));
}
std::vector<float> AttributeMap::get_floats(std::string_view name,
                                            std::vector<float> fallback) const {
  return has(name) ? get_floats(name) : fallback;
}
std::vector<std::string> AttributeMap::get_strings(std::string_view name) const {
  if (const AttributeValue* v = find(name); v && is_empty_list(*v)) return {};
  return std::get<std::vector<std::string>>(require(name, AttrKind::kStrings));
}
std::vector<std::string> AttributeMap::get_strings(std::string_view name,
                                                   std::vector<std::string> fallback) const {
  return has(name) ? get_strings(name) : fallback;
}

void AttributeMap::validate(std::string_view op_type,
                            std::initializer_list<AttrSpec> specs) const {
  validate(op_type, std::vector<AttrSpec>(specs));
}

void AttributeMap::validate(std::string_view op_type, const std::vector<AttrSpec>& specs) const {
  for (const auto& [name, value] : items_) {
    const AttrSpec* spec = nullptr;
    for (const AttrSpec& s : specs) {
      if (s.name == name) spec = &s;
    }
    if (spec == nullptr) {
      std::string known;
      for (const AttrSpec& s : specs) known += str_cat(known.empty() ? "" : ", ", s.name);
      fail(op_type, " has no attribute '", name, "' (it accepts: ",
           known.empty() ? "none" : known, ")");
    }
    const AttrKind kind = attr_kind(value);
    OPENBPU_CHECK(kind == spec->kind || (is_empty_list(value) && is_list_kind(spec->kind)), op_type, " attribute '", name,
          "' must be of kind ", attr_kind_name(spec->kind), ", got ", attr_kind_name(kind));
  }
  for (const AttrSpec& s : specs) {
    OPENBPU_CHECK(!s.required || has(s.name), op_type, " requires attribute '", s.name, "'");
  }
}

}  // namespace openbpu::kernels
