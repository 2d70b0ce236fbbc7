#include "openbpu/kernels/gemm.h"
#include "openbpu/kernels/vector_clones.h"

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
constexpr int64_t kColumnBlock = kGemmPanelColumns;  // NC: columns per task; KC x NC in L2
constexpr int64_t kStripsPerRowBlock = 20;      // MC / MR: A block of MC x KC stays in L2

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

// How a computed tile reaches C: the call's alpha, beta and per-row bias, and whether it is the
// first depth block (which combines with beta * C or the bias; later blocks accumulate).
struct TileStore {
  float alpha = 1.0f;
  float beta = 0.0f;
  const float* row_bias = nullptr;  // indexed by C's row, or null
  bool first_block = true;
};

// Writes rows x cols of a computed tile (row stride tile_ld) into c at row row0. Not inlined
// into the SIMD kernels, so that its multiply and add stay separate on every path.
__attribute__((noinline)) void store_tile(const float* tile, int64_t tile_ld, int64_t rows,
                                          int64_t cols, int64_t row0, const TileStore& st,
                                          float* c, int64_t ldc) {
  for (int64_t i = 0; i < rows; ++i) {
    float* out = c + i * ldc;
    const float* t = tile + i * tile_ld;
    if (!st.first_block) {
      for (int64_t j = 0; j < cols; ++j) out[j] += st.alpha * t[j];
    } else if (st.row_bias != nullptr) {
      const float b = st.row_bias[row0 + i];
      for (int64_t j = 0; j < cols; ++j) out[j] = st.alpha * t[j] + b;
    } else if (st.beta == 0.0f) {
      for (int64_t j = 0; j < cols; ++j) out[j] = st.alpha * t[j];
    } else {
      for (int64_t j = 0; j < cols; ++j) out[j] = st.alpha * t[j] + st.beta * out[j];
    }
  }
}

// One micro-kernel call: kc depth steps of up to two A strips (a, a + a_next) and two B strips
// (b, b + b_next; depth row p of a strip at + p * b_ld, or at + b_rows[p] for B read in place),
// giving C rows [row0, row0 + rows) and columns [0, cols) at c.
struct TileJob {
  const int64_t* b_rows = nullptr;
  int64_t kc;
  const float* a;
  int64_t a_next;
  const float* b;
  int64_t b_next;
  int64_t b_ld;
  float* c;
  int64_t ldc;
  int64_t row0, rows, cols;
};

using MicroKernelFn = void (*)(const TileJob& job, const TileStore& st);

// A path's micro-kernels: fn[i][j] covers i + 1 A strips and j + 1 B strips (null when the
// path has no such shape). Every shape sums each element's products in depth order with one
// fused multiply-add per step where the path has FMA, so the shapes agree bit for bit.
struct MicroKernelSet {
  MicroKernelFn fn[2][2] = {};
  // B read in place (TileJob::b_rows); all null if the path has none.
  MicroKernelFn rows[2][2] = {};
};

// Four-float vectors through the GCC/Clang vector extension: NEON registers on aarch64 (the
// 6x16 tile's 24 accumulators fit its 32 registers), SSE on x86-64 without AVX2. Plain scalar
// loops were not kept in registers by GCC -O3.
typedef float Float4 __attribute__((vector_size(16)));
constexpr int64_t kVectorsPerStripRow = kStripCols / 4;

void micro_kernel_portable(const TileJob& job, const TileStore& st) {
  const float* __restrict a = job.a;
  const float* __restrict b = job.b;
  Float4 acc[kStripRows][kVectorsPerStripRow] = {};
  for (int64_t p = 0; p < job.kc; ++p) {
    Float4 bv[kVectorsPerStripRow];
    std::memcpy(bv, b + p * job.b_ld, sizeof bv);
    for (int64_t i = 0; i < kStripRows; ++i) {
      const float av = a[p * kStripRows + i];
      for (int64_t j = 0; j < kVectorsPerStripRow; ++j) acc[i][j] += av * bv[j];
    }
  }
  alignas(64) float tile[kStripRows * kStripCols];
  std::memcpy(tile, acc, sizeof acc);
  store_tile(tile, kStripCols, job.rows, job.cols, job.row0, st, job.c, job.ldc);
}

#if defined(__x86_64__)
static_assert(kStripRows == 6 && kStripCols == 16, "the x86 micro-kernels are written for 6x16");

