// Signal processing (opset 17): DFT, STFT, the Blackman / Hamming / Hann windows and
// MelWeightMatrix. Transforms run in double precision: radix-2 FFT for power-of-two lengths,
// Bluestein's chirp-z algorithm (on top of the radix-2 FFT) for every other length.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <numbers>
#include <string>
#include <type_traits>
#include <vector>

#include "families.h"
#include "openbpu/kernels/axes.h"
#include "openbpu/kernels/dispatch.h"

namespace openbpu::kernels {

namespace {

using Complex = std::complex<double>;

// Largest transform length accepted (the chirp-z buffers are 4x this).
constexpr int64_t kMaxTransformLength = int64_t{1} << 24;

bool is_power_of_two(int64_t n) {
  return n > 0 && (n & (n - 1)) == 0;
}

// An unnormalised discrete Fourier transform of fixed length n:
//   X[k] = sum_j x[j] exp(sign * 2πi jk / n),  sign = -1 forward, +1 inverse.
// Immutable once built, so one plan serves concurrent callers.
class FourierPlan {
 public:
  FourierPlan(int64_t n, bool inverse) : n_(n) {
    OPENBPU_CHECK(n >= 1 && n <= kMaxTransformLength, "DFT length must be in [1, ", kMaxTransformLength,
          "], got ", n);
    if (is_power_of_two(n)) {
      build_radix2(n, inverse, bit_reverse_, twiddle_);
      return;
    }
    // Bluestein: jk = (j² + k² - (k-j)²) / 2 turns the DFT into a convolution with a chirp,
    // evaluated with power-of-two FFTs of length m >= 2n - 1.
    m_ = 1;
    while (m_ < 2 * n - 1) m_ *= 2;
    build_radix2(m_, false, bit_reverse_, twiddle_);
    build_radix2(m_, true, inverse_bit_reverse_, inverse_twiddle_);
    const double sign = inverse ? 1.0 : -1.0;
    chirp_.resize(static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k) {
      // k² mod 2n keeps the angle exact for large k (k < 2^26, so k² fits in int64).
      const int64_t k2 = (k * k) % (2 * n);
      const double angle =
          sign * std::numbers::pi * static_cast<double>(k2) / static_cast<double>(n);
      chirp_[static_cast<size_t>(k)] = Complex(std::cos(angle), std::sin(angle));
    }
    kernel_.assign(static_cast<size_t>(m_), Complex(0, 0));
    kernel_[0] = std::conj(chirp_[0]);
    for (int64_t k = 1; k < n; ++k) {
      kernel_[static_cast<size_t>(k)] = std::conj(chirp_[static_cast<size_t>(k)]);
      kernel_[static_cast<size_t>(m_ - k)] = std::conj(chirp_[static_cast<size_t>(k)]);
    }
    radix2(kernel_.data(), m_, bit_reverse_, twiddle_);
  }

  int64_t length() const { return n_; }

  // Transforms data[0, n) in place.
  void apply(Complex* data) const {
    if (m_ == 0) {
      radix2(data, n_, bit_reverse_, twiddle_);
      return;
    }
    std::vector<Complex> work(static_cast<size_t>(m_), Complex(0, 0));
    for (int64_t k = 0; k < n_; ++k) work[size_t(k)] = data[k] * chirp_[size_t(k)];
    radix2(work.data(), m_, bit_reverse_, twiddle_);
    for (int64_t k = 0; k < m_; ++k) work[size_t(k)] *= kernel_[size_t(k)];
    radix2(work.data(), m_, inverse_bit_reverse_, inverse_twiddle_);
    const double scale = 1.0 / static_cast<double>(m_);
    for (int64_t k = 0; k < n_; ++k) data[k] = work[size_t(k)] * chirp_[size_t(k)] * scale;
  }

 private:
  static void build_radix2(int64_t n, bool inverse, std::vector<int64_t>& bit_reverse,
                           std::vector<Complex>& twiddle) {
    bit_reverse.assign(static_cast<size_t>(n), 0);
    int bits = 0;
    while ((int64_t{1} << bits) < n) ++bits;
    for (int64_t i = 0; i < n; ++i) {
      int64_t r = 0;
      for (int b = 0; b < bits; ++b) r |= ((i >> b) & 1) << (bits - 1 - b);
      bit_reverse[static_cast<size_t>(i)] = r;
    }
    twiddle.resize(static_cast<size_t>(n / 2));
    const double sign = inverse ? 1.0 : -1.0;
    for (int64_t k = 0; k < n / 2; ++k) {
      const double angle =
          sign * 2 * std::numbers::pi * static_cast<double>(k) / static_cast<double>(n);
      twiddle[static_cast<size_t>(k)] = Complex(std::cos(angle), std::sin(angle));
    }
  }

