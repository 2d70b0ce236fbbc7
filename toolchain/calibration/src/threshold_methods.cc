#include "openbpu/calibration/threshold_methods.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "openbpu/common/error.h"

namespace openbpu::calibration {

namespace {

constexpr double kSmoothing = 1e-4;

// Normalises `d` to a probability distribution and smooths its empty bins: each gets
// kSmoothing, taken evenly from the non-empty ones. False if that would leave a non-empty bin
// non-positive (the distribution is too sparse to compare).
bool normalise_and_smooth(std::vector<double>& d) {
  double total = 0;
  size_t zeros = 0;
  for (double v : d) {
    total += v;
    zeros += v == 0 ? 1 : 0;
  }
  const size_t nonzeros = d.size() - zeros;
  if (nonzeros == 0 || total <= 0) return false;
  const double take = kSmoothing * static_cast<double>(zeros) / static_cast<double>(nonzeros);
  for (double& v : d) {
    if (v == 0) {
      v = kSmoothing;
    } else {
      v = v / total - take;
      if (v <= 0) return false;
    }
  }
  return true;
}

}  // namespace

std::string ThresholdMethod::name() const {
  switch (kind) {
    case Kind::kMax: return "max";
    case Kind::kKl: return "kl";
    case Kind::kPercentile: {
      std::ostringstream s;
      s.precision(10);
      s << "max-percentile:percentile=" << percentile;
      return s.str();
    }
  }
  return "?";
}

float percentile_threshold(std::span<const uint64_t> histogram, float abs_max, double percentile) {
  if (percentile >= 1.0 || histogram.empty()) return abs_max;
  uint64_t total = 0;
  for (uint64_t c : histogram) total += c;
  if (total == 0) return abs_max;
  const double target = std::max(percentile, 0.0) * static_cast<double>(total);
  const double width = static_cast<double>(abs_max) / static_cast<double>(histogram.size());
  uint64_t cumulative = 0;
  for (size_t b = 0; b < histogram.size(); ++b) {
    cumulative += histogram[b];
    if (static_cast<double>(cumulative) >= target) {
      return std::min(static_cast<float>(static_cast<double>(b + 1) * width), abs_max);
    }
  }
  return abs_max;
}

double clipped_kl_divergence(std::span<const uint64_t> histogram, size_t clip_bins,
                             size_t quantized_bins) {
  const size_t i = std::min(clip_bins, histogram.size());
  const size_t levels = std::max<size_t>(quantized_bins, 1);
  if (i < levels || i == 0) return std::numeric_limits<double>::infinity();
  // Per-thread scratch: kl_threshold calls this for every candidate clip of every tensor.
  thread_local std::vector<double> p, q;
  p.assign(histogram.begin(), histogram.begin() + static_cast<std::ptrdiff_t>(i));
  for (size_t j = i; j < histogram.size(); ++j) p[i - 1] += static_cast<double>(histogram[j]);
  q.assign(i, 0.0);
  for (size_t k = 0; k < levels; ++k) {
    const size_t start = k * i / levels;
    const size_t end = (k + 1) * i / levels;
    double sum = 0;
    size_t nonzero = 0;
    for (size_t j = start; j < end; ++j) {
      sum += static_cast<double>(histogram[j]);
      nonzero += histogram[j] != 0 ? 1 : 0;
    }
    if (nonzero == 0) continue;
    const double each = sum / static_cast<double>(nonzero);
    for (size_t j = start; j < end; ++j) {
      if (histogram[j] != 0) q[j] = each;
    }
  }
  if (!normalise_and_smooth(p) || !normalise_and_smooth(q)) {
    return std::numeric_limits<double>::infinity();
  }
  double kl = 0;
  for (size_t j = 0; j < i; ++j) kl += p[j] * std::log(p[j] / q[j]);
  return kl;
}

namespace {

// clipped_kl_divergence for every clip of one histogram, the same value to the bit, with what
// does not depend on the clip computed once: counts are integers below 2^53, so every sum of
// them that clipped_kl_divergence adds in double is exact (a prefix or suffix sum); the
// distributions' totals, zero counts and per-bin divisions follow; bins empty in both
// distributions add p * log(1) = 0 and are skipped. What stays per clip is one log per
// non-empty bin.
class KlSearch {
 public:
  explicit KlSearch(std::span<const uint64_t> h) : h_(h) {
    const size_t bins = h.size();
    prefix_.assign(bins + 1, 0);
    nonzero_prefix_.assign(bins + 1, 0);
    for (size_t j = 0; j < bins; ++j) {
      prefix_[j + 1] = prefix_[j] + h[j];
      nonzero_prefix_[j + 1] = nonzero_prefix_[j] + (h[j] != 0 ? 1 : 0);
      if (h[j] != 0) nonzero_.push_back(j);
    }
    total_ = prefix_[bins];
    ratio_.resize(bins);
    for (size_t j = 0; j < bins; ++j)
      ratio_[j] = static_cast<double>(h[j]) / static_cast<double>(total_);
    min_ratio_.assign(bins + 1, std::numeric_limits<double>::infinity());  // over non-empty bins
    for (size_t j = 0; j < bins; ++j) {
      min_ratio_[j + 1] = h[j] != 0 ? std::min(min_ratio_[j], ratio_[j]) : min_ratio_[j];
    }
  }

