// Control flow: If and Loop (ONNX opset 1+; Loop's optional inputs as in opset 11+). The kernels
// hold the operators' semantics; running a branch or a body is the executor's (Subgraph). The
// values a graph reads from enclosing scopes arrive as the node's inputs after its listed ones.
#include <cstring>

#include "families.h"

namespace openbpu::kernels {

namespace {

std::shared_ptr<const Subgraph> subgraph_of(const NodeInfo& node, std::string_view attr) {
  for (const NamedSubgraph& s : node.subgraphs) {
    if (s.name == attr && s.graph != nullptr) return s.graph;
  }
  fail(node.op_type, ": the graph attribute '", attr, "' is missing");
}

std::span<const Tensor* const> outer_inputs(std::span<const Tensor* const> all, int listed) {
  return all.subspan(std::min(all.size(), static_cast<size_t>(listed)));
}

// One bool; a model file stores bool constants as uint8, so uint8 reads as bool too.
bool truth_of(const Tensor& t, std::string_view op, std::string_view what) {
  OPENBPU_CHECK((t.dtype() == DataType::kBool || t.dtype() == DataType::kUint8) && t.element_count() == 1, op, ": ",
                what, " must be one bool, got ", t.describe());
  return t.dtype() == DataType::kBool ? t.data<bool>()[0] : t.data<uint8_t>()[0] != 0;
}

class IfKernel final : public Kernel {
 public:
  explicit IfKernel(const NodeInfo& node)
      : then_(subgraph_of(node, "then_branch")), else_(subgraph_of(node, "else_branch")), listed_(node.input_count) {}

  void run(KernelContext& ctx) const override {
    std::vector<const Tensor*> all;
    for (int i = 0; i < ctx.input_count(); ++i) all.push_back(ctx.optional_input(i));
    const Subgraph& taken = truth_of(ctx.input(0), "If", "the condition") ? *then_ : *else_;
    std::vector<Tensor> outputs = taken.run({}, outer_inputs(all, listed_));
    OPENBPU_CHECK(static_cast<int>(outputs.size()) >= ctx.output_count(), "If: the branch gives ", outputs.size(),
                  " outputs, the node lists ", ctx.output_count());
    for (int k = 0; k < ctx.output_count(); ++k) ctx.set_output(k, std::move(outputs[static_cast<size_t>(k)]));
  }

 private:
  std::shared_ptr<const Subgraph> then_, else_;
  int listed_;
};

// Stacks equally shaped tensors along a new axis 0 ([0] when there are none).
Tensor stack(const std::vector<Tensor>& parts, Allocator& allocator) {
  if (parts.empty()) return Tensor(DataType::kFloat32, {0}, allocator);
  Shape shape = parts.front().shape();
  shape.insert(shape.begin(), static_cast<int64_t>(parts.size()));
  Tensor out(parts.front().dtype(), shape, allocator);
  char* dst = static_cast<char*>(out.raw_data());
  for (const Tensor& p : parts) {
    OPENBPU_CHECK(p.shape() == parts.front().shape() && p.dtype() == parts.front().dtype(),
                  "Loop: scan outputs of the iterations differ: ", parts.front().describe(), " and ", p.describe());
    if (p.byte_size() > 0) std::memcpy(dst, p.raw_data(), p.byte_size());
    dst += p.byte_size();
  }
  return out;
}

// inputs: M (optional int64 trip count), cond (optional bool), carried values; body: (iteration,
// cond, carried...) → (cond, carried..., scan outputs...); outputs: the final carried values,
// then each scan output stacked over the iterations.
class LoopKernel final : public Kernel {
 public:
  explicit LoopKernel(const NodeInfo& node) : body_(subgraph_of(node, "body")), listed_(node.input_count) {
    OPENBPU_CHECK(node.input_count >= 2, "Loop: needs the trip count and condition inputs (either may be empty)");
  }

  void run(KernelContext& ctx) const override {
    std::vector<const Tensor*> all;
    for (int i = 0; i < ctx.input_count(); ++i) all.push_back(ctx.optional_input(i));
    const Tensor* trips = ctx.optional_input(0);
    const Tensor* cond = ctx.optional_input(1);
    OPENBPU_CHECK(trips != nullptr || cond != nullptr, "Loop: with neither a trip count nor a condition it would never end");
    int64_t max_trips = -1;
    if (trips != nullptr) {
      OPENBPU_CHECK(trips->dtype() == DataType::kInt64 && trips->element_count() == 1,
                    "Loop: the trip count must be one int64, got ", trips->describe());
      max_trips = trips->data<int64_t>()[0];
    }
    bool going = cond == nullptr || truth_of(*cond, "Loop", "the condition");
    const size_t carried = static_cast<size_t>(listed_ - 2);
    std::vector<Tensor> state;
    for (size_t c = 0; c < carried; ++c) state.push_back(ctx.input(static_cast<int>(2 + c)));
    std::vector<std::vector<Tensor>> scans;
    Tensor iteration = Tensor::scalar<int64_t>(0);
    Tensor condition = Tensor::scalar<bool>(going);
    for (int64_t i = 0; going && (max_trips < 0 || i < max_trips); ++i) {
      iteration.data<int64_t>()[0] = i;
      std::vector<const Tensor*> formal{&iteration, &condition};
      for (const Tensor& t : state) formal.push_back(&t);
      std::vector<Tensor> out = body_->run(formal, outer_inputs(all, listed_));
      OPENBPU_CHECK(out.size() >= 1 + carried, "Loop: the body gives ", out.size(), " outputs for ", carried,
                    " carried values");
      if (cond != nullptr) {
        going = truth_of(out[0], "Loop", "the body's condition");
        condition.data<bool>()[0] = going;
      }
      for (size_t c = 0; c < carried; ++c) state[c] = std::move(out[1 + c]);
      scans.resize(out.size() - 1 - carried);
      for (size_t s = 0; s < scans.size(); ++s) scans[s].push_back(std::move(out[1 + carried + s]));
    }
    for (int k = 0; k < ctx.output_count(); ++k) {
      const size_t uk = static_cast<size_t>(k);
      if (uk < carried) {
        ctx.set_output(k, state[uk]);
      } else {
        ctx.set_output(k, uk - carried < scans.size() ? stack(scans[uk - carried], ctx.allocator())
                                                      : stack({}, ctx.allocator()));
      }
    }
  }

 private:
  std::shared_ptr<const Subgraph> body_;
  int listed_;
};

}  // namespace

void register_control_flow_kernels(std::vector<KernelDef>& defs) {
  defs.push_back({"", "If", 1, {}, make_kernel<IfKernel>});
  defs.push_back({"", "Loop", 1, {}, make_kernel<LoopKernel>});
}

}  // namespace openbpu::kernels
