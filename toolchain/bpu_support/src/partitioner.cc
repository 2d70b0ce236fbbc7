#include "openbpu/bpu_support/partitioner.h"

#include <algorithm>
#include <cstdint>
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


// The segments of a graph being grouped — a unit per node, BPU units merging into subgraphs
// (union-find; a merge keeps the lower id) — kept in a topological order while units are added
// and merged. Two units merge unless a path through a third unit (a CPU node, another
// subgraph) connects them, which is exactly what keeps the segments acyclic. The order is
// repaired as for an edge insertion (Pearce & Kelly): only units placed between the two move,
// and none when no unit between them reaches the later one or is reached from the earlier one
// (a node joining its producer's subgraph, usually). So a merge costs the region between the
// two, not the graph.
class SegmentDag {
 public:
  // A new unit read by `producers` (units), last in the order.
  int add(const std::vector<int>& producers) {
    const int u = static_cast<int>(parent_.size());
    parent_.push_back(u);
    ord_.push_back(next_ord_++);
    mark_.push_back(0);
    succ_.emplace_back();
    pred_.emplace_back();
    for (int p : producers) {
      p = find(p);
      succ_[size_t(p)].push_back(u);
      pred_[size_t(u)].push_back(p);
    }
    return u;
  }

  int find(int u) {
    while (parent_[size_t(u)] != u) u = parent_[size_t(u)] = parent_[size_t(parent_[size_t(u)])];
    return u;
  }

  // Merges units x and y unless a path through a third unit (a CPU node or another subgraph)
  // leads from one to the other. True if they are one unit afterwards.
  bool merge(int x, int y) {
    int lo = find(x), hi = find(y);
    if (lo == hi) return true;
    if (ord_[size_t(lo)] > ord_[size_t(hi)]) std::swap(lo, hi);
    const int lo_ord = ord_[size_t(lo)], hi_ord = ord_[size_t(hi)];
    // Units between the two in the order that reach hi; one that lo reaches closes a cycle.
    std::vector<int> to_hi;
    if (!collect(hi, pred_, lo, [&](int w) { return ord_[size_t(w)] > lo_ord; }, to_hi)) return false;
    int merged_ord = lo_ord;
    if (to_hi.size() > 1) {
      // Units between them that lo reaches; the others go before them, then hi, then lo.
      std::vector<int> from_lo;
      collect(lo, succ_, hi, [&](int w) { return ord_[size_t(w)] < hi_ord; }, from_lo);
      merged_ord = hi_ord;
      if (from_lo.size() > 1) {
        auto by_order = [&](int u, int w) { return ord_[size_t(u)] < ord_[size_t(w)]; };
        std::sort(to_hi.begin(), to_hi.end(), by_order);
        std::sort(from_lo.begin(), from_lo.end(), by_order);
        std::vector<int> places;
        for (const auto* units : {&to_hi, &from_lo}) {
          for (int u : *units) places.push_back(ord_[size_t(u)]);
        }
        std::sort(places.begin(), places.end());
        size_t k = 0;
        for (const auto* units : {&to_hi, &from_lo}) {
          for (int u : *units) ord_[size_t(u)] = places[k++];
        }
        merged_ord = ord_[size_t(hi)];
      }
    }
    const int keep = std::min(lo, hi), gone = std::max(lo, hi);
    parent_[size_t(gone)] = keep;
    ord_[size_t(keep)] = merged_ord;
    for (auto* edges : {&succ_, &pred_}) {
      std::vector<int>& to = (*edges)[size_t(keep)];
      std::vector<int>& from = (*edges)[size_t(gone)];
      if (to.size() < from.size()) to.swap(from);
      to.insert(to.end(), from.begin(), from.end());
      std::vector<int>().swap(from);
    }
    return true;
  }

