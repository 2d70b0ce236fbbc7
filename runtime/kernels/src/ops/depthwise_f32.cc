// Float32 depthwise convolution (one input channel per group, any channel multiplier), 1-D or
// 2-D, parallel over output planes. Every output sums the bias, then the kernel taps in
// (kh, kw) order, one multiply and one add each, on every path:
//  - square 3/5/7 kernels with stride 1 or 2 (PP-OCR's and MobileNet's) copy each input plane
//    into a zero-padded scratch plane and run whole output rows, 16 pixels per AVX-512 vector
//    where the CPU has it (taps outside the input then add w * 0 = ±0);
//  - other windows (dilated, rectangular, other strides) run output rows tap by tap.
#include <algorithm>
#include <optional>
#include <vector>

#include "openbpu/kernels/convolution.h"
#include "openbpu/kernels/vector_clones.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace openbpu::kernels {

namespace {

// ow_n outputs of one row; `pad` points at the padded plane's row of the window's top, whose
// rows are ld floats apart and readable 32 floats past the last window.
using PaddedRowFn = void (*)(const float* pad, int64_t ld, const float* wk, float b, int64_t ow_n,
                             float* orow);

template <int K, int S>
void padded_row_scalar(const float* __restrict pad, int64_t ld, const float* wk, float b,
                       int64_t ow_n, float* __restrict orow) {
  float wl[K * K];
  for (int i = 0; i < K * K; ++i) wl[i] = wk[i];
  for (int64_t ow = 0; ow < ow_n; ++ow) {
    const float* base = pad + ow * S;
    float acc = b;
    for (int kh = 0; kh < K; ++kh) {
      for (int kw = 0; kw < K; ++kw) acc += wl[kh * K + kw] * base[kh * ld + kw];
    }
    orow[ow] = acc;
  }
}

#if defined(__x86_64__)
// kV vectors of 16 outputs from `ow` on: kV independent add chains, each in (kh, kw) order.
template <int K, int S, int kV>
__attribute__((target("avx512f"), always_inline)) inline void padded_vectors_avx512(
    const float* pad, int64_t ld, const float* wk, float b, int64_t ow, int64_t ow_n, float* orow) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  __m512 acc[kV];
  for (int v = 0; v < kV; ++v) acc[v] = _mm512_set1_ps(b);
  for (int kh = 0; kh < K; ++kh) {
    const float* r = pad + kh * ld + ow * S;
#pragma GCC unroll 7
    for (int kw = 0; kw < K; ++kw) {
      const __m512 wv = _mm512_set1_ps(wk[kh * K + kw]);
#pragma GCC unroll 4
      for (int v = 0; v < kV; ++v) {
        const float* p = r + v * 16 * S + kw;
        __m512 x;
        if constexpr (S == 1) {
          x = _mm512_loadu_ps(p);
        } else {
          x = _mm512_permutex2var_ps(_mm512_loadu_ps(p), even, _mm512_loadu_ps(p + 16));
        }
        acc[v] = _mm512_add_ps(acc[v], _mm512_mul_ps(wv, x));
      }
    }
  }
  for (int v = 0; v < kV; ++v) {
    const int64_t o = ow + v * 16;
    if (o + 16 <= ow_n) {
      _mm512_storeu_ps(orow + o, acc[v]);
    } else {
      _mm512_mask_storeu_ps(orow + o, static_cast<__mmask16>((1u << (ow_n - o)) - 1), acc[v]);
    }
  }
}

template <int K, int S>
__attribute__((target("avx512f"))) void padded_row_avx512(const float* pad, int64_t ld,
                                                          const float* wk, float b, int64_t ow_n,
                                                          float* orow) {
  int64_t ow = 0;
  for (; ow + 48 < ow_n; ow += 64) padded_vectors_avx512<K, S, 4>(pad, ld, wk, b, ow, ow_n, orow);
  for (; ow + 16 < ow_n; ow += 32) padded_vectors_avx512<K, S, 2>(pad, ld, wk, b, ow, ow_n, orow);
  if (ow < ow_n) padded_vectors_avx512<K, S, 1>(pad, ld, wk, b, ow, ow_n, orow);
}
#endif

template <int K, int S>
PaddedRowFn padded_row_for(DepthwisePath path) {
#if defined(__x86_64__)
  if ((path == DepthwisePath::kAuto || path == DepthwisePath::kAvx512) &&
      vector_path_available(VectorPath::kAvx512)) {
    return &padded_row_avx512<K, S>;
  }
#endif
  (void)path;
  return &padded_row_scalar<K, S>;
}

PaddedRowFn padded_row(int64_t kernel, int64_t stride, DepthwisePath path) {
  if (stride == 1) {
    if (kernel == 3) return padded_row_for<3, 1>(path);
    if (kernel == 5) return padded_row_for<5, 1>(path);
    if (kernel == 7) return padded_row_for<7, 1>(path);
  } else if (stride == 2) {
    if (kernel == 3) return padded_row_for<3, 2>(path);
    if (kernel == 5) return padded_row_for<5, 2>(path);
    if (kernel == 7) return padded_row_for<7, 2>(path);
  }
  return nullptr;
}