__attribute__((target("avx2,fma"))) void micro_kernel_avx2_fma(const TileJob& job,
                                                               const TileStore& st) {
  const float* a = job.a;
  const float* b = job.b;
  __m256 c00 = _mm256_setzero_ps(), c01 = _mm256_setzero_ps();
  __m256 c10 = _mm256_setzero_ps(), c11 = _mm256_setzero_ps();
  __m256 c20 = _mm256_setzero_ps(), c21 = _mm256_setzero_ps();
  __m256 c30 = _mm256_setzero_ps(), c31 = _mm256_setzero_ps();
  __m256 c40 = _mm256_setzero_ps(), c41 = _mm256_setzero_ps();
  __m256 c50 = _mm256_setzero_ps(), c51 = _mm256_setzero_ps();
  for (int64_t p = 0; p < job.kc; ++p) {
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
    b += job.b_ld;
  }
  alignas(64) float tile[kStripRows * kStripCols];
  _mm256_store_ps(tile + 0, c00);
  _mm256_store_ps(tile + 8, c01);
  _mm256_store_ps(tile + 16, c10);
  _mm256_store_ps(tile + 24, c11);
  _mm256_store_ps(tile + 32, c20);
  _mm256_store_ps(tile + 40, c21);
  _mm256_store_ps(tile + 48, c30);
  _mm256_store_ps(tile + 56, c31);
  _mm256_store_ps(tile + 64, c40);
  _mm256_store_ps(tile + 72, c41);
  _mm256_store_ps(tile + 80, c50);
  _mm256_store_ps(tile + 88, c51);
  _mm256_zeroupper();  // store_tile is SSE code: GCC does not clear the upper state before a call
  store_tile(tile, kStripCols, job.rows, job.cols, job.row0, st, job.c, job.ldc);
}

// AVX-512: up to 12 x 32 (two A strips x two B strips, 24 accumulators). A whole tile with
// alpha 1 and beta 0 or 1 is written straight into C (acc, acc + bias, or C + acc: the same
// operations store_tile does when alpha is 1); anything else goes through store_tile.
template <int kA, int kB, bool kInPlace = false>
__attribute__((target("avx512f"))) void micro_kernel_avx512(const TileJob& job,
                                                            const TileStore& st) {
  constexpr int kRows = kA * static_cast<int>(kStripRows);
  __m512 acc[kRows][kB];
#pragma GCC unroll 12
  for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 2
    for (int j = 0; j < kB; ++j) acc[r][j] = _mm512_setzero_ps();
  }
  const float* a0 = job.a;
  const float* a1 = job.a + job.a_next;
  const float* b0 = job.b;
  const float* b1 = job.b + job.b_next;
  for (int64_t p = 0; p < job.kc; ++p) {
    __m512 bv[kB];
    const int64_t row = kInPlace ? job.b_rows[p] : p * job.b_ld;
    bv[0] = _mm512_loadu_ps(b0 + row);
    if constexpr (kB == 2) bv[1] = _mm512_loadu_ps(b1 + row);
#pragma GCC unroll 12
    for (int r = 0; r < kRows; ++r) {
      const float* ap = (r < kStripRows ? a0 : a1) + p * kStripRows + r % kStripRows;
      const __m512 av = _mm512_set1_ps(*ap);
#pragma GCC unroll 2
      for (int j = 0; j < kB; ++j) acc[r][j] = _mm512_fmadd_ps(av, bv[j], acc[r][j]);
    }
  }
  const bool whole = job.rows == kRows && job.cols == kB * kStripCols;
  const bool direct = st.alpha == 1.0f && (st.beta == 0.0f || st.beta == 1.0f || !st.first_block);
  if (whole && direct) {
    const bool add_c = !st.first_block || (st.row_bias == nullptr && st.beta == 1.0f);
#pragma GCC unroll 12
    for (int r = 0; r < kRows; ++r) {
      float* out = job.c + r * job.ldc;
      const __m512 bias = st.first_block && st.row_bias != nullptr
                              ? _mm512_set1_ps(st.row_bias[job.row0 + r])
                              : _mm512_setzero_ps();
#pragma GCC unroll 2
      for (int j = 0; j < kB; ++j) {
        __m512 v = acc[r][j];
        if (add_c) {
          v = _mm512_add_ps(_mm512_loadu_ps(out + j * kStripCols), v);
        } else if (st.row_bias != nullptr) {
          v = _mm512_add_ps(v, bias);
        }
        _mm512_storeu_ps(out + j * kStripCols, v);
      }
    }
    return;
  }
  alignas(64) float tile[kRows * kB * kStripCols];
#pragma GCC unroll 12
  for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 2
    for (int j = 0; j < kB; ++j) _mm512_store_ps(tile + (r * kB + j) * kStripCols, acc[r][j]);
  }
  _mm256_zeroupper();  // as in micro_kernel_avx2_fma
  store_tile(tile, kB * kStripCols, job.rows, job.cols, job.row0, st, job.c, job.ldc);
}
#endif

