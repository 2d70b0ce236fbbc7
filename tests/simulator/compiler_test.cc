// BPU compiler units: small quantized graphs compiled and run on the virtual BPU device must
// equal the quantized-model executor bit for bit; segmentation, memory planning, views and
// errors. (The PP-OCR models are checked by the bpu_bit_exact_* ctests.)
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <sstream>

#include "openbpu/common/error.h"
#include "openbpu/compiler/compiler.h"
#include "openbpu/executor/float_executor.h"
#include "openbpu/ir/parse.h"
#include "openbpu/quantization/quantizer.h"
#include "openbpu/simulator/march.h"
#include "openbpu/simulator/program.h"
#include "openbpu/simulator/queue_model.h"
#include "openbpu/simulator/timing.h"
#include "model_file_fault_checks.h"
#include "openbpu/compiler/model_writer.h"
#include "segment_check.h"

namespace openbpu {
namespace {

using kernels::DataType;
using kernels::Tensor;

// "[m, m, ...]" of n valid fixed-point multipliers (pseudo-random mantissas, shift `shift`).
std::string multiplier_list(int n, int shift, uint32_t seed, bool shifts) {
  std::mt19937 rng(seed);
  std::ostringstream out;
  out << "[";
  for (int i = 0; i < n; ++i) {
    out << (i ? "," : "");
    if (shifts) {
      out << shift + static_cast<int>(rng() % 3);
    } else {
      out << (1073741824 + static_cast<int64_t>(rng() % 1073741823));
    }
  }
  out << "]";
  return out.str();
}

Tensor random_int8(const kernels::Shape& shape, uint32_t seed) {
  Tensor t(DataType::kInt8, shape);
  std::mt19937 rng(seed);
  int8_t* p = t.data<int8_t>();
  for (int64_t i = 0; i < t.element_count(); ++i) p[i] = static_cast<int8_t>(static_cast<int>(rng() % 256) - 128);
  return t;
}

Tensor random_float(const kernels::Shape& shape, uint32_t seed) {
  Tensor t(DataType::kFloat32, shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-4.f, 4.f);
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.element_count(); ++i) p[i] = d(rng);
  return t;
}

// A model in the parser's text form importing the horizon domain.
ir::Model parse(const std::string& graph) {
  return ir::parse_model("model opsets=[ai.onnx:17, horizon:1]\n" + graph);
}

const simulator::MarchSpec& bayes_e() { return simulator::march_spec(simulator::March::kBayesE); }

// Six LUTs in a chain on int8[1,64,16,16]: x → y1 → ... → y6.
std::string lut_chain_model() {
  std::ostringstream g;
  g << "graph g (%x: int8[1,64,16,16]) -> (%y6) {\n  init %t: int8[256] uniform(-128, 128)\n";
  for (int i = 1; i <= 6; ++i) {
    g << "  %y" << i << " = horizon::HzLut(" << (i == 1 ? std::string("%x") : "%y" + std::to_string(i - 1))
      << ", %t)\n";
  }
  g << "}\n";
  return g.str();
}

// Two BPU segments around a float Relu on the CPU: conv (C = 3 padded to the march's
// alignment) → LUT → reshape → transpose → matmul; then dequantize → Relu → quantize →
// global average pool, broadcast add, concat, slice.
std::string two_segment_model() {
  std::ostringstream g;
  g << "graph g (%x: int8[1,3,8,8]) -> (%out) {\n"
    << "  init %w: int8[8,3,3,3] uniform(-128, 128)\n"
    << "  init %b: int32[8] uniform(-3000, 3000)\n"
    << "  init %table: int8[256] uniform(-128, 128)\n"
    << "  init %shape: int64[3]{1,8,64}\n"
    << "  init %starts: int64[1]{3}\n"
    << "  init %ends: int64[1]{100}\n"
    << "  init %axes: int64[1]{1}\n"
    << "  init %steps: int64[1]{2}\n"
    << "  %c = horizon::HzSQuantizedConv[kernel_shape=[3,3], strides=[1,1], pads=[1,1,1,1], "
       "dilations=[1,1], group=1, output_type=\"int8\", multipliers="
    << multiplier_list(8, 0, 1, false) << ", shifts=" << multiplier_list(8, 40, 2, true)
    << ", clip_min=0](%x, %w, %b)\n"
    << "  %l = horizon::HzLut[function=\"test\"](%c, %table)\n"
    << "  %r = Reshape(%l, %shape)\n"
    << "  %t = Transpose[perm=[0,2,1]](%r)\n"
    << "  %m = horizon::HzSQuantizedMatmul[multiplier=1288490189, shift=38, output_type=\"int8\"](%t, %r)\n"
    << "  %mf = horizon::Dequantize[scales=[0.05]](%m)\n"
    << "  %relu = Relu(%mf)\n"
    << "  %q = horizon::Quantize[scale=0.05](%relu)\n"
    << "  %gap = horizon::HzSQuantizedGlobalAveragePool[multiplier=1099511628, shift=36](%q)\n"
    << "  %sum = horizon::HzSElementwiseAdd[input_multipliers=[1288490189,1503238554], "
       "input_shifts=[30,31], intermediate_shift=8, output_type=\"int8\", output_scale=0.05](%q, %gap)\n"
    << "  %cat = Concat[axis=1](%sum, %q)\n"
    << "  %out = Slice(%cat, %starts, %ends, %axes, %steps)\n"
    << "}\n";
  return g.str();
}

TEST(BpuCompiler, TwoSegmentsAroundACpuNodeAreBitExact) {
  const ir::Model model = parse(two_segment_model());
  testing::SegmentChecker checker(model, bayes_e());
  for (uint32_t seed = 1; seed <= 5; ++seed) {
    SCOPED_TRACE("input seed " + std::to_string(seed));
    EXPECT_EQ(checker.check({{"x", random_int8({1, 3, 8, 8}, seed)}}), "");
  }
  ASSERT_EQ(checker.segments().size(), 2u);
  EXPECT_EQ(checker.segments()[0].inputs, std::vector<std::string>{"x"});
  EXPECT_EQ(checker.segments()[0].outputs, std::vector<std::string>{"m"});
  EXPECT_EQ(checker.segments()[1].inputs, std::vector<std::string>{"q"});
  EXPECT_EQ(checker.segments()[1].outputs, std::vector<std::string>{"out"});
  EXPECT_EQ(checker.outputs_compared(), 10u);
}

TEST(BpuCompiler, SegmentsFollowTheIntegerData) {
  const ir::Model model = parse(two_segment_model());
  testing::SegmentChecker checker(model, bayes_e());
  ASSERT_EQ(checker.check({{"x", random_int8({1, 3, 8, 8}, 7)}}), "");
  std::vector<std::vector<std::string>> names;
  for (const auto& seg : checker.segments()) names.push_back(seg.nodes);
  EXPECT_EQ(names, (std::vector<std::vector<std::string>>{{"c", "l", "r", "t", "m"},
                                                          {"gap", "sum", "cat", "out"}}));
}

// Sibling BPU branches (docs/compiler.md): a convolution of xq and an add of xq and a CPU
// result are independent, so they are one segment with two inputs and two outputs, which a
// CPU Concat reads.
std::string sibling_model() {
  std::ostringstream g;
  g << "graph g (%x: float32[1,3,8,8]) -> (%y) {\n"
    << "  init %w: int8[8,3,3,3] uniform(-128, 128)\n"
    << "  init %b: int32[8] uniform(-3000, 3000)\n"
    << "  %xq = horizon::Quantize[scale=0.03125](%x)\n"
    << "  %xr = Relu(%x)\n"
    << "  %rq = horizon::Quantize[scale=0.03125](%xr)\n"
    << "  %c = horizon::HzSQuantizedConv[kernel_shape=[3,3], strides=[1,1], pads=[1,1,1,1], "
       "dilations=[1,1], group=1, output_type=\"int8\", multipliers="
    << multiplier_list(8, 0, 1, false) << ", shifts=" << multiplier_list(8, 40, 2, true) << "](%xq, %w, %b)\n"
    << "  %s = horizon::HzSElementwiseAdd[input_multipliers=[1288490189,1503238554], "
       "input_shifts=[30,31], intermediate_shift=8, output_type=\"int8\", output_scale=0.05](%xq, %rq)\n"
    << "  %cf = horizon::Dequantize[scales=[0.05]](%c)\n"
    << "  %sf = horizon::Dequantize[scales=[0.05]](%s)\n"
    << "  %y = Concat[axis=1](%cf, %sf)\n"
    << "}\n";
  return g.str();
}

TEST(BpuCompiler, SiblingBranchesAreOneSegmentWithIndependentInputsAndOutputs) {
  const ir::Model model = parse(sibling_model());
  testing::SegmentChecker checker(model, bayes_e());
  for (uint32_t seed = 1; seed <= 3; ++seed) {
    SCOPED_TRACE("input seed " + std::to_string(seed));
    EXPECT_EQ(checker.check({{"x", random_float({1, 3, 8, 8}, seed)}}), "");
  }
  ASSERT_EQ(checker.segments().size(), 1u);
  EXPECT_EQ(checker.segments()[0].nodes, (std::vector<std::string>{"c", "s"}));
  EXPECT_EQ(checker.segments()[0].inputs, (std::vector<std::string>{"xq", "rq"}));
  EXPECT_EQ(checker.segments()[0].outputs, (std::vector<std::string>{"c", "s"}));
  EXPECT_EQ(checker.outputs_compared(), 6u);
}

TEST(BpuCompiler, MemoryPlanningReusesDeadBuffers) {
  // A chain of six LUTs: two buffers alternate.
  const ir::Model model = parse(lut_chain_model());
  testing::SegmentChecker checker(model, bayes_e());
  ASSERT_EQ(checker.check({{"x", random_int8({1, 64, 16, 16}, 3)}}), "");
  ASSERT_EQ(checker.segments().size(), 1u);
  const auto& seg = checker.segments()[0];
  const uint64_t one = 64 * 16 * 16;
  EXPECT_EQ(seg.unplanned_bytes, 7 * one);
  EXPECT_EQ(seg.activation_bytes, 2 * one);
}

TEST(BpuCompiler, ReshapeOfADenseTensorIsAView) {
  // Rank-3 tensors are dense: the reshape adds no instruction.
  const ir::Model model = parse(
      "graph g (%x: int8[1,6,10]) -> (%z) {\n"
      "  init %t: int8[256] uniform(-128, 128)\n"
      "  init %s: int64[2]{6,10}\n"
      "  %y = horizon::HzLut(%x, %t)\n"
      "  %r = Reshape(%y, %s)\n"
      "  %z = horizon::HzLut(%r, %t)\n"
      "}\n");
  testing::SegmentChecker checker(model, bayes_e());
  ASSERT_EQ(checker.check({{"x", random_int8({1, 6, 10}, 4)}}), "");
  // FunctionBegin + two LUTs.
  EXPECT_EQ(checker.segments()[0].instruction_nodes,
            (std::vector<std::string>{"", "y", "z"}));
}

TEST(BpuCompiler, ConvTransposeResizeAndPoolsAreBitExact) {
  std::ostringstream g;
  g << "graph g (%x: float32[1,4,6,6]) -> (%out) {\n"
    << "  init %w: int8[4,2,2,2] uniform(-128, 128)\n"
    << "  init %b: int32[4] uniform(-500, 500)\n"
    << "  %q = horizon::Quantize[scale=0.03](%x)\n"
    << "  %d = horizon::HzSQuantizedConvTranspose[kernel_shape=[2,2], strides=[2,2], pads=[0,0,0,0], "
       "dilations=[1,1], group=2, output_type=\"int8\", multipliers="
    << multiplier_list(4, 0, 3, false) << ", shifts=" << multiplier_list(4, 38, 4, true) << "](%q, %w, %b)\n"
    << "  %u = horizon::HzQuantizedResizeUpsample[mode=\"linear\", output_size=[17,9]](%d)\n"
    << "  %p = horizon::HzSQuantizedAveragePool[kernel_shape=[3,3], strides=[2,2], pads=[1,1,1,1], "
       "ceil_mode=1, multipliers=" << multiplier_list(9, 0, 5, false) << ", shifts=" << multiplier_list(9, 34, 6, true)
    << "](%u)\n"
    << "  %mx = MaxPool[kernel_shape=[2,2], strides=[1,1]](%p)\n"
    << "  %out = horizon::Dequantize[scales=[0.1]](%mx)\n"
    << "}\n";
  const ir::Model model = parse(g.str());
  testing::SegmentChecker checker(model, bayes_e());
  for (uint32_t seed = 1; seed <= 3; ++seed) {
    SCOPED_TRACE("input seed " + std::to_string(seed));
    EXPECT_EQ(checker.check({{"x", random_float({1, 4, 6, 6}, seed)}}), "");
  }
  EXPECT_EQ(checker.segments().size(), 1u);
}

// A float graph x → Conv (1x1) → <op>, quantized by the quantizer (thresholds given), as the
// pipeline's stage 4 would produce it.
struct FloatGraph {
  ir::Model model;
  ir::Graph& g = *model.graph;
  ir::Value* x;
  ir::Value* conv;
  FloatGraph(const kernels::Shape& input, int64_t channels) {
    model.opsets.push_back({"", 13});
    g.set_name("float_graph");
    x = g.add_value("x", ir::TensorType::of(DataType::kFloat32, input));
    g.add_input(x);
    ir::Node* c = g.add_node({"Conv", {x, g.add_constant("w", random_float({channels, input[1], 1, 1}, 9)),
                                       g.add_constant("b", random_float({channels}, 10))},
                              {"c"}, "conv", "", {}});
    kernels::Shape out = input;
    out[1] = channels;
    c->output(0)->set_type(ir::TensorType::of(DataType::kFloat32, out));
    conv = c->output(0);
  }
  ir::Node* add(const std::string& op, kernels::AttributeMap attrs, kernels::Shape out, DataType type) {
    ir::Node* n = g.add_node({op, {conv}, {"y"}, "node", "", std::move(attrs)});
    n->output(0)->set_type(ir::TensorType::of(type, out));
    g.add_output(n->output(0));
    return n;
  }
  // `extra`: calibrations of further tensors (the added node's output), or replacements.
  ir::Model quantize(const simulator::MarchSpec& march, const std::set<std::string>& run_on_bpu = {},
                     const std::map<std::string, quantization::TensorCalibration>& extra = {}) const {
    std::map<std::string, quantization::TensorCalibration> calibration;
    calibration["x"] = {{4.0f}, 8, 1, false, true, "max"};
    calibration["c"] = {{12.0f}, 8, 1, false, true, "max"};
    for (const auto& [name, c] : extra) calibration[name] = c;
    quantization::QuantizeOptions options;
    options.plan.overrides.run_on_bpu = run_on_bpu;
    return quantization::quantize_model(model, calibration, march, options).model;
  }
};

TEST(BpuCompiler, ArgMaxAndArgMinFromAFloatGraphAreBitExact) {
  for (int64_t keepdims : {1, 0}) for (const char* op : {"ArgMax", "ArgMin"}) {
    SCOPED_TRACE(std::string(op) + " keepdims " + std::to_string(keepdims));
    FloatGraph f({1, 3, 6, 5}, 20);
    kernels::AttributeMap a;
    a.set("axis", int64_t{1});
    a.set("keepdims", keepdims);
    f.add(op, a, keepdims ? kernels::Shape{1, 1, 6, 5} : kernels::Shape{1, 6, 5}, DataType::kInt64);
    const ir::Model q = f.quantize(bayes_e());
    testing::SegmentChecker checker(q, bayes_e());
    for (uint32_t seed = 1; seed <= 4; ++seed) {
      SCOPED_TRACE("input seed " + std::to_string(seed));
      EXPECT_EQ(checker.check({{"x", random_float({1, 3, 6, 5}, seed)}}), "");
    }
    ASSERT_EQ(checker.segments().size(), 1u);
    EXPECT_EQ(checker.segments()[0].nodes, (std::vector<std::string>{"conv", "node"}));
    EXPECT_EQ(checker.segments()[0].outputs, std::vector<std::string>{"y_int32"});
    EXPECT_EQ(checker.outputs_compared(), 4u);
  }
  // nash-e: any rank, any axis.
  FloatGraph f({1, 4, 3, 7}, 9);
  kernels::AttributeMap a;
  a.set("axis", int64_t{3});
  f.add("ArgMax", a, {1, 9, 3, 1}, DataType::kInt64);
  const auto& nash = simulator::march_spec(simulator::March::kNashE);
  const ir::Model q = f.quantize(nash);
  testing::SegmentChecker checker(q, nash);
  EXPECT_EQ(checker.check({{"x", random_float({1, 4, 3, 7}, 5)}}), "");
  EXPECT_EQ(checker.segments().size(), 1u);
}

// Softmax from a float graph: bayes-e (CPU unless run_on_bpu; int8 and int16) and nash-e (on the
// BPU by default, any axis); the segment's output is the integer softmax, bit-exact against the
// quantized-model executor.
TEST(BpuCompiler, SoftmaxFromAFloatGraphIsBitExact) {
  struct Case {
    const char* name;
    const simulator::MarchSpec* march;
    int64_t axis;
    int bits;
    bool run_on_bpu;
  };
  const auto& nash = simulator::march_spec(simulator::March::kNashE);
  for (const Case& c : {Case{"bayes-e int8 axis 1", &bayes_e(), 1, 8, true},
                        Case{"bayes-e int16 axis 3", &bayes_e(), 3, 16, true},
                        Case{"nash-e int16 axis 2", &nash, 2, 16, false},
                        Case{"nash-e int8 axis 0", &nash, 0, 8, false}}) {
    SCOPED_TRACE(c.name);
    FloatGraph f({1, 3, 6, 5}, 20);
    kernels::AttributeMap a;
    a.set("axis", c.axis);
    f.add("Softmax", a, {1, 20, 6, 5}, DataType::kFloat32);
    std::map<std::string, quantization::TensorCalibration> extra;
    extra["c"] = {{12.0f}, c.bits, 1, false, true, "max"};
    extra["y"] = {{1.0f}, c.bits, 1, false, true, "max"};
    const ir::Model q = f.quantize(*c.march, c.run_on_bpu ? std::set<std::string>{"node"} : std::set<std::string>{},
                                   extra);
    bool has_softmax = false;
    for (const ir::Node* n : q.graph->nodes()) has_softmax = has_softmax || n->op_type() == "HzQuantizedSoftmax";
    ASSERT_TRUE(has_softmax);
    testing::SegmentChecker checker(q, *c.march);
    for (uint32_t seed = 1; seed <= 3; ++seed) {
      SCOPED_TRACE("input seed " + std::to_string(seed));
      EXPECT_EQ(checker.check({{"x", random_float({1, 3, 6, 5}, seed)}}), "");
    }
    ASSERT_EQ(checker.segments().size(), 1u);
    EXPECT_EQ(checker.segments()[0].nodes, (std::vector<std::string>{"conv", "node"}));
  }
  // Without run_on_bpu bayes-e keeps it on the CPU: the segment ends at the conv.
  FloatGraph f({1, 3, 6, 5}, 20);
  kernels::AttributeMap a;
  a.set("axis", int64_t{1});
  f.add("Softmax", a, {1, 20, 6, 5}, DataType::kFloat32);
  const ir::Model q = f.quantize(bayes_e(), {}, {{"y", {{1.0f}, 8, 1, false, true, "max"}}});
  testing::SegmentChecker checker(q, bayes_e());
  EXPECT_EQ(checker.check({{"x", random_float({1, 3, 6, 5}, 1)}}), "");
  ASSERT_EQ(checker.segments().size(), 1u);
  EXPECT_EQ(checker.segments()[0].nodes, std::vector<std::string>{"conv"});
}

// Max / Min of two featuremaps of different scales: each operand rescaled to the output's
// scale. The device matches the quantized model bit for bit, and both are close to the float.
TEST(BpuCompiler, MaxAndMinOfTwoFeaturemapsAreBitExact) {
  for (const char* op : {"Max", "Min"}) {
    SCOPED_TRACE(op);
    FloatGraph f({1, 3, 6, 5}, 3);
    ir::Node* n = f.g.add_node({op, {f.conv, f.x}, {"y"}, "node", "", {}});
    n->output(0)->set_type(ir::TensorType::of(DataType::kFloat32, {1, 3, 6, 5}));
    f.g.add_output(n->output(0));
    const float threshold = 12.0f;
    const ir::Model q = f.quantize(bayes_e(), {}, {{"y", {{threshold}, 8, 1, false, true, "max"}}});
    std::set<std::string> ops;
    for (const ir::Node* node : q.graph->nodes()) ops.insert(node->op_type());
    EXPECT_TRUE(ops.count(std::string("HzSElementwise") + op)) << "the quantized model has no HzSElementwise" << op;
    testing::SegmentChecker checker(q, bayes_e());
    executor::FloatExecutor float_run(f.model), quantized_run(q);
    for (uint32_t seed = 1; seed <= 3; ++seed) {
      SCOPED_TRACE("input seed " + std::to_string(seed));
      const Tensor x = random_float({1, 3, 6, 5}, seed);
      EXPECT_EQ(checker.check({{"x", x}}), "");
      const Tensor want = float_run.run({{"x", x}}).at("y");
      const Tensor got = quantized_run.run({{"x", x}}).at("y");
      const float step = threshold / 127.0f;  // the output's scale
      for (int64_t i = 0; i < want.element_count(); ++i) {
        ASSERT_NEAR(got.data<float>()[i], std::clamp(want.data<float>()[i], -threshold, threshold), 2 * step)
            << "element " << i;
      }
    }
    ASSERT_EQ(checker.segments().size(), 1u);
    EXPECT_EQ(checker.segments()[0].nodes, (std::vector<std::string>{"conv", "node"}));
  }
}

// Equal / Greater / Less write an int8 mask a Where on the BPU reads; Where's -inf fill takes the
// other operand's scale and saturates there (no NaN, no stretched range). With the comparison on
// the BPU (run_on_bpu) one segment; on the CPU (its default) the bool reaches the Where as int8.
TEST(BpuCompiler, ComparisonsAndWhereAreBitExact) {
  for (const char* op : {"Equal", "Greater", "Less"}) for (const bool compare_on_bpu : {true, false}) {
    SCOPED_TRACE(std::string(op) + (compare_on_bpu ? " on the BPU" : " on the CPU"));
    FloatGraph f({1, 3, 6, 5}, 3);
    ir::Node* cmp = f.g.add_node({op, {f.conv, f.x}, {"mask"}, "cmp", "", {}});
    cmp->output(0)->set_type(ir::TensorType::of(DataType::kBool, {1, 3, 6, 5}));
    const std::vector<float> fill = {-INFINITY};
    ir::Value* minus_inf = f.g.add_constant("fill", Tensor::from_values<float>({1}, fill));
    ir::Node* where = f.g.add_node({"Where", {cmp->output(0), f.conv, minus_inf}, {"y"}, "where", "", {}});
    where->output(0)->set_type(ir::TensorType::of(DataType::kFloat32, {1, 3, 6, 5}));
    f.g.add_output(where->output(0));
    f.g.add_output(cmp->output(0));
    const ir::Model q = f.quantize(bayes_e(), compare_on_bpu ? std::set<std::string>{"cmp"} : std::set<std::string>{});
    std::set<std::string> ops;
    for (const ir::Node* node : q.graph->nodes()) ops.insert(node->op_type());
    EXPECT_EQ(ops.count(std::string("HzSElementwise") + op), compare_on_bpu ? 1u : 0u);
    EXPECT_EQ(ops.count("HzSWhere"), 1u);
    testing::SegmentChecker checker(q, bayes_e());
    executor::FloatExecutor float_run(f.model), quantized_run(q);
    const float step = 12.0f / 127.0f;  // y has the conv's scale
    for (uint32_t seed = 1; seed <= 3; ++seed) {
      SCOPED_TRACE("input seed " + std::to_string(seed));
      const Tensor x = random_float({1, 3, 6, 5}, seed);
      EXPECT_EQ(checker.check({{"x", x}}), "");
      const auto want = float_run.run({{"x", x}});
      const auto got = quantized_run.run({{"x", x}});
      const Tensor& got_mask = got.at("mask");
      ASSERT_EQ(got_mask.dtype(), DataType::kBool);
      const Tensor& want_mask = want.at("mask");
      executor::RunOptions with_conv;
      with_conv.extra_outputs = {"c"};
      const Tensor c = executor::FloatExecutor(f.model).run({{"x", x}}, with_conv).at("c");
      int decided = 0;
      for (int64_t i = 0; i < x.element_count() && std::string(op) != "Equal"; ++i) {
        if (std::fabs(c.data<float>()[i] - x.data<float>()[i]) <= 2 * step) continue;  // near the threshold
        ASSERT_EQ(got_mask.data<bool>()[i], want_mask.data<bool>()[i]) << "element " << i;
        ++decided;
      }
      EXPECT_TRUE(std::string(op) == "Equal" || decided > x.element_count() / 2) << decided;
      const Tensor& want_y = want.at("y");
      const Tensor& got_y = got.at("y");
      for (int64_t i = 0; i < got_y.element_count(); ++i) {
        const float g = got_y.data<float>()[i];
        ASSERT_TRUE(std::isfinite(g)) << "element " << i;
        if (got_mask.data<bool>()[i]) {
          ASSERT_NEAR(g, std::clamp(want_y.data<float>()[i], -12.0f, 12.0f), 2 * step) << "element " << i;
        } else {
          ASSERT_EQ(g, -128 * step) << "element " << i << ": the fill saturates at the scale's lowest value";
        }
      }
    }
    ASSERT_EQ(checker.segments().size(), compare_on_bpu ? 1u : 2u);
    if (compare_on_bpu) {
      EXPECT_EQ(checker.segments()[0].nodes, (std::vector<std::string>{"conv", "cmp", "where"}));
    }
  }
}

// The data-movement rows the compiler lowers to fills and strided copies (GlobalMaxPool and
// ReduceMax to a max reduction), and table functions added for model breadth: each, after a
// Conv and forced onto the BPU, gives the quantized model's bytes.
struct MovementCase {
  std::string name, op;
  kernels::AttributeMap attrs;
  std::vector<Tensor> constants;  // inputs after the data, in order
  kernels::Shape out;
  bool calibrated_output = false;  // a table function's output has its own threshold
};

std::vector<MovementCase> movement_cases() {
  auto attrs = [](std::initializer_list<std::pair<std::string, std::string>> s, int64_t block = 0) {
    kernels::AttributeMap a;
    for (const auto& [k, v] : s) a.set(k, v);
    if (block) a.set("blocksize", block);
    return a;
  };
  auto ints = [](kernels::Shape shape, std::vector<int64_t> v) { return Tensor::from_values<int64_t>(shape, v); };
  kernels::AttributeMap axis3;
  axis3.set("axis", int64_t{3});
  kernels::AttributeMap axis1;
  axis1.set("axis", int64_t{1});
  auto reduce_axes = [](std::vector<int64_t> axes, int64_t keepdims) {
    kernels::AttributeMap a;
    a.set("axes", std::move(axes));
    a.set("keepdims", keepdims);
    return a;
  };
  // `count` indices into an axis of `extent`, scattered, some negative (counted from the end).
  auto spread = [](int64_t count, int64_t extent) {
    std::vector<int64_t> v;
    for (int64_t i = 0; i < count; ++i) v.push_back((i * 5 + i / 3) % extent - (i % 4 == 0 ? extent : 0));
    return v;
  };
  // The Conv's output is [1, 8, 6, 4].
  return {
      {"global max pool", "GlobalMaxPool", {}, {}, {1, 8, 1, 1}},
      {"pad", "Pad", {}, {ints({8}, {0, 0, 1, 2, 0, 1, 2, 1})}, {1, 9, 9, 7}},
      {"pad and crop", "Pad", {}, {ints({8}, {0, -2, 1, -1, 0, 0, -2, 2})}, {1, 6, 5, 5}},
      {"depth to space DCR", "DepthToSpace", attrs({}, 2), {}, {1, 2, 12, 8}},
      {"depth to space CRD", "DepthToSpace", attrs({{"mode", "CRD"}}, 2), {}, {1, 2, 12, 8}},
      {"space to depth", "SpaceToDepth", attrs({}, 2), {}, {1, 32, 3, 2}},
      {"gather channels", "Gather", axis1, {ints({4}, {5, 0, 1, 2})}, {1, 4, 6, 4}},
      {"gather one column", "Gather", axis3, {ints({}, {-1})}, {1, 8, 6}},
      {"gather a 2-D index", "Gather", axis3, {ints({2, 2}, {3, 0, 1, 1})}, {1, 8, 6, 2, 2}},
      {"reduce max over C", "ReduceMax", reduce_axes({1}, 1), {}, {1, 1, 6, 4}},
      {"reduce max over H, W", "ReduceMax", reduce_axes({2, 3}, 0), {}, {1, 8}},
      {"expand N", "Expand", {}, {ints({4}, {2, 8, 6, 4})}, {2, 8, 6, 4}},
      {"expand a new axis", "Expand", {}, {ints({5}, {3, 1, 8, 6, 4})}, {3, 1, 8, 6, 4}},
      {"tile H and W", "Tile", {}, {ints({4}, {1, 1, 2, 3})}, {1, 8, 12, 12}},
      {"tile N", "Tile", {}, {ints({4}, {2, 1, 1, 1})}, {2, 8, 6, 4}},
      {"gather elements along C", "GatherElements", axis1, {ints({1, 3, 6, 4}, spread(72, 8))}, {1, 3, 6, 4}},
      {"gather elements along W", "GatherElements", axis3, {ints({1, 8, 6, 2}, spread(96, 4))}, {1, 8, 6, 2}},
      {"floor", "Floor", {}, {}, {1, 8, 6, 4}, true},
      {"sign", "Sign", {}, {}, {1, 8, 6, 4}, true},
  };
}

TEST(BpuCompiler, MovementAndTableRowsAreBitExact) {
  for (const MovementCase& c : movement_cases()) {
    SCOPED_TRACE(c.name);
    FloatGraph f({1, 3, 6, 4}, 8);
    std::vector<ir::Value*> inputs{f.conv};
    for (size_t i = 0; i < c.constants.size(); ++i) inputs.push_back(f.g.add_constant("k" + std::to_string(i), c.constants[i]));
    ir::Node* n = f.g.add_node({c.op, inputs, {"y"}, "node", "", c.attrs});
    n->output(0)->set_type(ir::TensorType::of(DataType::kFloat32, c.out));
    f.g.add_output(n->output(0));
    std::map<std::string, quantization::TensorCalibration> extra;
    if (c.calibrated_output) extra["y"] = {{12.0f}, 8, 1, false, true, "max"};
    const ir::Model q = f.quantize(bayes_e(), {"node"}, extra);
    testing::SegmentChecker checker(q, bayes_e());
    for (uint32_t seed = 1; seed <= 2; ++seed) EXPECT_EQ(checker.check({{"x", random_float({1, 3, 6, 4}, seed)}}), "");
    ASSERT_EQ(checker.segments().size(), 1u);
    EXPECT_EQ(checker.segments()[0].nodes, (std::vector<std::string>{"conv", "node"}));
    const auto decoded = simulator::decode_program(checker.segments()[0].program, checker.segments()[0].weights);
    ASSERT_TRUE(decoded.ok) << decoded.error;
    EXPECT_GT(simulator::estimate_program(decoded.program, bayes_e()).cycles, 0u);  // the timing model reads it
  }
}

TEST(BpuCompiler, AnOperatorWithoutLoweringIsNamed) {
  const ir::Model model = parse(
      "graph g (%x: int8[1,4,4,4]) -> (%y) {\n"
      "  %y = Einsum[equation=\"nchw->nchw\"](%x)\n"
      "}\n");
  compiler::TensorInfos infos{{"x", {DataType::kInt8, {1, 4, 4, 4}}}, {"y", {DataType::kInt8, {1, 4, 4, 4}}}};
  try {
    compiler::compile_bpu_segments(*model.graph, infos, {&bayes_e()});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("node 'y' (Einsum): the BPU compiler has no lowering"),
              std::string::npos)
        << e.what();
  }
}

