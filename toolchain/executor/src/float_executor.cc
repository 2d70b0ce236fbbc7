#include "openbpu/executor/float_executor.h"

#include <algorithm>
#include <chrono>
#include <set>
#include <span>

#include "openbpu/base/float16.h"
#include "openbpu/common/error.h"
#include "openbpu/kernels/registry.h"

namespace openbpu::executor {

const Tensor& RunResult::at(const std::string& name) const {
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return tensors[i];
  }
  raise("no output named '", name, "'");
}

FloatExecutor::~FloatExecutor() = default;

// A graph attribute run by an executor of its own.
class GraphRunner final : public kernels::Subgraph {
 public:
  GraphRunner(const ir::Model& model, const ir::Graph& graph, ExecutorOptions options,
              const std::vector<std::string>& outer_names)
      : executor_(new FloatExecutor(model, graph, options, outer_names)) {}
  std::vector<Tensor> run(std::span<const Tensor* const> inputs,
                          std::span<const Tensor* const> outer) const override {
    try {
      return executor_->run_graph(inputs, outer);
    } catch (const Error& e) {
      throw kernels::KernelError(e.what());
    }
  }

 private:
  std::unique_ptr<FloatExecutor> executor_;
};

FloatExecutor::FloatExecutor(const ir::Model& model, ExecutorOptions options)
    : FloatExecutor(model, *model.graph, options, {}) {}

namespace {

// Casts (which define types) and control flow run as written on float16 values.
bool runs_as_written(const ir::Node& node) {
  static const std::set<std::string> kAsWritten = {"Cast", "CastLike", "If", "Loop", "Scan"};
  return (node.domain().empty() && kAsWritten.count(node.op_type()) > 0) ||
         !node.graph_attrs().empty();
}

// Operators that only move or select elements: their float32 outputs already hold float16
// values when their inputs do.
bool only_moves_values(const ir::Node& node) {
  static const std::set<std::string> kMoves = {
      "Concat", "Expand", "Flatten", "Gather", "Identity",  "Pad",       "Reshape", "Shape", "Size",
      "Slice",  "Split",  "Squeeze", "Tile",   "Transpose", "Unsqueeze", "MaxPool", "Relu"};
  return node.domain().empty() && kMoves.count(node.op_type()) > 0;
}

Tensor widened(const Tensor& half, kernels::Allocator& allocator) {
  Tensor out;
  out.reset_for_overwrite(kernels::DataType::kFloat32, half.shape(), allocator);
  base::float16_to_float(reinterpret_cast<const uint16_t*>(half.raw_data()), out.data<float>(),
                         half.element_count());
  return out;
}

}  // namespace

std::unique_ptr<kernels::Kernel> FloatExecutor::make_kernel(
    const Step& step, const kernels::AttributeMap* attrs) const {
  const ir::Node& node = *step.node;
  std::vector<const Tensor*> constants;
  for (size_t i = 0; i < node.inputs().size(); ++i) {
    const ir::Value* in = node.inputs()[i];
    const bool wide =
        i < step.widened_constants.size() && !step.widened_constants[i].empty_storage();
    constants.push_back(wide            ? &step.widened_constants[i]
                        : in != nullptr ? in->constant()
                                        : nullptr);
  }
  const std::span<const kernels::NamedSubgraph> subgraphs = step.subgraphs;
  const kernels::NodeInfo info{node.name(),
                               node.op_type(),
                               node.domain(),
                               static_cast<int>(model_.opset_version(node.domain())),
                               attrs != nullptr ? *attrs : node.attrs(),
                               static_cast<int>(node.inputs().size()),
                               static_cast<int>(node.outputs().size()),
                               subgraphs,
                               constants};
  try {
    return kernels::create_kernel(info);
  } catch (const kernels::KernelError& e) {
    raise("node '", node.name(), "' (", node.op_type(), "): ", e.what());
  }
}

void FloatExecutor::refresh_node(const ir::Node& node, const kernels::AttributeMap* attrs) {
  Step& step = steps_[step_of(node)];
  step.kernel = make_kernel(step, attrs);
}

