#include "openbpu/calibration/fake_quant_evaluation.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "openbpu/common/error.h"
#include "openbpu/kernels/vector_clones.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace openbpu::calibration {

namespace {

// 16 interleaved partial sums of each quantity (element i goes to part i % 16), added in a
// fixed tree at the end: the scalar loop and the AVX-512 one (two 8-lane halves) do the same
// IEEE operations per part, so they give the same bits.
constexpr int kParts = 16;

struct PairParts {
  double dot[kParts] = {}, a2[kParts] = {}, b2[kParts] = {}, l1[kParts] = {}, l2[kParts] = {},
         cheb[kParts] = {}, b1[kParts] = {};

  void add(int j, float fx, float fy) {
    const bool ok = std::isfinite(fx) && std::isfinite(fy);
    const double x = ok ? fx : 0.0, y = ok ? fy : 0.0, d = std::fabs(x - y);
    dot[j] += x * y;
    a2[j] += x * x;
    b2[j] += y * y;
    l1[j] += d;
    l2[j] += d * d;
    cheb[j] = std::max(cheb[j], d);
    b1[j] += std::fabs(y);
  }

  PairSums total() {
    for (int width = kParts / 2; width > 0; width /= 2) {
      for (int j = 0; j < width; ++j) {
        dot[j] += dot[j + width];
        a2[j] += a2[j + width];
        b2[j] += b2[j + width];
        l1[j] += l1[j + width];
        l2[j] += l2[j + width];
        cheb[j] = std::max(cheb[j], cheb[j + width]);
        b1[j] += b1[j + width];
      }
    }
    return PairSums{dot[0], a2[0], b2[0], l1[0], l2[0], cheb[0], b1[0]};
  }
};

// The parts of the first n - n % 16 elements.
void pair_parts_scalar(const float* a, const float* b, int64_t n, PairParts& parts) {
  for (int64_t i = 0; i + kParts <= n; i += kParts) {
    for (int j = 0; j < kParts; ++j) parts.add(j, a[i + j], b[i + j]);
  }
}

#if defined(__x86_64__)
__attribute__((target("avx512f,avx512dq"))) void pair_parts_avx512(const float* a, const float* b,
                                                                   int64_t n, PairParts& parts) {
  __m512d dot[2], a2[2], b2[2], l1[2], l2[2], cheb[2], b1[2];
  for (int h = 0; h < 2; ++h) {
    dot[h] = _mm512_loadu_pd(parts.dot + 8 * h);
    a2[h] = _mm512_loadu_pd(parts.a2 + 8 * h);
    b2[h] = _mm512_loadu_pd(parts.b2 + 8 * h);
    l1[h] = _mm512_loadu_pd(parts.l1 + 8 * h);
    l2[h] = _mm512_loadu_pd(parts.l2 + 8 * h);
    cheb[h] = _mm512_loadu_pd(parts.cheb + 8 * h);
    b1[h] = _mm512_loadu_pd(parts.b1 + 8 * h);
  }
  const __m512 finite_max = _mm512_set1_ps(std::numeric_limits<float>::max());
  for (int64_t i = 0; i + kParts <= n; i += kParts) {
    const __m512 fx = _mm512_loadu_ps(a + i), fy = _mm512_loadu_ps(b + i);
    // Both finite: |x| <= FLT_MAX (false for NaN and infinities).
    const __mmask16 ok = _mm512_cmp_ps_mask(_mm512_abs_ps(fx), finite_max, _CMP_LE_OQ) &
                         _mm512_cmp_ps_mask(_mm512_abs_ps(fy), finite_max, _CMP_LE_OQ);
    for (int h = 0; h < 2; ++h) {
      const __mmask8 m = static_cast<__mmask8>(ok >> (8 * h));
      const __m256 hx = h == 0 ? _mm512_castps512_ps256(fx) : _mm512_extractf32x8_ps(fx, 1);
      const __m256 hy = h == 0 ? _mm512_castps512_ps256(fy) : _mm512_extractf32x8_ps(fy, 1);
      const __m512d x = _mm512_maskz_cvtps_pd(m, hx), y = _mm512_maskz_cvtps_pd(m, hy);
      const __m512d d = _mm512_abs_pd(_mm512_sub_pd(x, y));
      dot[h] = _mm512_add_pd(dot[h], _mm512_mul_pd(x, y));
      a2[h] = _mm512_add_pd(a2[h], _mm512_mul_pd(x, x));
      b2[h] = _mm512_add_pd(b2[h], _mm512_mul_pd(y, y));
      l1[h] = _mm512_add_pd(l1[h], d);
      l2[h] = _mm512_add_pd(l2[h], _mm512_mul_pd(d, d));
      cheb[h] = _mm512_max_pd(cheb[h], d);  // d is never NaN
      b1[h] = _mm512_add_pd(b1[h], _mm512_abs_pd(y));
    }
  }
  for (int h = 0; h < 2; ++h) {
    _mm512_storeu_pd(parts.dot + 8 * h, dot[h]);
    _mm512_storeu_pd(parts.a2 + 8 * h, a2[h]);
    _mm512_storeu_pd(parts.b2 + 8 * h, b2[h]);
    _mm512_storeu_pd(parts.l1 + 8 * h, l1[h]);
    _mm512_storeu_pd(parts.l2 + 8 * h, l2[h]);
    _mm512_storeu_pd(parts.cheb + 8 * h, cheb[h]);
    _mm512_storeu_pd(parts.b1 + 8 * h, b1[h]);
  }
}
#endif

}  // namespace

