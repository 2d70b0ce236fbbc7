// Data movement: Concat, Split, Slice, Transpose, Tile, Pad, DepthToSpace, SpaceToDepth,
// ReverseSequence, Trilu, Compress. Elements move as opaque values of their byte width, so
// every element type is supported; contiguous runs are copied with memcpy.
#include <algorithm>
#include <cstring>
#include <optional>
#include <string>

#include "families.h"
#include "openbpu/kernels/axes.h"
#include "openbpu/kernels/dispatch.h"
#include "openbpu/kernels/strided_copy.h"

namespace openbpu::kernels {

namespace {

// Reads a rank-1 int32/int64 tensor as int64 values (starts, ends, pads, ...).
std::vector<int64_t> read_index_list(const Tensor& t, std::string_view op, std::string_view what) {
  OPENBPU_CHECK(t.dtype() == DataType::kInt64 || t.dtype() == DataType::kInt32, op, ": ", what,
        " must be int32 or int64, got ", t.describe());
  OPENBPU_CHECK(t.rank() == 1, op, ": ", what, " must be a 1-D tensor, got ", t.describe());
  return t.to_int64_vector();
}

size_t element_width(const Tensor& t, std::string_view op) {
  const size_t width = dtype_size(t.dtype());
  OPENBPU_CHECK(width > 0, op, " does not support element type ", dtype_name(t.dtype()));
  return width;
}

char* byte_ptr(Tensor& t) {
  return static_cast<char*>(t.raw_data());
}
const char* byte_ptr(const Tensor& t) {
  return static_cast<const char*>(t.raw_data());
}

// Writes the transpose of `src` viewed as `view_shape` into contiguous `dst`: output dimension i
// is view dimension perm[i].
void permuted_copy(ThreadPool* pool, size_t width, const Shape& view_shape,
                   std::span<const int64_t> perm, const void* src, void* dst) {
  const std::vector<int64_t> view_strides = contiguous_strides(view_shape);
  Shape out_shape(perm.size());
  std::vector<int64_t> src_strides(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    out_shape[i] = view_shape[size_t(perm[i])];
    src_strides[i] = view_strides[size_t(perm[i])];
  }
  copy_strided(pool, width, out_shape, src, src_strides, dst, contiguous_strides(out_shape));
}

// ---------------------------------------------------------------------------------------------
// Concat (axis defaults to 1 before opset 4, required after; negative from 11)

class ConcatKernel final : public Kernel {
 public:
  explicit ConcatKernel(const NodeInfo& node)
      : axis_(node.opset < 4 ? node.attrs.get_int("axis", 1) : node.attrs.get_int("axis")) {}

  void run(KernelContext& ctx) const override {
    OPENBPU_CHECK(ctx.input_count() >= 1, "Concat needs at least one input");
    const Tensor& first = ctx.input(0);
    const size_t width = element_width(first, "Concat");
    OPENBPU_CHECK(first.rank() >= 1, "Concat: inputs must have rank >= 1, got ", first.describe());
    const size_t axis = size_t(normalize_axis(axis_, first.rank(), "Concat: axis"));
    Shape out_shape = first.shape();
    out_shape[axis] = 0;
    for (int i = 0; i < ctx.input_count(); ++i) {
      const Tensor& x = ctx.input(i);
      OPENBPU_CHECK(x.dtype() == first.dtype(), "Concat: input ", i, " is ", x.describe(),
            " but input 0 is ", first.describe(), " (element types must match)");
      bool compatible = x.rank() == first.rank();
      for (size_t d = 0; compatible && d < out_shape.size(); ++d) {
        compatible = d == axis || x.shape()[d] == first.shape()[d];
      }
      OPENBPU_CHECK(compatible, "Concat: input ", i, " ", x.describe(), " does not match input 0 ",
            first.describe(), " outside axis ", axis);
      out_shape[axis] += x.shape()[axis];
    }
    Tensor& y = ctx.allocate_output_for_overwrite(0, first.dtype(), out_shape);
    const int64_t outer = dims_product(out_shape, 0, axis);
    const int64_t inner = dims_product(out_shape, axis + 1, out_shape.size());
    const int64_t out_row = out_shape[axis] * inner;
    int64_t offset = 0;
    for (int i = 0; i < ctx.input_count(); ++i) {
      const Tensor& x = ctx.input(i);
      const int64_t block = x.shape()[axis] * inner;
      const int64_t shape[] = {outer, block};
      const int64_t src_strides[] = {block, 1};
      const int64_t dst_strides[] = {out_row, 1};
      copy_strided(ctx.thread_pool(), width, shape, x.raw_data(), src_strides,
                   byte_ptr(y) + size_t(offset) * width, dst_strides);
      offset += block;
    }
  }

