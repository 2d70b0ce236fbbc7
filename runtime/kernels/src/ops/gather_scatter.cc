// Indexed reads and writes: Gather, GatherElements, GatherND, Scatter (opset 9-10 name),
// ScatterElements and ScatterND (with reductions). Every index is checked against its bound
// before any access; negative indices count from the end.
#include <algorithm>
#include <cstring>
#include <string>

#include "families.h"
#include "openbpu/kernels/axes.h"
#include "openbpu/kernels/dispatch.h"
#include "openbpu/kernels/strided_copy.h"

namespace openbpu::kernels {

namespace {

// Elements per parallel chunk of copying.
constexpr int64_t kGatherChunkElements = 1 << 15;

size_t element_width(const Tensor& t, std::string_view op) {
  const size_t width = dtype_size(t.dtype());
  OPENBPU_CHECK(width > 0, op, " does not support element type ", dtype_name(t.dtype()));
  return width;
}

// All indices of an int32/int64 tensor as int64.
std::vector<int64_t> read_indices(const Tensor& t, std::string_view op) {
  OPENBPU_CHECK(t.dtype() == DataType::kInt64 || t.dtype() == DataType::kInt32, op,
        ": indices must be int32 or int64, got ", t.describe());
  return t.to_int64_vector();
}

// Maps index i in [-dim, dim) to [0, dim); KernelError naming the index and bound otherwise.
int64_t checked_index(int64_t i, int64_t dim, std::string_view op, size_t axis) {
  OPENBPU_CHECK(i >= -dim && i < dim, op, ": index ", i, " is out of bounds for axis ", axis, " of size ",
        dim, " (must be in [", -dim, ", ", dim - 1, "])");
  return i < 0 ? i + dim : i;
}

// Scatter reductions (none, add, mul from opset 16; max, min from 18).
enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

Reduction parse_reduction(const NodeInfo& node) {
  const std::string r = node.attrs.get_string("reduction", "none");
  if (r == "none") return Reduction::kNone;
  if (r == "add") return Reduction::kAdd;
  if (r == "mul") return Reduction::kMul;
  if (r == "max") return Reduction::kMax;
  if (r == "min") return Reduction::kMin;
  fail(node.op_type, ": reduction must be none, add, mul, max or min, got '", r, "'");
}

// Applies `updates` (count elements, contiguous) onto `dst` positions given by `offsets`
// (one destination run of `run` elements per offset), in order, with the reduction.
void scatter_runs(const Tensor& updates, Tensor& out, std::span<const int64_t> offsets, int64_t run,
                  Reduction reduction, std::string_view op) {
  if (reduction == Reduction::kNone) {
    const size_t width = element_width(out, op);
    const size_t bytes = size_t(run) * width;
    const char* src = static_cast<const char*>(updates.raw_data());
    char* dst = static_cast<char*>(out.raw_data());
    for (size_t k = 0; k < offsets.size(); ++k) {
      std::memcpy(dst + size_t(offsets[k]) * width, src + k * bytes, bytes);
    }
    return;
  }
  dispatch<NumericTypes>(out.dtype(), op, [&]<typename T>() {
    const T* src = updates.data<T>();
    T* dst = out.data<T>();
    for (size_t k = 0; k < offsets.size(); ++k) {
      for (int64_t i = 0; i < run; ++i) {
        T& d = dst[offsets[k] + i];
        const auto a = to_compute(d);
        const auto b = to_compute(src[int64_t(k) * run + i]);
        ComputeType<T> r{};
        switch (reduction) {
          case Reduction::kAdd: r = a + b; break;
          case Reduction::kMul: r = a * b; break;
          case Reduction::kMax: r = std::max(a, b); break;
          case Reduction::kMin: r = std::min(a, b); break;
          case Reduction::kNone: r = b; break;
        }
        d = from_compute<T>(static_cast<ComputeType<T>>(r));
      }
    }
  });
}

// ---------------------------------------------------------------------------------------------
// Gather

class GatherKernel final : public Kernel {
 public:
  explicit GatherKernel(const NodeInfo& node) : axis_(node.attrs.get_int("axis", 0)) {}