// A segment needing more device memory than a program may address (isa::kMaxMemoryBytes, which
// the runtime's loader enforces too) is refused when compiling, with the segment and what to do.
TEST(BpuCompiler, ASegmentBeyondTheDeviceMemoryBoundIsRefused) {
  const ir::Model model = parse(
      "graph g (%x: int8[1,64,4096,4096]) -> (%y) {\n"
      "  init %t: int8[256] uniform(-128, 128)\n"
      "  %y = horizon::HzLut(%x, %t)\n"
      "}\n");
  compiler::TensorInfos infos{{"x", {DataType::kInt8, {1, 64, 4096, 4096}}},
                              {"y", {DataType::kInt8, {1, 64, 4096, 4096}}}};
  try {
    compiler::compile_bpu_segments(*model.graph, infos, {&bayes_e()});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bytes of BPU device memory; a program addresses at most 536870912 (512 MiB"),
              std::string::npos)
        << e.what();
  }
}

// Two segments of 256 MiB each pass one by one but not together: the runtime allocates every
// program's memory when the model loads (isa::kMaxModelMemoryBytes), so the compiler refuses it.
TEST(BpuCompiler, SegmentsBeyondTheModelsDeviceMemoryAreRefused) {
  const ir::Model model = parse(
      "graph g (%x: int8[1,64,2048,1024]) -> (%y) {\n"
      "  init %t: int8[256] uniform(-128, 128)\n"
      "  %a = horizon::HzLut(%x, %t)\n"
      "  %af = horizon::Dequantize[scales=[0.05]](%a)\n"
      "  %r = Relu(%af)\n"
      "  %q = horizon::Quantize[scale=0.05](%r)\n"
      "  %y = horizon::HzLut(%q, %t)\n"
      "}\n");
  const kernels::Shape shape{1, 64, 2048, 1024};
  compiler::TensorInfos infos{{"x", {DataType::kInt8, shape}},    {"a", {DataType::kInt8, shape}},
                              {"af", {DataType::kFloat32, shape}}, {"r", {DataType::kFloat32, shape}},
                              {"q", {DataType::kInt8, shape}},    {"y", {DataType::kInt8, shape}}};
  try {
    compiler::compile_bpu_segments(*model.graph, infos, {&bayes_e()});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the model's 2 BPU segments need"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("a model may address at most 536870912"), std::string::npos) << e.what();
  }
}

