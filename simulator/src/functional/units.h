// The functional units of the virtual BPU: one function per opcode, each the loop nest of
// isa.h run on device memory. Operands were verified by decode_program(), so these neither
// check nor throw. Internal to the simulator library.
#pragma once

#include <cstdint>
#include <span>

#include "openbpu/simulator/isa.h"

namespace openbpu::simulator::functional {

using Memory = std::span<uint8_t>;

void conv(const isa::ConvInstruction& in, Memory memory);            // conv.cc
void conv_transpose(const isa::ConvInstruction& in, Memory memory);  // conv.cc
void matmul(const isa::MatMulInstruction& in, Memory memory);        // matmul.cc
void elementwise(const isa::ElementwiseInstruction& in, Memory memory);         // elementwise.cc
void select(const isa::SelectInstruction& in, Memory memory);                   // elementwise.cc
void gather_elements(const isa::GatherElementsInstruction& in, Memory memory);  // movement.cc
void lut(const isa::LutInstruction& in, Memory memory);                         // elementwise.cc
void lut_product(const isa::LutProductInstruction& in, Memory memory);          // elementwise.cc
void requantize(const isa::RequantizeInstruction& in, Memory memory);    // elementwise.cc
void clamp(const isa::ClampInstruction& in, Memory memory);              // elementwise.cc
void reduce(const isa::ReduceInstruction& in, Memory memory);            // reduce_pool.cc
void softmax(const isa::SoftmaxInstruction& in, Memory memory);          // reduce_pool.cc
void average_pool(const isa::PoolInstruction& in, Memory memory);        // reduce_pool.cc
void max_pool(const isa::PoolInstruction& in, Memory memory);            // reduce_pool.cc
void resize(const isa::ResizeInstruction& in, Memory memory);            // resize.cc
void copy(const isa::CopyInstruction& in, Memory memory);                // movement.cc
void fill(const isa::FillInstruction& in, Memory memory);                // movement.cc
// A tensor from its dense row-major form into device memory at desc's layout, and back
// (movement.cc).
void dense_to_device(const isa::TensorDesc& desc, const uint8_t* dense, uint8_t* device);
void device_to_dense(const isa::TensorDesc& desc, const uint8_t* device, uint8_t* dense);
void preprocess(const isa::PreprocessInstruction& in, Memory memory);    // preprocess.cc

}  // namespace openbpu::simulator::functional
