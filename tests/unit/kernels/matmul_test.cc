#include <array>
#include <cmath>
#include <cstring>
#include <random>

#include "kernel_test_support.h"
#include "openbpu/kernels/gemm.h"

namespace openbpu::kernels::testing {
namespace {

TEST(MatMul, TwoByTwo) {
  auto y =
      run_op("MatMul", {}, {make<float>({2, 2}, {1, 2, 3, 4}), make<float>({2, 2}, {5, 6, 7, 8})});
  expect_near(y[0], {2, 2}, {19, 22, 43, 50});
}

TEST(MatMul, OneDimensionalOperandsAreDropped) {
  auto v =
      run_op("MatMul", {}, {make<float>({3}, {1, 2, 3}), make<float>({3, 2}, {1, 2, 3, 4, 5, 6})});
  expect_near(v[0], {2}, {22, 28});
  auto w =
      run_op("MatMul", {}, {make<float>({2, 3}, {1, 2, 3, 4, 5, 6}), make<float>({3}, {1, 0, 1})});
  expect_near(w[0], {2}, {4, 10});
  auto s = run_op("MatMul", {}, {make<float>({3}, {1, 2, 3}), make<float>({3}, {4, 5, 6})});
  expect_near(s[0], {}, {32});
}

TEST(MatMul, BatchDimensionsBroadcast) {
  // A: [2,1,2,2], B: [3,2,1] -> [2,3,2,1]
  std::vector<float> a{1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<float> b{1, 1, 1, -1, 2, 0};
  auto y = run_op("MatMul", {}, {make<float>({2, 1, 2, 2}, a), make<float>({3, 2, 1}, b)});
  std::vector<double> want;
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) {
      for (int r = 0; r < 2; ++r) {
        want.push_back(a[size_t(i * 4 + r * 2)] * b[size_t(j * 2)] +
                       a[size_t(i * 4 + r * 2 + 1)] * b[size_t(j * 2 + 1)]);
      }
    }
  }
  expect_near(y[0], {2, 3, 2, 1}, want);
}

TEST(MatMul, IntegersAndDoubles) {
  auto y = run_op("MatMul", {}, {make<int32_t>({1, 2}, {3, -4}), make<int32_t>({2, 1}, {5, 6})});
  EXPECT_EQ(y[0].to_int64_vector(), (std::vector<int64_t>{-9}));
  auto d = run_op("MatMul", {}, {make<double>({1, 2}, {0.5, 2}), make<double>({2, 1}, {4, 0.25})});
  expect_near(d[0], {1, 1}, {2.5});
}

TEST(MatMul, RejectsMismatchedInnerDimension) {
  EXPECT_THROW(run_op("MatMul", {},
                      {make<float>({2, 3}, std::vector<float>(6)),
                       make<float>({2, 2}, std::vector<float>(4))}),
               KernelError);
  EXPECT_THROW(run_op("MatMul", {},
                      {make<float>({2, 2}, std::vector<float>(4)),
                       make<int32_t>({2, 2}, std::vector<int32_t>(4))}),
               KernelError);
}

TEST(Gemm, AllAttributesWithBroadcastBias) {
  AttributeMap attrs;
  attrs.set("alpha", 0.5f);
  attrs.set("beta", 2.0f);
  attrs.set("transA", int64_t{1});
  attrs.set("transB", int64_t{1});
  // A^T: A is [K=2, M=3]; B^T: B is [N=2, K=2]; C: [N] broadcast over rows.
  auto y = run_op("Gemm", attrs,
                  {make<float>({2, 3}, {1, 2, 3, 4, 5, 6}), make<float>({2, 2}, {1, 0, 1, 1}),
                   make<float>({2}, {10, 20})});
  // op(A) = [[1,4],[2,5],[3,6]], op(B) = [[1,1],[0,1]] -> [[1,5],[2,7],[3,9]]
  expect_near(y[0], {3, 2}, {20.5, 42.5, 21, 43.5, 21.5, 44.5});
}

TEST(Gemm, OptionalCAndIntegers) {
  auto y = run_op("Gemm", {}, {make<float>({1, 2}, {1, 2}), make<float>({2, 1}, {3, 4})}, 1, 11);
  expect_near(y[0], {1, 1}, {11});
  auto i = run_op(
      "Gemm", {},
      {make<int64_t>({1, 2}, {1, 2}), make<int64_t>({2, 1}, {3, 4}), make<int64_t>({1, 1}, {5})});
  EXPECT_EQ(i[0].to_int64_vector(), (std::vector<int64_t>{16}));
  auto h = run_op(
      "Gemm", {},
      {make<double>({1, 2}, {1, 2}), make<double>({2, 1}, {3, 4}), make<double>({1}, {0.5})});
  expect_near(h[0], {1, 1}, {11.5});
}

TEST(Gemm, OldOpsetBroadcastAttributeIsAccepted) {
  AttributeMap attrs;
  attrs.set("broadcast", int64_t{1});
  attrs.set("transB", int64_t{1});
  auto y = run_op("Gemm", attrs,
                  {make<float>({1, 2}, {1, 2}), make<float>({1, 2}, {3, 4}), make<float>({1}, {1})},
                  1, 6);
  expect_near(y[0], {1, 1}, {12});
}

TEST(Gemm, RejectsBadShapes) {
  EXPECT_THROW(run_op("Gemm", {},
                      {make<float>({2, 3}, std::vector<float>(6)),
                       make<float>({2, 3}, std::vector<float>(6))}),
               KernelError);
  EXPECT_THROW(
      run_op("Gemm", {},
             {make<float>({2, 2}, std::vector<float>(4)),
              make<float>({2, 2}, std::vector<float>(4)), make<float>({3}, std::vector<float>(3))}),
      KernelError);
  EXPECT_THROW(
      run_op("Gemm", {},
             {make<float>({4}, std::vector<float>(4)), make<float>({2, 2}, std::vector<float>(4))}),
      KernelError);
}

TEST(MatMulInteger, OnnxExampleWithRowZeroPoint) {
  auto y = run_op("MatMulInteger", {},
                  {make<uint8_t>({4, 3}, {11, 7, 3, 10, 6, 2, 9, 5, 1, 8, 4, 0}),
                   make<uint8_t>({3, 2}, {1, 4, 2, 5, 3, 6}), make<uint8_t>({1}, {12}),
                   make<uint8_t>({1}, {0})});
  EXPECT_EQ(y[0].dtype(), DataType::kInt32);
  EXPECT_EQ(y[0].to_int64_vector(),
            (std::vector<int64_t>{-38, -83, -44, -98, -50, -113, -56, -128}));
}

TEST(MatMulInteger, PerRowAndPerColumnZeroPoints) {
  // A rows minus (1, 2); B columns minus (0, 1).
  auto y = run_op("MatMulInteger", {},
                  {make<int8_t>({2, 2}, {1, 2, 3, 4}), make<int8_t>({2, 2}, {1, 2, 3, 4}),
                   make<int8_t>({2}, {1, 2}), make<int8_t>({2}, {0, 1})});
  // A' = [[0,1],[1,2]], B' = [[1,1],[3,3]] -> [[3,3],[7,7]]
  EXPECT_EQ(y[0].to_int64_vector(), (std::vector<int64_t>{3, 3, 7, 7}));
  EXPECT_THROW(run_op("MatMulInteger", {},
                      {make<int8_t>({2, 2}, {1, 2, 3, 4}), make<int8_t>({2, 2}, {1, 2, 3, 4}),
                       make<int8_t>({3}, {1, 2, 3})}),
               KernelError);
}

// Rows of the result accumulated over B's rows (vector path) equal the definition, with a
// broadcast batch, per-row and per-column zero points and both 8-bit types.
TEST(MatMulInteger, RandomShapesEqualTheDefinition) {
  std::mt19937 rng(19);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  for (int t = 0; t < 8; ++t) {
    const bool a_signed = t % 2 == 0, b_signed = t % 4 < 2;
    const int64_t batch = pick(1, 3), m = pick(1, 9), k = pick(1, 70), n = pick(1, 40);
    auto value = [&](bool is_signed) { return is_signed ? pick(-128, 127) : pick(0, 255); };
    std::vector<int64_t> av(static_cast<size_t>(batch * m * k)), bv(static_cast<size_t>(k * n)),
        az(static_cast<size_t>(m)), bz(static_cast<size_t>(n));
    for (auto& v : av) v = value(a_signed);
    for (auto& v : bv) v = value(b_signed);
    for (auto& v : az) v = value(a_signed);
    for (auto& v : bz) v = value(b_signed);
    const std::vector<Tensor> y =
        run_op("MatMulInteger", {},
               {byte_tensor(a_signed, {batch, m, k}, av), byte_tensor(b_signed, {k, n}, bv),
                byte_tensor(a_signed, {m}, az), byte_tensor(b_signed, {n}, bz)});
    const std::vector<int64_t> got = y[0].to_int64_vector();
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          int64_t sum = 0;
          for (int64_t p = 0; p < k; ++p) {
            sum += (av[size_t((b * m + i) * k + p)] - az[size_t(i)]) *
                   (bv[size_t(p * n + j)] - bz[size_t(j)]);
          }
          ASSERT_EQ(got[size_t((b * m + i) * n + j)], sum) << "case " << t;
        }
      }
    }
  }
}