// x · table(x) chains (swish, hardswish) become one LutProduct; bit-exact against the three
// nodes. Chains that must stay apart: a table output read twice or a graph output, a
// per-channel rescale, a product with another tensor.
std::string lut_product_model() {
  std::ostringstream g;
  g << "graph g (%x: int16[1,8,6,5], %x8: int8[1,8,6,5], %z: int16[1,8,6,5]) -> (%y, %y2, %y3, "
       "%h4, %y5, %y6) {\n"
    << "  init %t16: int32[257] uniform(-20000, 20000)\n"
    << "  init %t8: int8[256] uniform(-128, 128)\n"
    // fires: rescaled int16 x, int16 table, int8 output
    << "  %n = horizon::HzRequantize[multiplier=1288490189, shift=30, output_type=\"int16\"](%x)\n"
    << "  %h = horizon::HzLut[function=\"HardSigmoid\"](%n, %t16)\n"
    << "  %y = horizon::HzSElementwiseMul[multiplier=1099511628, shift=45, "
       "output_type=\"int8\"](%x, %h)\n"
    // fires: int8 x read by the table directly, operands swapped, int16 output, a clamp
    << "  %h2 = horizon::HzLut[function=\"Sigmoid\"](%x8, %t8)\n"
    << "  %y2 = horizon::HzSElementwiseMul[multiplier=1099511628, shift=25, output_type=\"int16\", "
       "clip_min=-100, "
       "clip_max=20000](%h2, %x8)\n"
    // stays: the table output is read by another node too
    << "  %h3 = horizon::HzLut[function=\"Sigmoid\"](%x8, %t8)\n"
    << "  %m3 = horizon::HzSElementwiseMul[multiplier=1099511628, shift=20, "
       "output_type=\"int8\"](%x8, %h3)\n"
    << "  %y3 = horizon::HzSElementwiseAdd[input_multipliers=[1288490189,1503238554], "
       "input_shifts=[30,31], "
       "intermediate_shift=8, output_type=\"int8\"](%m3, %h3)\n"
    // stays: the table output is a graph output
    << "  %h4 = horizon::HzLut[function=\"Sigmoid\"](%x8, %t8)\n"
    << "  %y4 = horizon::HzSElementwiseMul[multiplier=1099511628, shift=20, "
       "output_type=\"int8\"](%x8, %h4)\n"
    // stays: a per-channel rescale
    << "  %n5 = horizon::HzRequantize[multipliers=" << multiplier_list(8, 0, 3, false)
    << ", shifts=" << multiplier_list(8, 30, 4, true) << ", axis=1, output_type=\"int16\"](%x)\n"
    << "  %h5 = horizon::HzLut[function=\"HardSigmoid\"](%n5, %t16)\n"
    << "  %y5 = horizon::HzSElementwiseMul[multiplier=1099511628, shift=45, "
       "output_type=\"int8\"](%x, %h5)\n"
    // stays: the product is with another tensor
    << "  %h6 = horizon::HzLut[function=\"HardSigmoid\"](%z, %t16)\n"
    << "  %y6 = horizon::HzSElementwiseMul[multiplier=1099511628, shift=45, "
       "output_type=\"int8\"](%x, %h6)\n"
    << "}\n";
  return g.str();
}

