// The operator kernel interface shared by the toolchain's float executor and the runtime's CPU
// executor (design invariant 2: one kernel library).
//
// Life cycle ("prepare, then run"): a KernelDef's factory validates the node's attributes and
// prepares everything that does not depend on input data (create → Kernel). Kernel::run is
// const, so one prepared kernel may run concurrently for independent inferences; it reads the
// inputs, applies the operator's shape rule, allocates its outputs through the context and
// computes them. Errors are KernelErrors whose text states the rule that was broken.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include "openbpu/kernels/attributes.h"
#include "openbpu/kernels/error.h"
#include "openbpu/kernels/tensor.h"
#include "openbpu/kernels/thread_pool.h"

namespace openbpu::kernels {

// A graph attribute of a control-flow operator (If's branches, Loop's body), prepared by the
// executor that runs the node: the operator's semantics (which graph, how often, what is carried)
// live in its kernel, running a graph lives in the executor.
class Subgraph {
 public:
  virtual ~Subgraph() = default;
  // Runs the graph on its formal inputs (`inputs`, one per graph input) and the values it reads
  // from enclosing scopes (`outer`: the node's inputs after its listed ones, as the executor
  // gave them); returns one tensor per graph output. Errors are KernelErrors.
  virtual std::vector<Tensor> run(std::span<const Tensor* const> inputs,
                                  std::span<const Tensor* const> outer) const = 0;
};

struct NamedSubgraph {
  std::string_view name;  // the attribute, e.g. "then_branch"
  std::shared_ptr<const Subgraph> graph;
};

// What a kernel factory knows about the node it prepares.
struct NodeInfo {
  std::string_view name;      // node name (for messages)
  std::string_view op_type;   // e.g. "Conv"
  std::string_view domain;    // "" for ai.onnx
  int opset = 0;              // the model's opset version for `domain`
  const AttributeMap& attrs;  // the node's attributes
  int input_count = 0;        // inputs listed on the node, including empty optional ones
  int output_count = 0;       // outputs listed on the node
  // Graph attributes; the executor passes the outer-scope values they read as inputs after
  // the listed ones.
  std::span<const NamedSubgraph> subgraphs = {};
  // Input i's value when the graph holds it as a constant (else null; may be shorter than the
  // inputs): a kernel may prepare from it once (e.g. pack weights). The tensor lives as long as
  // the kernel, but a run may still be given another tensor for that input.
  std::span<const Tensor* const> constant_inputs = {};
};

// Per-run view of a node's inputs and outputs.
class KernelContext {
 public:
  // `donors` (empty, or one entry per input): a non-null entry is input i's tensor, which the
  // caller gives up after this node (its last use, no other holder of its storage), so that an
  // output may take its storage (allocate_output_for_overwrite with reuse_input).
  KernelContext(std::span<const Tensor* const> inputs, std::span<Tensor> outputs,
                Allocator& allocator, ThreadPool* pool, std::span<Tensor* const> donors = {})
      : inputs_(inputs), outputs_(outputs), allocator_(allocator), pool_(pool), donors_(donors) {}

  int input_count() const { return static_cast<int>(inputs_.size()); }
  int output_count() const { return static_cast<int>(outputs_.size()); }
  // True if input i is listed and not empty ("" for an omitted optional input).
  bool has_input(int i) const {
    return i >= 0 && i < input_count() && inputs_[static_cast<size_t>(i)] != nullptr;
  }
  // Input i; KernelError if it is absent.
  const Tensor& input(int i) const;
  // Input i or nullptr.
  const Tensor* optional_input(int i) const { return has_input(i) ? inputs_[size_t(i)] : nullptr; }

  // Allocates output i with the given type and shape and returns it (Tensor::reset on the
  // output: a caller that keeps its output tensors from one run to the next, as the runtime
  // does, reuses their shape storage). Outputs the node does not list (i >= output_count())
  // are allocated into scratch space so that kernels need no branch.
  Tensor& allocate_output(int i, DataType dtype, const Shape& shape);
  // The same without zeroing, for a kernel that writes every element of the output (the
  // PoisonedOutputs kernel test checks the kernels that use it).
  Tensor& allocate_output_for_overwrite(int i, DataType dtype, const Shape& shape);
  // The same, taking input `reuse_input`'s storage when it is donated and has exactly this type
  // and shape (the output then aliases that input). Only for kernels that read every input
  // element at an index before writing the output element at that index (elementwise maps).
  Tensor& allocate_output_for_overwrite(int i, DataType dtype, const Shape& shape, int reuse_input);
  // Sets output i to share an input's (or any tensor's) storage, e.g. Reshape, Identity.
  void set_output(int i, Tensor tensor);
  Tensor& output(int i) { return outputs_[static_cast<size_t>(i)]; }

  Allocator& allocator() { return allocator_; }
  ThreadPool* thread_pool() const { return pool_; }

 private:
  std::span<const Tensor* const> inputs_;
  std::span<Tensor> outputs_;
  Allocator& allocator_;
  ThreadPool* pool_;
  std::span<Tensor* const> donors_;
  std::list<Tensor> scratch_;  // outputs the node does not list (stable addresses)
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  virtual void run(KernelContext& ctx) const = 0;
};

using KernelFactory = std::unique_ptr<Kernel> (*)(const NodeInfo& node);

// The usual factory: constructs K from the NodeInfo if K has such a constructor, else K().
template <typename K>
std::unique_ptr<Kernel> make_kernel(const NodeInfo& node) {
  if constexpr (std::is_constructible_v<K, const NodeInfo&>) {
    return std::make_unique<K>(node);
  } else {
    (void)node;
    return std::make_unique<K>();
  }
}

// One operator of one domain. `since_version` is the oldest opset whose semantics the kernel
// implements; the factory receives the model's opset and handles later revisions itself.
struct KernelDef {
  std::string_view domain;
  std::string_view op_type;
  int since_version;
  std::vector<AttrSpec> attributes;  // every attribute of every supported revision
  KernelFactory create;
};

}  // namespace openbpu::kernels
