// Calibration points, HzCalibration insertion, int16 promotion and QDQ threshold loading.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <random>
#include <tuple>

#include "openbpu/calibration/calibration_nodes.h"
#include "openbpu/calibration/calibration_points.h"
#include "openbpu/calibration/fake_quant_evaluation.h"
#include "openbpu/calibration/qdq_thresholds.h"
#include "openbpu/common/error.h"
#include "openbpu/frontend/onnx_model.h"
#include "openbpu/ir/parse.h"
#include "openbpu/ir/verifier.h"
#include "openbpu/kernels/vector_clones.h"

namespace openbpu::calibration {
namespace {

using ir::TensorType;
using kernels::DataType;
using kernels::Tensor;

Tensor filled(kernels::Shape shape, float start, float step) {
  Tensor t(DataType::kFloat32, std::move(shape));
  for (int64_t i = 0; i < t.element_count(); ++i) t.data<float>()[i] = start + step * float(i);
  return t;
}

// x -> Conv1 -> c1 -> Relu1 -> r1 (also a graph output) -> Conv2 -> c2 -> Sigmoid -> s (output)
//                                                          c2 -> Softmax -> sm (output)
ir::Model small_model() {
  ir::Model m;
  m.opsets.push_back({"", 13});
  ir::Graph& g = *m.graph;
  ir::Value* x = g.add_value("x", TensorType::of(DataType::kFloat32, {1, 2, 3, 3}));
  g.add_input(x);
  ir::Value* w1 = g.add_constant("w1", filled({3, 2, 1, 1}, -0.5f, 0.2f));
  ir::Value* b1 = g.add_constant("b1", filled({3}, 0.1f, 0.1f));
  ir::Value* w2 = g.add_constant("w2", filled({2, 3, 1, 1}, 0.3f, -0.1f));
  auto add = [&](const std::string& op, std::vector<ir::Value*> in, const std::string& out,
                 kernels::Shape shape) {
    ir::Node* n = g.add_node({op, std::move(in), {out}, op + "_" + out, "", {}});
    n->output(0)->set_type(TensorType::of(DataType::kFloat32, shape));
    return n->output(0);
  };
  ir::Value* c1 = add("Conv", {x, w1, b1}, "c1", {1, 3, 3, 3});
  ir::Value* r1 = add("Relu", {c1}, "r1", {1, 3, 3, 3});
  ir::Value* c2 = add("Conv", {r1, w2}, "c2", {1, 2, 3, 3});
  ir::Value* s = add("Sigmoid", {c2}, "s", {1, 2, 3, 3});
  ir::Value* sm = add("Softmax", {c2}, "sm", {1, 2, 3, 3});
  g.add_output(r1);
  g.add_output(s);
  g.add_output(sm);
  return m;
}

TEST(CalibrationPoints, ActivationInputsUnreadQuantizedOutputsAndWeights) {
  const ir::Model m = small_model();
  const auto points = find_calibration_points(*m.graph, CalibrationRules::defaults());
  std::vector<std::string> names;
  for (const auto& p : points) names.push_back(p.tensor);
  EXPECT_EQ(names, (std::vector<std::string>{"x", "c1", "r1", "c2", "s", "w1", "w2"}));
  EXPECT_EQ(points[0].nodes, (std::vector<std::string>{"Conv_c1"}));
  EXPECT_EQ(points[2].nodes, (std::vector<std::string>{"Conv_c2"}));
  EXPECT_EQ(points[4].nodes, (std::vector<std::string>{"Sigmoid_s"}));  // its own output
  EXPECT_EQ(points[5].kind, CalibrationKind::kWeight);
  EXPECT_EQ(points[5].axis, 0);

  // The quantizer's predicate decides: with Sigmoid on CPU, c2 is not calibrated (Conv2 is an
  // accumulating tail) and neither is s.
  CalibrationRules rules;
  rules.quantized_node = [](const ir::Node& n) {
    return n.op_type() == "Conv" || n.op_type() == "Relu";
  };
  names.clear();
  for (const auto& p : find_calibration_points(*m.graph, rules)) names.push_back(p.tensor);
  EXPECT_EQ(names, (std::vector<std::string>{"x", "c1", "r1", "w1", "w2"}));
}

TEST(CalibrationPoints, WeightAxesOfGemmMatMulAndConvTranspose) {
  ir::Model m;
  m.opsets.push_back({"", 13});
  ir::Graph& g = *m.graph;
  ir::Value* a = g.add_value("a", TensorType::of(DataType::kFloat32, {2, 4}));
  g.add_input(a);
  ir::Value* x = g.add_value("x", TensorType::of(DataType::kFloat32, {1, 4, 2, 2}));
  g.add_input(x);
  ir::Node* gemm =
      g.add_node({"Gemm", {a, g.add_constant("wt", filled({3, 4}, 0, 1))}, {"y1"}, "gemm", "", {}});
  gemm->attrs().set("transB", int64_t{1});
  g.add_node({"Gemm", {a, g.add_constant("wn", filled({4, 3}, 0, 1))}, {"y2"}, "gemm_n", "", {}});
  g.add_node({"MatMul", {a, g.add_constant("wm", filled({4, 5}, 0, 1))}, {"y3"}, "mm", "", {}});
  g.add_node({"ConvTranspose",
              {x, g.add_constant("wc", filled({4, 6, 1, 1}, 0, 1))},
              {"y4"},
              "ct",
              "",
              {}});
  for (const char* y : {"y1", "y2", "y3", "y4"}) {
    g.find_value(y)->set_type(TensorType::of(DataType::kFloat32, {1}));
    g.add_output(g.find_value(y));
  }
  std::map<std::string, int> axis;
  for (const auto& p : find_calibration_points(g, CalibrationRules::defaults())) {
    if (p.kind == CalibrationKind::kWeight) axis[p.tensor] = p.axis;
  }
  EXPECT_EQ(axis, (std::map<std::string, int>{{"wt", 0}, {"wn", 1}, {"wm", 1}, {"wc", 1}}));
}

TEST(CalibrationNodes, InsertionRedirectsReadersAndKeepsOutputNames) {
  ir::Model m = small_model();
  const auto points = find_calibration_points(*m.graph, CalibrationRules::defaults());
  const auto nodes = insert_calibration_nodes(m, points);
  const ir::Graph& g = *m.graph;
  EXPECT_TRUE(ir::verify(g).empty());
  EXPECT_EQ(m.opset_version("horizon"), 1);
  ASSERT_EQ(nodes.size(), points.size());

  const ir::Node* cx = nodes.at("x");
  EXPECT_EQ(cx->name(), "x_HzCalibration");
  EXPECT_EQ(cx->domain(), "horizon");
  EXPECT_EQ(cx->op_type(), "HzCalibration");
  EXPECT_EQ(cx->attrs().get_string("kind"), "activation");
  EXPECT_EQ(cx->attrs().get_int("bits"), 8);
  EXPECT_EQ(cx->attrs().get_int("enabled"), 1);
  EXPECT_EQ(cx->output(0)->name(), "x_calibrated");
  EXPECT_EQ(cx->output(0)->type(), g.find_value("x")->type());
  // Every reader reads the calibrated tensor.
  for (const ir::Node* n : g.nodes()) {
    if (n->op_type() == "Conv") {
      EXPECT_EQ(n->input(0)->producer()->op_type(), "HzCalibration") << n->name();
      EXPECT_EQ(n->input(1)->producer()->attrs().get_string("kind"), "weight") << n->name();
    }
    if (n->op_type() == "Softmax") {
      EXPECT_EQ(n->input(0)->name(), "c2_calibrated");
    }
  }
  // Graph outputs keep their names and are the calibrated tensors.
  std::vector<std::string> outputs;
  for (const ir::Value* v : g.outputs()) outputs.push_back(v->name());
  EXPECT_EQ(outputs, (std::vector<std::string>{"r1", "s", "sm"}));
  EXPECT_EQ(g.find_value("r1")->producer()->name(), "r1_HzCalibration");
  EXPECT_EQ(g.find_value("r1_float")->producer()->op_type(), "Relu");
  EXPECT_EQ(g.find_value("s")->producer()->name(), "s_HzCalibration");
  // The node map rebuilt from the graph names the same tensors.
  const auto found = calibration_nodes(g);
  ASSERT_EQ(found.size(), nodes.size());
  for (const auto& [tensor, node] : nodes) EXPECT_EQ(found.at(tensor), node) << tensor;

  EXPECT_THROW(insert_calibration_nodes(m, {points[0]}), Error);  // already calibrated

  // The points read back from the calibrated graph (the accuracy debugger's view) are the
  // ones inserted: tensor, kind, axis and nodes, in graph order of their calibration nodes.
  auto key = [](const CalibrationPoint& p) {
    std::vector<std::string> readers = p.nodes;
    std::sort(readers.begin(), readers.end());
    return std::make_tuple(p.tensor, p.kind, p.axis, readers);
  };
  std::vector<decltype(key(points[0]))> inserted, read_back;
  for (const CalibrationPoint& p : points) inserted.push_back(key(p));
  for (const CalibrationPoint& p : calibration_points_of(g)) read_back.push_back(key(p));
  std::sort(inserted.begin(), inserted.end());
  std::sort(read_back.begin(), read_back.end());
  EXPECT_EQ(read_back, inserted);
}

TEST(Evaluation, ComparesSoftmaxOutputsThroughTheirLogits) {
  ir::Model m = small_model();
  EXPECT_EQ(evaluation_tensors(*m.graph), (std::vector<std::string>{"r1", "s", "c2"}));
  // The logits are class scores along the Softmax's axis (opset 13: default -1, the last).
  const std::vector<ClassScores> classes = evaluation_classes(m);
  ASSERT_EQ(classes.size(), 3u);
  EXPECT_EQ(classes[0].axis, -1);
  EXPECT_EQ(classes[1].axis, -1);
  EXPECT_EQ(classes[2].axis, 3);
  EXPECT_FALSE(classes[2].coerced);
  insert_calibration_nodes(m, find_calibration_points(*m.graph, CalibrationRules::defaults()));
  // In the calibrated model the Softmax reads the calibrated logits.
  EXPECT_EQ(evaluation_tensors(*m.graph), (std::vector<std::string>{"r1", "s", "c2_calibrated"}));
  const Tensor a = Tensor::from_values<float>({3}, std::vector<float>{1, 2, 2});
  const Tensor b = Tensor::from_values<float>({3}, std::vector<float>{2, 4, 4});
  const Tensor c = Tensor::from_values<float>({3}, std::vector<float>{-2, 1, 0});
  EXPECT_NEAR(cosine_similarity(a, b), 1.0, 1e-12);
  EXPECT_NEAR(cosine_similarity(a, c), 0.0, 1e-12);
  EXPECT_EQ(cosine_similarity(Tensor(DataType::kFloat32, {3}), Tensor(DataType::kFloat32, {3})),
            1.0);
  EXPECT_EQ(cosine_similarity(a, Tensor(DataType::kFloat32, {3})), 0.0);
  // A mask's −inf (in one or both) is left out: the cosine of the finite positions.
  const float inf = std::numeric_limits<float>::infinity();
  const Tensor masked = Tensor::from_values<float>({4}, std::vector<float>{1, 2, 2, -inf});
  const Tensor other = Tensor::from_values<float>({4}, std::vector<float>{2, 4, 4, -inf});
  const Tensor one_sided = Tensor::from_values<float>({4}, std::vector<float>{2, 4, 4, 3});
  EXPECT_NEAR(cosine_similarity(masked, other), 1.0, 1e-12);
  EXPECT_NEAR(cosine_similarity(masked, one_sided), 1.0, 1e-12);
}

// pair_sums on the AVX-512 path gives the scalar path's bits (cosines decide calibration
// methods and int16 promotions, which must not depend on the machine), and the sums are the
// ones of the finite positions: checked against a plain double loop.
TEST(CosineSimilarity, PairSumsAgreeOnEveryVectorPathAndSkipNonFinite) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-5.0f, 5.0f);
  const float inf = std::numeric_limits<float>::infinity();
  for (int64_t n : {int64_t{0}, int64_t{5}, int64_t{16}, int64_t{1000}, int64_t{4099}}) {
    std::vector<float> a(static_cast<size_t>(n)), b(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      a[size_t(i)] = i % 97 == 3 ? -inf : i % 89 == 5 ? std::nanf("") : dist(rng);
      b[size_t(i)] = i % 83 == 7 ? inf : dist(rng);
    }
    const kernels::VectorPath initial = kernels::vector_path();
    ASSERT_TRUE(kernels::set_vector_path(kernels::VectorPath::kBaseline));
    const PairSums scalar = pair_sums(a.data(), b.data(), n);
    kernels::set_vector_path(initial);
    double dot = 0, l1 = 0, cheb = 0, b1 = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double x = a[size_t(i)], y = b[size_t(i)];
      if (!std::isfinite(x) || !std::isfinite(y)) continue;
      dot += x * y;
      l1 += std::fabs(x - y);
      cheb = std::max(cheb, std::fabs(x - y));
      b1 += std::fabs(y);
    }
    EXPECT_NEAR(scalar.dot, dot, 1e-9 * (1 + std::fabs(dot))) << n;
    EXPECT_NEAR(scalar.abs_diff, l1, 1e-9 * (1 + l1)) << n;
    EXPECT_NEAR(scalar.abs_b, b1, 1e-9 * (1 + b1)) << n;
    EXPECT_EQ(scalar.max_diff, cheb) << n;
    if (kernels::set_vector_path(kernels::VectorPath::kAvx512)) {
      const PairSums avx512 = pair_sums(a.data(), b.data(), n);
      kernels::set_vector_path(initial);
      EXPECT_EQ(0, std::memcmp(&scalar, &avx512, sizeof(PairSums))) << n;
    }
  }
}