  // Whether the shortcuts hold (every count sum exact in double).
  bool exact() const { return total_ < (uint64_t{1} << 53) && total_ > 0; }

  double divergence(size_t i, size_t levels) {
    if (i < levels || i == 0) return std::numeric_limits<double>::infinity();
    // P: bins [0, i), the tail folded into bin i - 1; normalised over total_.
    const uint64_t last_count = h_[i - 1] + (total_ - prefix_[i]);
    const size_t p_zeros = (i - 1 - nonzero_prefix_[i - 1]) + (last_count == 0 ? 1 : 0);
    const size_t p_nonzeros = i - p_zeros;
    if (p_nonzeros == 0) return std::numeric_limits<double>::infinity();
    const double take_p =
        kSmoothing * static_cast<double>(p_zeros) / static_cast<double>(p_nonzeros);
    const double p_last =
        last_count == 0 ? kSmoothing
                        : static_cast<double>(last_count) / static_cast<double>(total_) - take_p;
    if (last_count != 0 && p_last <= 0) return std::numeric_limits<double>::infinity();
    if (min_ratio_[i - 1] <= take_p) return std::numeric_limits<double>::infinity();  // a bin <= 0
    // Q: each level's count spread evenly over its non-empty bins, in bin order.
    level_value_.assign(levels, 0.0);
    double q_total = 0;
    for (size_t k = 0; k < levels; ++k) {
      const size_t start = k * i / levels, end = (k + 1) * i / levels;
      const size_t nonzero = nonzero_prefix_[end] - nonzero_prefix_[start];
      if (nonzero == 0) continue;
      const double each =
          static_cast<double>(prefix_[end] - prefix_[start]) / static_cast<double>(nonzero);
      level_value_[k] = each;
      for (size_t r = 0; r < nonzero; ++r) q_total += each;
    }
    const size_t q_nonzeros = nonzero_prefix_[i], q_zeros = i - q_nonzeros;
    if (q_nonzeros == 0 || q_total <= 0) return std::numeric_limits<double>::infinity();
    const double take_q =
        kSmoothing * static_cast<double>(q_zeros) / static_cast<double>(q_nonzeros);
    for (size_t k = 0; k < levels; ++k) {
      if (level_value_[k] == 0) continue;
      level_value_[k] = level_value_[k] / q_total - take_q;
      if (level_value_[k] <= 0) return std::numeric_limits<double>::infinity();
    }
    // KL(P || Q) over the bins in order; a bin empty in both adds 0.
    double kl = 0;
    size_t k = 0;
    for (auto it = nonzero_.begin(); it != nonzero_.end() && *it < i - 1; ++it) {
      const size_t j = *it;
      while ((k + 1) * i / levels <= j) ++k;
      const double p = ratio_[j] - take_p, q = level_value_[k];
      kl += p * std::log(p / q);
    }
    const double q_last = h_[i - 1] != 0 ? level_value_[levels - 1] : kSmoothing;
    kl += p_last * std::log(p_last / q_last);
    return kl;
  }

