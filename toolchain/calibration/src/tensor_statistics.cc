#include "openbpu/calibration/tensor_statistics.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <vector>

#include "openbpu/calibration/fake_quant_evaluation.h"
#include "openbpu/base/thread_pool.h"
#include "openbpu/common/error.h"
#include "openbpu/kernels/vector_clones.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace openbpu::calibration {

using kernels::DataType;

namespace {

// Channels along axis 1 and the element count of one channel block ([outer, C, inner]).
struct ChannelLayout {
  int64_t outer = 1, channels = 1, inner = 1;
};

ChannelLayout channel_layout(const Tensor& t) {
  ChannelLayout l;
  if (t.rank() < 2) {
    l.inner = t.element_count();
    return l;
  }
  l.outer = t.dim(0);
  l.channels = t.dim(1);
  for (int64_t d = 2; d < t.rank(); ++d) l.inner *= t.dim(d);
  return l;
}

const float* float_data(const std::string& tensor, const Tensor& data) {
  if (data.dtype() != DataType::kFloat32) {
    raise("calibration statistics: tensor '", tensor, "' is ", kernels::dtype_name(data.dtype()),
          "; only float32 activations are calibrated");
  }
  return data.data<float>();
}

// Over n floats: the largest finite |x| (0 if none), the sum of the finite values (16
// interleaved partial sums, lane j taking elements j, j + 16, ..., combined pairwise: a fixed
// order) and their count. The AVX-512 version computes the same lanes, so the same bits.
constexpr int kLanes = 16;

struct LaneTotals {
  float max[kLanes] = {};
  double sum[kLanes] = {};
  int64_t count[kLanes] = {};

  void add(int j, float x) {
    const float a = std::fabs(x);
    if (!(a <= std::numeric_limits<float>::max())) return;  // inf, NaN
    max[j] = std::max(max[j], a);
    sum[j] += static_cast<double>(x);
    ++count[j];
  }
  void combine(float* m, double* s, int64_t* c) {
    for (int width = kLanes / 2; width > 0; width /= 2) {
      for (int j = 0; j < width; ++j) {
        max[j] = std::max(max[j], max[j + width]);
        sum[j] += sum[j + width];
        count[j] += count[j + width];
      }
    }
    *m = max[0];
    *s = sum[0];
    *c = count[0];
  }
};

void finite_range_scalar(const float* p, int64_t n, float* m, double* s, int64_t* c) {
  LaneTotals t;
  for (int64_t i = 0; i < n; ++i) t.add(static_cast<int>(i % kLanes), p[i]);
  t.combine(m, s, c);
}

// hist[min(floor(|x| * scale), last)] += 1 for each finite x of p[0, n), over kFineBins bins
// (scale is a power of two: the product is exact).
void histogram_scalar(const float* x, int64_t n, float scale, uint64_t* hist) {
  constexpr int kLast = kFineBins - 1;
  for (int64_t i = 0; i < n; ++i) {
    const float a = std::fabs(x[i]);
    if (!(a <= std::numeric_limits<float>::max())) continue;
    ++hist[static_cast<int>(std::min(a * scale, static_cast<float>(kLast)))];
  }
}

#if defined(__x86_64__)
__attribute__((target("avx512f,avx512dq"))) void finite_range_avx512(const float* p, int64_t n,
                                                                     float* m, double* s,
                                                                     int64_t* c) {
  const __m512 finite_max = _mm512_set1_ps(std::numeric_limits<float>::max());
  __m512 vmax = _mm512_setzero_ps();
  __m512d lo = _mm512_setzero_pd(), hi = _mm512_setzero_pd();
  __m512i vcount = _mm512_setzero_si512();  // int32 lanes, flushed before they can overflow
  LaneTotals t;
  int64_t since_flush = 0;
  for (int64_t i = 0; i < n; i += kLanes) {
    const __mmask16 in = i + kLanes <= n ? __mmask16(0xFFFF)
                                         : static_cast<__mmask16>((1u << (n - i)) - 1);
    const __m512 x = _mm512_maskz_loadu_ps(in, p + i);
    const __m512 a = _mm512_abs_ps(x);
    const __mmask16 finite = _mm512_mask_cmp_ps_mask(in, a, finite_max, _CMP_LE_OQ);
    vmax = _mm512_mask_max_ps(vmax, finite, vmax, a);
    // Only finite lanes add (adding 0 would turn a -0 sum into +0).
    const __m256 x_lo = _mm512_castps512_ps256(x);
    const __m256 x_hi = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(x), 1));
    lo = _mm512_mask_add_pd(lo, static_cast<__mmask8>(finite), lo, _mm512_cvtps_pd(x_lo));
    hi = _mm512_mask_add_pd(hi, static_cast<__mmask8>(finite >> 8), hi, _mm512_cvtps_pd(x_hi));
    vcount = _mm512_mask_add_epi32(vcount, finite, vcount, _mm512_set1_epi32(1));
    if (++since_flush == (int64_t{1} << 30)) {
      alignas(64) int32_t counts[kLanes];
      _mm512_store_si512(counts, vcount);
      for (int j = 0; j < kLanes; ++j) t.count[j] += counts[j];
      vcount = _mm512_setzero_si512();
      since_flush = 0;
    }
  }
  alignas(64) int32_t counts[kLanes];
  _mm512_store_si512(counts, vcount);
  _mm512_storeu_ps(t.max, vmax);
  _mm512_storeu_pd(t.sum, lo);
  _mm512_storeu_pd(t.sum + 8, hi);
  for (int j = 0; j < kLanes; ++j) t.count[j] += counts[j];
  t.combine(m, s, c);
}

