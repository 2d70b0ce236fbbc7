// Normalizations: BatchNormalization (inference and training mode), InstanceNormalization,
// LayerNormalization, LRN, MeanVarianceNormalization. Statistics are summed in double.
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "families.h"
#include "openbpu/kernels/axes.h"
#include "openbpu/kernels/broadcast.h"
#include "openbpu/kernels/dispatch.h"
#include "openbpu/kernels/elementwise.h"
#include "openbpu/kernels/vector_clones.h"

namespace openbpu::kernels {

namespace {

// Values of a float parameter tensor as doubles.
std::vector<double> float_values(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.element_count()));
  for (int64_t i = 0; i < t.element_count(); ++i) v[size_t(i)] = t.float_at(i);
  return v;
}

void check_float(std::string_view op, std::string_view what, const Tensor& t) {
  OPENBPU_CHECK(dtype_is_float(t.dtype()), op, ": ", what, " must be a float tensor, got ", t.describe());
}

// Writes doubles into a float tensor of any float type.
void store_values(Tensor& t, const std::vector<double>& v) {
  dispatch<FloatTypes>(t.dtype(), "store", [&]<typename T>() {
    T* p = t.data<T>();
    for (size_t i = 0; i < v.size(); ++i) p[i] = from_compute<T>(static_cast<ComputeType<T>>(v[i]));
  });
}

// Mean and population variance of each channel over N and the spatial axes.
void channel_statistics(const Tensor& x, int64_t channels, int64_t spatial,
                        std::vector<double>& mean, std::vector<double>& var) {
  const int64_t batch = x.dim(0);
  mean.assign(size_t(channels), 0.0);
  var.assign(size_t(channels), 0.0);
  const double count = static_cast<double>(batch * spatial);
  dispatch<FloatTypes>(x.dtype(), "BatchNormalization", [&]<typename T>() {
    const T* px = x.data<T>();
    for (int64_t c = 0; c < channels; ++c) {
      double sum = 0.0;
      for (int64_t n = 0; n < batch; ++n) {
        const T* in = px + (n * channels + c) * spatial;
        for (int64_t i = 0; i < spatial; ++i) sum += static_cast<double>(to_compute(in[i]));
      }
      const double m = count > 0 ? sum / count : 0.0;
      double sq = 0.0;
      for (int64_t n = 0; n < batch; ++n) {
        const T* in = px + (n * channels + c) * spatial;
        for (int64_t i = 0; i < spatial; ++i) {
          const double d = static_cast<double>(to_compute(in[i])) - m;
          sq += d * d;
        }
      }
      mean[size_t(c)] = m;
      var[size_t(c)] = count > 0 ? sq / count : 0.0;
    }
  });
}

// out[i] = in[i] * a + b (a multiply, then an add) over one plane, on the CPU's vector path.
struct AffinePlane {
  OPENBPU_KERNEL_INLINE static void run(const float* in, float* out, int64_t n, float a, float b) {
    for (int64_t i = 0; i < n; ++i) out[i] = in[i] * a + b;
  }
};

class BatchNormalizationKernel final : public Kernel {
 public:
  explicit BatchNormalizationKernel(const NodeInfo& node)
      : epsilon_(node.attrs.get_float("epsilon", 1e-5f)),
        momentum_(node.attrs.get_float("momentum", 0.9f)),
        spatial_(node.attrs.get_int("spatial", 1) != 0),
        // Opset 14 added training_mode; before it, listing the statistics outputs (or
        // is_test=0 in opset 6) meant training.
        training_(node.opset >= 14 ? node.attrs.get_int("training_mode", 0) != 0
                                   : node.output_count > 1),
        opset_(node.opset) {
    OPENBPU_CHECK(!(training_ && !spatial_),
          "BatchNormalization: training with spatial=0 is not supported");
  }

