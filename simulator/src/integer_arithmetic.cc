#include "openbpu/simulator/integer_arithmetic.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <stdexcept>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "functional/lut_int16_lanes.h"

namespace openbpu::simulator {

int64_t round_shift_right(Int128 x, int shift) {
  if (shift <= 0) return static_cast<int64_t>(x);
  const Int128 half = static_cast<Int128>(1) << (shift - 1);
  // Arithmetic shift of a signed 128-bit value rounds toward -inf: floor((x + half) / 2^s).
  return static_cast<int64_t>((x + half) >> shift);
}

FixedPointMultiplier to_fixed_point(double real) {
  if (!(real >= 0.0) || !std::isfinite(real) || real >= 2147483648.0) {
    throw std::invalid_argument("fixed-point multiplier must be finite, >= 0 and < 2^31");
  }
  if (real == 0.0) return {};
  int exponent = 0;
  const double fraction = std::frexp(real, &exponent);  // real = fraction * 2^exponent, [0.5, 1)
  int64_t m = static_cast<int64_t>(std::llround(std::ldexp(fraction, 31)));  // [2^30, 2^31]
  if (m == (int64_t{1} << 31)) {
    m /= 2;
    ++exponent;
  }
  int shift = 31 - exponent;  // real = m * 2^-(31 - exponent)
  if (shift > 93) return {};  // below the representable range: treated as zero
  while (shift < 0) {          // only when real >= 2^31, rejected above
    m *= 2;
    ++shift;
  }
  return {static_cast<int32_t>(m), shift};
}

double to_real(FixedPointMultiplier m) { return std::ldexp(static_cast<double>(m.multiplier), -m.shift); }

int64_t apply_multiplier(int64_t x, FixedPointMultiplier m) {
  const Int128 product = static_cast<Int128>(x) * m.multiplier;
  return round_shift_right(product, m.shift);
}

int64_t resize_linear_coordinate(int64_t numerator, int64_t denominator, int64_t length) {
  if (denominator <= 0) throw std::invalid_argument("resize coordinate denominator must be > 0");
  const Int128 scaled = static_cast<Int128>(numerator) * (int64_t{1} << kResizeFractionBits) +
                        denominator / 2;
  Int128 c = scaled / denominator;  // truncates toward zero
  if (c * denominator != scaled && scaled < 0) --c;  // floor
  const int64_t hi = (length > 0 ? length - 1 : 0) * (int64_t{1} << kResizeFractionBits);
  if (c < 0) return 0;
  if (c > hi) return hi;
  return static_cast<int64_t>(c);
}

float symmetric_scale(float threshold, int bits) {
  if (!(threshold > 0.0f) || !std::isfinite(threshold)) return 1.0f;
  const float qmax = static_cast<float>((int64_t{1} << (bits - 1)) - 1);
  const float scale = threshold / qmax;
  return scale > 0.0f ? scale : std::numeric_limits<float>::min();
}

FixedPointMultiplier requantization_multiplier(double in_scale, double out_scale) {
  return to_fixed_point(in_scale / out_scale);
}

namespace {
template <typename T>
T quantize_to(float x, float scale) {
  if (std::isnan(x)) return 0;
  const double q = std::nearbyint(static_cast<double>(x) / static_cast<double>(scale));
  if (q <= static_cast<double>(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
  if (q >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(q);
}
}  // namespace

int8_t quantize_int8(float x, float scale) { return quantize_to<int8_t>(x, scale); }
int16_t quantize_int16(float x, float scale) { return quantize_to<int16_t>(x, scale); }

namespace {

// Where a span goes: q (quantized values) or y (dequantized again), whichever is set.
template <typename T>
struct QuantizeSpan {
  const float* x;
  int64_t n;
  float scale;
  T* q;
  float* y;

  void put(int64_t i, T v) const {
    if (q != nullptr) q[i] = v;
    if (y != nullptr) y[i] = dequantize(v, scale);
  }
};

template <typename T>
void quantize_scalar(const QuantizeSpan<T>& s, int64_t from) {
  for (int64_t i = from; i < s.n; ++i) s.put(i, quantize_to<T>(s.x[i], s.scale));
}

#if defined(__x86_64__)
// quantize_to on 8 doubles: NaN → 0, x / scale rounded to nearest even, saturated.
template <typename T>
__attribute__((target("avx512f"))) __m256i quantize_8_avx512(__m256 x, __m512d scale) {
  const __m512d xd = _mm512_cvtps_pd(x);
  __m512d q =
      _mm512_roundscale_pd(_mm512_div_pd(xd, scale), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  q = _mm512_max_pd(q, _mm512_set1_pd(static_cast<double>(std::numeric_limits<T>::min())));
  q = _mm512_min_pd(q, _mm512_set1_pd(static_cast<double>(std::numeric_limits<T>::max())));
  q = _mm512_mask_blend_pd(_mm512_cmp_pd_mask(xd, xd, _CMP_UNORD_Q), q, _mm512_setzero_pd());
  return _mm512_cvtpd_epi32(q);  // exact: an integer in T's range
}

template <typename T>
__attribute__((target("avx512f"))) void quantize_avx512(const QuantizeSpan<T>& s) {
  const __m512d scale = _mm512_set1_pd(static_cast<double>(s.scale));
  const __m512 fscale = _mm512_set1_ps(s.scale);
  int64_t i = 0;
  for (; i + 16 <= s.n; i += 16) {
    const __m512 x = _mm512_loadu_ps(s.x + i);
    const __m256i lo = quantize_8_avx512<T>(_mm512_castps512_ps256(x), scale);
    const __m256i hi = quantize_8_avx512<T>(
        _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(x), 1)), scale);
    const __m512i q32 = _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
    if (s.q != nullptr) {
      if constexpr (sizeof(T) == 1) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(s.q + i), _mm512_cvtepi32_epi8(q32));
      } else {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(s.q + i), _mm512_cvtepi32_epi16(q32));
      }
    }
    if (s.y != nullptr) _mm512_storeu_ps(s.y + i, _mm512_mul_ps(_mm512_cvtepi32_ps(q32), fscale));
  }
  quantize_scalar(s, i);
}
#endif

template <typename T>
void quantize_span(const QuantizeSpan<T>& s) {
#if defined(__x86_64__)
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  if (avx512) return quantize_avx512(s);
#endif
  quantize_scalar(s, 0);
}

}  // namespace