  static void radix2(Complex* a, int64_t n, const std::vector<int64_t>& bit_reverse,
                     const std::vector<Complex>& twiddle) {
    for (int64_t i = 0; i < n; ++i) {
      const int64_t j = bit_reverse[static_cast<size_t>(i)];
      if (i < j) std::swap(a[i], a[j]);
    }
    for (int64_t len = 2; len <= n; len *= 2) {
      const int64_t half = len / 2;
      const int64_t step = n / len;
      for (int64_t start = 0; start < n; start += len) {
        for (int64_t k = 0; k < half; ++k) {
          const Complex t = a[start + k + half] * twiddle[static_cast<size_t>(k * step)];
          a[start + k + half] = a[start + k] - t;
          a[start + k] += t;
        }
      }
    }
  }

  int64_t n_;
  int64_t m_ = 0;  // Bluestein length; 0 for a direct radix-2 plan
  std::vector<int64_t> bit_reverse_, inverse_bit_reverse_;
  std::vector<Complex> twiddle_, inverse_twiddle_;
  std::vector<Complex> chirp_, kernel_;
};

// A scalar integer input (shape [] or [1]).
int64_t scalar_int(const Tensor& t, std::string_view op, std::string_view name) {
  OPENBPU_CHECK(t.element_count() == 1 && (t.dtype() == DataType::kInt32 || t.dtype() == DataType::kInt64),
        op, ": ", name, " must be an int32 or int64 scalar, got ", t.describe());
  return t.int_at(0);
}

double scalar_float(const Tensor& t, std::string_view op, std::string_view name) {
  OPENBPU_CHECK(t.element_count() == 1 && dtype_is_float(t.dtype()), op, ": ", name,
        " must be a float scalar, got ", t.describe());
  return t.float_at(0);
}

template <typename T>
T cast_from_double(double v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v != 0.0;
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(std::clamp(v, static_cast<double>(std::numeric_limits<T>::lowest()),
                                     static_cast<double>(std::numeric_limits<T>::max())));
  } else {
    return from_compute<T>(static_cast<ComputeType<T>>(v));
  }
}

// ---------------------------------------------------------------------------------------------
// DFT-17: input [batch, ..., n, 1 (real) or 2 (complex)], transform along `axis`.

class DftKernel final : public Kernel {
 public:
  explicit DftKernel(const NodeInfo& node) {
    axis_ = node.attrs.get_int("axis", 1);
    inverse_ = node.attrs.get_int("inverse", 0) != 0;
    onesided_ = node.attrs.get_int("onesided", 0) != 0;
    OPENBPU_CHECK(!(inverse_ && onesided_), "DFT: onesided=1 is not supported together with inverse=1");
  }

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const int64_t rank = x.rank();
    OPENBPU_CHECK(rank >= 2, "DFT: input must have rank >= 2 ([batch, ..., 1 or 2]), got ", x.describe());
    const int64_t components = x.dim(rank - 1);
    OPENBPU_CHECK(components == 1 || components == 2,
          "DFT: the last dimension must be 1 (real) or 2 (complex), got ", x.describe());
    const int64_t axis = normalize_axis(axis_, rank, "DFT: axis");
    OPENBPU_CHECK(axis != rank - 1, "DFT: axis ", axis_,
          " names the last (real/imaginary) dimension; it must name a signal dimension");
    int64_t n = x.dim(axis);
    if (const Tensor* len = ctx.optional_input(1)) {
      n = scalar_int(*len, "DFT", "dft_length");
      OPENBPU_CHECK(n > 0, "DFT: dft_length must be > 0, got ", n);
    }
    OPENBPU_CHECK(n > 0, "DFT: the signal along axis ", axis, " is empty");
    const int64_t out_len = onesided_ ? n / 2 + 1 : n;
    Shape out_shape = x.shape();
    out_shape[static_cast<size_t>(axis)] = out_len;
    out_shape.back() = 2;
    Tensor& y = ctx.allocate_output(0, x.dtype(), out_shape);
    if (y.element_count() == 0) return;
    const int64_t in_len = x.dim(axis);
    const int64_t outer = dims_product(x.shape(), 0, static_cast<size_t>(axis));
    const int64_t inner =
        dims_product(x.shape(), static_cast<size_t>(axis) + 1, static_cast<size_t>(rank - 1));
    const FourierPlan plan(n, inverse_);
    const double scale = inverse_ ? 1.0 / static_cast<double>(n) : 1.0;
    dispatch<FloatTypes>(x.dtype(), "DFT", [&]<typename T>() {
      const T* in = x.data<T>();
      T* out = y.data<T>();
      parallel_for(ctx.thread_pool(), outer * inner, std::max<int64_t>(1, 4096 / n),
                   [&](int64_t begin, int64_t end) {
                     std::vector<Complex> line(static_cast<size_t>(n));
                     for (int64_t li = begin; li < end; ++li) {
                       const int64_t o = li / inner, i = li % inner;
                       std::fill(line.begin(), line.end(), Complex(0, 0));
                       for (int64_t k = 0; k < std::min(n, in_len); ++k) {
                         const T* v = in + ((o * in_len + k) * inner + i) * components;
                         const double re = static_cast<double>(to_compute(v[0]));
                         const double im =
                             components == 2 ? static_cast<double>(to_compute(v[1])) : 0.0;
                         line[static_cast<size_t>(k)] = Complex(re, im);
                       }
                       plan.apply(line.data());
                       for (int64_t k = 0; k < out_len; ++k) {
                         T* dst = out + ((o * out_len + k) * inner + i) * 2;
                         const Complex c = line[static_cast<size_t>(k)] * scale;
                         dst[0] = cast_from_double<T>(c.real());
                         dst[1] = cast_from_double<T>(c.imag());
                       }
                     }
                   });
    });
  }