  void run(KernelContext& ctx) const override {
    const Tensor& data = ctx.input(0);
    const Tensor& indices_t = ctx.input(1);
    const size_t width = element_width(data, "Gather");
    OPENBPU_CHECK(data.rank() >= 1, "Gather: data must have rank >= 1, got ", data.describe());
    const size_t axis = size_t(normalize_axis(axis_, data.rank(), "Gather: axis"));
    const int64_t dim = data.shape()[axis];
    std::vector<int64_t> indices = read_indices(indices_t, "Gather");
    for (int64_t& i : indices) i = checked_index(i, dim, "Gather", axis);

    Shape out_shape(data.shape().begin(), data.shape().begin() + std::ptrdiff_t(axis));
    out_shape.insert(out_shape.end(), indices_t.shape().begin(), indices_t.shape().end());
    out_shape.insert(out_shape.end(), data.shape().begin() + std::ptrdiff_t(axis) + 1,
                     data.shape().end());
    Tensor& y = ctx.allocate_output(0, data.dtype(), out_shape);
    const int64_t outer = dims_product(data.shape(), 0, axis);
    const int64_t inner = dims_product(data.shape(), axis + 1, data.shape().size());
    const int64_t count = int64_t(indices.size());
    if (y.element_count() == 0) return;
    dispatch_by_width(width, "Gather", [&]<typename U>() {
      const U* src = static_cast<const U*>(data.raw_data());
      U* dst = static_cast<U*>(y.raw_data());
      parallel_for(ctx.thread_pool(), outer * count,
                   std::max<int64_t>(1, kGatherChunkElements / inner),
                   [&](int64_t begin, int64_t end) {
                     for (int64_t k = begin; k < end; ++k) {
                       const int64_t o = k / count, j = k % count;
                       const U* from = src + (o * dim + indices[size_t(j)]) * inner;
                       std::copy_n(from, inner, dst + k * inner);
                     }
                   });
    });
  }

 private:
  int64_t axis_;
};

// ---------------------------------------------------------------------------------------------
// GatherElements / ScatterElements share the element addressing: an index tensor of the data's
// rank whose entries replace the coordinate along `axis`.

// Offsets into `data` addressed by each element of `indices` (row-major over its shape).
std::vector<int64_t> element_offsets(const Shape& data_shape, const Tensor& indices_t,
                                     int64_t axis_attr, std::string_view op) {
  const int64_t rank = int64_t(data_shape.size());
  OPENBPU_CHECK(rank >= 1, op, ": data must have rank >= 1");
  OPENBPU_CHECK(indices_t.rank() == rank, op, ": indices ", indices_t.describe(),
        " must have the rank of the data ", shape_to_string(data_shape));
  const size_t axis = size_t(normalize_axis(axis_attr, rank, str_cat(op, ": axis")));
  for (size_t d = 0; d < size_t(rank); ++d) {
    OPENBPU_CHECK(d == axis || indices_t.shape()[d] <= data_shape[d], op, ": indices ",
          indices_t.describe(), " exceed the data ", shape_to_string(data_shape), " along axis ",
          d);
  }
  const std::vector<int64_t> indices = read_indices(indices_t, op);
  const std::vector<int64_t> strides = contiguous_strides(data_shape);
  const Shape& index_shape = indices_t.shape();
  std::vector<int64_t> offsets(indices.size());
  std::vector<int64_t> pos(size_t(rank), 0);
  int64_t base = 0;  // offset of pos with the axis coordinate zeroed
  for (size_t k = 0; k < indices.size(); ++k) {
    offsets[k] = base + checked_index(indices[k], data_shape[axis], op, axis) * strides[axis];
    for (size_t d = size_t(rank); d-- > 0;) {
      if (++pos[d] < index_shape[d]) {
        if (d != axis) base += strides[d];
        break;
      }
      if (d != axis) base -= strides[d] * (index_shape[d] - 1);
      pos[d] = 0;
    }
  }
  return offsets;
}

class GatherElementsKernel final : public Kernel {
 public:
  explicit GatherElementsKernel(const NodeInfo& node) : axis_(node.attrs.get_int("axis", 0)) {}

