// Exact integer matrix multiplication for the quantized (horizon-domain) convolutions:
// C (m x n) = A (m x k, int8 weights) * B (k x n, int8 or int16 activations), every sum exact.
//
// Operands are widened to int16 and packed in pairs of depth rows, so that one multiply-add
// instruction (x86 pmaddwd / vpdpwssd) forms w[2p]·b[2p] + w[2p+1]·b[2p+1] for 8 or 16 columns at
// once. Sums are accumulated in int32 over depth blocks short enough never to overflow (the
// block length follows from the largest |B| the caller declares) and widened to int64 between
// blocks, so the result is the exact integer sum whatever the depth. Each tile of C is computed
// by one task and handed to an epilogue (requantization, bias, residual, clamp, store), so the
// results do not depend on the number of threads.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "openbpu/kernels/thread_pool.h"

namespace openbpu::kernels {

// Rows of A and columns of B per micro-tile.
inline constexpr int64_t kIntGemmStripRows = 6;
inline constexpr int64_t kIntGemmStripCols = 16;

// Which micro-kernel runs. kAuto picks the fastest one the CPU supports.
enum class IntGemmMicroKernel { kAuto, kPortable, kAvx2, kAvxVnni };
bool int_gemm_micro_kernel_available(IntGemmMicroKernel kind);

// A (m x k int8, row r at a + r * lda) packed once: strips of kIntGemmStripRows rows; strip s,
// depth pair p holds for each row i the two values (a[r][2p], a[r][2p+1]) as int16 (rows past m
// and depth past k are 0).
class PackedIntGemmLhs {
 public:
  PackedIntGemmLhs(int64_t m, int64_t k, const int8_t* a, int64_t lda);
  int64_t rows() const { return rows_; }
  int64_t depth() const { return depth_; }
  int64_t pairs() const { return (depth_ + 1) / 2; }
  // Strip s from depth pair p0 on.
  const int16_t* strip(int64_t s, int64_t p0) const {
    return data_.data() + (s * pairs() + p0) * kIntGemmStripRows * 2;
  }

 private:
  int64_t rows_;
  int64_t depth_;
  std::vector<int16_t> data_;
};

// Writes columns [n0, n0 + nc) of all depth pairs of B into `panel`: ceil(nc / 16) strips of
// pairs() x 16 x 2 int16 values, panel[((j * pairs + p) * 16 + col) * 2 + h] = B[2p + h][n0 +
// 16 j + col]. Depth rows >= k and columns >= nc must be written as 0. Called concurrently from
// several threads for different panels.
using IntGemmPanelPacker =
    std::function<void(int64_t n0, int64_t nc, int64_t pairs, int16_t* panel)>;

// The exact sums of rows [row0, row0 + rows) x columns [col0, col0 + cols) of C, element (r, c)
// at [r * kIntGemmStripCols + c] of `narrow` (int32, when the whole depth is one block) or of
// `wide` (int64, otherwise); the other pointer is null.
struct IntGemmTile {
  int64_t row0 = 0, rows = 0, col0 = 0, cols = 0;
  const int32_t* narrow = nullptr;
  const int64_t* wide = nullptr;
};

// Receives each tile of C once. Called concurrently for disjoint tiles.
using IntGemmEpilogue = std::function<void(const IntGemmTile& tile)>;

// Depth pairs whose sum of products fits int32 when |A| <= 128 and |B| <= max_abs_b.
int64_t int_gemm_pairs_per_block(int64_t max_abs_b);

// C = A * B for B (a.depth() x n) produced by pack_b, with |B| <= max_abs_b (128 for int8,
// 32768 for int16 data), handed to `epilogue` tile by tile. Parallel on `pool` (may be null).
void int_gemm_packed(const PackedIntGemmLhs& a, int64_t n, int64_t max_abs_b,
                     const IntGemmPanelPacker& pack_b, const IntGemmEpilogue& epilogue,
                     ThreadPool* pool, IntGemmMicroKernel kind = IntGemmMicroKernel::kAuto);

}  // namespace openbpu::kernels
