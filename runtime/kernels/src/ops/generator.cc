// Tensor generators and data-dependent shapes: Constant, ConstantOfShape, Range, EyeLike,
// OneHot, NonZero, Unique.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <optional>
#include <type_traits>

#include "families.h"
#include "openbpu/kernels/axes.h"
#include "openbpu/kernels/dispatch.h"
#include "openbpu/kernels/strided_copy.h"

namespace openbpu::kernels {

namespace {

// Checks that a tensor attribute holds numbers this library can compute on.
void check_value_tensor(const Tensor& t, std::string_view op, std::string_view attr) {
  OPENBPU_CHECK(dtype_size(t.dtype()) > 0 && !t.empty_storage(), op, ": attribute ", attr,
        " must be a dense tensor of a numeric or bool type, got ", t.describe());
}

// ---------------------------------------------------------------------------------------------
// Constant (value from opset 1, sparse_value from 11, value_* from 12)

class ConstantKernel final : public Kernel {
 public:
  explicit ConstantKernel(const NodeInfo& node) {
    int given = 0;
    for (const char* name : {"value", "sparse_value", "value_float", "value_floats", "value_int",
                             "value_ints", "value_string", "value_strings"}) {
      given += node.attrs.has(name) ? 1 : 0;
    }
    OPENBPU_CHECK(given == 1,
          "Constant: exactly one of value, sparse_value, value_float(s), "
          "value_int(s), value_string(s) must be given, got ",
          given);
    const AttributeMap& a = node.attrs;
    if (a.has("value")) {
      value_ = a.get_tensor("value");
      check_value_tensor(value_, "Constant", "value");
    } else if (a.has("value_float")) {
      value_ = Tensor::scalar<float>(a.get_float("value_float"));
    } else if (a.has("value_floats")) {
      const std::vector<float> v = a.get_floats("value_floats");
      value_ = Tensor::from_values<float>({int64_t(v.size())}, v);
    } else if (a.has("value_int")) {
      value_ = Tensor::scalar<int64_t>(a.get_int("value_int"));
    } else if (a.has("value_ints")) {
      const std::vector<int64_t> v = a.get_ints("value_ints");
      value_ = Tensor::from_values<int64_t>({int64_t(v.size())}, v);
    } else if (a.has("sparse_value")) {
      fail("Constant: sparse_value is not supported (use a dense value tensor)");
    } else {
      fail("Constant: string constants (value_string, value_strings) are not supported");
    }
  }

  // The output shares the constant's storage.
  void run(KernelContext& ctx) const override { ctx.set_output(0, value_); }

 private:
  Tensor value_;
};

// ---------------------------------------------------------------------------------------------
// ConstantOfShape

class ConstantOfShapeKernel final : public Kernel {
 public:
  explicit ConstantOfShapeKernel(const NodeInfo& node) : value_(Tensor::scalar<float>(0.0f)) {
    if (node.attrs.has("value")) {
      value_ = node.attrs.get_tensor("value");
      check_value_tensor(value_, "ConstantOfShape", "value");
      OPENBPU_CHECK(value_.element_count() == 1,
            "ConstantOfShape: attribute value must hold exactly one element, got ",
            value_.describe());
    }
  }

  void run(KernelContext& ctx) const override {
    const Tensor& shape_t = ctx.input(0);
    OPENBPU_CHECK(shape_t.dtype() == DataType::kInt64 && shape_t.rank() == 1,
          "ConstantOfShape: input must be a 1-D int64 tensor, got ", shape_t.describe());
    const Shape shape = shape_t.to_int64_vector();
    for (int64_t d : shape) {
      OPENBPU_CHECK(d >= 0, "ConstantOfShape: shape ", shape_to_string(shape), " has a negative dimension");
    }
    Tensor& y = ctx.allocate_output(0, value_.dtype(), shape);
    fill_elements(ctx.thread_pool(), dtype_size(value_.dtype()), y.raw_data(), y.element_count(),
                  value_.raw_data());
  }

