// The compiler driver (compiler.h): a short linear list of stages per segment.
#include <algorithm>
#include <atomic>
#include <exception>
#include <set>
#include <thread>

#include "openbpu/executor/float_executor.h"
#include "segment_builder.h"

namespace openbpu::compiler {

namespace {

struct Boundary {
  std::vector<const ir::Value*> inputs;
  std::vector<const ir::Value*> outputs;
};

Boundary segment_boundary(const ir::Graph& graph, const std::vector<const ir::Node*>& nodes) {
  const std::set<const ir::Node*> inside(nodes.begin(), nodes.end());
  Boundary b;
  std::set<const ir::Value*> seen;
  for (const ir::Node* n : nodes) {
    for (const ir::Value* v : n->inputs()) {
      if (v == nullptr || v->name().empty() || v->is_constant()) continue;
      if (v->producer() != nullptr && inside.count(v->producer())) continue;
      if (seen.insert(v).second) b.inputs.push_back(v);
    }
  }
  for (const ir::Node* n : nodes) {
    for (const ir::Value* v : n->outputs()) {
      if (v == nullptr || v->name().empty()) continue;
      bool escapes = graph.is_output(v);
      for (const ir::Use& use : v->uses()) escapes = escapes || !inside.count(use.node);
      if (escapes) b.outputs.push_back(v);
    }
  }
  return b;
}

CompiledSegment compile_segment(const ir::Graph& graph, const TensorInfos& tensors, const CompileOptions& options,
                                const std::vector<const ir::Node*>& nodes, size_t s) {
  const Boundary boundary = segment_boundary(graph, nodes);
  SegmentBuilder builder(options, tensors);
  for (const ir::Value* v : boundary.inputs) {
    auto image = options.image_inputs.find(v->name());
    if (image != options.image_inputs.end() && graph.is_input(v)) {
      builder.set_current_node(v->name());
      builder.define_image_input(v, image->second);
    } else {
      builder.define(v);
    }
  }
  const std::map<const ir::Node*, LutProductChain> products =
      find_lut_products(graph, tensors, nodes);
  std::set<const ir::Node*> fused;  // lowered with the Mul of their chain
  for (const auto& [mul, chain] : products) {
    fused.insert(chain.lut);
    if (chain.requantize != nullptr) fused.insert(chain.requantize);
  }
  std::vector<std::string> names;
  for (const ir::Node* n : nodes) {
    names.push_back(n->name());
    builder.set_current_node(n->name());
    if (fused.count(n)) continue;
    if (auto product = products.find(n); product != products.end()) {
      lower_lut_product(builder, product->second);
      continue;
    }
    const Lowering lowering = lowering_of(*n);
    if (!lower_compute(builder, *n, lowering) && !lower_movement(builder, *n, lowering)) {
      raise("node '", n->name(), "' (", n->domain().empty() ? "" : n->domain() + ":", n->op_type(),
            "): the BPU compiler has no lowering for this operator");
    }
  }
  if (boundary.outputs.empty()) raise("BPU subgraph ", s, " (from node '", nodes.front()->name(), "') has no outputs");
  return builder.finish("subgraph_" + std::to_string(s), std::move(names), boundary.inputs, boundary.outputs);
}

}  // namespace

TensorInfos observe_tensor_infos(const ir::Model& model, const std::map<std::string, kernels::Tensor>& feeds,
                                 int threads) {
  TensorInfos infos;
  executor::FloatExecutor exec(model, {threads});
  executor::RunOptions options;
  options.observer = [&](const ir::Node&, const ir::Value& v, const kernels::Tensor& t) {
    infos[v.name()] = {t.dtype(), t.shape()};
  };
  exec.run(feeds, options);
  for (const auto& [name, t] : feeds) infos[name] = {t.dtype(), t.shape()};
  return infos;
}

std::vector<CompiledSegment> compile_bpu_segments(const ir::Graph& graph, const TensorInfos& tensors,
                                                  const CompileOptions& options) {
  if (options.march == nullptr) raise("compile_bpu_segments: no march given");
  const std::vector<std::vector<const ir::Node*>> segments = find_bpu_segments(graph, tensors);
  // Segments are independent: compiled on up to `jobs` threads, results in segment order.
  std::vector<CompiledSegment> compiled(segments.size());
  std::vector<std::exception_ptr> errors(segments.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t s = next++; s < segments.size(); s = next++) {
      try {
        compiled[s] = compile_segment(graph, tensors, options, segments[s], s);
      } catch (...) {
        errors[s] = std::current_exception();
      }
    }
  };
  const size_t threads = std::min<size_t>(segments.size(), static_cast<size_t>(std::max(1, options.jobs)));
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);  // the first failing segment, in segment order
  }
  // The runtime allocates every program's memory when the model loads, and refuses a model whose
  // programs claim more than isa::kMaxModelMemoryBytes together.
  uint64_t memory = 0;
  for (const CompiledSegment& c : compiled) memory += simulator::program_memory_bytes(c.program);
  if (memory > simulator::isa::kMaxModelMemoryBytes) {
    raise("the model's ", compiled.size(), " BPU segments need ", memory, " bytes of device memory together; a model ",
          "may address at most ", simulator::isa::kMaxModelMemoryBytes,
          " (isa::kMaxModelMemoryBytes): lower the input resolution or split the model");
  }
  return compiled;
}

}  // namespace openbpu::compiler
