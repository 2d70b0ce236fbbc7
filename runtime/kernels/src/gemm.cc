#include "openbpu/kernels/gemm.h"

#include <algorithm>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace openbpu::kernels {

namespace {

constexpr int64_t kStripRows = kGemmStripRows;  // MR
constexpr int64_t kStripCols = kGemmStripCols;  // NR
constexpr int64_t kDepthBlock = 256;            // KC: B strip of KC x NR floats stays in L1
constexpr int64_t kColumnBlock = 256;           // NC: columns per task; KC x NC panel in L2
constexpr int64_t kStripsPerRowBlock = 20;      // MC / MR: A block of MC x KC stays in L2

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

// tile (kStripRows x kStripCols, row-major) = sum over kc of a strip column x b strip row.
using MicroKernelFn = void (*)(int64_t kc, const float* a, const float* b, float* tile);

// Four-float vectors through the GCC/Clang vector extension: NEON registers on aarch64 (the
// 6x16 tile's 24 accumulators fit its 32 registers), SSE on x86-64 without AVX2. Plain scalar
// loops were not kept in registers by GCC -O3.
typedef float Float4 __attribute__((vector_size(16)));
constexpr int64_t kVectorsPerStripRow = kStripCols / 4;

void micro_kernel_portable(int64_t kc, const float* __restrict a, const float* __restrict b,
                           float* __restrict tile) {
  Float4 acc[kStripRows][kVectorsPerStripRow] = {};
  for (int64_t p = 0; p < kc; ++p) {
    Float4 bv[kVectorsPerStripRow];
    std::memcpy(bv, b + p * kStripCols, sizeof bv);
    for (int64_t i = 0; i < kStripRows; ++i) {
      const float av = a[p * kStripRows + i];
      for (int64_t j = 0; j < kVectorsPerStripRow; ++j) acc[i][j] += av * bv[j];
    }
  }
  std::memcpy(tile, acc, sizeof acc);
}

#if defined(__x86_64__)
static_assert(kStripRows == 6 && kStripCols == 16, "the AVX2 micro-kernel is written for 6x16");

__attribute__((target("avx2,fma"))) void micro_kernel_avx2_fma(int64_t kc, const float* a,
                                                               const float* b, float* tile) {
  __m256 c00 = _mm256_setzero_ps(), c01 = _mm256_setzero_ps();
  __m256 c10 = _mm256_setzero_ps(), c11 = _mm256_setzero_ps();
  __m256 c20 = _mm256_setzero_ps(), c21 = _mm256_setzero_ps();
  __m256 c30 = _mm256_setzero_ps(), c31 = _mm256_setzero_ps();
  __m256 c40 = _mm256_setzero_ps(), c41 = _mm256_setzero_ps();
  __m256 c50 = _mm256_setzero_ps(), c51 = _mm256_setzero_ps();
  for (int64_t p = 0; p < kc; ++p) {
    const __m256 b0 = _mm256_loadu_ps(b);
    const __m256 b1 = _mm256_loadu_ps(b + 8);
    __m256 av = _mm256_broadcast_ss(a + 0);
    c00 = _mm256_fmadd_ps(av, b0, c00);
    c01 = _mm256_fmadd_ps(av, b1, c01);
    av = _mm256_broadcast_ss(a + 1);
    c10 = _mm256_fmadd_ps(av, b0, c10);
    c11 = _mm256_fmadd_ps(av, b1, c11);
    av = _mm256_broadcast_ss(a + 2);
    c20 = _mm256_fmadd_ps(av, b0, c20);
    c21 = _mm256_fmadd_ps(av, b1, c21);
    av = _mm256_broadcast_ss(a + 3);
    c30 = _mm256_fmadd_ps(av, b0, c30);
    c31 = _mm256_fmadd_ps(av, b1, c31);
    av = _mm256_broadcast_ss(a + 4);
    c40 = _mm256_fmadd_ps(av, b0, c40);
    c41 = _mm256_fmadd_ps(av, b1, c41);
    av = _mm256_broadcast_ss(a + 5);
    c50 = _mm256_fmadd_ps(av, b0, c50);
    c51 = _mm256_fmadd_ps(av, b1, c51);
    a += kStripRows;
    b += kStripCols;
  }
  _mm256_storeu_ps(tile + 0, c00);
  _mm256_storeu_ps(tile + 8, c01);
  _mm256_storeu_ps(tile + 16, c10);
  _mm256_storeu_ps(tile + 24, c11);
  _mm256_storeu_ps(tile + 32, c20);
  _mm256_storeu_ps(tile + 40, c21);
  _mm256_storeu_ps(tile + 48, c30);
  _mm256_storeu_ps(tile + 56, c31);
  _mm256_storeu_ps(tile + 64, c40);
  _mm256_storeu_ps(tile + 72, c41);
  _mm256_storeu_ps(tile + 80, c50);
  _mm256_storeu_ps(tile + 88, c51);
}

bool cpu_has_avx2_fma() {
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
}
#endif

MicroKernelFn select_micro_kernel(GemmMicroKernel kind) {
#if defined(__x86_64__)
  if (kind == GemmMicroKernel::kAvx2Fma || kind == GemmMicroKernel::kAuto) {
    if (cpu_has_avx2_fma()) return &micro_kernel_avx2_fma;
  }
#endif
  (void)kind;
  return &micro_kernel_portable;
}

// A thread's B panel storage (KC x NC floats), reused across calls to avoid allocating and
// faulting in a fresh buffer per task. A nested use on the same thread gets its own buffer.
class PanelBuffer {
 public:
  PanelBuffer() {
    if (!in_use_) {
      in_use_ = true;
      owner_ = true;
      if (shared_.empty()) shared_.resize(kPanelFloats);
      data_ = shared_.data();
    } else {
      local_.resize(kPanelFloats);
      data_ = local_.data();
    }
  }
  ~PanelBuffer() {
    if (owner_) in_use_ = false;
  }
  PanelBuffer(const PanelBuffer&) = delete;
  PanelBuffer& operator=(const PanelBuffer&) = delete;
  float* data() { return data_; }