 private:
  Tensor value_;
};

// ---------------------------------------------------------------------------------------------
// Range

class RangeKernel final : public Kernel {
 public:
  void run(KernelContext& ctx) const override {
    const Tensor& start_t = ctx.input(0);
    const Tensor& limit_t = ctx.input(1);
    const Tensor& delta_t = ctx.input(2);
    for (const Tensor* t : {&start_t, &limit_t, &delta_t}) {
      OPENBPU_CHECK(t->dtype() == start_t.dtype() && t->element_count() == 1 && t->rank() <= 1,
            "Range: start, limit and delta must be scalars of one type, got ", start_t.describe(),
            ", ", limit_t.describe(), ", ", delta_t.describe());
    }
    using RangeTypes = TypeList<float, double, int16_t, int32_t, int64_t>;
    dispatch<RangeTypes>(start_t.dtype(), "Range", [&]<typename T>() {
      const T start = start_t.data<T>()[0];
      const T limit = limit_t.data<T>()[0];
      const T delta = delta_t.data<T>()[0];
      OPENBPU_CHECK(delta != T(0), "Range: delta must not be 0");
      int64_t count = 0;
      if constexpr (std::is_floating_point_v<T>) {
        const double n = std::ceil((double(limit) - double(start)) / double(delta));
        OPENBPU_CHECK(std::isfinite(n),
              "Range: the number of elements (limit - start) / delta is not "
              "finite for start ",
              start, ", limit ", limit, ", delta ", delta);
        OPENBPU_CHECK(n <= 9.0e15, "Range: ", n, " elements is too many");
        count = n > 0 ? int64_t(n) : 0;
      } else {
        int64_t diff = 0;
        OPENBPU_CHECK(!__builtin_sub_overflow(int64_t(limit), int64_t(start), &diff),
              "Range: limit - start overflows int64");
        const int64_t d = delta;
        // ceil(diff / d) for integers of any sign
        int64_t q = diff / d;
        if (q * d != diff && ((diff > 0) == (d > 0))) ++q;
        count = std::max<int64_t>(q, 0);
      }
      Tensor& y = ctx.allocate_output(0, start_t.dtype(), {count});
      T* out = y.data<T>();
      for (int64_t i = 0; i < count; ++i) {
        if constexpr (std::is_floating_point_v<T>) {
          out[i] = T(double(start) + double(i) * double(delta));
        } else {
          out[i] = T(int64_t(start) + i * int64_t(delta));
        }
      }
    });
  }
};

// ---------------------------------------------------------------------------------------------
// EyeLike

class EyeLikeKernel final : public Kernel {
 public:
  explicit EyeLikeKernel(const NodeInfo& node) : k_(node.attrs.get_int("k", 0)) {
    if (node.attrs.has("dtype")) {
      const int64_t code = node.attrs.get_int("dtype");
      OPENBPU_CHECK(code >= 0 && code <= INT32_MAX && dtype_is_known(int32_t(code)) &&
                dtype_size(DataType(code)) > 0,
            "EyeLike: dtype ", code, " is not a supported numeric or bool type");
      dtype_ = DataType(code);
    }
  }

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    OPENBPU_CHECK(x.rank() == 2, "EyeLike: input must be 2-D, got ", x.describe());
    const DataType dtype = dtype_.value_or(x.dtype());
    Tensor& y = ctx.allocate_output(0, dtype, x.shape());
    const int64_t rows = x.dim(0), cols = x.dim(1);
    dispatch<AllTypes>(dtype, "EyeLike", [&]<typename T>() {
      T one;
      if constexpr (std::is_same_v<T, bool>) {
        one = true;
      } else {
        one = from_compute<T>(ComputeType<T>(1));
      }
      T* out = y.data<T>();
      for (int64_t i = 0; i < rows; ++i) {
        if (k_ >= cols - i || k_ < -i) continue;  // column i + k outside [0, cols)
        out[i * cols + i + k_] = one;
      }
    });
  }

 private:
  int64_t k_;
  std::optional<DataType> dtype_;
};

// ---------------------------------------------------------------------------------------------
// OneHot (negative indices from opset 11)

class OneHotKernel final : public Kernel {
 public:
  explicit OneHotKernel(const NodeInfo& node)
      : axis_(node.attrs.get_int("axis", -1)), negative_indices_(node.opset >= 11) {}