TEST(CalibrationNodes, Int16PromotionOfANodeSetsItsInputAndOutputCalibrations) {
  ir::Model m = small_model();
  auto nodes =
      insert_calibration_nodes(m, find_calibration_points(*m.graph, CalibrationRules::defaults()));
  const auto changed = set_node_calibration_bits(*m.graph, "Relu_r1", 16);
  ASSERT_EQ(changed.size(), 2u);
  EXPECT_EQ(nodes.at("c1")->attrs().get_int("bits"), 16);
  EXPECT_EQ(nodes.at("r1")->attrs().get_int("bits"), 16);
  EXPECT_EQ(nodes.at("x")->attrs().get_int("bits"), 8);
  // A Conv's weights stay int8; its activation input and output change.
  const auto conv = set_node_calibration_bits(*m.graph, "Conv_c1", 16);
  EXPECT_EQ(conv.size(), 2u);
  EXPECT_EQ(nodes.at("x")->attrs().get_int("bits"), 16);
  EXPECT_EQ(nodes.at("w1")->attrs().get_int("bits"), 8);
  EXPECT_THROW(set_node_calibration_bits(*m.graph, "no_such_node", 16), Error);
  EXPECT_THROW(set_node_calibration_bits(*m.graph, "Relu_r1", 12), Error);
}

