// Register functions of the operator families; each lives in its own source file in this
// folder and appends that family's KernelDefs.
#pragma once

#include <vector>

#include "openbpu/kernels/kernel.h"

namespace openbpu::kernels {

void register_unary_kernels(std::vector<KernelDef>& defs);          // unary.cc
void register_activation_kernels(std::vector<KernelDef>& defs);     // activation.cc
void register_binary_kernels(std::vector<KernelDef>& defs);         // binary.cc
void register_comparison_kernels(std::vector<KernelDef>& defs);     // comparison.cc
void register_pow_kernels(std::vector<KernelDef>& defs);            // pow.cc
void register_variadic_kernels(std::vector<KernelDef>& defs);       // variadic.cc
void register_cast_kernels(std::vector<KernelDef>& defs);           // cast.cc
void register_reduce_kernels(std::vector<KernelDef>& defs);         // reduce.cc
void register_reduce_real_kernels(std::vector<KernelDef>& defs);    // reduce_real.cc
void register_reduce_extremum_kernels(std::vector<KernelDef>& defs);  // reduce_extremum.cc
void register_softmax_kernels(std::vector<KernelDef>& defs);        // softmax.cc
void register_normalization_kernels(std::vector<KernelDef>& defs);  // normalization.cc
void register_loss_kernels(std::vector<KernelDef>& defs);           // loss.cc
void register_conv_kernels(std::vector<KernelDef>& defs);           // conv.cc
void register_pool_kernels(std::vector<KernelDef>& defs);           // pool.cc
void register_matmul_kernels(std::vector<KernelDef>& defs);         // matmul.cc
void register_quantize_kernels(std::vector<KernelDef>& defs);       // quantize.cc
void register_shape_kernels(std::vector<KernelDef>& defs);          // shape.cc
void register_movement_kernels(std::vector<KernelDef>& defs);       // movement.cc
void register_gather_scatter_kernels(std::vector<KernelDef>& defs); // gather_scatter.cc
void register_generator_kernels(std::vector<KernelDef>& defs);      // generator.cc
void register_resize_kernels(std::vector<KernelDef>& defs);         // resize.cc
void register_detection_kernels(std::vector<KernelDef>& defs);      // detection.cc
void register_rnn_kernels(std::vector<KernelDef>& defs);            // rnn.cc
void register_control_flow_kernels(std::vector<KernelDef>& defs);   // control_flow.cc
void register_signal_kernels(std::vector<KernelDef>& defs);         // signal.cc
void register_linalg_kernels(std::vector<KernelDef>& defs);         // linalg.cc
// Domain "horizon" (docs/quantized_ops.md)
void register_horizon_float_kernels(std::vector<KernelDef>& defs);      // horizon_float.cc
void register_horizon_quantized_kernels(std::vector<KernelDef>& defs);  // horizon_quantized.cc
void register_horizon_quantized_conv_kernels(std::vector<KernelDef>& defs);  // ..._conv.cc
void register_horizon_quantized_pool_kernels(std::vector<KernelDef>& defs);  // ..._pool.cc
void register_horizon_quantized_resize_kernels(std::vector<KernelDef>& defs);  // ..._resize.cc
void register_horizon_quantized_axis_kernels(std::vector<KernelDef>& defs);  // ..._axis.cc

}  // namespace openbpu::kernels
