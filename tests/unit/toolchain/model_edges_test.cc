// output_nodes and remove_node_type / remove_node_name (pipeline/model_edges.h).
#include <gtest/gtest.h>

#include "openbpu/common/error.h"
#include "openbpu/ir/dump.h"
#include "openbpu/ir/parse.h"
#include "openbpu/ir/verifier.h"
#include "openbpu/pipeline/model_edges.h"

namespace openbpu::pipeline {
namespace {

using config::RemovableNodeType;

const char* kChain =
    "model opsets=[ai.onnx:13]\n"
    "graph g (%x: float32[1,4,4,3]) -> (%y) {\n"
    "  init %shape: int64[2]{1,48}\n"
    "  %t = Transpose[perm=[0,3,1,2]](%x)\n"
    "  %a = Abs(%t)\n"
    "  %s = Softmax[axis=1](%a)\n"
    "  %y = Reshape(%s, %shape)\n"
    "}\n";

std::vector<std::string> op_types(const ir::Graph& g) {
  std::vector<std::string> ops;
  for (const ir::Node* n : g.nodes()) ops.push_back(n->op_type());
  return ops;
}

TEST(RemoveEdgeNodes, TypesAreRemovedInOrderAtBothEdges) {
  ir::Model m = ir::parse_model(kChain);
  // Softmax is not at an edge until the Reshape after it is gone: the order given matters.
  auto lines = remove_edge_nodes(m, {RemovableNodeType::kSoftmax, RemovableNodeType::kTranspose}, {});
  EXPECT_EQ(op_types(*m.graph), (std::vector<std::string>{"Abs", "Softmax", "Reshape"}));
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("removed node"), std::string::npos) << lines[0];
  // The model's input is now what the Transpose produced, under that name.
  ASSERT_EQ(m.graph->inputs().size(), 1u);
  EXPECT_EQ(m.graph->inputs()[0]->name(), "t");

  lines = remove_edge_nodes(m, {RemovableNodeType::kReshape, RemovableNodeType::kSoftmax}, {});
  EXPECT_EQ(op_types(*m.graph), (std::vector<std::string>{"Abs"}));
  EXPECT_EQ(lines.size(), 2u);
  ASSERT_EQ(m.graph->outputs().size(), 1u);
  EXPECT_EQ(m.graph->outputs()[0]->name(), "a");
  EXPECT_TRUE(ir::verify(*m.graph).empty()) << ir::dump(*m.graph);
}

TEST(RemoveEdgeNodes, ANamedNodeMustBeAtAnEdge) {
  ir::Model m = ir::parse_model(kChain);
  try {
    remove_edge_nodes(m, {}, {"softmax_node_that_is_not_there"});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("has no node 'softmax_node_that_is_not_there'"), std::string::npos) << e.what();
  }
  const std::string abs_name = m.graph->nodes()[1]->name();
  try {
    remove_edge_nodes(m, {}, {abs_name});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("is not at the model's input or output edge"), std::string::npos)
        << e.what();
  }
  const std::string reshape_name = m.graph->nodes()[3]->name();
  EXPECT_EQ(remove_edge_nodes(m, {}, {reshape_name}).size(), 1u);
  EXPECT_EQ(m.graph->outputs()[0]->name(), "s");
}

TEST(OutputNodes, TheNamedOutputsReplaceTheModelsAndDeadNodesGo) {
  ir::Model m = ir::parse_model(kChain);
  const auto lines = apply_output_nodes(m, {"a", "t"});
  EXPECT_EQ(lines.size(), 2u);
  ASSERT_EQ(m.graph->outputs().size(), 2u);
  EXPECT_EQ(m.graph->outputs()[0]->name(), "a");
  EXPECT_EQ(m.graph->outputs()[1]->name(), "t");
  EXPECT_EQ(op_types(*m.graph), (std::vector<std::string>{"Transpose", "Abs"}));
  EXPECT_TRUE(ir::verify(*m.graph).empty()) << ir::dump(*m.graph);
  EXPECT_THROW(apply_output_nodes(m, {"nope"}), Error);
}

}  // namespace
}  // namespace openbpu::pipeline