  void run(KernelContext& ctx) const override {
    const Tensor& data = ctx.input(0);
    const Tensor& indices = ctx.input(1);
    const size_t width = element_width(data, "GatherElements");
    const std::vector<int64_t> offsets =
        element_offsets(data.shape(), indices, axis_, "GatherElements");
    Tensor& y = ctx.allocate_output(0, data.dtype(), indices.shape());
    dispatch_by_width(width, "GatherElements", [&]<typename U>() {
      const U* src = static_cast<const U*>(data.raw_data());
      U* dst = static_cast<U*>(y.raw_data());
      for (size_t k = 0; k < offsets.size(); ++k) dst[k] = src[offsets[k]];
    });
  }

 private:
  int64_t axis_;
};

class ScatterElementsKernel final : public Kernel {
 public:
  explicit ScatterElementsKernel(const NodeInfo& node)
      : op_(node.op_type),
        axis_(node.attrs.get_int("axis", 0)),
        reduction_(parse_reduction(node)) {}

  void run(KernelContext& ctx) const override {
    const Tensor& data = ctx.input(0);
    const Tensor& indices = ctx.input(1);
    const Tensor& updates = ctx.input(2);
    OPENBPU_CHECK(updates.dtype() == data.dtype(), op_, ": updates ", updates.describe(),
          " must have the data's type ", dtype_name(data.dtype()));
    OPENBPU_CHECK(updates.shape() == indices.shape(), op_, ": updates ", updates.describe(),
          " must have the shape of indices ", indices.describe());
    const std::vector<int64_t> offsets = element_offsets(data.shape(), indices, axis_, op_);
    Tensor& y = ctx.allocate_output(0, data.dtype(), data.shape());
    if (y.byte_size() > 0) std::memcpy(y.raw_data(), data.raw_data(), y.byte_size());
    scatter_runs(updates, y, offsets, 1, reduction_, op_);
  }

 private:
  std::string op_;
  int64_t axis_;
  Reduction reduction_;
};

// ---------------------------------------------------------------------------------------------
// GatherND / ScatterND: the last dimension of indices holds tuples addressing leading data
// dimensions (after batch_dims for GatherND); each tuple selects a contiguous slice.

struct NdAddressing {
  std::vector<int64_t> offsets;  // element offset of each selected slice
  int64_t slice = 1;             // elements per slice
  Shape tuple_shape;             // indices shape without its last dimension
  size_t sliced_from = 0;        // first data dimension inside the slices (batch_dims + m)
};

NdAddressing nd_offsets(const Shape& data_shape, const Tensor& indices_t, int64_t batch_dims,
                        std::string_view op) {
  const int64_t r = int64_t(data_shape.size()), q = indices_t.rank();
  OPENBPU_CHECK(r >= 1 && q >= 1, op, ": data and indices must have rank >= 1, got ",
        shape_to_string(data_shape), " and ", indices_t.describe());
  OPENBPU_CHECK(batch_dims >= 0 && batch_dims < std::min(r, q), op, ": batch_dims ", batch_dims,
        " must be in [0, min(data rank, indices rank) - 1]");
  const Shape& ishape = indices_t.shape();
  const int64_t m = ishape[size_t(q - 1)];
  OPENBPU_CHECK(m >= 1 && m <= r - batch_dims, op, ": the last dimension of indices ", indices_t.describe(),
        " must be in [1, ", r - batch_dims, "]");
  for (size_t d = 0; d < size_t(batch_dims); ++d) {
    OPENBPU_CHECK(ishape[d] == data_shape[d], op, ": batch dimension ", d, " of indices ",
          indices_t.describe(), " differs from the data ", shape_to_string(data_shape));
  }
  const std::vector<int64_t> indices = read_indices(indices_t, op);
  const std::vector<int64_t> strides = contiguous_strides(data_shape);
  NdAddressing a;
  a.tuple_shape.assign(ishape.begin(), ishape.end() - 1);
  a.sliced_from = size_t(batch_dims + m);
  a.slice = dims_product(data_shape, a.sliced_from, data_shape.size());
  const int64_t tuples = int64_t(indices.size()) / m;
  const int64_t per_batch = dims_product(ishape, size_t(batch_dims), size_t(q - 1));
  const int64_t batch_stride = dims_product(data_shape, size_t(batch_dims), data_shape.size());
  a.offsets.resize(size_t(tuples));
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t offset = (per_batch == 0 ? 0 : t / per_batch) * batch_stride;
    for (int64_t k = 0; k < m; ++k) {
      const size_t axis = size_t(batch_dims + k);
      offset +=
          checked_index(indices[size_t(t * m + k)], data_shape[axis], op, axis) * strides[axis];
    }
    a.offsets[size_t(t)] = offset;
  }
  return a;
}

class GatherNDKernel final : public Kernel {
 public:
  explicit GatherNDKernel(const NodeInfo& node)
      : batch_dims_(node.attrs.get_int("batch_dims", 0)) {}

