// Lowering of the standard operators that move or select integers (docs/quantized_ops.md,
// "Passive operators on integers") to strided copies, fills and clamps.
#include <algorithm>
#include <numeric>

#include "segment_builder.h"

namespace openbpu::compiler {

namespace {

std::vector<int64_t> int_values(const ir::Node& node, size_t i, const char* what) {
  const ir::Value* v = node.input(i);
  if (v == nullptr || v->name().empty()) return {};
  if (v->constant() == nullptr) raise(where(node), ": input ", i, " (", what, ") must be a constant on the BPU");
  return v->constant()->to_int64_vector();
}

void copy(SegmentBuilder& b, const isa::TensorDesc& source, int source_buffer,
          const isa::TensorDesc& destination, int destination_buffer) {
  b.emit(isa::Opcode::kCopy, isa::CopyInstruction{source, destination}, {source_buffer, destination_buffer});
}

// Reshape, Flatten, Squeeze, Unsqueeze: a view of a dense input; a padded input is first copied
// into a dense buffer.
void reshape(SegmentBuilder& b, const ir::Node& node) {
  Placed x = b.get(node.input(0));
  if (!SegmentBuilder::is_dense(x.desc)) {
    const Placed dense =
        b.temporary(x.desc.type, kernels::Shape(x.desc.dims, x.desc.dims + x.desc.rank));
    copy(b, x.desc, x.buffer, dense.desc, dense.buffer);
    x = dense;
  }
  const TensorInfo& out = b.info(node.output(0));
  Placed view;
  view.buffer = x.buffer;
  view.desc = simulator::dense_desc(x.desc.address, x.desc.type, out.shape);
  if (simulator::element_count(view.desc) != simulator::element_count(x.desc)) {
    raise(where(node), ": output ", kernels::shape_to_string(out.shape), " has another element count than the input");
  }
  b.alias(node.output(0), view);
}

void transpose(SegmentBuilder& b, const ir::Node& node) {
  const Placed& x = b.get(node.input(0));
  const uint32_t rank = x.desc.rank;
  std::vector<int64_t> perm = node.attrs().get_ints("perm", {});
  if (perm.empty()) {
    for (uint32_t i = 0; i < rank; ++i) perm.push_back(rank - 1 - i);
  }
  if (perm.size() != rank) raise(where(node), ": perm has ", perm.size(), " entries for rank ", rank);
  isa::TensorDesc source = x.desc;
  for (uint32_t i = 0; i < rank; ++i) {
    source.dims[i] = x.desc.dims[perm[i]];
    source.strides[i] = x.desc.strides[perm[i]];
  }
  const Placed& y = b.define(node.output(0));
  copy(b, source, x.buffer, y.desc, y.buffer);
}

void concat(SegmentBuilder& b, const ir::Node& node) {
  const Placed& y = b.define(node.output(0));
  int64_t axis = node.attrs().get_int("axis");
  if (axis < 0) axis += y.desc.rank;
  uint32_t offset = 0;
  for (const ir::Value* input : node.inputs()) {
    const Placed& x = b.get(input);
    if (x.desc.type != y.desc.type) raise(where(node), ": inputs of different element types");
    isa::TensorDesc window = y.desc;
    window.dims[axis] = x.desc.dims[axis];
    window.address = static_cast<uint32_t>(y.desc.address + int64_t{offset} * y.desc.strides[axis]);
    copy(b, x.desc, x.buffer, window, y.buffer);
    offset += x.desc.dims[axis];
  }
}

// ONNX Slice.
void slice(SegmentBuilder& b, const ir::Node& node) {
  const Placed& x = b.get(node.input(0));
  const uint32_t rank = x.desc.rank;
  // Opset >= 10: constant inputs; opset 1-9: attributes (no steps).
  const bool attributes = node.attrs().has("starts");
  const std::vector<int64_t> starts = attributes ? node.attrs().get_ints("starts") : int_values(node, 1, "starts");
  const std::vector<int64_t> ends = attributes ? node.attrs().get_ints("ends") : int_values(node, 2, "ends");
  std::vector<int64_t> axes = attributes ? node.attrs().get_ints("axes", {}) : int_values(node, 3, "axes");
  std::vector<int64_t> steps = attributes ? std::vector<int64_t>{} : int_values(node, 4, "steps");
  if (ends.size() != starts.size()) raise(where(node), ": starts and ends differ in length");
  if (axes.empty()) {
    axes.resize(starts.size());
    std::iota(axes.begin(), axes.end(), 0);
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  isa::TensorDesc source = x.desc;
  int64_t address = x.desc.address;
  for (size_t i = 0; i < starts.size(); ++i) {
    const int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
    const int64_t dim = x.desc.dims[axis], step = steps[i];
    if (step == 0) raise(where(node), ": step 0");
    int64_t start = starts[i] < 0 ? starts[i] + dim : starts[i];
    int64_t end = ends[i] < 0 ? ends[i] + dim : ends[i];
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
    }
    const int64_t count = step > 0 ? std::max<int64_t>(0, (end - start + step - 1) / step)
                                   : std::max<int64_t>(0, (start - end - step - 1) / -step);
    address += start * x.desc.strides[axis];
    source.dims[axis] = static_cast<uint32_t>(count);
    source.strides[axis] = static_cast<int32_t>(x.desc.strides[axis] * step);
  }
  source.address = static_cast<uint32_t>(address);
  const Placed& y = b.define(node.output(0));
  for (uint32_t d = 0; d < rank; ++d) {
    if (source.dims[d] != y.desc.dims[d]) {
      raise(where(node), ": the slice gives axis ", d, " extent ", source.dims[d], ", the model says ", y.desc.dims[d]);
    }
  }
  copy(b, source, x.buffer, y.desc, y.buffer);
}

void split(SegmentBuilder& b, const ir::Node& node) {
  const Placed& x = b.get(node.input(0));
  int64_t axis = node.attrs().get_int("axis", 0);
  if (axis < 0) axis += x.desc.rank;
  int64_t offset = 0;
  for (const ir::Value* output : node.outputs()) {
    if (output == nullptr || output->name().empty()) continue;
    const Placed& y = b.define(output);
    isa::TensorDesc window = x.desc;
    window.dims[axis] = y.desc.dims[axis];
    window.address = static_cast<uint32_t>(x.desc.address + offset * x.desc.strides[axis]);
    copy(b, window, x.buffer, y.desc, y.buffer);
    offset += y.desc.dims[axis];
  }
}

void clamp(SegmentBuilder& b, const ir::Node& node, bool relu) {
  const Placed& x = b.get(node.input(0));
  const Placed& y = b.define(node.output(0));
  isa::ClampInstruction in{};
  in.input = x.desc;
  in.output = y.desc;
  const bool int8 = x.desc.type == isa::ElementType::kInt8;
  int64_t lo = int8 ? -128 : -32768, hi = int8 ? 127 : 32767;
  if (relu) {
    lo = 0;
  } else {
    const std::vector<int64_t> mn = int_values(node, 1, "min");
    const std::vector<int64_t> mx = int_values(node, 2, "max");
    if (!mn.empty()) lo = std::max(lo, mn[0]);
    if (!mx.empty()) hi = std::min(hi, mx[0]);
  }
  in.lo = static_cast<int32_t>(lo);
  in.hi = static_cast<int32_t>(std::max(lo, hi));
  b.emit(isa::Opcode::kClamp, in, {x.buffer, y.buffer});
}

}  // namespace

bool lower_movement(SegmentBuilder& b, const ir::Node& node, const Lowering& lowering) {
  using bpu_support::LowerAs;
  switch (lowering.how) {
    case LowerAs::kReshape: reshape(b, node); return true;
    case LowerAs::kTranspose: transpose(b, node); return true;
    case LowerAs::kConcat: concat(b, node); return true;
    case LowerAs::kSlice: slice(b, node); return true;
    case LowerAs::kSplit: split(b, node); return true;
    case LowerAs::kClamp:
      clamp(b, node, lowering.def->activation == bpu_support::FusedActivation::kRelu);
      return true;
    default: return false;
  }
}

}  // namespace openbpu::compiler