void quantize_int8(const float* x, int64_t n, float scale, int8_t* q) {
  quantize_span(QuantizeSpan<int8_t>{x, n, scale, q, nullptr});
}
void quantize_int16(const float* x, int64_t n, float scale, int16_t* q) {
  quantize_span(QuantizeSpan<int16_t>{x, n, scale, q, nullptr});
}
void fake_quantize(const float* x, int64_t n, float scale, int bits, float* y) {
  if (bits == 8) {
    quantize_span(QuantizeSpan<int8_t>{x, n, scale, nullptr, y});
  } else {
    quantize_span(QuantizeSpan<int16_t>{x, n, scale, nullptr, y});
  }
}

bool lut_int16_fits_int32(const LutInt16& t) {
  for (size_t k = 0; k + 1 < t.knots.size(); ++k) {
    const int64_t delta = std::abs(int64_t{t.knots[k + 1]} - t.knots[k]);
    if (delta * 255 + 128 >= (int64_t{1} << 31) ||
        std::abs(int64_t{t.knots[k]}) + delta + 1 >= (int64_t{1} << 31)) {
      return false;
    }
  }
  return true;
}

namespace {

#if defined(__x86_64__)
// Sixteen lookups a step (lut_int16_lanes). The last n % 16 values in one masked step (short
// rows: the channels of one NHWC pixel). Returns n.
__attribute__((target("avx512f,avx512bw,avx512vl"))) int64_t lut_int16_row_avx512(const LutInt16& t,
                                                                                  const uint8_t* x,
                                                                                  uint8_t* y,
                                                                                  int64_t n) {
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 in =
        n - i >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << (n - i)) - 1);
    const __m512i q = _mm512_cvtepi16_epi32(_mm256_maskz_loadu_epi16(in, x + 2 * i));
    _mm512_mask_cvtepi32_storeu_epi16(y + 2 * i, in, lut_int16_lanes(t, q, in));
  }
  return n;
}
#else
int64_t lut_int16_row_avx512(const LutInt16&, const uint8_t*, uint8_t*, int64_t) {
  return 0;
}
#endif

}  // namespace

