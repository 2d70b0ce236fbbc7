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

// Pad (mode constant, value 0: the op-support rules): the output filled with 0, then the input
// copied into its window. Negative pads crop the input.
void pad(SegmentBuilder& b, const ir::Node& node) {
  const Placed& x = b.get(node.input(0));
  const uint32_t rank = x.desc.rank;
  const std::vector<int64_t> pads =
      node.attrs().has("pads") ? node.attrs().get_ints("pads") : int_values(node, 1, "pads");
  if (pads.size() != 2 * size_t{rank}) raise(where(node), ": pads has ", pads.size(), " entries for rank ", rank);
  const Placed& y = b.define(node.output(0));
  isa::TensorDesc source = x.desc, window = y.desc;
  bool grows = false;
  for (uint32_t d = 0; d < rank; ++d) {
    const int64_t begin = pads[d], end = pads[d + rank];
    grows = grows || begin > 0 || end > 0;
    const int64_t extent = int64_t{x.desc.dims[d]} - std::max<int64_t>(0, -begin) - std::max<int64_t>(0, -end);
    if (extent <= 0 || extent + std::max<int64_t>(0, begin) + std::max<int64_t>(0, end) != y.desc.dims[d]) {
      raise(where(node), ": pads ", begin, " and ", end, " on axis ", d, " do not give the output's extent ", y.desc.dims[d]);
    }
    source.address = static_cast<uint32_t>(source.address + std::max<int64_t>(0, -begin) * x.desc.strides[d]);
    window.address = static_cast<uint32_t>(window.address + std::max<int64_t>(0, begin) * y.desc.strides[d]);
    source.dims[d] = window.dims[d] = static_cast<uint32_t>(extent);
  }
  if (grows) b.emit(isa::Opcode::kFill, isa::FillInstruction{y.desc, 0}, {y.buffer});
  copy(b, source, x.buffer, window, y.buffer);
}

// DepthToSpace / SpaceToDepth with block b: one copy through 6-D views [N, C', H', b, W', b] of
// both tensors, where C' is the channels and H', W' the rows and columns of the deeper tensor's
// blocks (docs/quantized_ops.md). `deep` is the tensor with C'·b² channels, `wide` the one with
// H'·b rows.
//   DCR (DepthToSpace default, SpaceToDepth): deep channel (i·b + j)·C' + c
//   CRD (DepthToSpace mode CRD):              deep channel c·b² + i·b + j
isa::TensorDesc block_view(const isa::TensorDesc& t, bool deep, uint32_t block, bool crd) {
  isa::TensorDesc v = t;
  v.rank = 6;
  const int32_t sn = t.strides[0], sc = t.strides[1], sh = t.strides[2], sw = t.strides[3];
  const uint32_t n = t.dims[0];
  if (deep) {
    const uint32_t c = t.dims[1] / (block * block);
    const int32_t b = static_cast<int32_t>(block), cs = static_cast<int32_t>(c);
    const uint32_t dims[6] = {n, c, t.dims[2], block, t.dims[3], block};
    const int32_t strides[6] = {sn, crd ? sc * b * b : sc, sh, crd ? sc * b : sc * b * cs, sw, crd ? sc : sc * cs};
    std::copy(dims, dims + 6, v.dims);
    std::copy(strides, strides + 6, v.strides);
  } else {
    const int32_t b = static_cast<int32_t>(block);
    const uint32_t dims[6] = {n, t.dims[1], t.dims[2] / block, block, t.dims[3] / block, block};
    const int32_t strides[6] = {sn, sc, sh * b, sh, sw * b, sw};
    std::copy(dims, dims + 6, v.dims);
    std::copy(strides, strides + 6, v.strides);
  }
  return v;
}

