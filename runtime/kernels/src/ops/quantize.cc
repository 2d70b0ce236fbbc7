// Linear quantization: QuantizeLinear, DequantizeLinear (per tensor, or per axis from opset 13)
// and DynamicQuantizeLinear. Rounding is half to even, results saturate (quantization.h).
#include <algorithm>
#include <cmath>

#include "families.h"
#include "openbpu/kernels/axes.h"
#include "openbpu/kernels/dispatch.h"
#include "openbpu/kernels/quantization.h"
#include "openbpu/kernels/vector_clones.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace openbpu::kernels {

namespace {

using QuantizedTypes = TypeList<uint8_t, int8_t, uint16_t, int16_t>;

// Which scale / zero point applies to element i: (i / inner) % channels.
struct QuantAxis {
  int64_t channels = 1;
  int64_t inner = 1;
  int64_t param_index(int64_t i) const { return channels == 1 ? 0 : (i / inner) % channels; }
};

QuantAxis resolve_quant_axis(std::string_view op, const Tensor& x, const Tensor& scale,
                             const Tensor* zero_point, int64_t axis) {
  QuantAxis q;
  if (zero_point != nullptr) {
    OPENBPU_CHECK(zero_point->shape() == scale.shape() ||
              (zero_point->element_count() == 1 && scale.element_count() == 1),
          op, ": the zero point ", zero_point->describe(), " must have the shape of the scale ",
          scale.describe());
  }
  if (scale.element_count() == 1 && scale.rank() <= 1) return q;  // per tensor
  OPENBPU_CHECK(scale.rank() == 1, op, ": the scale must be a scalar or 1-D (per axis), got ",
        scale.describe());
  const int64_t a = normalize_axis(axis, x.rank(), str_cat(op, ": axis"));
  OPENBPU_CHECK(scale.dim(0) == x.dim(a), op, ": per-axis scale ", scale.describe(),
        " must have one value per entry of axis ", a, " of ", x.describe());
  q.channels = x.dim(a);
  q.inner = dims_product(x.shape(), size_t(a) + 1, x.shape().size());
  return q;
}

class QuantizeLinearKernel final : public Kernel {
 public:
  explicit QuantizeLinearKernel(const NodeInfo& node) : axis_(node.attrs.get_int("axis", 1)) {
    const int64_t saturate = node.attrs.get_int("saturate", 1);
    OPENBPU_CHECK(saturate == 1, "QuantizeLinear: saturate=0 applies to float8 outputs only, got ",
          saturate);
  }

  void run(KernelContext& ctx) const override {
    constexpr std::string_view op = "QuantizeLinear";
    const Tensor& x = ctx.input(0);
    const Tensor& scale = ctx.input(1);
    const Tensor* zp = ctx.optional_input(2);
    OPENBPU_CHECK(dtype_is_float(scale.dtype()), op, ": y_scale must be a float tensor, got ",
          scale.describe());
    const QuantAxis q = resolve_quant_axis(op, x, scale, zp, axis_);
    const DataType out_type = zp != nullptr ? zp->dtype() : DataType::kUint8;
    Tensor& y = ctx.allocate_output(0, out_type, x.shape());
    std::vector<float> scales(static_cast<size_t>(q.channels));
    std::vector<int64_t> zeros(size_t(q.channels), 0);
    for (int64_t c = 0; c < q.channels; ++c) {
      scales[size_t(c)] = static_cast<float>(scale.float_at(c));
      if (zp != nullptr) zeros[size_t(c)] = zp->int_at(c);
    }
    dispatch<QuantizedTypes>(out_type, op, [&]<typename Q>() {
      Q* py = y.data<Q>();
      dispatch<TypeList<float, Float16, BFloat16, double, int32_t>>(
          x.dtype(), op, [&]<typename T>() {
            const T* px = x.data<T>();
            parallel_for(ctx.thread_pool(), x.element_count(), 1 << 14, [&](int64_t b, int64_t e) {
              for (int64_t i = b; i < e; ++i) {
                const int64_t c = q.param_index(i);
                const float v = static_cast<float>(to_compute(px[i])) / scales[size_t(c)];
                py[i] = quantize_rounded<Q>(v, zeros[size_t(c)]);
              }
            });
          });
    });
  }

