// Einsum and Det. Einsum results are checked against explicit loops; Det against hand values
// and the ONNX test data (test_det_2d, test_det_nd).
#include <optional>
#include <string>
#include <vector>

#include "kernel_test_support.h"

namespace openbpu::kernels::testing {
namespace {

AttributeMap equation(const std::string& eq) {
  AttributeMap attrs;
  attrs.set("equation", eq);
  return attrs;
}

Tensor counting(Shape shape, float scale = 1.0f) {
  Tensor t(DataType::kFloat32, std::move(shape));
  for (int64_t i = 0; i < t.element_count(); ++i) {
    t.data<float>()[i] = scale * float((i * 7) % 5) - 1.0f;
  }
  return t;
}

std::vector<double> values(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.element_count(); ++i) v.push_back(t.float_at(i));
  return v;
}

TEST(Einsum, TransposeSumAndInnerProduct) {
  const auto a = make<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  expect_near(run_op("Einsum", equation("ij->ji"), {a})[0], {3, 2}, {1, 4, 2, 5, 3, 6});
  expect_near(run_op("Einsum", equation("ij->i"), {a})[0], {2}, {6, 15});
  expect_near(run_op("Einsum", equation("ij->"), {a})[0], {}, {21});
  // Implicit output: labels used once, alphabetically → "ba" becomes a transpose.
  expect_near(run_op("Einsum", equation("ba"), {a})[0], {3, 2}, {1, 4, 2, 5, 3, 6});
  const auto v = make<float>({3}, {1, 2, 3});
  expect_near(run_op("Einsum", equation("i,i"), {v, v})[0], {}, {14});
  expect_near(run_op("Einsum", equation("i, j -> i j"), {v, v})[0], {3, 3},
              {1, 2, 3, 2, 4, 6, 3, 6, 9});
}

TEST(Einsum, TraceAndDiagonal) {
  const auto m = make<float>({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  expect_near(run_op("Einsum", equation("ii"), {m})[0], {}, {15});
  expect_near(run_op("Einsum", equation("ii->i"), {m})[0], {3}, {1, 5, 9});
  // test_einsum_batch_diagonal shape: [3, 5, 5] → [3, 5].
  const auto batch = counting({3, 5, 5});
  auto y = run_op("Einsum", equation("...ii ->...i"), {batch});
  ASSERT_EQ(y[0].shape(), (Shape{3, 5}));
  for (int64_t b = 0; b < 3; ++b) {
    for (int64_t i = 0; i < 5; ++i) {
      EXPECT_EQ(y[0].float_at(b * 5 + i), batch.float_at(b * 25 + i * 6));
    }
  }
}

TEST(Einsum, BatchMatmulAndChains) {
  const auto a = counting({2, 3, 4});
  const auto b = counting({2, 4, 5}, 0.5f);
  auto y = run_op("Einsum", equation("bij,bjk->bik"), {a, b});
  std::vector<double> want;
  for (int64_t n = 0; n < 2; ++n) {
    for (int64_t i = 0; i < 3; ++i) {
      for (int64_t k = 0; k < 5; ++k) {
        double s = 0;
        for (int64_t j = 0; j < 4; ++j)
          s += a.float_at(n * 12 + i * 4 + j) * b.float_at(n * 20 + j * 5 + k);
        want.push_back(s);
      }
    }
  }
  expect_near(y[0], {2, 3, 5}, want);
  // Three operands: (A B) C with A [2,3], B [3,4], C [4,2]; and the reversed output order.
  const auto p = counting({2, 3}), q = counting({3, 4}, 2.0f), r = counting({4, 2}, 0.5f);
  auto chain = run_op("Einsum", equation("ij,jk,kl->li"), {p, q, r});
  std::vector<double> expect_chain(4, 0.0);
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t l = 0; l < 2; ++l) {
      double s = 0;
      for (int64_t j = 0; j < 3; ++j) {
        for (int64_t k = 0; k < 4; ++k) {
          s += p.float_at(i * 3 + j) * q.float_at(j * 4 + k) * r.float_at(k * 2 + l);
        }
      }
      expect_chain[size_t(l * 2 + i)] = s;
    }
  }
  expect_near(chain[0], {2, 2}, expect_chain, 1e-4);
}

TEST(Einsum, EllipsisBroadcastsBatchDimensions) {
  const auto a = counting({2, 1, 2, 3});  // batch [2, 1]
  const auto b = counting({3, 3, 2});     // batch [3]
  auto y = run_op("Einsum", equation("...ij,...jk->...ik"), {a, b});
  ASSERT_EQ(y[0].shape(), (Shape{2, 3, 2, 2}));
  for (int64_t p = 0; p < 2; ++p) {
    for (int64_t q = 0; q < 3; ++q) {
      for (int64_t i = 0; i < 2; ++i) {
        for (int64_t k = 0; k < 2; ++k) {
          double s = 0;
          for (int64_t j = 0; j < 3; ++j)
            s += a.float_at(p * 6 + i * 3 + j) * b.float_at(q * 6 + j * 2 + k);
          EXPECT_NEAR(y[0].float_at(((p * 3 + q) * 2 + i) * 2 + k), s, 1e-5);
        }
      }
    }
  }
}

TEST(Einsum, IntegersAndMixedDiagonalContraction) {
  // "iij,j->i": diagonal of the first two axes, then contraction with the vector.
  const auto a = make<int32_t>({2, 2, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  const auto v = make<int32_t>({3}, {1, 0, 2});
  auto y = run_op("Einsum", equation("iij,j->i"), {a, v});
  EXPECT_EQ(y[0].dtype(), DataType::kInt32);
  EXPECT_EQ(y[0].to_int64_vector(), (std::vector<int64_t>{1 + 6, 10 + 24}));
}

TEST(Einsum, RejectsBadEquations) {
  const auto a = make<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_THROW(run_op("Einsum", equation("ij,jk->ik"), {a}), KernelError);  // term count
  EXPECT_THROW(run_op("Einsum", equation("ijk->i"), {a}), KernelError);     // rank
  EXPECT_THROW(run_op("Einsum", equation("ij,ij->i"), {a, make<float>({3, 2}, {1, 2, 3, 4, 5, 6})}),
               KernelError);                                               // sizes
  EXPECT_THROW(run_op("Einsum", equation("i1->i"), {a}), KernelError);     // character
  EXPECT_THROW(run_op("Einsum", equation("ij->k"), {a}), KernelError);     // unknown label
  EXPECT_THROW(run_op("Einsum", equation("ij->ii"), {a}), KernelError);    // repeated label
  EXPECT_THROW(run_op("Einsum", equation("..ij->ij"), {a}), KernelError);  // ellipsis
  EXPECT_THROW(run_op("Einsum", {}, {a}), KernelError);
  EXPECT_THROW(run_op("Einsum", equation("ii->i"), {a}),
               KernelError);  // non-square diagonal                    // no equation
}

TEST(Det, SmallMatricesAndBatches) {
  expect_near(run_op("Det", {}, {make<float>({2, 2}, {0, 1, 2, 3})})[0], {}, {-2});  // test_det_2d
  // test_det_nd
  expect_near(run_op("Det", {}, {make<float>({3, 2, 2}, {1, 2, 3, 4, 1, 2, 2, 1, 1, 3, 3, 1})})[0],
              {3}, {-2, -3, -8});
  // Needs pivoting: a permutation matrix; singular → 0.
  expect_near(run_op("Det", {}, {make<float>({3, 3}, {0, 1, 0, 1, 0, 0, 0, 0, 1})})[0], {}, {-1});
  expect_near(run_op("Det", {}, {make<double>({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9})})[0], {}, {0},
              1e-9);
  expect_near(run_op("Det", {}, {make<double>({3, 3}, {2, -3, 1, 2, 0, -1, 1, 4, 5})})[0], {}, {49},
              1e-9);
  EXPECT_EQ(values(run_op("Det", {}, {Tensor(DataType::kFloat32, {0, 2, 2})})[0]).size(), 0u);
}

TEST(Det, RejectsNonSquareAndIntegers) {
  EXPECT_THROW(run_op("Det", {}, {make<float>({2, 3}, {1, 2, 3, 4, 5, 6})}), KernelError);
  EXPECT_THROW(run_op("Det", {}, {make<float>({4}, {1, 2, 3, 4})}), KernelError);
  EXPECT_THROW(run_op("Det", {}, {make<int32_t>({2, 2}, {1, 2, 3, 4})}), KernelError);
}

}  // namespace
}  // namespace openbpu::kernels::testing