 private:
  std::span<const uint64_t> h_;
  std::vector<uint64_t> prefix_;
  std::vector<size_t> nonzero_prefix_, nonzero_;
  uint64_t total_ = 0;
  std::vector<double> ratio_, min_ratio_, level_value_;
};

}  // namespace

std::vector<double> kl_divergences(std::span<const uint64_t> histogram, size_t quantized_bins) {
  const size_t levels = std::max<size_t>(quantized_bins, 1);
  std::vector<double> out;
  if (histogram.size() < levels) return out;
  KlSearch search(histogram);
  for (size_t i = levels; i <= histogram.size(); ++i) {
    out.push_back(search.exact() ? search.divergence(i, levels)
                                 : clipped_kl_divergence(histogram, i, levels));
  }
  return out;
}

float kl_threshold(std::span<const uint64_t> histogram, float abs_max, int quantized_bins) {
  const size_t bins = histogram.size();
  const size_t levels = static_cast<size_t>(std::max(quantized_bins, 1));
  if (!(abs_max > 0) || bins <= levels) return abs_max;
  uint64_t total = 0;
  for (uint64_t c : histogram) total += c;
  if (total == 0) return abs_max;
  const std::vector<double> kl = kl_divergences(histogram, levels);
  double best_kl = std::numeric_limits<double>::infinity();
  size_t best_i = bins;
  for (size_t c = 0; c < kl.size(); ++c) {
    if (kl[c] < best_kl) {
      best_kl = kl[c];
      best_i = levels + c;
    }
  }
  const double width = static_cast<double>(abs_max) / static_cast<double>(bins);
  return std::min(static_cast<float>(static_cast<double>(best_i) * width), abs_max);
}

float tensor_threshold(const TensorStatistics& stats, const ThresholdMethod& method) {
  switch (method.kind) {
    case ThresholdMethod::Kind::kMax: return stats.abs_max;
    case ThresholdMethod::Kind::kPercentile:
      if (method.percentile >= 1.0) return stats.abs_max;
      [[fallthrough]];
    case ThresholdMethod::Kind::kKl:
      if (stats.histogram.empty()) {
        raise("calibration method ", method.name(), " needs a histogram (statistics pass 2)");
      }
      return method.kind == ThresholdMethod::Kind::kKl
                 ? kl_threshold(stats.histogram, stats.abs_max)
                 : percentile_threshold(stats.histogram, stats.abs_max, method.percentile);
  }
  return stats.abs_max;
}

std::vector<float> channel_thresholds(const TensorStatistics& stats,
                                      const ThresholdMethod& method) {
  if (stats.channel_abs_max.empty()) {
    raise("per-channel calibration needs per-channel statistics");
  }
  if (method.kind == ThresholdMethod::Kind::kMax) return stats.channel_abs_max;
  const float t = tensor_threshold(stats, method);
  const double ratio = stats.abs_max > 0 ? static_cast<double>(t) / stats.abs_max : 1.0;
  std::vector<float> out;
  out.reserve(stats.channel_abs_max.size());
  for (float m : stats.channel_abs_max) out.push_back(static_cast<float>(m * ratio));
  return out;
}

std::vector<float> per_channel_abs_max(const kernels::Tensor& weight, int axis) {
  if (weight.dtype() != kernels::DataType::kFloat32) {
    raise("weight calibration: weights are ", kernels::dtype_name(weight.dtype()),
          "; expected float32");
  }
  if (axis < 0 || axis >= weight.rank()) {
    raise("weight calibration: axis ", axis, " is out of range for a weight of rank ",
          weight.rank());
  }
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= weight.dim(d);
  for (int64_t d = axis + 1; d < weight.rank(); ++d) inner *= weight.dim(d);
  const int64_t channels = weight.dim(axis);
  std::vector<float> out(static_cast<size_t>(channels), 0.0f);
  const float* w = weight.data<float>();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t c = 0; c < channels; ++c) {
      const float* p = w + (o * channels + c) * inner;
      float& m = out[static_cast<size_t>(c)];
      for (int64_t i = 0; i < inner; ++i) {
        const float a = std::fabs(p[i]);
        if (std::isfinite(a)) m = std::max(m, a);
      }
    }
  }
  return out;
}

}  // namespace openbpu::calibration