void depth_space(SegmentBuilder& b, const ir::Node& node, bool to_space) {
  const Placed& x = b.get(node.input(0));
  const Placed& y = b.define(node.output(0));
  const int64_t block = node.attrs().get_int("blocksize");
  const bool crd = to_space && node.attrs().get_string("mode", "DCR") == "CRD";
  const isa::TensorDesc& deep = to_space ? x.desc : y.desc;
  const isa::TensorDesc& wide = to_space ? y.desc : x.desc;
  if (x.desc.rank != 4 || y.desc.rank != 4 || block < 1 || deep.dims[1] % (block * block) != 0 ||
      wide.dims[2] != deep.dims[2] * block || wide.dims[3] != deep.dims[3] * block ||
      wide.dims[1] * block * block != deep.dims[1]) {
    raise(where(node), ": blocksize ", block, " does not map ", kernels::shape_to_string(b.info(node.input(0)).shape),
          " onto ", kernels::shape_to_string(b.info(node.output(0)).shape));
  }
  const uint32_t bs = static_cast<uint32_t>(block);
  const isa::TensorDesc deep_view = block_view(deep, true, bs, crd), wide_view = block_view(wide, false, bs, crd);
  if (to_space) {
    copy(b, deep_view, x.buffer, wide_view, y.buffer);
  } else {
    copy(b, wide_view, x.buffer, deep_view, y.buffer);
  }
}

// Gather with constant indices: one copy per run of consecutive indices (rank-1 indices), else
// one per index, of the input's slice into the output's window.
void gather(SegmentBuilder& b, const ir::Node& node) {
  const Placed& x = b.get(node.input(0));
  const Placed& y = b.define(node.output(0));
  const uint32_t rank = x.desc.rank;
  int64_t axis = node.attrs().get_int("axis", 0);
  if (axis < 0) axis += rank;
  const ir::Value* iv = node.input(1);
  if (iv == nullptr || iv->constant() == nullptr) raise(where(node), ": indices must be a constant on the BPU");
  const std::vector<int64_t> indices = iv->constant()->to_int64_vector();
  const kernels::Shape& ishape = iv->constant()->shape();
  const uint32_t q = static_cast<uint32_t>(ishape.size());
  if (axis < 0 || axis >= int64_t{rank} || y.desc.rank != rank - 1 + q) {
    raise(where(node), ": axis ", axis, " and indices of rank ", q, " do not give the output's rank ", y.desc.rank);
  }
  const uint32_t a = static_cast<uint32_t>(axis);
  // The output window of one index: y without the index axes, a unit axis in their place.
  isa::TensorDesc window = x.desc;
  for (uint32_t d = 0; d < rank; ++d) {
    const uint32_t from = d < a ? d : d + q - 1;
    window.dims[d] = d == a ? 1 : y.desc.dims[from];
    window.strides[d] = d == a ? (q == 1 ? y.desc.strides[a] : 0) : y.desc.strides[from];
  }
  const int64_t dim = x.desc.dims[a];
  for (size_t k = 0; k < indices.size();) {
    const int64_t first = indices[k] < 0 ? indices[k] + dim : indices[k];
    if (first < 0 || first >= dim) raise(where(node), ": index ", indices[k], " is outside axis ", a, " of extent ", dim);
    size_t run = 1;
    while (q == 1 && k + run < indices.size() && (indices[k + run] < 0 ? indices[k + run] + dim : indices[k + run]) == first + int64_t(run)) ++run;
    int64_t offset = 0;  // the window's position in y: k as a multi-index over the index axes
    for (uint32_t i = q, rest = static_cast<uint32_t>(k); i-- > 0;) {
      offset += int64_t{rest % static_cast<uint32_t>(ishape[i])} * y.desc.strides[a + i];
      rest /= static_cast<uint32_t>(ishape[i]);
    }
    isa::TensorDesc source = x.desc, destination = window;
    source.address = static_cast<uint32_t>(x.desc.address + first * x.desc.strides[a]);
    source.dims[a] = destination.dims[a] = static_cast<uint32_t>(run);
    destination.address = static_cast<uint32_t>(y.desc.address + offset);
    copy(b, source, x.buffer, destination, y.buffer);
    k += run;
  }
}

