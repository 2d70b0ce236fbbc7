// BPU/CPU placement of every node and the BPU subgraphs.
//
// A node runs on the BPU when the support table allows it on the march, unless run_on_cpu (or
// node_info ON: CPU) says otherwise; run_on_bpu forces a supported node to the BPU even when it
// is CPU by default. Passive operators (Reshape, Transpose, Concat, ...) at the model's edges
// stay on the CPU: one whose inputs all come from the CPU side, or whose outputs all go there,
// is placed on the CPU (repeated until nothing changes). BPU nodes connected directly form
// subgraphs, and so do sibling BPU regions that read one graph input or CPU result; two never
// merge when a path through a CPU node or another subgraph leads from one to the other, so the
// subgraphs and CPU nodes form an acyclic sequence of segments.
#pragma once

#include <set>
#include <span>
#include <string>
#include <vector>

#include "openbpu/bpu_support/op_def.h"

namespace openbpu::bpu_support {

enum class Unit { kBpu, kCpu };

struct PlacementOverrides {
  std::set<std::string> run_on_cpu;  // node names
  std::set<std::string> run_on_bpu;
  // Passive operators at the edges of the BPU region stay on the BPU (with a threshold of
  // their own), as inserting a "unitconv" next to them does in the reference.
  bool edge_operators_on_bpu = false;
};

struct NodePlacement {
  const ir::Node* node = nullptr;
  Unit unit = Unit::kCpu;
  int subgraph = -1;                  // BPU subgraph id (0, 1, ...) or -1 on the CPU
  std::string reason;                 // why the node is on the CPU ("" on the BPU)
  bool bpu_capable = false;           // the BPU of the march could run it (on the CPU by choice:
                                      // run_on_cpu, a CPU-by-default operator, a passive edge)
  const OpDef* support = nullptr; // table entry, if any
};

struct Partition {
  std::vector<NodePlacement> nodes;  // in graph order
  int subgraph_count = 0;
  const NodePlacement& at(const ir::Node* node) const;
  int bpu_node_count() const;
};

// Subgraph ids (0, 1, ... in order of first appearance; -1 for CPU nodes) of topologically
// sorted `nodes` with their units. A BPU node joins the subgraph of each BPU producer, in input
// order, unless that closes a cycle (a path through a CPU node or another subgraph leads from
// that subgraph to the node), merging them into one (two branches from one CPU tensor that meet
// again are one subgraph); with none to join it starts a new one. Then sibling subgraphs — two
// that read one value the BPU does not produce (a graph input, a CPU node's output; not a
// constant) — merge unless a path leads from one to the other (per value, a subgraph tries the
// 8 latest of its readers that could not merge with each other). A merge keeps the lower id.
// So every subgraph is convex and the subgraphs and CPU nodes always form an acyclic sequence
// of segments (what a control-flow node's graphs read counts as read by the node). A merge
// costs the part of the graph between the two, not the whole graph. (Used by the partitioner
// and by the BPU compiler on the quantized model.)
std::vector<int> group_subgraphs(std::span<const ir::Node* const> nodes, const std::vector<bool>& on_bpu);

// Places the nodes of `graph` (topologically sorted). Throws Error if an override names a node
// the graph does not have.
Partition partition_graph(const ir::Graph& graph, const MarchSpec& march,
                          const PlacementOverrides& overrides = {});

}  // namespace openbpu::bpu_support
