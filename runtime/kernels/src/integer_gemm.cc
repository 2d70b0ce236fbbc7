#include "openbpu/kernels/integer_gemm.h"

#include <algorithm>
#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace openbpu::kernels {

namespace {

constexpr int64_t kRows = kIntGemmStripRows;  // MR
constexpr int64_t kCols = kIntGemmStripCols;  // NR
constexpr int64_t kTile = kRows * kCols;
constexpr int64_t kMaxColumnBlock = 256;           // NC upper bound
constexpr int64_t kPanelBytes = int64_t{1} << 18;  // B panel (all depth x NC) budget, in L2

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

// tile[i * kCols + j] = sum over pc pairs of a[p][i][0..1] · b[p][j][0..1] (int32).
using MicroKernelFn = void (*)(int64_t pc, const int16_t* a, const int16_t* b, int32_t* tile);

// Plain C++; GCC vectorises the inner loops (NEON on aarch64, SSE elsewhere).
void micro_kernel_portable(int64_t pc, const int16_t* __restrict a, const int16_t* __restrict b,
                           int32_t* __restrict tile) {
  int32_t acc[kRows][kCols] = {};
  for (int64_t p = 0; p < pc; ++p) {
    int32_t b0[kCols], b1[kCols];
    for (int64_t j = 0; j < kCols; ++j) {
      b0[j] = b[2 * j];
      b1[j] = b[2 * j + 1];
    }
    for (int64_t i = 0; i < kRows; ++i) {
      const int32_t a0 = a[2 * i], a1 = a[2 * i + 1];
      for (int64_t j = 0; j < kCols; ++j) acc[i][j] += a0 * b0[j] + a1 * b1[j];
    }
    a += 2 * kRows;
    b += 2 * kCols;
  }
  std::memcpy(tile, acc, sizeof acc);
}

#if defined(__x86_64__)
static_assert(kRows == 6 && kCols == 16, "the x86 micro-kernels are written for 6x16");

// One step of the 6x16 tile: broadcast the row's pair, multiply-add it with the two column
// vectors. MADD(acc, a, b) accumulates the pairwise products of a and b into acc.
#define OPENBPU_INT_GEMM_BODY(MADD)                                                  \
  __m256i c00 = _mm256_setzero_si256(), c01 = _mm256_setzero_si256();                \
  __m256i c10 = _mm256_setzero_si256(), c11 = _mm256_setzero_si256();                \
  __m256i c20 = _mm256_setzero_si256(), c21 = _mm256_setzero_si256();                \
  __m256i c30 = _mm256_setzero_si256(), c31 = _mm256_setzero_si256();                \
  __m256i c40 = _mm256_setzero_si256(), c41 = _mm256_setzero_si256();                \
  __m256i c50 = _mm256_setzero_si256(), c51 = _mm256_setzero_si256();                \
  for (int64_t p = 0; p < pc; ++p) {                                                 \
    const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b));      \
    const __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 16)); \
    int32_t pair;                                                                    \
    __m256i av;                                                                      \
    std::memcpy(&pair, a + 0, 4);                                                    \
    av = _mm256_set1_epi32(pair);                                                    \
    c00 = MADD(c00, av, b0);                                                         \
    c01 = MADD(c01, av, b1);                                                         \
    std::memcpy(&pair, a + 2, 4);                                                    \
    av = _mm256_set1_epi32(pair);                                                    \
    c10 = MADD(c10, av, b0);                                                         \
    c11 = MADD(c11, av, b1);                                                         \
    std::memcpy(&pair, a + 4, 4);                                                    \
    av = _mm256_set1_epi32(pair);                                                    \
    c20 = MADD(c20, av, b0);                                                         \
    c21 = MADD(c21, av, b1);                                                         \
    std::memcpy(&pair, a + 6, 4);                                                    \
    av = _mm256_set1_epi32(pair);                                                    \
    c30 = MADD(c30, av, b0);                                                         \
    c31 = MADD(c31, av, b1);                                                         \
    std::memcpy(&pair, a + 8, 4);                                                    \
    av = _mm256_set1_epi32(pair);                                                    \
    c40 = MADD(c40, av, b0);                                                         \
    c41 = MADD(c41, av, b1);                                                         \
    std::memcpy(&pair, a + 10, 4);                                                   \
    av = _mm256_set1_epi32(pair);                                                    \
    c50 = MADD(c50, av, b0);                                                         \
    c51 = MADD(c51, av, b1);                                                         \
    a += 2 * kRows;                                                                  \
    b += 2 * kCols;                                                                  \
  }                                                                                  \
  __m256i* out = reinterpret_cast<__m256i*>(tile);                                   \
  _mm256_storeu_si256(out + 0, c00);                                                 \
  _mm256_storeu_si256(out + 1, c01);                                                 \
  _mm256_storeu_si256(out + 2, c10);                                                 \
  _mm256_storeu_si256(out + 3, c11);                                                 \
  _mm256_storeu_si256(out + 4, c20);                                                 \
  _mm256_storeu_si256(out + 5, c21);                                                 \
  _mm256_storeu_si256(out + 6, c30);                                                 \
  _mm256_storeu_si256(out + 7, c31);                                                 \
  _mm256_storeu_si256(out + 8, c40);                                                 \
  _mm256_storeu_si256(out + 9, c41);                                                 \
  _mm256_storeu_si256(out + 10, c50);                                                \
  _mm256_storeu_si256(out + 11, c51);