 private:
  int64_t axis_;
};

// ---------------------------------------------------------------------------------------------
// Split (split attribute before opset 13, input from 13; num_outputs attribute from 18)

class SplitKernel final : public Kernel {
 public:
  explicit SplitKernel(const NodeInfo& node)
      : axis_(node.attrs.get_int("axis", 0)), split_from_input_(node.opset >= 13) {
    if (node.attrs.has("split")) {
      OPENBPU_CHECK(!split_from_input_,
            "Split: the split attribute was replaced by input 1 in opset 13; "
            "the model imports opset ",
            node.opset);
      split_attr_ = node.attrs.get_ints("split");
    }
    if (node.attrs.has("num_outputs")) {
      num_outputs_ = node.attrs.get_int("num_outputs");
      OPENBPU_CHECK(*num_outputs_ >= 1, "Split: num_outputs must be >= 1, got ", *num_outputs_);
      OPENBPU_CHECK(*num_outputs_ == node.output_count, "Split: num_outputs is ", *num_outputs_,
            " but the node lists ", node.output_count, " outputs");
    }
  }

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const size_t width = element_width(x, "Split");
    OPENBPU_CHECK(x.rank() >= 1, "Split: input must have rank >= 1, got ", x.describe());
    const size_t axis = size_t(normalize_axis(axis_, x.rank(), "Split: axis"));
    const int64_t dim = x.shape()[axis];
    const int64_t outputs = ctx.output_count();
    OPENBPU_CHECK(outputs >= 1, "Split needs at least one output");
    std::optional<std::vector<int64_t>> split = split_attr_;
    if (split_from_input_ && ctx.has_input(1)) {
      split = read_index_list(ctx.input(1), "Split", "split");
    }
    std::vector<int64_t> sizes;
    if (split) {
      OPENBPU_CHECK(int64_t(split->size()) == outputs, "Split: split lists ", split->size(),
            " sizes but the node has ", outputs, " outputs");
      int64_t total = 0;
      for (int64_t s : *split) {
        OPENBPU_CHECK(s >= 0, "Split: split sizes must be >= 0, got ", shape_to_string(*split));
        total += s;
      }
      OPENBPU_CHECK(total == dim, "Split: split sizes ", shape_to_string(*split), " sum to ", total,
            " but dimension ", axis, " of ", x.describe(), " is ", dim);
      sizes = *split;
    } else if (num_outputs_) {
      // opset 18: chunks of ceil(dim / n); the last one may be smaller.
      const int64_t chunk = (dim + outputs - 1) / outputs;
      for (int64_t i = 0, left = dim; i < outputs; ++i) {
        sizes.push_back(std::min(chunk, left));
        left -= sizes.back();
      }
    } else {
      OPENBPU_CHECK(dim % outputs == 0, "Split: dimension ", axis, " of ", x.describe(),
            " cannot be split evenly into ", outputs, " outputs");
      sizes.assign(size_t(outputs), dim / outputs);
    }
    const int64_t outer = dims_product(x.shape(), 0, axis);
    const int64_t inner = dims_product(x.shape(), axis + 1, x.shape().size());
    int64_t offset = 0;
    for (int64_t i = 0; i < outputs; ++i) {
      Shape out_shape = x.shape();
      out_shape[axis] = sizes[size_t(i)];
      Tensor& y = ctx.allocate_output(int(i), x.dtype(), out_shape);
      const int64_t block = sizes[size_t(i)] * inner;
      const int64_t shape[] = {outer, block};
      const int64_t src_strides[] = {dim * inner, 1};
      const int64_t dst_strides[] = {block, 1};
      copy_strided(ctx.thread_pool(), width, shape, byte_ptr(x) + size_t(offset) * width,
                   src_strides, y.raw_data(), dst_strides);
      offset += block;
    }
  }

