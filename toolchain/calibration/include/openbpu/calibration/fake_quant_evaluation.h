// Scoring a calibrated model: run it (HzCalibration nodes as fake quantization) on a few samples
// and compare its outputs with the float model's by cosine similarity.
//
// The compared tensors are the graph outputs, except that an output computed by a Softmax or
// LogSoftmax (which stays float on the CPU) is compared through that node's input: the logits.
// A softmax saturates (a confident classifier gives cosine 1.000000 for almost any
// thresholds), so its input separates good thresholds from bad ones.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "openbpu/executor/float_executor.h"
#include "openbpu/ir/graph.h"

namespace openbpu::calibration {

using kernels::Tensor;

// A compared tensor that holds class scores (a Softmax's input): positions × classes, the
// classes along `axis`; `coerced` for Softmax before opset 13, whose classes are all the
// dimensions from `axis` on. axis < 0: not class scores.
struct ClassScores {
  int axis = -1;
  bool coerced = false;
};

struct EvaluationSet {
  std::vector<std::map<std::string, Tensor>> feeds;    // per sample
  std::vector<std::vector<Tensor>> reference_outputs;  // per sample, compared_tensors() order
  // The compared tensors when not those of evaluation_tensors() (e.g. the accuracy debugger's
  // output node).
  std::vector<std::string> compared;
  // Per compared tensor, how its class scores lie (see ClassScores); empty: none are.
  std::vector<ClassScores> classes;
};

// The class layout of each of evaluation_tensors(*model.graph), in order.
std::vector<ClassScores> evaluation_classes(const ir::Model& model);

// The names of the compared tensors of a graph (one per graph output, in order; see above).
std::vector<std::string> evaluation_tensors(const ir::Graph& graph);
// set.compared, or evaluation_tensors(graph) when that is empty.
std::vector<std::string> compared_tensors(const ir::Graph& graph, const EvaluationSet& set);

// Sums over the positions where both of two float sequences are finite (a mask's −inf would
// make them NaN), in double, as 16 interleaved partial sums added in a fixed order: the same
// bits on every vector path (AVX-512 where the CPU has it).
struct PairSums {
  double dot = 0, a2 = 0, b2 = 0;                  // Σ a·b, Σ a², Σ b²
  double abs_diff = 0, sq_diff = 0, max_diff = 0;  // Σ |a − b|, Σ (a − b)², max |a − b|
  double abs_b = 0;                                // Σ |b|
  double cosine() const;                           // 1 if both are all zero, 0 if only one is
};
PairSums pair_sums(const float* a, const float* b, int64_t n);
// Over the first min(element counts) elements of two tensors of any float or integer type
// (others than float32 converted to float32 first).
PairSums pair_sums(const Tensor& a, const Tensor& b);

// A tensor of any float or integer type as float32 (the tensor itself if it is float32).
Tensor as_float32(const Tensor& t);

// Cosine similarity of two tensors of the same element count: pair_sums(a, b).cosine().
double cosine_similarity(const Tensor& a, const Tensor& b);

// How far a quantized tensor is from its float reference (hmct-debugger's metrics), or the mean
// of that over samples and tensors: cosine similarity; mse, the mean squared difference; mre,
// Σ|a − b| / Σ|reference|; sqnr, 10·log10(Σ reference² / Σ (a − b)²) in dB (+inf when equal);
// chebyshev, max |a − b|.
// The conversion scores with `score`: on class scores, 1 − the mean over positions of the
// relative change of the decision margin (the float top-1 class's score minus the float
// runner-up's, in both models: |Δq − Δf| / |Δf|, at most 1) — what decides a top-1 or an
// argmax sequence, which a cosine of a few large logits hides, with close calls weighing as
// much as confident ones —; elsewhere the cosine. `agreement` is the fraction of positions
// whose top-1 class is the float one (1 off class scores).
struct OutputMetrics {
  double cosine = 1, mse = 0, mre = 0, sqnr = 0, chebyshev = 0;
  double score = 1, agreement = 1;
};
// `reference` is pair_sums' second sequence; `count` its element count.
OutputMetrics output_metrics(const PairSums& sums, int64_t count);
// The metrics of a tensor against its reference (pair_sums(quantized, reference)), with the
// decision margins when `classes` says the tensors hold class scores.
OutputMetrics output_metrics(const Tensor& quantized, const Tensor& reference,
                             const ClassScores& classes = {});

// Runs the model and returns the tensors of `compared` (evaluation_tensors() if empty), in order.
std::vector<Tensor> run_for_evaluation(executor::FloatExecutor& executor, const ir::Graph& graph,
                                       const std::map<std::string, Tensor>& feeds,
                                       const std::vector<std::string>& compared = {});

// Prepares an executor for the model as it is now (attributes are read at prepare) and returns
// the mean, over samples and compared tensors, of their cosine with the references.
double output_cosine(const ir::Model& model, const EvaluationSet& set,
                     const executor::ExecutorOptions& options);

// output_cosine() with every metric.
OutputMetrics output_metrics(const ir::Model& model, const EvaluationSet& set,
                             const executor::ExecutorOptions& options);

// One run per sample of `set` started on `executor` (whose graph is `graph`), returning the
// compared tensors when finished: the float runs that output_cosine_from() resumes.
std::vector<executor::RunState> start_evaluation_runs(executor::FloatExecutor& executor,
                                                      const ir::Graph& graph,
                                                      const EvaluationSet& set);

// output_cosine() with each sample's run resumed from `runs` (start_evaluation_runs, advanced
// to a step before which the model as `executor` now runs it computes as when the runs were
// advanced) and finished by `executor`, an executor of `graph`.
double output_cosine_from(executor::FloatExecutor& executor, const ir::Graph& graph,
                          const std::vector<executor::RunState>& runs, const EvaluationSet& set);
// output_cosine_from() with every metric.
OutputMetrics output_metrics_from(executor::FloatExecutor& executor, const ir::Graph& graph,
                                  const std::vector<executor::RunState>& runs,
                                  const EvaluationSet& set);

}  // namespace openbpu::calibration