TEST(QLinearMatMul, OnnxExample2D) {
  auto y = run_op("QLinearMatMul", {},
                  {make<uint8_t>({2, 4}, {208, 236, 0, 238, 3, 214, 255, 29}),
                   make<float>({1}, {0.0066f}), make<uint8_t>({1}, {113}),
                   make<uint8_t>({4, 3}, {152, 51, 244, 60, 26, 255, 0, 127, 246, 127, 254, 247}),
                   make<float>({1}, {0.00705f}), make<uint8_t>({1}, {114}),
                   make<float>({1}, {0.0107f}), make<uint8_t>({1}, {118})});
  EXPECT_EQ(y[0].dtype(), DataType::kUint8);
  EXPECT_EQ(y[0].to_int64_vector(), (std::vector<int64_t>{168, 115, 255, 1, 66, 151}));
}

TEST(QLinearMatMul, RejectsMismatchedZeroPointType) {
  EXPECT_THROW(run_op("QLinearMatMul", {},
                      {make<uint8_t>({1, 1}, {1}), make<float>({1}, {1.f}), make<int8_t>({1}, {0}),
                       make<uint8_t>({1, 1}, {1}), make<float>({1}, {1.f}), make<uint8_t>({1}, {0}),
                       make<float>({1}, {1.f}), make<uint8_t>({1}, {0})}),
               KernelError);
}

