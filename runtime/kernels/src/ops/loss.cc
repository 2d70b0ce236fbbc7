// Losses: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss.
//
// Input (N, C, d1, ...), target (N, d1, ...). The loss of an element is
// -input[n, target, d...] * weight[target] (weight 1 without weights), 0 for ignore_index.
// Reduction "none" keeps the target's shape, "sum" adds, "mean" divides the sum by the total
// weight of the elements that are not ignored. Sums run in double in element order.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "families.h"
#include "openbpu/kernels/axes.h"
#include "openbpu/kernels/dispatch.h"

namespace openbpu::kernels {

namespace {

enum class Reduction { kNone, kSum, kMean };

Reduction parse_reduction(std::string_view op, const AttributeMap& attrs) {
  const std::string r = attrs.get_string("reduction", "mean");
  if (r == "none") return Reduction::kNone;
  if (r == "sum") return Reduction::kSum;
  if (r == "mean") return Reduction::kMean;
  fail(op, ": reduction must be none, sum or mean, got \"", r, "\"");
}

std::optional<int64_t> read_ignore_index(const AttributeMap& attrs) {
  if (!attrs.has("ignore_index")) return std::nullopt;
  return attrs.get_int("ignore_index");
}

// Shared attributes and the negative log likelihood over log-probabilities `log_prob`
// (N x C x D flattened, as doubles).
struct LossSpec {
  std::string_view op;
  Reduction reduction;
  std::optional<int64_t> ignore_index;

  // Checks the target and weight against the input shape; returns D (product of d1...).
  int64_t check_shapes(const Shape& input, const Tensor& target, const Tensor* weight) const {
    OPENBPU_CHECK(input.size() >= 2, op, ": the input must have rank >= 2 (N x C x ...), got ",
          shape_to_string(input));
    OPENBPU_CHECK(target.dtype() == DataType::kInt32 || target.dtype() == DataType::kInt64, op,
          ": the target must be int32 or int64, got ", target.describe());
    Shape want{input[0]};
    want.insert(want.end(), input.begin() + 2, input.end());
    OPENBPU_CHECK(target.shape() == want, op, ": the target must have shape ", shape_to_string(want),
          " for input ", shape_to_string(input), ", got ", target.describe());
    if (weight != nullptr) {
      OPENBPU_CHECK(weight->rank() == 1 && weight->dim(0) == input[1], op, ": the weight must have shape [",
            input[1], "], got ", weight->describe());
    }
    return dims_product(input, 2, input.size());
  }

  // Writes the loss output (index 0) of element type `type`.
  void compute(KernelContext& ctx, DataType type, const std::vector<double>& log_prob,
               const Shape& input, const Tensor& target, const Tensor* weight) const {
    const int64_t batch = input[0], classes = input[1];
    const int64_t inner = dims_product(input, 2, input.size());
    const int64_t count = batch * inner;
    std::vector<double> weights;
    if (weight != nullptr) {
      weights.resize(size_t(classes));
      for (int64_t c = 0; c < classes; ++c) weights[size_t(c)] = weight->float_at(c);
    }
    std::vector<double> loss(size_t(count), 0.0);
    double total_weight = 0.0, total_loss = 0.0;
    for (int64_t n = 0; n < batch; ++n) {
      for (int64_t d = 0; d < inner; ++d) {
        const int64_t i = n * inner + d;
        const int64_t t = target.int_at(i);
        if (ignore_index && t == *ignore_index) continue;
        OPENBPU_CHECK(t >= 0 && t < classes, op, ": target ", t, " at position ", i, " is outside [0, ",
              classes, ")");
        const double w = weight != nullptr ? weights[size_t(t)] : 1.0;
        loss[size_t(i)] = -log_prob[size_t((n * classes + t) * inner + d)] * w;
        total_weight += w;
        total_loss += loss[size_t(i)];
      }
    }
    Shape out_shape;
    std::vector<double> values;
    if (reduction == Reduction::kNone) {
      out_shape = target.shape();
      values = std::move(loss);
    } else if (reduction == Reduction::kSum) {
      values = {total_loss};
    } else {
      values = {total_loss / total_weight};  // 0/0 = NaN when every element is ignored
    }
    Tensor& y = ctx.allocate_output(0, type, out_shape);
    dispatch<FloatTypes>(type, op, [&]<typename T>() {
      T* p = y.data<T>();
      for (size_t i = 0; i < values.size(); ++i) {
        p[i] = from_compute<T>(static_cast<ComputeType<T>>(values[i]));
      }
    });
  }
};

std::vector<double> float_values(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.element_count()));
  dispatch<FloatTypes>(t.dtype(), "loss input", [&]<typename T>() {
    const T* p = t.data<T>();
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(to_compute(p[i]));
  });
  return v;
}