  void run(KernelContext& ctx) const override {
    constexpr std::string_view op = "BatchNormalization";
    const Tensor& x = ctx.input(0);
    check_float(op, "X", x);
    OPENBPU_CHECK(x.rank() >= 2, op, ": X must have rank >= 2 (N x C x ...), got ", x.describe());
    const int64_t channels = x.dim(1);
    const int64_t spatial = dims_product(x.shape(), 2, x.shape().size());
    // spatial=0 (opset < 9): one parameter per (channel, position).
    const int64_t params = spatial_ ? channels : channels * spatial;
    const char* names[] = {"scale", "B", "input_mean", "input_var"};
    for (int i = 1; i <= 4; ++i) {
      const Tensor& p = ctx.input(i);
      check_float(op, names[i - 1], p);
      OPENBPU_CHECK(p.element_count() == params, op, ": ", names[i - 1], " must have ", params,
            " elements (", spatial_ ? "one per channel" : "one per channel and position", " of X ",
            x.describe(), "), got ", p.describe());
    }
    const std::vector<double> scale = float_values(ctx.input(1));
    const std::vector<double> bias = float_values(ctx.input(2));
    std::vector<double> mean = float_values(ctx.input(3));
    std::vector<double> var = float_values(ctx.input(4));
    if (training_) {
      std::vector<double> batch_mean, batch_var;
      channel_statistics(x, channels, spatial, batch_mean, batch_var);
      std::vector<double> running_mean(mean.size()), running_var(var.size());
      for (size_t c = 0; c < mean.size(); ++c) {
        running_mean[c] = mean[c] * momentum_ + batch_mean[c] * (1.0 - momentum_);
        running_var[c] = var[c] * momentum_ + batch_var[c] * (1.0 - momentum_);
      }
      const Shape param_shape = ctx.input(3).shape();
      store_values(ctx.allocate_output(1, ctx.input(3).dtype(), param_shape), running_mean);
      store_values(ctx.allocate_output(2, ctx.input(4).dtype(), param_shape), running_var);
      if (opset_ < 14) {  // saved_mean, saved_var
        store_values(ctx.allocate_output(3, ctx.input(3).dtype(), param_shape), batch_mean);
        store_values(ctx.allocate_output(4, ctx.input(4).dtype(), param_shape), batch_var);
      }
      mean = batch_mean;
      var = batch_var;
    }
    std::vector<double> factor(mean.size());
    for (size_t i = 0; i < factor.size(); ++i) factor[i] = scale[i] / std::sqrt(var[i] + epsilon_);
    Tensor& y = ctx.allocate_output_for_overwrite(0, x.dtype(), x.shape(), 0);  // elementwise
    const int64_t planes = x.dim(0) * channels;
    dispatch<FloatTypes>(x.dtype(), op, [&]<typename T>() {
      const T* px = x.data<T>();
      T* py = y.data<T>();
      // Planes of a few hundred elements are not worth a thread's wake-up: tasks of at least
      // kElementwiseChunk elements.
      const int64_t grain = std::max<int64_t>(1, kElementwiseChunk / std::max<int64_t>(spatial, 1));
      parallel_for(ctx.thread_pool(), planes, grain, [&](int64_t begin, int64_t end) {
        for (int64_t plane = begin; plane < end; ++plane) {
          const int64_t c = plane % channels;
          const T* in = px + plane * spatial;
          T* out = py + plane * spatial;
          if constexpr (std::is_same_v<T, float>) {
            if (spatial_) {  // the common case: one affine map per plane, in float
              const float a = static_cast<float>(factor[size_t(c)]);
              const float b = static_cast<float>(bias[size_t(c)] - mean[size_t(c)] * factor[size_t(c)]);
              vector_dispatch<AffinePlane>(in, out, spatial, a, b);
              continue;
            }
          }
          for (int64_t i = 0; i < spatial; ++i) {
            const size_t p = spatial_ ? size_t(c) : size_t(c * spatial + i);
            const double v =
                (static_cast<double>(to_compute(in[i])) - mean[p]) * factor[p] + bias[p];
            out[i] = from_compute<T>(static_cast<ComputeType<T>>(v));
          }
        }
      });
    });
  }

 private:
  double epsilon_, momentum_;
  bool spatial_, training_;
  int opset_;
};

class InstanceNormalizationKernel final : public Kernel {
 public:
  explicit InstanceNormalizationKernel(const NodeInfo& node)
      : epsilon_(node.attrs.get_float("epsilon", 1e-5f)) {}

