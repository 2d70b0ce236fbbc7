// Threshold methods: from a tensor's statistics to the symmetric clipping threshold T of its
// fake quantization (scale = T / 127 for int8).
//
// - max: the absolute maximum.
// - max-percentile p: the smallest histogram bin edge below which a fraction p of |x| lies
//   (p >= 1 is max).
// - kl: TensorRT-style entropy calibration. For every candidate clip bin i in
//   [quantized_bins, bins], the reference distribution P is the first i bins with the counts
//   beyond them added to bin i-1; Q quantizes the first i bins into `quantized_bins` levels and
//   spreads each level's count evenly over its non-empty bins. Both are normalised and smoothed
//   (empty bins get 1e-4, non-empty bins give it back in proportion), and the i with the smallest
//   KL(P || Q) wins (the first one on ties); T = i * bin width.
// Weights: per output channel absolute maximum.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "openbpu/calibration/tensor_statistics.h"

namespace openbpu::calibration {

struct ThresholdMethod {
  enum class Kind { kMax, kPercentile, kKl };
  Kind kind = Kind::kMax;
  double percentile = 1.0;  // kPercentile

  static ThresholdMethod max() { return {Kind::kMax, 1.0}; }
  static ThresholdMethod max_percentile(double p) { return {Kind::kPercentile, p}; }
  static ThresholdMethod kl() { return {Kind::kKl, 1.0}; }

  // The name the log uses: "max", "max-percentile:percentile=0.99995", "kl".
  std::string name() const;
  bool operator==(const ThresholdMethod&) const = default;
};

// Threshold from a histogram of |x| over [0, abs_max] (any number of bins).
float percentile_threshold(std::span<const uint64_t> histogram, float abs_max, double percentile);
float kl_threshold(std::span<const uint64_t> histogram, float abs_max, int quantized_bins = 128);
// KL(P || Q) of the kl method for one candidate: clipping after `clip_bins` bins, quantizing to
// `quantized_bins` levels (clip_bins >= quantized_bins). +inf if the distributions are too
// sparse to smooth.
double clipped_kl_divergence(std::span<const uint64_t> histogram, size_t clip_bins,
                             size_t quantized_bins);
// clipped_kl_divergence for every clip from quantized_bins to histogram.size() bins (entry
// i - quantized_bins for clip i), the same values to the bit, without redoing per clip what
// does not depend on it (kl_threshold's search).
std::vector<double> kl_divergences(std::span<const uint64_t> histogram, size_t quantized_bins);

// The tensor's threshold by `method` (percentile and kl need the histogram: Error otherwise).
float tensor_threshold(const TensorStatistics& stats, const ThresholdMethod& method);
// Per-channel thresholds (needs channel_abs_max): max uses each channel's maximum; the other
// methods clip each channel in the proportion the method clips the whole tensor
// (channel_max * tensor_threshold / abs_max).
std::vector<float> channel_thresholds(const TensorStatistics& stats, const ThresholdMethod& method);

// Absolute maximum of a float32 tensor per index of `axis` (weights: the output-channel axis).
std::vector<float> per_channel_abs_max(const kernels::Tensor& weight, int axis);

}  // namespace openbpu::calibration