TEST(BpuCompiler, TableTimesItsInputIsOneLutProduct) {
  const ir::Model model = parse(lut_product_model());
  testing::SegmentChecker checker(model, bayes_e());
  Tensor x(DataType::kInt16, {1, 8, 6, 5}), z(DataType::kInt16, {1, 8, 6, 5});
  for (uint32_t seed = 1; seed <= 3; ++seed) {
    SCOPED_TRACE("input seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    for (int64_t i = 0; i < x.element_count(); ++i) {
      x.data<int16_t>()[i] = static_cast<int16_t>(rng());
      z.data<int16_t>()[i] = static_cast<int16_t>(rng());
    }
    EXPECT_EQ(checker.check({{"x", x}, {"x8", random_int8({1, 8, 6, 5}, seed)}, {"z", z}}), "");
  }
  std::vector<std::string> products, nodes;  // the nodes of every instruction, of the LutProducts
  for (const compiler::CompiledSegment& seg : checker.segments()) {
    const simulator::DecodeResult decoded = simulator::decode_program(seg.program, seg.weights);
    ASSERT_TRUE(decoded.ok) << decoded.error;
    for (size_t i = 0; i < decoded.program.instructions.size(); ++i) {
      nodes.push_back(seg.instruction_nodes[i]);
      if (decoded.program.instructions[i].opcode == simulator::isa::Opcode::kLutProduct) {
        products.push_back(seg.instruction_nodes[i]);
      }
    }
  }
  std::sort(products.begin(), products.end());
  EXPECT_EQ(products, (std::vector<std::string>{"y", "y2"}));
  for (const char* apart : {"h3", "m3", "h4", "y4", "n5", "h5", "y5", "h6", "y6"}) {
    EXPECT_NE(std::find(nodes.begin(), nodes.end(), apart), nodes.end())
        << apart << " has no instruction of its own";
  }
  for (const char* fused : {"n", "h", "h2"}) {
    EXPECT_EQ(std::find(nodes.begin(), nodes.end(), fused), nodes.end())
        << fused << " was not fused";
  }
}