// Expand: one copy from a view of the input with the output's dims, stride 0 along the axes it
// broadcasts (and the leading axes it adds).
void expand(SegmentBuilder& b, const ir::Node& node) {
  const Placed& x = b.get(node.input(0));
  const Placed& y = b.define(node.output(0));
  const uint32_t rank = y.desc.rank, lead = rank - x.desc.rank;
  if (x.desc.rank > rank) raise(where(node), ": the shape has fewer axes than the input");
  isa::TensorDesc source = y.desc;
  source.address = x.desc.address;
  source.type = x.desc.type;
  for (uint32_t d = 0; d < rank; ++d) {
    const bool added = d < lead;
    const uint32_t from = added ? 0 : x.desc.dims[d - lead];
    if (!added && from != y.desc.dims[d] && from != 1) {
      raise(where(node), ": axis ", d, " of extent ", from, " does not broadcast to ", y.desc.dims[d]);
    }
    source.strides[d] = added || (from == 1 && y.desc.dims[d] != 1) ? 0 : x.desc.strides[d - lead];
  }
  copy(b, source, x.buffer, y.desc, y.buffer);
}

// Tile: one copy through views with a (repeat, extent) pair of axes for each repeated axis; the
// input is read with stride 0 along the repeat axes.
void tile(SegmentBuilder& b, const ir::Node& node) {
  const Placed& x = b.get(node.input(0));
  const Placed& y = b.define(node.output(0));
  const std::vector<int64_t> repeats = int_values(node, 1, "repeats");
  const uint32_t rank = x.desc.rank;
  if (repeats.size() != rank) raise(where(node), ": repeats has ", repeats.size(), " entries for rank ", rank);
  isa::TensorDesc source = x.desc, destination = y.desc;
  uint32_t k = 0;
  for (uint32_t d = 0; d < rank; ++d) {
    if (y.desc.dims[d] != x.desc.dims[d] * repeats[d]) raise(where(node), ": axis ", d, " does not tile to the output");
    if (repeats[d] > 1) {
      if (k + 2 > isa::kMaxRank) raise(where(node), ": more than ", isa::kMaxRank, " axes with the repeats");
      source.dims[k] = destination.dims[k] = static_cast<uint32_t>(repeats[d]);
      source.strides[k] = 0;
      destination.strides[k] = static_cast<int32_t>(y.desc.strides[d] * int64_t{x.desc.dims[d]});
      ++k;
    }
    if (k + 1 > isa::kMaxRank) raise(where(node), ": more than ", isa::kMaxRank, " axes with the repeats");
    source.dims[k] = destination.dims[k] = x.desc.dims[d];
    source.strides[k] = x.desc.strides[d];
    destination.strides[k] = y.desc.strides[d];
    ++k;
  }
  source.rank = destination.rank = k;
  copy(b, source, x.buffer, destination, y.buffer);
}

// GatherElements with constant indices: one kGatherElements reading them as an int32 table
// (negative indices counted from the end).
void gather_elements(SegmentBuilder& b, const ir::Node& node) {
  const Placed& x = b.get(node.input(0));
  const Placed& y = b.define(node.output(0));
  const uint32_t rank = x.desc.rank;
  int64_t axis = node.attrs().get_int("axis", 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= int64_t{rank}) raise(where(node), ": axis ", node.attrs().get_int("axis", 0), " is outside rank ", rank);
  const std::vector<int64_t> indices = int_values(node, 1, "indices");
  const int64_t dim = x.desc.dims[axis];
  std::vector<int32_t> table;
  table.reserve(indices.size());
  for (int64_t i : indices) {
    const int64_t at = i < 0 ? i + dim : i;
    if (at < 0 || at >= dim) raise(where(node), ": index ", i, " is outside axis ", axis, " of extent ", dim);
    table.push_back(static_cast<int32_t>(at));
  }
  isa::GatherElementsInstruction in{};
  in.input = x.desc;
  in.output = y.desc;
  in.axis = static_cast<uint32_t>(axis);
  in.table = b.constant_words(table);
  b.emit(isa::Opcode::kGatherElements, in, {x.buffer, y.buffer});
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
    case LowerAs::kPad: pad(b, node); return true;
    case LowerAs::kDepthToSpace: depth_space(b, node, true); return true;
    case LowerAs::kSpaceToDepth: depth_space(b, node, false); return true;
    case LowerAs::kGather: gather(b, node); return true;
    case LowerAs::kExpand: expand(b, node); return true;
    case LowerAs::kTile: tile(b, node); return true;
    case LowerAs::kGatherElements: gather_elements(b, node); return true;
    case LowerAs::kClamp:
      clamp(b, node, lowering.def->activation == bpu_support::FusedActivation::kRelu);
      return true;
    default: return false;
  }
}

}  // namespace openbpu::compiler
