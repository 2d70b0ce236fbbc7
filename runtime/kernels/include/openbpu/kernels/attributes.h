// Node attributes as kernels see them: ints, floats, strings, tensors and lists of them.
// (Graph-valued attributes of control-flow ops live only in the toolchain IR.)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "openbpu/kernels/tensor.h"

namespace openbpu::kernels {

enum class AttrKind { kInt, kFloat, kString, kTensor, kInts, kFloats, kStrings, kTensors };
std::string_view attr_kind_name(AttrKind kind);

using AttributeValue =
    std::variant<int64_t, float, std::string, Tensor, std::vector<int64_t>, std::vector<float>,
                 std::vector<std::string>, std::vector<Tensor>>;

// Kind of a value, in the order of AttributeValue's alternatives.
inline AttrKind attr_kind(const AttributeValue& v) { return static_cast<AttrKind>(v.index()); }

// What an operator accepts: name, kind and whether it must be present.
struct AttrSpec {
  std::string_view name;
  AttrKind kind;
  bool required = false;
};

class AttributeMap {
 public:
  void set(std::string name, AttributeValue value);
  bool has(std::string_view name) const { return find(name) != nullptr; }
  const AttributeValue* find(std::string_view name) const;
  size_t size() const { return items_.size(); }
  const std::vector<std::pair<std::string, AttributeValue>>& items() const { return items_; }

  // Typed getters. With a default: absent → default. Without: absent → KernelError.
  // A present attribute of another kind is always a KernelError naming the attribute.
  int64_t get_int(std::string_view name) const;
  int64_t get_int(std::string_view name, int64_t fallback) const;
  float get_float(std::string_view name) const;
  float get_float(std::string_view name, float fallback) const;
  std::string get_string(std::string_view name) const;
  std::string get_string(std::string_view name, std::string_view fallback) const;
  const Tensor& get_tensor(std::string_view name) const;
  std::vector<int64_t> get_ints(std::string_view name) const;
  std::vector<int64_t> get_ints(std::string_view name, std::vector<int64_t> fallback) const;
  std::vector<float> get_floats(std::string_view name) const;
  std::vector<float> get_floats(std::string_view name, std::vector<float> fallback) const;
  std::vector<std::string> get_strings(std::string_view name) const;
  std::vector<std::string> get_strings(std::string_view name,
                                       std::vector<std::string> fallback) const;

  // Checks every attribute against `specs`: unknown names, wrong kinds and missing required
  // attributes are KernelErrors naming the attribute and the operator.
  void validate(std::string_view op_type, std::initializer_list<AttrSpec> specs) const;
  void validate(std::string_view op_type, const std::vector<AttrSpec>& specs) const;

 private:
  const AttributeValue& require(std::string_view name, AttrKind kind) const;
  std::vector<std::pair<std::string, AttributeValue>> items_;
};

}  // namespace openbpu::kernels
