// Runs an IR model with the shared kernel library (float and integer reference semantics).
//
// Prepare once (constructor): kernels are created and their attributes validated for every
// node, value slots are planned, and each value's last use is computed so that a tensor is
// released as soon as no later node needs it (memory follows value liveness; freed buffers are
// recycled by a BufferPool). Run many times: feeds are checked against the graph inputs, nodes
// run in topological order, kernels parallelise internally over `threads`.
//
// Half-precision exports compute in float32, as ONNX Runtime's CPU provider does with the casts
// it inserts: a node with float16 inputs gets them widened exactly (float16 constants once,
// when the executor is prepared, so that e.g. convolution weights are packed once) and runs its
// kernel's float32 path; an output the graph declares float16 is rounded to float16 precision
// (nearest even) in place and kept as float32 holding that value, so that the next node reads
// it without another conversion. The values are those of float16 storage between nodes; graph
// outputs (and extra outputs) declared float16 are returned as float16, while observers see the
// float32 form. Casts and control flow run as written.
//
// Any value can be observed while the model runs (calibration statistics, dumps, the accuracy
// debugger) or returned by name in addition to the graph outputs. A run can also go in pieces
// (start, advance, finish) so that a prefix computed once is finished several ways.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "openbpu/ir/graph.h"
#include "openbpu/kernels/buffer_pool.h"
#include "openbpu/kernels/kernel.h"

namespace openbpu::executor {

using kernels::Tensor;

struct ExecutorOptions {
  int threads = 1;  // total parallelism inside kernels (1 = single-threaded)
};

struct RunOptions {
  // Names of intermediate values to return besides the graph outputs.
  std::vector<std::string> extra_outputs;
  // Called after each node for each output it produced. The tensor stays valid only during
  // the call; copy it (Tensor::clone) to keep it.
  std::function<void(const ir::Node& node, const ir::Value& value, const Tensor& tensor)> observer;
  // If set, receives one entry per node: its wall-clock time in this run (microseconds).
  std::vector<std::pair<const ir::Node*, double>>* node_times_us = nullptr;
};

// A run between two steps: every value that a later step or the result reads, and the run's
// options. Copies share the tensors (no element is copied); a kernel never writes its inputs.
class RunState {
 public:
  size_t next_step() const { return next_step_; }  // the first step not run yet

 private:
  friend class FloatExecutor;
  std::vector<const ir::Value*> values_;  // the starting executor's values, in slot order
  std::vector<Tensor> slots_;
  std::vector<bool> filled_;
  std::vector<int> extra_slots_;  // RunOptions::extra_outputs, kept until the end
  RunOptions options_;
  size_t next_step_ = 0;
};

struct RunResult {
  // Graph outputs in graph order, then extra outputs in the order requested.
  std::vector<std::string> names;
  std::vector<Tensor> tensors;
  const Tensor& at(const std::string& name) const;
};

class FloatExecutor {
 public:
  // `model` must outlive the executor. Throws Error naming the node for an unsupported
  // operator or an invalid attribute. Control-flow nodes (If, Loop) run their graphs with
  // executors of their own; the values those read from enclosing scopes are the node's inputs
  // after its listed ones.
  FloatExecutor(const ir::Model& model, ExecutorOptions options = {});
  ~FloatExecutor();
  FloatExecutor(const FloatExecutor&) = delete;
  FloatExecutor& operator=(const FloatExecutor&) = delete;

  // Inputs the caller must feed (graph inputs without an initializer), in graph order.
  const std::vector<const ir::Value*>& required_inputs() const { return required_inputs_; }

  // Runs the model. Throws Error for a missing, unknown or mistyped feed (naming the input and
  // the expected type and shape) and for a failing node (naming it, its op and its inputs).
  RunResult run(const std::map<std::string, Tensor>& feeds, const RunOptions& options = {});