  void run(KernelContext& ctx) const override {
    constexpr std::string_view op = "InstanceNormalization";
    const Tensor& x = ctx.input(0);
    check_float(op, "input", x);
    OPENBPU_CHECK(x.rank() >= 3, op, ": input must have rank >= 3 (N x C x spatial...), got ",
          x.describe());
    const int64_t channels = x.dim(1);
    const int64_t spatial = dims_product(x.shape(), 2, x.shape().size());
    for (int i = 1; i <= 2; ++i) {
      OPENBPU_CHECK(ctx.input(i).rank() == 1 && ctx.input(i).dim(0) == channels, op, ": ",
            i == 1 ? "scale" : "B", " must have shape [", channels, "], got ",
            ctx.input(i).describe());
    }
    const std::vector<double> scale = float_values(ctx.input(1));
    const std::vector<double> bias = float_values(ctx.input(2));
    Tensor& y = ctx.allocate_output(0, x.dtype(), x.shape());
    dispatch<FloatTypes>(x.dtype(), op, [&]<typename T>() {
      const T* px = x.data<T>();
      T* py = y.data<T>();
      parallel_for(ctx.thread_pool(), x.dim(0) * channels, 1, [&](int64_t begin, int64_t end) {
        for (int64_t plane = begin; plane < end; ++plane) {
          const size_t c = size_t(plane % channels);
          const T* in = px + plane * spatial;
          T* out = py + plane * spatial;
          double sum = 0.0;
          for (int64_t i = 0; i < spatial; ++i) sum += static_cast<double>(to_compute(in[i]));
          const double mean = sum / static_cast<double>(spatial);
          double sq = 0.0;
          for (int64_t i = 0; i < spatial; ++i) {
            const double d = static_cast<double>(to_compute(in[i])) - mean;
            sq += d * d;
          }
          const double factor = scale[c] / std::sqrt(sq / static_cast<double>(spatial) + epsilon_);
          for (int64_t i = 0; i < spatial; ++i) {
            const double v = (static_cast<double>(to_compute(in[i])) - mean) * factor + bias[c];
            out[i] = from_compute<T>(static_cast<ComputeType<T>>(v));
          }
        }
      });
    });
  }

 private:
  double epsilon_;
};

// Normalizes over the axes [axis, rank): Y = (X - mean) / sqrt(var + epsilon) * Scale + B, with
// Scale and B broadcast to X; Mean and InvStdDev have X's shape with those axes set to 1.
class LayerNormalizationKernel final : public Kernel {
 public:
  explicit LayerNormalizationKernel(const NodeInfo& node)
      : axis_(node.attrs.get_int("axis", -1)),
        epsilon_(node.attrs.get_float("epsilon", 1e-5f)),
        stash_type_(static_cast<DataType>(node.attrs.get_int("stash_type", 1))) {
    OPENBPU_CHECK(dtype_is_float(stash_type_), "LayerNormalization: stash_type must be a float type, got ",
          static_cast<int>(stash_type_));
  }

