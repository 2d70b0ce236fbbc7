// Reductions with a real-valued result computed in double: ReduceL2, ReduceLogSum,
// ReduceLogSumExp (reduction.h).
#include "reduction.h"

namespace openbpu::kernels {

namespace {

using namespace reduction;

// Sum of squares / sum in double, for the real-valued results.
template <typename T>
double real_sum(const T* x, const ReductionLayout& layout, int64_t out, bool square) {
  double acc = 0.0;
  layout.for_each_input(out, [&](int64_t i) {
    const double v = as_real(x[i]);
    acc += square ? v * v : v;
  });
  return acc;
}

struct ReduceL2 {
  static constexpr const char* kName = "ReduceL2";
  static constexpr int kAxesInputFrom = 18;
  template <typename T>
  static T reduce(const T* x, const ReductionLayout& layout, int64_t out) {
    return real_to_element<T>(std::sqrt(real_sum(x, layout, out, true)));
  }
};

struct ReduceLogSum {
  static constexpr const char* kName = "ReduceLogSum";
  static constexpr int kAxesInputFrom = 18;
  template <typename T>
  static T reduce(const T* x, const ReductionLayout& layout, int64_t out) {
    return real_to_element<T>(std::log(real_sum(x, layout, out, false)));
  }
};

struct ReduceLogSumExp {
  static constexpr const char* kName = "ReduceLogSumExp";
  static constexpr int kAxesInputFrom = 18;
  template <typename T>
  static T reduce(const T* x, const ReductionLayout& layout, int64_t out) {
    // max + log(sum(exp(v - max))): no overflow for large inputs.
    double max = -std::numeric_limits<double>::infinity();
    bool nan = false;
    layout.for_each_input(out, [&](int64_t i) {
      const double v = as_real(x[i]);
      nan = nan || std::isnan(v);
      max = std::max(max, v);
    });
    if (nan) return real_to_element<T>(std::numeric_limits<double>::quiet_NaN());
    if (std::isinf(max)) return real_to_element<T>(max);  // empty, all -inf, or some +inf
    double sum = 0.0;
    layout.for_each_input(out, [&](int64_t i) { sum += std::exp(as_real(x[i]) - max); });
    return real_to_element<T>(max + std::log(sum));
  }
};

}  // namespace

void register_reduce_real_kernels(std::vector<KernelDef>& defs) {
  defs.push_back(reduce_def<ReduceL2>());
  defs.push_back(reduce_def<ReduceLogSum>());
  defs.push_back(reduce_def<ReduceLogSumExp>());
}

}  // namespace openbpu::kernels