Tensor as_float32(const Tensor& t) {
  if (t.dtype() == kernels::DataType::kFloat32) return t;
  Tensor f(kernels::DataType::kFloat32, t.shape());
  float* p = f.data<float>();
  for (int64_t i = 0; i < t.element_count(); ++i) p[i] = static_cast<float>(t.float_at(i));
  return f;
}

double PairSums::cosine() const {
  if (a2 == 0 && b2 == 0) return 1.0;
  if (a2 == 0 || b2 == 0) return 0.0;
  return dot / (std::sqrt(a2) * std::sqrt(b2));
}

PairSums pair_sums(const float* a, const float* b, int64_t n) {
  PairParts parts;
#if defined(__x86_64__)
  if (kernels::vector_path() == kernels::VectorPath::kAvx512) {
    pair_parts_avx512(a, b, n, parts);
  } else {
    pair_parts_scalar(a, b, n, parts);
  }
#else
  pair_parts_scalar(a, b, n, parts);
#endif
  for (int64_t i = n - n % kParts, j = 0; i < n; ++i, ++j) parts.add(int(j), a[i], b[i]);
  return parts.total();
}

namespace {

// The decision margins of class scores: at each position, the float top-1's score minus the
// float runner-up's in both tensors, compared relatively; sets m.score and m.agreement.
void decision_margins(const Tensor& quantized, const Tensor& reference, const ClassScores& c,
                      OutputMetrics& m) {
  const kernels::Shape& shape = reference.shape();
  const int rank = static_cast<int>(shape.size());
  const int axis = c.axis < rank ? c.axis : rank - 1;
  int64_t outer = 1, classes = 1, inner = 1;
  for (int k = 0; k < rank; ++k) {
    const int64_t d = shape[static_cast<size_t>(k)];
    if (k < axis)
      outer *= d;
    else if (k == axis || c.coerced)
      classes *= d;
    else
      inner *= d;
  }
  if (classes < 2 || quantized.element_count() != reference.element_count()) return;
  const Tensor fq = as_float32(quantized), fr = as_float32(reference);
  const float* q = fq.data<float>();
  const float* f = fr.data<float>();
  double change = 0;  // Σ relative margin changes, each at most 1
  int64_t agree = 0, positions = 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t base = o * classes * inner + i;
      int64_t top = 0, second = -1, qtop = 0;
      for (int64_t k = 1; k < classes; ++k) {
        const float v = f[base + k * inner];
        if (v > f[base + top * inner]) {
          second = top;
          top = k;
        } else if (second < 0 || v > f[base + second * inner]) {
          second = k;
        }
        if (q[base + k * inner] > q[base + qtop * inner]) qtop = k;
      }
      const double df = double(f[base + top * inner]) - f[base + second * inner];
      const double dq = double(q[base + top * inner]) - q[base + second * inner];
      if (!std::isfinite(df) || !std::isfinite(dq)) continue;
      change += std::min(1.0, std::fabs(dq - df) / std::max(std::fabs(df), 1e-12));
      agree += qtop == top;
      ++positions;
    }
  }
  if (positions == 0) return;
  m.score = 1 - change / static_cast<double>(positions);
  m.agreement = static_cast<double>(agree) / static_cast<double>(positions);
}

}  // namespace

