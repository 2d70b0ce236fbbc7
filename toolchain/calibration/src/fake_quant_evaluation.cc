#include "openbpu/calibration/fake_quant_evaluation.h"

#include <cmath>

#include "openbpu/common/error.h"

namespace openbpu::calibration {

double cosine_similarity(const Tensor& a, const Tensor& b) {
  if (a.element_count() != b.element_count()) {
    raise("cosine similarity of ", a.describe(), " and ", b.describe(), ": element counts differ");
  }
  double dot = 0, na = 0, nb = 0;
  for (int64_t i = 0; i < a.element_count(); ++i) {
    const double x = a.float_at(i);
    const double y = b.float_at(i);
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  if (na == 0 && nb == 0) return 1.0;
  if (na == 0 || nb == 0) return 0.0;
  return dot / (std::sqrt(na) * std::sqrt(nb));
}

double output_cosine(const ir::Model& model, const EvaluationSet& set,
                     const executor::ExecutorOptions& options) {
  if (set.feeds.empty() || set.feeds.size() != set.reference_outputs.size()) {
    raise("calibration evaluation needs at least one sample with float reference outputs");
  }
  executor::FloatExecutor executor(model, options);
  double sum = 0;
  size_t terms = 0;
  for (size_t i = 0; i < set.feeds.size(); ++i) {
    const executor::RunResult out = executor.run(set.feeds[i]);
    const auto& ref = set.reference_outputs[i];
    if (ref.size() > out.tensors.size()) {
      raise("calibration evaluation: the model has ", out.tensors.size(),
            " outputs, the float "
            "reference ",
            ref.size());
    }
    for (size_t o = 0; o < ref.size(); ++o) {
      const double c = cosine_similarity(out.tensors[o], ref[o]);
      sum += std::isfinite(c) ? c : 0.0;
      ++terms;
    }
  }
  return sum / static_cast<double>(terms);
}

}  // namespace openbpu::calibration