 private:
  int64_t axis_ = 1;
  bool inverse_ = false;
  bool onesided_ = false;
};

// ---------------------------------------------------------------------------------------------
// STFT-17: signal [batch, length, 1 or 2] → [batch, frames, bins, 2].

class StftKernel final : public Kernel {
 public:
  explicit StftKernel(const NodeInfo& node) { onesided_ = node.attrs.get_int("onesided", 1) != 0; }

  void run(KernelContext& ctx) const override {
    const Tensor& signal = ctx.input(0);
    OPENBPU_CHECK(signal.rank() == 3 && (signal.dim(2) == 1 || signal.dim(2) == 2),
          "STFT: signal must be [batch, signal_length, 1 or 2], got ", signal.describe());
    const int64_t step = scalar_int(ctx.input(1), "STFT", "frame_step");
    OPENBPU_CHECK(step > 0, "STFT: frame_step must be > 0, got ", step);
    const Tensor* window = ctx.optional_input(2);
    int64_t frame_length = -1;
    if (window != nullptr) {
      OPENBPU_CHECK(window->rank() == 1 && dtype_is_float(window->dtype()),
            "STFT: window must be a 1-D float tensor, got ", window->describe());
      frame_length = window->dim(0);
    }
    if (const Tensor* fl = ctx.optional_input(3)) {
      const int64_t given = scalar_int(*fl, "STFT", "frame_length");
      OPENBPU_CHECK(frame_length < 0 || given == frame_length, "STFT: frame_length ", given,
            " must equal the window length ", frame_length);
      frame_length = given;
    }
    OPENBPU_CHECK(frame_length >= 0, "STFT: one of window and frame_length must be given");
    const int64_t batch = signal.dim(0), length = signal.dim(1), components = signal.dim(2);
    OPENBPU_CHECK(frame_length > 0 && frame_length <= length, "STFT: frame_length must be in [1, ", length,
          "] (the signal length), got ", frame_length);
    const int64_t frames = (length - frame_length) / step + 1;
    const int64_t bins = onesided_ ? frame_length / 2 + 1 : frame_length;
    Tensor& y = ctx.allocate_output(0, signal.dtype(), {batch, frames, bins, 2});
    if (y.element_count() == 0) return;
    std::vector<double> weights(static_cast<size_t>(frame_length), 1.0);
    if (window != nullptr) {
      for (int64_t k = 0; k < frame_length; ++k) weights[size_t(k)] = window->float_at(k);
    }
    const FourierPlan plan(frame_length, false);
    dispatch<FloatTypes>(signal.dtype(), "STFT", [&]<typename T>() {
      const T* in = signal.data<T>();
      T* out = y.data<T>();
      parallel_for(ctx.thread_pool(), batch * frames, 1, [&](int64_t begin, int64_t end) {
        std::vector<Complex> line(static_cast<size_t>(frame_length));
        for (int64_t bf = begin; bf < end; ++bf) {
          const int64_t b = bf / frames, f = bf % frames;
          const T* src = in + (b * length + f * step) * components;
          for (int64_t k = 0; k < frame_length; ++k) {
            const double re = static_cast<double>(to_compute(src[k * components]));
            const double im =
                components == 2 ? static_cast<double>(to_compute(src[k * components + 1])) : 0.0;
            line[static_cast<size_t>(k)] = Complex(re, im) * weights[static_cast<size_t>(k)];
          }
          plan.apply(line.data());
          T* dst = out + bf * bins * 2;
          for (int64_t k = 0; k < bins; ++k) {
            dst[k * 2] = cast_from_double<T>(line[static_cast<size_t>(k)].real());
            dst[k * 2 + 1] = cast_from_double<T>(line[static_cast<size_t>(k)].imag());
          }
        }
      });
    });
  }