OutputMetrics output_metrics(const Tensor& quantized, const Tensor& reference,
                             const ClassScores& classes) {
  OutputMetrics m = output_metrics(pair_sums(quantized, reference), reference.element_count());
  if (classes.axis >= 0) decision_margins(quantized, reference, classes, m);
  return m;
}

std::vector<ClassScores> evaluation_classes(const ir::Model& model) {
  const ir::Graph& graph = *model.graph;
  const int64_t opset = model.opset_version("");
  std::vector<ClassScores> out;
  for (const std::string& name : evaluation_tensors(graph)) {
    ClassScores c;
    const ir::Value* v = graph.find_value(name);
    for (const ir::Use& use : v != nullptr ? v->uses() : std::vector<ir::Use>{}) {
      const ir::Node* n = use.node;
      if (!n->domain().empty() || (n->op_type() != "Softmax" && n->op_type() != "LogSoftmax"))
        continue;
      const std::optional<kernels::Shape> shape = v->type().static_shape();
      const int64_t rank = shape ? static_cast<int64_t>(shape->size()) : -1;
      int64_t axis = n->attrs().get_int("axis", opset >= 13 ? -1 : 1);
      if (axis < 0 && rank > 0) axis += rank;
      if (axis == -1 && rank < 0)
        axis = std::numeric_limits<int>::max();  // the last, whatever the rank
      if (axis >= 0 && (rank < 0 || axis < rank)) {
        c.axis = static_cast<int>(axis);
        c.coerced = opset < 13;
      }
    }
    out.push_back(c);
  }
  return out;
}

PairSums pair_sums(const Tensor& a, const Tensor& b) {
  const Tensor fa = as_float32(a), fb = as_float32(b);
  return pair_sums(fa.data<float>(), fb.data<float>(),
                   std::min(a.element_count(), b.element_count()));
}

