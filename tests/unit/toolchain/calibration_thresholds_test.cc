// Threshold methods (max, percentile, KL) on synthetic histograms, and streamed statistics.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <random>

#include "openbpu/calibration/tensor_statistics.h"
#include "openbpu/calibration/threshold_methods.h"
#include "openbpu/common/error.h"
#include "openbpu/kernels/vector_clones.h"

namespace openbpu::calibration {
namespace {

using kernels::DataType;

TEST(ThresholdMethod, NamesAsTheReferenceLogSpellsThem) {
  EXPECT_EQ(ThresholdMethod::max().name(), "max");
  EXPECT_EQ(ThresholdMethod::kl().name(), "kl");
  EXPECT_EQ(ThresholdMethod::max_percentile(0.99995).name(), "max-percentile:percentile=0.99995");
  EXPECT_EQ(ThresholdMethod::max_percentile(0.9999).name(), "max-percentile:percentile=0.9999");
}

TEST(PercentileThreshold, TakesTheUpperEdgeOfTheBinReachingTheFraction) {
  // 5 bins of width 1 over [0, 5]: 90 values in bin 0, 9 in bin 1, 1 in bin 4.
  const std::vector<uint64_t> h = {90, 9, 0, 0, 1};
  EXPECT_FLOAT_EQ(percentile_threshold(h, 5.0f, 0.5), 1.0f);
  EXPECT_FLOAT_EQ(percentile_threshold(h, 5.0f, 0.90), 1.0f);
  EXPECT_FLOAT_EQ(percentile_threshold(h, 5.0f, 0.91), 2.0f);
  EXPECT_FLOAT_EQ(percentile_threshold(h, 5.0f, 0.985), 2.0f);
  EXPECT_FLOAT_EQ(percentile_threshold(h, 5.0f, 0.995), 5.0f);
  EXPECT_FLOAT_EQ(percentile_threshold(h, 5.0f, 1.0), 5.0f);
  // An empty histogram falls back to the maximum.
  EXPECT_FLOAT_EQ(percentile_threshold(std::vector<uint64_t>(5, 0), 3.0f, 0.5), 3.0f);
}

TEST(KlDivergence, MatchesHandComputedValues) {
  // P = [3, 1] / 4; one level spreads 4 counts over both bins: Q = [1/2, 1/2].
  const std::vector<uint64_t> a = {3, 1};
  EXPECT_NEAR(clipped_kl_divergence(a, 2, 1),
              0.75 * std::log(0.75 / 0.5) + 0.25 * std::log(0.25 / 0.5), 1e-12);
  // Clipping at 2 bins moves the outlier count into bin 1: P = [3, 3] / 6, Q = [1/2, 1/2].
  const std::vector<uint64_t> b = {3, 1, 2};
  EXPECT_NEAR(clipped_kl_divergence(b, 2, 1), 0.0, 1e-12);
  // Q keeps empty bins empty: two levels over [4, 0, 1, 3] give Q = [4, 0, 2, 2] / 8, and
  // both distributions get the same smoothing of bin 1.
  const std::vector<uint64_t> c = {4, 0, 1, 3};
  const double e = 1e-4, take = e / 3;
  const double p[] = {0.5 - take, e, 0.125 - take, 0.375 - take};
  const double q[] = {0.5 - take, e, 0.25 - take, 0.25 - take};
  double expected = 0;
  for (int i = 0; i < 4; ++i) expected += p[i] * std::log(p[i] / q[i]);
  EXPECT_NEAR(clipped_kl_divergence(c, 4, 2), expected, 1e-12);
}

TEST(KlThreshold, ExactFitAtTheFirstCandidate) {
  // All counts in the first 128 of 2048 bins: clipping at 128 bins loses nothing (KL 0), and
  // the first minimum wins.
  std::vector<uint64_t> h(kHistogramBins, 0);
  for (int i = 0; i < 128; ++i) h[static_cast<size_t>(i)] = 100 + static_cast<uint64_t>(i % 7);
  const float abs_max = 4.0f;
  EXPECT_FLOAT_EQ(kl_threshold(h, abs_max), 128 * abs_max / kHistogramBins);
}

TEST(KlThreshold, IsTheMinimumOfTheDivergenceOverAllCandidates) {
  // A dense, decaying distribution with a sparse tail of outliers (like a ReLU activation).
  std::vector<uint64_t> h(kHistogramBins, 0);
  for (int i = 0; i < kHistogramBins; ++i) {
    h[static_cast<size_t>(i)] = static_cast<uint64_t>(std::llround(1e6 * std::exp(-i / 60.0)));
  }
  h[1500] += 3;
  h[2047] += 1;
  const float abs_max = 10.0f;
  const float t = kl_threshold(h, abs_max);
  double best = INFINITY;
  int best_i = 0;
  for (int i = 128; i <= kHistogramBins; ++i) {
    const double kl = clipped_kl_divergence(h, static_cast<size_t>(i), 128);
    if (kl < best) {
      best = kl;
      best_i = i;
    }
  }
  EXPECT_FLOAT_EQ(t, best_i * abs_max / kHistogramBins);
  // The outliers are clipped away, the bulk is kept.
  EXPECT_LT(t, abs_max * 0.5f);
  EXPECT_GT(t, abs_max * 128 / kHistogramBins);
}

// The search computes every candidate's divergence with per-histogram sums and skips bins
// empty in both distributions: each value equals clipped_kl_divergence's to the bit, on dense,
// sparse, single-bin, tail-only and empty-level histograms.
TEST(KlThreshold, DivergencesEqualTheDefinitionBitForBit) {
  std::mt19937 rng(12);
  for (int t = 0; t < 60; ++t) {
    const size_t bins = t < 4 ? size_t(kHistogramBins) : size_t(130 + rng() % 300);
    const size_t levels = t < 4 ? 128 : size_t(1 + rng() % 40);
    std::vector<uint64_t> h(bins, 0);
    const int kind = t % 5;
    for (size_t j = 0; j < bins; ++j) {
      const double decay = std::exp(-static_cast<double>(j) / (5.0 + rng() % 100));
      if (kind == 0) h[j] = static_cast<uint64_t>(1e6 * decay);  // dense
      if (kind == 1 && rng() % 7 == 0) h[j] = 1 + rng() % 1000;  // sparse
      if (kind == 2 && j == bins / 3) h[j] = 12345;              // one bin
      if (kind == 3 && j + 5 >= bins) h[j] = 1 + rng() % 3;      // tail only
      if (kind == 4 && (j / 50) % 2 == 0) h[j] = static_cast<uint64_t>(1e3 * decay) + (j % 3);
    }
    const std::vector<double> all = kl_divergences(h, levels);
    ASSERT_EQ(all.size(), bins - levels + 1);
    for (size_t i = levels; i <= bins; ++i) {
      const double want = clipped_kl_divergence(h, i, levels);
      ASSERT_EQ(std::bit_cast<uint64_t>(all[i - levels]), std::bit_cast<uint64_t>(want))
          << "histogram " << t << " clip " << i << " levels " << levels << ": " << all[i - levels]
          << " vs " << want;
    }
  }
}

TEST(TensorThreshold, MethodsOnStatistics) {
  TensorStatistics s;
  s.abs_max = 8.0f;
  EXPECT_FLOAT_EQ(tensor_threshold(s, ThresholdMethod::max()), 8.0f);
  try {
    tensor_threshold(s, ThresholdMethod::kl());
    FAIL() << "kl without a histogram";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("needs a histogram"), std::string::npos) << e.what();
  }
  s.histogram.assign(kHistogramBins, 0);
  s.histogram[0] = 999;
  s.histogram[kHistogramBins - 1] = 1;
  EXPECT_FLOAT_EQ(tensor_threshold(s, ThresholdMethod::max_percentile(0.99)),
                  s.abs_max / kHistogramBins);
  // Per channel: max per channel, other methods scale each channel by the tensor's clip ratio.
  s.channel_abs_max = {8.0f, 2.0f};
  EXPECT_EQ(channel_thresholds(s, ThresholdMethod::max()), s.channel_abs_max);
  const std::vector<float> p = channel_thresholds(s, ThresholdMethod::max_percentile(0.99));
  ASSERT_EQ(p.size(), 2u);
  EXPECT_FLOAT_EQ(p[0], 8.0f / kHistogramBins);
  EXPECT_FLOAT_EQ(p[1], 2.0f / kHistogramBins);
}

TEST(PerChannelAbsMax, AlongAnyAxis) {
  // [2, 3]: rows {1, -5, 2}, {-0.5, 3, -4}.
  const Tensor w = Tensor::from_values<float>({2, 3}, std::vector<float>{1, -5, 2, -0.5f, 3, -4});
  EXPECT_EQ(per_channel_abs_max(w, 0), (std::vector<float>{5, 4}));
  EXPECT_EQ(per_channel_abs_max(w, 1), (std::vector<float>{1, 5, 4}));
  EXPECT_THROW(per_channel_abs_max(w, 2), Error);
}

Tensor random_activation(uint64_t seed, int64_t channels, int64_t size) {
  std::mt19937_64 rng(seed);
  Tensor t(DataType::kFloat32, {1, channels, size});
  for (int64_t i = 0; i < t.element_count(); ++i) {
    // Exponential magnitudes with random signs: a long, sparse tail.
    const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;
    const double sign = (rng() & 1) ? 1.0 : -1.0;
    t.data<float>()[i] = static_cast<float>(-2.0 * std::log1p(-u) * sign);
  }
  return t;
}

TEST(StatisticsCollector, OnePassGivesMaximaAndAHistogramOfEveryFiniteValue) {
  StatisticsCollector c({"a"}, /*per_channel=*/true);
  Tensor x = Tensor::from_values<float>({1, 2, 2}, std::vector<float>{-3, 1, 0.5f, NAN});
  Tensor y = Tensor::from_values<float>({1, 2, 2}, std::vector<float>{2, 4, -1, 0});
  c.add("b", x);  // not collected: ignored
  c.add("a", x);
  c.add("a", y);
  c.finish();
  const TensorStatistics& s = c.statistics().at("a");
  EXPECT_EQ(s.abs_max, 4.0f);
  EXPECT_EQ(s.channel_abs_max, (std::vector<float>{4.0f, 1.0f}));
  EXPECT_EQ(s.element_count, 7u);
  EXPECT_EQ(s.non_finite_count, 1u);
  uint64_t total = 0;
  for (uint64_t n : s.histogram) total += n;
  EXPECT_EQ(total, 7u);
  EXPECT_EQ(s.histogram[kHistogramBins - 1], 1u);  // |4| = abs_max lands in the last bin
  EXPECT_EQ(s.histogram[static_cast<size_t>(3.0 / 4.0 * kHistogramBins)], 1u);
  EXPECT_EQ(s.histogram[0], 1u);  // the 0
}

// The fine histogram of samples whose maxima rise and fall by octaves, added in any order, one
// collector per sample merged or all into one, is the one counted at the final range directly;
// the histogram over [0, abs_max] puts every value within one bin of its own.
TEST(StatisticsCollector, FineHistogramIsTheOneOfTheFinalRange) {
  std::vector<Tensor> samples;
  for (int k : {0, 3, -2, 5, 1, 5, -7}) {
    Tensor t = random_activation(static_cast<uint64_t>(k + 10), 3, 700);
    for (int64_t i = 0; i < t.element_count(); ++i)
      t.data<float>()[i] = std::ldexp(t.data<float>()[i], k);
    samples.push_back(t);
  }
  float abs_max = 0;
  for (const Tensor& t : samples) {
    for (int64_t i = 0; i < t.element_count(); ++i)
      abs_max = std::max(abs_max, std::fabs(t.data<float>()[i]));
  }
  int e = 0;
  std::frexp(abs_max, &e);
  std::vector<uint64_t> fine(kFineBins, 0), coarse(kHistogramBins, 0);
  for (const Tensor& t : samples) {
    for (int64_t i = 0; i < t.element_count(); ++i) {
      const float a = std::fabs(t.data<float>()[i]);
      ++fine[static_cast<size_t>(std::ldexp(a, kFineBinsLog2 - e))];
      ++coarse[std::min<size_t>(static_cast<size_t>(a / abs_max * kHistogramBins),
                                kHistogramBins - 1)];
    }
  }
  auto check = [&](StatisticsCollector& c, const char* how) {
    c.finish();
    const TensorStatistics& s = c.statistics().at("t");
    EXPECT_EQ(s.abs_max, abs_max) << how;
    EXPECT_EQ(s.fine_exponent, e) << how;
    EXPECT_EQ(s.fine_histogram, fine) << how;
    // Each value moved by at most one bin: the cumulative counts differ by at most the counts of
    // the bins next to each edge.
    uint64_t ours = 0, exact = 0;
    for (size_t b = 0; b + 1 < kHistogramBins; ++b) {
      ours += s.histogram[b];
      exact += coarse[b];
      const uint64_t slack = coarse[b] + coarse[b + 1];
      EXPECT_LE(ours, exact + slack) << how << " bin " << b;
      EXPECT_LE(exact, ours + slack) << how << " bin " << b;
    }
  };
  StatisticsCollector forward({"t"}, false);
  for (const Tensor& t : samples) forward.add("t", t);
  check(forward, "in order");
  StatisticsCollector backward({"t"}, false);
  for (size_t i = samples.size(); i-- > 0;) backward.add("t", samples[i]);
  check(backward, "in reverse");
  StatisticsCollector merged({"t"}, false);
  for (const Tensor& t : samples) {
    StatisticsCollector one({"t"}, false);
    one.add("t", t);
    merged.merge_ranges(one);
    merged.merge_histograms(one);
  }
  check(merged, "merged per sample");
  // As collect_statistics with two threads: ranges per sample, histograms once at the end.
  StatisticsCollector dealt({"t"}, false);
  std::vector<StatisticsCollector> threads(2, StatisticsCollector({"t"}, false));
  for (size_t i = 0; i < samples.size(); ++i) {
    StatisticsCollector& part = threads[i % 2];
    part.add("t", samples[i]);
    dealt.merge_ranges(part);
    part.clear_ranges();
  }
  for (const StatisticsCollector& part : threads) dealt.merge_histograms(part);
  check(dealt, "two threads");
}

TEST(StatisticsCollector, SameSamplesGiveBitIdenticalThresholds) {
  auto run = [] {
    StatisticsCollector c({"t"}, false);
    for (uint64_t i = 0; i < 6; ++i) c.add("t", random_activation(i, 4, 5000));
    c.finish();
    const TensorStatistics s = c.statistics().at("t");
    return std::vector<float>{tensor_threshold(s, ThresholdMethod::max()),
                              tensor_threshold(s, ThresholdMethod::kl()),
                              tensor_threshold(s, ThresholdMethod::max_percentile(0.99995)),
                              tensor_threshold(s, ThresholdMethod::max_percentile(0.9999))};
  };
  const std::vector<float> a = run(), b = run();
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0);
  // The methods differ on this skewed distribution (the test would not notice a method that
  // ignores its data otherwise).
  EXPECT_LT(a[1], a[0]);
  EXPECT_LT(a[3], a[2]);
}