  void run(KernelContext& ctx) const override {
    const Tensor& indices = ctx.input(0);
    const Tensor& depth_t = ctx.input(1);
    const Tensor& values = ctx.input(2);
    OPENBPU_CHECK(depth_t.element_count() == 1 && depth_t.rank() <= 1 && dtype_size(depth_t.dtype()) > 0,
          "OneHot: depth must be a scalar or one-element tensor, got ", depth_t.describe());
    const double depth_value = depth_t.float_at(0);
    OPENBPU_CHECK(depth_value >= 1 && depth_value < 9.0e15, "OneHot: depth must be >= 1, got ",
          depth_value);
    const int64_t depth = int64_t(depth_value);
    OPENBPU_CHECK(values.rank() == 1 && values.element_count() == 2,
          "OneHot: values must be a 1-D tensor [off_value, on_value], got ", values.describe());
    const size_t width = dtype_size(values.dtype());
    OPENBPU_CHECK(width > 0, "OneHot: unsupported values type ", dtype_name(values.dtype()));
    OPENBPU_CHECK(dtype_size(indices.dtype()) > 0, "OneHot: unsupported indices type ",
          dtype_name(indices.dtype()));
    const int64_t out_rank = indices.rank() + 1;
    const size_t axis = size_t(normalize_axis(axis_, out_rank, "OneHot: axis"));
    Shape out_shape = indices.shape();
    out_shape.insert(out_shape.begin() + std::ptrdiff_t(axis), depth);
    Tensor& y = ctx.allocate_output(0, values.dtype(), out_shape);
    const char* value_bytes = static_cast<const char*>(values.raw_data());
    fill_elements(ctx.thread_pool(), width, y.raw_data(), y.element_count(), value_bytes);
    const int64_t inner = dims_product(indices.shape(), axis, indices.shape().size());
    const bool float_indices = dtype_is_float(indices.dtype());
    char* out = static_cast<char*>(y.raw_data());
    for (int64_t k = 0; k < indices.element_count(); ++k) {
      int64_t index = 0;
      if (float_indices) {
        const double v = indices.float_at(k);
        if (!(std::fabs(v) < 9.0e15)) continue;  // NaN or far out of range: all off_value
        index = int64_t(std::trunc(v));
      } else {
        index = indices.int_at(k);
      }
      if (index < 0 && negative_indices_) index += depth;
      if (index < 0 || index >= depth) continue;  // out of range: all off_value
      const int64_t outer = k / inner, pos = k % inner;
      const int64_t offset = (outer * depth + index) * inner + pos;
      std::memcpy(out + size_t(offset) * width, value_bytes + width, width);
    }
  }

 private:
  int64_t axis_;
  bool negative_indices_;  // opset 11: indices in [-depth, 0) count from the end
};

// ---------------------------------------------------------------------------------------------
// NonZero

class NonZeroKernel final : public Kernel {
 public:
  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    std::vector<int64_t> positions;
    dispatch<AllTypes>(x.dtype(), "NonZero", [&]<typename T>() {
      const T* in = x.data<T>();
      for (int64_t i = 0; i < x.element_count(); ++i) {
        if (to_compute(in[i]) != ComputeType<T>(0)) positions.push_back(i);
      }
    });
    // A scalar is treated as a 1-D tensor of one element (as numpy and onnxruntime do).
    const Shape shape = x.rank() == 0 ? Shape{1} : x.shape();
    const int64_t rank = int64_t(shape.size());
    const int64_t count = int64_t(positions.size());
    Tensor& y = ctx.allocate_output(0, DataType::kInt64, {rank, count});
    int64_t* out = y.data<int64_t>();
    for (int64_t j = 0; j < count; ++j) {
      int64_t rest = positions[size_t(j)];
      for (int64_t d = rank; d-- > 0;) {
        out[d * count + j] = rest % shape[size_t(d)];
        rest /= shape[size_t(d)];
      }
    }
  }
};

// ---------------------------------------------------------------------------------------------
// Unique: slices along `axis` (elements of the flattened input without axis), sorted
// lexicographically or in order of first occurrence. NaNs compare equal to each other and
// greater than every number.

template <typename V>
bool value_less(V a, V b) {
  if constexpr (std::is_floating_point_v<V>) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
  }
  return a < b;
}

template <typename V>
bool value_equal(V a, V b) {
  if constexpr (std::is_floating_point_v<V>) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  }
  return a == b;
}

