// Tensor placement, constants, relocations, memory planning and encoding of one segment.
#include "segment_builder.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <numeric>

namespace openbpu::compiler {

namespace {

uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

// Buffers start on 64-byte boundaries (a DDR burst of the virtual BPU).
constexpr uint64_t kBufferAlignment = 64;
constexpr uint64_t kConstantAlignment = 16;

// The descriptors of a payload, in declaration order.
std::vector<isa::TensorDesc*> descriptors(simulator::InstructionPayload& payload) {
  return std::visit(
      [](auto& p) -> std::vector<isa::TensorDesc*> {
        using P = std::decay_t<decltype(p)>;
        if constexpr (std::is_same_v<P, isa::FunctionBegin>) {
          return {};
        } else if constexpr (std::is_same_v<P, isa::ConvInstruction>) {
          return {&p.input, &p.output, &p.residual};
        } else if constexpr (std::is_same_v<P, isa::MatMulInstruction> ||
                             std::is_same_v<P, isa::ElementwiseInstruction>) {
          return {&p.a, &p.b, &p.output};
        } else if constexpr (std::is_same_v<P, isa::SelectInstruction>) {
          return {&p.condition, &p.a, &p.b, &p.output};
        } else if constexpr (std::is_same_v<P, isa::CopyInstruction>) {
          return {&p.source, &p.destination};
        } else if constexpr (std::is_same_v<P, isa::FillInstruction>) {
          return {&p.destination};
        } else if constexpr (std::is_same_v<P, isa::PreprocessInstruction>) {
          return {&p.source, &p.output};
        } else {
          return {&p.input, &p.output};
        }
      },
      payload);
}

}  // namespace

isa::ElementType element_type(kernels::DataType dtype, const std::string& what) {
  switch (dtype) {
    case kernels::DataType::kInt8: return isa::ElementType::kInt8;
    case kernels::DataType::kInt16: return isa::ElementType::kInt16;
    case kernels::DataType::kInt32: return isa::ElementType::kInt32;
    default:
      raise(what, ": the BPU stores int8, int16 or int32 tensors, got ", kernels::dtype_name(dtype));
  }
}

isa::TensorDesc insert_unit_axis(isa::TensorDesc desc, uint32_t axis) {
  for (uint32_t i = desc.rank; i > axis; --i) {
    desc.dims[i] = desc.dims[i - 1];
    desc.strides[i] = desc.strides[i - 1];
  }
  desc.dims[axis] = 1;
  desc.strides[axis] = 0;
  ++desc.rank;
  return desc;
}

isa::TensorDesc broadcast_to(isa::TensorDesc desc, const isa::TensorDesc& target) {
  while (desc.rank < target.rank) desc = insert_unit_axis(desc, 0);
  for (uint32_t i = 0; i < desc.rank; ++i) {
    if (desc.dims[i] == 1 && target.dims[i] != 1) {
      desc.dims[i] = target.dims[i];
      desc.strides[i] = 0;
    }
  }
  return desc;
}

SegmentBuilder::SegmentBuilder(const CompileOptions& options, const TensorInfos& tensors)
    : options_(options), march_(*options.march), tensors_(tensors) {}

const TensorInfo& SegmentBuilder::info(const ir::Value* value) const {
  auto it = tensors_.find(value->name());
  if (it == tensors_.end()) raise("tensor '", value->name(), "': no type and shape known for it");
  return it->second;
}

int SegmentBuilder::new_buffer(uint64_t bytes) {
  buffers_.push_back(Buffer{align_up(std::max<uint64_t>(bytes, 1), kBufferAlignment), -1, -1, 0});
  return static_cast<int>(buffers_.size()) - 1;
}

bool SegmentBuilder::is_dense(const isa::TensorDesc& desc) {
  int64_t stride = isa::element_bytes(desc.type);
  for (uint32_t i = desc.rank; i-- > 0;) {
    if (desc.dims[i] != 1 && desc.strides[i] != stride) return false;
    stride *= desc.dims[i];
  }
  return true;
}

Placed& SegmentBuilder::define(const ir::Value* value, bool feature_map) {
  const TensorInfo& t = info(value);
  const isa::ElementType type = element_type(t.dtype, "tensor '" + value->name() + "'");
  if (t.shape.size() > isa::kMaxRank) {
    raise("tensor '", value->name(), "' ", kernels::shape_to_string(t.shape), ": the BPU handles rank <= ",
          isa::kMaxRank);
  }
  for (int64_t d : t.shape) {
    if (d <= 0 || d > INT32_MAX) raise("tensor '", value->name(), "' ", kernels::shape_to_string(t.shape), ": empty or huge axis");
  }
  if (type == isa::ElementType::kInt16 && !march_.supports_int16()) {
    raise(current_node_.empty() ? "segment input" : "node '" + current_node_ + "'", ": tensor '", value->name(),
          "' is int16, but march ", march_.name, " has no int16 computation (convert the model for ", march_.name,
          ": int16 settings stay int8 there)");
  }
  Placed p;
  const uint64_t width = isa::element_bytes(type);
  if (feature_map && t.shape.size() == 4) {
    // NHWC, C padded to the march's channel alignment: strides N, C, H, W.
    const uint64_t c = t.shape[1], h = t.shape[2], w = t.shape[3];
    const uint64_t aligned_c = align_up(c, static_cast<uint64_t>(march_.channel_align));
    p.desc = simulator::dense_desc(0, type, t.shape);
    p.desc.strides[1] = static_cast<int32_t>(width);
    p.desc.strides[3] = static_cast<int32_t>(aligned_c * width);
    p.desc.strides[2] = static_cast<int32_t>(w * aligned_c * width);
    p.desc.strides[0] = static_cast<int32_t>(h * w * aligned_c * width);
    p.buffer = new_buffer(t.shape[0] * h * w * aligned_c * width);
  } else {
    p.desc = simulator::dense_desc(0, type, t.shape);
    p.buffer = new_buffer(simulator::element_count(p.desc) * width);
  }
  return placed_[value->name()] = p;
}

void SegmentBuilder::define_image_input(const ir::Value* value, const ImageInput& image) {
  const TensorInfo& t = info(value);
  const std::string what = "input '" + value->name() + "' " + kernels::shape_to_string(t.shape);
  if (t.dtype != kernels::DataType::kInt8) raise(what, ": an image input needs an int8 (*_128) model input");
  Placed source;
  if (image.format == isa::ImageFormat::kNv12) {
    if (t.shape.size() != 4 || t.shape[1] != 3 || t.shape[2] % 2 != 0 || t.shape[3] % 2 != 0) {
      raise(what, ": an nv12 input needs the quantized model to take yuv444 [N, 3, H, W] with even H and W");
    }
    const kernels::Shape nv12{t.shape[0], t.shape[2] / 2 * 3, t.shape[3]};
    source.desc = simulator::dense_desc(0, isa::ElementType::kUint8, nv12);
    source.buffer = new_buffer(simulator::element_count(source.desc));
    bindings_[value->name()] = source;
    const Placed& y = define(value);
    emit(isa::Opcode::kPreprocess, isa::PreprocessInstruction{isa::ImageFormat::kNv12, source.desc, y.desc},
         {source.buffer, y.buffer});
    return;
  }
  // Packed: the binding is dense in the image's memory order; the instruction reads it as a
  // view in the model input's axis order.
  std::vector<int> order = image.memory_order;
  if (order.empty()) {
    for (size_t i = 0; i < t.shape.size(); ++i) order.push_back(static_cast<int>(i));
  }
  if (order.size() != t.shape.size()) raise(what, ": the image's axis order has ", order.size(), " axes");
  kernels::Shape memory_dims;
  for (int axis : order) memory_dims.push_back(t.shape[size_t(axis)]);
  source.desc = simulator::dense_desc(0, isa::ElementType::kUint8, memory_dims);
  source.buffer = new_buffer(simulator::element_count(source.desc));
  bindings_[value->name()] = source;
  isa::TensorDesc view = source.desc;
  for (size_t i = 0; i < order.size(); ++i) {
    view.dims[order[i]] = source.desc.dims[i];
    view.strides[order[i]] = source.desc.strides[i];
  }
  const Placed& y = define(value);
  emit(isa::Opcode::kPreprocess, isa::PreprocessInstruction{isa::ImageFormat::kPacked, view, y.desc},
       {source.buffer, y.buffer});
}

const Placed& SegmentBuilder::binding(const ir::Value* value) {
  auto it = bindings_.find(value->name());
  return it != bindings_.end() ? it->second : get(value);
}

Placed SegmentBuilder::temporary(isa::ElementType type, const kernels::Shape& dims) {
  Placed p;
  p.desc = simulator::dense_desc(0, type, dims);
  p.buffer = new_buffer(simulator::element_count(p.desc) * isa::element_bytes(type));
  return p;
}

const Placed& SegmentBuilder::get(const ir::Value* value) {
  auto it = placed_.find(value->name());
  if (it != placed_.end()) return it->second;
  if (const kernels::Tensor* data = value->constant()) {
    // A constant operand (e.g. an added embedding): dense in the constant region, no buffer.
    Placed p;
    const isa::ElementType type = element_type(data->dtype(), "constant '" + value->name() + "'");
    p.desc = simulator::dense_desc(constant(data->raw_data(), data->byte_size()), type, data->shape());
    return placed_[value->name()] = p;
  }
  raise("tensor '", value->name(), "' is read before the segment defines it");
}

uint32_t SegmentBuilder::constant(const void* data, size_t bytes) {
  const uint64_t at = align_up(constants_.size(), kConstantAlignment);
  if (at + bytes > UINT32_MAX / 2) raise("segment weights exceed the virtual BPU's 2 GiB constant region");
  constants_.resize(at, 0);
  const auto* p = static_cast<const uint8_t*>(data);
  constants_.insert(constants_.end(), p, p + bytes);
  return static_cast<uint32_t>(at);
}

uint32_t SegmentBuilder::multipliers(const std::vector<int64_t>& multipliers,
                                     const std::vector<int64_t>& shifts, const std::string& what) {
  if (multipliers.size() != shifts.size() || multipliers.empty()) {
    raise(what, ": ", multipliers.size(), " multipliers but ", shifts.size(), " shifts");
  }
  std::vector<int32_t> words;
  for (size_t i = 0; i < multipliers.size(); ++i) {
    words.push_back(static_cast<int32_t>(multipliers[i]));
    words.push_back(static_cast<int32_t>(shifts[i]));
  }
  return constant_words(words);
}

CompiledSegment SegmentBuilder::finish(std::string name, std::vector<std::string> nodes,
                                       const std::vector<const ir::Value*>& inputs,
                                       const std::vector<const ir::Value*>& outputs) {
  const int count = static_cast<int>(instructions_.size());
  auto touch = [&](int buffer, int at) {
    if (buffer < 0) return;
    Buffer& b = buffers_[size_t(buffer)];
    b.first = b.first < 0 ? at : std::min(b.first, at);
    b.last = std::max(b.last, at);
  };
  for (int i = 0; i < count; ++i) {
    for (int buffer : relocations_[size_t(i)]) touch(buffer, i);
  }
  for (const ir::Value* v : inputs) touch(binding(v).buffer, -1);
  for (const ir::Value* v : outputs) touch(get(v).buffer, count);
  for (const ir::Value* v : outputs) {
    Buffer& b = buffers_[size_t(get(v).buffer)];
    b.last = count;
  }
  for (const ir::Value* v : inputs) {
    Buffer& b = buffers_[size_t(binding(v).buffer)];
    b.first = -1;
  }

  std::vector<uint64_t> sizes;
  std::vector<bool> pinned(buffers_.size(), false);
  for (const Buffer& b : buffers_) sizes.push_back(b.bytes);
  for (const ir::Value* v : inputs) pinned[size_t(binding(v).buffer)] = true;
  for (const ir::Value* v : outputs) pinned[size_t(get(v).buffer)] = true;
  schedule(instructions_, relocations_, sizes, pinned, options_);

  // First fit, largest buffer first, among buffers whose instruction ranges overlap.
  const uint64_t base = align_up(constants_.size(), kBufferAlignment);
  std::vector<int> order;
  uint64_t unplanned = 0;
  for (size_t i = 0; i < buffers_.size(); ++i) {
    if (buffers_[i].first == -1 && buffers_[i].last == -1) continue;  // never used
    order.push_back(static_cast<int>(i));
    unplanned += buffers_[i].bytes;
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return buffers_[size_t(a)].bytes > buffers_[size_t(b)].bytes; });
  std::vector<int> placed;
  uint64_t end = 0;
  for (int id : order) {
    Buffer& b = buffers_[size_t(id)];
    std::vector<std::pair<uint64_t, uint64_t>> busy;
    for (int other : placed) {
      const Buffer& o = buffers_[size_t(other)];
      if (o.first <= b.last && b.first <= o.last) busy.emplace_back(o.address, o.address + o.bytes);
    }
    std::sort(busy.begin(), busy.end());
    uint64_t at = 0;
    for (const auto& [lo, hi] : busy) {
      if (at + b.bytes <= lo) break;
      at = std::max(at, hi);
    }
    b.address = at;
    end = std::max(end, at + b.bytes);
    placed.push_back(id);
  }
  const uint64_t memory = base + end;
  if (memory > isa::kMaxMemoryBytes) {
    raise("segment ", name, " needs ", memory, " bytes of BPU device memory; a program addresses at most ",
          isa::kMaxMemoryBytes, " (512 MiB, isa::kMaxMemoryBytes): lower the input resolution or split the model");
  }