 private:
  int64_t axis_;
};

class DequantizeLinearKernel final : public Kernel {
 public:
  explicit DequantizeLinearKernel(const NodeInfo& node) : axis_(node.attrs.get_int("axis", 1)) {}

  void run(KernelContext& ctx) const override {
    constexpr std::string_view op = "DequantizeLinear";
    const Tensor& x = ctx.input(0);
    const Tensor& scale = ctx.input(1);
    const Tensor* zp = ctx.optional_input(2);
    OPENBPU_CHECK(dtype_is_float(scale.dtype()), op, ": x_scale must be a float tensor, got ",
          scale.describe());
    if (zp != nullptr) {
      OPENBPU_CHECK(zp->dtype() == x.dtype(), op, ": x_zero_point must have the type of x (",
            dtype_name(x.dtype()), "), got ", zp->describe());
    }
    const QuantAxis q = resolve_quant_axis(op, x, scale, zp, axis_);
    std::vector<float> scales(static_cast<size_t>(q.channels));
    std::vector<int64_t> zeros(size_t(q.channels), 0);
    for (int64_t c = 0; c < q.channels; ++c) {
      scales[size_t(c)] = static_cast<float>(scale.float_at(c));
      if (zp != nullptr) zeros[size_t(c)] = zp->int_at(c);
    }
    if (x.dtype() == DataType::kInt32) {
      for (int64_t z : zeros)
        OPENBPU_CHECK(z == 0, op, ": an int32 input needs a zero point of 0, got ", z);
    }
    Tensor& y = ctx.allocate_output(0, scale.dtype(), x.shape());
    dispatch<FloatTypes>(scale.dtype(), op, [&]<typename F>() {
      F* py = y.data<F>();
      dispatch<TypeList<uint8_t, int8_t, uint16_t, int16_t, int32_t>>(
          x.dtype(), op, [&]<typename T>() {
            const T* px = x.data<T>();
            parallel_for(ctx.thread_pool(), x.element_count(), 1 << 14, [&](int64_t b, int64_t e) {
              for (int64_t i = b; i < e; ++i) {
                const int64_t c = q.param_index(i);
                const float v =
                    static_cast<float>(int64_t{px[i]} - zeros[size_t(c)]) * scales[size_t(c)];
                py[i] = from_compute<F>(static_cast<ComputeType<F>>(v));
              }
            });
          });
    });
  }

 private:
  int64_t axis_;
};

// y_scale = (max(0, max x) - min(0, min x)) / 255, y_zero_point = round(-min / y_scale),
// y = saturate(round(x / y_scale) + y_zero_point), all uint8.
#if defined(__x86_64__)
// The first n - n % 16 values of dynamic_range; returns how many it covered.
__attribute__((target("avx512f"))) int64_t dynamic_range_avx512(const float* x, int64_t n,
                                                                float& lo, float& hi) {
  __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 v = _mm512_loadu_ps(x + i);
    vlo = _mm512_min_ps(v, vlo);  // the second operand where v is NaN
    vhi = _mm512_max_ps(v, vhi);
  }
  alignas(64) float lanes_lo[16], lanes_hi[16];  // (GCC 12's _mm512_reduce_min_ps trips -Werror)
  _mm512_store_ps(lanes_lo, vlo);
  _mm512_store_ps(lanes_hi, vhi);
  for (int j = 0; j < 16; ++j) {
    lo = std::min(lo, lanes_lo[j]);
    hi = std::max(hi, lanes_hi[j]);
  }
  return i;
}