  void run(KernelContext& ctx) const override {
    const Tensor& data = ctx.input(0);
    const size_t width = element_width(data, "GatherND");
    const NdAddressing a = nd_offsets(data.shape(), ctx.input(1), batch_dims_, "GatherND");
    Shape out_shape = a.tuple_shape;
    out_shape.insert(out_shape.end(), data.shape().begin() + std::ptrdiff_t(a.sliced_from),
                     data.shape().end());
    Tensor& y = ctx.allocate_output(0, data.dtype(), out_shape);
    const size_t bytes = size_t(a.slice) * width;
    const char* src = static_cast<const char*>(data.raw_data());
    char* dst = static_cast<char*>(y.raw_data());
    for (size_t t = 0; t < a.offsets.size(); ++t) {
      std::memcpy(dst + t * bytes, src + size_t(a.offsets[t]) * width, bytes);
    }
  }

 private:
  int64_t batch_dims_;
};

class ScatterNDKernel final : public Kernel {
 public:
  explicit ScatterNDKernel(const NodeInfo& node) : reduction_(parse_reduction(node)) {}

  void run(KernelContext& ctx) const override {
    const Tensor& data = ctx.input(0);
    const Tensor& indices = ctx.input(1);
    const Tensor& updates = ctx.input(2);
    OPENBPU_CHECK(updates.dtype() == data.dtype(), "ScatterND: updates ", updates.describe(),
          " must have the data's type ", dtype_name(data.dtype()));
    const NdAddressing a = nd_offsets(data.shape(), indices, 0, "ScatterND");
    Shape expected = a.tuple_shape;
    expected.insert(expected.end(), data.shape().begin() + std::ptrdiff_t(a.sliced_from),
                    data.shape().end());
    OPENBPU_CHECK(updates.shape() == expected, "ScatterND: updates ", updates.describe(),
          " must have shape ", shape_to_string(expected),
          " (indices.shape[:-1] + data.shape[indices.shape[-1]:])");
    Tensor& y = ctx.allocate_output(0, data.dtype(), data.shape());
    if (y.byte_size() > 0) std::memcpy(y.raw_data(), data.raw_data(), y.byte_size());
    scatter_runs(updates, y, a.offsets, a.slice, reduction_, "ScatterND");
  }

 private:
  Reduction reduction_;
};

}  // namespace

void register_gather_scatter_kernels(std::vector<KernelDef>& defs) {
  defs.push_back({"", "Gather", 1, {{"axis", AttrKind::kInt}}, &make_kernel<GatherKernel>});
  defs.push_back(
      {"", "GatherElements", 11, {{"axis", AttrKind::kInt}}, &make_kernel<GatherElementsKernel>});
  defs.push_back(
      {"", "GatherND", 11, {{"batch_dims", AttrKind::kInt}}, &make_kernel<GatherNDKernel>});
  defs.push_back(
      {"", "Scatter", 9, {{"axis", AttrKind::kInt}}, &make_kernel<ScatterElementsKernel>});
  defs.push_back({"",
                  "ScatterElements",
                  11,
                  {{"axis", AttrKind::kInt}, {"reduction", AttrKind::kString}},
                  &make_kernel<ScatterElementsKernel>});
  defs.push_back(
      {"", "ScatterND", 11, {{"reduction", AttrKind::kString}}, &make_kernel<ScatterNDKernel>});
}

}  // namespace openbpu::kernels
