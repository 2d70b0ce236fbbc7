#include "openbpu/calibration/fake_quant_evaluation.h"

#include <cmath>

#include "openbpu/common/error.h"

namespace openbpu::calibration {

double cosine_similarity(const Tensor& a, const Tensor& b) {
  if (a.element_count() != b.element_count()) {
    raise("cosine similarity of ", a.describe(), " and ", b.describe(), ": element counts differ");
  }
  const bool floats =
      a.dtype() == kernels::DataType::kFloat32 && b.dtype() == kernels::DataType::kFloat32;
  const float* fa = floats ? a.data<float>() : nullptr;
  const float* fb = floats ? b.data<float>() : nullptr;
  double dot = 0, na = 0, nb = 0;
  for (int64_t i = 0; i < a.element_count(); ++i) {
    const double x = floats ? fa[i] : a.float_at(i);
    const double y = floats ? fb[i] : b.float_at(i);
    // Over the positions where both are finite: a mask's −inf (Where(m, x, −inf) before a
    // Softmax) would make every sum inf or NaN.
    if (!std::isfinite(x) || !std::isfinite(y)) continue;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  if (na == 0 && nb == 0) return 1.0;
  if (na == 0 || nb == 0) return 0.0;
  return dot / (std::sqrt(na) * std::sqrt(nb));
}

std::vector<std::string> evaluation_tensors(const ir::Graph& graph) {
  std::vector<std::string> names;
  for (const ir::Value* out : graph.outputs()) {
    const ir::Node* producer = out->producer();
    // Through a calibration node on the output (graph outputs keep their names).
    if (producer != nullptr && producer->domain() == "horizon" &&
        producer->op_type() == "HzCalibration" && producer->input(0) != nullptr) {
      producer = producer->input(0)->producer();
    }
    const bool softmax =
        producer != nullptr && producer->domain().empty() &&
        (producer->op_type() == "Softmax" || producer->op_type() == "LogSoftmax") &&
        producer->input(0) != nullptr;
    names.push_back(softmax ? producer->input(0)->name() : out->name());
  }
  return names;
}

namespace {

// The mean over samples and compared tensors of their cosine with the references; `outputs`
// gives sample i's evaluation tensors.
template <typename Outputs>
double mean_cosine(const EvaluationSet& set, Outputs&& outputs) {
  if (set.feeds.empty() || set.feeds.size() != set.reference_outputs.size()) {
    raise("calibration evaluation needs at least one sample with float reference outputs");
  }
  double sum = 0;
  size_t terms = 0;
  for (size_t i = 0; i < set.feeds.size(); ++i) {
    const std::vector<Tensor> out = outputs(i);
    const auto& ref = set.reference_outputs[i];
    if (ref.size() != out.size()) {
      raise("calibration evaluation: the model has ", out.size(),
            " compared outputs, the float reference ", ref.size());
    }
    for (size_t o = 0; o < ref.size(); ++o) {
      const double c = cosine_similarity(out[o], ref[o]);
      sum += std::isfinite(c) ? c : 0.0;
      ++terms;
    }
  }
  return sum / static_cast<double>(terms);
}

// The evaluation tensors at the end of a finished run's result (they follow the graph outputs).
std::vector<Tensor> evaluation_part(executor::RunResult result, size_t count) {
  return {std::make_move_iterator(result.tensors.end() - static_cast<std::ptrdiff_t>(count)),
          std::make_move_iterator(result.tensors.end())};
}

}  // namespace

std::vector<Tensor> run_for_evaluation(executor::FloatExecutor& executor, const ir::Graph& graph,
                                       const std::map<std::string, Tensor>& feeds) {
  executor::RunOptions options;
  options.extra_outputs = evaluation_tensors(graph);
  const size_t n = options.extra_outputs.size();
  return evaluation_part(executor.run(feeds, options), n);
}

double output_cosine(const ir::Model& model, const EvaluationSet& set,
                     const executor::ExecutorOptions& options) {
  executor::FloatExecutor executor(model, options);
  return mean_cosine(
      set, [&](size_t i) { return run_for_evaluation(executor, *model.graph, set.feeds[i]); });
}

std::vector<executor::RunState> start_evaluation_runs(executor::FloatExecutor& executor,
                                                      const ir::Graph& graph,
                                                      const EvaluationSet& set) {
  executor::RunOptions options;
  options.extra_outputs = evaluation_tensors(graph);
  std::vector<executor::RunState> runs;
  for (const auto& feeds : set.feeds) runs.push_back(executor.start(feeds, options));
  return runs;
}

double output_cosine_from(executor::FloatExecutor& executor, const ir::Graph& graph,
                          const std::vector<executor::RunState>& runs, const EvaluationSet& set) {
  if (runs.size() != set.feeds.size()) {
    raise("calibration evaluation: ", runs.size(), " runs for ", set.feeds.size(), " samples");
  }
  const size_t count = evaluation_tensors(graph).size();
  return mean_cosine(set,
                     [&](size_t i) { return evaluation_part(executor.finish(runs[i]), count); });
}

}  // namespace openbpu::calibration