TEST(QdqThresholds, ScalesTimesTheSymmetricRange) {
  ir::Model m;
  m.opsets.push_back({"", 13});
  ir::Graph& g = *m.graph;
  ir::Value* x = g.add_value("x", TensorType::of(DataType::kFloat32, {1, 2, 2, 2}));
  g.add_input(x);
  // int8, zero point 0: 127 * scale.
  ir::Value* s = g.add_constant("s", Tensor::scalar<float>(0.02f));
  ir::Value* z = g.add_constant("z", Tensor::scalar<int8_t>(0));
  ir::Value* q = g.add_node({"QuantizeLinear", {x, s, z}, {"q"}, "q", "", {}})->output(0);
  ir::Value* dq = g.add_node({"DequantizeLinear", {q, s, z}, {"x_dq"}, "dq", "", {}})->output(0);
  // uint8, zero point 100: max(100, 155) * scale.
  ir::Value* su = g.add_constant("su", Tensor::scalar<float>(0.1f));
  ir::Value* zu = g.add_constant("zu", Tensor::scalar<uint8_t>(100));
  ir::Value* r = g.add_node({"Relu", {dq}, {"r"}, "relu", "", {}})->output(0);
  g.add_node({"QuantizeLinear", {r, su, zu}, {"rq"}, "rq", "", {}});
  // Per-axis int8 weights.
  ir::Value* w = g.add_constant("w", filled({2, 2, 1, 1}, 0, 1));
  ir::Value* sw =
      g.add_constant("sw", Tensor::from_values<float>({2}, std::vector<float>{0.5f, 0.25f}));
  ir::Value* zw = g.add_constant("zw", Tensor::from_values<int8_t>({2}, std::vector<int8_t>{0, 0}));
  ir::Node* qw = g.add_node({"QuantizeLinear", {w, sw, zw}, {"wq"}, "wq", "", {}});
  qw->attrs().set("axis", int64_t{0});

  const auto t = load_qdq_thresholds(m);
  ASSERT_EQ(t.count("x"), 1u);
  EXPECT_FLOAT_EQ(t.at("x").values.at(0), 127 * 0.02f);
  EXPECT_EQ(t.at("x").bits, 8);
  EXPECT_EQ(t.at("x_dq").values, t.at("x").values);  // the name after the DQ too
  EXPECT_FLOAT_EQ(t.at("r").values.at(0), 155 * 0.1f);
  EXPECT_EQ(t.at("w").values, (std::vector<float>{127 * 0.5f, 127 * 0.25f}));
  EXPECT_EQ(t.at("w").axis, 0);
}

