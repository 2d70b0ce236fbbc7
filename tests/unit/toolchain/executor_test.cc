#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

#include "openbpu/common/error.h"
#include "openbpu/executor/float_executor.h"

namespace openbpu::executor {
namespace {

using ir::TensorType;
using kernels::DataType;

// Makes `m` an opset-13 model whose graph has one float32 input "x" of `n` values; returns x.
ir::Value* float_input(ir::Model& m, int64_t n) {
  m.opsets.push_back({"", 13});
  ir::Value* x = m.graph->add_value("x", TensorType::of(DataType::kFloat32, {n}));
  m.graph->add_input(x);
  return x;
}

// x -> Abs -> a -> Neg -> b -> Sqrt -> ... a chain of `length` unary nodes ending in y.
ir::Model chain_model(int length, int64_t n) {
  ir::Model m;
  ir::Value* v = float_input(m, n);
  ir::Graph& g = *m.graph;
  const char* ops[] = {"Abs", "Sqrt", "Exp"};
  for (int i = 0; i < length; ++i) {
    const std::string out = i + 1 == length ? "y" : "v" + std::to_string(i);
    v = g.add_node({ops[i % 3], {v}, {out}, "n" + std::to_string(i), "", {}})->output(0);
  }
  g.add_output(v);
  return m;
}

TEST(FloatExecutor, RunsAChainAndObservesEveryValue) {
  ir::Model m = chain_model(3, 4);
  FloatExecutor exec(m);
  std::vector<std::string> seen;
  RunOptions opts;
  opts.observer = [&](const ir::Node&, const ir::Value& v, const Tensor&) { seen.push_back(v.name()); };
  opts.extra_outputs = {"v0"};
  const RunResult r = exec.run({{"x", Tensor::from_values<float>({4}, std::vector<float>{-4, 1, -9, 0})}}, opts);
  EXPECT_EQ(seen, (std::vector<std::string>{"v0", "v1", "y"}));
  ASSERT_EQ(r.names, (std::vector<std::string>{"y", "v0"}));
  EXPECT_NEAR(r.at("y").float_at(0), std::exp(2.0), 1e-5);
  EXPECT_EQ(r.at("v0").float_at(2), 9.0);
}

TEST(FloatExecutor, ReleasesValuesAfterTheirLastUse) {
  // 20 nodes over 1 MiB tensors: liveness keeps at most two intermediates (+ the output) alive.
  ir::Model m = chain_model(20, 1 << 18);
  FloatExecutor exec(m);
  Tensor x(DataType::kFloat32, {1 << 18});
  exec.run({{"x", x}});
  EXPECT_LE(exec.buffer_pool().peak_live_bytes(), 3u * (1u << 20));
}

TEST(FloatExecutor, ChecksFeeds) {
  ir::Model m = chain_model(2, 4);
  FloatExecutor exec(m);
  auto message = [&](const std::map<std::string, Tensor>& feeds) {
    try {
      exec.run(feeds);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message({}), "input 'x' (float32[4]) is not given");
  EXPECT_EQ(message({{"x", Tensor(DataType::kFloat32, {4})}, {"z", Tensor(DataType::kFloat32, {4})}}),
            "the model has no input named 'z' (inputs: x)");
  EXPECT_EQ(message({{"x", Tensor(DataType::kInt32, {4})}}),
            "input 'x' must be float32 (float32[4]), got int32[4]");
  EXPECT_EQ(message({{"x", Tensor(DataType::kFloat32, {5})}}),
            "input 'x' must have shape float32[4], got float32[5]");
}

TEST(FloatExecutor, NamesTheNodeThatFails) {
  ir::Model m = chain_model(1, 2);
  m.graph->nodes()[0]->set_op_type("NoKernelForThis");
  try {
    FloatExecutor exec(m);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "node 'n0' (NoKernelForThis): no kernel for operator NoKernelForThis");
  }
  ir::Model ints = chain_model(2, 2);  // Sqrt of int32 fails at run time
  ints.graph->inputs()[0]->set_type(TensorType::of(DataType::kInt32, {2}));
  FloatExecutor exec(ints);
  try {
    exec.run({{"x", Tensor(DataType::kInt32, {2})}});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("node 'n1' (Sqrt) failed on inputs (int32[2])"), std::string::npos)
        << e.what();
  }
}

TEST(FloatExecutor, ResultsDoNotDependOnThreadCount) {
  ir::Model m = chain_model(6, 100000);
  Tensor x(DataType::kFloat32, {100000});
  for (int64_t i = 0; i < x.element_count(); ++i) x.data<float>()[i] = static_cast<float>(i % 97) - 40;
  FloatExecutor one(m, {1}), four(m, {4});
  const Tensor a = one.run({{"x", x}}).tensors[0];
  const Tensor b = four.run({{"x", x}}).tensors[0];
  EXPECT_EQ(0, std::memcmp(a.raw_data(), b.raw_data(), a.byte_size()));
}

// A run in pieces: the prefix runs once; the state finishes in an executor whose later nodes
// have other attributes (LeakyRelu's alpha), and in the first executor again. Each result
// equals a full run of its own model; the extra output produced in the prefix survives it.
TEST(FloatExecutor, ResumesARunStateInAnotherExecutorOfTheSameGraph) {
  ir::Model m;
  ir::Value* x = float_input(m, 4);
  ir::Graph& g = *m.graph;
  ir::Value* a = g.add_node({"Neg", {x}, {"a"}, "neg", "", {}})->output(0);
  ir::Node* leaky = g.add_node({"LeakyRelu", {a}, {"b"}, "leaky", "", {}});
  ir::Value* y = g.add_node({"Abs", {leaky->output(0)}, {"y"}, "abs", "", {}})->output(0);
  g.add_output(y);
  const Tensor in = Tensor::from_values<float>({4}, std::vector<float>{-4, 1, -9, 2});
  RunOptions opts;
  opts.extra_outputs = {"a"};

  FloatExecutor first(m);
  ASSERT_EQ(first.step_of(*leaky), 1u);
  RunState state = first.start({{"x", in}}, opts);
  first.advance(state, first.step_of(*leaky));
  EXPECT_EQ(state.next_step(), 1u);
  const RunResult own = first.finish(state);
  EXPECT_EQ(own.at("y").float_at(1), 0.01f);  // default alpha 0.01 on -1
  EXPECT_EQ(own.at("a").float_at(0), 4.0f);

  leaky->attrs().set("alpha", 0.5f);
  FloatExecutor second(m);
  const RunResult resumed = second.finish(state);
  const RunResult full = second.run({{"x", in}}, opts);
  ASSERT_EQ(resumed.names, full.names);
  for (size_t i = 0; i < full.tensors.size(); ++i) {
    EXPECT_EQ(0, std::memcmp(resumed.tensors[i].raw_data(), full.tensors[i].raw_data(),
                             full.tensors[i].byte_size()));
  }
  EXPECT_EQ(resumed.at("y").float_at(1), 0.5f);
  EXPECT_EQ(first.finish(state).at("y").float_at(1), 0.01f);  // the state is unchanged

  // Another graph's state is refused.
  ir::Model other = chain_model(3, 4);
  FloatExecutor stranger(other);
  EXPECT_THROW(stranger.finish(state), Error);
  EXPECT_THROW(stranger.step_of(*leaky), Error);
}

// Elementwise nodes write their output over an input whose last use they are, unless
// something else holds it: a value read again later, the caller's feed, a tensor an observer
// kept, a run state shared by two finishes. Every one of those keeps its values.
TEST(FloatExecutor, ElementwiseOutputsReuseOnlyInputsNothingElseHolds) {
  ir::Model m;
  ir::Value* x = float_input(m, 4);
  ir::Graph& g = *m.graph;
  ir::Value* a = g.add_node({"Neg", {x}, {"a"}, "neg", "", {}})->output(0);
  ir::Value* b = g.add_node({"Abs", {a}, {"b"}, "abs", "", {}})->output(0);  // a read again below
  ir::Value* c = g.add_node({"Relu", {b}, {"c"}, "relu", "", {}})->output(0);
  ir::Value* d = g.add_node({"Mul", {a, c}, {"d"}, "mul", "", {}})->output(0);
  ir::Value* y = g.add_node({"Neg", {d}, {"y"}, "neg2", "", {}})->output(0);
  g.add_output(y);
  const std::vector<float> want_y{-16, 1, -81, 4};
  auto values = [](const Tensor& t) {
    return std::vector<float>(t.data<float>(), t.data<float>() + t.element_count());
  };
  const Tensor in = Tensor::from_values<float>({4}, std::vector<float>{-4, 1, -9, 2});
  FloatExecutor exec(m);

  EXPECT_EQ(values(exec.run({{"x", in}}).at("y")), want_y);
  EXPECT_EQ(values(in), (std::vector<float>{-4, 1, -9, 2}));  // the feed

  std::map<std::string, Tensor> kept;  // shares storage with the run's values
  RunOptions keep;
  keep.observer = [&](const ir::Node&, const ir::Value& v, const Tensor& t) { kept[v.name()] = t; };
  EXPECT_EQ(values(exec.run({{"x", in}}, keep).at("y")), want_y);
  EXPECT_EQ(values(kept.at("a")), (std::vector<float>{4, -1, 9, -2}));
  EXPECT_EQ(values(kept.at("b")), (std::vector<float>{4, 1, 9, 2}));
  EXPECT_EQ(values(kept.at("c")), (std::vector<float>{4, 1, 9, 2}));
  EXPECT_EQ(values(kept.at("d")), (std::vector<float>{16, -1, 81, -4}));

  RunState state = exec.start({{"x", in}});
  exec.advance(state, 2);  // a and b computed; both finishes below reuse them
  EXPECT_EQ(values(exec.finish(state).at("y")), want_y);
  EXPECT_EQ(values(exec.finish(state).at("y")), want_y);

  // A chain over 1 MiB tensors runs in one buffer: each node writes over its input.
  ir::Model chain = chain_model(20, 1 << 18);
  FloatExecutor long_run(chain);
  long_run.run({{"x", Tensor(DataType::kFloat32, {1 << 18})}});
  EXPECT_LE(long_run.buffer_pool().peak_live_bytes(), 1u << 20);
}

// refresh_node re-creates one node's kernel from its attributes as they are now; until then the
// executor keeps the kernel it built, and an invalid new attribute names the node.
TEST(FloatExecutor, RefreshNodeTakesTheNodesCurrentAttributes) {
  ir::Model m;
  ir::Value* x = float_input(m, 2);
  ir::Graph& g = *m.graph;
  ir::Node* leaky = g.add_node({"LeakyRelu", {x}, {"y"}, "leaky", "", {}});
  g.add_output(leaky->output(0));
  const Tensor in = Tensor::from_values<float>({2}, std::vector<float>{-2, 3});
  FloatExecutor exec(m);
  leaky->attrs().set("alpha", 0.5f);
  EXPECT_EQ(exec.run({{"x", in}}).at("y").float_at(0), -0.02f);
  exec.refresh_node(*leaky);
  EXPECT_EQ(exec.run({{"x", in}}).at("y").float_at(0), -1.0f);
  leaky->attrs().set("alpha", std::string("steep"));
  try {
    exec.refresh_node(*leaky);
    FAIL() << "a string alpha was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("node 'leaky' (LeakyRelu)"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace openbpu::executor

namespace openbpu::executor {
namespace {

// Exporters' float16 graphs: Cast to float16, fp16 ops, Cast back.
// A half-precision Conv computes in float32 on its widened input and weights (packed once) and
// rounds its output to float16: the bits of the float32 graph on the same values, rounded. The
// next node reads the rounded value held as float32 (what an observer sees); the graph output
// comes back as float16.
TEST(FloatExecutor, Float16NodesComputeInFloat32AndRoundTheirOutputs) {
  auto half = [](kernels::Shape shape, const std::vector<float>& v) {
    Tensor t(DataType::kFloat16, std::move(shape));
    for (size_t i = 0; i < v.size(); ++i) t.data<kernels::Float16>()[i] = kernels::Float16(v[i]);
    return t;
  };
  auto wide = [](const Tensor& h) {
    Tensor t(DataType::kFloat32, h.shape());
    for (int64_t i = 0; i < h.element_count(); ++i)
      t.data<float>()[i] = static_cast<float>(h.data<kernels::Float16>()[i]);
    return t;
  };
  // Depth 576: float32 and double sums round to other float16 values for some outputs.
  std::vector<float> xv(64 * 16 * 16), wv(8 * 64 * 3 * 3), bv(8, 0.5f);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = std::sin(0.37f * float(i)) * 3.0f;
  for (size_t i = 0; i < wv.size(); ++i) wv[i] = std::cos(0.91f * float(i)) * 0.7f;
  const Tensor x = half({1, 64, 16, 16}, xv), w = half({8, 64, 3, 3}, wv), b = half({8}, bv);
  kernels::AttributeMap pads;
  pads.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  auto model = [&](DataType type, const Tensor& wt, const Tensor& bt) {
    ir::Model m;
    m.opsets.push_back({"", 13});
    ir::Graph& g = *m.graph;
    ir::Value* in = g.add_value("x", TensorType::of(type, {1, 64, 16, 16}));
    g.add_input(in);
    ir::Node* conv = g.add_node(
        {"Conv", {in, g.add_constant("w", wt), g.add_constant("b", bt)}, {"c"}, "conv", "", pads});
    conv->output(0)->set_type(TensorType::of(type, {1, 8, 16, 16}));
    ir::Value* y = g.add_node({"Relu", {conv->output(0)}, {"y"}, "relu", "", {}})->output(0);
    y->set_type(TensorType::of(type, {1, 8, 16, 16}));
    g.add_output(y);
    return m;
  };
  const ir::Model h16 = model(DataType::kFloat16, w, b),
                  f32 = model(DataType::kFloat32, wide(w), wide(b));
  FloatExecutor half_exec(h16), float_exec(f32);
  Tensor seen;
  RunOptions opts;
  opts.observer = [&](const ir::Node&, const ir::Value& v, const Tensor& t) {
    if (v.name() == "c") seen = t.clone();
  };
  const Tensor y = half_exec.run({{"x", x}}, opts).tensors[0];
  RunOptions keep_c;
  keep_c.extra_outputs = {"c"};
  const Tensor c32 = float_exec.run({{"x", wide(x)}}, keep_c).at("c");
  ASSERT_EQ(y.dtype(), DataType::kFloat16);
  ASSERT_EQ(seen.dtype(), DataType::kFloat32);
  for (int64_t i = 0; i < c32.element_count(); ++i) {
    const kernels::Float16 rounded(c32.data<float>()[i]);
    ASSERT_EQ(kernels::Float16(seen.data<float>()[i]).bits, rounded.bits) << i;
    ASSERT_EQ(seen.data<float>()[i], static_cast<float>(rounded)) << i;
    const float relu = std::max(0.0f, static_cast<float>(rounded));
    ASSERT_EQ(y.data<kernels::Float16>()[i].bits, kernels::Float16(relu).bits) << i;
  }
}

TEST(FloatExecutor, RunsFloat16GraphsWithCastsAroundOps) {
  ir::Model m;
  ir::Value* x = float_input(m, 4);
  ir::Graph& g = *m.graph;
  Tensor half(DataType::kFloat16, {1});
  half.data<kernels::Float16>()[0] = kernels::Float16(0.5f);
  ir::Value* k = g.add_constant("k", half);
  kernels::AttributeMap to16, to32;
  to16.set("to", int64_t{10});
  to32.set("to", int64_t{1});
  ir::Value* h = g.add_node({"Cast", {x}, {"h"}, "to16", "", to16})->output(0);
  ir::Value* p = g.add_node({"Mul", {h, k}, {"p"}, "mul", "", {}})->output(0);
  ir::Value* r = g.add_node({"Relu", {p}, {"r"}, "relu", "", {}})->output(0);
  g.add_output(g.add_node({"Cast", {r}, {"y"}, "to32", "", to32})->output(0));
  FloatExecutor exec(m);
  const Tensor y =
      exec.run({{"x", Tensor::from_values<float>({4}, std::vector<float>{-2, 3, 0.1f, 65504})}}).tensors[0];
  ASSERT_EQ(y.dtype(), DataType::kFloat32);
  EXPECT_EQ(y.float_at(0), 0.0);
  EXPECT_EQ(y.float_at(1), 1.5);
  EXPECT_NEAR(y.float_at(2), 0.05, 1e-4);  // float16 resolution
  EXPECT_EQ(y.float_at(3), 32752.0);
}

}  // namespace
}  // namespace openbpu::executor