  void run(KernelContext& ctx) const override {
    constexpr std::string_view op = "LayerNormalization";
    const Tensor& x = ctx.input(0);
    const Tensor& scale = ctx.input(1);
    const Tensor* b = ctx.optional_input(2);
    check_float(op, "X", x);
    OPENBPU_CHECK(x.rank() >= 1, op, ": X must have rank >= 1, got ", x.describe());
    const int64_t axis = normalize_axis(axis_, x.rank(), "LayerNormalization: axis");
    const int64_t outer = dims_product(x.shape(), 0, size_t(axis));
    const int64_t inner = dims_product(x.shape(), size_t(axis), x.shape().size());
    std::vector<std::vector<int64_t>> param_strides;
    for (const Tensor* p : {&scale, b}) {
      if (p == nullptr) continue;
      OPENBPU_CHECK(p->dtype() == x.dtype(), op, ": Scale and B must have X's type, got ", p->describe());
      OPENBPU_CHECK(broadcast_shapes(p->shape(), x.shape(), op) == x.shape(), op, ": ", p->describe(),
            " does not broadcast to X ", x.describe());
      param_strides.push_back(broadcast_strides(p->shape(), x.shape()));
    }
    Shape stat_shape = x.shape();
    for (size_t d = size_t(axis); d < stat_shape.size(); ++d) stat_shape[d] = 1;
    Tensor& y = ctx.allocate_output(0, x.dtype(), x.shape());
    Tensor& mean_out = ctx.allocate_output(1, stash_type_, stat_shape);
    Tensor& inv_std_out = ctx.allocate_output(2, stash_type_, stat_shape);
    std::vector<double> means(static_cast<size_t>(outer)), inv_stds(static_cast<size_t>(outer));
    // Offsets of Scale/B for each element: per-parameter strides over X's shape.
    const std::vector<int64_t> x_dims = x.shape();
    auto param_offset = [&](const std::vector<int64_t>& strides, int64_t flat) {
      int64_t off = 0;
      for (size_t d = x_dims.size(); d-- > 0;) {
        off += (flat % x_dims[d]) * strides[d];
        flat /= x_dims[d];
      }
      return off;
    };
    dispatch<FloatTypes>(x.dtype(), op, [&]<typename T>() {
      const T* px = x.data<T>();
      const T* ps = scale.data<T>();
      const T* pb = b != nullptr ? b->data<T>() : nullptr;
      T* py = y.data<T>();
      parallel_for(ctx.thread_pool(), outer, 1, [&](int64_t begin, int64_t end) {
        for (int64_t row = begin; row < end; ++row) {
          const T* in = px + row * inner;
          double sum = 0.0;
          for (int64_t i = 0; i < inner; ++i) sum += static_cast<double>(to_compute(in[i]));
          const double mean = sum / static_cast<double>(inner);
          double sq = 0.0;
          for (int64_t i = 0; i < inner; ++i) {
            const double d = static_cast<double>(to_compute(in[i])) - mean;
            sq += d * d;
          }
          const double inv_std = 1.0 / std::sqrt(sq / static_cast<double>(inner) + epsilon_);
          means[size_t(row)] = mean;
          inv_stds[size_t(row)] = inv_std;
          for (int64_t i = 0; i < inner; ++i) {
            const int64_t flat = row * inner + i;
            double v = (static_cast<double>(to_compute(in[i])) - mean) * inv_std;
            v *= static_cast<double>(to_compute(ps[param_offset(param_strides[0], flat)]));
            if (pb != nullptr) {
              v += static_cast<double>(to_compute(pb[param_offset(param_strides[1], flat)]));
            }
            py[flat] = from_compute<T>(static_cast<ComputeType<T>>(v));
          }
        }
      });
    });
    store_values(mean_out, means);
    store_values(inv_std_out, inv_stds);
  }

 private:
  int64_t axis_;
  double epsilon_;
  DataType stash_type_;
};

// y = x / (bias + alpha / size * sum of x^2 over the channel window) ^ beta.
class LrnKernel final : public Kernel {
 public:
  explicit LrnKernel(const NodeInfo& node)
      : alpha_(node.attrs.get_float("alpha", 1e-4f)),
        beta_(node.attrs.get_float("beta", 0.75f)),
        bias_(node.attrs.get_float("bias", 1.0f)),
        size_(node.attrs.get_int("size")) {
    OPENBPU_CHECK(size_ > 0, "LRN: size must be > 0, got ", size_);
  }

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    OPENBPU_CHECK(x.rank() >= 2, "LRN: X must have rank >= 2 (N x C x ...), got ", x.describe());
    const int64_t channels = x.dim(1);
    const int64_t spatial = dims_product(x.shape(), 2, x.shape().size());
    const int64_t before = (size_ - 1) / 2, after = size_ - 1 - before;
    Tensor& y = ctx.allocate_output(0, x.dtype(), x.shape());
    dispatch<FloatTypes>(x.dtype(), "LRN", [&]<typename T>() {
      const T* px = x.data<T>();
      T* py = y.data<T>();
      parallel_for(ctx.thread_pool(), x.dim(0) * channels, 1, [&](int64_t begin, int64_t end) {
        for (int64_t plane = begin; plane < end; ++plane) {
          const int64_t n = plane / channels, c = plane % channels;
          const int64_t c0 = std::max<int64_t>(0, c - before);
          const int64_t c1 = std::min<int64_t>(channels - 1, c + after);
          for (int64_t i = 0; i < spatial; ++i) {
            double sq = 0.0;
            for (int64_t k = c0; k <= c1; ++k) {
              const double v =
                  static_cast<double>(to_compute(px[(n * channels + k) * spatial + i]));
              sq += v * v;
            }
            const double v = static_cast<double>(to_compute(px[plane * spatial + i]));
            const double r = v / std::pow(bias_ + alpha_ / static_cast<double>(size_) * sq, beta_);
            py[plane * spatial + i] = from_compute<T>(static_cast<ComputeType<T>>(r));
          }
        }
      });
    });
  }

 private:
  double alpha_, beta_, bias_;
  int64_t size_;
};