 private:
  int64_t axis_;
  bool split_from_input_;
  std::optional<std::vector<int64_t>> split_attr_;
  std::optional<int64_t> num_outputs_;
};

// ---------------------------------------------------------------------------------------------
// Slice (starts/ends/axes attributes before opset 10; inputs with steps from 10)

class SliceKernel final : public Kernel {
 public:
  explicit SliceKernel(const NodeInfo& node) : from_inputs_(node.opset >= 10) {
    if (!from_inputs_) {
      starts_ = node.attrs.get_ints("starts");
      ends_ = node.attrs.get_ints("ends");
      if (node.attrs.has("axes")) axes_ = node.attrs.get_ints("axes");
    } else {
      for (const char* name : {"starts", "ends", "axes"}) {
        OPENBPU_CHECK(!node.attrs.has(name), "Slice: attribute ", name,
              " was replaced by an input in opset 10; the model imports opset ", node.opset);
      }
    }
  }

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const size_t width = element_width(x, "Slice");
    std::vector<int64_t> starts = starts_, ends = ends_;
    std::optional<std::vector<int64_t>> axes = axes_;
    std::optional<std::vector<int64_t>> steps;
    if (from_inputs_) {
      starts = read_index_list(ctx.input(1), "Slice", "starts");
      ends = read_index_list(ctx.input(2), "Slice", "ends");
      if (ctx.has_input(3)) axes = read_index_list(ctx.input(3), "Slice", "axes");
      if (ctx.has_input(4)) steps = read_index_list(ctx.input(4), "Slice", "steps");
    }
    const size_t n = starts.size();
    OPENBPU_CHECK(ends.size() == n, "Slice: ", n, " starts but ", ends.size(), " ends");
    if (axes) OPENBPU_CHECK(axes->size() == n, "Slice: ", n, " starts but ", axes->size(), " axes");
    if (steps) OPENBPU_CHECK(steps->size() == n, "Slice: ", n, " starts but ", steps->size(), " steps");
    std::vector<int64_t> axis_list;
    if (axes) {
      axis_list = normalize_axes(*axes, x.rank(), "Slice: axes");
    } else {
      OPENBPU_CHECK(int64_t(n) <= x.rank(), "Slice: ", n, " starts for input ", x.describe());
      for (size_t i = 0; i < n; ++i) axis_list.push_back(int64_t(i));
    }

    const std::vector<int64_t> in_strides = contiguous_strides(x.shape());
    Shape out_shape = x.shape();
    std::vector<int64_t> src_strides = in_strides;
    int64_t src_offset = 0;
    for (size_t i = 0; i < n; ++i) {
      const size_t axis = size_t(axis_list[i]);
      const int64_t dim = x.shape()[axis];
      const int64_t step = steps ? (*steps)[i] : 1;
      OPENBPU_CHECK(step != 0, "Slice: steps must not be 0 (axis ", axis, ")");
      int64_t start = starts[i] < 0 ? starts[i] + dim : starts[i];
      int64_t end = ends[i] < 0 ? ends[i] + dim : ends[i];
      int64_t count = 0;
      if (step > 0) {
        start = std::clamp<int64_t>(start, 0, dim);
        end = std::clamp<int64_t>(end, 0, dim);
        count = end > start ? (end - start + step - 1) / step : 0;
      } else if (dim > 0) {
        start = std::clamp<int64_t>(start, 0, dim - 1);
        end = std::clamp<int64_t>(end, -1, dim - 1);
        count = start > end ? (start - end + (-step) - 1) / (-step) : 0;
      }
      out_shape[axis] = count;
      if (count > 0) src_offset += start * in_strides[axis];
      src_strides[axis] = in_strides[axis] * step;
    }
    Tensor& y = ctx.allocate_output(0, x.dtype(), out_shape);
    if (y.element_count() == 0) return;
    copy_strided(ctx.thread_pool(), width, out_shape, byte_ptr(x) + size_t(src_offset) * width,
                 src_strides, y.raw_data(), contiguous_strides(out_shape));
  }

 private:
  bool from_inputs_;
  std::vector<int64_t> starts_, ends_;
  std::optional<std::vector<int64_t>> axes_;
};

// ---------------------------------------------------------------------------------------------
// Transpose (default perm reverses the dimensions)