TEST(QdqThresholds, ANameThatHoldsAnotherValueAfterRewritingLosesItsThreshold) {
  // 'a' keeps its value (Mul by 1 folded away), 'b' is now the value before the Relu, 'gone'
  // no longer exists: only 'b' is dropped.
  const ir::Model before = ir::parse_model(
      "model opsets=[ai.onnx:13]\n"
      "graph g (%x: float32[2,3]) -> (%y) {\n"
      "  init %one: float32[]{1}\n"
      "  %a = Mul(%x, %one)\n"
      "  %n = Neg(%a)\n"
      "  %b = Relu(%n)\n"
      "  %gone = Abs(%b)\n"
      "  %y = Sqrt(%gone)\n"
      "}\n");
  const ir::Model after = ir::parse_model(
      "model opsets=[ai.onnx:13]\n"
      "graph g (%x: float32[2,3]) -> (%y) {\n"
      "  %a = Identity(%x)\n"
      "  %b = Neg(%a)\n"
      "  %r = Relu(%b)\n"
      "  %y = Sqrt(%r)\n"
      "}\n");
  std::map<std::string, LoadedThreshold> loaded;
  for (const char* name : {"x", "a", "b", "gone"}) loaded[name] = LoadedThreshold{{2.0f}, 1, 8};
  const std::map<std::string, Tensor> feeds = {
      {"x", Tensor::from_values<float>({2, 3}, std::vector<float>{-1, 2, -3, 0.5f, -0.25f, 4})}};
  const std::vector<std::string> dropped = drop_moved_thresholds(before, after, feeds, loaded, 1);
  EXPECT_EQ(dropped, std::vector<std::string>{"b"});
  EXPECT_EQ(loaded.size(), 3u);
  EXPECT_EQ(loaded.count("b"), 0u);
  EXPECT_EQ(loaded.count("gone"), 1u);
}