 private:
  bool onesided_ = true;
};

// ---------------------------------------------------------------------------------------------
// Windows: generalised cosine windows w[n] = a0 - a1 cos(2πn/N) + a2 cos(4πn/N), with
// N = size (periodic) or size - 1 (symmetric).

DataType output_datatype(const NodeInfo& node, std::string_view op) {
  const int64_t code = node.attrs.get_int("output_datatype", 1);
  OPENBPU_CHECK(code >= 0 && code <= 32 && dtype_is_known(static_cast<int32_t>(code)), op,
        ": output_datatype ", code, " is not a known tensor element type");
  const DataType type = static_cast<DataType>(code);
  OPENBPU_CHECK(type != DataType::kString && type != DataType::kUndefined && type != DataType::kBool, op,
        ": output_datatype must be a numeric type, got ", dtype_name(type));
  return type;
}

class CosineWindowKernel final : public Kernel {
 public:
  CosineWindowKernel(const NodeInfo& node, double a0, double a1, double a2)
      : op_(node.op_type), a0_(a0), a1_(a1), a2_(a2) {
    periodic_ = node.attrs.get_int("periodic", 1) != 0;
    dtype_ = output_datatype(node, op_);
  }

  void run(KernelContext& ctx) const override {
    const int64_t size = scalar_int(ctx.input(0), op_, "size");
    OPENBPU_CHECK(size >= 0, op_, ": size must be >= 0, got ", size);
    Tensor& y = ctx.allocate_output(0, dtype_, {size});
    const int64_t denominator = periodic_ ? size : size - 1;
    dispatch<NumericTypes>(dtype_, op_, [&]<typename T>() {
      T* out = y.data<T>();
      for (int64_t n = 0; n < size; ++n) {
        double v = 1.0;  // a one-point symmetric window is [1]
        if (denominator > 0) {
          const double phase =
              2 * std::numbers::pi * static_cast<double>(n) / static_cast<double>(denominator);
          v = a0_ - a1_ * std::cos(phase) + a2_ * std::cos(2 * phase);
        }
        out[n] = cast_from_double<T>(v);
      }
    });
  }

 private:
  std::string op_;
  double a0_, a1_, a2_;
  bool periodic_ = true;
  DataType dtype_ = DataType::kFloat32;
};

std::unique_ptr<Kernel> make_hann(const NodeInfo& node) {
  return std::make_unique<CosineWindowKernel>(node, 0.5, 0.5, 0.0);
}
std::unique_ptr<Kernel> make_hamming(const NodeInfo& node) {
  return std::make_unique<CosineWindowKernel>(node, 25.0 / 46.0, 21.0 / 46.0, 0.0);
}
std::unique_ptr<Kernel> make_blackman(const NodeInfo& node) {
  return std::make_unique<CosineWindowKernel>(node, 0.42, 0.5, 0.08);
}

// ---------------------------------------------------------------------------------------------
// MelWeightMatrix-17: triangular mel filter bank [dft_length / 2 + 1, num_mel_bins].

class MelWeightMatrixKernel final : public Kernel {
 public:
  explicit MelWeightMatrixKernel(const NodeInfo& node)
      : dtype_(output_datatype(node, "MelWeightMatrix")) {}

