// Streamed activation statistics for calibration.
//
// One pass over the samples, one sample in memory at a time: each tensor's absolute maximum
// (and per-channel maxima along axis 1 when asked), its per-channel sums, and a fine histogram
// of |x|: kFineBins equal bins over [0, 2^e), where 2^e is the power of two above the largest
// |x| so far. When a sample raises e, the counts fold pairwise into the wider bins, which is
// exact: the fine histogram is the one a second pass at the final e would count, whatever the
// order of the samples. finish() then gives the histogram the threshold methods read,
// kHistogramBins equal bins over [0, abs_max], each fine bin's count shared between the one or
// two of them it overlaps (fine bins are at most one such bin wide). Memory depends on the number
// of calibrated tensors, never on the number of samples. Everything is deterministic: maxima and
// folds do not depend on order, counts are integers, samples are read in file order. Non-finite
// values (NaN, ±inf) are counted and left out.
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
inline constexpr int kFineBinsLog2 = 12;
inline constexpr int kFineBins = 1 << kFineBinsLog2;

// The fine histogram's range is never below 2^kMinFineExponent (values under it count near 0).
inline constexpr int kMinFineExponent = -100;

struct TensorStatistics {
  float abs_max = 0;
  // Per channel along axis 1 (filled only when per-channel statistics are collected).
  std::vector<float> channel_abs_max;
  // Per channel along axis 1 (always): sum and count of the finite values (bias correction).
  std::vector<double> channel_sum;
  std::vector<uint64_t> channel_count;
  // kHistogramBins counts of |x| over [0, abs_max] (bin b: [b, b+1) * abs_max / kHistogramBins,
  // the last bin including abs_max), from the fine histogram (see above). Empty until finish().
  std::vector<uint64_t> histogram;
  // kFineBins counts: bin i holds |x| in [i, i+1) * 2^(fine_exponent - log2(kFineBins)).
  std::vector<uint64_t> fine_histogram;
  int fine_exponent = kMinFineExponent;
  uint64_t element_count = 0;     // finite values seen
  uint64_t non_finite_count = 0;  // NaN / inf values seen

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
  StatisticsCollector(std::vector<std::string> tensors, bool per_channel, bool histograms = true);

  // Adds one sample of a tensor (ignored if the tensor is not collected). Throws Error naming
  // the tensor if it is not float32 or its channel count changed.
  void add(const std::string& tensor, const Tensor& data);
  // Adds the maxima, and the sums and counts in the order of the calls (one sample's collector,
  // so that sums do not depend on how samples were dealt to threads).
  void merge_ranges(const StatisticsCollector& sample);
  // Adds the fine histograms (in any order: counts are integers, widening is exact).
  void merge_histograms(const StatisticsCollector& part);
  // Forgets the maxima, sums and counts, keeping the fine histograms: a thread's collector
  // that merges its ranges per sample and its histograms once, at the end.
  void clear_ranges();
  // Fills each tensor's histogram from its fine histogram; call once, after the last sample.
  void finish();

  bool wants(const std::string& tensor) const { return stats_.count(tensor) != 0; }
  const std::map<std::string, TensorStatistics>& statistics() const { return stats_; }
  std::map<std::string, TensorStatistics> take() { return std::move(stats_); }

 private:
  std::map<std::string, TensorStatistics> stats_;
  bool per_channel_;
  bool histograms_;
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
  bool histograms = true;  // not needed when every threshold is a plain max
  // The compared tensors (evaluation_tensors()) of the first `reference_samples` samples are
  // kept: float references for the method search and the sensitivity analysis.
  size_t reference_samples = 0;
  SampleObserver* observer = nullptr;  // sees the pass (not owned)
};

struct CollectedStatistics {
  std::map<std::string, TensorStatistics> tensors;
  // reference_outputs[i]: the compared tensors of sample i.
  std::vector<std::vector<Tensor>> reference_outputs;
};

// Runs the float model once over the samples and collects the statistics of `tensors`. With
// executor_options.threads = T > 1, T samples run at once on executors of one kernel thread each (T
// samples alive); the statistics are the same for every T. Throws Error naming a tensor that the
// model does not have or that is not float32.
CollectedStatistics collect_statistics(const ir::Model& model,
                                       const executor::ExecutorOptions& executor_options,
                                       const std::vector<std::string>& tensors,
                                       const SampleStream& samples,
                                       const StatisticsOptions& options);

}  // namespace openbpu::calibration