 private:
  // The units reached from `start` along `edges` through units `within` allows (start
  // included) into `seen`. False when `other` is reached from any unit but `start` (a path
  // start - other through a third unit).
  template <typename Within>
  bool collect(int start, const std::vector<std::vector<int>>& edges, int other, Within within,
               std::vector<int>& seen) {
    ++stamp_;
    mark_[size_t(start)] = stamp_;
    seen.push_back(start);
    for (size_t next = 0; next < seen.size(); ++next) {
      const int u = seen[next];
      for (int w : edges[size_t(u)]) {
        w = find(w);
        if (w == other) {
          if (u != start) return false;
          continue;
        }
        if (mark_[size_t(w)] == stamp_ || !within(w)) continue;
        mark_[size_t(w)] = stamp_;
        seen.push_back(w);
      }
    }
    return true;
  }

  std::vector<int> parent_;
  std::vector<int> ord_;                        // place in the topological order
  std::vector<std::vector<int>> succ_, pred_;  // per unit; may name merged-away units
  std::vector<uint32_t> mark_;
  uint32_t stamp_ = 0;
  int next_ord_ = 0;
};

// The values a node reads: its inputs and, for a control-flow node, what its graphs read from
// the graph around it.
std::vector<const ir::Value*> values_read(const ir::Node& node) {
  std::vector<const ir::Value*> out(node.inputs().begin(), node.inputs().end());
  if (!node.graph_attrs().empty() && node.owner() != nullptr) {
    for (const std::string& name : ir::implicit_input_names(node)) out.push_back(node.owner()->find_value(name));
  }
  return out;
}

// How many earlier subgraphs reading the same non-BPU value a subgraph tries to merge with,
// latest first: bounds the work when many subgraphs that depend on each other read one tensor
// (a graph input read by every step of an unrolled loop).
constexpr size_t kSiblingTries = 8;

}  // namespace

std::vector<int> group_subgraphs(std::span<const ir::Node* const> nodes, const std::vector<bool>& on_bpu) {
  std::unordered_map<const ir::Node*, size_t> index;
  for (size_t i = 0; i < nodes.size(); ++i) index[nodes[i]] = i;
  auto producer_index = [&](const ir::Value* v) -> int {
    if (v == nullptr || v->producer() == nullptr) return -1;
    auto it = index.find(v->producer());
    return it == index.end() ? -1 : static_cast<int>(it->second);
  };
  // A unit per node (unit i is node i); a BPU node joins the subgraph of each BPU producer in
  // input order unless that closes a cycle through a CPU node or another subgraph.
  SegmentDag dag;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const std::vector<const ir::Value*> reads = values_read(*nodes[i]);
    std::vector<int> producers;
    for (const ir::Value* v : reads) {
      if (const int p = producer_index(v); p >= 0) producers.push_back(p);
    }
    const int unit = dag.add(producers);
    if (!on_bpu[i]) continue;
    for (int p : producers) {
      if (on_bpu[size_t(p)]) dag.merge(p, unit);
    }
  }
  // Sibling subgraphs: subgraphs reading a common value the BPU does not produce (a graph
  // input, a CPU node's output) merge unless a path leads from one to the other. After the
  // producer rule, so that a merge never keeps a node from joining its producer's subgraph.
  std::unordered_map<const ir::Value*, std::vector<int>> readers;  // one per set that could not merge
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!on_bpu[i]) continue;
    for (const ir::Value* in : nodes[i]->inputs()) {
      if (in == nullptr || in->is_constant()) continue;
      if (const int p = producer_index(in); p >= 0 && on_bpu[size_t(p)]) continue;
      std::vector<int>& sets = readers[in];
      bool joined = false;
      for (size_t k = 0; k < sets.size() && k < kSiblingTries && !joined; ++k) {
        joined = dag.merge(sets[sets.size() - 1 - k], static_cast<int>(i));
      }
      if (!joined) sets.push_back(static_cast<int>(i));
    }
  }
  // Number subgraphs by first appearance.
  std::vector<int> group_of(nodes.size(), -1);
  std::unordered_map<int, int> renumber;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!on_bpu[i]) continue;
    auto [it, inserted] = renumber.emplace(dag.find(static_cast<int>(i)), static_cast<int>(renumber.size()));
    group_of[i] = it->second;
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
