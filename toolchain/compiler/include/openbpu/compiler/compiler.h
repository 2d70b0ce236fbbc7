// The BPU compiler: lowers each BPU subgraph of a quantized model (*_quantized_model.onnx, the
// contract of docs/quantized_ops.md) to a virtual BPU program (simulator/isa.h) and its
// weights blob.
//
// Stages, per segment: find the BPU segments → place every tensor (NHWC with the march's channel
// alignment for rank-4 feature maps, dense row-major otherwise; reshapes of dense tensors are
// free views) → lower each node to instructions, packing weights and tables into the constant
// blob → plan the activation memory by liveness (first fit, largest first) → encode. The
// program's input and output bindings are the segment's boundary tensors in the order
// CompiledSegment lists them.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "openbpu/ir/graph.h"
#include "openbpu/kernels/tensor.h"
#include "openbpu/simulator/isa.h"
#include "openbpu/simulator/march.h"

namespace openbpu::compiler {

// Element type and static shape of a tensor of the model (e.g. observed in one run).
struct TensorInfo {
  kernels::DataType dtype = kernels::DataType::kUndefined;
  kernels::Shape shape;
};
using TensorInfos = std::map<std::string, TensorInfo>;

// Every tensor's element type and shape from one run of `model` on `feeds` (feeds included).
TensorInfos observe_tensor_infos(const ir::Model& model, const std::map<std::string, kernels::Tensor>& feeds,
                                 int threads = 1);

// int8, int16 or int32: the element types the BPU stores.
bool is_bpu_type(kernels::DataType type);

// True for a node of the quantized model that runs on the BPU: a horizon-domain integer
// operator (all but the Quantize / Dequantize borders), or a standard operator (Reshape,
// Concat, MaxPool, ...) on integer data.
bool is_bpu_node(const ir::Node& node, const TensorInfos& tensors);

// The BPU subgraphs, by the partitioner's rule (bpu_support::group_subgraphs): a BPU node joins
// a producer's subgraph unless it depends on it through a CPU node. Nodes in graph order;
// segments ordered by their first node.
std::vector<std::vector<const ir::Node*>> find_bpu_segments(const ir::Graph& graph,
                                                            const TensorInfos& tensors);

enum class CompileMode { kLatency, kBandwidth, kBalance };

// A model input the device receives as an image, converted by a Preprocess instruction.
struct ImageInput {
  simulator::isa::ImageFormat format = simulator::isa::ImageFormat::kNv12;
  // kPacked: the order of the image's axes in memory as model-input axes, e.g. {0, 2, 3, 1} for
  // NHWC bytes of an NCHW model input (input_layout_rt NHWC, input_layout_train NCHW); empty:
  // the model input's own order.
  std::vector<int> memory_order;
};

// What an optimize_level turns on (docs/compiler.md): each level adds one feature to the level
// below. optimizations_of() is the one place a level is read; the scheduler asks for features.
struct Optimizations {
  bool double_buffering = false;  // O1: tiles use half the SRAM, loads overlap compute
  bool chaining = false;          // O2: an output only the next instruction reads stays on chip
  bool shared_chaining = false;   // O3: the next instruction reads it from SRAM even when later
                                  //     readers need it stored too
};
// The features of optimize_level `level` (0..3). Throws Error for another level.
Optimizations optimizations_of(int level);

// compiler_parameters of the yaml (docs/compiler.md says what each one changes).
struct CompileOptions {
  CompileOptions(const simulator::MarchSpec* march_spec = nullptr) : march(march_spec) {}  // NOLINT: implicit on purpose

  const simulator::MarchSpec* march = nullptr;  // required
  int optimize_level = 2;                        // O0..O3
  CompileMode compile_mode = CompileMode::kLatency;
  int balance_factor = 50;                       // [0, 100], with kBalance
  int core_num = 1;                              // BPU cores the timing model spreads convs over
  uint64_t max_time_per_fc_us = 0;               // 0: one function call per segment
  int jobs = 1;                                  // segments compiled in parallel (threads)
  // Model inputs the device receives as images (input_type_rt nv12, rgb, bgr, yuv444, gray):
  // the segment binding is the image bytes, converted by a Preprocess instruction.
  std::map<std::string, ImageInput> image_inputs;
};

struct CompiledSegment {
  std::string name;                  // "subgraph_<index>"
  std::vector<std::string> nodes;    // the ONNX nodes it holds, in order
  std::vector<std::string> inputs;   // tensor names, binding order
  std::vector<std::string> outputs;  // tensor names, binding order
  std::vector<simulator::isa::TensorDesc> input_descs;   // the bindings (device layout)
  std::vector<simulator::isa::TensorDesc> output_descs;
  std::vector<uint8_t> program;      // encoded (simulator/program.h)
  std::vector<uint8_t> weights;      // constant blob, loaded at device address 0
  std::vector<std::string> instruction_nodes;  // per instruction: the ONNX node it came from
  uint64_t activation_bytes = 0;     // planned activation memory
  uint64_t unplanned_bytes = 0;      // the sum of all buffers (what planning saved against)
  uint32_t function_calls = 1;       // FunctionBegin boundaries in the program
};

// Compiles every BPU segment of `graph`. `tensors` must hold every non-constant tensor the
// segments read or write. Throws Error naming the node and the rule for what cannot be lowered.
std::vector<CompiledSegment> compile_bpu_segments(const ir::Graph& graph, const TensorInfos& tensors,
                                                  const CompileOptions& options);

}  // namespace openbpu::compiler