MicroKernelSet select_micro_kernels(GemmMicroKernel kind) {
  MicroKernelSet set;
#if defined(__x86_64__)
  if ((kind == GemmMicroKernel::kAvx512 || kind == GemmMicroKernel::kAuto) &&
      vector_path_available(VectorPath::kAvx512)) {
    set.fn[0][0] = &micro_kernel_avx512<1, 1>;
    set.fn[0][1] = &micro_kernel_avx512<1, 2>;
    set.fn[1][0] = &micro_kernel_avx512<2, 1>;
    set.fn[1][1] = &micro_kernel_avx512<2, 2>;
    set.rows[0][0] = &micro_kernel_avx512<1, 1, true>;
    set.rows[0][1] = &micro_kernel_avx512<1, 2, true>;
    set.rows[1][0] = &micro_kernel_avx512<2, 1, true>;
    set.rows[1][1] = &micro_kernel_avx512<2, 2, true>;
    return set;
  }
  if ((kind == GemmMicroKernel::kAvx2Fma || kind == GemmMicroKernel::kAuto) &&
      vector_path_available(VectorPath::kAvx2)) {
    set.fn[0][0] = &micro_kernel_avx2_fma;
    return set;
  }
#endif
  (void)kind;
  set.fn[0][0] = &micro_kernel_portable;
  return set;
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
    case GemmMicroKernel::kAvx2Fma: return vector_path_available(VectorPath::kAvx2);
    case GemmMicroKernel::kAvx512: return vector_path_available(VectorPath::kAvx512);
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

int64_t pack_gemm_panel(MatrixViewF32 b, int64_t k0, int64_t kc, int64_t n0, int64_t nc,
                        float* panel) {
  const int64_t strips = ceil_div(nc, kStripCols);
  for (int64_t j = 0; j < strips; ++j) {
    const int64_t cols = std::min(kStripCols, nc - j * kStripCols);
    const int64_t col0 = n0 + j * kStripCols;
    float* dst = panel + j * kc * kStripCols;
    for (int64_t p = 0; p < kc; ++p, dst += kStripCols) {
      const float* src = b.data + (k0 + p) * b.row_stride + col0 * b.col_stride;
      if (b.col_stride == 1 && cols == kStripCols) {
        std::memcpy(dst, src, kStripCols * sizeof(float));  // a fixed size: inline vector moves
      } else if (b.col_stride == 1) {
        std::memcpy(dst, src, static_cast<size_t>(cols) * sizeof(float));
      } else {
        for (int64_t q = 0; q < cols; ++q) dst[q] = src[q * b.col_stride];
      }
      for (int64_t q = cols; q < kStripCols; ++q) dst[q] = 0.0f;
    }
  }
  return kGemmPackedStrips;
}

namespace {

// In-place B rows copied into a row-stride panel (paths without in-place micro-kernels).
int64_t copy_rows(const GemmRowsB& b, int64_t k0, int64_t kc, int64_t n0, int64_t nc,
                  float* panel) {
  const int64_t ld = ceil_div(nc, kStripCols) * kStripCols;
  for (int64_t kk = 0; kk < kc; ++kk) {
    const float* src = b.base + b.row_offsets[k0 + kk] + n0;
    std::copy(src, src + nc, panel + kk * ld);
    std::fill(panel + kk * ld + nc, panel + (kk + 1) * ld, 0.0f);
  }
  return ld;
}

// Rows [strip_begin, strip_end) x columns [n0, n0 + nc) of one depth block of C, B's block
// packed in `panel`: tiles of two B strips by two A strips where the path has them.
// `in_place` (kernels.rows set): B's depth row k0 + p is read at in_place->base +
// row_offsets[k0 + p] + column instead of from the panel.
void multiply_block(const MicroKernelSet& kernels, const PackedGemmLhs& a, int64_t k0, int64_t kc,
                    const float* panel, int64_t panel_ld, const GemmRowsB* in_place, int64_t n0,
                    int64_t nc, int64_t strip_begin, int64_t strip_end, int64_t n,
                    const TileStore& st, float* c, int64_t ldc) {
  const int64_t m = a.rows();
  const int64_t col_strips = ceil_div(nc, kStripCols);
  const auto& fn = in_place != nullptr ? kernels.rows : kernels.fn;
  const bool wide = fn[0][1] != nullptr;
  const bool tall = fn[1][0] != nullptr;
  for (int64_t sb = strip_begin; sb < strip_end; sb += kStripsPerRowBlock) {
    const int64_t sb_end = std::min(strip_end, sb + kStripsPerRowBlock);
    for (int64_t j = 0; j < col_strips;) {
      const int64_t bj = wide && j + 1 < col_strips ? 2 : 1;
      const int64_t col0 = n0 + j * kStripCols;
      TileJob job{};
      job.kc = kc;
      if (in_place != nullptr) {
        job.b = in_place->base + col0;
        job.b_next = kStripCols;
        job.b_rows = in_place->row_offsets + k0;
      } else if (panel_ld == kGemmPackedStrips) {
        job.b = panel + j * kc * kStripCols;
        job.b_next = kc * kStripCols;
        job.b_ld = kStripCols;
      } else {
        job.b = panel + j * kStripCols;
        job.b_next = kStripCols;
        job.b_ld = panel_ld;
      }
      job.cols = std::min(bj * kStripCols, n - col0);
      job.ldc = ldc;
      for (int64_t s = sb; s < sb_end;) {
        const int64_t ai = tall && s + 1 < sb_end ? 2 : 1;
        job.a = a.strip(s, k0);
        job.a_next = a.strip(s + ai - 1, k0) - job.a;
        job.row0 = s * kStripRows;
        job.rows = std::min(ai * kStripRows, m - job.row0);
        job.c = c + job.row0 * ldc + col0;
        fn[ai - 1][bj - 1](job, st);
        s += ai;
      }
      j += bj;
    }
  }
}

}  // namespace

namespace {

// gemm_f32_packed and gemm_f32_rows: B from pack_b, or read in place (`in_place`) by the
// path's in-place micro-kernels, or copied row by row into panels where the path has none.
void gemm_driver(const PackedGemmLhs& a, int64_t n, const GemmPanelPacker* pack_b,
                 const GemmRowsB* in_place, float alpha, float beta, const float* row_bias,
                 float* c, int64_t ldc, ThreadPool* pool, GemmMicroKernel kind) {
  const int64_t m = a.rows();
  const int64_t k = a.depth();
  if (m <= 0 || n <= 0) return;
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        float& out = c[i * ldc + j];
        out = row_bias != nullptr ? row_bias[i] : beta == 0.0f ? 0.0f : beta * out;
      }
    }
    return;
  }
  const MicroKernelSet kernels = select_micro_kernels(kind);
  // Below about 2^22 multiply-adds (some 40 us) waking another thread costs more than it saves.
  if (m * n * k < (int64_t{1} << 22)) pool = nullptr;
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
    for (int64_t task = task_begin; task < task_end; ++task) {
      const int64_t n0 = (task / row_parts) * kColumnBlock;
      const int64_t nc = std::min(kColumnBlock, n - n0);
      const int64_t strip_begin = (task % row_parts) * strips_per_part;
      const int64_t strip_end = std::min(row_strips, strip_begin + strips_per_part);
      for (int64_t k0 = 0; k0 < k; k0 += kDepthBlock) {
        const int64_t kc = std::min(kDepthBlock, k - k0);
        const TileStore st{alpha, beta, row_bias, k0 == 0};
        // In place only over whole column strips: the rows need not be readable past n.
        if (in_place != nullptr && kernels.rows[0][0] != nullptr && nc % kStripCols == 0) {
          multiply_block(kernels, a, k0, kc, nullptr, 0, in_place, n0, nc, strip_begin, strip_end,
                         n, st, c, ldc);
          continue;
        }
        const int64_t panel_ld = pack_b != nullptr
                                     ? (*pack_b)(k0, kc, n0, nc, panel.data())
                                     : copy_rows(*in_place, k0, kc, n0, nc, panel.data());
        multiply_block(kernels, a, k0, kc, panel.data(), panel_ld, nullptr, n0, nc, strip_begin,
                       strip_end, n, st, c, ldc);
      }
    }
  });
}

}  // namespace

