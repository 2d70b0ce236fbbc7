#include "families.h"

namespace openbpu::kernels {

void register_horizon_float_kernels(std::vector<KernelDef>& defs) { (void)defs; }

}  // namespace openbpu::kernels
