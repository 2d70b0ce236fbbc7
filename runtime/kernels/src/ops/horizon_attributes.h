// Reading and validating the integer parameters of horizon-domain operators
// (docs/quantized_ops.md) at prepare time: output types, fixed-point multipliers, activation
// clamps. Every error names the operator, the attribute and the rule.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "openbpu/kernels/attributes.h"
#include "openbpu/kernels/dtype.h"
#include "openbpu/kernels/error.h"
#include "openbpu/simulator/integer_arithmetic.h"

namespace openbpu::kernels::horizon {

using simulator::FixedPointMultiplier;

// Range of an integer element type.
inline int64_t type_min(DataType t) {
  switch (t) {
    case DataType::kInt8: return INT8_MIN;
    case DataType::kInt16: return INT16_MIN;
    default: return INT32_MIN;
  }
}
inline int64_t type_max(DataType t) {
  switch (t) {
    case DataType::kInt8: return INT8_MAX;
    case DataType::kInt16: return INT16_MAX;
    default: return INT32_MAX;
  }
}

// The required string attribute `output_type` ("int8", "int16" or, where allowed, "int32").
inline DataType read_output_type(std::string_view op, const AttributeMap& attrs, bool allow_int32) {
  const std::string_view allowed =
      allow_int32 ? "\"int8\", \"int16\" or \"int32\"" : "\"int8\" or \"int16\"";
  OPENBPU_CHECK(attrs.has("output_type"), op, ": attribute output_type is required (", allowed,
                ")");
  const std::string type = attrs.get_string("output_type");
  if (type == "int8") return DataType::kInt8;
  if (type == "int16") return DataType::kInt16;
  if (type == "int32" && allow_int32) return DataType::kInt32;
  fail(op, ": output_type must be ", allowed, ", got \"", type, "\"");
}

// Checks one multiplier given as attribute values (`what` names the attribute entries).
inline FixedPointMultiplier checked_multiplier(std::string_view op, std::string_view what,
                                               int64_t multiplier, int64_t shift) {
  const bool representable = multiplier >= INT32_MIN && multiplier <= INT32_MAX &&
                             shift >= INT32_MIN && shift <= INT32_MAX;
  const FixedPointMultiplier f{static_cast<int32_t>(multiplier), static_cast<int32_t>(shift)};
  OPENBPU_CHECK(representable && simulator::is_valid_multiplier(f), op, ": ", what, " = (",
                multiplier, ", ", shift,
                ") is not a fixed-point multiplier: the multiplier must be 0 or in [2^30, 2^31) "
                "and the shift in [0, ",
                simulator::kMaxMultiplierShift, "] (the form to_fixed_point produces)");
  return f;
}

// A per-tensor multiplier from int attributes `multiplier_name` and `shift_name`. Both absent:
// nullopt-like empty vector; one without the other is an error.
inline std::vector<FixedPointMultiplier> read_multiplier(std::string_view op,
                                                         const AttributeMap& attrs,
                                                         std::string_view multiplier_name,
                                                         std::string_view shift_name) {
  const bool has_m = attrs.has(multiplier_name), has_s = attrs.has(shift_name);
  OPENBPU_CHECK(has_m == has_s, op, ": attributes ", multiplier_name, " and ", shift_name,
                " must be given together");
  if (!has_m) return {};
  return {checked_multiplier(op, str_cat(multiplier_name, "/", shift_name),
                             attrs.get_int(multiplier_name), attrs.get_int(shift_name))};
}

// A list of multipliers from ints attributes `multipliers_name` and `shifts_name` (same length).
// Both absent: empty.
inline std::vector<FixedPointMultiplier> read_multipliers(std::string_view op,
                                                          const AttributeMap& attrs,
                                                          std::string_view multipliers_name,
                                                          std::string_view shifts_name) {
  const bool has_m = attrs.has(multipliers_name), has_s = attrs.has(shifts_name);
  OPENBPU_CHECK(has_m == has_s, op, ": attributes ", multipliers_name, " and ", shifts_name,
                " must be given together");
  if (!has_m) return {};
  const std::vector<int64_t> m = attrs.get_ints(multipliers_name);
  const std::vector<int64_t> s = attrs.get_ints(shifts_name);
  OPENBPU_CHECK(m.size() == s.size(), op, ": ", multipliers_name, " (", m.size(), " values) and ",
                shifts_name, " (", s.size(), " values) must have the same length");
  std::vector<FixedPointMultiplier> out;
  out.reserve(m.size());
  for (size_t i = 0; i < m.size(); ++i) {
    out.push_back(checked_multiplier(
        op, str_cat(multipliers_name, "[", i, "]/", shifts_name, "[", i, "]"), m[i], s[i]));
  }
  return out;
}

// The activation clamp: int attributes clip_min / clip_max in the output's integer domain,
// default the type's range.
struct Clamp {
  int64_t lo = 0;
  int64_t hi = 0;
};

inline Clamp read_clamp(std::string_view op, const AttributeMap& attrs, DataType output_type) {
  const int64_t tmin = type_min(output_type), tmax = type_max(output_type);
  Clamp c{attrs.get_int("clip_min", tmin), attrs.get_int("clip_max", tmax)};
  OPENBPU_CHECK(c.lo >= tmin && c.lo <= tmax, op, ": clip_min ", c.lo, " must be in the ",
                dtype_name(output_type), " range [", tmin, ", ", tmax, "]");
  OPENBPU_CHECK(c.hi >= tmin && c.hi <= tmax, op, ": clip_max ", c.hi, " must be in the ",
                dtype_name(output_type), " range [", tmin, ", ", tmax, "]");
  OPENBPU_CHECK(c.lo <= c.hi, op, ": clip_min ", c.lo, " must be <= clip_max ", c.hi);
  return c;
}

// Checks that an input is int8 or int16 (the quantized activation types).
inline void check_activation_type(std::string_view op, std::string_view what, DataType t,
                                  std::string_view described) {
  OPENBPU_CHECK(t == DataType::kInt8 || t == DataType::kInt16, op, ": ", what,
                " must be int8 or int16, got ", described);
}

}  // namespace openbpu::kernels::horizon