void lut_int16_row(const LutInt16& t, const uint8_t* x, uint8_t* y, int64_t n, bool gathers) {
  int64_t i = gathers ? lut_int16_row_avx512(t, x, y, n) : 0;
  for (; i < n; ++i) {
    int16_t q;
    std::memcpy(&q, x + 2 * i, sizeof q);
    const int16_t v = t.lookup(q);
    std::memcpy(y + 2 * i, &v, sizeof v);
  }
}

int32_t quantize_bias(float bias, double input_scale, double weight_scale) {
  const double q = std::nearbyint(static_cast<double>(bias) / (input_scale * weight_scale));
  if (std::isnan(q)) return 0;
  if (q <= static_cast<double>(INT32_MIN)) return INT32_MIN;
  if (q >= static_cast<double>(INT32_MAX)) return INT32_MAX;
  return static_cast<int32_t>(q);
}

LutInt8 build_lut_int8(const std::function<double(double)>& f, float in_scale, float out_scale) {
  std::vector<float> values(256);
  for (int q = -128; q <= 127; ++q) {
    values[static_cast<size_t>(q + 128)] = static_cast<float>(f(static_cast<double>(q) * in_scale));
  }
  return lut_int8_from_values(values, out_scale);
}

LutInt8 lut_int8_from_values(const std::vector<float>& values, float out_scale) {
  if (values.size() != 256) throw std::invalid_argument("an int8 table needs 256 values");
  LutInt8 lut;
  for (size_t i = 0; i < 256; ++i) lut.table[i] = quantize_int8(values[i], out_scale);
  return lut;
}

double lut_int16_knot_input(int k, float in_scale) {
  return static_cast<double>(-32768 + 256 * k) * in_scale;
}

LutInt16 build_lut_int16(const std::function<double(double)>& f, float in_scale, float out_scale) {
  std::vector<float> values(257);
  for (int k = 0; k <= 256; ++k) {
    values[static_cast<size_t>(k)] = static_cast<float>(f(lut_int16_knot_input(k, in_scale)));
  }
  return lut_int16_from_values(values, out_scale);
}

LutInt16 lut_int16_from_values(const std::vector<float>& values, float out_scale) {
  if (values.size() != 257) throw std::invalid_argument("an int16 table needs 257 knot values");
  LutInt16 lut;
  for (size_t k = 0; k < 257; ++k) {
    double y = std::nearbyint(static_cast<double>(values[k]) / out_scale);
    if (std::isnan(y)) y = 0;
    // Knots may exceed int16 (the interpolation saturates); keep them in int32 range.
    y = std::fmin(std::fmax(y, -1073741824.0), 1073741823.0);
    lut.knots[k] = static_cast<int32_t>(y);
  }
  return lut;
}

// ---------------------------------------------------------------- softmax

