// The passes, one per file; registry.cc lists them in all_passes().
#pragma once

#include "openbpu/passes/pass.h"

namespace openbpu::passes {

PassDef float16_to_float32_pass();
PassDef dynamic_quantization_removal_pass();
PassDef conv1d_as_conv2d_pass();
PassDef conv3d_as_conv2d_pass();
PassDef prelu_decomposition_pass();
PassDef recurrent_unrolling_pass();
PassDef if_inlining_pass();
PassDef control_flow_flattening_pass();
PassDef dropout_identity_removal_pass();
PassDef constant_folding_pass();
PassDef softmax_axis_canonicalization_pass();
PassDef operator_replacement_pass();
PassDef activation_canonicalization_pass();
PassDef fuse_conv_affine_pass();
PassDef fuse_batchnorm_pass();
PassDef gemm_to_conv_pass();
PassDef matmul_to_conv_pass();
PassDef reshape_transpose_cancellation_pass();
PassDef dead_code_elimination_pass();
PassDef qdq_removal_pass();

}  // namespace openbpu::passes