// --- optimized GEMM against the reference --------------------------------------------------

std::vector<float> random_floats(std::mt19937& rng, int64_t count) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(count));
  for (auto& x : v) x = dist(rng);
  return v;
}

struct GemmCase {
  int64_t m, n, k;
  bool trans_a, trans_b;
  float alpha, beta;
};

void check_gemm_case(const GemmCase& c, uint32_t seed, GemmMicroKernel kind, ThreadPool* pool) {
  std::mt19937 rng(seed);
  const auto a = random_floats(rng, c.m * c.k);
  const auto b = random_floats(rng, c.k * c.n);
  const auto c0 = random_floats(rng, c.m * c.n);
  MatrixViewF32 va = c.trans_a ? MatrixViewF32::row_major(a.data(), c.m).transposed()
                               : MatrixViewF32::row_major(a.data(), c.k);
  MatrixViewF32 vb = c.trans_b ? MatrixViewF32::row_major(b.data(), c.k).transposed()
                               : MatrixViewF32::row_major(b.data(), c.n);
  std::vector<float> want = c0, got = c0;
  gemm_f32_reference(c.m, c.n, c.k, c.alpha, va, vb, c.beta, want.data(), c.n);
  gemm_f32(c.m, c.n, c.k, c.alpha, va, vb, c.beta, got.data(), c.n, pool, kind);
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t j = 0; j < c.n; ++j) {
      double magnitude = std::abs(c.beta * c0[size_t(i * c.n + j)]);
      for (int64_t p = 0; p < c.k; ++p) magnitude += std::abs(c.alpha * va.at(i, p) * vb.at(p, j));
      const double tol = 1e-6 * magnitude + 1e-6;
      ASSERT_NEAR(got[size_t(i * c.n + j)], want[size_t(i * c.n + j)], tol)
          << "seed " << seed << " m=" << c.m << " n=" << c.n << " k=" << c.k
          << " transA=" << c.trans_a << " transB=" << c.trans_b << " at (" << i << "," << j << ")";
    }
  }
}