// The bins of 16 values at a time, packed (finite ones only) into a buffer, then counted: with
// few values straight into hist, else into four sub-histograms in turn (values of one bin in a
// row then do not wait for each other's increment), kept zero between calls and summed into
// hist up to the highest bin used.
__attribute__((target("avx512f"))) void histogram_avx512(const float* x, int64_t n, float bin_scale,
                                                         uint64_t* hist) {
  const __m512 finite_max = _mm512_set1_ps(std::numeric_limits<float>::max());
  const __m512 scale = _mm512_set1_ps(bin_scale);
  const __m512 last = _mm512_set1_ps(static_cast<float>(kFineBins - 1));
  constexpr int kWays = 4;
  const bool direct = n < int64_t{kWays} * kFineBins;
  thread_local std::vector<uint32_t> sub(size_t{kWays} * kFineBins, 0);
  uint32_t* ways[kWays];
  for (int w = 0; w < kWays; ++w) ways[w] = sub.data() + w * kFineBins;
  constexpr int64_t kBlock = 1024;
  alignas(64) int32_t bins[kBlock + kLanes];
  __m512i highest = _mm512_setzero_si512();
  auto flush = [&](int top) {
    for (int w = 0; w < kWays; ++w) {
      for (int b = 0; b < top; ++b) hist[b] += ways[w][b];
      std::fill(ways[w], ways[w] + top, 0u);
    }
  };
  int64_t since_flush = 0;
  for (int64_t begin = 0; begin < n; begin += kBlock) {
    const int64_t end = std::min(n, begin + kBlock);
    int32_t* out = bins;
    for (int64_t i = begin; i < end; i += kLanes) {
      const __mmask16 in = i + kLanes <= end ? __mmask16(0xFFFF)
                                             : static_cast<__mmask16>((1u << (end - i)) - 1);
      const __m512 a = _mm512_abs_ps(_mm512_maskz_loadu_ps(in, x + i));
      const __mmask16 finite = _mm512_mask_cmp_ps_mask(in, a, finite_max, _CMP_LE_OQ);
      // min(a * scale, last): the product is never NaN (the scale is finite).
      const __m512i bin = _mm512_cvttps_epi32(_mm512_min_ps(_mm512_mul_ps(a, scale), last));
      highest = _mm512_mask_max_epi32(highest, finite, highest, bin);
      // Compress in a register: the memory form of vpcompressd is slow on some CPUs.
      _mm512_storeu_si512(out, _mm512_maskz_compress_epi32(finite, bin));
      out += __builtin_popcount(finite);
    }
    const int64_t count = out - bins;
    if (direct) {
      for (int64_t k = 0; k < count; ++k) ++hist[bins[k]];
      continue;
    }
    int64_t k = 0;
    for (; k + kWays <= count; k += kWays) {
      for (int w = 0; w < kWays; ++w) ++ways[w][bins[k + w]];
    }
    for (; k < count; ++k) ++ways[0][bins[k]];
    since_flush += count;
    if (since_flush > (int64_t{1} << 30)) {  // far below the 32-bit counts' limit
      flush(_mm512_reduce_max_epi32(highest) + 1);
      since_flush = 0;
    }
  }
  if (!direct) flush(_mm512_reduce_max_epi32(highest) + 1);
}
#endif