// round(2^30 · 2^(-j/256)), j = 0..256 (computed once with 60-digit decimal arithmetic).
const std::array<int64_t, 257> kSoftmaxExp2Q30 = {
    1073741824, 1070838486, 1067942999, 1065055341, 1062175491, 1059303428, 1056439131, 1053582579,
    1050733751, 1047892626, 1045059183, 1042233401, 1039415261, 1036604740, 1033801819, 1031006477,
    1028218693, 1025438448, 1022665720, 1019900489, 1017142735, 1014392438, 1011649578, 1008914134,
    1006186087, 1003465416, 1000752102, 998046124, 995347464, 992656100, 989972014, 987295185,
    984625594, 981963222, 979308048, 976660054, 974019220, 971385527, 968758955, 966139485,
    963527098, 960921775, 958323496, 955732243, 953147997, 950570738, 948000448, 945437108,
    942880699, 940331203, 937788600, 935252872, 932724001, 930201967, 927686753, 925178340,
    922676710, 920181844, 917693724, 915212331, 912737649, 910269657, 907808339, 905353676,
    902905651, 900464244, 898029440, 895601218, 893179563, 890764456, 888355878, 885953814,
    883558244, 881169153, 878786521, 876410331, 874040567, 871677210, 869320244, 866969651,
    864625413, 862287515, 859955938, 857630665, 855311680, 852998965, 850692504, 848392279,
    846098274, 843810471, 841528855, 839253408, 836984114, 834720956, 832463917, 830212982,
    827968132, 825729353, 823496627, 821269938, 819049271, 816834607, 814625932, 812423229,
    810226483, 808035676, 805850792, 803671817, 801498734, 799331526, 797170178, 795014675,
    792865000, 790721137, 788583072, 786450787, 784324269, 782203500, 780088465, 777979150,
    775875538, 773777614, 771685363, 769598769, 767517817, 765442492, 763372778, 761308661,
    759250125, 757197155, 755149737, 753107854, 751071493, 749040637, 747015274, 744995386,
    742980960, 740971982, 738968435, 736970306, 734977579, 732990241, 731008277, 729031671,
    727060411, 725094480, 723133865, 721178552, 719228525, 717283772, 715344277, 713410026,
    711481005, 709557200, 707638598, 705725183, 703816941, 701913860, 700015924, 698123120,
    696235434, 694352853, 692475362, 690602947, 688735596, 686873293, 685016026, 683163781,
    681316545, 679474303, 677637043, 675804750, 673977412, 672155015, 670337545, 668524990,
    666717336, 664914570, 663116678, 661323648, 659535466, 657752119, 655973594, 654199878,
    652430958, 650666822, 648907455, 647152846, 645402981, 643657847, 641917433, 640181724,
    638450708, 636724373, 635002706, 633285695, 631573326, 629865587, 628162466, 626463950,
    624770026, 623080683, 621395908, 619715688, 618040012, 616368866, 614702239, 613040119,
    611382493, 609729349, 608080675, 606436459, 604796689, 603161352, 601530438, 599903933,
    598281827, 596664106, 595050760, 593441776, 591837143, 590236848, 588640881, 587049229,
    585461881, 583878825, 582300049, 580725543, 579155293, 577589290, 576027521, 574469975,
    572916640, 571367506, 569822560, 568281792, 566745190, 565212742, 563684439, 562160268,
    560640218, 559124278, 557612438, 556104685, 554601009, 553101399, 551605844, 550114332,
    548626854, 547143398, 545663953, 544188508, 542717053, 541249576, 539786068, 538326517,
    536870912,
};

SoftmaxMultipliers softmax_multipliers(double in_scale, double out_scale) {
  if (!(in_scale > 0) || !std::isfinite(in_scale) || !(out_scale > 0) || !std::isfinite(out_scale)) {
    throw std::invalid_argument("softmax scales must be finite and > 0");
  }
  constexpr double kLog2E = 1.4426950408889634;
  const double exponent = in_scale * kLog2E * 65536.0;
  if (!(exponent < 2147483648.0)) {
    throw std::invalid_argument("softmax input scale too large: in_scale * log2(e) * 2^16 must be < 2^31");
  }
  return {to_fixed_point(exponent), to_fixed_point(std::ldexp(1.0, -30) / out_scale)};
}

int64_t softmax_exp2_q30(int64_t t) {
  if (t < 0) throw std::invalid_argument("softmax_exp2_q30: t must be >= 0");
  const int64_t i = t >> 16;
  if (i >= 63) return 0;
  const size_t j = static_cast<size_t>((t >> 8) & 0xff);
  const int64_t r = t & 0xff;
  const int64_t v = kSoftmaxExp2Q30[j] + round_shift_right((kSoftmaxExp2Q30[j + 1] - kSoftmaxExp2Q30[j]) * r, 8);
  return round_shift_right(v, static_cast<int>(i));  // (detail::softmax_exp2_q30_unchecked: the same in int64)
}

}  // namespace openbpu::simulator