TEST(GemmF32, OptimizedMatchesReferenceAroundBlockEdges) {
  ThreadPool pool(3);
  const std::vector<int64_t> sizes{1, 5, 6, 7, 16, 17, 31};
  uint32_t seed = 1;
  for (auto kind :
       {GemmMicroKernel::kPortable, GemmMicroKernel::kAvx2Fma, GemmMicroKernel::kAvx512}) {
    if (!gemm_micro_kernel_available(kind)) continue;
    for (int64_t m : sizes) {
      for (int64_t n : sizes) {
        for (int64_t k : {int64_t{1}, int64_t{3}, int64_t{16}}) {
          check_gemm_case({m, n, k, (seed & 1) != 0, (seed & 2) != 0, 1.0f, 0.0f}, seed, kind,
                          seed % 3 == 0 ? &pool : nullptr);
          ++seed;
        }
      }
    }
    // Depth and column blocks (256) and row blocks (120) crossed.
    const std::vector<GemmCase> big{{121, 257, 255, false, false, 1.0f, 0.0f},
                                    {13, 513, 257, true, false, 0.5f, 1.0f},
                                    {126, 40, 600, false, true, 2.0f, -1.0f},
                                    {7, 300, 1, true, true, 1.0f, 0.5f},
                                    {250, 9, 70, false, false, 1.0f, 0.0f}};
    for (const auto& c : big) check_gemm_case(c, seed++, kind, &pool);
  }
}

// B packed in strips from a matrix view.
GemmPanelPacker strip_packer(MatrixViewF32 b) {
  return [b](int64_t k0, int64_t kc, int64_t n0, int64_t nc, float* panel) {
    return pack_gemm_panel(b, k0, kc, n0, nc, panel);
  };
}

// The AVX-512 tiles (up to 12x32) do the AVX2 path's fused multiply-adds in the same order:
// calibration thresholds must not depend on which of the two a machine has. Shapes cross the
// 12-row / 32-column tile edges, the depth block, and every store (alpha, beta, row bias).
TEST(GemmF32, Avx512AgreesWithAvx2BitForBit) {
  if (!gemm_micro_kernel_available(GemmMicroKernel::kAvx512) ||
      !gemm_micro_kernel_available(GemmMicroKernel::kAvx2Fma)) {
    GTEST_SKIP() << "needs a CPU with AVX-512F";
  }
  std::mt19937 rng(5);
  ThreadPool pool(2);
  struct Case {
    int64_t m, n, k;
    float alpha, beta;
    bool bias;
  };
  const std::vector<Case> cases{{1, 1, 1, 1.0f, 0.0f, false},   {12, 32, 7, 1.0f, 0.0f, true},
                                {13, 33, 300, 1.0f, 1.0f, false}, {25, 65, 257, 1.0f, 0.0f, true},
                                {6, 48, 5, 0.5f, -1.0f, false},  {30, 100, 40, 2.0f, 0.0f, true},
                                {18, 16, 520, 1.0f, 0.25f, false}};
  for (const Case& t : cases) {
    const auto a = random_floats(rng, t.m * t.k);
    const auto b = random_floats(rng, t.k * t.n);
    const auto c0 = random_floats(rng, t.m * t.n);
    const auto bias = random_floats(rng, t.m);
    const PackedGemmLhs packed(t.m, t.k, MatrixViewF32::row_major(a.data(), t.k));
    const GemmPanelPacker packer = strip_packer(MatrixViewF32::row_major(b.data(), t.n));
    const float beta = t.bias ? 0.0f : t.beta;
    const float* row_bias = t.bias ? bias.data() : nullptr;
    std::vector<float> avx2 = c0, avx512 = c0;
    gemm_f32_packed(packed, t.n, packer, t.alpha, beta, row_bias, avx2.data(), t.n, nullptr,
                    GemmMicroKernel::kAvx2Fma);
    gemm_f32_packed(packed, t.n, packer, t.alpha, beta, row_bias, avx512.data(), t.n, &pool,
                    GemmMicroKernel::kAvx512);
    EXPECT_EQ(0, std::memcmp(avx2.data(), avx512.data(), avx2.size() * sizeof(float)))
        << "m=" << t.m << " n=" << t.n << " k=" << t.k << " alpha=" << t.alpha
        << " beta=" << beta << " bias=" << t.bias;
  }
}