#define OPENBPU_MADD_AVX2(acc, a, b) _mm256_add_epi32(acc, _mm256_madd_epi16(a, b))
#define OPENBPU_MADD_AVXVNNI(acc, a, b) _mm256_dpwssd_avx_epi32(acc, a, b)

__attribute__((target("avx2"))) void micro_kernel_avx2(int64_t pc, const int16_t* a,
                                                       const int16_t* b, int32_t* tile) {
  OPENBPU_INT_GEMM_BODY(OPENBPU_MADD_AVX2)
}

__attribute__((target("avx2,avxvnni"))) void micro_kernel_avxvnni(int64_t pc, const int16_t* a,
                                                                  const int16_t* b, int32_t* tile) {
  OPENBPU_INT_GEMM_BODY(OPENBPU_MADD_AVXVNNI)
}

#undef OPENBPU_MADD_AVXVNNI
#undef OPENBPU_MADD_AVX2
#undef OPENBPU_INT_GEMM_BODY

bool cpu_has_avx2() {
  static const bool has = __builtin_cpu_supports("avx2");
  return has;
}
// AVX-VNNI (VEX-encoded VPDPBUSD): CPUID leaf 7 sub-leaf 1, EAX bit 4, read directly because
// clang 14's __builtin_cpu_supports does not know "avxvnni" (the fuzz preset builds with clang).
// The AVX2 check before it covers the OS's saving of the YMM state.
bool cpu_has_avxvnni() {
  static const bool has = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    return __builtin_cpu_supports("avx2") && __get_cpuid_count(7, 1, &a, &b, &c, &d) != 0 &&
           (a & (1u << 4)) != 0;
  }();
  return has;
}
#endif

MicroKernelFn select_micro_kernel(IntGemmMicroKernel kind) {
#if defined(__x86_64__)
  if ((kind == IntGemmMicroKernel::kAuto || kind == IntGemmMicroKernel::kAvxVnni) &&
      cpu_has_avxvnni()) {
    return &micro_kernel_avxvnni;
  }
  if ((kind == IntGemmMicroKernel::kAuto || kind == IntGemmMicroKernel::kAvx2) && cpu_has_avx2()) {
    return &micro_kernel_avx2;
  }
#endif
  (void)kind;
  return &micro_kernel_portable;
}

// A thread's B panel, reused across calls (grown as needed).
std::vector<int16_t>& panel_buffer() {
  thread_local std::vector<int16_t> buffer;
  return buffer;
}

}  // namespace

bool int_gemm_micro_kernel_available(IntGemmMicroKernel kind) {
  switch (kind) {
    case IntGemmMicroKernel::kAuto:
    case IntGemmMicroKernel::kPortable: return true;
#if defined(__x86_64__)
    case IntGemmMicroKernel::kAvx2: return cpu_has_avx2();
    case IntGemmMicroKernel::kAvxVnni: return cpu_has_avxvnni();
#else
    case IntGemmMicroKernel::kAvx2:
    case IntGemmMicroKernel::kAvxVnni: return false;
#endif
  }
  return false;
}

