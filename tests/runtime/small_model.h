// The small model the runtime's unit tests run: float input, CPU operators around two BPU
// segments, compiled for bayes-e and written as a model file in memory; a preemptible one; and
// one with a resizer input.
#pragma once

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "bayes_model_file.h"
#include "openbpu/ir/parse.h"

namespace openbpu {

using kernels::DataType;
using kernels::Tensor;

// float x → Quantize → [BPU: conv, LUT] → Dequantize → Relu → Quantize → [BPU: global average
// pool] → Dequantize → float y. CPU operators at both ends and between the segments.
inline constexpr const char* kModelText = R"(model opsets=[ai.onnx:17, horizon:1]
graph g (%x: float32[1,3,8,8]) -> (%y) {
  init %w: int8[8,3,3,3] uniform(-128, 128)
  init %b: int32[8] uniform(-3000, 3000)
  init %table: int8[256] uniform(-128, 128)
  %xq = horizon::Quantize[scale=0.03125](%x)
  %c = horizon::HzSQuantizedConv[kernel_shape=[3,3], strides=[1,1], pads=[1,1,1,1], dilations=[1,1], group=1, output_type="int8", multipliers=[1288490189,1288490189,1288490189,1288490189,1503238554,1503238554,1503238554,1503238554], shifts=[40,40,40,40,41,41,41,41], clip_min=0](%xq, %w, %b)
  %l = horizon::HzLut[function="test"](%c, %table)
  %lf = horizon::Dequantize[scales=[0.05]](%l)
  %relu = Relu(%lf)
  %q = horizon::Quantize[scale=0.05](%relu)
  %gap = horizon::HzSQuantizedGlobalAveragePool[multiplier=1099511628, shift=36](%q)
  %y = horizon::Dequantize[scales=[0.05]](%gap)
}
)";

inline Tensor random_input(uint32_t seed) { return uniform_input({1, 3, 8, 8}, seed); }

// A preemptible model: float x → Quantize → [BPU: six LUTs, one function call each] →
// Dequantize → float y. chain_model_file() compiles it without on-chip chaining (O1) and with
// max_time_per_fc 1 µs (shorter than any instruction), so its one BPU segment has 6 function
// calls, 5 boundaries at which a priority-255 job may preempt it.
inline constexpr const char* kChainModelText = R"(model opsets=[ai.onnx:17, horizon:1]
graph g (%x: float32[1,16,16,16]) -> (%y) {
  init %t: int8[256] uniform(-128, 128)
  %q = horizon::Quantize[scale=0.03125](%x)
  %y1 = horizon::HzLut[function="test"](%q, %t)
  %y2 = horizon::HzLut[function="test"](%y1, %t)
  %y3 = horizon::HzLut[function="test"](%y2, %t)
  %y4 = horizon::HzLut[function="test"](%y3, %t)
  %y5 = horizon::HzLut[function="test"](%y4, %t)
  %y6 = horizon::HzLut[function="test"](%y5, %t)
  %y = horizon::Dequantize[scales=[0.05]](%y6)
}
)";

inline Tensor chain_input(uint32_t seed) { return uniform_input({1, 16, 16, 16}, seed); }

inline format::Status chain_model_file(const ir::Model& model, const std::string& name, std::vector<uint8_t>* bytes) {
  compiler::CompileOptions options;
  options.optimize_level = 1;      // no on-chip chaining: a boundary may fall between any two LUTs
  options.max_time_per_fc_us = 1;  // one function call per instruction
  return compile_bayes_model_file(model, chain_input(1), name, "test", bytes, false, options);
}

// A model with a resizer input (input_source: resizer, hbDNNRoiInfer): an NV12 image x of
// 16x16 (the BPU's Preprocess makes it yuv444 - 128) → [BPU: conv] → Dequantize → float y.
inline constexpr const char* kRoiModelText = R"(model opsets=[ai.onnx:17, horizon:1]
graph g (%x: int8[1,3,16,16]) -> (%y) {
  init %w: int8[8,3,3,3] uniform(-128, 128)
  init %b: int32[8] uniform(-3000, 3000)
  %c = horizon::HzSQuantizedConv[kernel_shape=[3,3], strides=[1,1], pads=[1,1,1,1], dilations=[1,1], group=1, output_type="int8", multipliers=[1288490189,1288490189,1288490189,1288490189,1503238554,1503238554,1503238554,1503238554], shifts=[40,40,40,40,41,41,41,41], clip_min=0](%x, %w, %b)
  %y = horizon::Dequantize[scales=[0.05]](%c)
}
)";

// With `source` PYRAMID the same graph takes an NV12 image of its own 16x16 size (nv12.bin).
inline format::Status roi_model_file(const ir::Model& model, const std::string& name, std::vector<uint8_t>* bytes,
                                     format::InputSource source = format::InputSource::RESIZER) {
  Tensor x(DataType::kInt8, {1, 3, 16, 16});
  std::mt19937 rng(1);
  for (int64_t i = 0; i < x.element_count(); ++i) x.data<int8_t>()[i] = static_cast<int8_t>(rng() & 0xff);
  compiler::CompileOptions options;
  options.image_inputs["x"] = compiler::ImageInput{};  // NV12
  return compile_bayes_model_file(model, x, name, "test", bytes, false, options, {{"x", source}});
}

// The model file of kModelText as `name` (opsets recorded unless `drop_opsets`).
inline std::vector<uint8_t> model_file(const ir::Model& model, const std::string& name, bool drop_opsets = false) {
  std::vector<uint8_t> bytes;
  const format::Status st = compile_bayes_model_file(model, random_input(1), name, "test", &bytes, drop_opsets);
  EXPECT_TRUE(st.ok()) << st.message;
  return bytes;
}

}  // namespace openbpu