// A row bias gives the value of a C filled with the bias and beta = 1, to the bit.
TEST(GemmF32, RowBiasEqualsBiasFilledOutput) {
  std::mt19937 rng(9);
  const int64_t m = 19, n = 70, k = 300;
  const auto a = random_floats(rng, m * k);
  const auto b = random_floats(rng, k * n);
  const auto bias = random_floats(rng, m);
  const PackedGemmLhs packed(m, k, MatrixViewF32::row_major(a.data(), k));
  const GemmPanelPacker packer = strip_packer(MatrixViewF32::row_major(b.data(), n));
  for (auto kind :
       {GemmMicroKernel::kPortable, GemmMicroKernel::kAvx2Fma, GemmMicroKernel::kAvx512}) {
    if (!gemm_micro_kernel_available(kind)) continue;
    std::vector<float> filled(size_t(m * n)), fused(size_t(m * n), std::nanf(""));
    for (int64_t i = 0; i < m; ++i) {
      std::fill(filled.begin() + i * n, filled.begin() + (i + 1) * n, bias[size_t(i)]);
    }
    gemm_f32_packed(packed, n, packer, 1.0f, 1.0f, nullptr, filled.data(), n, nullptr, kind);
    gemm_f32_packed(packed, n, packer, 1.0f, 0.0f, bias.data(), fused.data(), n, nullptr, kind);
    EXPECT_EQ(0, std::memcmp(filled.data(), fused.data(), filled.size() * sizeof(float)))
        << "kind " << static_cast<int>(kind);
  }
}

// A packer may hand B's block over row-major (as the convolution's im2col does) instead of in
// strips: the same products in the same order.
TEST(GemmF32, RowMajorPanelEqualsPackedStrips) {
  std::mt19937 rng(13);
  const int64_t m = 25, n = 300, k = 270;
  const auto a = random_floats(rng, m * k);
  const auto b = random_floats(rng, k * n);
  const PackedGemmLhs packed(m, k, MatrixViewF32::row_major(a.data(), k));
  const MatrixViewF32 vb = MatrixViewF32::row_major(b.data(), n);
  const GemmPanelPacker strips = strip_packer(vb);
  const auto rows = [&](int64_t k0, int64_t kc, int64_t n0, int64_t nc, float* panel) {
    const int64_t ld = kGemmPanelColumns;  // wider than nc in the last column block
    for (int64_t kk = 0; kk < kc; ++kk) {
      for (int64_t j = 0; j < ld; ++j) panel[kk * ld + j] = j < nc ? vb.at(k0 + kk, n0 + j) : 0.0f;
    }
    return ld;
  };
  for (auto kind :
       {GemmMicroKernel::kPortable, GemmMicroKernel::kAvx2Fma, GemmMicroKernel::kAvx512}) {
    if (!gemm_micro_kernel_available(kind)) continue;
    std::vector<float> want(size_t(m * n)), got(size_t(m * n));
    gemm_f32_packed(packed, n, strips, 1.0f, 0.0f, nullptr, want.data(), n, nullptr, kind);
    gemm_f32_packed(packed, n, rows, 1.0f, 0.0f, nullptr, got.data(), n, nullptr, kind);
    EXPECT_EQ(0, std::memcmp(want.data(), got.data(), want.size() * sizeof(float)))
        << "kind " << static_cast<int>(kind);
  }
}

