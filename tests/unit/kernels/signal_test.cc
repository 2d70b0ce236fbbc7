// DFT, STFT, windows, MelWeightMatrix. Transforms are checked against a direct O(n²) DFT
// written here; windows against their closed forms; MelWeightMatrix against the ONNX test data.
#include <cmath>
#include <complex>
#include <numbers>
#include <optional>
#include <string>
#include <vector>

#include "kernel_test_support.h"

namespace openbpu::kernels::testing {
namespace {

using Complex = std::complex<double>;

std::vector<Complex> direct_dft(std::vector<Complex> x, int64_t n, bool inverse) {
  x.resize(static_cast<size_t>(n));  // truncate or zero-pad to n
  std::vector<Complex> out(static_cast<size_t>(n));
  const double sign = inverse ? 1.0 : -1.0;
  for (int64_t k = 0; k < n; ++k) {
    Complex sum = 0;
    for (int64_t j = 0; j < n; ++j) {
      const double angle = sign * 2 * std::numbers::pi * double((j * k) % n) / double(n);
      sum += x[size_t(j)] * Complex(std::cos(angle), std::sin(angle));
    }
    out[size_t(k)] = inverse ? sum / double(n) : sum;
  }
  return out;
}

// Interleaved [re, im] pairs.
std::vector<double> interleave(const std::vector<Complex>& v, size_t count) {
  std::vector<double> out;
  for (size_t i = 0; i < count; ++i) {
    out.push_back(v[i].real());
    out.push_back(v[i].imag());
  }
  return out;
}

AttributeMap ints(std::initializer_list<std::pair<const char*, int64_t>> values) {
  AttributeMap attrs;
  for (const auto& [name, v] : values) attrs.set(name, v);
  return attrs;
}

TEST(Dft, RealInputSmall) {
  auto y = run_op("DFT", {}, {make<float>({1, 4, 1}, {1, 2, 3, 4})});
  expect_near(y[0], {1, 4, 2}, {10, 0, -2, 2, -2, 0, -2, -2});
  y = run_op("DFT", ints({{"onesided", 1}}), {make<float>({1, 4, 1}, {1, 2, 3, 4})});
  expect_near(y[0], {1, 3, 2}, {10, 0, -2, 2, -2, 0});
}

TEST(Dft, MatchesDirectTransformForAllLengths) {
  for (int64_t n : {1, 2, 5, 10, 12, 16, 17, 64, 100}) {
    std::vector<float> values;
    std::vector<Complex> signal;
    for (int64_t i = 0; i < n; ++i) {
      const float re = float((i * 37) % 11) - 5.0f, im = float((i * 13) % 7) - 3.0f;
      values.insert(values.end(), {re, im});
      signal.emplace_back(re, im);
    }
    for (bool inverse : {false, true}) {
      auto y =
          run_op("DFT", ints({{"inverse", inverse ? 1 : 0}}), {make<float>({1, n, 2}, values)});
      const auto want = direct_dft(signal, n, inverse);
      expect_near(y[0], {1, n, 2}, interleave(want, size_t(n)), 1e-3);
    }
  }
}

TEST(Dft, DftLengthPadsOrTruncatesAndAxisSelectsDimension) {
  // dft_length 2 truncates [1, 2, 3, 4] to [1, 2]; 6 zero-pads it.
  const auto x = make<float>({1, 4, 1}, {1, 2, 3, 4});
  auto y = run_op("DFT", {}, {x, make<int64_t>({}, {2})});
  expect_near(y[0], {1, 2, 2}, {3, 0, -1, 0});
  y = run_op("DFT", {}, {x, make<int64_t>({}, {6})});
  std::vector<Complex> padded = {1, 2, 3, 4};
  expect_near(y[0], {1, 6, 2}, interleave(direct_dft(padded, 6, false), 6), 1e-5);
  // axis 2 of [1, 2, 3, 1]: transforms each row of 3.
  y = run_op("DFT", ints({{"axis", 2}}), {make<float>({1, 2, 3, 1}, {1, 1, 1, 1, 2, 3})});
  const auto row = direct_dft({1, 2, 3}, 3, false);
  std::vector<double> want = {3, 0, 0, 0, 0, 0};
  const auto second = interleave(row, 3);
  want.insert(want.end(), second.begin(), second.end());
  expect_near(y[0], {1, 2, 3, 2}, want, 1e-5);
}

TEST(Dft, RejectsBadInputs) {
  const auto x = make<float>({1, 4, 1}, {1, 2, 3, 4});
  EXPECT_THROW(run_op("DFT", ints({{"axis", 2}}), {x}), KernelError);  // the [re, im] axis
  EXPECT_THROW(run_op("DFT", {}, {make<float>({1, 2, 3}, {1, 2, 3, 4, 5, 6})}), KernelError);
  EXPECT_THROW(run_op("DFT", {}, {x, make<int64_t>({}, {0})}), KernelError);
  EXPECT_THROW(run_op("DFT", ints({{"inverse", 1}, {"onesided", 1}}), {x}), KernelError);
}

TEST(Stft, FramesWindowsAndOnesided) {
  std::vector<float> signal;
  for (int i = 0; i < 10; ++i) signal.push_back(float(i * i % 7));
  const auto window = make<float>({4}, {0.0f, 0.5f, 1.0f, 0.5f});
  auto y = run_op("STFT", {}, {make<float>({1, 10, 1}, signal), make<int64_t>({}, {3}), window});
  // frames = (10 - 4) / 3 + 1 = 3, bins = 4 / 2 + 1 = 3.
  std::vector<double> want;
  for (int f = 0; f < 3; ++f) {
    std::vector<Complex> frame;
    for (int k = 0; k < 4; ++k) {
      frame.emplace_back(signal[size_t(f * 3 + k)] * window.float_at(k), 0);
    }
    const auto bins = interleave(direct_dft(frame, 4, false), 3);
    want.insert(want.end(), bins.begin(), bins.end());
  }
  expect_near(y[0], {1, 3, 3, 2}, want, 1e-5);
  // frame_length without a window, two-sided.
  y = run_op("STFT", ints({{"onesided", 0}}),
             {make<float>({1, 10, 1}, signal), make<int64_t>({}, {3}), std::nullopt,
              make<int64_t>({}, {4})});
  EXPECT_EQ(y[0].shape(), (Shape{1, 3, 4, 2}));
}

TEST(Stft, RejectsBadInputs) {
  const auto signal = make<float>({1, 4, 1}, {1, 2, 3, 4});
  EXPECT_THROW(
      run_op("STFT", {}, {signal, make<int64_t>({}, {0}), std::nullopt, make<int64_t>({}, {2})}),
      KernelError);
  EXPECT_THROW(
      run_op("STFT", {}, {signal, make<int64_t>({}, {1}), std::nullopt, make<int64_t>({}, {5})}),
      KernelError);
  EXPECT_THROW(
      run_op("STFT", {},
             {signal, make<int64_t>({}, {1}), make<float>({2}, {1, 1}), make<int64_t>({}, {3})}),
      KernelError);
  EXPECT_THROW(run_op("STFT", {}, {signal, make<int64_t>({}, {1})}), KernelError);
}

TEST(Windows, ClosedForms) {
  auto size = [](int64_t n) { return make<int64_t>({}, {n}); };
  expect_near(run_op("HannWindow", {}, {size(4)})[0], {4}, {0, 0.5, 1, 0.5});
  expect_near(run_op("HannWindow", ints({{"periodic", 0}}), {size(3)})[0], {3}, {0, 1, 0});
  expect_near(run_op("HammingWindow", {}, {size(4)})[0], {4}, {4.0 / 46, 25.0 / 46, 1, 25.0 / 46});
  expect_near(run_op("BlackmanWindow", {}, {size(4)})[0], {4}, {0, 0.34, 1, 0.34});
  // Hann from test_hannwindow_symmetric (size 10), loosely: the data has float32 rounding.
  expect_near(run_op("HannWindow", ints({{"periodic", 0}}), {size(10)})[0], {10},
              {0.0, 0.116971, 0.413176, 0.75, 0.969846, 0.969846, 0.75, 0.413176, 0.116971, 0.0},
              1e-4);
}

TEST(Windows, OutputDatatypeAndErrors) {
  auto y = run_op("HannWindow", ints({{"output_datatype", 11}}), {make<int32_t>({}, {4})});
  EXPECT_EQ(y[0].dtype(), DataType::kFloat64);
  y = run_op("HannWindow", ints({{"output_datatype", 7}}), {make<int32_t>({}, {4})});
  EXPECT_EQ(y[0].to_int64_vector(), (std::vector<int64_t>{0, 0, 1, 0}));
  EXPECT_THROW(run_op("HannWindow", {}, {make<int64_t>({}, {-1})}), KernelError);
  EXPECT_THROW(run_op("HannWindow", {}, {make<float>({}, {4})}), KernelError);
  EXPECT_THROW(run_op("HannWindow", ints({{"output_datatype", 8}}), {make<int64_t>({}, {4})}),
               KernelError);
}

TEST(MelWeightMatrix, MatchesOnnxTestData) {  // test_melweightmatrix
  auto y = run_op("MelWeightMatrix", {},
                  {make<int32_t>({}, {8}), make<int32_t>({}, {16}), make<int32_t>({}, {8192}),
                   make<float>({}, {0}), make<float>({}, {4096})});
  std::vector<double> want(72, 0.0);
  // The expected matrix is all zeros except these (spectrogram bin, mel bin) entries.
  const std::vector<std::pair<int, int>> ones = {{0, 0}, {0, 1}, {1, 2}, {1, 3},
                                                 {2, 4}, {3, 5}, {4, 6}, {5, 7}};
  for (auto [bin, mel] : ones) want[size_t(bin * 8 + mel)] = 1.0;
  expect_near(y[0], {9, 8}, want);
  EXPECT_THROW(run_op("MelWeightMatrix", {},
                      {make<int32_t>({}, {8}), make<int32_t>({}, {16}), make<int32_t>({}, {8192}),
                       make<float>({}, {0}), make<float>({}, {8000})}),
               KernelError);
}

}  // namespace
}  // namespace openbpu::kernels::testing
