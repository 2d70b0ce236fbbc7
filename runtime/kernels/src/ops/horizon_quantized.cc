#include "families.h"

namespace openbpu::kernels {

void register_horizon_quantized_kernels(std::vector<KernelDef>& defs) { (void)defs; }

}  // namespace openbpu::kernels
