#include <gtest/gtest.h>

#include "openbpu/common/error.h"
#include "openbpu/ir/dump.h"
#include "openbpu/ir/graph.h"
#include "openbpu/ir/verifier.h"

namespace openbpu::ir {
namespace {

using kernels::DataType;

// x -> Abs -> a -> Neg -> y, with a constant c used by a second node.
struct SmallGraph {
  Graph g;
  Value* x;
  Value* c;
  Node* abs;
  Node* add;
  SmallGraph() {
    g.set_name("small");
    x = g.add_value("x", TensorType::of(DataType::kFloat32, {2, 3}));
    g.add_input(x);
    c = g.add_constant("c", Tensor::from_values<float>({3}, std::vector<float>{1, 2, 3}));
    abs = g.add_node({"Abs", {x}, {"a"}, "abs0", "", {}});
    kernels::AttributeMap attrs;
    attrs.set("alpha", 0.5f);
    add = g.add_node({"Add", {g.find_value("a"), c}, {"y"}, "add0", "", attrs});
    g.add_output(g.find_value("y"));
  }
};

TEST(Graph, DumpIsOneLinePerNode) {
  SmallGraph s;
  EXPECT_EQ(dump(s.g),
            "graph small (%x: float32[2,3]) -> (%y) {\n"
            "  init %c: float32[3]{1,2,3}\n"
            "  %a = Abs(%x)\n"
            "  %y = Add[alpha=0.5](%a, %c)\n"
            "}\n");
  EXPECT_TRUE(verify(s.g).empty());
}

TEST(Graph, UseListsFollowMutations) {
  SmallGraph s;
  Value* a = s.g.find_value("a");
  ASSERT_EQ(a->uses().size(), 1u);
  Value* b = s.g.add_node({"Neg", {s.x}, {"b"}, "neg0", "", {}}, s.add)->output(0);
  s.g.replace_all_uses(a, b);
  EXPECT_TRUE(a->uses().empty());
  EXPECT_EQ(b->uses().size(), 1u);
  EXPECT_EQ(s.add->input(0), b);
  s.g.remove_node(s.abs);
  EXPECT_EQ(s.g.find_value("a"), nullptr);
  EXPECT_TRUE(verify(s.g).empty()) << verify(s.g).front();
  EXPECT_EQ(dump_node(*s.add), "%y = Add[alpha=0.5](%b, %c)");
}

TEST(Graph, RemovingAUsedNodeIsAnError) {
  SmallGraph s;
  EXPECT_THROW(s.g.remove_node(s.abs), Error);
  Node* tail = s.g.find_value("y")->producer();
  EXPECT_THROW(s.g.remove_node(tail), Error);  // graph output
}

TEST(Graph, RenameKeepsNamesUnique) {
  SmallGraph s;
  EXPECT_THROW(s.g.rename_value(s.g.find_value("a"), "c"), Error);
  s.g.rename_value(s.g.find_value("a"), "abs_out");
  EXPECT_NE(s.g.find_value("abs_out"), nullptr);
  EXPECT_EQ(s.g.find_value("a"), nullptr);
  EXPECT_EQ(s.g.unique_value_name("x"), "x_1");
  EXPECT_EQ(s.g.unique_value_name("fresh"), "fresh");
}

TEST(Graph, UnusedValuesGoUnlessASubgraphReadsThem) {
  Graph g;
  g.set_name("g");
  Value* x = g.add_value("x", TensorType::of(DataType::kFloat32, {1}));
  g.add_input(x);
  Tensor one = Tensor::from_values<float>({1}, std::vector<float>{1});
  g.add_constant("unused", one);
  g.add_constant("read_by_branch", one);
  auto branch = std::make_shared<Graph>();
  branch->set_name("then");
  Node* inner = branch->add_node({"Neg", {branch->add_outer_scope_value("read_by_branch")}, {"n"}, "neg", "", {}});
  branch->add_output(inner->output(0));
  Tensor flag(DataType::kBool, {});
  Node* node = g.add_node({"If", {g.add_constant("cond", flag)}, {"y"}, "if", "", {}});
  node->graph_attrs().push_back({"then_branch", {branch}, false});
  node->graph_attrs().push_back({"else_branch", {branch}, false});
  g.add_output(node->output(0));
  EXPECT_EQ(g.subgraph_outer_names(), std::set<std::string>{"read_by_branch"});
  EXPECT_EQ(g.remove_unused_values(), 1u);
  EXPECT_EQ(g.find_value("unused"), nullptr);
  EXPECT_NE(g.find_value("read_by_branch"), nullptr);
}

TEST(Graph, TopologicalSortOrdersProducersFirstAndKeepsOrderOtherwise) {
  Graph g;
  Value* x = g.add_value("x", TensorType::of(DataType::kFloat32, {1}));
  g.add_input(x);
  Value* b = g.add_value("b");
  Value* a = g.add_value("a");
  // consumer written before its producer
  g.add_node_with_outputs({"Neg", {a}, {}, "second", "", {}}, {b});
  g.add_node_with_outputs({"Abs", {x}, {}, "first", "", {}}, {a});
  g.add_node({"Relu", {x}, {"c"}, "independent", "", {}});
  g.add_output(b);
  EXPECT_FALSE(verify(g).empty());  // out of order
  g.topological_sort();
  ASSERT_EQ(g.nodes().size(), 3u);
  EXPECT_EQ(g.nodes()[0]->name(), "first");
  EXPECT_EQ(g.nodes()[1]->name(), "second");
  EXPECT_EQ(g.nodes()[2]->name(), "independent");
  EXPECT_TRUE(verify(g).empty());
}

TEST(Graph, TopologicalSortReportsACycle) {
  Graph g;
  Value* p = g.add_value("p");
  Value* q = g.add_value("q");
  g.add_node_with_outputs({"Neg", {q}, {}, "n1", "", {}}, {p});
  g.add_node_with_outputs({"Neg", {p}, {}, "n2", "", {}}, {q});
  try {
    g.topological_sort();
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cycle"), std::string::npos) << e.what();
  }
}

TEST(Verifier, ReportsDanglingDuplicateAndTypeProblems) {
  Graph g;
  Value* x = g.add_value("x", TensorType::of(DataType::kFloat32, {2}));
  g.add_input(x);
  Value* ghost = g.add_value("ghost", TensorType::of(DataType::kInt64, {2}));
  g.add_node({"Add", {x, ghost}, {"y"}, "same", "", {}});
  g.add_node({"Neg", {x}, {"z"}, "same", "", {}});
  g.add_output(g.find_value("y"));
  g.add_output(g.add_value("never_made"));
  const auto problems = verify(g);
  auto mentions = [&](const std::string& text) {
    for (const auto& p : problems) {
      if (p.find(text) != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_TRUE(mentions("'ghost' is not produced")) << problems.front();
  EXPECT_TRUE(mentions("node name 'same' is used by more than one node"));
  EXPECT_TRUE(mentions("must have the same element type"));
  EXPECT_TRUE(mentions("graph output 'never_made' is not produced"));
  EXPECT_THROW(verify_or_throw(g, "model.onnx"), Error);
}

TEST(Verifier, ReportsConstantWhoseTypeDisagrees) {
  Graph g;
  Value* c = g.add_constant("c", Tensor::from_values<float>({2}, std::vector<float>{1, 2}));
  c->set_type(TensorType::of(DataType::kFloat32, {3}));
  g.add_output(c);
  ASSERT_EQ(verify(g).size(), 1u);
  EXPECT_NE(verify(g)[0].find("declared float32[3] but holds float32[2]"), std::string::npos);
}

// base::kMaxTensorBytes: a statically shaped value over 2 GiB is a problem naming it and its
// role; one of symbolic dimensions is not (its size is not known).
TEST(Verifier, ReportsTensorsOverTwoGibibytes) {
  Graph g;
  Value* x = g.add_value("x", TensorType::of(DataType::kFloat32, {1, 1024, 1024, int64_t{1} << 20}));
  g.add_input(x);
  g.add_node({"Relu", {x}, {"y"}, "relu", "", {}});
  g.find_value("y")->set_type(x->type());
  g.add_output(g.find_value("y"));
  const std::string rule = "float32[1,1024,1024,1048576] needs 4398046511104 bytes; a tensor holds at most 2147483647 (2 GiB)";
  EXPECT_EQ(verify(g), (std::vector<std::string>{"tensor 'x' (graph input): " + rule,
                                                  "tensor 'y' (output of node 'relu'): " + rule}));
  TensorType symbolic;
  symbolic.dtype = DataType::kFloat32;
  symbolic.shape = std::vector<Dim>{Dim::symbolic("n"), Dim::known(int64_t{1} << 40)};
  x->set_type(symbolic);
  g.find_value("y")->set_type(symbolic);
  EXPECT_TRUE(verify(g).empty());
}

TEST(TensorType, PrintsSymbolicAndUnknownDims) {
  TensorType t;
  t.dtype = DataType::kFloat16;
  t.shape = std::vector<Dim>{Dim::symbolic("batch"), Dim::known(3), Dim::unknown()};
  EXPECT_EQ(t.to_string(), "float16[batch,3,?]");
  EXPECT_FALSE(t.static_shape().has_value());
  EXPECT_EQ(TensorType{}.to_string(), "?");
}

}  // namespace
}  // namespace openbpu::ir
