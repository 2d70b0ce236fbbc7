#include "constant_evaluation.h"

#include "openbpu/kernels/registry.h"

namespace openbpu::passes {

namespace {

std::optional<std::vector<kernels::Tensor>> run_kernel(
    std::string_view name, std::string_view op_type, std::string_view domain, int64_t opset,
    const kernels::AttributeMap& attrs, int output_count,
    const std::vector<const kernels::Tensor*>& inputs) {
  if (kernels::find_kernel(domain, op_type) == nullptr) return std::nullopt;
  try {
    const kernels::NodeInfo info{name,        op_type,
                                 domain,      static_cast<int>(opset),
                                 attrs,       static_cast<int>(inputs.size()),
                                 output_count};
    const auto kernel = kernels::create_kernel(info);
    std::vector<kernels::Tensor> outputs(static_cast<size_t>(output_count));
    kernels::KernelContext ctx(inputs, outputs, kernels::Allocator::default_allocator(), nullptr);
    kernel->run(ctx);
    for (kernels::Tensor& t : outputs) {
      if (!t.empty_storage()) t = t.clone();
    }
    return outputs;
  } catch (const kernels::KernelError&) {
    return std::nullopt;
  }
}

}  // namespace

std::optional<std::vector<kernels::Tensor>> evaluate_node(
    const ir::Model& model, const ir::Node& node,
    const std::vector<const kernels::Tensor*>& inputs) {
  return run_kernel(node.name(), node.op_type(), node.domain(), model.opset_version(node.domain()),
                    node.attrs(), static_cast<int>(node.outputs().size()), inputs);
}

std::optional<kernels::Tensor> evaluate_op(std::string_view op_type,
                                           const kernels::AttributeMap& attrs, int64_t opset,
                                           const std::vector<const kernels::Tensor*>& inputs) {
  auto out = run_kernel(op_type, op_type, "", opset, attrs, 1, inputs);
  if (!out) return std::nullopt;
  return std::move(out->front());
}

}  // namespace openbpu::passes
