#include "openbpu/bpu_support/partitioner.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "openbpu/common/error.h"

namespace openbpu::bpu_support {

const NodePlacement& Partition::at(const ir::Node* node) const {
  for (const NodePlacement& p : nodes) {
    if (p.node == node) return p;
  }
  raise("node '", node->name(), "' is not in the partition");
}

int Partition::bpu_node_count() const {
  return static_cast<int>(std::count_if(nodes.begin(), nodes.end(),
                                        [](const NodePlacement& p) { return p.unit == Unit::kBpu; }));
}

namespace {

bool is_passive(const NodePlacement& p) {
  return p.support != nullptr && p.support->kind == OpKind::kPassive;
}

// A non-constant input that another node computed as integers (the int64 indices of an
// ArgMax, a Shape, ...): the BPU quantizes float feature maps only. Graph inputs that are
// integers (image bytes) are not computed and stay allowed, and so are bool masks (a
// comparison's, read by a Where as int8 0/1).
const ir::Value* computed_integer_input(const ir::Node& n) {
  for (const ir::Value* in : n.inputs()) {
    if (in == nullptr || in->is_constant() || in->producer() == nullptr) continue;
    const kernels::DataType t = in->type().dtype;
    if (t == kernels::DataType::kBool) continue;
    if (t != kernels::DataType::kUndefined && !kernels::dtype_is_float(t)) return in;
  }
  return nullptr;
}

// Passive operators at the edges of the BPU region go to the CPU (as in the reference: nothing
// gives them a threshold there), repeatedly, so a chain at an edge goes node by node. With
// edge_operators_on_bpu they stay when passive BPU nodes connect them to a computing one; only
// passive nodes with no such path go.
void place_passive_edges(Partition& part, const std::unordered_map<const ir::Node*, size_t>& index,
                         const PlacementOverrides& overrides) {
  auto on_bpu = [&](const ir::Node* n) { return n != nullptr && part.nodes[index.at(n)].unit == Unit::kBpu; };
  auto bpu_neighbours = [&](const ir::Node& n, bool consumers) {
    std::vector<const ir::Node*> out;
    if (!consumers) {
      for (const ir::Value* in : n.inputs()) {
        if (in != nullptr && !in->is_constant() && on_bpu(in->producer())) out.push_back(in->producer());
      }
      return out;
    }
    for (const ir::Value* v : n.outputs()) {
      if (v == nullptr) continue;
      for (const ir::Use& u : v->uses()) {
        if (on_bpu(u.node)) out.push_back(u.node);
      }
    }
    return out;
  };
  if (overrides.edge_operators_on_bpu) {
    std::vector<bool> anchored(part.nodes.size(), false);
    std::vector<const ir::Node*> queue;
    for (const NodePlacement& p : part.nodes) {
      if (p.unit == Unit::kBpu && (!is_passive(p) || overrides.run_on_bpu.count(p.node->name()))) {
        anchored[index.at(p.node)] = true;
        queue.push_back(p.node);
      }
    }
    while (!queue.empty()) {
      const ir::Node* n = queue.back();
      queue.pop_back();
      for (bool consumers : {false, true}) {
        for (const ir::Node* m : bpu_neighbours(*n, consumers)) {
          if (!anchored[index.at(m)]) {
            anchored[index.at(m)] = true;
            queue.push_back(m);
          }
        }
      }
    }
    for (NodePlacement& p : part.nodes) {
      if (p.unit != Unit::kBpu || anchored[index.at(p.node)]) continue;
      p.unit = Unit::kCpu;
      p.bpu_capable = true;
      p.reason = "passive operator with no computing BPU neighbour stays on the CPU";
    }
    return;
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (NodePlacement& p : part.nodes) {
      if (p.unit != Unit::kBpu || !is_passive(p) || overrides.run_on_bpu.count(p.node->name())) continue;
      const bool any_bpu_input = !bpu_neighbours(*p.node, false).empty();
      const bool any_bpu_consumer = !bpu_neighbours(*p.node, true).empty();
      if (!any_bpu_input || !any_bpu_consumer) {
        p.unit = Unit::kCpu;
        p.bpu_capable = true;
        p.reason = !any_bpu_input ? "passive operator with no BPU producer stays on the CPU"
                                  : "passive operator with no BPU consumer stays on the CPU";
        changed = true;
      }
    }
  }
}

}  // namespace

std::vector<int> group_subgraphs(std::span<const ir::Node* const> nodes, const std::vector<bool>& on_bpu) {
  std::unordered_map<const ir::Node*, size_t> index;
  for (size_t i = 0; i < nodes.size(); ++i) index[nodes[i]] = i;
  // Groups merge (union-find): `parent` leads to a group's representative, `behind[g]` holds the
  // groups some node of g depends on through a CPU node (never merged with g).
  std::vector<int> parent;
  std::vector<std::set<int>> behind;
  auto find = [&](int g) {
    while (parent[size_t(g)] != g) g = parent[size_t(g)] = parent[size_t(parent[size_t(g)])];
    return g;
  };
  auto canonical = [&](const std::set<int>& groups) {
    std::set<int> out;
    for (int g : groups) out.insert(find(g));
    return out;
  };
  std::unordered_map<const ir::Value*, std::set<int>> depends;     // groups a value depends on
  std::unordered_map<const ir::Value*, std::set<int>> behind_cpu;  // ... through a CPU node
  std::vector<int> group_of(nodes.size(), -1);
  for (size_t i = 0; i < nodes.size(); ++i) {
    const ir::Node* node = nodes[i];
    std::set<int> deps, blocked_raw;
    for (const ir::Value* in : node->inputs()) {
      if (in == nullptr) continue;
      if (auto it = depends.find(in); it != depends.end()) deps.insert(it->second.begin(), it->second.end());
      if (auto it = behind_cpu.find(in); it != behind_cpu.end()) blocked_raw.insert(it->second.begin(), it->second.end());
    }
    const std::set<int> blocked = canonical(blocked_raw);
    std::set<int> out_deps = deps, out_blocked = blocked_raw;
    if (on_bpu[i]) {
      // The node may join producer group g unless that closes a cycle: g is behind a CPU node
      // on one of its inputs, or some group upstream of the node is behind g. All groups it may
      // join merge into one.
      const std::set<int> upstream = canonical(deps);
      auto may_join = [&](int g) {
        if (blocked.count(g)) return false;
        for (int d : upstream) {
          if (d != g && canonical(behind[size_t(d)]).count(g)) return false;
        }
        return true;
      };
      int group = -1;
      for (const ir::Value* in : node->inputs()) {
        if (in == nullptr || in->producer() == nullptr) continue;
        auto p = index.find(in->producer());
        if (p == index.end() || group_of[p->second] < 0) continue;
        const int g = find(group_of[p->second]);
        if (g == group || !may_join(g)) continue;
        if (group < 0) {
          group = g;
          continue;
        }
        const int keep = std::min(group, g), gone = std::max(group, g);
        parent[size_t(gone)] = keep;
        behind[size_t(keep)].insert(behind[size_t(gone)].begin(), behind[size_t(gone)].end());
        group = keep;
      }
      if (group < 0) {
        group = static_cast<int>(parent.size());
        parent.push_back(group);
        behind.emplace_back();
      }
      behind[size_t(group)].insert(blocked.begin(), blocked.end());
      group_of[i] = group;
      out_deps.insert(group);
    } else {
      out_blocked.insert(deps.begin(), deps.end());
    }
    for (const ir::Value* out : node->outputs()) {
      if (out == nullptr) continue;
      depends[out] = out_deps;
      behind_cpu[out] = out_blocked;
    }
  }
  // Number subgraphs by first appearance.
  std::map<int, int> renumber;
  for (int& g : group_of) {
    if (g < 0) continue;
    auto [it, inserted] = renumber.emplace(find(g), static_cast<int>(renumber.size()));
    g = it->second;
  }
  return group_of;
}

// The overrides as names of the graph's nodes: a name that stage 2 expanded into several nodes
// stands for all of them (ir::nodes_standing_for).
PlacementOverrides expanded_overrides(const ir::Graph& graph, const PlacementOverrides& overrides) {
  PlacementOverrides out;
  out.edge_operators_on_bpu = overrides.edge_operators_on_bpu;
  for (auto [list, expanded] : {std::pair{&overrides.run_on_cpu, &out.run_on_cpu},
                                std::pair{&overrides.run_on_bpu, &out.run_on_bpu}}) {
    for (const std::string& name : *list) {
      const std::vector<const ir::Node*> nodes = ir::nodes_standing_for(graph, name);
      if (nodes.empty()) {
        raise("node '", name, "' given in ", list == &overrides.run_on_cpu ? "run_on_cpu" : "run_on_bpu",
              " is not in the model");
      }
      for (const ir::Node* n : nodes) expanded->insert(n->name());
    }
  }
  return out;
}

Partition partition_graph(const ir::Graph& graph, const MarchSpec& march,
                          const PlacementOverrides& given_overrides) {
  const PlacementOverrides overrides = expanded_overrides(graph, given_overrides);

  Partition part;
  std::unordered_map<const ir::Node*, size_t> index;
  for (const ir::Node* n : graph.nodes()) {
    NodePlacement p;
    p.node = n;
    const SupportVerdict v = check_node(*n, march);
    p.support = v.support;
    if (!v.on_bpu_possible) {  // the BPU's limit is the reason, whatever run_on_cpu says
      p.unit = Unit::kCpu;
      p.reason = v.reason();
    } else if (overrides.run_on_cpu.count(n->name())) {
      p.unit = Unit::kCpu;
      p.reason = "run_on_cpu names it";
      p.bpu_capable = true;
    } else if (const ir::Value* indices = computed_integer_input(*n)) {
      p.unit = Unit::kCpu;
      p.reason = "input '" + indices->name() + "' holds computed integers (" +
                 std::string(kernels::dtype_name(indices->type().dtype)) +
                 "), not a feature map the BPU quantizes";
    } else if (cpu_by_default(*v.support, march) && !overrides.run_on_bpu.count(n->name())) {
      p.unit = Unit::kCpu;
      p.reason = str_cat(n->op_type(), " runs on the CPU of ", march.name, " unless run_on_bpu names it");
      p.bpu_capable = true;
    } else {
      p.unit = Unit::kBpu;
    }
    index[n] = part.nodes.size();
    part.nodes.push_back(std::move(p));
  }

  place_passive_edges(part, index, overrides);

  std::vector<const ir::Node*> order;
  std::vector<bool> bpu;
  for (const NodePlacement& p : part.nodes) {
    order.push_back(p.node);
    bpu.push_back(p.unit == Unit::kBpu);
  }
  const std::vector<int> subgraph = group_subgraphs(order, bpu);
  int count = 0;
  for (size_t i = 0; i < part.nodes.size(); ++i) {
    part.nodes[i].subgraph = subgraph[i];
    count = std::max(count, subgraph[i] + 1);
  }
  part.subgraph_count = count;
  return part;
}

}  // namespace openbpu::bpu_support
