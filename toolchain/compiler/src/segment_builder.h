// Internal: the state of one segment's compilation — tensor placement, buffers, the constant
// blob, instructions with their buffer relocations, memory planning and encoding.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "openbpu/bpu_support/op_def.h"
#include "openbpu/common/error.h"
#include "openbpu/compiler/compiler.h"
#include "openbpu/simulator/isa.h"
#include "openbpu/simulator/program.h"

namespace openbpu::compiler {

namespace isa = simulator::isa;

// A tensor as instructions see it: a descriptor whose address is an offset inside a buffer.
struct Placed {
  int buffer = -1;  // -1: no tensor (rank-0 optional operand)
  isa::TensorDesc desc{};
};

isa::ElementType element_type(kernels::DataType dtype, const std::string& what);

class SegmentBuilder {
 public:
  SegmentBuilder(const CompileOptions& options, const TensorInfos& tensors);

  // ---- tensors
  const TensorInfo& info(const ir::Value* value) const;
  // A new buffer for `value` (NHWC channel-aligned when rank 4 and `feature_map`, else dense).
  Placed& define(const ir::Value* value, bool feature_map = true);
  // A model input the device receives as an image (`format`): its binding is the image bytes,
  // and a Preprocess instruction writes `value` (int8 yuv444_128) from them.
  void define_image_input(const ir::Value* value, const ImageInput& image);
  // The device binding of a segment input: the image bytes of an image input, else get().
  const Placed& binding(const ir::Value* value);
  // `value` as a view of an existing placement (no data moves).
  void alias(const ir::Value* value, const Placed& view) { placed_[value->name()] = view; }
  // The placement of a tensor the segment defined, or of a constant (placed in the constant
  // region on first use, buffer -1).
  const Placed& get(const ir::Value* value);
  bool has(const ir::Value* value) const { return placed_.count(value->name()) != 0; }
  // A dense temporary of `dims`.
  Placed temporary(isa::ElementType type, const kernels::Shape& dims);
  // True if desc is dense row-major.
  static bool is_dense(const isa::TensorDesc& desc);

  // ---- constants (16-byte aligned in the blob); return the address
  uint32_t constant(const void* data, size_t bytes);
  uint32_t constant_words(const std::vector<int32_t>& words) {
    return constant(words.data(), words.size() * 4);
  }
  uint32_t multipliers(const std::vector<int64_t>& multipliers, const std::vector<int64_t>& shifts,
                       const std::string& what);

  // ---- instructions; operands are Placed, in the payload's descriptor order
  template <typename Payload>
  void emit(isa::Opcode opcode, const Payload& payload, std::vector<int> buffers) {
    instructions_.push_back({opcode, payload});
    relocations_.push_back(std::move(buffers));
    instruction_nodes_.push_back(current_node_);
  }
  void set_current_node(const std::string& name) { current_node_ = name; }

  // Binds the segment boundary and produces the program.
  CompiledSegment finish(std::string name, std::vector<std::string> nodes,
                         const std::vector<const ir::Value*>& inputs,
                         const std::vector<const ir::Value*>& outputs);

  const simulator::MarchSpec& march() const { return march_; }
  const CompileOptions& options() const { return options_; }

 private:
  struct Buffer {
    uint64_t bytes = 0;
    int first = -1, last = -1;  // instruction range using it
    uint64_t address = 0;
  };
  int new_buffer(uint64_t bytes);

  const CompileOptions& options_;
  const simulator::MarchSpec& march_;
  const TensorInfos& tensors_;
  std::map<std::string, Placed> placed_;
  std::map<std::string, Placed> bindings_;  // image inputs: the image bytes
  std::vector<Buffer> buffers_;
  std::vector<uint8_t> constants_;
  std::vector<simulator::Instruction> instructions_;
  std::vector<std::vector<int>> relocations_;
  std::vector<std::string> instruction_nodes_;
  std::string current_node_;
};

// The lowering of a node of the quantized model (segments.cc): horizon nodes by the registry
// row of their BPU type, standard operators by their op_type's row; kNone if there is none.
struct Lowering {
  bpu_support::LowerAs how = bpu_support::LowerAs::kNone;
  const bpu_support::OpDef* def = nullptr;  // the row (none for HzRequantize)
};
Lowering lowering_of(const ir::Node& node);
// Lowering of one node (lower_compute.cc / lower_movement.cc); false if `lowering` is not theirs.
bool lower_compute(SegmentBuilder& b, const ir::Node& node, const Lowering& lowering);
bool lower_movement(SegmentBuilder& b, const ir::Node& node, const Lowering& lowering);

// x · table(x) in one kLutProduct (isa.h; swish, hardswish): a Mul of x and HzLut(x), or of x
// and HzLut(HzRequantize(x)) with one multiplier, all of the same shape, whose intermediate
// tensors only the chain reads (fusion.cc). The results are those of the three instructions.
struct LutProductChain {
  const ir::Node* requantize = nullptr;  // none: the table reads x
  const ir::Node* lut = nullptr;
  const ir::Node* mul = nullptr;
  const ir::Value* x = nullptr;
};
// The chains among a segment's nodes, by their Mul.
std::map<const ir::Node*, LutProductChain> find_lut_products(
    const ir::Graph& graph, const TensorInfos& tensors, const std::vector<const ir::Node*>& nodes);
void lower_lut_product(SegmentBuilder& b, const LutProductChain& chain);  // lower_compute.cc

// Scheduling (schedule.cc): tiling, double buffering and on-chip chaining hints for the
// timing model; `buffers` are each instruction's operand buffers (output last), `pinned` marks
// the segment's input/output buffers.
void schedule(std::vector<simulator::Instruction>& instructions, const std::vector<std::vector<int>>& buffers,
              const std::vector<uint64_t>& buffer_bytes, const std::vector<bool>& pinned,
              const CompileOptions& options);
// Inserts FunctionBegin boundaries so that no call exceeds max_time_per_fc; returns the count.
uint32_t split_function_calls(simulator::Program& program, const CompileOptions& options);

// ---- descriptor helpers
// desc with one unit axis inserted at `axis`.
isa::TensorDesc insert_unit_axis(isa::TensorDesc desc, uint32_t axis);
// desc seen with rank `rank` (leading unit axes added, ONNX broadcasting) and the dims of
// `target`: an axis of extent 1 broadcast to a larger extent gets stride 0.
isa::TensorDesc broadcast_to(isa::TensorDesc desc, const isa::TensorDesc& target);
// "node 'name' (OpType)", for messages.
inline std::string where(const ir::Node& node) { return "node '" + node.name() + "' (" + node.op_type() + ")"; }

}  // namespace openbpu::compiler
