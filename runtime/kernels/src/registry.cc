#include "openbpu/kernels/registry.h"

#include <algorithm>
#include <string>

#include "ops/families.h"

namespace openbpu::kernels {

namespace {

std::string_view canonical_domain(std::string_view domain) {
  return domain == "ai.onnx" ? std::string_view() : domain;
}

std::vector<KernelDef> build_table() {
  std::vector<KernelDef> defs;
  for (auto* reg : {register_unary_kernels,
                    register_activation_kernels,
                    register_binary_kernels,
                    register_comparison_kernels,
                    register_pow_kernels,
                    register_variadic_kernels,
                    register_cast_kernels,
                    register_reduce_kernels,
                    register_reduce_real_kernels,
                    register_reduce_extremum_kernels,
                    register_softmax_kernels,
                    register_normalization_kernels,
                    register_loss_kernels,
                    register_conv_kernels,
                    register_pool_kernels,
                    register_matmul_kernels,
                    register_quantize_kernels,
                    register_shape_kernels,
                    register_movement_kernels,
                    register_gather_scatter_kernels,
                    register_generator_kernels,
                    register_resize_kernels,
                    register_detection_kernels,
                    register_rnn_kernels,
                    register_control_flow_kernels,
                    register_signal_kernels,
                    register_linalg_kernels,
                    register_horizon_float_kernels,
                    register_horizon_quantized_kernels,
                    register_horizon_quantized_conv_kernels,
                    register_horizon_quantized_pool_kernels,
                    register_horizon_quantized_resize_kernels,
                    register_horizon_quantized_axis_kernels}) {
    reg(defs);
  }
  std::sort(defs.begin(), defs.end(), [](const KernelDef& a, const KernelDef& b) {
    return std::pair(a.domain, a.op_type) < std::pair(b.domain, b.op_type);
  });
  for (size_t i = 1; i < defs.size(); ++i) {
    if (defs[i].domain == defs[i - 1].domain && defs[i].op_type == defs[i - 1].op_type) {
      fail("kernel table lists ", defs[i].op_type, " twice");
    }
  }
  return defs;
}

const std::vector<KernelDef>& table() {
  static const std::vector<KernelDef> defs = build_table();
  return defs;
}

}  // namespace

std::span<const KernelDef> all_kernels() {
  return table();
}

const KernelDef* find_kernel(std::string_view domain, std::string_view op_type) {
  const auto& defs = table();
  const std::pair key(canonical_domain(domain), op_type);
  auto it = std::lower_bound(defs.begin(), defs.end(), key, [](const KernelDef& d, const auto& k) {
    return std::pair(d.domain, d.op_type) < k;
  });
  if (it == defs.end() || it->domain != key.first || it->op_type != key.second) return nullptr;
  return &*it;
}

std::unique_ptr<Kernel> create_kernel(const NodeInfo& node) {
  const KernelDef* def = find_kernel(node.domain, node.op_type);
  if (def == nullptr) {
    fail("no kernel for operator ",
         node.domain.empty() ? "" : std::string(node.domain) + "::", node.op_type);
  }
  OPENBPU_CHECK(node.opset >= def->since_version, node.op_type, " is implemented from opset ",
                def->since_version, "; the model imports opset ", node.opset);
  node.attrs.validate(node.op_type, def->attributes);
  return def->create(node);
}

}  // namespace openbpu::kernels