void finite_range(const float* p, int64_t n, float* m, double* s, int64_t* c) {
#if defined(__x86_64__)
  if (kernels::vector_path() == kernels::VectorPath::kAvx512) return finite_range_avx512(p, n, m, s, c);
#endif
  finite_range_scalar(p, n, m, s, c);
}

void add_to_histogram(const float* x, int64_t n, float scale, uint64_t* hist) {
#if defined(__x86_64__)
  if (kernels::vector_path() == kernels::VectorPath::kAvx512)
    return histogram_avx512(x, n, scale, hist);
#endif
  histogram_scalar(x, n, scale, hist);
}

// The exponent e of the fine histogram's range [0, 2^e) for a largest |x| of m: 2^e > m.
int fine_exponent_for(float m) {
  int e = kMinFineExponent;
  if (m > 0) std::frexp(m, &e);  // m = f * 2^e, f in [0.5, 1)
  return std::max(e, kMinFineExponent);
}

// Widens a fine histogram's range to [0, 2^e): bin i moves to bin i >> (e - s.fine_exponent).
void widen_fine_histogram(TensorStatistics& s, int e) {
  if (e <= s.fine_exponent) return;
  const int shift = std::min(e - s.fine_exponent, 31);
  std::vector<uint64_t> wider(kFineBins, 0);
  for (size_t i = 0; i < s.fine_histogram.size(); ++i) wider[i >> shift] += s.fine_histogram[i];
  s.fine_histogram = std::move(wider);
  s.fine_exponent = e;
}

}  // namespace

std::vector<double> TensorStatistics::channel_means() const {
  std::vector<double> means(channel_sum.size(), 0.0);
  for (size_t c = 0; c < means.size(); ++c) {
    if (channel_count[c] > 0) means[c] = channel_sum[c] / static_cast<double>(channel_count[c]);
  }
  return means;
}

StatisticsCollector::StatisticsCollector(std::vector<std::string> tensors, bool per_channel,
                                         bool histograms)
    : per_channel_(per_channel), histograms_(histograms) {
  for (auto& t : tensors) {
    TensorStatistics& s = stats_.emplace(std::move(t), TensorStatistics{}).first->second;
    if (histograms_) s.fine_histogram.assign(kFineBins, 0);
  }
}

void StatisticsCollector::add(const std::string& tensor, const Tensor& data) {
  auto it = stats_.find(tensor);
  if (it == stats_.end()) return;
  TensorStatistics& s = it->second;
  const float* x = float_data(tensor, data);
  const ChannelLayout l = channel_layout(data);
  if (s.channel_sum.empty()) {
    s.channel_sum.assign(static_cast<size_t>(l.channels), 0.0);
    s.channel_count.assign(static_cast<size_t>(l.channels), 0);
    if (per_channel_) s.channel_abs_max.assign(static_cast<size_t>(l.channels), 0.0f);
  } else if (static_cast<int64_t>(s.channel_sum.size()) != l.channels) {
    raise("calibration statistics: tensor '", tensor, "' has ", l.channels,
          " channels in this sample but ", s.channel_sum.size(), " in an earlier one");
  }
  float abs_max = s.abs_max;
  uint64_t finite = 0, non_finite = 0;
  for (int64_t o = 0; o < l.outer; ++o) {
    for (int64_t c = 0; c < l.channels; ++c) {
      const float* p = x + (o * l.channels + c) * l.inner;
      float m = 0;
      double sum = 0;
      int64_t count = 0;
      finite_range(p, l.inner, &m, &sum, &count);
      const uint64_t n = static_cast<uint64_t>(count);
      non_finite += static_cast<uint64_t>(l.inner) - n;
      finite += n;
      s.channel_sum[static_cast<size_t>(c)] += sum;
      s.channel_count[static_cast<size_t>(c)] += n;
      abs_max = std::max(abs_max, m);
      if (per_channel_) {
        float& cm = s.channel_abs_max[static_cast<size_t>(c)];
        cm = std::max(cm, m);
      }
    }
  }
  s.abs_max = abs_max;
  s.element_count += finite;
  s.non_finite_count += non_finite;
  if (!histograms_) return;
  // Counted straight into the range that holds every value so far: the same counts as this
  // sample's own range widened (bins of 2^e nest in bins of 2^(e+1)).
  widen_fine_histogram(s, fine_exponent_for(abs_max));
  add_to_histogram(x, data.element_count(), std::ldexp(1.0f, kFineBinsLog2 - s.fine_exponent),
                   s.fine_histogram.data());
}