int FloatExecutor::slot_of_name(const std::string& name, const std::string& where) {
  const ir::Value* v = graph_.find_value(name);
  if (v == nullptr) v = outer_only_.find_value(name);
  if (v == nullptr) raise(where, ": its subgraphs read '", name, "', which no enclosing graph defines");
  auto [it, inserted] = slot_of_.emplace(v, static_cast<int>(slot_values_.size()));
  if (inserted) slot_values_.push_back(v);
  return it->second;
}

FloatExecutor::FloatExecutor(const ir::Model& model, const ir::Graph& graph, ExecutorOptions options,
                             const std::vector<std::string>& outer_names)
    : model_(model), graph_(graph), options_(options) {
  if (options_.threads < 1) options_.threads = 1;
  threads_ = std::make_unique<kernels::ThreadPool>(options_.threads);
  pool_ = std::make_unique<kernels::BufferPool>();

  auto slot = [&](const ir::Value* v) {
    auto [it, inserted] = slot_of_.emplace(v, static_cast<int>(slot_values_.size()));
    if (inserted) slot_values_.push_back(v);
    return it->second;
  };
  for (const ir::Value* in : graph.inputs()) {
    slot(in);
    if (!in->is_constant()) required_inputs_.push_back(in);
  }
  for (const ir::Value* c : graph.constants()) slot(c);
  for (const std::string& name : outer_names) {
    if (graph.find_value(name) == nullptr) outer_only_.add_outer_scope_value(name);
    outer_slots_.push_back(slot_of_name(name, str_cat("graph '", graph.name(), "'")));
  }

  std::set<const ir::Value*> produced;
  for (const ir::Node* node : graph.nodes()) {
    const std::string where = str_cat("node '", node->name(), "' (", node->op_type(), ")");
    Step step;
    step.node = node;
    for (const ir::Value* in : node->inputs()) {
      if (in == nullptr) {
        step.inputs.push_back(-1);
        continue;
      }
      if (in->producer() != nullptr && produced.count(in) == 0) {
        raise(where, ": input '", in->name(), "' is used before it is produced (graph not sorted)");
      }
      if (in->is_outer_scope() && slot_of_.count(in) == 0) {
        raise(where, ": input '", in->name(), "' is an outer-scope value no enclosing graph gives");
      }
      step.inputs.push_back(slot(in));
    }
    const std::vector<std::string> implicit = ir::implicit_input_names(*node);
    for (const std::string& name : implicit) {
      const int s = slot_of_name(name, where);
      const ir::Value* v = slot_values_[static_cast<size_t>(s)];
      if (v->producer() != nullptr && produced.count(v) == 0) {
        raise(where, ": its subgraphs read '", name, "' before it is produced (graph not sorted)");
      }
      step.inputs.push_back(s);
    }
    for (const ir::GraphAttribute& a : node->graph_attrs()) {
      if (a.is_list || a.graphs.size() != 1) raise(where, ": graph-list attribute '", a.name, "' is not supported");
      try {
        step.subgraphs.push_back({a.name, std::make_shared<GraphRunner>(model, *a.graphs.front(), options_, implicit)});
      } catch (const Error& e) {
        raise(where, ", ", a.name, ": ", e.what());
      }
    }
    for (const ir::Value* out : node->outputs()) {
      step.outputs.push_back(out == nullptr ? -1 : slot(out));
      if (out != nullptr) produced.insert(out);
    }
    if (!runs_as_written(*node)) {
      for (const ir::Value* in : node->inputs()) {
        const bool half = in != nullptr && in->type().dtype == kernels::DataType::kFloat16;
        step.via_float32 = step.via_float32 || half;
      }
      step.rounds_outputs = step.via_float32 && !only_moves_values(*node);
    }
    if (step.via_float32) {
      for (const ir::Value* in : node->inputs()) {
        const Tensor* c = in != nullptr ? in->constant() : nullptr;
        step.widened_constants.push_back(c != nullptr && c->dtype() == kernels::DataType::kFloat16
                                             ? widened(*c, kernels::Allocator::default_allocator())
                                             : Tensor());
      }
    }
    step.kernel = make_kernel(step);
    step_of_[node] = steps_.size();
    steps_.push_back(std::move(step));
  }
  for (const ir::Value* out : graph.outputs()) {
    if (slot_of_.count(out) == 0) raise("graph output '", out->name(), "' is never produced");
    output_slots_.push_back(slot_of_.at(out));
  }

  // Liveness: a slot is released after its last reading step, unless it is a graph output or
  // a constant (owned by the model).
  std::vector<int> last_use(slot_values_.size(), -1);
  for (size_t s = 0; s < steps_.size(); ++s) {
    for (int in : steps_[s].inputs) {
      if (in >= 0) last_use[static_cast<size_t>(in)] = static_cast<int>(s);
    }
    for (int out : steps_[s].outputs) {
      if (out >= 0 && last_use[static_cast<size_t>(out)] < static_cast<int>(s)) {
        last_use[static_cast<size_t>(out)] = static_cast<int>(s);  // unused output: free at once
      }
    }
  }
  std::set<int> keep(output_slots_.begin(), output_slots_.end());
  for (size_t v = 0; v < slot_values_.size(); ++v) {
    if (slot_values_[v]->is_constant()) keep.insert(static_cast<int>(v));
  }
  for (size_t v = 0; v < slot_values_.size(); ++v) {
    if (last_use[v] >= 0 && keep.count(static_cast<int>(v)) == 0) {
      steps_[static_cast<size_t>(last_use[v])].release.push_back(static_cast<int>(v));
    }
  }
}

