// recurrent_unrolling on text graphs: one exact dump (a two-step RNN), the cell variants
// checked numerically against the float kernels of LSTM / GRU / RNN, must-not-fire cases.
#include <algorithm>

#include "pass_test_support.h"

namespace openbpu::passes {
namespace {

using testing::run_pass;

int count_op(const std::string& dump, const std::string& op) {
  int n = 0;
  for (size_t pos = dump.find(" = " + op + "("); pos != std::string::npos; pos = dump.find(" = " + op + "(", pos + 1)) {
    ++n;
  }
  for (size_t pos = dump.find(" = " + op + "["); pos != std::string::npos; pos = dump.find(" = " + op + "[", pos + 1)) {
    ++n;
  }
  return n;
}

TEST(RecurrentUnrolling, ATwoStepRnnBecomesMatMulsAndTanh) {
  const auto run = run_pass(
      "model opsets=[ai.onnx:14]\n"
      "graph g (%x: float32[2,1,1]) -> (%y, %h) {\n"
      "  init %w: float32[1,1,1]{0.5}\n"
      "  init %r: float32[1,1,1]{-0.25}\n"
      "  init %b: float32[1,2]{0.125,0.0625}\n"
      "  %y, %h = RNN[hidden_size=1](%x, %w, %r, %b)\n"
      "}\n",
      "recurrent_unrolling");
  EXPECT_EQ(run.rewrites, 1);
  EXPECT_EQ(run.dump,
            "graph g (%x: float32[2,1,1]) -> (%y, %h) {\n"
            "  init %y.x_rows.shape: int64[2]{2,1}\n"
            "  init %y.x0.weight: float32[1,1]{0.5}\n"
            "  init %y.x0.bias: float32[1]{0.1875}\n"
            "  init %y.t0.x0.starts: int64[1]{0}\n"
            "  init %y.t0.x0.ends: int64[1]{1}\n"
            "  init %y.t0.x0.axes: int64[1]{0}\n"
            "  init %y.t1.x0.starts: int64[1]{1}\n"
            "  init %y.t1.x0.ends: int64[1]{2}\n"
            "  init %y.t1.x0.axes: int64[1]{0}\n"
            "  init %y.t1.pre.r.weight: float32[1,1]{-0.25}\n"
            "  init %y.y_dir.shape: int64[4]{1,2,1,1}\n"
            "  init %y.y_time_first.shape: int64[4]{2,1,1,1}\n"
            "  init %h.last.batch_major.shape: int64[3]{1,1,1}\n"
            "  %y.x_rows = Reshape(%x, %y.x_rows.shape)\n"
            "  %y.x0.matmul = MatMul(%y.x_rows, %y.x0.weight)\n"
            "  %y.x0 = Add(%y.x0.matmul, %y.x0.bias)\n"
            "  %y.t0.x0 = Slice(%y.x0, %y.t0.x0.starts, %y.t0.x0.ends, %y.t0.x0.axes)\n"
            "  %y.t0.h = Tanh(%y.t0.x0)\n"
            "  %y.t1.x0 = Slice(%y.x0, %y.t1.x0.starts, %y.t1.x0.ends, %y.t1.x0.axes)\n"
            "  %y.t1.pre.r.matmul = MatMul(%y.t0.h, %y.t1.pre.r.weight)\n"
            "  %y.t1.pre.sum = Add(%y.t1.x0, %y.t1.pre.r.matmul)\n"
            "  %y.t1.h = Tanh(%y.t1.pre.sum)\n"
            "  %y.y_steps = Concat[axis=1](%y.t0.h, %y.t1.h)\n"
            "  %y.y_dir = Reshape(%y.y_steps, %y.y_dir.shape)\n"
            "  %y = Reshape(%y.y_dir, %y.y_time_first.shape)\n"
            "  %h = Reshape(%y.t1.h, %h.last.batch_major.shape)\n"
            "}\n");
  EXPECT_LT(run.difference, 1e-5);
}

// Every variant: numerically the operator it replaces, and no recurrent node left.
void expect_unrolled(const std::string& graph, const std::string& op) {
  for (uint64_t seed : {1, 2, 3}) {
    const auto run = run_pass(graph, "recurrent_unrolling", {}, false, seed);
    ASSERT_EQ(run.rewrites, 1) << graph;
    EXPECT_EQ(count_op(run.dump, op), 0) << run.dump;
    EXPECT_LT(run.difference, 1e-5) << graph << "seed " << seed;
  }
}

TEST(RecurrentUnrolling, LstmWithStateInputsAndOutputs) {
  expect_unrolled(
      "model opsets=[ai.onnx:14]\n"
      "graph g (%x: float32[3,1,4], %h0: float32[1,1,5], %c0: float32[1,1,5]) -> (%y, %h, %c) {\n"
      "  init %w: float32[1,20,4] uniform(-0.5, 0.5)\n"
      "  init %r: float32[1,20,5] uniform(-0.5, 0.5)\n"
      "  init %b: float32[1,40] uniform(-0.2, 0.2)\n"
      "  %y, %h, %c = LSTM[hidden_size=5](%x, %w, %r, %b, _, %h0, %c0)\n"
      "}\n",
      "LSTM");
}

TEST(RecurrentUnrolling, BidirectionalLstmBatchFirstWithPeepholesAndClip) {
  expect_unrolled(
      "model opsets=[ai.onnx:14]\n"
      "graph g (%x: float32[2,3,4]) -> (%y, %c) {\n"
      "  init %w: float32[2,12,4] uniform(-0.5, 0.5)\n"
      "  init %r: float32[2,12,3] uniform(-0.5, 0.5)\n"
      "  init %b: float32[2,24] uniform(-0.2, 0.2)\n"
      "  init %p: float32[2,9] uniform(-0.3, 0.3)\n"
      "  %y, %h, %c = LSTM[hidden_size=3, direction=\"bidirectional\", layout=1, clip=1.5](%x, %w, %r, %b, _, _, _, %p)\n"
      "}\n",
      "LSTM");
}

TEST(RecurrentUnrolling, GruBothResetForms) {
  for (const char* lbr : {"0", "1"}) {
    expect_unrolled(std::string("model opsets=[ai.onnx:14]\n"
                                "graph g (%x: float32[4,2,3], %h0: float32[1,2,4]) -> (%y, %h) {\n"
                                "  init %w: float32[1,12,3] uniform(-0.6, 0.6)\n"
                                "  init %r: float32[1,12,4] uniform(-0.6, 0.6)\n"
                                "  init %b: float32[1,24] uniform(-0.3, 0.3)\n"
                                "  %y, %h = GRU[hidden_size=4, linear_before_reset=") +
                        lbr + "](%x, %w, %r, %b, _, %h0)\n}\n",
                    "GRU");
    // No initial state: the first step has no recurrent term.
    expect_unrolled(std::string("model opsets=[ai.onnx:14]\n"
                                "graph g (%x: float32[3,1,3]) -> (%h) {\n"
                                "  init %w: float32[1,12,3] uniform(-0.6, 0.6)\n"
                                "  init %r: float32[1,12,4] uniform(-0.6, 0.6)\n"
                                "  init %b: float32[1,24] uniform(-0.3, 0.3)\n"
                                "  %y, %h = GRU[hidden_size=4, direction=\"reverse\", linear_before_reset=") +
                        lbr + "](%x, %w, %r, %b)\n}\n",
                    "GRU");
  }
}

TEST(RecurrentUnrolling, RnnWithOtherActivationsAndFullSequenceLengths) {
  expect_unrolled(
      "model opsets=[ai.onnx:14]\n"
      "graph g (%x: float32[3,2,2]) -> (%y) {\n"
      "  init %w: float32[2,3,2] uniform(-0.6, 0.6)\n"
      "  init %r: float32[2,3,3] uniform(-0.6, 0.6)\n"
      "  init %lens: int32[2]{3,3}\n"
      "  %y = RNN[hidden_size=3, direction=\"bidirectional\", activations=[\"Relu\", \"HardSigmoid\"], "
      "activation_alpha=[0.3], activation_beta=[0.4]](%x, %w, %r, _, %lens)\n"
      "}\n",
      "RNN");
}

TEST(RecurrentUnrolling, MustNotFire) {
  // Weights computed, not constant.
  testing::expect_unchanged(
      "model opsets=[ai.onnx:14]\n"
      "graph g (%x: float32[2,1,2], %w: float32[1,3,2]) -> (%y) {\n"
      "  init %r: float32[1,3,3]\n"
      "  %y = RNN[hidden_size=3](%x, %w, %r)\n"
      "}\n",
      "recurrent_unrolling");
  // A sequence shorter than X for one batch entry.
  testing::expect_unchanged(
      "model opsets=[ai.onnx:14]\n"
      "graph g (%x: float32[2,2,2]) -> (%y) {\n"
      "  init %w: float32[1,3,2]\n"
      "  init %r: float32[1,3,3]\n"
      "  init %lens: int32[2]{2,1}\n"
      "  %y = RNN[hidden_size=3](%x, %w, %r, _, %lens)\n"
      "}\n",
      "recurrent_unrolling");
  // An activation the BPU has no operator for, input_forget, an unknown sequence length.
  testing::expect_unchanged(
      "model opsets=[ai.onnx:14]\n"
      "graph g (%x: float32[2,1,2]) -> (%y) {\n"
      "  init %w: float32[1,3,2]\n"
      "  init %r: float32[1,3,3]\n"
      "  %y = RNN[hidden_size=3, activations=[\"Softsign\"]](%x, %w, %r)\n"
      "}\n",
      "recurrent_unrolling");
  testing::expect_unchanged(
      "model opsets=[ai.onnx:14]\n"
      "graph g (%x: float32[2,1,2]) -> (%y) {\n"
      "  init %w: float32[1,8,2]\n"
      "  init %r: float32[1,8,2]\n"
      "  %y = LSTM[hidden_size=2, input_forget=1](%x, %w, %r)\n"
      "}\n",
      "recurrent_unrolling");
  testing::expect_unchanged(
      "model opsets=[ai.onnx:14]\n"
      "graph g (%x: float32[T,1,2]) -> (%y) {\n"
      "  init %w: float32[1,6,2]\n"
      "  init %r: float32[1,6,2]\n"
      "  %y = GRU[hidden_size=2](%x, %w, %r)\n"
      "}\n",
      "recurrent_unrolling");
}

}  // namespace
}  // namespace openbpu::passes