// B read in place through row offsets (the stride-1 convolution's shifted rows) gives the
// bits of the same rows packed, on every path: in-place micro-kernels (AVX-512) or rows
// copied into panels; with a last partial column strip, two depth blocks, partial row strips,
// rows that overlap and run backwards, and threads.
TEST(GemmF32, InPlaceRowsEqualPackedRows) {
  std::mt19937 rng(17);
  ThreadPool pool(2);
  for (const auto& [m, n, k] : {std::array<int64_t, 3>{25, 300, 270}, {13, 512, 9}, {7, 33, 300}}) {
    const auto a = random_floats(rng, m * k);
    const auto store = random_floats(rng, n + 3 * k);
    std::vector<int64_t> offsets(static_cast<size_t>(k));
    for (int64_t p = 0; p < k; ++p) offsets[size_t(p)] = (p * 7) % (3 * k);  // overlapping rows
    const auto bias = random_floats(rng, m);
    const PackedGemmLhs packed(m, k, MatrixViewF32::row_major(a.data(), k));
    const auto rows = [&](int64_t k0, int64_t kc, int64_t n0, int64_t nc, float* panel) {
      const int64_t ld = (nc + kGemmStripCols - 1) / kGemmStripCols * kGemmStripCols;
      for (int64_t kk = 0; kk < kc; ++kk) {
        for (int64_t j = 0; j < ld; ++j) {
          panel[kk * ld + j] = j < nc ? store[size_t(offsets[size_t(k0 + kk)] + n0 + j)] : 0.0f;
        }
      }
      return ld;
    };
    for (auto kind :
         {GemmMicroKernel::kPortable, GemmMicroKernel::kAvx2Fma, GemmMicroKernel::kAvx512}) {
      if (!gemm_micro_kernel_available(kind)) continue;
      std::vector<float> want(size_t(m * n)), got(size_t(m * n), std::nanf(""));
      gemm_f32_packed(packed, n, rows, 1.0f, 0.0f, bias.data(), want.data(), n, nullptr, kind);
      gemm_f32_rows(packed, n, GemmRowsB{store.data(), offsets.data()}, 1.0f, 0.0f, bias.data(),
                    got.data(), n, &pool, kind);
      EXPECT_EQ(0, std::memcmp(want.data(), got.data(), want.size() * sizeof(float)))
          << "kind " << static_cast<int>(kind) << " m=" << m << " n=" << n << " k=" << k;
    }
  }
}

TEST(GemmF32, ResultDoesNotDependOnThreadCount) {
  std::mt19937 rng(7);
  const int64_t m = 100, n = 700, k = 300;
  const auto a = random_floats(rng, m * k);
  const auto b = random_floats(rng, k * n);
  std::vector<float> one(size_t(m * n)), three(size_t(m * n));
  ThreadPool pool(3);
  gemm_f32(m, n, k, 1.0f, MatrixViewF32::row_major(a.data(), k),
           MatrixViewF32::row_major(b.data(), n), 0.0f, one.data(), n, nullptr);
  gemm_f32(m, n, k, 1.0f, MatrixViewF32::row_major(a.data(), k),
           MatrixViewF32::row_major(b.data(), n), 0.0f, three.data(), n, &pool);
  EXPECT_EQ(one, three);
}

TEST(MatMul, Float32KernelMatchesReferenceWithPool) {
  std::mt19937 rng(11);
  const auto a = random_floats(rng, 3 * 20 * 30);
  const auto b = random_floats(rng, 30 * 17);
  ThreadPool pool(2);
  auto y =
      run_op("MatMul", {}, {make<float>({3, 20, 30}, a), make<float>({30, 17}, b)}, 1, 13, &pool);
  std::vector<float> want(3 * 20 * 17);
  for (int64_t i = 0; i < 3; ++i) {
    gemm_f32_reference(20, 17, 30, 1.0f, MatrixViewF32::row_major(a.data() + i * 600, 30),
                       MatrixViewF32::row_major(b.data(), 17), 0.0f, want.data() + i * 340, 17);
  }
  std::vector<double> wd(want.begin(), want.end());
  expect_near(y[0], {3, 20, 17}, wd, 1e-5);
}

}  // namespace
}  // namespace openbpu::kernels::testing

namespace openbpu::kernels::testing {
namespace {

TEST(MatMul, HalfAndBFloat16) {
  Tensor a(DataType::kFloat16, {1, 2}), b(DataType::kFloat16, {2, 1});
  a.data<Float16>()[0] = Float16(1.5f);
  a.data<Float16>()[1] = Float16(2.0f);
  b.data<Float16>()[0] = Float16(2.0f);
  b.data<Float16>()[1] = Float16(-0.25f);
  expect_near(run_op("MatMul", {}, {a, b})[0], {1, 1}, {2.5});
  Tensor c(DataType::kBFloat16, {1, 1}), d(DataType::kBFloat16, {1, 1});
  c.data<BFloat16>()[0] = BFloat16(3.0f);
  d.data<BFloat16>()[0] = BFloat16(0.5f);
  expect_near(run_op("Gemm", {}, {c, d})[0], {1, 1}, {1.5});
}

}  // namespace
}  // namespace openbpu::kernels::testing