 private:
  static constexpr size_t kPanelFloats = static_cast<size_t>(kDepthBlock * kColumnBlock);
  static thread_local std::vector<float> shared_;
  static thread_local bool in_use_;
  std::vector<float> local_;
  float* data_ = nullptr;
  bool owner_ = false;
};
thread_local std::vector<float> PanelBuffer::shared_;
thread_local bool PanelBuffer::in_use_ = false;

// Writes a computed tile into c. The first depth block combines with beta * c, later blocks
// accumulate.
void store_tile(const float* tile, int64_t rows, int64_t cols, float alpha, float beta,
                bool first_block, float* c, int64_t ldc) {
  for (int64_t i = 0; i < rows; ++i) {
    float* out = c + i * ldc;
    const float* t = tile + i * kStripCols;
    if (!first_block) {
      for (int64_t j = 0; j < cols; ++j) out[j] += alpha * t[j];
    } else if (beta == 0.0f) {
      for (int64_t j = 0; j < cols; ++j) out[j] = alpha * t[j];
    } else {
      for (int64_t j = 0; j < cols; ++j) out[j] = alpha * t[j] + beta * out[j];
    }
  }
}

}  // namespace

void gemm_f32_reference(int64_t m, int64_t n, int64_t k, float alpha, MatrixViewF32 a,
                        MatrixViewF32 b, float beta, float* c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0.0;
      for (int64_t p = 0; p < k; ++p) {
        sum += static_cast<double>(a.at(i, p)) * static_cast<double>(b.at(p, j));
      }
      float& out = c[i * ldc + j];
      const float product = static_cast<float>(alpha * sum);
      out = beta == 0.0f ? product : product + beta * out;
    }
  }
}

bool gemm_micro_kernel_available(GemmMicroKernel kind) {
  switch (kind) {
    case GemmMicroKernel::kAuto:
    case GemmMicroKernel::kPortable: return true;
    case GemmMicroKernel::kAvx2Fma:
#if defined(__x86_64__)
      return cpu_has_avx2_fma();
#else
      return false;
#endif
  }
  return false;
}

PackedGemmLhs::PackedGemmLhs(int64_t m, int64_t k, MatrixViewF32 a) : rows_(m), depth_(k) {
  const int64_t strips = ceil_div(m, kStripRows);
  data_.assign(static_cast<size_t>(strips * k * kStripRows), 0.0f);
  for (int64_t s = 0; s < strips; ++s) {
    const int64_t rows = std::min(kStripRows, m - s * kStripRows);
    float* dst = data_.data() + s * k * kStripRows;
    for (int64_t i = 0; i < rows; ++i) {
      const int64_t r = s * kStripRows + i;
      for (int64_t p = 0; p < k; ++p) dst[p * kStripRows + i] = a.at(r, p);
    }
  }
}

