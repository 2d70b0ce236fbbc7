// Shape-only operators: Reshape, Shape, Size, Flatten, Squeeze, Unsqueeze, Expand, Identity and
// Dropout (inference and seeded training mode). Reshape-like outputs share the input's storage.
#include <algorithm>
#include <cstring>
#include <optional>
#include <random>

#include "families.h"
#include "openbpu/kernels/axes.h"
#include "openbpu/kernels/broadcast.h"
#include "openbpu/kernels/dispatch.h"
#include "openbpu/kernels/strided_copy.h"

namespace openbpu::kernels {

namespace {

// Reads a rank-1 int64 tensor (shape / axes inputs).
std::vector<int64_t> read_int64_list(const Tensor& t, std::string_view op, std::string_view what) {
  OPENBPU_CHECK(t.dtype() == DataType::kInt64, op, ": ", what, " must be int64, got ", t.describe());
  OPENBPU_CHECK(t.rank() == 1, op, ": ", what, " must be a 1-D tensor, got ", t.describe());
  return t.to_int64_vector();
}

// ---------------------------------------------------------------------------------------------
// Reshape (opset 5+; allowzero from 14)

class ReshapeKernel final : public Kernel {
 public:
  explicit ReshapeKernel(const NodeInfo& node)
      : allow_zero_(node.attrs.get_int("allowzero", 0) != 0) {}

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const std::vector<int64_t> requested = read_int64_list(ctx.input(1), "Reshape", "shape");
    Shape out(requested.size());
    std::optional<size_t> inferred;
    bool has_zero = false;
    int64_t known = 1;
    for (size_t i = 0; i < requested.size(); ++i) {
      const int64_t v = requested[i];
      if (v == -1) {
        OPENBPU_CHECK(!inferred, "Reshape: shape ", shape_to_string(requested),
              " has more than one -1 dimension");
        inferred = i;
        continue;
      }
      OPENBPU_CHECK(v >= 0, "Reshape: shape ", shape_to_string(requested), " has dimension ", v,
            " (dimensions must be >= -1)");
      if (v == 0) has_zero = true;
      if (v == 0 && !allow_zero_) {
        OPENBPU_CHECK(static_cast<int64_t>(i) < x.rank(), "Reshape: shape[", i,
              "] is 0 (copy the input dimension) but the input ", x.describe(), " has rank ",
              x.rank());
        out[i] = x.dim(static_cast<int64_t>(i));
      } else {
        out[i] = v;
      }
      OPENBPU_CHECK(!__builtin_mul_overflow(known, out[i], &known), "Reshape: shape ",
            shape_to_string(requested), " has more elements than int64 can count");
    }
    if (inferred) {
      OPENBPU_CHECK(!(allow_zero_ && has_zero), "Reshape: with allowzero=1 the shape ",
            shape_to_string(requested), " must not contain both 0 and -1");
      OPENBPU_CHECK(known != 0 && x.element_count() % known == 0,
            "Reshape: cannot infer the -1 "
            "dimension of ",
            shape_to_string(requested), " for input ", x.describe());
      out[*inferred] = x.element_count() / known;
    }
    ctx.set_output(0, x.reshaped(std::move(out)));
  }

 private:
  bool allow_zero_;
};

// ---------------------------------------------------------------------------------------------
// Shape (start/end from opset 15) and Size

class ShapeKernel final : public Kernel {
 public:
  explicit ShapeKernel(const NodeInfo& node)
      : start_(node.attrs.get_int("start", 0)),
        end_(node.attrs.find("end") != nullptr ? std::optional(node.attrs.get_int("end"))
                                               : std::nullopt) {}

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const int64_t rank = x.rank();
    auto clamp_axis = [rank](int64_t a) {
      return std::clamp(a < 0 ? a + rank : a, int64_t{0}, rank);
    };
    const int64_t begin = clamp_axis(start_);
    const int64_t end = end_ ? clamp_axis(*end_) : rank;
    const int64_t count = std::max<int64_t>(0, end - begin);
    Tensor& y = ctx.allocate_output(0, DataType::kInt64, {count});
    for (int64_t i = 0; i < count; ++i) y.data<int64_t>()[i] = x.dim(begin + i);
  }

 private:
  int64_t start_;
  std::optional<int64_t> end_;
};

class SizeKernel final : public Kernel {
 public:
  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    ctx.allocate_output(0, DataType::kInt64, {}).data<int64_t>()[0] = x.element_count();
  }
};

// ---------------------------------------------------------------------------------------------
// Flatten

class FlattenKernel final : public Kernel {
 public:
  explicit FlattenKernel(const NodeInfo& node) : axis_(node.attrs.get_int("axis", 1)) {}

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const int64_t rank = x.rank();
    OPENBPU_CHECK(axis_ >= -rank && axis_ <= rank, "Flatten: axis ", axis_, " is out of range for rank ",
          rank, " (must be in [", -rank, ", ", rank, "])");
    const size_t axis = static_cast<size_t>(axis_ < 0 ? axis_ + rank : axis_);
    const int64_t outer = dims_product(x.shape(), 0, axis);
    const int64_t inner = dims_product(x.shape(), axis, x.shape().size());
    ctx.set_output(0, x.reshaped({outer, inner}));
  }

 private:
  int64_t axis_;
};