double cosine_similarity(const Tensor& a, const Tensor& b) {
  if (a.element_count() != b.element_count()) {
    raise("cosine similarity of ", a.describe(), " and ", b.describe(), ": element counts differ");
  }
  return pair_sums(a, b).cosine();
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

std::vector<std::string> compared_tensors(const ir::Graph& graph, const EvaluationSet& set) {
  return set.compared.empty() ? evaluation_tensors(graph) : set.compared;
}

OutputMetrics output_metrics(const PairSums& s, int64_t count) {
  OutputMetrics m;
  m.cosine = s.cosine();
  m.score = m.cosine;
  m.mse = count > 0 ? s.sq_diff / static_cast<double>(count) : 0.0;
  m.mre = s.abs_b > 0 ? s.abs_diff / s.abs_b : (s.abs_diff > 0 ? 1.0 : 0.0);
  m.chebyshev = s.max_diff;
  m.sqnr =
      s.sq_diff > 0 ? 10.0 * std::log10(s.b2 / s.sq_diff) : std::numeric_limits<double>::infinity();
  return m;
}

namespace {

// The mean over samples and compared tensors of their metrics against the references;
// `outputs` gives sample i's compared tensors.
template <typename Outputs>
OutputMetrics mean_metrics(const EvaluationSet& set, Outputs&& outputs) {
  if (set.feeds.empty() || set.feeds.size() != set.reference_outputs.size()) {
    raise("calibration evaluation needs at least one sample with float reference outputs");
  }
  OutputMetrics sum{0, 0, 0, 0, 0, 0, 0};
  size_t terms = 0;
  for (size_t i = 0; i < set.feeds.size(); ++i) {
    const std::vector<Tensor> out = outputs(i);
    const auto& ref = set.reference_outputs[i];
    if (ref.size() != out.size()) {
      raise("calibration evaluation: the model has ", out.size(),
            " compared outputs, the float reference ", ref.size());
    }
    for (size_t o = 0; o < ref.size(); ++o) {
      if (out[o].element_count() != ref[o].element_count()) {
        raise("calibration evaluation: ", out[o].describe(), " and its reference ",
              ref[o].describe(), ": element counts differ");
      }
      const OutputMetrics m =
          output_metrics(out[o], ref[o], o < set.classes.size() ? set.classes[o] : ClassScores{});
      sum.cosine += std::isfinite(m.cosine) ? m.cosine : 0.0;
      sum.mse += m.mse;
      sum.mre += m.mre;
      sum.sqnr += m.sqnr;
      sum.chebyshev += m.chebyshev;
      sum.score += std::isfinite(m.score) ? m.score : 0.0;
      sum.agreement += m.agreement;
      ++terms;
    }
  }
  const double n = static_cast<double>(terms);
  return {sum.cosine / n,    sum.mse / n,   sum.mre / n,      sum.sqnr / n,
          sum.chebyshev / n, sum.score / n, sum.agreement / n};
}

// The compared tensors at the end of a finished run's result (they follow the graph outputs).
std::vector<Tensor> evaluation_part(executor::RunResult result, size_t count) {
  return {std::make_move_iterator(result.tensors.end() - static_cast<std::ptrdiff_t>(count)),
          std::make_move_iterator(result.tensors.end())};
}

}  // namespace

std::vector<Tensor> run_for_evaluation(executor::FloatExecutor& executor, const ir::Graph& graph,
                                       const std::map<std::string, Tensor>& feeds,
                                       const std::vector<std::string>& compared) {
  executor::RunOptions options;
  options.extra_outputs = compared.empty() ? evaluation_tensors(graph) : compared;
  const size_t n = options.extra_outputs.size();
  return evaluation_part(executor.run(feeds, options), n);
}

OutputMetrics output_metrics(const ir::Model& model, const EvaluationSet& set,
                             const executor::ExecutorOptions& options) {
  executor::FloatExecutor executor(model, options);
  const std::vector<std::string> compared = compared_tensors(*model.graph, set);
  return mean_metrics(set, [&](size_t i) {
    return run_for_evaluation(executor, *model.graph, set.feeds[i], compared);
  });
}

double output_cosine(const ir::Model& model, const EvaluationSet& set,
                     const executor::ExecutorOptions& options) {
  return output_metrics(model, set, options).cosine;
}

std::vector<executor::RunState> start_evaluation_runs(executor::FloatExecutor& executor,
                                                      const ir::Graph& graph,
                                                      const EvaluationSet& set) {
  executor::RunOptions options;
  options.extra_outputs = compared_tensors(graph, set);
  std::vector<executor::RunState> runs;
  for (const auto& feeds : set.feeds) runs.push_back(executor.start(feeds, options));
  return runs;
}

OutputMetrics output_metrics_from(executor::FloatExecutor& executor, const ir::Graph& graph,
                                  const std::vector<executor::RunState>& runs,
                                  const EvaluationSet& set) {
  if (runs.size() != set.feeds.size()) {
    raise("calibration evaluation: ", runs.size(), " runs for ", set.feeds.size(), " samples");
  }
  const size_t count = compared_tensors(graph, set).size();
  return mean_metrics(set,
                      [&](size_t i) { return evaluation_part(executor.finish(runs[i]), count); });
}

double output_cosine_from(executor::FloatExecutor& executor, const ir::Graph& graph,
                          const std::vector<executor::RunState>& runs, const EvaluationSet& set) {
  return output_metrics_from(executor, graph, runs, set).cosine;
}

}  // namespace openbpu::calibration