class TransposeKernel final : public Kernel {
 public:
  explicit TransposeKernel(const NodeInfo& node) {
    if (node.attrs.has("perm")) perm_ = node.attrs.get_ints("perm");
  }

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const size_t width = element_width(x, "Transpose");
    const size_t rank = x.shape().size();
    std::vector<int64_t> perm;
    if (perm_) {
      perm = *perm_;
      OPENBPU_CHECK(perm.size() == rank, "Transpose: perm ", shape_to_string(perm), " has ", perm.size(),
            " entries but the input ", x.describe(), " has rank ", rank);
      std::vector<bool> seen(rank, false);
      for (int64_t p : perm) {
        OPENBPU_CHECK(p >= 0 && p < int64_t(rank) && !seen[size_t(p)], "Transpose: perm ",
              shape_to_string(perm), " is not a permutation of [0, ", rank, ")");
        seen[size_t(p)] = true;
      }
    } else {
      for (size_t i = rank; i-- > 0;) perm.push_back(int64_t(i));
    }
    Shape out_shape(rank);
    for (size_t i = 0; i < rank; ++i) out_shape[i] = x.shape()[size_t(perm[i])];
    Tensor& y = ctx.allocate_output(0, x.dtype(), out_shape);
    permuted_copy(ctx.thread_pool(), width, x.shape(), perm, x.raw_data(), y.raw_data());
  }

 private:
  std::optional<std::vector<int64_t>> perm_;
};

// ---------------------------------------------------------------------------------------------
// Tile (repeats input, opset 6+)

class TileKernel final : public Kernel {
 public:
  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const size_t width = element_width(x, "Tile");
    const std::vector<int64_t> repeats = read_index_list(ctx.input(1), "Tile", "repeats");
    OPENBPU_CHECK(int64_t(repeats.size()) == x.rank(), "Tile: repeats ", shape_to_string(repeats),
          " must have one entry per dimension of ", x.describe());
    Shape out_shape(repeats.size());
    // The output, viewed as [r0, d0, r1, d1, ...], reads the input with stride 0 along each r.
    Shape view_shape;
    std::vector<int64_t> src_strides;
    const std::vector<int64_t> in_strides = contiguous_strides(x.shape());
    for (size_t d = 0; d < repeats.size(); ++d) {
      OPENBPU_CHECK(repeats[d] >= 0, "Tile: repeats must be >= 0, got ", shape_to_string(repeats));
      OPENBPU_CHECK(!__builtin_mul_overflow(x.shape()[d], repeats[d], &out_shape[d]), "Tile: repeats ",
            shape_to_string(repeats), " overflow dimension ", d, " of ", x.describe());
      view_shape.insert(view_shape.end(), {repeats[d], x.shape()[d]});
      src_strides.insert(src_strides.end(), {0, in_strides[d]});
    }
    Tensor& y = ctx.allocate_output(0, x.dtype(), out_shape);
    copy_strided(ctx.thread_pool(), width, view_shape, x.raw_data(), src_strides, y.raw_data(),
                 contiguous_strides(view_shape));
  }
};

// ---------------------------------------------------------------------------------------------
// Pad (pads/value attributes before opset 11, inputs from 11; axes input from 18)

enum class PadMode { kConstant, kReflect, kEdge, kWrap };

class PadKernel final : public Kernel {
 public:
  explicit PadKernel(const NodeInfo& node)
      : from_inputs_(node.opset >= 11), value_attr_(node.attrs.get_float("value", 0.0f)) {
    const std::string mode = node.attrs.get_string("mode", "constant");
    if (mode == "constant") {
      mode_ = PadMode::kConstant;
    } else if (mode == "reflect") {
      mode_ = PadMode::kReflect;
    } else if (mode == "edge") {
      mode_ = PadMode::kEdge;
    } else if (mode == "wrap") {
      mode_ = PadMode::kWrap;
    } else {
      fail("Pad: mode must be constant, reflect, edge or wrap, got '", mode, "'");
    }
    if (from_inputs_) {
      for (const char* name : {"pads", "value"}) {
        OPENBPU_CHECK(!node.attrs.has(name), "Pad: attribute ", name,
              " was replaced by an input in opset 11; the model imports opset ", node.opset);
      }
    } else {
      pads_attr_ = node.attrs.get_ints("pads");
    }
  }

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const size_t width = element_width(x, "Pad");
    const size_t rank = x.shape().size();
    std::vector<int64_t> pads = pads_attr_;
    std::vector<int64_t> axes;
    if (from_inputs_) pads = read_index_list(ctx.input(1), "Pad", "pads");
    if (from_inputs_ && ctx.has_input(3)) {
      axes =
          normalize_axes(read_index_list(ctx.input(3), "Pad", "axes"), int64_t(rank), "Pad: axes");
    } else {
      for (size_t d = 0; d < rank; ++d) axes.push_back(int64_t(d));
    }
    OPENBPU_CHECK(pads.size() == 2 * axes.size(), "Pad: pads ", shape_to_string(pads), " must have ",
          2 * axes.size(), " entries (begin and end per padded axis) for input ", x.describe());
    std::vector<int64_t> begin(rank, 0), end(rank, 0);
    for (size_t i = 0; i < axes.size(); ++i) {
      begin[size_t(axes[i])] = pads[i];
      end[size_t(axes[i])] = pads[i + axes.size()];
    }