// ---------------------------------------------------------------------------------------------
// Squeeze / Unsqueeze (axes attribute before opset 13, input from 13)

// Axes given either by the attribute (old opsets) or by input 1.
class AxesSource {
 public:
  AxesSource(const NodeInfo& node, std::string_view op, bool required_before_13)
      : op_(op), from_input_(node.opset >= 13) {
    if (from_input_) {
      OPENBPU_CHECK(!node.attrs.has("axes"), op,
            ": the axes attribute was replaced by input 1 in opset "
            "13; the model imports opset ",
            node.opset);
    } else if (node.attrs.has("axes")) {
      axes_ = node.attrs.get_ints("axes");
    } else {
      OPENBPU_CHECK(!required_before_13, op, ": attribute axes is required before opset 13");
    }
  }

  // The raw (not normalised) axes, or nullopt when none are given.
  std::optional<std::vector<int64_t>> axes(const KernelContext& ctx) const {
    if (!from_input_) return axes_;
    if (!ctx.has_input(1)) return std::nullopt;
    return read_int64_list(ctx.input(1), op_, "axes");
  }

 private:
  std::string_view op_;
  bool from_input_;
  std::optional<std::vector<int64_t>> axes_;
};

class SqueezeKernel final : public Kernel {
 public:
  explicit SqueezeKernel(const NodeInfo& node) : axes_(node, "Squeeze", false) {}

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const auto axes = axes_.axes(ctx);
    std::vector<bool> drop(x.shape().size(), false);
    if (axes) {
      for (int64_t a : normalize_axes(*axes, x.rank(), "Squeeze: axis")) {
        OPENBPU_CHECK(x.dim(a) == 1, "Squeeze: dimension ", a, " of ", x.describe(),
              " is not 1 and cannot be squeezed");
        drop[size_t(a)] = true;
      }
    } else {
      for (size_t d = 0; d < drop.size(); ++d) drop[d] = x.shape()[d] == 1;
    }
    Shape out;
    for (size_t d = 0; d < drop.size(); ++d) {
      if (!drop[d]) out.push_back(x.shape()[d]);
    }
    ctx.set_output(0, x.reshaped(std::move(out)));
  }

 private:
  AxesSource axes_;
};

class UnsqueezeKernel final : public Kernel {
 public:
  explicit UnsqueezeKernel(const NodeInfo& node) : axes_(node, "Unsqueeze", true) {}

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const auto axes = axes_.axes(ctx);
    OPENBPU_CHECK(axes.has_value(), "Unsqueeze: input 1 (axes) is required");
    const int64_t out_rank = x.rank() + static_cast<int64_t>(axes->size());
    std::vector<bool> inserted(size_t(out_rank), false);
    for (int64_t a : normalize_axes(*axes, out_rank, "Unsqueeze: axis")) inserted[size_t(a)] = true;
    Shape out;
    size_t next = 0;
    for (int64_t d = 0; d < out_rank; ++d) {
      out.push_back(inserted[size_t(d)] ? 1 : x.shape()[next++]);
    }
    ctx.set_output(0, x.reshaped(std::move(out)));
  }

 private:
  AxesSource axes_;
};

// ---------------------------------------------------------------------------------------------
// Expand

class ExpandKernel final : public Kernel {
 public:
  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Shape target = read_int64_list(ctx.input(1), "Expand", "shape");
    for (int64_t d : target) {
      OPENBPU_CHECK(d >= 0, "Expand: shape ", shape_to_string(target), " has a negative dimension");
    }
    const Shape out = broadcast_shapes(x.shape(), target, "Expand");
    Tensor& y = ctx.allocate_output(0, x.dtype(), out);
    const std::vector<int64_t> src_strides = broadcast_strides(x.shape(), out);
    copy_strided(ctx.thread_pool(), dtype_size(x.dtype()), out, x.raw_data(), src_strides,
                 y.raw_data(), contiguous_strides(out));
  }
};

// ---------------------------------------------------------------------------------------------
// Identity

class IdentityKernel final : public Kernel {
 public:
  void run(KernelContext& ctx) const override { ctx.set_output(0, ctx.input(0)); }
};

// ---------------------------------------------------------------------------------------------
// Dropout. Before opset 12: ratio attribute, always inference (mask of type T before 10, bool
// from 10). From 12: optional inputs ratio and training_mode; in training mode the mask is drawn
// like the ONNX reference (numpy's legacy generator seeded with `seed`: a uniform double per
// element from MT19937, kept where >= ratio), outputs scaled by 1 / (1 - ratio).

