#include "families.h"

namespace openbpu::kernels {

void register_gather_scatter_kernels(std::vector<KernelDef>& defs) { (void)defs; }

}  // namespace openbpu::kernels