    // The padding value as raw bytes of the element type.
    alignas(8) unsigned char value[8] = {};
    if (mode_ == PadMode::kConstant) {
      const Tensor* v = from_inputs_ ? ctx.optional_input(2) : nullptr;
      if (v != nullptr) {
        OPENBPU_CHECK(v->dtype() == x.dtype() && v->element_count() == 1,
              "Pad: constant_value must be "
              "a one-element tensor of the input's type ",
              dtype_name(x.dtype()), ", got ", v->describe());
        std::memcpy(value, v->raw_data(), width);
      } else {
        dispatch<AllTypes>(x.dtype(), "Pad", [&]<typename T>() {
          T typed;
          if constexpr (std::is_same_v<T, bool>) {
            typed = value_attr_ != 0.0f;
          } else {
            typed = from_compute<T>(static_cast<ComputeType<T>>(value_attr_));
          }
          std::memcpy(value, &typed, sizeof(T));
        });
      }
    }

    Shape out_shape(rank);
    for (size_t d = 0; d < rank; ++d) {
      const int64_t dim = x.shape()[d];
      OPENBPU_CHECK(!__builtin_add_overflow(dim, begin[d], &out_shape[d]) &&
                !__builtin_add_overflow(out_shape[d], end[d], &out_shape[d]),
            "Pad: pads ", shape_to_string(pads), " overflow dimension ", d);
      OPENBPU_CHECK(out_shape[d] >= 0, "Pad: pads ", shape_to_string(pads), " remove more than the ", dim,
            " elements of dimension ", d);
      OPENBPU_CHECK(mode_ == PadMode::kConstant || dim > 0 || out_shape[d] == 0, "Pad: cannot pad the ",
            "empty dimension ", d, " of ", x.describe(), " in a non-constant mode");
    }
    Tensor& y = ctx.allocate_output(0, x.dtype(), out_shape);
    if (y.element_count() == 0) return;

