#include "openbpu/calibration/tensor_statistics.h"

#include <algorithm>
#include <cmath>

#include "openbpu/calibration/fake_quant_evaluation.h"
#include "openbpu/common/error.h"

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

}  // namespace

std::vector<double> TensorStatistics::channel_means() const {
  std::vector<double> means(channel_sum.size(), 0.0);
  for (size_t c = 0; c < means.size(); ++c) {
    if (channel_count[c] > 0) means[c] = channel_sum[c] / static_cast<double>(channel_count[c]);
  }
  return means;
}

StatisticsCollector::StatisticsCollector(std::vector<std::string> tensors, bool per_channel)
    : per_channel_(per_channel) {
  for (auto& t : tensors) stats_.emplace(std::move(t), TensorStatistics{});
}

void StatisticsCollector::add_range(const std::string& tensor, const Tensor& data) {
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
      uint64_t n = 0;
      for (int64_t i = 0; i < l.inner; ++i) {
        const float a = std::fabs(p[i]);
        if (std::isfinite(a)) {
          m = std::max(m, a);
          sum += p[i];
          ++n;
        } else {
          ++non_finite;
        }
      }
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
}

void StatisticsCollector::finish_ranges() {
  for (auto& [name, s] : stats_) s.histogram.assign(kHistogramBins, 0);
  ranges_done_ = true;
}

void StatisticsCollector::add_histogram(const std::string& tensor, const Tensor& data) {
  auto it = stats_.find(tensor);
  if (it == stats_.end()) return;
  if (!ranges_done_) raise("calibration statistics: histogram pass before finish_ranges()");
  TensorStatistics& s = it->second;
  const float* x = float_data(tensor, data);
  const int64_t n = data.element_count();
  uint64_t* hist = s.histogram.data();
  if (!(s.abs_max > 0)) {
    for (int64_t i = 0; i < n; ++i) hist[0] += std::isfinite(x[i]) ? 1 : 0;
    return;
  }
  // Same float arithmetic for every sample: bin = floor(|x| * (bins / abs_max)).
  const float inv_width = static_cast<float>(kHistogramBins) / s.abs_max;
  constexpr int kLast = kHistogramBins - 1;
  for (int64_t i = 0; i < n; ++i) {
    const float a = std::fabs(x[i]);
    if (!std::isfinite(a)) continue;
    // |x| can exceed abs_max only by rounding; clamp to the last bin.
    const float scaled = std::min(a * inv_width, static_cast<float>(kLast));
    ++hist[static_cast<int>(scaled)];
  }
}

CollectedStatistics collect_statistics(executor::FloatExecutor& executor, const ir::Model& model,
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

  StatisticsCollector collector(tensors, options.per_channel);
  CollectedStatistics result;
  const int passes = options.histograms ? 2 : 1;
  for (int pass = 0; pass < passes; ++pass) {
    auto add = [&](const std::string& name, const Tensor& t) {
      if (pass == 0) {
        collector.add_range(name, t);
      } else {
        collector.add_histogram(name, t);
      }
    };
    executor::RunOptions run;
    if (pass == passes - 1 && options.reference_samples > 0) {
      run.extra_outputs = evaluation_tensors(graph);
    }
    run.observer = [&](const ir::Node&, const ir::Value& value, const Tensor& t) {
      auto it = produced.find(&value);
      if (it != produced.end()) add(*it->second, t);
    };
    for (size_t i = 0; i < samples.count; ++i) {
      const std::map<std::string, Tensor> feeds = samples.feeds(i);
      for (const std::string& name : fed) {
        auto f = feeds.find(name);
        if (f == feeds.end()) raise("calibration statistics: no sample for input '", name, "'");
        add(name, f->second);
      }
      executor::RunResult out = executor.run(feeds, run);
      if (pass == passes - 1 && i < options.reference_samples) {
        std::vector<Tensor> keep;
        const size_t n = run.extra_outputs.size();
        for (size_t k = out.tensors.size() - n; k < out.tensors.size(); ++k) {
          keep.push_back(out.tensors[k].clone());
        }
        result.reference_outputs.push_back(std::move(keep));
      }
    }
    if (pass == 0 && passes == 2) collector.finish_ranges();
  }
  result.tensors = collector.take();
  return result;
}

}  // namespace openbpu::calibration