#ifdef OPENBPU_PEER_MODELS_DIR
TEST(QdqThresholds, PeerDetModelGivesAThresholdForEveryConvInput) {
  const std::filesystem::path file =
      std::filesystem::path(OPENBPU_PEER_MODELS_DIR) / "ppocrv4_det_704x960.ort-qdq-int8.onnx";
  if (!std::filesystem::exists(file)) GTEST_SKIP() << file << " is not present";
  const ir::Model m = frontend::load_onnx(file);
  const auto t = load_qdq_thresholds(m);
  size_t convs = 0;
  for (const ir::Node* n : m.graph->nodes()) {
    if (n->op_type() != "Conv") continue;
    ++convs;
    // The activation input is a DequantizeLinear output with a threshold under its own name and
    // under the name of the tensor that was quantized.
    const ir::Value* in = n->input(0);
    ASSERT_TRUE(in->producer() != nullptr && in->producer()->op_type() == "DequantizeLinear")
        << n->name();
    const ir::Value* quantized = in->producer()->input(0)->producer()->input(0);
    ASSERT_EQ(t.count(in->name()), 1u) << n->name();
    ASSERT_EQ(t.count(quantized->name()), 1u) << n->name();
    const float scale = static_cast<float>(in->producer()->input(1)->constant()->float_at(0));
    EXPECT_FLOAT_EQ(t.at(quantized->name()).values.at(0), 127 * scale) << n->name();
  }
  EXPECT_GT(convs, 50u);
}
#endif