    // For each axis, the input index each output index reads (-1: the padding value).
    std::vector<std::vector<int64_t>> source(rank);
    for (size_t d = 0; d < rank; ++d) {
      source[d].resize(size_t(out_shape[d]));
      for (int64_t o = 0; o < out_shape[d]; ++o) {
        source[d][size_t(o)] = source_index(o - begin[d], x.shape()[d]);
      }
    }
    const int64_t inner = rank == 0 ? 1 : out_shape[rank - 1];
    const int64_t rows = y.element_count() / inner;
    const std::vector<int64_t> in_strides = contiguous_strides(x.shape());
    const std::vector<int64_t>* last = rank == 0 ? nullptr : &source[rank - 1];
    dispatch_by_width(width, "Pad", [&]<typename U>() {
      const U* in = static_cast<const U*>(x.raw_data());
      U* out = static_cast<U*>(y.raw_data());
      U pad_value;
      std::memcpy(&pad_value, value, sizeof(U));
      parallel_for(ctx.thread_pool(), rows, std::max<int64_t>(1, 4096 / inner),
                   [&](int64_t row_begin, int64_t row_end) {
                     for (int64_t row = row_begin; row < row_end; ++row) {
                       // Input offset of this output row, or -1 if it lies in the padding.
                       int64_t in_row = 0;
                       for (size_t d = rank < 1 ? 0 : rank - 1, rest = size_t(row); d-- > 0;) {
                         const int64_t o = int64_t(rest % size_t(out_shape[d]));
                         rest /= size_t(out_shape[d]);
                         const int64_t s = source[d][size_t(o)];
                         if (s < 0 || in_row < 0) {
                           in_row = -1;
                         } else {
                           in_row += s * in_strides[d];
                         }
                       }
                       U* dst = out + row * inner;
                       if (in_row < 0) {
                         std::fill(dst, dst + inner, pad_value);
                         continue;
                       }
                       for (int64_t o = 0; o < inner; ++o) {
                         const int64_t s = last ? (*last)[size_t(o)] : 0;
                         dst[o] = s < 0 ? pad_value : in[in_row + s];
                       }
                     }
                   });
    });
  }

 private:
  // The input index read at (possibly out-of-range) position i of a dimension of size dim.
  int64_t source_index(int64_t i, int64_t dim) const {
    if (i >= 0 && i < dim) return i;
    switch (mode_) {
      case PadMode::kConstant: return -1;
      case PadMode::kEdge: return i < 0 ? 0 : dim - 1;
      case PadMode::kWrap: return ((i % dim) + dim) % dim;
      case PadMode::kReflect: {
        if (dim == 1) return 0;
        const int64_t period = 2 * (dim - 1);
        const int64_t r = ((i % period) + period) % period;
        return r < dim ? r : period - r;
      }
    }
    return -1;
  }

  bool from_inputs_;
  float value_attr_;
  PadMode mode_ = PadMode::kConstant;
  std::vector<int64_t> pads_attr_;
};

// ---------------------------------------------------------------------------------------------
// DepthToSpace (mode DCR / CRD from opset 11) and SpaceToDepth

class DepthToSpaceKernel final : public Kernel {
 public:
  explicit DepthToSpaceKernel(const NodeInfo& node)
      : block_(node.attrs.get_int("blocksize")),
        crd_(node.attrs.get_string("mode", "DCR") == "CRD") {
    const std::string mode = node.attrs.get_string("mode", "DCR");
    OPENBPU_CHECK(mode == "DCR" || mode == "CRD", "DepthToSpace: mode must be DCR or CRD, got '", mode,
          "'");
    OPENBPU_CHECK(block_ >= 1, "DepthToSpace: blocksize must be >= 1, got ", block_);
  }

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const size_t width = element_width(x, "DepthToSpace");
    OPENBPU_CHECK(x.rank() == 4, "DepthToSpace: input must be 4-D (N, C, H, W), got ", x.describe());
    const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3), b = block_;
    OPENBPU_CHECK(c % (b * b) == 0, "DepthToSpace: channels ", c,
          " must be divisible by blocksize^2 = ", b * b);
    const int64_t oc = c / (b * b);
    Tensor& y = ctx.allocate_output(0, x.dtype(), {n, oc, h * b, w * b});
    if (crd_) {
      const int64_t perm[] = {0, 1, 4, 2, 5, 3};
      permuted_copy(ctx.thread_pool(), width, {n, oc, b, b, h, w}, perm, x.raw_data(),
                    y.raw_data());
    } else {
      const int64_t perm[] = {0, 3, 4, 1, 5, 2};
      permuted_copy(ctx.thread_pool(), width, {n, b, b, oc, h, w}, perm, x.raw_data(),
                    y.raw_data());
    }
  }

 private:
  int64_t block_;
  bool crd_;
};

class SpaceToDepthKernel final : public Kernel {
 public:
  explicit SpaceToDepthKernel(const NodeInfo& node) : block_(node.attrs.get_int("blocksize")) {
    OPENBPU_CHECK(block_ >= 1, "SpaceToDepth: blocksize must be >= 1, got ", block_);
  }

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const size_t width = element_width(x, "SpaceToDepth");
    OPENBPU_CHECK(x.rank() == 4, "SpaceToDepth: input must be 4-D (N, C, H, W), got ", x.describe());
    const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3), b = block_;
    OPENBPU_CHECK(h % b == 0 && w % b == 0, "SpaceToDepth: height ", h, " and width ", w,
          " must be divisible by blocksize ", b);
    Tensor& y = ctx.allocate_output(0, x.dtype(), {n, c * b * b, h / b, w / b});
    const int64_t perm[] = {0, 3, 5, 1, 2, 4};
    permuted_copy(ctx.thread_pool(), width, {n, c, h / b, b, w / b, b}, perm, x.raw_data(),
                  y.raw_data());
  }

 private:
  int64_t block_;
};