TEST(BpuCompiler, CompilingTwiceGivesIdenticalBytes) {
  const ir::Model model = parse(two_segment_model());
  testing::SegmentChecker a(model, bayes_e()), b(model, bayes_e());
  ASSERT_EQ(a.check({{"x", random_int8({1, 3, 8, 8}, 1)}}), "");
  ASSERT_EQ(b.check({{"x", random_int8({1, 3, 8, 8}, 2)}}), "");
  ASSERT_EQ(a.segments().size(), b.segments().size());
  for (size_t i = 0; i < a.segments().size(); ++i) {
    EXPECT_EQ(a.segments()[i].program, b.segments()[i].program);
    EXPECT_EQ(a.segments()[i].weights, b.segments()[i].weights);
  }
}

TEST(BpuProgram, DecodeRejectsCorruptionWithAMessage) {
  const ir::Model model = parse(two_segment_model());
  testing::SegmentChecker checker(model, bayes_e());
  ASSERT_EQ(checker.check({{"x", random_int8({1, 3, 8, 8}, 1)}}), "");
  const auto& seg = checker.segments()[0];
  ASSERT_TRUE(simulator::decode_program(seg.program, seg.weights).ok);
  // Every truncation is refused.
  for (size_t n = 0; n < seg.program.size(); n += 7) {
    const auto r = simulator::decode_program(std::span(seg.program).first(n), seg.weights);
    EXPECT_FALSE(r.ok) << "truncated at " << n;
    EXPECT_FALSE(r.error.empty());
  }
  // Wrong magic, future version, unknown opcode.
  std::vector<uint8_t> bad = seg.program;
  bad[0] ^= 0xFF;
  EXPECT_NE(simulator::decode_program(bad, seg.weights).error.find("wrong magic"), std::string::npos);
  bad = seg.program;
  bad[4] = 9;
  EXPECT_NE(simulator::decode_program(bad, seg.weights).error.find("ISA version 9"), std::string::npos);
  // Random bit flips: refused or still a valid program; never a crash (ASan/UBSan in CI).
  std::mt19937 rng(11);
  for (int i = 0; i < 500; ++i) {
    bad = seg.program;
    bad[rng() % bad.size()] ^= static_cast<uint8_t>(1u << (rng() % 8));
    const auto r = simulator::decode_program(bad, seg.weights);
    if (!r.ok) {
      EXPECT_FALSE(r.error.empty());
    }
  }
}

}  // namespace
}  // namespace openbpu