void StatisticsCollector::merge_ranges(const StatisticsCollector& sample) {
  for (auto& [name, s] : stats_) {
    auto it = sample.stats_.find(name);
    if (it == sample.stats_.end() || it->second.channel_sum.empty()) continue;
    const TensorStatistics& t = it->second;
    if (s.channel_sum.empty()) {
      s.channel_sum.assign(t.channel_sum.size(), 0.0);
      s.channel_count.assign(t.channel_count.size(), 0);
      if (per_channel_) s.channel_abs_max.assign(t.channel_sum.size(), 0.0f);
    } else if (s.channel_sum.size() != t.channel_sum.size()) {
      raise("calibration statistics: tensor '", name, "' has ", t.channel_sum.size(),
            " channels in this sample but ", s.channel_sum.size(), " in an earlier one");
    }
    s.abs_max = std::max(s.abs_max, t.abs_max);
    for (size_t c = 0; c < t.channel_sum.size(); ++c) {
      s.channel_sum[c] += t.channel_sum[c];
      s.channel_count[c] += t.channel_count[c];
      if (per_channel_) s.channel_abs_max[c] = std::max(s.channel_abs_max[c], t.channel_abs_max[c]);
    }
    s.element_count += t.element_count;
    s.non_finite_count += t.non_finite_count;
  }
}

void StatisticsCollector::merge_histograms(const StatisticsCollector& part) {
  if (!histograms_) return;
  for (auto& [name, s] : stats_) {
    auto it = part.stats_.find(name);
    if (it == part.stats_.end() || it->second.fine_histogram.empty()) continue;
    const TensorStatistics& t = it->second;
    widen_fine_histogram(s, t.fine_exponent);
    const int shift = std::min(s.fine_exponent - t.fine_exponent, 31);
    for (size_t i = 0; i < t.fine_histogram.size(); ++i)
      s.fine_histogram[i >> shift] += t.fine_histogram[i];
  }
}

void StatisticsCollector::clear_ranges() {
  for (auto& [name, s] : stats_) {
    s.abs_max = 0;
    s.channel_abs_max.clear();
    s.channel_sum.clear();
    s.channel_count.clear();
    s.element_count = 0;
    s.non_finite_count = 0;
  }
}

void StatisticsCollector::finish() {
  if (!histograms_) return;
  for (auto& [name, s] : stats_) {
    s.histogram.assign(kHistogramBins, 0);
    if (!(s.abs_max > 0)) {  // every finite value is 0
      s.histogram[0] = s.element_count;
      continue;
    }
    // Fine bin i is [i, i + 1) * w in units of [0, abs_max]'s bins (w <= 1): its count goes to
    // the one or two bins it overlaps, in proportion (rounded to nearest), so that the bins
    // count a smooth density rather than a pattern of one and two fine bins each.
    const double w = std::ldexp(1.0, s.fine_exponent - kFineBinsLog2) *
                     (static_cast<double>(kHistogramBins) / static_cast<double>(s.abs_max));
    constexpr size_t kLast = kHistogramBins - 1;
    for (size_t i = 0; i < s.fine_histogram.size(); ++i) {
      const uint64_t count = s.fine_histogram[i];
      if (count == 0) continue;
      const double begin = static_cast<double>(i) * w, end = begin + w;
      const size_t j = static_cast<size_t>(std::min(std::floor(begin), double{kLast}));
      if (j == kLast || end <= static_cast<double>(j + 1)) {
        s.histogram[j] += count;
        continue;
      }
      const double share = (static_cast<double>(j + 1) - begin) / w;
      const auto first = std::min(
          count, static_cast<uint64_t>(std::floor(static_cast<double>(count) * share + 0.5)));
      s.histogram[j] += first;
      s.histogram[j + 1] += count - first;
    }
  }
}

namespace {

// One pass over the samples: rounds of up to `workers` samples, sample base + w on worker w
// (its own executor), then `after_round` in sample order.
template <typename RunSample, typename AfterRound>
void sample_rounds(size_t count, int workers, base::ThreadPool* pool, RunSample&& run_sample,
                   AfterRound&& after_round) {
  for (size_t base = 0; base < count; base += static_cast<size_t>(workers)) {
    const int64_t in_round = static_cast<int64_t>(std::min<size_t>(workers, count - base));
    base::parallel_for(pool, in_round, 1, [&](int64_t begin, int64_t end) {
      for (int64_t w = begin; w < end; ++w) run_sample(static_cast<int>(w), base + static_cast<size_t>(w));
    });
    for (int64_t w = 0; w < in_round; ++w) after_round(static_cast<int>(w), base + static_cast<size_t>(w));
  }
}

}  // namespace