void FloatExecutor::check_feed(const ir::Value& input, const Tensor& tensor) const {
  const ir::TensorType& type = input.type();
  if (type.dtype != kernels::DataType::kUndefined && type.dtype != tensor.dtype()) {
    raise("input '", input.name(), "' must be ", kernels::dtype_name(type.dtype), " (",
          type.to_string(), "), got ", tensor.describe());
  }
  if (type.shape) {
    bool ok = type.shape->size() == tensor.shape().size();
    for (size_t i = 0; ok && i < type.shape->size(); ++i) {
      const ir::Dim& d = (*type.shape)[i];
      if (d.is_known() && d.value != tensor.shape()[i]) ok = false;
    }
    if (!ok) {
      raise("input '", input.name(), "' must have shape ", type.to_string(), ", got ",
            tensor.describe());
    }
  }
}

RunResult FloatExecutor::run(const std::map<std::string, Tensor>& feeds,
                             const RunOptions& options) {
  return finish(start(feeds, options));
}

RunState FloatExecutor::start(const std::map<std::string, Tensor>& feeds,
                              const RunOptions& options) {
  const ir::Graph& graph = graph_;
  RunState state;
  state.values_ = slot_values_;
  state.slots_.resize(slot_values_.size());
  state.filled_.assign(slot_values_.size(), false);
  state.options_ = options;

  for (const auto& [name, tensor] : feeds) {
    const ir::Value* v = graph.find_value(name);
    if (v == nullptr || !graph.is_input(v)) {
      std::string names;
      for (const ir::Value* in : graph.inputs()) {
        if (!in->is_constant()) names += str_cat(names.empty() ? "" : ", ", in->name());
      }
      raise("the model has no input named '", name, "' (inputs: ", names, ")");
    }
    check_feed(*v, tensor);
    const size_t s = static_cast<size_t>(slot_of_.at(v));
    state.slots_[s] = tensor;
    state.filled_[s] = true;
  }
  for (const ir::Value* in : required_inputs_) {
    if (!state.filled_[static_cast<size_t>(slot_of_.at(in))]) {
      raise("input '", in->name(), "' (", in->type().to_string(), ") is not given");
    }
  }
  for (size_t s = 0; s < slot_values_.size(); ++s) {
    if (!state.filled_[s] && slot_values_[s]->is_constant()) {
      state.slots_[s] = *slot_values_[s]->constant();
      state.filled_[s] = true;
    }
  }
  for (const std::string& name : options.extra_outputs) {
    const ir::Value* v = graph.find_value(name);
    if (v == nullptr || slot_of_.count(v) == 0) raise("the model has no value named '", name, "'");
    state.extra_slots_.push_back(slot_of_.at(v));
  }
  return state;
}

