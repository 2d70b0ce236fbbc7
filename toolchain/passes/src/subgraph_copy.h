// Copying a subgraph (an If branch, a Loop body) into the graph that encloses it: the inlining
// step if_inlining and control_flow_flattening share.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "openbpu/ir/graph.h"

namespace openbpu::passes {

struct SubgraphCopy {
  ir::Node* before = nullptr;  // the copies go before this node
  // Graph values standing for values of the subgraph (its formal inputs must all be here).
  std::map<const ir::Value*, ir::Value*> bound;
  // The subgraph's own values (constants, node outputs) under other names in the graph; a name
  // not listed keeps its own.
  std::map<std::string, std::string> renamed;
  std::string node_suffix;  // appended to the copies' node names (made unique either way)
};

// Copies `sub`'s constants and nodes into `graph`; values it reads from enclosing scopes are the
// graph's values of those names. The caller has checked that every name the copy creates is
// free in `graph` and every outer name exists there. Returns the graph values of `sub`'s
// outputs.
std::vector<ir::Value*> copy_subgraph(ir::Graph& graph, const ir::Graph& sub, const SubgraphCopy& how);

// Whether `sub` can be copied into `graph` under `renamed`: the names its own values take are
// free in `graph` and not in `taken`, and every value its nodes read is its own, bound
// (`bound_inputs`: its formal inputs are) or `graph`'s.
bool names_fit(const ir::Graph& graph, const ir::Graph& sub, const std::map<std::string, std::string>& renamed,
               const std::set<std::string>& taken, bool bound_inputs);

// The names of `sub`'s own values (not outer-scope ones, not formal inputs).
std::vector<std::string> own_value_names(const ir::Graph& sub);

}  // namespace openbpu::passes