  auto relocate = [&](isa::TensorDesc& d, int buffer) {
    if (buffer >= 0) d.address = static_cast<uint32_t>(d.address + base + buffers_[size_t(buffer)].address);
  };
  simulator::Program program;
  program.memory_bytes = static_cast<uint32_t>(memory);
  program.constant_bytes = static_cast<uint32_t>(constants_.size());
  for (const ir::Value* v : inputs) {
    Placed p = binding(v);
    relocate(p.desc, p.buffer);
    program.inputs.push_back(p.desc);
  }
  for (const ir::Value* v : outputs) {
    Placed p = get(v);
    relocate(p.desc, p.buffer);
    program.outputs.push_back(p.desc);
  }
  std::vector<std::string> instruction_nodes;
  for (int i = 0; i < count; ++i) {
    simulator::Instruction in = instructions_[size_t(i)];
    std::vector<isa::TensorDesc*> descs = descriptors(in.payload);
    const std::vector<int>& ids = relocations_[size_t(i)];
    if (ids.size() != descs.size()) {
      raise("internal: instruction ", i, " of ", instruction_nodes_[size_t(i)], " has ", descs.size(),
            " operands but ", ids.size(), " buffers");
    }
    for (size_t k = 0; k < descs.size(); ++k) relocate(*descs[k], ids[k]);
    const std::string error = simulator::verify_instruction(in, memory, constants_);
    if (!error.empty()) {
      raise("node '", instruction_nodes_[size_t(i)], "': the lowered ", simulator::opcode_name(in.opcode),
            " instruction is invalid: ", error);
    }
    program.instructions.push_back(in);
    instruction_nodes.push_back(instruction_nodes_[size_t(i)]);
  }
  // Function-call boundaries (at least one, at the start).
  uint32_t calls = 1;
  if (options_.max_time_per_fc_us > 0) {
    calls = split_function_calls(program, options_);
    std::vector<std::string> with_calls;
    size_t k = 0;
    for (const simulator::Instruction& in : program.instructions) {
      with_calls.push_back(in.opcode == isa::Opcode::kFunctionBegin ? "" : instruction_nodes[k++]);
    }
    instruction_nodes = std::move(with_calls);
  } else {
    program.instructions.insert(program.instructions.begin(),
                                {isa::Opcode::kFunctionBegin, isa::FunctionBegin{0}, 0});
    instruction_nodes.insert(instruction_nodes.begin(), "");
  }

  CompiledSegment out;
  out.name = std::move(name);
  out.nodes = std::move(nodes);
  for (const ir::Value* v : inputs) out.inputs.push_back(v->name());
  for (const ir::Value* v : outputs) out.outputs.push_back(v->name());
  out.input_descs = program.inputs;
  out.output_descs = program.outputs;
  out.program = simulator::encode_program(program);
  out.weights = constants_;
  out.instruction_nodes = std::move(instruction_nodes);
  out.activation_bytes = end;
  out.unplanned_bytes = unplanned;
  out.function_calls = calls;
  return out;
}

}  // namespace openbpu::compiler
