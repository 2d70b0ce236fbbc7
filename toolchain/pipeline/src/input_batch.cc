#include "openbpu/pipeline/input_batch.h"

#include <cstring>

#include "openbpu/common/error.h"
#include "openbpu/executor/float_executor.h"

namespace openbpu::pipeline {

using kernels::DataType;
using kernels::Tensor;

namespace {

bool first_dim_is_one(const ir::Value* v) {
  return v != nullptr && v->type().shape && !v->type().shape->empty() &&
         v->type().shape->front().is_known() && v->type().shape->front().value == 1;
}

// Reshape targets with the batch in their first entry. In the batch-1 model a Reshape either
// reads a value whose first dim is the batch of 1 — its target's first entry t0 then becomes
// t0 · batch (the batch stays outermost, alone or merged with the next dims, as a MatMul turned
// Conv merges it with the sequence) — or reads a value with the batch merged into dim 0 and
// splits it out again with a target [1, ...], which becomes [batch, ...]. A target shared by
// several nodes gets its own copy. Returns the number of targets changed.
int rebatch_reshapes(ir::Graph& graph, int64_t batch) {
  int changed = 0;
  for (ir::Node* node : graph.nodes()) {
    if (!node->domain().empty() || node->op_type() != "Reshape") continue;
    const ir::Value* target = node->input(1);
    if (target == nullptr || !target->is_constant()) continue;
    const Tensor& t = *target->constant();
    if (t.dtype() != DataType::kInt64 || t.element_count() == 0) continue;
    const int64_t t0 = t.data<int64_t>()[0];
    const ir::Value* in = node->input(0);
    if (t0 <= 0 || in == nullptr || !in->type().shape || in->type().shape->empty() ||
        !in->type().shape->front().is_known()) {
      continue;
    }
    if (!first_dim_is_one(in) && t0 != 1) continue;
    Tensor copy = t.clone();
    copy.data<int64_t>()[0] = t0 * batch;
    ir::Value* value =
        graph.add_constant(graph.unique_value_name(target->name() + "_batch"), std::move(copy));
    graph.set_node_input(node, 1, value);
    ++changed;
  }
  graph.remove_unused_values();
  return changed;
}

// Items stacked along axis 0 (each has first dim 1).
Tensor stack(const std::vector<const Tensor*>& items) {
  kernels::Shape shape = items.front()->shape();
  shape[0] = static_cast<int64_t>(items.size());
  Tensor out(items.front()->dtype(), shape);
  const size_t bytes = items.front()->byte_size();
  auto* dst = static_cast<unsigned char*>(out.raw_data());
  for (size_t i = 0; i < items.size(); ++i) {
    if (items[i]->shape() != items.front()->shape() ||
        items[i]->dtype() != items.front()->dtype()) {
      raise("input_batch: the items of the check differ in shape or type");
    }
    std::memcpy(dst + i * bytes, items[i]->raw_data(), bytes);
  }
  return out;
}

bool same_bytes(const Tensor& batched, int64_t item, const Tensor& single) {
  if (batched.dtype() != single.dtype() || batched.shape().empty() || single.shape().empty())
    return false;
  if (single.element_count() * batched.shape()[0] != batched.element_count()) return false;
  const size_t bytes = single.byte_size();
  return std::memcmp(static_cast<const unsigned char*>(batched.raw_data()) +
                         static_cast<size_t>(item) * bytes,
                     single.raw_data(), bytes) == 0;
}

}  // namespace

InputBatchResult apply_input_batch(ir::Model& model, int64_t batch, bool separate,
                                   const std::vector<std::map<std::string, Tensor>>& items,
                                   int threads) {
  InputBatchResult result;
  if (batch <= 1) return result;
  ir::Graph& graph = *model.graph;
  std::vector<ir::Value*> inputs;
  for (ir::Value* v : graph.inputs()) {
    if (!v->is_constant()) inputs.push_back(v);
  }
  if (inputs.size() != 1)
    raise("input_batch ", batch, ": the model has ", inputs.size(),
          " inputs; input_batch needs exactly one");
  ir::Value* input = inputs.front();
  if (!first_dim_is_one(input)) {
    raise("input_batch ", batch, ": input '", input->name(), "' has type ",
          input->type().to_string(), "; its first dim must be 1");
  }
  if (items.size() != static_cast<size_t>(batch))
    raise("input_batch ", batch, ": ", items.size(), " items given for the check");

  // The batch-1 results of every item, for the check.
  std::vector<executor::RunResult> singles;
  {
    executor::FloatExecutor exec(model, {threads});
    for (const auto& feeds : items) singles.push_back(exec.run(feeds));
  }

  const int reshapes = rebatch_reshapes(graph, batch);  // reads the batch-1 types
  ir::TensorType type = input->type();
  (*type.shape)[0] = ir::Dim::known(batch);
  input->set_type(type);
  result.log.push_back("input_batch " + std::to_string(batch) + ": input '" + input->name() +
                       "' is now " + input->type().to_string() + " (" + std::to_string(reshapes) +
                       " Reshape target" + (reshapes == 1 ? "" : "s") + " rebatched)");

  // The check: one batched run against the batch-1 results.
  std::vector<const Tensor*> parts;
  for (const auto& feeds : items) parts.push_back(&feeds.at(input->name()));
  {
    // Value types come from this run (the quantized model's operators are ours; the types are
    // what they compute).
    std::map<std::string, ir::TensorType> types;
    executor::FloatExecutor exec(model, {threads});
    executor::RunOptions options;
    options.observer = [&](const ir::Node&, const ir::Value& v, const Tensor& t) {
      types[v.name()] = ir::TensorType::of(t.dtype(), t.shape());
    };
    executor::RunResult batched;
    try {
      batched = exec.run({{input->name(), stack(parts)}}, options);
    } catch (const Error& e) {
      raise("input_batch ", batch, ": the batched model fails to run (", e.what(), ")");
    }
    for (size_t o = 0; o < batched.tensors.size(); ++o) {
      for (int64_t i = 0; i < batch; ++i) {
        if (!same_bytes(batched.tensors[o], i, singles[static_cast<size_t>(i)].tensors[o])) {
          raise(
              "input_batch ", batch, ": output '", batched.names[o], "' of item ", i,
              " in a batch differs from the same item run alone (shape ",
              kernels::shape_to_string(batched.tensors[o].shape()),
              "): the model mixes or reshapes the batch dimension where a batch of 1 was assumed");
        }
      }
    }
    for (ir::Node* node : graph.nodes()) {
      for (ir::Value* out : node->outputs()) {
        auto it = out ? types.find(out->name()) : types.end();
        if (it != types.end()) out->set_type(it->second);
      }
    }
  }
  result.log.push_back("input_batch " + std::to_string(batch) +
                       ": each item of a batched run equals the item run alone, on every output");

  if (separate) {
    const std::string name = input->name();
    ir::TensorType one = input->type();
    (*one.shape)[0] = ir::Dim::known(1);
    graph.rename_value(input, graph.unique_value_name(name + "_batched"));
    std::vector<ir::Value*> parts_in;
    for (int64_t i = 0; i < batch; ++i) {
      parts_in.push_back(
          graph.add_value(graph.unique_value_name(name + "_" + std::to_string(i)), one));
    }
    const std::vector<ir::Use> uses = input->uses();
    ir::NodeSpec spec;
    spec.op_type = "Concat";
    spec.name = name + "_separate_batch";
    spec.inputs = parts_in;
    spec.output_names = {name};
    spec.attrs.set("axis", int64_t{0});
    ir::Node* concat =
        graph.add_node(std::move(spec), graph.nodes().empty() ? nullptr : graph.nodes().front());
    concat->output(0)->set_type(input->type());
    for (const ir::Use& use : uses) {
      graph.set_node_input(use.node, static_cast<size_t>(use.input_index), concat->output(0));
    }
    std::vector<ir::Value*> new_inputs = parts_in;
    for (ir::Value* v : graph.inputs()) {
      if (v != input) new_inputs.push_back(v);
    }
    graph.set_inputs(std::move(new_inputs));
    graph.remove_unused_values();
    result.log.push_back("separate_batch: " + std::to_string(batch) + " inputs " +
                         parts_in.front()->name() + " ... " + parts_in.back()->name() + " of " +
                         one.to_string() + ", joined by Concat '" + concat->name() + "' into '" +
                         name + "'");
  }
  return result;
}

}  // namespace openbpu::pipeline