CollectedStatistics collect_statistics(const ir::Model& model,
                                       const executor::ExecutorOptions& executor_options,
                                       const std::vector<std::string>& tensors,
                                       const SampleStream& samples,
                                       const StatisticsOptions& options) {
  const ir::Graph& graph = *model.graph;
  // Which tensors are graph inputs (fed, never produced) and which are produced by a node.
  std::vector<std::string> fed;
  std::map<const ir::Value*, const std::string*> produced;
  for (const std::string& name : tensors) {
    const ir::Value* v = graph.find_value(name);
    if (v == nullptr) raise("calibration statistics: the model has no tensor '", name, "'");
    if (v->is_constant()) raise("calibration statistics: tensor '", name, "' is a constant");
    if (v->producer() == nullptr) {
      fed.push_back(name);
    } else {
      produced.emplace(v, &v->name());
    }
  }

  // Samples run on `workers` executors at once (one kernel thread each), or on one executor
  // with the kernel threads. Every sample's ranges are collected on their own and merged in
  // sample order, histograms are counts: the statistics do not depend on the thread count.
  const int workers = static_cast<int>(
      std::clamp<size_t>(static_cast<size_t>(std::max(executor_options.threads, 1)), 1,
                         std::max<size_t>(samples.count, 1)));
  executor::ExecutorOptions worker_options = executor_options;
  if (workers > 1) worker_options.threads = 1;
  std::vector<std::unique_ptr<executor::FloatExecutor>> executors;
  for (int w = 0; w < workers; ++w) {
    executors.push_back(std::make_unique<executor::FloatExecutor>(model, worker_options));
  }
  std::unique_ptr<base::ThreadPool> pool;
  if (workers > 1) pool = std::make_unique<base::ThreadPool>(workers);
  std::mutex feeds_mutex;

  const auto fresh = [&] {
    return StatisticsCollector(tensors, options.per_channel, options.histograms);
  };
  StatisticsCollector collector = fresh();
  CollectedStatistics result;
  result.reference_outputs.resize(std::min(options.reference_samples, samples.count));
  // A collector per worker: its ranges merged per sample, in sample order; its fine histogram
  // at the end.
  std::vector<StatisticsCollector> parts(static_cast<size_t>(workers), fresh());
  auto run_sample = [&](int w, size_t i) {
    StatisticsCollector& part = parts[static_cast<size_t>(w)];
    executor::RunOptions run;
    const bool keep = i < result.reference_outputs.size();
    if (keep) run.extra_outputs = evaluation_tensors(graph);
    SampleObserver* observer = options.observer;
    run.observer = [&](const ir::Node&, const ir::Value& value, const Tensor& t) {
      auto it = produced.find(&value);
      if (it != produced.end()) part.add(*it->second, t);
      if (observer != nullptr && t.dtype() == DataType::kFloat32)
        observer->observe(w, i, value.name(), t);
    };
    std::map<std::string, Tensor> feeds;
    {
      std::lock_guard<std::mutex> lock(feeds_mutex);
      feeds = samples.feeds(i);
    }
    for (const std::string& name : fed) {
      auto f = feeds.find(name);
      if (f == feeds.end()) raise("calibration statistics: no sample for input '", name, "'");
      part.add(name, f->second);
    }
    if (observer != nullptr) {
      for (const auto& [name, t] : feeds) {
        if (t.dtype() == DataType::kFloat32) observer->observe(w, i, name, t);
      }
    }
    executor::RunResult out = executors[static_cast<size_t>(w)]->run(feeds, run);
    if (keep) {
      std::vector<Tensor> kept;
      const size_t n = run.extra_outputs.size();
      for (size_t k = out.tensors.size() - n; k < out.tensors.size(); ++k) {
        kept.push_back(out.tensors[k].clone());
      }
      result.reference_outputs[i] = std::move(kept);
    }
  };
  auto after = [&](int w, size_t i) {
    if (options.observer != nullptr) options.observer->end_sample(w, i);
    collector.merge_ranges(parts[static_cast<size_t>(w)]);
    parts[static_cast<size_t>(w)].clear_ranges();
  };
  if (options.observer != nullptr) options.observer->begin_pass(workers);
  sample_rounds(samples.count, workers, pool.get(), run_sample, after);
  for (const StatisticsCollector& part : parts) collector.merge_histograms(part);
  collector.finish();
  result.tensors = collector.take();
  return result;
}

}  // namespace openbpu::calibration