// The decision margins of class scores: per position, the float top-1's score minus the float
// runner-up's, its relative change (at most 1) averaged; the classes along the axis (inner
// positions after it), or every dimension from the axis on before opset 13.
TEST(OutputMetrics, DecisionMarginsOfClassScores) {
  // Two positions (inner), three classes along axis 1: float margins 1 (class 0 over 1) and
  // 2 (class 2 over 0); quantized 0.25 (kept) and -1 (flipped to class 0).
  const Tensor f = Tensor::from_values<float>({1, 3, 2}, std::vector<float>{2, 1, 1, 0, 0, 3});
  const Tensor q =
      Tensor::from_values<float>({1, 3, 2}, std::vector<float>{1.5f, 2, 1.25f, 0, 0, 1});
  const OutputMetrics m = output_metrics(q, f, ClassScores{1, false});
  // Relative margin changes 0.75 / 1 and 3 / 2 (at most 1): mean 0.875.
  EXPECT_NEAR(m.score, 1 - 0.875, 1e-12);
  EXPECT_NEAR(m.agreement, 0.5, 1e-12);
  // Not class scores: the score is the cosine.
  const OutputMetrics plain = output_metrics(q, f);
  EXPECT_EQ(plain.score, plain.cosine);
  EXPECT_EQ(plain.agreement, 1.0);
  // Coerced (opset < 13, axis 1): the 6 values are one position of 6 classes (float top-1 is
  // the last, runner-up the first: margin 1; quantized 1 - 1.5 = -0.5, top-1 the second).
  const OutputMetrics coerced = output_metrics(q, f, ClassScores{1, true});
  EXPECT_NEAR(coerced.score, 0.0, 1e-12);  // a change of 1.5 margins counts as 1
  EXPECT_EQ(coerced.agreement, 0.0);
  // Equal tensors: score 1, full agreement.
  const OutputMetrics same = output_metrics(f, f, ClassScores{1, false});
  EXPECT_EQ(same.score, 1.0);
  EXPECT_EQ(same.agreement, 1.0);
}

// The debugger's metrics from the sums, by their definitions (fake_quant_evaluation.h).
TEST(OutputMetrics, FollowTheirDefinitions) {
  const Tensor q = Tensor::from_values<float>({4}, std::vector<float>{1, 2, 3, 5});
  const Tensor ref = Tensor::from_values<float>({4}, std::vector<float>{1, 2, 3, 4});
  const OutputMetrics m = output_metrics(q, ref);
  EXPECT_NEAR(m.cosine, 34.0 / (std::sqrt(39.0) * std::sqrt(30.0)), 1e-12);
  EXPECT_NEAR(m.mse, 1.0 / 4, 1e-12);
  EXPECT_NEAR(m.mre, 1.0 / 10, 1e-12);
  EXPECT_NEAR(m.sqnr, 10 * std::log10(30.0), 1e-12);
  EXPECT_EQ(m.chebyshev, 1.0);
  const OutputMetrics same = output_metrics(ref, ref);
  EXPECT_TRUE(std::isinf(same.sqnr) && same.sqnr > 0);
  EXPECT_EQ(same.mse, 0.0);
  EXPECT_EQ(same.mre, 0.0);
}

}  // namespace
}  // namespace openbpu::calibration