namespace openbpu {
namespace {

// The LUT chain of MemoryPlanningReusesDeadBuffers, compiled with `options`.
std::vector<compiler::CompiledSegment> compile_lut_chain(const compiler::CompileOptions& options) {
  const ir::Model model = parse(lut_chain_model());
  compiler::TensorInfos infos;
  for (const std::string name : {"x", "y1", "y2", "y3", "y4", "y5", "y6"}) {
    infos[name] = {DataType::kInt8, {1, 64, 16, 16}};
  }
  return compiler::compile_bpu_segments(*model.graph, infos, options);
}

std::vector<uint8_t> run_on_device(const compiler::CompiledSegment& seg, const std::vector<uint8_t>& input) {
  simulator::Device device;
  const auto loaded = device.load(seg.program, seg.weights);
  EXPECT_TRUE(loaded.ok()) << loaded.message;
  std::vector<uint8_t> out(input.size());
  const auto job = device.submit(loaded.id, {std::span<const uint8_t>(input)}, {std::span<uint8_t>(out)});
  EXPECT_TRUE(job.ok()) << job.message;
  EXPECT_TRUE(device.wait(job.id, std::chrono::seconds(60)).ok());
  return out;
}

TEST(BpuCompiler, OptionsChangeTheEstimateNotTheResult) {
  std::vector<uint8_t> input(64 * 16 * 16);
  std::mt19937 rng(5);
  for (uint8_t& b : input) b = static_cast<uint8_t>(rng());
  std::vector<uint8_t> reference;
  std::map<std::string, simulator::ProgramEstimate> estimates;
  for (int level = 0; level <= 3; ++level) {
    for (compiler::CompileMode mode : {compiler::CompileMode::kLatency, compiler::CompileMode::kBandwidth}) {
      compiler::CompileOptions o{&bayes_e()};
      o.optimize_level = level;
      o.compile_mode = mode;
      const auto segments = compile_lut_chain(o);
      ASSERT_EQ(segments.size(), 1u);
      const std::vector<uint8_t> out = run_on_device(segments[0], input);
      if (reference.empty()) reference = out;
      EXPECT_EQ(out, reference) << "O" << level;
      const auto decoded = simulator::decode_program(segments[0].program, segments[0].weights);
      ASSERT_TRUE(decoded.ok) << decoded.error;
      const std::string key = "O" + std::to_string(level) + (mode == compiler::CompileMode::kLatency ? "l" : "b");
      estimates[key] = simulator::estimate_program(decoded.program, bayes_e());
    }
  }
  // Double buffering (O1, latency mode) overlaps DMA and compute; chaining (O2) keeps the
  // intermediate LUT outputs on chip: 5 of the 6 stores and loads disappear.
  EXPECT_LT(estimates["O1l"].cycles, estimates["O0l"].cycles);
  EXPECT_EQ(estimates["O1b"].cycles, estimates["O0b"].cycles);
  EXPECT_EQ(estimates["O0l"].stored_bytes, 6u * 64 * 16 * 16);
  EXPECT_EQ(estimates["O2l"].stored_bytes, 1u * 64 * 16 * 16);
  EXPECT_LT(estimates["O2l"].cycles, estimates["O1l"].cycles);
}

TEST(BpuCompiler, EachOptimizeLevelAddsOneNamedFeature) {
  auto count = [](const compiler::Optimizations& o) {
    return int(o.double_buffering) + int(o.chaining) + int(o.shared_chaining);
  };
  for (int level = 0; level <= 3; ++level) EXPECT_EQ(count(compiler::optimizations_of(level)), level) << "O" << level;
  EXPECT_TRUE(compiler::optimizations_of(1).double_buffering);
  EXPECT_TRUE(compiler::optimizations_of(2).chaining);
  EXPECT_FALSE(compiler::optimizations_of(2).shared_chaining);
  EXPECT_TRUE(compiler::optimizations_of(3).shared_chaining);
  EXPECT_THROW(compiler::optimizations_of(4), Error);
  EXPECT_THROW(compiler::optimizations_of(-1), Error);
}

TEST(BpuCompiler, MaxTimePerFunctionCallSplitsTheProgram) {
  compiler::CompileOptions o{&bayes_e()};
  o.optimize_level = 1;  // no chaining: every instruction may start a call
  EXPECT_EQ(compile_lut_chain(o)[0].function_calls, 1u);
  o.max_time_per_fc_us = 1;  // shorter than any instruction: one call each
  const auto segments = compile_lut_chain(o);
  EXPECT_EQ(segments[0].function_calls, 6u);
  const auto decoded = simulator::decode_program(segments[0].program, segments[0].weights);
  ASSERT_TRUE(decoded.ok);
  EXPECT_EQ(decoded.program.instructions.size(), 12u);
}

// Each function call costs the march's function_call_cycles in the estimate, and max_time_per_fc
// counts that cost: a call of more than one instruction never exceeds the limit with it.
TEST(BpuCompiler, EveryFunctionCallCostsItsOwnCyclesAndTheLimitCountsThem) {
  const simulator::MarchSpec& march = bayes_e();
  compiler::CompileOptions o{&march};
  o.optimize_level = 1;
  auto estimate_of = [&](const compiler::CompiledSegment& s) {
    const auto decoded = simulator::decode_program(s.program, s.weights);
    EXPECT_TRUE(decoded.ok) << decoded.error;
    return std::make_pair(decoded.program, simulator::estimate_program(decoded.program, march));
  };
  const simulator::ProgramEstimate one = estimate_of(compile_lut_chain(o)[0]).second;
  ASSERT_EQ(one.instructions.front().opcode, simulator::isa::Opcode::kFunctionBegin);
  EXPECT_EQ(one.instructions.front().cycles, static_cast<uint64_t>(march.function_call_cycles));
  o.max_time_per_fc_us = 1;
  const simulator::ProgramEstimate six = estimate_of(compile_lut_chain(o)[0]).second;
  EXPECT_EQ(six.cycles, one.cycles + 5 * static_cast<uint64_t>(march.function_call_cycles));

  std::set<size_t> counts;
  for (uint64_t limit_us = 5; limit_us <= 65; limit_us += 5) {  // instructions of ~10 us
    o.max_time_per_fc_us = limit_us;
    const compiler::CompiledSegment s = compile_lut_chain(o)[0];
    const auto [program, e] = estimate_of(s);
    const std::vector<uint64_t> calls = simulator::function_call_cycles(program, march);
    ASSERT_EQ(calls.size(), s.function_calls);
    EXPECT_EQ(e.cycles,
              one.cycles + (calls.size() - 1) * static_cast<uint64_t>(march.function_call_cycles))
        << limit_us;
    size_t begin = 0;
    for (size_t c = 0; c < calls.size(); ++c) {
      const size_t end = simulator::function_call_end(program, begin);
      const size_t instructions = end - begin - 1;  // without the FunctionBegin
      ASSERT_GE(instructions, 1u);
      if (instructions > 1) {
        EXPECT_LE(calls[c], limit_us * static_cast<uint64_t>(march.clock_mhz)) << limit_us << " us, call " << c;
      }
      begin = end;
    }
    counts.insert(calls.size());
  }
  EXPECT_GT(counts.size(), 2u);  // the limits above split the chain in several ways
}

TEST(BpuCompiler, JobsDoNotChangeTheResult) {
  const ir::Model model = parse(two_segment_model());
  const compiler::TensorInfos infos = compiler::observe_tensor_infos(model, {{"x", random_int8({1, 3, 8, 8}, 1)}});
  compiler::CompileOptions one{&bayes_e()}, three{&bayes_e()};
  three.jobs = 3;
  const auto a = compiler::compile_bpu_segments(*model.graph, infos, one);
  const auto b = compiler::compile_bpu_segments(*model.graph, infos, three);
  ASSERT_EQ(a.size(), 2u);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].program, b[i].program);
}

}  // namespace
}  // namespace openbpu