void gemm_f32_packed(const PackedGemmLhs& a, int64_t n, const GemmPanelPacker& pack_b, float alpha,
                     float beta, const float* row_bias, float* c, int64_t ldc, ThreadPool* pool,
                     GemmMicroKernel kind) {
  gemm_driver(a, n, &pack_b, nullptr, alpha, beta, row_bias, c, ldc, pool, kind);
}

void gemm_f32_rows(const PackedGemmLhs& a, int64_t n, const GemmRowsB& b, float alpha, float beta,
                   const float* row_bias, float* c, int64_t ldc, ThreadPool* pool,
                   GemmMicroKernel kind) {
  gemm_driver(a, n, nullptr, &b, alpha, beta, row_bias, c, ldc, pool, kind);
}

void gemm_f32(int64_t m, int64_t n, int64_t k, float alpha, MatrixViewF32 a, MatrixViewF32 b,
              float beta, float* c, int64_t ldc, ThreadPool* pool, GemmMicroKernel kind) {
  if (m <= 0 || n <= 0) return;
  const PackedGemmLhs packed(m, k, a);
  gemm_f32_packed(
      packed, n,
      [&b](int64_t k0, int64_t kc, int64_t n0, int64_t nc, float* panel) {
        return pack_gemm_panel(b, k0, kc, n0, nc, panel);
      },
      alpha, beta, nullptr, c, ldc, pool, kind);
}

}  // namespace openbpu::kernels