class UniqueKernel final : public Kernel {
 public:
  explicit UniqueKernel(const NodeInfo& node) : sorted_(node.attrs.get_int("sorted", 1) != 0) {
    if (node.attrs.has("axis")) axis_ = node.attrs.get_int("axis");
  }

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const size_t width = dtype_size(x.dtype());
    // View x as [outer, dim, inner]; slice j is x[:, j, :].
    int64_t outer = 1, dim = x.element_count(), inner = 1;
    std::optional<size_t> axis;
    if (axis_) {
      axis = size_t(normalize_axis(*axis_, x.rank(), "Unique: axis"));
      outer = dims_product(x.shape(), 0, *axis);
      dim = x.shape()[*axis];
      inner = dims_product(x.shape(), *axis + 1, x.shape().size());
    }
    std::vector<int64_t> order(static_cast<size_t>(dim));
    std::iota(order.begin(), order.end(), int64_t{0});
    // group[j]: the unique group of slice j; sorted order groups by content.
    std::vector<int64_t> group_of(static_cast<size_t>(dim), 0);
    std::vector<int64_t> group_first;  // first slice of each group, in sorted order
    dispatch<AllTypes>(x.dtype(), "Unique", [&]<typename T>() {
      const T* in = x.data<T>();
      auto at = [&](int64_t j, int64_t e) {
        return to_compute(in[((e / inner) * dim + j) * inner + e % inner]);
      };
      const int64_t slice = outer * inner;
      auto less = [&](int64_t a, int64_t b) {
        for (int64_t e = 0; e < slice; ++e) {
          const auto va = at(a, e), vb = at(b, e);
          if (value_less(va, vb)) return true;
          if (value_less(vb, va)) return false;
        }
        return false;
      };
      auto equal = [&](int64_t a, int64_t b) {
        for (int64_t e = 0; e < slice; ++e) {
          if (!value_equal(at(a, e), at(b, e))) return false;
        }
        return true;
      };
      std::stable_sort(order.begin(), order.end(), less);
      for (size_t i = 0; i < order.size(); ++i) {
        if (i == 0 || !equal(order[i - 1], order[i])) group_first.push_back(order[i]);
        group_of[size_t(order[i])] = int64_t(group_first.size()) - 1;
      }
    });
    const int64_t unique = int64_t(group_first.size());
    // Output position of each group: sorted order, or order of first occurrence.
    std::vector<int64_t> position(static_cast<size_t>(unique));
    std::iota(position.begin(), position.end(), int64_t{0});
    if (!sorted_) {
      std::vector<int64_t> by_first(position);
      std::sort(by_first.begin(), by_first.end(), [&](int64_t a, int64_t b) {
        return group_first[size_t(a)] < group_first[size_t(b)];
      });
      for (int64_t p = 0; p < unique; ++p) position[size_t(by_first[size_t(p)])] = p;
    }

    Shape y_shape{unique};
    if (axis) {
      y_shape = x.shape();
      y_shape[*axis] = unique;
    }
    Tensor& y = ctx.allocate_output(0, x.dtype(), y_shape);
    Tensor& first = ctx.allocate_output(1, DataType::kInt64, {unique});
    Tensor& inverse = ctx.allocate_output(2, DataType::kInt64, {dim});
    Tensor& counts = ctx.allocate_output(3, DataType::kInt64, {unique});
    const size_t run = size_t(inner) * width;
    for (int64_t g = 0; g < unique; ++g) {
      const int64_t p = position[size_t(g)];
      const int64_t src_slice = group_first[size_t(g)];
      first.data<int64_t>()[p] = src_slice;
      for (int64_t o = 0; o < outer; ++o) {
        std::memcpy(static_cast<char*>(y.raw_data()) + size_t(o * unique + p) * run,
                    static_cast<const char*>(x.raw_data()) + size_t(o * dim + src_slice) * run,
                    run);
      }
    }
    for (int64_t j = 0; j < dim; ++j) {
      const int64_t p = position[size_t(group_of[size_t(j)])];
      inverse.data<int64_t>()[j] = p;
      ++counts.data<int64_t>()[p];
    }
  }

 private:
  bool sorted_;
  std::optional<int64_t> axis_;
};

}  // namespace

void register_generator_kernels(std::vector<KernelDef>& defs) {
  defs.push_back({"",
                  "Constant",
                  1,
                  {{"value", AttrKind::kTensor},
                   {"sparse_value", AttrKind::kTensor},
                   {"value_float", AttrKind::kFloat},
                   {"value_floats", AttrKind::kFloats},
                   {"value_int", AttrKind::kInt},
                   {"value_ints", AttrKind::kInts},
                   {"value_string", AttrKind::kString},
                   {"value_strings", AttrKind::kStrings}},
                  &make_kernel<ConstantKernel>});
  defs.push_back({"",
                  "ConstantOfShape",
                  9,
                  {{"value", AttrKind::kTensor}},
                  &make_kernel<ConstantOfShapeKernel>});
  defs.push_back({"", "Range", 11, {}, &make_kernel<RangeKernel>});
  defs.push_back({"",
                  "EyeLike",
                  9,
                  {{"dtype", AttrKind::kInt}, {"k", AttrKind::kInt}},
                  &make_kernel<EyeLikeKernel>});
  defs.push_back({"", "OneHot", 9, {{"axis", AttrKind::kInt}}, &make_kernel<OneHotKernel>});
  defs.push_back({"", "NonZero", 9, {}, &make_kernel<NonZeroKernel>});
  defs.push_back({"",
                  "Unique",
                  11,
                  {{"axis", AttrKind::kInt}, {"sorted", AttrKind::kInt}},
                  &make_kernel<UniqueKernel>});
}

}  // namespace openbpu::kernels
