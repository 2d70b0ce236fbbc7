// The node facts and reusable constraints the operator families (ops/*.cc) are written with.
#include "op_rules.h"

#include <algorithm>
#include <sstream>

namespace openbpu::bpu_support::rules {

// ---------------------------------------------------------------- node facts

std::optional<std::vector<ir::Dim>> dims_of(const ir::Value* v) {
  if (v == nullptr || !v->type().shape) return std::nullopt;
  return *v->type().shape;
}

std::optional<size_t> rank_of(const ir::Value* v) {
  auto d = dims_of(v);
  if (!d) return std::nullopt;
  return d->size();
}

// Dimension i if known.
std::optional<int64_t> dim_of(const ir::Value* v, size_t i) {
  auto d = dims_of(v);
  if (!d || i >= d->size() || !(*d)[i].is_known()) return std::nullopt;
  return (*d)[i].value;
}

bool is_constant(const ir::Value* v) { return v != nullptr && v->is_constant(); }

std::vector<int64_t> ints_attr(const Node& n, std::string_view name, std::vector<int64_t> fallback) {
  const auto* v = n.attrs().find(name);
  if (v == nullptr || !std::holds_alternative<std::vector<int64_t>>(*v)) return fallback;
  return std::get<std::vector<int64_t>>(*v);
}

int64_t int_attr(const Node& n, std::string_view name, int64_t fallback) {
  const auto* v = n.attrs().find(name);
  if (v == nullptr || !std::holds_alternative<int64_t>(*v)) return fallback;
  return std::get<int64_t>(*v);
}

std::string string_attr(const Node& n, std::string_view name, std::string fallback) {
  const auto* v = n.attrs().find(name);
  if (v == nullptr || !std::holds_alternative<std::string>(*v)) return fallback;
  return std::get<std::string>(*v);
}

// Kernel spatial sizes: the attribute, or the weight's trailing dims.
std::vector<int64_t> kernel_shape(const Node& n) {
  auto k = ints_attr(n, "kernel_shape", {});
  if (k.empty() && n.input(1) != nullptr) {
    if (auto d = dims_of(n.input(1)); d && d->size() > 2) {
      for (size_t i = 2; i < d->size(); ++i) k.push_back((*d)[i].is_known() ? (*d)[i].value : 1);
    }
  }
  return k;
}

bool all_in(const std::vector<int64_t>& values, int64_t lo, int64_t hi) {
  return std::all_of(values.begin(), values.end(), [&](int64_t v) { return v >= lo && v <= hi; });
}

std::string range(int64_t lo, int64_t hi) {
  std::ostringstream s;
  s << "[" << lo << ", " << hi << "]";
  return s.str();
}

// ---------------------------------------------------------------- reusable constraints

Constraint rank_is(std::string_view id, size_t rank, std::string text) {
  return {id, [text](const MarchSpec&) { return text; },
          [rank](const Node& n, const MarchSpec&) {
            auto r = rank_of(n.input(0));
            return !r || *r == rank;
          }};
}

// Rank of the first `featuremaps` inputs (constants excluded).
Constraint rank_between(std::string_view id, size_t lo, size_t hi, size_t featuremaps) {
  return {id,
          [lo, hi](const MarchSpec&) {
            return "input rank must be in " + range(static_cast<int64_t>(lo), static_cast<int64_t>(hi));
          },
          [lo, hi, featuremaps](const Node& n, const MarchSpec&) {
            for (size_t i = 0; i < featuremaps && i < n.inputs().size(); ++i) {
              const ir::Value* in = n.input(i);
              if (in == nullptr || in->is_constant()) continue;
              auto r = rank_of(in);
              if (r && (*r < lo || *r > hi)) return false;
            }
            return true;
          }};
}

Constraint input_constant(std::string_view id, size_t index, std::string what) {
  return {id, [what](const MarchSpec&) { return what + " must be a constant"; },
          [index](const Node& n, const MarchSpec&) {
            return n.input(index) == nullptr || is_constant(n.input(index));
          }};
}

Constraint axes_constant(std::string_view id) {
  return {id, [](const MarchSpec&) { return std::string("axes must be an attribute or a constant"); },
          [](const Node& n, const MarchSpec&) { return n.input(1) == nullptr || is_constant(n.input(1)); }};
}

Constraint dims_within_limit() {
  return {"tensor.dims",
          [](const MarchSpec& m) {
            return "every dimension after N must be in " + range(1, m.tensor_dim_max);
          },
          [](const Node& n, const MarchSpec& m) {
            for (const ir::Value* v : n.inputs()) {
              auto d = dims_of(v);
              if (!d || (v && v->is_constant())) continue;
              for (size_t i = 1; i < d->size(); ++i) {
                if ((*d)[i].is_known() && ((*d)[i].value < 1 || (*d)[i].value > m.tensor_dim_max)) {
                  return false;
                }
              }
            }
            return true;
          }};
}

Constraint kernel_size(std::string_view id, int MarchSpec::*limit, std::string what) {
  return {id,
          [limit, what](const MarchSpec& m) {
            return what + " H and W must be in " + range(1, m.*limit);
          },
          [limit](const Node& n, const MarchSpec& m) { return all_in(kernel_shape(n), 1, m.*limit); }};
}

Constraint strides_in_range(std::string_view id, int MarchSpec::*limit) {
  return {id, [limit](const MarchSpec& m) { return "stride H and W must be in " + range(1, m.*limit); },
          [limit](const Node& n, const MarchSpec& m) {
            return all_in(ints_attr(n, "strides", {1, 1}), 1, m.*limit);
          }};
}

Constraint pads_in_range(std::string_view id) {
  return {id, [](const MarchSpec& m) { return "pads must be in " + range(0, m.conv_stride_max); },
          [](const Node& n, const MarchSpec& m) {
            return all_in(ints_attr(n, "pads", {0, 0, 0, 0}), 0, m.conv_stride_max);
          }};
}

Constraint channels_per_group(std::string_view id, bool transposed) {
  return {id,
          [](const MarchSpec& m) {
            return "input and output channels per group must be in " + range(1, m.channels_max);
          },
          [transposed](const Node& n, const MarchSpec& m) {
            const int64_t group = std::max<int64_t>(1, int_attr(n, "group", 1));
            auto c = dim_of(n.input(0), 1);
            auto w0 = dim_of(n.input(1), 0);
            if (c && *c / group > m.channels_max) return false;
            if (w0 && *w0 / (transposed ? 1 : group) > m.channels_max) return false;
            return true;
          }};
}

Constraint no_batch_broadcast() {
  return {"elementwise.broadcast",
          [](const MarchSpec&) {
            return std::string("inputs must agree on dimension 0 (no broadcasting along N)");
          },
          [](const Node& n, const MarchSpec&) {
            auto a = dims_of(n.input(0));
            auto b = dims_of(n.input(1));
            if (!a || !b || a->empty() || b->empty()) return true;
            if (a->size() != b->size()) return true;  // leading dims broadcast from rank
            const ir::Dim& x = a->front();
            const ir::Dim& y = b->front();
            return !(x.is_known() && y.is_known() && x.value != y.value);
          }};
}

Constraint at_most_one_constant() {
  return {"elementwise.constants",
          [](const MarchSpec&) { return std::string("at most one input may be a constant"); },
          [](const Node& n, const MarchSpec&) {
            int constants = 0;
            for (const ir::Value* v : n.inputs()) constants += is_constant(v) ? 1 : 0;
            return constants <= 1;
          }};
}

Constraint attr_equals(std::string_view id, std::string_view attr, int64_t value, int64_t fallback) {
  return {id,
          [attr, value](const MarchSpec&) {
            std::ostringstream s;
            s << attr << " must be " << value;
            return s.str();
          },
          [attr, value, fallback](const Node& n, const MarchSpec&) {
            return int_attr(n, attr, fallback) == value;
          }};
}

Constraint not_along_batch(std::string_view id, std::string_view attr, int64_t fallback) {
  return {id, [attr](const MarchSpec&) { return std::string(attr) + " must not be 0 (the N axis)"; },
          [attr, fallback](const Node& n, const MarchSpec&) {
            int64_t axis = int_attr(n, attr, fallback);
            auto r = rank_of(n.input(0));
            if (r && axis < 0) axis += static_cast<int64_t>(*r);
            return axis != 0;
          }};
}

}  // namespace openbpu::bpu_support::rules