// ---------------------------------------------------------------------------------------------
// ReverseSequence

class ReverseSequenceKernel final : public Kernel {
 public:
  explicit ReverseSequenceKernel(const NodeInfo& node)
      : batch_axis_(node.attrs.get_int("batch_axis", 1)),
        time_axis_(node.attrs.get_int("time_axis", 0)) {
    OPENBPU_CHECK((batch_axis_ == 0 || batch_axis_ == 1) && (time_axis_ == 0 || time_axis_ == 1) &&
              batch_axis_ != time_axis_,
          "ReverseSequence: batch_axis and time_axis must be 0 and 1 in some order, got ",
          batch_axis_, " and ", time_axis_);
  }

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const size_t width = element_width(x, "ReverseSequence");
    OPENBPU_CHECK(x.rank() >= 2, "ReverseSequence: input must have rank >= 2, got ", x.describe());
    const Tensor& lens_t = ctx.input(1);
    OPENBPU_CHECK(lens_t.dtype() == DataType::kInt64 && lens_t.rank() == 1,
          "ReverseSequence: sequence_lens must be a 1-D int64 tensor, got ", lens_t.describe());
    const std::vector<int64_t> lens = lens_t.to_int64_vector();
    const int64_t batch = x.dim(batch_axis_), time = x.dim(time_axis_);
    OPENBPU_CHECK(int64_t(lens.size()) == batch, "ReverseSequence: sequence_lens has ", lens.size(),
          " entries but the batch dimension is ", batch);
    for (int64_t len : lens) {
      OPENBPU_CHECK(len >= 0 && len <= time, "ReverseSequence: sequence length ", len, " is outside [0, ",
            time, "]");
    }
    Tensor& y = ctx.allocate_output(0, x.dtype(), x.shape());
    const size_t block = size_t(dims_product(x.shape(), 2, x.shape().size())) * width;
    const int64_t dim1 = x.dim(1);
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t t = 0; t < time; ++t) {
        const int64_t src_t = t < lens[size_t(b)] ? lens[size_t(b)] - 1 - t : t;
        const int64_t dst_row = time_axis_ == 0 ? t * dim1 + b : b * dim1 + t;
        const int64_t src_row = time_axis_ == 0 ? src_t * dim1 + b : b * dim1 + src_t;
        std::memcpy(byte_ptr(y) + size_t(dst_row) * block, byte_ptr(x) + size_t(src_row) * block,
                    block);
      }
    }
  }

 private:
  int64_t batch_axis_, time_axis_;
};

// ---------------------------------------------------------------------------------------------
// Trilu

class TriluKernel final : public Kernel {
 public:
  explicit TriluKernel(const NodeInfo& node) : upper_(node.attrs.get_int("upper", 1) != 0) {}

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const size_t width = element_width(x, "Trilu");
    OPENBPU_CHECK(x.rank() >= 2, "Trilu: input must have rank >= 2, got ", x.describe());
    int64_t k = 0;
    if (const Tensor* k_t = ctx.optional_input(1)) {
      OPENBPU_CHECK(k_t->dtype() == DataType::kInt64 && k_t->element_count() == 1,
            "Trilu: k must be an int64 scalar, got ", k_t->describe());
      k = k_t->int_at(0);
    }
    Tensor& y = ctx.allocate_output(0, x.dtype(), x.shape());
    const int64_t rows = x.dim(x.rank() - 2), cols = x.dim(x.rank() - 1);
    k = std::clamp<int64_t>(k, -rows - 1, cols + 1);  // beyond that nothing changes
    const int64_t matrices = dims_product(x.shape(), 0, x.shape().size() - 2);
    for (int64_t m = 0; m < matrices; ++m) {
      for (int64_t i = 0; i < rows; ++i) {
        // Kept columns: j - i >= k (upper) or j - i <= k (lower).
        const int64_t first = upper_ ? std::clamp<int64_t>(i + k, 0, cols) : 0;
        const int64_t last = upper_ ? cols : std::clamp<int64_t>(i + k + 1, 0, cols);
        if (last <= first) continue;
        const size_t offset = size_t((m * rows + i) * cols + first) * width;
        std::memcpy(byte_ptr(y) + offset, byte_ptr(x) + offset, size_t(last - first) * width);
      }
    }
  }

 private:
  bool upper_;
};