class DropoutKernel final : public Kernel {
 public:
  explicit DropoutKernel(const NodeInfo& node)
      : opset_(node.opset), ratio_attr_(node.attrs.get_float("ratio", 0.5f)) {
    OPENBPU_CHECK(!(node.opset >= 12 && node.attrs.has("ratio")),
          "Dropout: the ratio attribute was replaced by input 1 in opset 12");
    OPENBPU_CHECK(node.opset >= 12 || !node.attrs.has("seed"),
          "Dropout: attribute seed exists from opset 12");
    if (node.attrs.has("seed")) seed_ = node.attrs.get_int("seed");
    OPENBPU_CHECK(ratio_attr_ >= 0.0f && ratio_attr_ < 1.0f, "Dropout: ratio must be in [0, 1), got ",
          ratio_attr_);
  }

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    OPENBPU_CHECK(dtype_is_float(x.dtype()), "Dropout: input must be a float tensor, got ", x.describe());
    double ratio = ratio_attr_;
    bool training = false;
    if (opset_ >= 12) {
      ratio = 0.5;
      if (const Tensor* r = ctx.optional_input(1)) {
        OPENBPU_CHECK(r->element_count() == 1 && dtype_is_float(r->dtype()),
              "Dropout: ratio must be a float scalar, got ", r->describe());
        ratio = r->float_at(0);
      }
      if (const Tensor* t = ctx.optional_input(2)) {
        OPENBPU_CHECK(t->element_count() == 1 && t->dtype() == DataType::kBool,
              "Dropout: training_mode must be a bool scalar, got ", t->describe());
        training = t->int_at(0) != 0;
      }
      OPENBPU_CHECK(ratio >= 0.0 && ratio < 1.0, "Dropout: ratio must be in [0, 1), got ", ratio);
    }
    if (!training || ratio == 0.0) {
      ctx.set_output(0, x);
      if (ctx.output_count() > 1) {
        const bool bool_mask = opset_ >= 10;
        Tensor& mask = ctx.allocate_output(1, bool_mask ? DataType::kBool : x.dtype(), x.shape());
        if (bool_mask) {
          std::memset(mask.raw_data(), 1, mask.byte_size());
        } else {
          dispatch<FloatTypes>(x.dtype(), "Dropout", [&]<typename T>() {
            std::fill_n(mask.data<T>(), mask.element_count(), from_compute<T>(1.0f));
          });
        }
      }
      return;
    }
    Tensor& y = ctx.allocate_output(0, x.dtype(), x.shape());
    Tensor& mask = ctx.allocate_output(1, DataType::kBool, x.shape());
    std::mt19937 engine(seed_ ? static_cast<std::mt19937::result_type>(*seed_)
                              : std::random_device{}());
    bool* keep = mask.data<bool>();
    for (int64_t i = 0; i < x.element_count(); ++i) {
      // numpy's random_sample: 53 random bits from two 32-bit draws.
      const uint32_t a = engine() >> 5, b = engine() >> 6;
      const double uniform = (a * 67108864.0 + b) / 9007199254740992.0;
      keep[i] = uniform >= ratio;
    }
    const double scale = 1.0 / (1.0 - ratio);
    dispatch<FloatTypes>(x.dtype(), "Dropout", [&]<typename T>() {
      const T* in = x.data<T>();
      T* out = y.data<T>();
      for (int64_t i = 0; i < x.element_count(); ++i) {
        const double v = keep[i] ? static_cast<double>(to_compute(in[i])) * scale
                                 : 0.0 * static_cast<double>(to_compute(in[i]));
        out[i] = from_compute<T>(static_cast<ComputeType<T>>(v));
      }
    });
  }

 private:
  int opset_;
  float ratio_attr_;
  std::optional<int64_t> seed_;
};

}  // namespace

void register_shape_kernels(std::vector<KernelDef>& defs) {
  defs.push_back({"", "Reshape", 5, {{"allowzero", AttrKind::kInt}}, &make_kernel<ReshapeKernel>});
  defs.push_back({"",
                  "Shape",
                  1,
                  {{"start", AttrKind::kInt}, {"end", AttrKind::kInt}},
                  &make_kernel<ShapeKernel>});
  defs.push_back({"", "Size", 1, {}, &make_kernel<SizeKernel>});
  defs.push_back({"", "Flatten", 1, {{"axis", AttrKind::kInt}}, &make_kernel<FlattenKernel>});
  defs.push_back({"", "Squeeze", 1, {{"axes", AttrKind::kInts}}, &make_kernel<SqueezeKernel>});
  defs.push_back({"", "Unsqueeze", 1, {{"axes", AttrKind::kInts}}, &make_kernel<UnsqueezeKernel>});
  defs.push_back({"", "Expand", 8, {}, &make_kernel<ExpandKernel>});
  defs.push_back({"", "Identity", 1, {}, &make_kernel<IdentityKernel>});
  defs.push_back({"",
                  "Dropout",
                  7,
                  {{"ratio", AttrKind::kFloat}, {"seed", AttrKind::kInt}},
                  &make_kernel<DropoutKernel>});
}

}  // namespace openbpu::kernels
