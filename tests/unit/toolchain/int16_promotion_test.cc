#include "openbpu/pipeline/int16_promotion.h"

#include <gtest/gtest.h>

#include "openbpu/ir/parse.h"

namespace openbpu::pipeline {
namespace {

// A 3x3 Conv of 256 channels (expensive in int16: the MAC array runs int16 at a fraction of
// int8's rate), a Relu, a 1x1 Conv and an Add (vector lanes and DMA only).
constexpr const char* kGraph = R"(
graph g (%x: float32[1,256,32,32]) -> (%y) {
  init %w3: float32[256,256,3,3]
  init %w1: float32[256,256,1,1]
  %a: float32[1,256,32,32] = Conv[pads=[1,1,1,1]](%x, %w3)
  %b: float32[1,256,32,32] = Relu(%a)
  %c: float32[1,256,32,32] = Conv(%b, %w1)
  %y: float32[1,256,32,32] = Add(%c, %b)
}
)";

calibration::NodeSensitivity ranked(const ir::Model& m, size_t node, double score) {
  calibration::NodeSensitivity s;
  s.node = m.graph->nodes()[node]->name();
  s.op_type = m.graph->nodes()[node]->op_type();
  s.metrics.score = score;
  return s;
}

std::vector<std::string> names(const ir::Model& m, std::initializer_list<size_t> nodes) {
  std::vector<std::string> out;
  for (size_t n : nodes) out.push_back(m.graph->nodes()[n]->name());
  return out;
}

TEST(Int16Promotion, GainPerCycleWithinTheBudget) {
  const ir::Model m = ir::parse_model(kGraph);
  const simulator::MarchSpec& march = simulator::march_spec(simulator::March::kBayesE);
  // Ranking order (most sensitive first): the 3x3 Conv, the Add, the Relu; the 1x1 Conv at the
  // cutoff gains nothing. Per cycle of int16 cost the Conv gains least (bayes-e: int16 MACs at a
  // quarter of int8's rate, DMA at 5.3 bytes a cycle).
  const std::vector<calibration::NodeSensitivity> ranking = {
      ranked(m, 0, 0.99), ranked(m, 3, 0.99), ranked(m, 1, 0.995), ranked(m, 2, kInt16Cutoff)};

  const Int16Choice all = choose_int16_nodes(*m.graph, ranking, march, 10.0);
  EXPECT_EQ(all.nodes, names(m, {0, 3, 1}));  // ranking order; never the node at the cutoff
  EXPECT_GT(all.int8_cycles, 0u);
  EXPECT_GT(all.added_cycles, 0u);

  // Must not fire: no budget, no promotion.
  EXPECT_TRUE(choose_int16_nodes(*m.graph, ranking, march, 0.0).nodes.empty());

  // Just short of everything: the 3x3 Conv has the least gain per cycle and is passed over, the
  // cheaper nodes after it in the ranking still fit.
  const double short_budget =
      (static_cast<double>(all.added_cycles) - 1) / static_cast<double>(all.int8_cycles);
  const Int16Choice some = choose_int16_nodes(*m.graph, ranking, march, short_budget);
  EXPECT_EQ(some.nodes, names(m, {3, 1}));
  EXPECT_LE(static_cast<double>(some.added_cycles), short_budget * static_cast<double>(some.int8_cycles));
  EXPECT_EQ(some.int8_cycles, all.int8_cycles);
}

// Nodes the ranking names but the graph lacks are left out and count no cycles. The budget is
// a share of the ranked nodes' int8 cycles: a Relu alone doubles its own (its DMA), beyond the
// default half.
TEST(Int16Promotion, UnknownNodesAreSkipped) {
  const ir::Model m = ir::parse_model(kGraph);
  const simulator::MarchSpec& march = simulator::march_spec(simulator::March::kBayesE);
  calibration::NodeSensitivity ghost;
  ghost.node = "not_in_the_graph";
  ghost.metrics.score = 0.5;
  const Int16Choice relu = choose_int16_nodes(*m.graph, {ranked(m, 1, 0.999)}, march, 10.0);
  const Int16Choice c = choose_int16_nodes(*m.graph, {ghost, ranked(m, 1, 0.999)}, march, 10.0);
  EXPECT_EQ(c.nodes, names(m, {1}));
  EXPECT_EQ(c.int8_cycles, relu.int8_cycles);
  EXPECT_TRUE(choose_int16_nodes(*m.graph, {ghost, ranked(m, 1, 0.999)}, march).nodes.empty());
}

}  // namespace
}  // namespace openbpu::pipeline