// ---------------------------------------------------------------------------------------------
// Compress

class CompressKernel final : public Kernel {
 public:
  explicit CompressKernel(const NodeInfo& node) {
    if (node.attrs.has("axis")) axis_ = node.attrs.get_int("axis");
  }

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const size_t width = element_width(x, "Compress");
    const Tensor& cond = ctx.input(1);
    OPENBPU_CHECK(cond.dtype() == DataType::kBool && cond.rank() == 1,
          "Compress: condition must be a 1-D bool tensor, got ", cond.describe());
    OPENBPU_CHECK(x.rank() >= 1, "Compress: input must have rank >= 1, got ", x.describe());
    const bool* flags = cond.data<bool>();
    std::optional<size_t> axis;
    if (axis_) axis = size_t(normalize_axis(*axis_, x.rank(), "Compress: axis"));
    const int64_t dim = axis ? x.shape()[*axis] : x.element_count();
    std::vector<int64_t> selected;
    for (int64_t i = 0; i < cond.element_count(); ++i) {
      if (!flags[i]) continue;
      OPENBPU_CHECK(i < dim, "Compress: condition selects index ", i, " but the ",
            axis ? "axis" : "flattened input", " has only ", dim, " entries");
      selected.push_back(i);
    }
    const int64_t count = int64_t(selected.size());
    Shape out_shape{count};
    if (axis) {
      out_shape = x.shape();
      out_shape[*axis] = count;
    }
    Tensor& y = ctx.allocate_output(0, x.dtype(), out_shape);
    const int64_t outer = axis ? dims_product(x.shape(), 0, *axis) : 1;
    const size_t block =
        width * size_t(axis ? dims_product(x.shape(), *axis + 1, x.shape().size()) : 1);
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t j = 0; j < count; ++j) {
        std::memcpy(byte_ptr(y) + size_t(o * count + j) * block,
                    byte_ptr(x) + size_t(o * dim + selected[size_t(j)]) * block, block);
      }
    }
  }

 private:
  std::optional<int64_t> axis_;
};

}  // namespace

void register_movement_kernels(std::vector<KernelDef>& defs) {
  defs.push_back({"", "Concat", 1, {{"axis", AttrKind::kInt}}, &make_kernel<ConcatKernel>});
  defs.push_back(
      {"",
       "Split",
       2,
       {{"axis", AttrKind::kInt}, {"split", AttrKind::kInts}, {"num_outputs", AttrKind::kInt}},
       &make_kernel<SplitKernel>});
  defs.push_back(
      {"",
       "Slice",
       1,
       {{"starts", AttrKind::kInts}, {"ends", AttrKind::kInts}, {"axes", AttrKind::kInts}},
       &make_kernel<SliceKernel>});
  defs.push_back({"", "Transpose", 1, {{"perm", AttrKind::kInts}}, &make_kernel<TransposeKernel>});
  defs.push_back({"", "Tile", 6, {}, &make_kernel<TileKernel>});
  defs.push_back(
      {"",
       "Pad",
       2,
       {{"mode", AttrKind::kString}, {"pads", AttrKind::kInts}, {"value", AttrKind::kFloat}},
       &make_kernel<PadKernel>});
  defs.push_back({"",
                  "DepthToSpace",
                  1,
                  {{"blocksize", AttrKind::kInt, true}, {"mode", AttrKind::kString}},
                  &make_kernel<DepthToSpaceKernel>});
  defs.push_back({"",
                  "SpaceToDepth",
                  1,
                  {{"blocksize", AttrKind::kInt, true}},
                  &make_kernel<SpaceToDepthKernel>});
  defs.push_back({"",
                  "ReverseSequence",
                  10,
                  {{"batch_axis", AttrKind::kInt}, {"time_axis", AttrKind::kInt}},
                  &make_kernel<ReverseSequenceKernel>});
  defs.push_back({"", "Trilu", 14, {{"upper", AttrKind::kInt}}, &make_kernel<TriluKernel>});
  defs.push_back({"", "Compress", 9, {{"axis", AttrKind::kInt}}, &make_kernel<CompressKernel>});
}

}  // namespace openbpu::kernels
