#include "openbpu/accuracy/output_similarity.h"

#include <cmath>

#include "openbpu/common/error.h"

namespace openbpu::accuracy {

double cosine_similarity(const kernels::Tensor& a, const kernels::Tensor& b) {
  if (a.shape() != b.shape()) {
    raise("cosine similarity: the outputs differ in shape: ", a.describe(), " vs ", b.describe());
  }
  double dot = 0, norm_a = 0, norm_b = 0;
  for (int64_t i = 0; i < a.element_count(); ++i) {
    const double x = a.float_at(i), y = b.float_at(i);
    dot += x * y;
    norm_a += x * x;
    norm_b += y * y;
  }
  if (norm_a == 0 && norm_b == 0) return 1;
  if (norm_a == 0 || norm_b == 0) return 0;
  return dot / (std::sqrt(norm_a) * std::sqrt(norm_b));
}

int64_t top1_class(const kernels::Tensor& scores) {
  const auto& shape = scores.shape();
  bool leading_ones = !shape.empty() && shape.back() > 0;
  for (size_t i = 0; i + 1 < shape.size(); ++i) leading_ones = leading_ones && shape[i] == 1;
  if (!leading_ones) raise("top-1: expected class scores [1, C], got ", scores.describe());
  int64_t best = 0;
  for (int64_t c = 1; c < shape.back(); ++c) {
    if (scores.float_at(c) > scores.float_at(best)) best = c;
  }
  return best;
}

}  // namespace openbpu::accuracy
