// RNN, GRU, LSTM. Expected values from the ONNX backend test data (test_simple_rnn_*,
// test_gru_*, test_lstm_*) or worked out by hand.
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "kernel_test_support.h"

namespace openbpu::kernels::testing {
namespace {

Tensor filled(Shape shape, float value) {
  Tensor t(DataType::kFloat32, std::move(shape));
  for (int64_t i = 0; i < t.element_count(); ++i) t.data<float>()[i] = value;
  return t;
}

AttributeMap hidden(int64_t size) {
  AttributeMap attrs;
  attrs.set("hidden_size", size);
  return attrs;
}

const Tensor kX = make<float>({1, 3, 2}, {1, 2, 3, 4, 5, 6});

TEST(Rnn, DefaultsTanh) {  // test_simple_rnn_defaults
  auto y = run_op("RNN", hidden(4), {kX, filled({1, 4, 2}, 0.1f), filled({1, 4, 4}, 0.1f)}, 2);
  expect_near(y[1], {1, 3, 4},
              {0.2913126, 0.2913126, 0.2913126, 0.2913126, 0.6043678, 0.6043678, 0.6043678,
               0.6043678, 0.8004990, 0.8004990, 0.8004990, 0.8004990});
  EXPECT_EQ(y[0].shape(), (Shape{1, 1, 3, 4}));
}

TEST(Rnn, BatchwiseLayout) {  // test_simple_rnn_batchwise
  AttributeMap attrs = hidden(4);
  attrs.set("layout", int64_t{1});
  auto y = run_op("RNN", attrs,
                  {make<float>({3, 1, 2}, {1, 2, 3, 4, 5, 6}), filled({1, 4, 2}, 0.5f),
                   filled({1, 4, 4}, 0.5f)},
                  2);
  const std::vector<double> want = {0.9051482, 0.9051482, 0.9051482, 0.9051482,
                                    0.9981779, 0.9981779, 0.9981779, 0.9981779,
                                    0.9999666, 0.9999666, 0.9999666, 0.9999666};
  expect_near(y[0], {3, 1, 1, 4}, want);
  expect_near(y[1], {3, 1, 4}, want);
  // layout did not exist before opset 14.
  EXPECT_THROW(run_op("RNN", attrs,
                      {make<float>({3, 1, 2}, {1, 2, 3, 4, 5, 6}), filled({1, 4, 2}, 0.5f),
                       filled({1, 4, 4}, 0.5f)},
                      2, 7),
               KernelError);
}

TEST(Rnn, BidirectionalLinearWithSequenceLengths) {
  // hidden 1, input 1, W = 1, R = 0.5, Affine(1, 0) activation: h_t = x_t + 0.5 h_{t-1}.
  AttributeMap attrs = hidden(1);
  attrs.set("direction", std::string("bidirectional"));
  attrs.set("activations", std::vector<std::string>{"Affine", "affine"});
  attrs.set("activation_alpha", std::vector<float>{1, 1});
  attrs.set("activation_beta", std::vector<float>{0, 0});
  const auto x = make<float>({2, 2, 1}, {1, 3, 2, 4});  // [seq, batch, 1]
  auto y = run_op(
      "RNN", attrs,
      {x, filled({2, 1, 1}, 1), filled({2, 1, 1}, 0.5f), std::nullopt, make<int32_t>({2}, {2, 1})},
      2);
  // Y [seq, dirs, batch, 1]. Batch 0: forward 1, 2.5; reverse (from t = 1) 2, then 1 + 1 = 2.
  // Batch 1 (length 1): forward 3 then padding; reverse starts at t = 0: 3.
  expect_near(y[0], {2, 2, 2, 1}, {1, 3, 2, 3, 2.5, 0, 2, 0});
  expect_near(y[1], {2, 2, 1}, {2.5, 3, 2, 3});
}

TEST(Gru, Defaults) {  // test_gru_defaults
  auto y = run_op("GRU", hidden(5), {kX, filled({1, 15, 2}, 0.1f), filled({1, 15, 5}, 0.1f)}, 2);
  std::vector<double> want;
  for (double v : {0.1239703, 0.2005366, 0.1999165}) want.insert(want.end(), 5, v);
  expect_near(y[1], {1, 3, 5}, want);
}

TEST(Gru, LinearBeforeReset) {
  // hidden 1: z = r = sigmoid(0) = 0.5, initial h = 1, x = 1, Wh = Rh = 1, Rbh = 1.
  //   default: h~ = tanh(x + (r h) Rh + Rbh) = tanh(2.5)
  //   linear_before_reset: h~ = tanh(x + r (h Rh + Rbh)) = tanh(2)
  //   H = (1 - z) h~ + z h.
  const auto w = make<float>({1, 3, 1}, {0, 0, 1});
  const auto b = make<float>({1, 6}, {0, 0, 0, 0, 0, 1});
  const auto h0 = make<float>({1, 1, 1}, {1});
  const auto x = make<float>({1, 1, 1}, {1});
  auto y = run_op("GRU", hidden(1), {x, w, w, b, std::nullopt, h0}, 2);
  expect_near(y[1], {1, 1, 1}, {0.5 * std::tanh(2.5) + 0.5});
  AttributeMap attrs = hidden(1);
  attrs.set("linear_before_reset", int64_t{1});
  y = run_op("GRU", attrs, {x, w, w, b, std::nullopt, h0}, 2);
  expect_near(y[1], {1, 1, 1}, {0.5 * std::tanh(2.0) + 0.5});
}

TEST(Lstm, Defaults) {  // test_lstm_defaults
  auto y = run_op("LSTM", hidden(3), {kX, filled({1, 12, 2}, 0.1f), filled({1, 12, 3}, 0.1f)}, 3);
  std::vector<double> want;
  for (double v : {0.0952412, 0.2560645, 0.4032378}) want.insert(want.end(), 3, v);
  expect_near(y[1], {1, 3, 3}, want);
  EXPECT_EQ(y[2].shape(), (Shape{1, 3, 3}));
}

TEST(Lstm, Peepholes) {  // test_lstm_with_peepholes
  const auto x = make<float>({1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  auto y = run_op("LSTM", hidden(3),
                  {x, filled({1, 12, 4}, 0.1f), filled({1, 12, 3}, 0.1f), filled({1, 24}, 0),
                   make<int32_t>({2}, {1, 1}), filled({1, 2, 3}, 0), filled({1, 2, 3}, 0),
                   filled({1, 9}, 0.1f)},
                  2);
  expect_near(y[1], {1, 2, 3}, {0.3750691, 0.3750691, 0.3750691, 0.6801309, 0.6801309, 0.6801309});
}

TEST(Lstm, InputForgetCouplesGates) {
  // All weights zero, input-gate bias 2, initial c = 1, x = 0:
  //   i = sigmoid(2), candidate = tanh(0) = 0, f = sigmoid(0) = 0.5 or 1 - i.
  const auto x = make<float>({1, 1, 1}, {0});
  const auto w = filled({1, 4, 1}, 0);
  const auto b = make<float>({1, 8}, {2, 0, 0, 0, 0, 0, 0, 0});
  const auto c0 = make<float>({1, 1, 1}, {1});
  const std::vector<std::optional<Tensor>> in = {x, w, w, b, std::nullopt, std::nullopt, c0};
  auto y = run_op("LSTM", hidden(1), in, 3);
  expect_near(y[2], {1, 1, 1}, {0.5});
  expect_near(y[1], {1, 1, 1}, {0.5 * std::tanh(0.5)});
  AttributeMap attrs = hidden(1);
  attrs.set("input_forget", int64_t{1});
  y = run_op("LSTM", attrs, in, 3);
  const double forget = 1 - 1 / (1 + std::exp(-2.0));
  expect_near(y[2], {1, 1, 1}, {forget});
}

TEST(Recurrent, RejectsBadAttributesAndShapes) {
  const auto w = filled({1, 4, 2}, 0.1f);
  const auto r = filled({1, 4, 4}, 0.1f);
  AttributeMap bad_direction = hidden(4);
  bad_direction.set("direction", std::string("sideways"));
  EXPECT_THROW(run_op("RNN", bad_direction, {kX, w, r}), KernelError);
  AttributeMap unknown_activation = hidden(4);
  unknown_activation.set("activations", std::vector<std::string>{"Gelu"});
  EXPECT_THROW(run_op("RNN", unknown_activation, {kX, w, r}), KernelError);
  AttributeMap too_many = hidden(4);
  too_many.set("activations", std::vector<std::string>{"Tanh", "Tanh", "Tanh"});
  EXPECT_THROW(run_op("RNN", too_many, {kX, w, r}), KernelError);
  // W with the wrong gate count for GRU, R with the wrong hidden size.
  EXPECT_THROW(run_op("GRU", hidden(4), {kX, w, r}), KernelError);
  EXPECT_THROW(run_op("RNN", hidden(4), {kX, w, filled({1, 4, 3}, 0.1f)}), KernelError);
  // sequence_lens beyond the sequence length.
  EXPECT_THROW(run_op("RNN", hidden(4), {kX, w, r, std::nullopt, make<int32_t>({3}, {1, 2, 1})}),
               KernelError);
  // Integer input.
  EXPECT_THROW(run_op("RNN", hidden(4), {make<int32_t>({1, 1, 2}, {1, 2}), w, r}), KernelError);
}

}  // namespace
}  // namespace openbpu::kernels::testing
