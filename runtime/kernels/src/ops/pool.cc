#include "families.h"

namespace openbpu::kernels {

void register_pool_kernels(std::vector<KernelDef>& defs) { (void)defs; }

}  // namespace openbpu::kernels