// y = (x - mean) / (sqrt(variance) + 1e-9) with mean and variance over `axes`.
class MeanVarianceNormalizationKernel final : public Kernel {
 public:
  explicit MeanVarianceNormalizationKernel(const NodeInfo& node)
      : axes_(node.attrs.get_ints("axes", {0, 2, 3})) {}

  void run(KernelContext& ctx) const override {
    constexpr std::string_view op = "MeanVarianceNormalization";
    const Tensor& x = ctx.input(0);
    check_float(op, "X", x);
    const std::vector<int64_t> axes =
        normalize_axes(axes_, x.rank(), "MeanVarianceNormalization: axes");
    // Group of an element: its index over the kept axes.
    const Shape& dims = x.shape();
    std::vector<int64_t> group_stride(dims.size(), 0);
    int64_t groups = 1;
    for (size_t d = dims.size(); d-- > 0;) {
      if (std::find(axes.begin(), axes.end(), int64_t(d)) != axes.end()) continue;
      group_stride[d] = groups;
      groups *= dims[d];
    }
    const int64_t total = x.element_count();
    std::vector<int64_t> group_of(static_cast<size_t>(total));
    for (int64_t i = 0; i < total; ++i) {
      int64_t rest = i, g = 0;
      for (size_t d = dims.size(); d-- > 0;) {
        g += (rest % dims[d]) * group_stride[d];
        rest /= dims[d];
      }
      group_of[size_t(i)] = g;
    }
    const double count = groups > 0 ? static_cast<double>(total) / double(groups) : 1.0;
    Tensor& y = ctx.allocate_output(0, x.dtype(), x.shape());
    dispatch<FloatTypes>(x.dtype(), op, [&]<typename T>() {
      const T* px = x.data<T>();
      T* py = y.data<T>();
      std::vector<double> mean(size_t(groups), 0.0), sq(size_t(groups), 0.0);
      for (int64_t i = 0; i < total; ++i) {
        mean[size_t(group_of[size_t(i)])] += static_cast<double>(to_compute(px[i]));
      }
      for (double& m : mean) m /= count;
      for (int64_t i = 0; i < total; ++i) {
        const double d = static_cast<double>(to_compute(px[i])) - mean[size_t(group_of[size_t(i)])];
        sq[size_t(group_of[size_t(i)])] += d * d;
      }
      for (int64_t i = 0; i < total; ++i) {
        const size_t g = size_t(group_of[size_t(i)]);
        const double v =
            (static_cast<double>(to_compute(px[i])) - mean[g]) / (std::sqrt(sq[g] / count) + 1e-9);
        py[i] = from_compute<T>(static_cast<ComputeType<T>>(v));
      }
    });
  }

 private:
  std::vector<int64_t> axes_;
};

}  // namespace

void register_normalization_kernels(std::vector<KernelDef>& defs) {
  defs.push_back({"",
                  "BatchNormalization",
                  1,
                  {{"epsilon", AttrKind::kFloat},
                   {"momentum", AttrKind::kFloat},
                   {"training_mode", AttrKind::kInt},      // opset 14+
                   {"spatial", AttrKind::kInt},            // opset < 9
                   {"is_test", AttrKind::kInt},            // opset < 7
                   {"consumed_inputs", AttrKind::kInts}},  // opset 1
                  &make_kernel<BatchNormalizationKernel>});
  defs.push_back({"",
                  "InstanceNormalization",
                  1,
                  {{"epsilon", AttrKind::kFloat}, {"consumed_inputs", AttrKind::kInts}},
                  &make_kernel<InstanceNormalizationKernel>});
  defs.push_back(
      {"",
       "LayerNormalization",
       17,
       {{"axis", AttrKind::kInt}, {"epsilon", AttrKind::kFloat}, {"stash_type", AttrKind::kInt}},
       &make_kernel<LayerNormalizationKernel>});
  defs.push_back({"",
                  "LRN",
                  1,
                  {{"alpha", AttrKind::kFloat},
                   {"beta", AttrKind::kFloat},
                   {"bias", AttrKind::kFloat},
                   {"size", AttrKind::kInt, true}},
                  &make_kernel<LrnKernel>});
  defs.push_back({"",
                  "MeanVarianceNormalization",
                  9,
                  {{"axes", AttrKind::kInts}},
                  &make_kernel<MeanVarianceNormalizationKernel>});
}

}  // namespace openbpu::kernels