namespace openbpu {
namespace {

TEST(BpuCompiler, Nv12InputsGoThroughThePreprocessInstruction) {
  const ir::Model model = parse(
      "graph g (%x: int8[1,3,4,6]) -> (%y) {\n"
      "  init %t: int8[256] uniform(-128, 128)\n"
      "  %y = horizon::HzLut(%x, %t)\n"
      "}\n");
  testing::SegmentChecker checker(model, bayes_e());
  checker.set_image_inputs({{"x", {simulator::isa::ImageFormat::kNv12, {}}}});
  // A yuv444 image as an nv12 → yuv444 conversion makes it: U and V uniform on 2x2 blocks.
  Tensor x = random_int8({1, 3, 4, 6}, 9);
  int8_t* p = x.data<int8_t>();
  for (int c = 1; c <= 2; ++c) {
    for (int h = 0; h < 4; ++h) {
      for (int w = 0; w < 6; ++w) p[c * 24 + h * 6 + w] = p[c * 24 + (h / 2 * 2) * 6 + w / 2 * 2];
    }
  }
  EXPECT_EQ(checker.check({{"x", x}}), "");
  ASSERT_EQ(checker.segments().size(), 1u);
  const auto& seg = checker.segments()[0];
  ASSERT_EQ(seg.input_descs.size(), 1u);
  EXPECT_EQ(seg.input_descs[0].type, simulator::isa::ElementType::kUint8);
  EXPECT_EQ(simulator::element_count(seg.input_descs[0]), 4u * 6 * 3 / 2);  // H·W·3/2 bytes
  const auto decoded = simulator::decode_program(seg.program, seg.weights);
  ASSERT_TRUE(decoded.ok) << decoded.error;
  EXPECT_EQ(decoded.program.instructions[1].opcode, simulator::isa::Opcode::kPreprocess);
  // An image whose chroma is not 2x2-uniform has no NV12 form: the checker says so.
  p[24 + 1] = static_cast<int8_t>(p[24] + 1);
  EXPECT_THROW(checker.check({{"x", x}}), Error);
}

}  // namespace
}  // namespace openbpu