  // run() in pieces. start() checks the feeds (as run() does) and returns the state before
  // the first step; the options apply to the whole run. advance() runs the steps before
  // `step` (none if the state is already there); finish() runs the rest and returns the
  // result. A state may be finished by another executor of the same ir::Model whose nodes
  // have other attributes (e.g. other calibration nodes enabled): the graph must have the
  // same values and node order (Error otherwise), and the steps already run are not run
  // again, so they must compute the same in both executors.
  RunState start(const std::map<std::string, Tensor>& feeds, const RunOptions& options = {});
  void advance(RunState& state, size_t step);
  RunResult finish(RunState state);

  // The step that runs `node` (its index in the graph's node order); Error if it is not a
  // node of this executor's graph.
  size_t step_of(const ir::Node& node) const;

  // Re-creates the kernel of `node` (a node of this executor's graph) from its current
  // attributes, or from `attrs` instead (read during the call; the node is not changed, so
  // executors on several threads may run one model with different attributes), e.g. to
  // enable a calibration node; buffers, the other kernels and their prepared weights stay.
  // Error as the constructor for an invalid attribute.
  void refresh_node(const ir::Node& node, const kernels::AttributeMap* attrs = nullptr);

  kernels::BufferPool& buffer_pool() { return *pool_; }

 private:
  friend class GraphRunner;
  // An executor of `graph` (the model's or a subgraph) that also reads `outer_names` from
  // enclosing scopes.
  FloatExecutor(const ir::Model& model, const ir::Graph& graph, ExecutorOptions options,
                const std::vector<std::string>& outer_names);
  // Runs the graph on its inputs in graph order and the outer values in outer_names' order.
  std::vector<Tensor> run_graph(std::span<const Tensor* const> inputs, std::span<const Tensor* const> outer);
  int slot_of_name(const std::string& name, const std::string& where);
  struct Step {
    const ir::Node* node;
    std::unique_ptr<kernels::Kernel> kernel;
    std::vector<int> inputs;   // slot per input, -1 when omitted
    std::vector<int> outputs;  // slot per output, -1 when omitted
    std::vector<int> release;  // slots whose last use is this step
    std::vector<kernels::NamedSubgraph> subgraphs;
    // A node reading float16 runs its kernel in float32 (see the class comment): its float16
    // constants widened once, per listed input (empty otherwise); whether it computes new
    // values (rounded to float16 where declared) or only moves them.
    bool via_float32 = false;
    bool rounds_outputs = false;
    std::vector<Tensor> widened_constants;
  };

  std::unique_ptr<kernels::Kernel> make_kernel(const Step& step,
                                               const kernels::AttributeMap* attrs = nullptr) const;
  // Step::via_float32 at run time: float16 inputs widened (into `widened`); float32 outputs
  // rounded to float16 precision where the graph declares float16.
  bool widen_inputs(const Step& step, std::vector<const Tensor*>& inputs,
                    std::vector<Tensor>& widened) const;
  void round_outputs(const Step& step, std::vector<Tensor>& outputs) const;
  // A value as the caller receives it: float16 if declared so and held as float32.
  Tensor returned(size_t slot, const Tensor& held) const;

  void check_feed(const ir::Value& input, const Tensor& tensor) const;
  void run_step(const Step& step, RunState& state, std::vector<const Tensor*>& inputs,
                std::vector<Tensor>& outputs) const;

  const ir::Model& model_;
  const ir::Graph& graph_;
  ExecutorOptions options_;
  std::unique_ptr<kernels::ThreadPool> threads_;
  std::unique_ptr<kernels::BufferPool> pool_;
  std::map<const ir::Value*, int> slot_of_;
  std::vector<const ir::Value*> slot_values_;
  std::vector<Step> steps_;
  std::map<const ir::Node*, size_t> step_of_;
  std::vector<const ir::Value*> required_inputs_;
  std::vector<int> output_slots_;
  std::vector<int> outer_slots_;  // the values read from enclosing scopes, as outer_names
  ir::Graph outer_only_;          // stand-ins for outer names no value of graph_ declares
};

}  // namespace openbpu::executor
