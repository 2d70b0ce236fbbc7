#include "families.h"

namespace openbpu::kernels {

void register_matmul_kernels(std::vector<KernelDef>& defs) { (void)defs; }

}  // namespace openbpu::kernels