void pack_gemm_panel(MatrixViewF32 b, int64_t k0, int64_t kc, int64_t n0, int64_t nc,
                     float* panel) {
  const int64_t strips = ceil_div(nc, kStripCols);
  for (int64_t j = 0; j < strips; ++j) {
    const int64_t cols = std::min(kStripCols, nc - j * kStripCols);
    const int64_t col0 = n0 + j * kStripCols;
    float* dst = panel + j * kc * kStripCols;
    for (int64_t p = 0; p < kc; ++p, dst += kStripCols) {
      const float* src = b.data + (k0 + p) * b.row_stride + col0 * b.col_stride;
      if (b.col_stride == 1) {
        std::memcpy(dst, src, static_cast<size_t>(cols) * sizeof(float));
      } else {
        for (int64_t q = 0; q < cols; ++q) dst[q] = src[q * b.col_stride];
      }
      for (int64_t q = cols; q < kStripCols; ++q) dst[q] = 0.0f;
    }
  }
}

void gemm_f32_packed(const PackedGemmLhs& a, int64_t n, const GemmPanelPacker& pack_b, float alpha,
                     float beta, float* c, int64_t ldc, ThreadPool* pool, GemmMicroKernel kind) {
  const int64_t m = a.rows();
  const int64_t k = a.depth();
  if (m <= 0 || n <= 0) return;
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        float& out = c[i * ldc + j];
        out = beta == 0.0f ? 0.0f : beta * out;
      }
    }
    return;
  }
  const MicroKernelFn micro = select_micro_kernel(kind);
  const int64_t row_strips = ceil_div(m, kStripRows);
  const int64_t column_blocks = ceil_div(n, kColumnBlock);
  // Split rows too when there are too few column blocks to keep every thread busy.
  const int64_t threads = pool != nullptr ? pool->thread_count() : 1;
  int64_t row_parts = 1;
  if (column_blocks < 2 * threads) {
    row_parts = std::min(row_strips, ceil_div(2 * threads, column_blocks));
  }
  const int64_t strips_per_part = ceil_div(row_strips, row_parts);
  row_parts = ceil_div(row_strips, strips_per_part);

  parallel_for(pool, column_blocks * row_parts, 1, [&](int64_t task_begin, int64_t task_end) {
    PanelBuffer panel;
    alignas(64) float tile[kStripRows * kStripCols];
    for (int64_t task = task_begin; task < task_end; ++task) {
      const int64_t n0 = (task / row_parts) * kColumnBlock;
      const int64_t nc = std::min(kColumnBlock, n - n0);
      const int64_t strip_begin = (task % row_parts) * strips_per_part;
      const int64_t strip_end = std::min(row_strips, strip_begin + strips_per_part);
      const int64_t col_strips = ceil_div(nc, kStripCols);
      for (int64_t k0 = 0; k0 < k; k0 += kDepthBlock) {
        const int64_t kc = std::min(kDepthBlock, k - k0);
        pack_b(k0, kc, n0, nc, panel.data());
        for (int64_t sb = strip_begin; sb < strip_end; sb += kStripsPerRowBlock) {
          const int64_t sb_end = std::min(strip_end, sb + kStripsPerRowBlock);
          for (int64_t j = 0; j < col_strips; ++j) {
            const float* b_strip = panel.data() + j * kc * kStripCols;
            const int64_t col0 = n0 + j * kStripCols;
            const int64_t cols = std::min(kStripCols, n - col0);
            for (int64_t s = sb; s < sb_end; ++s) {
              micro(kc, a.strip(s, k0), b_strip, tile);
              const int64_t row0 = s * kStripRows;
              store_tile(tile, std::min(kStripRows, m - row0), cols, alpha, beta, k0 == 0,
                         c + row0 * ldc + col0, ldc);
            }
          }
        }
      }
    }
  });
}

void gemm_f32(int64_t m, int64_t n, int64_t k, float alpha, MatrixViewF32 a, MatrixViewF32 b,
              float beta, float* c, int64_t ldc, ThreadPool* pool, GemmMicroKernel kind) {
  if (m <= 0 || n <= 0) return;
  const PackedGemmLhs packed(m, k, a);
  gemm_f32_packed(
      packed, n,
      [&b](int64_t k0, int64_t kc, int64_t n0, int64_t nc, float* panel) {
        pack_gemm_panel(b, k0, kc, n0, nc, panel);
      },
      alpha, beta, c, ldc, pool, kind);
}

}  // namespace openbpu::kernels
