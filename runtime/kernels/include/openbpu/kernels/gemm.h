// Single-precision matrix multiplication used by Conv, ConvTranspose, MatMul and Gemm.
//
// Two implementations of  C = alpha * A * B + beta * C :
//  - gemm_f32_reference: the naive triple loop, the oracle the optimized path is tested against;
//  - gemm_f32: cache-blocked and packed (A in row strips of kGemmStripRows, B in column strips
//    of kGemmStripCols), register-tiled micro-kernels chosen at run time (AVX-512: tiles of up
//    to 12x32; AVX2+FMA: 6x16; plain vectorizable C++ elsewhere) and parallel over output tiles.
//
// Every output element is computed by one task, with the depth (k) summed in a fixed order of
// blocks, so the result does not depend on the number of threads; the AVX-512 and AVX2+FMA
// paths do the same fused multiply-adds in the same order, so they agree bit for bit.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "openbpu/kernels/thread_pool.h"

namespace openbpu::kernels {

// Read-only float matrix: element (r, c) is data[r * row_stride + c * col_stride]. A transposed
// operand is the same storage with the strides swapped.
struct MatrixViewF32 {
  const float* data = nullptr;
  int64_t row_stride = 0;
  int64_t col_stride = 1;

  static MatrixViewF32 row_major(const float* data, int64_t cols) { return {data, cols, 1}; }
  MatrixViewF32 transposed() const { return {data, col_stride, row_stride}; }
  float at(int64_t r, int64_t c) const { return data[r * row_stride + c * col_stride]; }
};

// c (m x n, row-major with leading dimension ldc) = alpha * a (m x k) * b (k x n) + beta * c.
// With beta == 0 the old contents of c are not read (they may be uninitialised or NaN).
void gemm_f32_reference(int64_t m, int64_t n, int64_t k, float alpha, MatrixViewF32 a,
                        MatrixViewF32 b, float beta, float* c, int64_t ldc);

// Which micro-kernel the optimized path uses. kAuto picks the best one the CPU supports.
enum class GemmMicroKernel { kAuto, kPortable, kAvx2Fma, kAvx512 };
bool gemm_micro_kernel_available(GemmMicroKernel kind);

// Same contract as gemm_f32_reference; parallel on `pool` (may be null).
void gemm_f32(int64_t m, int64_t n, int64_t k, float alpha, MatrixViewF32 a, MatrixViewF32 b,
              float beta, float* c, int64_t ldc, ThreadPool* pool,
              GemmMicroKernel kind = GemmMicroKernel::kAuto);

// Rows of A per micro-tile and columns of B per micro-tile.
inline constexpr int64_t kGemmStripRows = 6;
inline constexpr int64_t kGemmStripCols = 16;

// The left operand packed once for several products (e.g. convolution weights): strips of
// kGemmStripRows rows, each stored depth-major (k, then row); rows past m are zero.
class PackedGemmLhs {
 public:
  PackedGemmLhs(int64_t m, int64_t k, MatrixViewF32 a);
  int64_t rows() const { return rows_; }
  int64_t depth() const { return depth_; }
  // Strip s (rows [s * kGemmStripRows, ...)), starting at depth k0.
  const float* strip(int64_t s, int64_t k0) const {
    return data_.data() + (s * depth_ + k0) * kGemmStripRows;
  }

 private:
  int64_t rows_;
  int64_t depth_;
  std::vector<float> data_;
};

// Produces rows [k0, k0 + kc) and columns [n0, n0 + nc) of the right operand B into `panel`
// (room for kc x kGemmPanelColumns floats) and returns its layout:
//  - kGemmPackedStrips: ceil(nc / kGemmStripCols) column strips; strip j holds kc rows of
//    kGemmStripCols floats (panel[(j * kc + kk) * kGemmStripCols + col]);
//  - a row stride ld >= nc rounded up to kGemmStripCols: row kk at panel + kk * ld.
// Either way, columns past nc up to the next multiple of kGemmStripCols must be written as 0.
using GemmPanelPacker =
    std::function<int64_t(int64_t k0, int64_t kc, int64_t n0, int64_t nc, float* panel)>;
inline constexpr int64_t kGemmPackedStrips = 0;
inline constexpr int64_t kGemmPanelColumns = 256;  // nc never exceeds it

// The packer for a B stored as a matrix view (packed strips).
int64_t pack_gemm_panel(MatrixViewF32 b, int64_t k0, int64_t kc, int64_t n0, int64_t nc,
                        float* panel);

// c (a.rows() x n) = alpha * a * B + beta * c, B (a.depth() x n) produced by pack_b. pack_b may
// be called concurrently from several threads (for disjoint or overlapping blocks). With a
// row_bias (a.rows() floats; then beta must be 0), c = alpha * a * B + row_bias[row], the
// same value as a c filled with the bias and beta = 1, without the extra pass over c.
void gemm_f32_packed(const PackedGemmLhs& a, int64_t n, const GemmPanelPacker& pack_b, float alpha,
                     float beta, const float* row_bias, float* c, int64_t ldc, ThreadPool* pool,
                     GemmMicroKernel kind = GemmMicroKernel::kAuto);

// B (a.depth() x n) read in place: row p at base + row_offsets[p], column j at + j (e.g. a
// padded input seen through im2col's shifts). The result is
// gemm_f32_packed's with a packer copying those rows, bit for bit; the AVX-512 path reads the
// rows without copying them (except in a last partial column strip).
struct GemmRowsB {
  const float* base = nullptr;
  const int64_t* row_offsets = nullptr;
};
void gemm_f32_rows(const PackedGemmLhs& a, int64_t n, const GemmRowsB& b, float alpha, float beta,
                   const float* row_bias, float* c, int64_t ldc, ThreadPool* pool,
                   GemmMicroKernel kind = GemmMicroKernel::kAuto);

}  // namespace openbpu::kernels