PackedIntGemmLhs::PackedIntGemmLhs(int64_t m, int64_t k, const int8_t* a, int64_t lda)
    : rows_(m), depth_(k) {
  const int64_t strips = ceil_div(m, kRows);
  const int64_t p_count = pairs();
  data_.assign(static_cast<size_t>(strips * p_count * kRows * 2), 0);
  for (int64_t r = 0; r < m; ++r) {
    int16_t* dst = data_.data() + ((r / kRows) * p_count * kRows + r % kRows) * 2;
    const int8_t* src = a + r * lda;
    for (int64_t d = 0; d < k; ++d) dst[(d / 2) * kRows * 2 + d % 2] = src[d];
  }
}

int64_t int_gemm_pairs_per_block(int64_t max_abs_b) {
  // |w0·b0 + w1·b1| <= 2 · 128 · max_abs_b per pair; the block's sum must stay below 2^31.
  const int64_t per_pair = 2 * 128 * std::max<int64_t>(max_abs_b, 1);
  return std::max<int64_t>(1, (int64_t{1} << 31) / per_pair - 1);
}

void int_gemm_packed(const PackedIntGemmLhs& a, int64_t n, int64_t max_abs_b,
                     const IntGemmPanelPacker& pack_b, const IntGemmEpilogue& epilogue,
                     ThreadPool* pool, IntGemmMicroKernel kind) {
  const int64_t m = a.rows();
  if (m <= 0 || n <= 0) return;
  const int64_t pairs = a.pairs();
  const MicroKernelFn micro = select_micro_kernel(kind);
  const int64_t block = int_gemm_pairs_per_block(max_abs_b);
  // Column block: the panel (all depth pairs x nc columns, 4 bytes each) fits the budget.
  const int64_t column_block = std::clamp<int64_t>(
      (kPanelBytes / (4 * std::max<int64_t>(pairs, 1))) / kCols * kCols, kCols, kMaxColumnBlock);
  const int64_t row_strips = ceil_div(m, kRows);
  const int64_t column_blocks = ceil_div(n, column_block);
  const int64_t threads = pool != nullptr ? pool->thread_count() : 1;
  int64_t row_parts = 1;
  if (column_blocks < 2 * threads) {
    row_parts = std::min(row_strips, ceil_div(2 * threads, column_blocks));
  }
  const int64_t strips_per_part = ceil_div(row_strips, row_parts);
  row_parts = ceil_div(row_strips, strips_per_part);

  parallel_for(pool, column_blocks * row_parts, 1, [&](int64_t task_begin, int64_t task_end) {
    std::vector<int16_t>& panel = panel_buffer();
    alignas(64) int32_t tile32[kTile];
    alignas(64) int64_t tile64[kTile];
    for (int64_t task = task_begin; task < task_end; ++task) {
      const int64_t n0 = (task / row_parts) * column_block;
      const int64_t nc = std::min(column_block, n - n0);
      const int64_t strip_begin = (task % row_parts) * strips_per_part;
      const int64_t strip_end = std::min(row_strips, strip_begin + strips_per_part);
      const int64_t col_strips = ceil_div(nc, kCols);
      panel.resize(static_cast<size_t>(col_strips * pairs * kCols * 2));
      pack_b(n0, nc, pairs, panel.data());
      // Row strip by row strip: the A strip stays in L1 while the panel streams from L2, and
      // each output row is written in order.
      for (int64_t s = strip_begin; s < strip_end; ++s) {
        for (int64_t j = 0; j < col_strips; ++j) {
          const int16_t* b_strip = panel.data() + j * pairs * kCols * 2;
          const int64_t col0 = n0 + j * kCols;
          const int64_t cols = std::min(kCols, n - col0);
          {
            IntGemmTile tile;
            tile.row0 = s * kRows;
            tile.rows = std::min(kRows, m - tile.row0);
            tile.col0 = col0;
            tile.cols = cols;
            if (pairs <= block) {
              micro(pairs, a.strip(s, 0), b_strip, tile32);
              tile.narrow = tile32;
            } else {
              for (int64_t p0 = 0; p0 < pairs; p0 += block) {
                const int64_t pc = std::min(block, pairs - p0);
                micro(pc, a.strip(s, p0), b_strip + p0 * kCols * 2, tile32);
                for (int64_t t = 0; t < kTile; ++t)
                  tile64[t] = (p0 == 0 ? 0 : tile64[t]) + tile32[t];
              }
              tile.wide = tile64;
            }
            epilogue(tile);
          }
        }
      }
    }
  });
}

}  // namespace openbpu::kernels