namespace openbpu {
namespace {

// The two-segment model written as a model file by the model writer, then the corruption bar
// (truncations, bit flips, identifier, version, program flips run on the device) — under
// ASan/UBSan in the sanitizer build.
TEST(BpuModelFile, WrittenFileLoadsAndEveryCorruptionIsRejected) {
  const ir::Model model = parse(two_segment_model());
  const compiler::TensorInfos infos = compiler::observe_tensor_infos(model, {{"x", random_int8({1, 3, 8, 8}, 1)}});
  const auto segments = compiler::compile_bpu_segments(*model.graph, infos, {&bayes_e()});
  compiler::ModelWriterOptions options;
  options.model_name = "two_segments";
  options.march = "bayes-e";
  options.debug_map = true;
  format::PackageInfo package;
  package.toolchain_name = "openbpu";
  package.toolchain_version = "test";
  package.models.push_back(compiler::build_model_info(*model.graph, infos, segments, options));
  const format::ModelInfo& m = package.models.front();
  // BPU, CPU (Dequantize, Relu, Quantize), BPU.
  ASSERT_EQ(m.segments.size(), 3u);
  EXPECT_TRUE(std::holds_alternative<format::BpuSegmentInfo>(m.segments[0].body));
  EXPECT_TRUE(std::holds_alternative<format::CpuSegmentInfo>(m.segments[1].body));
  EXPECT_EQ(std::get<format::CpuSegmentInfo>(m.segments[1].body).ops.size(), 3u);
  EXPECT_FALSE(m.debug_map.empty());
  ASSERT_EQ(m.outputs.size(), 1u);
  EXPECT_EQ(m.outputs[0].quanti_type, format::QuantiType::SCALE);  // the int8 output's scale
  std::vector<uint8_t> file;
  const format::Status st = format::serialize_package(package, &file);
  ASSERT_TRUE(st.ok()) << st.message;
  ASSERT_EQ(testing::model_file_load_error(file), "");
  const testing::FaultReport report = testing::model_file_faults(file, 100);
  EXPECT_TRUE(report.accepted.empty()) << report.accepted.front();
  EXPECT_EQ(report.lines.size(), 5u);
}

}  // namespace
}  // namespace openbpu

namespace openbpu {
namespace {

TEST(BpuCompiler, PackedImageInputsInTheirMemoryOrder) {
  const ir::Model model = parse(
      "graph g (%x: int8[1,3,4,5]) -> (%y) {\n"
      "  init %t: int8[256] uniform(-128, 128)\n"
      "  %y = horizon::HzLut(%x, %t)\n"
      "}\n");
  // NHWC bytes of an NCHW model input (input_layout_rt NHWC), and planar bytes.
  for (const std::vector<int>& order : {std::vector<int>{0, 2, 3, 1}, std::vector<int>{}}) {
    testing::SegmentChecker checker(model, bayes_e());
    checker.set_image_inputs({{"x", {simulator::isa::ImageFormat::kPacked, order}}});
    for (uint32_t seed = 1; seed <= 3; ++seed) {
      EXPECT_EQ(checker.check({{"x", random_int8({1, 3, 4, 5}, seed)}}), "") << "order size " << order.size();
    }
    const auto& seg = checker.segments()[0];
    EXPECT_EQ(seg.input_descs[0].type, simulator::isa::ElementType::kUint8);
    const std::vector<uint32_t> dims(seg.input_descs[0].dims, seg.input_descs[0].dims + 4);
    EXPECT_EQ(dims, order.empty() ? (std::vector<uint32_t>{1, 3, 4, 5}) : (std::vector<uint32_t>{1, 4, 5, 3}));
  }
}

}  // namespace
}  // namespace openbpu
