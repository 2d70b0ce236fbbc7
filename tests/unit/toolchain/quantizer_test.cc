#include <gtest/gtest.h>

#include <random>

#include "openbpu/common/error.h"
#include "openbpu/ir/dump.h"
#include "openbpu/ir/verifier.h"
#include "openbpu/quantization/quantizer.h"

namespace openbpu::quantization {
namespace {

using ir::TensorType;
using kernels::DataType;
using kernels::Tensor;

const simulator::MarchSpec& x5() { return simulator::march_spec(simulator::March::kBayesE); }

Tensor random_tensor(kernels::Shape shape, uint32_t seed) {
  Tensor t(DataType::kFloat32, std::move(shape));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1, 1);
  for (int64_t i = 0; i < t.element_count(); ++i) t.data<float>()[i] = d(rng);
  return t;
}

// x → Conv → Relu → Conv → Add(relu) → Relu → GlobalAveragePool → Flatten → Gemm → Softmax → y
ir::Model residual_model() {
  ir::Model m;
  m.opsets.push_back({"", 13});
  ir::Graph& g = *m.graph;
  g.set_name("residual");
  auto typed = [](ir::Node* n, kernels::Shape s) {
    n->output(0)->set_type(TensorType::of(DataType::kFloat32, s));
    return n->output(0);
  };
  ir::Value* x = g.add_value("x", TensorType::of(DataType::kFloat32, {1, 3, 8, 8}));
  g.add_input(x);
  kernels::AttributeMap pads;
  pads.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  ir::Value* c1 = typed(g.add_node({"Conv", {x, g.add_constant("w1", random_tensor({4, 3, 3, 3}, 1)),
                                             g.add_constant("b1", random_tensor({4}, 2))},
                                    {"c1"}, "conv1", "", pads}), {1, 4, 8, 8});
  ir::Value* r1 = typed(g.add_node({"Relu", {c1}, {"r1"}, "relu1", "", {}}), {1, 4, 8, 8});
  ir::Value* c2 = typed(g.add_node({"Conv", {r1, g.add_constant("w2", random_tensor({4, 4, 3, 3}, 3))},
                                    {"c2"}, "conv2", "", pads}), {1, 4, 8, 8});
  ir::Value* add = typed(g.add_node({"Add", {c2, r1}, {"sum"}, "add", "", {}}), {1, 4, 8, 8});
  ir::Value* r2 = typed(g.add_node({"Relu", {add}, {"r2"}, "relu2", "", {}}), {1, 4, 8, 8});
  ir::Value* gap = typed(g.add_node({"GlobalAveragePool", {r2}, {"gap"}, "gap", "", {}}), {1, 4, 1, 1});
  ir::Value* flat = typed(g.add_node({"Flatten", {gap}, {"flat"}, "flatten", "", {}}), {1, 4});
  kernels::AttributeMap trans;
  trans.set("transB", int64_t{1});
  ir::Value* fc = typed(g.add_node({"Gemm", {flat, g.add_constant("fc_w", random_tensor({5, 4}, 4)),
                                             g.add_constant("fc_b", random_tensor({5}, 5))},
                                    {"logits"}, "fc", "", trans}), {1, 5});
  ir::Value* y = typed(g.add_node({"Softmax", {fc}, {"y"}, "softmax", "", {}}), {1, 5});
  g.add_output(y);
  return m;
}

TEST(QuantizationPlan, FusesResidualAndActivationsAndFindsTheTensorsToCalibrate) {
  ir::Model m = residual_model();
  const QuantizationPlan plan = plan_quantization(*m.graph, x5());
  const ir::Graph& g = *m.graph;
  auto node = [&](const char* name) {
    for (const ir::Node* n : g.nodes()) {
      if (n->name() == name) return n;
    }
    return static_cast<const ir::Node*>(nullptr);
  };
  EXPECT_EQ(plan.role(node("relu1")), Role::kFusedActivation);
  EXPECT_EQ(plan.role(node("add")), Role::kFusedResidual);
  EXPECT_EQ(plan.role(node("relu2")), Role::kFusedActivation);
  EXPECT_EQ(plan.role(node("softmax")), Role::kCpu);
  EXPECT_TRUE(plan.fusions.at(node("fc")).int32_output);
  EXPECT_FALSE(plan.fusions.at(node("conv2")).int32_output);
  EXPECT_EQ(plan.fusions.at(node("conv2")).output->name(), "r2");
  std::vector<std::string> tensors;
  for (const auto& t : plan.calibration) tensors.push_back(t.tensor + (t.weight ? "(w)" : ""));
  EXPECT_EQ(tensors, (std::vector<std::string>{"x", "r1", "r2", "gap", "w1(w)", "w2(w)", "fc_w(w)"}));
  EXPECT_EQ(plan.inherits_scale.at(g.find_value("flat")), g.find_value("gap"));
}

// Two convolutions sharing one weight (an unrolled loop's body, tied weights): one calibration
// target for the weight, naming both readers.
TEST(QuantizationPlan, ASharedWeightIsCalibratedOnceForAllItsReaders) {
  ir::Model m;
  m.opsets.push_back({"", 13});
  ir::Graph& g = *m.graph;
  ir::Value* x = g.add_value("x", TensorType::of(DataType::kFloat32, {1, 4, 8, 8}));
  g.add_input(x);
  ir::Value* w = g.add_constant("w", random_tensor({4, 4, 1, 1}, 1));
  ir::Node* a = g.add_node({"Conv", {x, w}, {"a"}, "conv_a", "", {}});
  ir::Node* b = g.add_node({"Conv", {a->output(0), w}, {"y"}, "conv_b", "", {}});
  for (ir::Node* n : {a, b}) n->output(0)->set_type(TensorType::of(DataType::kFloat32, {1, 4, 8, 8}));
  g.add_output(b->output(0));
  const QuantizationPlan plan = plan_quantization(g, x5());
  int targets = 0;
  for (const CalibrationTarget& t : plan.calibration) {
    if (t.tensor != "w") continue;
    ++targets;
    EXPECT_TRUE(t.weight);
    EXPECT_EQ(t.nodes, (std::vector<std::string>{"conv_a", "conv_b"}));
  }
  EXPECT_EQ(targets, 1);
}

TEST(Quantizer, EmitsIntegerOperatorsWithBordersAndStripsCalibration) {
  ir::Model m = residual_model();
  std::map<std::string, TensorCalibration> calibration;
  for (const char* t : {"x", "r1", "r2", "gap"}) calibration[t] = TensorCalibration{{4.0f}, 8, 1, false, true, "max"};
  calibration["r2"].bits = 16;
  const QuantizeResult r = quantize_model(m, calibration, x5());
  const ir::Graph& q = *r.model.graph;
  EXPECT_TRUE(ir::verify(q).empty()) << ir::verify(q).front();
  std::vector<std::string> ops;
  for (const ir::Node* n : q.nodes()) ops.push_back(n->op_type());
  EXPECT_EQ(ops, (std::vector<std::string>{"Quantize", "HzSQuantizedConv", "HzSQuantizedConv",
                                           "HzSQuantizedGlobalAveragePool", "HzRequantize", "Flatten",
                                           "Reshape", "HzSQuantizedConv", "Reshape", "Dequantize", "Softmax"}))
      << ir::dump(q);
  // The pool keeps its int16 input's width; the int8 output follows as a requantization.
  EXPECT_FALSE(q.nodes()[3]->attrs().has("output_type"));
  EXPECT_EQ(q.nodes()[3]->output(0)->type().dtype, DataType::kInt16);
  EXPECT_EQ(q.nodes()[4]->attrs().get_string("output_type"), "int8");
  EXPECT_EQ(q.nodes()[4]->output(0)->type().dtype, DataType::kInt8);
  const ir::Node* conv2 = q.nodes()[2];
  EXPECT_EQ(conv2->inputs().size(), 4u);  // x, w, b, residual
  EXPECT_EQ(conv2->attrs().get_string("output_type"), "int16");
  EXPECT_EQ(conv2->attrs().get_int("clip_min"), 0);
  EXPECT_EQ(q.nodes()[7]->attrs().get_string("output_type"), "int32");
  EXPECT_EQ(q.nodes()[9]->attrs().get_floats("scales").size(), 5u);
  EXPECT_EQ(q.outputs()[0]->name(), "y");
  EXPECT_EQ(q.find_value("x")->type().to_string(), "float32[1,3,8,8]");
  EXPECT_EQ(r.nodes.size(), m.graph->nodes().size());
  EXPECT_EQ(r.nodes[0].bpu_type, "HzSQuantizedConv");
  EXPECT_EQ(r.nodes[0].subgraph, 0);
  EXPECT_EQ(r.nodes.back().bpu_type, "Softmax");
}

// x → Conv → Tanh / Sin: an int16 table over an input range far wider than where the function
// moves (an LSTM cell state into Tanh) gets a narrowing requantization first; Sin keeps moving
// and keeps its input; an int8 table (exact per input code) never narrows.
TEST(Quantizer, ASaturatingTableNarrowsItsInput) {
  for (const int bits : {8, 16}) {
    for (const char* op : {"Tanh", "Sin"}) {
      ir::Model m;
      m.opsets.push_back({"", 13});
      ir::Graph& g = *m.graph;
      ir::Value* x = g.add_value("x", TensorType::of(DataType::kFloat32, {1, 4, 2, 2}));
      g.add_input(x);
      ir::Node* conv = g.add_node({"Conv", {x, g.add_constant("w", random_tensor({4, 4, 1, 1}, 7))}, {"c"}, "conv", "", {}});
      conv->output(0)->set_type(x->type());
      ir::Node* f = g.add_node({op, {conv->output(0)}, {"y"}, "f", "", {}});
      f->output(0)->set_type(x->type());
      g.add_output(f->output(0));
      std::map<std::string, TensorCalibration> calibration;
      calibration["x"] = TensorCalibration{{1.0f}, bits, 1, false, true, "max"};
      calibration["c"] = TensorCalibration{{300.0f}, bits, 1, false, true, "max"};
      calibration["y"] = TensorCalibration{{300.0f}, bits, 1, false, true, "max"};
      if (std::string(op) == "Tanh") calibration["y"].thresholds = {1.0f};
      const QuantizeResult r = quantize_model(m, calibration, x5());
      const ir::Graph& q = *r.model.graph;
      EXPECT_TRUE(ir::verify(q).empty()) << ir::verify(q).front();
      const ir::Node* narrow = nullptr;
      const ir::Node* lut = nullptr;
      for (const ir::Node* n : q.nodes()) {
        if (n->name() == "f_narrow_input") narrow = n;
        if (n->op_type() == "HzLut") lut = n;
      }
      ASSERT_NE(lut, nullptr) << ir::dump(q);
      const float range = 300.0f;
      if (std::string(op) == "Sin" || bits == 8) {
        EXPECT_EQ(narrow, nullptr) << bits << " " << ir::dump(q);
        continue;
      }
      ASSERT_NE(narrow, nullptr) << bits << " " << ir::dump(q);
      EXPECT_EQ(lut->input(0), narrow->output(0));
      // Tanh is within half an int16 output step of ±1 beyond |x| ≈ 5.5.
      const float covered = lut->attrs().get_float("input_scale") * 32767.0f;
      EXPECT_GT(covered, 5.0f);
      EXPECT_LT(covered, 6.0f);
      EXPECT_LT(covered, range / 2);
    }
  }
}

// a → Conv_a ┐
//             Add → y: the residual goes to the later Conv, whose other input already exists.
// b → Conv_b ┘
TEST(Quantizer, TwoBranchesIntoAnAddFuseIntoTheLaterConv) {
  ir::Model m;
  m.opsets.push_back({"", 13});
  ir::Graph& g = *m.graph;
  kernels::AttributeMap pads;
  pads.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  ir::Value* a = g.add_value("a", TensorType::of(DataType::kFloat32, {1, 3, 8, 8}));
  ir::Value* b = g.add_value("b", TensorType::of(DataType::kFloat32, {1, 2, 8, 8}));
  g.add_input(a);
  g.add_input(b);
  ir::Node* conv_a = g.add_node({"Conv", {a, g.add_constant("wa", random_tensor({4, 3, 3, 3}, 1))}, {"ca"}, "conv_a", "", pads});
  ir::Node* conv_b = g.add_node({"Conv", {b, g.add_constant("wb", random_tensor({4, 2, 3, 3}, 2))}, {"cb"}, "conv_b", "", pads});
  ir::Node* add = g.add_node({"Add", {conv_a->output(0), conv_b->output(0)}, {"y"}, "add", "", {}});
  for (ir::Node* n : {conv_a, conv_b, add}) n->output(0)->set_type(TensorType::of(DataType::kFloat32, {1, 4, 8, 8}));
  g.add_output(add->output(0));

  const QuantizationPlan plan = plan_quantization(g, x5());
  EXPECT_EQ(plan.role(add), Role::kFusedResidual);
  ASSERT_TRUE(plan.fusions.count(conv_b));
  EXPECT_EQ(plan.fusions.at(conv_b).residual, conv_a->output(0));
  EXPECT_EQ(plan.fusions.at(conv_a).residual, nullptr);

  std::map<std::string, TensorCalibration> calibration;
  for (const char* t : {"a", "b", "ca", "y"}) calibration[t] = TensorCalibration{{4.0f}, 8, 1, false, true, "max"};
  const QuantizeResult r = quantize_model(m, calibration, x5());  // threw "read before it is produced"
  EXPECT_TRUE(ir::verify(*r.model.graph).empty()) << ir::verify(*r.model.graph).front();
}

// x → Conv → ArgMax(axis 1) → y, an int64 graph output.
ir::Model argmax_model(int64_t channels) {
  ir::Model m;
  m.opsets.push_back({"", 13});
  ir::Graph& g = *m.graph;
  g.set_name("argmax");
  ir::Value* x = g.add_value("x", TensorType::of(DataType::kFloat32, {1, 3, 4, 4}));
  g.add_input(x);
  ir::Node* conv = g.add_node({"Conv", {x, g.add_constant("w", random_tensor({channels, 3, 1, 1}, 7))},
                               {"c"}, "conv", "", {}});
  conv->output(0)->set_type(TensorType::of(DataType::kFloat32, {1, channels, 4, 4}));
  kernels::AttributeMap a;
  a.set("axis", int64_t{1});
  ir::Node* am = g.add_node({"ArgMax", {conv->output(0)}, {"y"}, "argmax", "", a});
  am->output(0)->set_type(TensorType::of(DataType::kInt64, {1, 1, 4, 4}));
  g.add_output(am->output(0));
  return m;
}

TEST(Quantizer, ArgMaxRunsOnTheBpuWithInt32IndicesAndACastToInt64) {
  ir::Model m = argmax_model(8);
  const QuantizationPlan plan = plan_quantization(*m.graph, x5());
  EXPECT_FALSE(plan.is_quantized(m.graph->find_value("y")));  // indices: no scale, no threshold
  std::vector<std::string> calibrated;
  for (const auto& t : plan.calibration) calibrated.push_back(t.tensor);
  EXPECT_EQ(calibrated, (std::vector<std::string>{"x", "c", "w"}));
  std::map<std::string, TensorCalibration> calibration;
  for (const char* t : {"x", "c"}) calibration[t] = TensorCalibration{{2.0f}, 8, 1, false, true, "max"};
  const QuantizeResult r = quantize_model(m, calibration, x5());
  const ir::Graph& q = *r.model.graph;
  EXPECT_TRUE(ir::verify(q).empty()) << ir::verify(q).front();
  std::vector<std::string> ops;
  for (const ir::Node* n : q.nodes()) ops.push_back(n->op_type());
  EXPECT_EQ(ops, (std::vector<std::string>{"Quantize", "HzSQuantizedConv", "HzQuantizedArgMax", "Cast"}))
      << ir::dump(q);
  const ir::Node* argmax = q.nodes()[2];
  EXPECT_EQ(argmax->domain(), "horizon");
  EXPECT_EQ(argmax->attrs().get_int("axis"), 1);
  EXPECT_EQ(argmax->output(0)->type().dtype, DataType::kInt32);
  EXPECT_EQ(q.nodes()[1]->attrs().get_string("output_type"), "int8");  // read by the BPU: no int32 tail
  EXPECT_EQ(q.outputs()[0]->name(), "y");
  EXPECT_EQ(q.outputs()[0]->type().to_string(), "int64[1,1,4,4]");
  EXPECT_EQ(r.nodes[1].bpu_type, "HzQuantizedArgMax");
  EXPECT_EQ(r.nodes[1].unit, bpu_support::Unit::kBpu);
  EXPECT_EQ(r.nodes[1].subgraph, 0);
}

TEST(Quantizer, ArgMaxOverTooManyChannelsStaysOnTheCpuWithItsRule) {
  ir::Model m = argmax_model(65);
  std::map<std::string, TensorCalibration> calibration;
  calibration["x"] = TensorCalibration{{2.0f}, 8, 1, false, true, "max"};
  const QuantizeResult r = quantize_model(m, calibration, x5());
  EXPECT_EQ(r.nodes[1].unit, bpu_support::Unit::kCpu);
  EXPECT_EQ(r.nodes[1].cpu_reason, "the reduced axis must have [1, 64] elements");
  std::vector<std::string> ops;
  for (const ir::Node* n : r.model.graph->nodes()) ops.push_back(n->op_type());
  EXPECT_EQ(ops, (std::vector<std::string>{"Quantize", "HzSQuantizedConv", "Dequantize", "ArgMax"}));
}

TEST(Quantizer, NamesTheTensorWithoutAThreshold) {
  ir::Model m = residual_model();
  try {
    quantize_model(m, {}, x5());
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tensor 'x' is quantized but the calibrated model has no threshold"),
              std::string::npos)
        << e.what();
  }
}