void FloatExecutor::run_step(const Step& step, RunState& state, std::vector<const Tensor*>& inputs,
                             std::vector<Tensor>& outputs) const {
  const RunOptions& options = state.options_;
  inputs.clear();
  for (int in : step.inputs) {
    if (in < 0) {
      inputs.push_back(nullptr);
      continue;
    }
    if (!state.filled_[static_cast<size_t>(in)]) {
      raise("node '", step.node->name(), "' (", step.node->op_type(), "): input '",
            slot_values_[static_cast<size_t>(in)]->name(), "' has no value");
    }
    inputs.push_back(&state.slots_[static_cast<size_t>(in)]);
  }
  // Inputs whose last use this is and whose storage nothing else holds (not a feed, a
  // constant, an extra output, another value's view or a shared run state's) are donated:
  // an elementwise kernel may write its output over them.
  std::vector<Tensor*> donors(step.inputs.size(), nullptr);
  for (size_t k = 0; k < step.inputs.size(); ++k) {
    const int in = step.inputs[k];
    if (in < 0 || std::find(step.release.begin(), step.release.end(), in) == step.release.end() ||
        std::find(state.extra_slots_.begin(), state.extra_slots_.end(), in) !=
            state.extra_slots_.end()) {
      continue;
    }
    Tensor& t = state.slots_[static_cast<size_t>(in)];
    if (t.buffer() != nullptr && t.buffer().use_count() == 1) donors[k] = &t;
  }
  std::vector<Tensor> widened_inputs;
  if (step.via_float32 && widen_inputs(step, inputs, widened_inputs)) {
    std::fill(donors.begin(), donors.end(), nullptr);
  }
  outputs.assign(step.outputs.size(), Tensor());
  kernels::KernelContext ctx(inputs, outputs, *pool_, threads_.get(), donors);
  const auto started = options.node_times_us ? std::chrono::steady_clock::now()
                                             : std::chrono::steady_clock::time_point();
  try {
    step.kernel->run(ctx);
    if (options.node_times_us) {
      options.node_times_us->emplace_back(step.node, std::chrono::duration<double, std::micro>(
                                                         std::chrono::steady_clock::now() - started)
                                                         .count());
    }
    if (step.rounds_outputs) round_outputs(step, outputs);
  } catch (const kernels::KernelError& e) {
    std::string shapes;
    for (const Tensor* t : inputs)
      shapes += str_cat(shapes.empty() ? "" : ", ", t ? t->describe() : "_");
    raise("node '", step.node->name(), "' (", step.node->op_type(), ") failed on inputs (", shapes,
          "): ", e.what());
  }
  for (size_t k = 0; k < step.outputs.size(); ++k) {
    const int out = step.outputs[k];
    if (out < 0) continue;
    if (outputs[k].empty_storage() && outputs[k].dtype() == kernels::DataType::kUndefined) {
      raise("node '", step.node->name(), "' (", step.node->op_type(), ") did not produce output ",
            k, " '", slot_values_[static_cast<size_t>(out)]->name(), "'");
    }
    state.slots_[static_cast<size_t>(out)] = std::move(outputs[k]);
    state.filled_[static_cast<size_t>(out)] = true;
    if (options.observer) {
      options.observer(*step.node, *slot_values_[static_cast<size_t>(out)],
                       state.slots_[static_cast<size_t>(out)]);
    }
  }
  for (int r : step.release) {
    if (std::find(state.extra_slots_.begin(), state.extra_slots_.end(), r) ==
        state.extra_slots_.end()) {
      state.slots_[static_cast<size_t>(r)] = Tensor();
    }
  }
}

bool FloatExecutor::widen_inputs(const Step& step, std::vector<const Tensor*>& inputs,
                                 std::vector<Tensor>& widened_inputs) const {
  widened_inputs.reserve(inputs.size());  // the pointers below stay valid
  bool any = false;
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (k < step.widened_constants.size() && !step.widened_constants[k].empty_storage()) {
      inputs[k] = &step.widened_constants[k];
      any = true;
    } else if (inputs[k] != nullptr && inputs[k]->dtype() == kernels::DataType::kFloat16) {
      widened_inputs.push_back(widened(*inputs[k], *pool_));
      inputs[k] = &widened_inputs.back();
      any = true;
    }
  }
  return any;
}