// The statistics loops run on the CPU's vector path; every path gives the same maxima, sums,
// counts and histograms, on planes of every length around the 16-lane width (and samples of more
// than 16384 values, counted through sub-histograms), with -0, denormals,
// infinities and NaN.
TEST(StatisticsCollector, EveryVectorPathGivesTheSameStatistics) {
  auto collect = [] {
    StatisticsCollector c({"t"}, /*per_channel=*/true);
    std::mt19937 rng(3);
    std::normal_distribution<float> dist(0.0f, 2.0f);
    const float specials[] = {-0.0f, 0.0f, 1e-42f, INFINITY, -INFINITY, NAN};
    std::vector<Tensor> samples;
    for (int64_t inner : {1, 15, 16, 17, 100, 1000, 6000}) {
      Tensor t(DataType::kFloat32, {2, 3, inner});
      for (int64_t i = 0; i < t.element_count(); ++i) {
        t.data<float>()[i] = rng() % 9 == 0 ? specials[rng() % 6] : dist(rng);
      }
      samples.push_back(t);
    }
    Tensor negative_zeros(DataType::kFloat32, {1, 3, 40});
    for (int64_t i = 0; i < 120; ++i) negative_zeros.data<float>()[i] = i % 3 ? -0.0f : NAN;
    c.add("t", negative_zeros);
    for (const Tensor& t : samples) c.add("t", t);
    c.finish();
    return c.take().at("t");
  };
  const kernels::VectorPath initial = kernels::vector_path();
  std::vector<TensorStatistics> results;
  for (auto path : {kernels::VectorPath::kBaseline, kernels::VectorPath::kAvx2,
                    kernels::VectorPath::kAvx512}) {
    if (kernels::set_vector_path(path)) results.push_back(collect());
  }
  kernels::set_vector_path(initial);
  for (size_t i = 1; i < results.size(); ++i) {
    const TensorStatistics& a = results[0];
    const TensorStatistics& b = results[i];
    EXPECT_EQ(a.abs_max, b.abs_max);
    EXPECT_EQ(a.channel_abs_max, b.channel_abs_max);
    EXPECT_EQ(a.element_count, b.element_count);
    EXPECT_EQ(a.non_finite_count, b.non_finite_count);
    EXPECT_EQ(a.histogram, b.histogram);
    EXPECT_EQ(a.fine_histogram, b.fine_histogram);
    ASSERT_EQ(a.channel_sum.size(), b.channel_sum.size());
    EXPECT_EQ(0, std::memcmp(a.channel_sum.data(), b.channel_sum.data(),
                             a.channel_sum.size() * sizeof(double)))
        << "path " << i;
  }
}

}  // namespace
}  // namespace openbpu::calibration