// x → Conv → Softmax(axis 1) on the BPU (run_on_bpu), of the given opset.
ir::Model conv_softmax_model(int64_t opset) {
  ir::Model m;
  m.opsets.push_back({"", opset});
  ir::Graph& g = *m.graph;
  g.set_name("conv_softmax");
  ir::Value* x = g.add_value("x", TensorType::of(DataType::kFloat32, {1, 3, 4, 4}));
  g.add_input(x);
  ir::Node* conv = g.add_node({"Conv", {x, g.add_constant("w", random_tensor({6, 3, 1, 1}, 1))}, {"c"}, "conv", "", {}});
  conv->output(0)->set_type(TensorType::of(DataType::kFloat32, {1, 6, 4, 4}));
  kernels::AttributeMap axis;
  axis.set("axis", int64_t{1});
  ir::Node* sm = g.add_node({"Softmax", {conv->output(0)}, {"y"}, "softmax", "", axis});
  sm->output(0)->set_type(TensorType::of(DataType::kFloat32, {1, 6, 4, 4}));
  g.add_output(sm->output(0));
  return m;
}

TEST(Quantizer, SoftmaxErrorsNameTheNodeAndTheRule) {
  QuantizeOptions options;
  options.plan.overrides.run_on_bpu = {"softmax"};
  std::map<std::string, TensorCalibration> calibration;
  calibration["x"] = TensorCalibration{{2.0f}, 8, 1, false, true, "max"};
  calibration["c"] = TensorCalibration{{8.0f}, 16, 1, false, true, "max"};
  calibration["y"] = TensorCalibration{{1.0f}, 16, 1, false, true, "max"};
  auto error_of = [&](const ir::Model& m, const std::map<std::string, TensorCalibration>& c) -> std::string {
    try {
      quantize_model(m, c, x5(), options);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  // Opset 13: along axis 1, quantized.
  EXPECT_EQ(error_of(conv_softmax_model(13), calibration), "");
  // Opset 11 over axes 1..3 (the optimizer would have reshaped it): refused, not mistranslated.
  EXPECT_NE(error_of(conv_softmax_model(11), calibration)
                .find("node 'softmax': opset 11 Softmax normalises over axes 1..3 of [1,6,4,4]"),
            std::string::npos)
      << error_of(conv_softmax_model(11), calibration);
  // An input scale the exponent multiplier cannot hold.
  auto wide = calibration;
  wide["c"] = TensorCalibration{{1e9f}, 16, 1, false, true, "max"};
  EXPECT_NE(error_of(conv_softmax_model(13), wide).find("node 'softmax': input scale"), std::string::npos)
      << error_of(conv_softmax_model(13), wide);
}

TEST(StripCalibration, RestoresTheFloatGraphAndReturnsThresholds) {
  ir::Model m = residual_model();
  ir::Graph& g = *m.graph;
  // x → HzCalibration → readers
  ir::Value* x = g.find_value("x");
  kernels::AttributeMap a;
  a.set("kind", std::string("activation"));
  a.set("bits", int64_t{16});
  a.set("thresholds", std::vector<float>{2.5f});
  a.set("method", std::string("kl"));
  ir::Value* xc = g.add_value("x_calibrated", x->type());
  const std::vector<ir::Use> uses = x->uses();
  for (const ir::Use& u : uses) g.set_node_input(u.node, static_cast<size_t>(u.input_index), xc);
  g.add_node_with_outputs({"HzCalibration", {x}, {}, "x_HzCalibration", "horizon", a}, {xc}, g.nodes()[0]);
  const auto c = strip_calibration(m);
  ASSERT_EQ(c.count("x"), 1u);
  EXPECT_EQ(c.at("x").bits, 16);
  EXPECT_EQ(c.at("x").method, "kl");
  EXPECT_EQ(g.nodes()[0]->input(0), x);
  EXPECT_TRUE(ir::verify(g).empty());
}

}  // namespace
}  // namespace openbpu::quantization
