// Node facts and reusable constraints for the operator families (ops/*.cc). Shape facts are
// optional: an unknown shape satisfies a shape rule (checked again once shapes are known).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "openbpu/bpu_support/op_def.h"

namespace openbpu::bpu_support::rules {

using ir::Node;

// ---------------------------------------------------------------- node facts
std::optional<std::vector<ir::Dim>> dims_of(const ir::Value* v);
std::optional<size_t> rank_of(const ir::Value* v);
std::optional<int64_t> dim_of(const ir::Value* v, size_t i);  // dimension i, if known
bool is_constant(const ir::Value* v);
std::vector<int64_t> ints_attr(const Node& n, std::string_view name, std::vector<int64_t> fallback);
int64_t int_attr(const Node& n, std::string_view name, int64_t fallback);
std::string string_attr(const Node& n, std::string_view name, std::string fallback);
std::vector<int64_t> kernel_shape(const Node& n);  // the attribute, or the weight's trailing dims
bool all_in(const std::vector<int64_t>& values, int64_t lo, int64_t hi);
std::string range(int64_t lo, int64_t hi);  // "[lo, hi]"

// ---------------------------------------------------------------- reusable constraints
Constraint rank_is(std::string_view id, size_t rank, std::string text);
// Rank of the first `featuremaps` inputs (constants excluded).
Constraint rank_between(std::string_view id, size_t lo, size_t hi, size_t featuremaps = 1);
Constraint input_constant(std::string_view id, size_t index, std::string what);
Constraint axes_constant(std::string_view id);  // a reduction's axes: attribute, or constant input 1
Constraint dims_within_limit();  // "tensor.dims": every dimension after N within the march's limit
Constraint kernel_size(std::string_view id, int MarchSpec::*limit, std::string what);
Constraint strides_in_range(std::string_view id, int MarchSpec::*limit);
Constraint pads_in_range(std::string_view id);
// Input and output channels per group (the weight's dim 0 is per group unless transposed).
Constraint channels_per_group(std::string_view id, bool transposed);
Constraint no_batch_broadcast();     // "elementwise.broadcast"
Constraint at_most_one_constant();   // "elementwise.constants"
Constraint attr_equals(std::string_view id, std::string_view attr, int64_t value, int64_t fallback);
Constraint not_along_batch(std::string_view id, std::string_view attr, int64_t fallback);

}  // namespace openbpu::bpu_support::rules