  void run(KernelContext& ctx) const override {
    constexpr std::string_view op = "MelWeightMatrix";
    const int64_t mel_bins = scalar_int(ctx.input(0), op, "num_mel_bins");
    const int64_t dft_length = scalar_int(ctx.input(1), op, "dft_length");
    const int64_t sample_rate = scalar_int(ctx.input(2), op, "sample_rate");
    const double lower_hz = scalar_float(ctx.input(3), op, "lower_edge_hertz");
    const double upper_hz = scalar_float(ctx.input(4), op, "upper_edge_hertz");
    OPENBPU_CHECK(mel_bins > 0, op, ": num_mel_bins must be > 0, got ", mel_bins);
    OPENBPU_CHECK(dft_length > 0, op, ": dft_length must be > 0, got ", dft_length);
    OPENBPU_CHECK(sample_rate > 0, op, ": sample_rate must be > 0, got ", sample_rate);
    OPENBPU_CHECK(lower_hz >= 0 && lower_hz <= upper_hz, op,
          ": need 0 <= lower_edge_hertz <= upper_edge_hertz, got ", lower_hz, " and ", upper_hz);
    const int64_t spectrogram_bins = dft_length / 2 + 1;
    // Mel-spaced band edges (num_mel_bins + 2 points, spaced by range / (num_mel_bins + 2) as
    // in the ONNX reference), mapped to DFT bin indices.
    auto to_mel = [](double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); };
    auto to_hz = [](double mel) { return 700.0 * (std::pow(10.0, mel / 2595.0) - 1.0); };
    const int64_t points = mel_bins + 2;
    const double low_mel = to_mel(lower_hz), high_mel = to_mel(upper_hz);
    const double mel_step = (high_mel - low_mel) / static_cast<double>(points);
    std::vector<int64_t> edge(static_cast<size_t>(points));
    for (int64_t i = 0; i < points; ++i) {
      const double hz = to_hz(low_mel + mel_step * static_cast<double>(i));
      const double bin =
          std::floor(static_cast<double>(dft_length + 1) * hz / static_cast<double>(sample_rate));
      OPENBPU_CHECK(bin >= 0 && bin < static_cast<double>(spectrogram_bins), op, ": band edge ", hz,
            " Hz falls outside the ", spectrogram_bins,
            " spectrogram bins (upper_edge_hertz must not exceed sample_rate / 2)");
      edge[static_cast<size_t>(i)] = static_cast<int64_t>(bin);
    }
    const Shape out_shape = {spectrogram_bins, mel_bins};
    std::vector<double> weights(static_cast<size_t>(shape_element_count(out_shape)), 0.0);
    auto at = [&](int64_t bin, int64_t mel) -> double& {
      return weights[static_cast<size_t>(bin * mel_bins + mel)];
    };
    for (int64_t m = 0; m < mel_bins; ++m) {
      const int64_t left = edge[size_t(m)], center = edge[size_t(m + 1)],
                    right = edge[size_t(m + 2)];
      if (center == left) {
        at(center, m) = 1.0;
      } else {
        for (int64_t j = left; j <= center; ++j) {
          at(j, m) = static_cast<double>(j - left) / static_cast<double>(center - left);
        }
      }
      for (int64_t j = center; j < right; ++j) {
        at(j, m) = static_cast<double>(right - j) / static_cast<double>(right - center);
      }
    }
    Tensor& y = ctx.allocate_output(0, dtype_, out_shape);
    dispatch<NumericTypes>(dtype_, op, [&]<typename T>() {
      T* out = y.data<T>();
      for (size_t i = 0; i < weights.size(); ++i) out[i] = cast_from_double<T>(weights[i]);
    });
  }

 private:
  DataType dtype_;
};

}  // namespace

void register_signal_kernels(std::vector<KernelDef>& defs) {
  defs.push_back(
      {"",
       "DFT",
       17,
       {{"axis", AttrKind::kInt}, {"inverse", AttrKind::kInt}, {"onesided", AttrKind::kInt}},
       &make_kernel<DftKernel>});
  defs.push_back({"", "STFT", 17, {{"onesided", AttrKind::kInt}}, &make_kernel<StftKernel>});
  const std::vector<AttrSpec> window_attrs = {{"output_datatype", AttrKind::kInt},
                                              {"periodic", AttrKind::kInt}};
  defs.push_back({"", "HannWindow", 17, window_attrs, &make_hann});
  defs.push_back({"", "HammingWindow", 17, window_attrs, &make_hamming});
  defs.push_back({"", "BlackmanWindow", 17, window_attrs, &make_blackman});
  defs.push_back({"",
                  "MelWeightMatrix",
                  17,
                  {{"output_datatype", AttrKind::kInt}},
                  &make_kernel<MelWeightMatrixKernel>});
}

}  // namespace openbpu::kernels