void check_weight_type(std::string_view op, const Tensor* weight, DataType type) {
  if (weight == nullptr) return;
  OPENBPU_CHECK(weight->dtype() == type, op, ": the weight must have the input's type ", dtype_name(type),
        ", got ", weight->describe());
}

class NegativeLogLikelihoodLossKernel final : public Kernel {
 public:
  explicit NegativeLogLikelihoodLossKernel(const NodeInfo& node)
      : spec_{"NegativeLogLikelihoodLoss", parse_reduction("NegativeLogLikelihoodLoss", node.attrs),
              read_ignore_index(node.attrs)} {}

  void run(KernelContext& ctx) const override {
    const Tensor& input = ctx.input(0);
    const Tensor& target = ctx.input(1);
    const Tensor* weight = ctx.optional_input(2);
    OPENBPU_CHECK(dtype_is_float(input.dtype()), spec_.op, ": the input must be a float tensor, got ",
          input.describe());
    check_weight_type(spec_.op, weight, input.dtype());
    spec_.check_shapes(input.shape(), target, weight);
    spec_.compute(ctx, input.dtype(), float_values(input), input.shape(), target, weight);
  }

 private:
  LossSpec spec_;
};

// log_prob = log_softmax(scores, axis 1), then the negative log likelihood of the labels.
class SoftmaxCrossEntropyLossKernel final : public Kernel {
 public:
  explicit SoftmaxCrossEntropyLossKernel(const NodeInfo& node)
      : spec_{"SoftmaxCrossEntropyLoss", parse_reduction("SoftmaxCrossEntropyLoss", node.attrs),
              read_ignore_index(node.attrs)} {}

  void run(KernelContext& ctx) const override {
    const Tensor& scores = ctx.input(0);
    const Tensor& labels = ctx.input(1);
    const Tensor* weight = ctx.optional_input(2);
    OPENBPU_CHECK(dtype_is_float(scores.dtype()), spec_.op, ": scores must be a float tensor, got ",
          scores.describe());
    check_weight_type(spec_.op, weight, scores.dtype());
    const int64_t inner = spec_.check_shapes(scores.shape(), labels, weight);
    const int64_t batch = scores.dim(0), classes = scores.dim(1);
    std::vector<double> log_prob = float_values(scores);
    for (int64_t n = 0; n < batch; ++n) {
      for (int64_t d = 0; d < inner; ++d) {
        double* base = log_prob.data() + n * classes * inner + d;
        double max = -std::numeric_limits<double>::infinity();
        for (int64_t c = 0; c < classes; ++c) max = std::max(max, base[c * inner]);
        double sum = 0.0;
        for (int64_t c = 0; c < classes; ++c) sum += std::exp(base[c * inner] - max);
        const double log_sum = std::log(sum);
        for (int64_t c = 0; c < classes; ++c) base[c * inner] = base[c * inner] - max - log_sum;
      }
    }
    spec_.compute(ctx, scores.dtype(), log_prob, scores.shape(), labels, weight);
    if (ctx.output_count() > 1) {
      Tensor& out = ctx.allocate_output(1, scores.dtype(), scores.shape());
      dispatch<FloatTypes>(scores.dtype(), spec_.op, [&]<typename T>() {
        T* p = out.data<T>();
        for (size_t i = 0; i < log_prob.size(); ++i) {
          p[i] = from_compute<T>(static_cast<ComputeType<T>>(log_prob[i]));
        }
      });
    }
  }

 private:
  LossSpec spec_;
};

const std::vector<AttrSpec> kLossAttributes = {{"reduction", AttrKind::kString},
                                               {"ignore_index", AttrKind::kInt}};

}  // namespace

void register_loss_kernels(std::vector<KernelDef>& defs) {
  defs.push_back({"", "NegativeLogLikelihoodLoss", 12, kLossAttributes,
                  &make_kernel<NegativeLogLikelihoodLossKernel>});
  defs.push_back({"", "SoftmaxCrossEntropyLoss", 12, kLossAttributes,
                  &make_kernel<SoftmaxCrossEntropyLossKernel>});
}

}  // namespace openbpu::kernels