// The first n - n % 16 values of dynamic_quantize: x / scale in float, rounded to nearest even
// (nearbyint of the float), plus the zero point, saturated; NaN gives the zero point.
__attribute__((target("avx512f,avx512bw"))) int64_t dynamic_quantize_avx512(const float* x,
                                                                            int64_t n, float scale,
                                                                            uint8_t zero,
                                                                            uint8_t* y) {
  const __m512 s = _mm512_set1_ps(scale), z = _mm512_set1_ps(static_cast<float>(zero));
  const __m512 lo = _mm512_setzero_ps(), hi = _mm512_set1_ps(255.0f);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 q = _mm512_div_ps(_mm512_loadu_ps(x + i), s);
    const __mmask16 nan = _mm512_cmp_ps_mask(q, q, _CMP_UNORD_Q);
    __m512 v = _mm512_roundscale_ps(q, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    v = _mm512_mask_blend_ps(nan, v, _mm512_setzero_ps());
    v = _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(v, z), lo), hi);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i),
                     _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(v)));
  }
  return i;
}
#endif

// The range [min(0, x), max(0, x)] over the non-NaN values (a NaN is skipped, as by
// std::min(lo, nan)); min and max do not depend on the order, so 16 lanes give the same.
void dynamic_range(const float* x, int64_t n, float& lo, float& hi) {
  int64_t i = 0;
#if defined(__x86_64__)
  if (vector_path() == VectorPath::kAvx512) i = dynamic_range_avx512(x, n, lo, hi);
#endif
  for (; i < n; ++i) {
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
  }
}

// quantize_rounded<uint8_t>(x / scale, zero) for every x (scale > 0).
void dynamic_quantize(const float* x, int64_t n, float scale, uint8_t zero, uint8_t* y) {
  int64_t i = 0;
#if defined(__x86_64__)
  if (vector_path() == VectorPath::kAvx512) i = dynamic_quantize_avx512(x, n, scale, zero, y);
#endif
  for (; i < n; ++i) y[i] = quantize_rounded<uint8_t>(x[i] / scale, zero);
}

class DynamicQuantizeLinearKernel final : public Kernel {
 public:
  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    OPENBPU_CHECK(x.dtype() == DataType::kFloat32, "DynamicQuantizeLinear: x must be float, got ",
          x.describe());
    const float* px = x.data<float>();
    float lo = 0.0f, hi = 0.0f;
    dynamic_range(px, x.element_count(), lo, hi);
    const float scale = (hi - lo) / 255.0f;
    const uint8_t zero = scale == 0.0f ? 0 : quantize_rounded<uint8_t>(0.0f - lo / scale, 0);
    Tensor& y = ctx.allocate_output(0, DataType::kUint8, x.shape());
    ctx.allocate_output(1, DataType::kFloat32, {}).data<float>()[0] = scale;
    ctx.allocate_output(2, DataType::kUint8, {}).data<uint8_t>()[0] = zero;
    uint8_t* py = y.data<uint8_t>();
    parallel_for(ctx.thread_pool(), x.element_count(), 1 << 14, [&](int64_t b, int64_t e) {
      if (scale == 0.0f) {
        std::fill(py + b, py + e, zero);
      } else {
        dynamic_quantize(px + b, e - b, scale, zero, py + b);
      }
    });
  }
};

}  // namespace

void register_quantize_kernels(std::vector<KernelDef>& defs) {
  defs.push_back({"",
                  "QuantizeLinear",
                  10,
                  {{"axis", AttrKind::kInt}, {"saturate", AttrKind::kInt}},
                  &make_kernel<QuantizeLinearKernel>});
  defs.push_back({"",
                  "DequantizeLinear",
                  10,
                  {{"axis", AttrKind::kInt}},
                  &make_kernel<DequantizeLinearKernel>});
  defs.push_back({"", "DynamicQuantizeLinear", 11, {}, &make_kernel<DynamicQuantizeLinearKernel>});
}

}  // namespace openbpu::kernels
