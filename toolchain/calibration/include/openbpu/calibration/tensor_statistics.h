// Streamed activation statistics for calibration.
//
// Two passes over the samples, one sample in memory at a time: pass 1 records each tensor's
// absolute maximum (and per-channel maxima along axis 1 when asked); pass 2 fills a histogram
// of |x| with kHistogramBins equal bins over [0, abs_max]. Memory depends on the number of
// calibrated tensors, never on the number of samples. Everything is deterministic: maxima do
// not depend on order, histogram counts are integers, samples are read in file order.
// Non-finite values (NaN, ±inf) are counted and left out.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "openbpu/executor/float_executor.h"
#include "openbpu/ir/graph.h"

namespace openbpu::calibration {

using kernels::Tensor;

inline constexpr int kHistogramBins = 2048;

struct TensorStatistics {
  float abs_max = 0;
  // Per channel along axis 1 (filled only when per-channel statistics are collected).
  std::vector<float> channel_abs_max;
  // Per channel along axis 1 (always): sum and count of the finite values (bias correction).
  std::vector<double> channel_sum;
  std::vector<uint64_t> channel_count;
  // kHistogramBins counts; bin b holds |x| in [b, b+1) * abs_max / kHistogramBins (the last bin
  // includes abs_max). Empty until pass 2.
  std::vector<uint64_t> histogram;
  uint64_t element_count = 0;     // finite values seen in pass 1
  uint64_t non_finite_count = 0;  // NaN / inf values seen in pass 1

  float bin_width() const { return abs_max / static_cast<float>(kHistogramBins); }
  // Mean of each channel along axis 1 (0 for a channel without finite values).
  std::vector<double> channel_means() const;
};

// The samples of a calibration run: `count` samples, fed one at a time.
struct SampleStream {
  size_t count = 0;
  std::function<std::map<std::string, Tensor>(size_t index)> feeds;
};

// Accumulates statistics of a fixed set of tensors (graph inputs or values produced by nodes).
class StatisticsCollector {
 public:
  StatisticsCollector(std::vector<std::string> tensors, bool per_channel);

  // Pass 1 (ranges), then finish_ranges(), then pass 2 (histograms).
  void add_range(const std::string& tensor, const Tensor& data);
  void finish_ranges();
  void add_histogram(const std::string& tensor, const Tensor& data);

  // Adds one sample's ranges (collected by a collector of the same tensors): maxima, and the
  // sums and counts in the order of the calls. Adds another collector's histogram counts.
  void merge_ranges(const StatisticsCollector& sample);
  void merge_histograms(const StatisticsCollector& part);

  bool wants(const std::string& tensor) const { return stats_.count(tensor) != 0; }
  const std::map<std::string, TensorStatistics>& statistics() const { return stats_; }
  std::map<std::string, TensorStatistics> take() { return std::move(stats_); }

 private:
  std::map<std::string, TensorStatistics> stats_;
  bool per_channel_;
  bool ranges_done_ = false;
};

// Sees every float32 tensor (fed or computed) of a pass over the samples, for work that needs
// the float model's activations too (weight_rounding.h: ConvMoments). observe() runs on the
// worker that runs the sample, concurrently with other workers; end_sample() follows each
// sample, in sample order, when no observe() of that sample runs.
class SampleObserver {
 public:
  virtual ~SampleObserver() = default;
  virtual void begin_pass(int workers) = 0;
  virtual void observe(int worker, size_t sample, const std::string& tensor, const Tensor& x) = 0;
  virtual void end_sample(int worker, size_t sample) = 0;
};

struct StatisticsOptions {
  bool per_channel = false;
  bool histograms = true;  // pass 2 (not needed when every threshold is a plain max)
  // The compared tensors (evaluation_tensors()) of the first `reference_samples` samples are
  // kept: float references for the method search and the sensitivity analysis.
  size_t reference_samples = 0;
  SampleObserver* observer = nullptr;  // sees pass 1 (not owned)
};

struct CollectedStatistics {
  std::map<std::string, TensorStatistics> tensors;
  // reference_outputs[i]: the compared tensors of sample i.
  std::vector<std::vector<Tensor>> reference_outputs;
};

// Runs the float model over the samples (pass 1, and pass 2 if histograms are wanted) and
// collects the statistics of `tensors`. With executor_options.threads = T > 1, T samples run at
// once on executors of one kernel thread each (T samples alive); the statistics are the same
// for every T. Throws Error naming a tensor that the model does not have or that is not
// float32.
CollectedStatistics collect_statistics(const ir::Model& model,
                                       const executor::ExecutorOptions& executor_options,
                                       const std::vector<std::string>& tensors,
                                       const SampleStream& samples,
                                       const StatisticsOptions& options);

}  // namespace openbpu::calibration