struct DepthwiseShape {
  int64_t ih, iw, oh, ow, kh, kw, sh, sw, dh, dw, ph, pw;

  explicit DepthwiseShape(const Window3D& w3)
      : ih(w3.in[1]), iw(w3.in[2]), oh(w3.out[1]), ow(w3.out[2]), kh(w3.kernel[1]),
        kw(w3.kernel[2]), sh(w3.strides[1]), sw(w3.strides[2]), dh(w3.dilations[1]),
        dw(w3.dilations[2]), ph(w3.pads[1]), pw(w3.pads[2]) {}
};

// The zero-padded scratch plane of one input plane: rows x ld floats whose input rows start
// at row ph, column pw. The borders are zeroed once per scratch and never written again, so a
// plane costs one copy per input row (tiny planes were dominated by per-row fill calls).
struct PaddedPlane {
  int64_t rows = 0, ld = 0, col_count = 0;
  std::vector<float> data;

  explicit PaddedPlane(const DepthwiseShape& d)
      : rows((d.oh - 1) * d.sh + d.kh),
        ld((d.ow - 1) * d.sw + d.kw + 32),
        col_count(std::clamp<int64_t>(std::min(d.iw, ld - 32 - d.pw), 0, d.iw)),
        data(static_cast<size_t>(rows * ld), 0.0f) {}

  void fill(const DepthwiseShape& d, const float* xin) {
    const int64_t first = std::max<int64_t>(0, -d.ph), last = std::min(d.ih, rows - d.ph);
    for (int64_t ir = first; ir < last; ++ir) {
      const float* src = xin + ir * d.iw;
      std::copy(src, src + col_count, data.data() + (ir + d.ph) * ld + d.pw);
    }
  }
};

// One output plane through the padded copy of its input plane.
void padded_plane(const DepthwiseShape& d, PaddedRowFn row, const float* xin, const float* wk,
                  float b, float* out, PaddedPlane& pad) {
  pad.fill(d, xin);
  for (int64_t oh = 0; oh < d.oh; ++oh) {
    row(pad.data.data() + oh * d.sh * pad.ld, pad.ld, wk, b, d.ow, out + oh * d.ow);
  }
}

// One output plane of any window, row by row and tap by tap.
void generic_plane(const DepthwiseShape& d, const float* xin, const float* wk, float b,
                   float* out) {
  for (int64_t oh = 0; oh < d.oh; ++oh) {
    float* orow = out + oh * d.ow;
    std::fill(orow, orow + d.ow, b);
    for (int64_t kh = 0; kh < d.kh; ++kh) {
      const int64_t ih = oh * d.sh - d.ph + kh * d.dh;
      if (ih < 0 || ih >= d.ih) continue;
      const float* irow = xin + ih * d.iw;
      for (int64_t kw = 0; kw < d.kw; ++kw) {
        const float wv = wk[kh * d.kw + kw];
        const int64_t offset = kw * d.dw - d.pw;  // iw = ow * sw + offset
        const int64_t lo = offset >= 0 ? 0 : ceil_div(-offset, d.sw);
        const int64_t hi = std::min(d.ow - 1, floor_div(d.iw - 1 - offset, d.sw));
        for (int64_t ow = lo; ow <= hi; ++ow) orow[ow] += wv * irow[ow * d.sw + offset];
      }
    }
  }
}

}  // namespace

bool depthwise_path_available(DepthwisePath path) {
  switch (path) {
    case DepthwisePath::kAuto:
    case DepthwisePath::kScalar: return true;
    case DepthwisePath::kAvx512: return vector_path_available(VectorPath::kAvx512);
  }
  return false;
}

void depthwise_conv_f32(const ConvGeometry& g, const float* x, const float* w, const float* bias,
                        float* y, ThreadPool* pool, DepthwisePath path) {
  const DepthwiseShape d(Window3D(g.window));
  const int64_t multiplier = g.out_channels_per_group();
  const int64_t in_plane = d.ih * d.iw, out_plane = d.oh * d.ow;
  if (out_plane == 0) return;
  const PaddedRowFn row = d.kh == d.kw && d.sh == d.sw && d.dh == 1 && d.dw == 1
                              ? padded_row(d.kw, d.sw, path)
                              : nullptr;
  // Tasks of at least 2^18 multiply-adds: small planes are not worth a thread's wake-up.
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 18) / (out_plane * d.kh * d.kw));
  parallel_for(pool, g.batch * g.out_channels, grain, [&](int64_t begin, int64_t end) {
    std::optional<PaddedPlane> pad;
    if (row != nullptr) pad.emplace(d);
    for (int64_t plane = begin; plane < end; ++plane) {
      const int64_t n = plane / g.out_channels, oc = plane % g.out_channels;
      const float* xin = x + (n * g.in_channels + oc / multiplier) * in_plane;
      const float* wk = w + oc * d.kh * d.kw;
      const float b = bias != nullptr ? bias[oc] : 0.0f;
      float* out = y + plane * out_plane;
      if (row != nullptr) {
        padded_plane(d, row, xin, wk, b, out, *pad);
      } else {
        generic_plane(d, xin, wk, b, out);
      }
    }
  });
}

}  // namespace openbpu::kernels