void FloatExecutor::round_outputs(const Step& step, std::vector<Tensor>& outputs) const {
  for (size_t k = 0; k < outputs.size() && k < step.node->outputs().size(); ++k) {
    const ir::Value* v = step.node->outputs()[k];
    if (v == nullptr || v->type().dtype != kernels::DataType::kFloat16 ||
        outputs[k].dtype() != kernels::DataType::kFloat32) {
      continue;
    }
    base::round_to_float16(outputs[k].data<float>(), outputs[k].element_count());
  }
}

Tensor FloatExecutor::returned(size_t slot, const Tensor& held) const {
  if (slot_values_[slot]->type().dtype != kernels::DataType::kFloat16 ||
      held.dtype() != kernels::DataType::kFloat32) {
    return held;
  }
  Tensor half;
  half.reset_for_overwrite(kernels::DataType::kFloat16, held.shape(),
                           kernels::Allocator::default_allocator());
  base::float_to_float16(held.data<float>(), reinterpret_cast<uint16_t*>(half.raw_data()),
                         held.element_count());
  return half;
}

void FloatExecutor::advance(RunState& state, size_t step) {
  if (state.values_ != slot_values_) {
    raise(
        "a run state can only continue in an executor of the same graph (same values, same "
        "node order)");
  }
  const size_t end = std::min(step, steps_.size());
  std::vector<const Tensor*> inputs;
  std::vector<Tensor> outputs;
  for (; state.next_step_ < end; ++state.next_step_) {
    run_step(steps_[state.next_step_], state, inputs, outputs);
  }
}

RunResult FloatExecutor::finish(RunState state) {
  advance(state, steps_.size());
  RunResult result;
  for (size_t i = 0; i < output_slots_.size(); ++i) {
    const size_t s = static_cast<size_t>(output_slots_[i]);
    if (!state.filled_[s]) raise("graph output '", slot_values_[s]->name(), "' was not produced");
    result.names.push_back(slot_values_[s]->name());
    result.tensors.push_back(returned(s, state.slots_[s]));
  }
  for (int s : state.extra_slots_) {
    result.names.push_back(slot_values_[static_cast<size_t>(s)]->name());
    result.tensors.push_back(
        returned(static_cast<size_t>(s), state.slots_[static_cast<size_t>(s)]));
  }
  return result;
}

std::vector<Tensor> FloatExecutor::run_graph(std::span<const Tensor* const> inputs,
                                             std::span<const Tensor* const> outer) {
  const std::vector<ir::Value*>& formal = graph_.inputs();
  if (inputs.size() != formal.size() || outer.size() != outer_slots_.size()) {
    raise("graph '", graph_.name(), "' takes ", formal.size(), " inputs and ", outer_slots_.size(), " outer values, got ",
          inputs.size(), " and ", outer.size());
  }
  RunState state;
  state.values_ = slot_values_;
  state.slots_.resize(slot_values_.size());
  state.filled_.assign(slot_values_.size(), false);
  auto fill = [&](int s, const Tensor* t) {
    if (t == nullptr) return;
    state.slots_[static_cast<size_t>(s)] = *t;
    state.filled_[static_cast<size_t>(s)] = true;
  };
  for (size_t i = 0; i < formal.size(); ++i) fill(slot_of_.at(formal[i]), inputs[i]);
  for (size_t i = 0; i < outer.size(); ++i) fill(outer_slots_[i], outer[i]);
  for (size_t s = 0; s < slot_values_.size(); ++s) {
    if (!state.filled_[s] && slot_values_[s]->is_constant()) fill(static_cast<int>(s), slot_values_[s]->constant());
  }
  return finish(std::move(state)).tensors;
}

size_t FloatExecutor::step_of(const ir::Node& node) const {
  auto it = step_of_.find(&node);
  if (it == step_of_.end()) raise("node '", node.name(), "' is not in the executor's graph");
  return it->second;
}

}  // namespace openbpu::executor
