// conv3d_as_conv2d: a 3-D convolution (input [N, C, D, H, W], video and volumetric models)
// becomes the 2-D ones the BPU runs, one per depth tap, summed:
//   Pad D (when pads on D) → Transpose to [N, D, C, H, W] → for each tap k of the kernel's depth:
//   Slice the depths k·dd, k·dd + sd, … (one per output depth) → Reshape to [N·OD, C, H, W] →
//   Conv with weight W[:, :, k] (strides, pads, dilations of H and W; group; the bias on tap 0)
//   → Add the taps → Reshape [N, OD, M, OH, OW] → Transpose back, named as the output was.
// Each partial sum is a feature map of its own (the Adds fuse into the next tap's Conv as a
// residual). Must not fire: 2-D or 1-D ones, a weight that is not constant, an input of unknown
// shape, auto_pad SAME_*.
#include "graph_rewrite.h"
#include "pass_list.h"

namespace openbpu::passes {

namespace {

struct Geometry {
  int64_t n, c, d, h, w;  // input
  int64_t kd, sd, dd, pd0, pd1;
  int64_t od;
};

// [d, h, w] attribute values; `fallback` for each missing one.
std::vector<int64_t> triple(const ir::Node& node, const char* name, int64_t fallback, size_t count = 3) {
  std::vector<int64_t> v = node.attrs().get_ints(name, std::vector<int64_t>(count, fallback));
  return v.size() == count ? v : std::vector<int64_t>{};
}

std::vector<int64_t> drop_depth(const std::vector<int64_t>& v) {
  if (v.size() == 3) return {v[1], v[2]};
  return {v[1], v[2], v[4], v[5]};  // pads [d0, h0, w0, d1, h1, w1]
}

bool convert(GraphRewriter& rw, ir::Node* node) {
  if (!is_op(node, "Conv")) return false;
  ir::Value* x = node->input(0);
  ir::Value* y = node->output(0);
  const Tensor* w = constant_of(node->input(1));
  const auto xs = static_shape_of(x);
  const auto ys = static_shape_of(y);
  if (y == nullptr || w == nullptr || w->rank() != 5 || !xs || xs->size() != 5 || !ys || ys->size() != 5) return false;
  const std::string auto_pad = node->attrs().get_string("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID") return false;
  const std::vector<int64_t> strides = triple(*node, "strides", 1), dilations = triple(*node, "dilations", 1);
  const std::vector<int64_t> pads = auto_pad == "VALID" ? std::vector<int64_t>(6, 0) : triple(*node, "pads", 0, 6);
  if (strides.empty() || dilations.empty() || pads.empty()) return false;
  const Shape& s = *xs;
  Geometry g{s[0], s[1], s[2], s[3], s[4], w->dim(2), strides[0], dilations[0], pads[0], pads[3], (*ys)[2]};
  const int64_t m = w->dim(0);
  if (g.od != (g.d + g.pd0 + g.pd1 - g.dd * (g.kd - 1) - 1) / g.sd + 1 || g.od < 1) return false;
  const std::string base = y->name();
  auto typed = [&](Shape shape) { return ir::TensorType::of(x->type().dtype, std::move(shape)); };

  ir::Value* in = x;
  const int64_t depth = g.d + g.pd0 + g.pd1;
  if (g.pd0 != 0 || g.pd1 != 0) {
    ir::Value* p = rw.add_constant(base + ".depth_pads", int64_tensor({10}, {0, 0, g.pd0, 0, 0, 0, 0, g.pd1, 0, 0}));
    in = rw.add_node(node, "Pad", {in, p}, {base + ".depth_padded"}, {typed({g.n, g.c, depth, g.h, g.w})})->output(0);
  }
  kernels::AttributeMap perm;
  perm.set("perm", std::vector<int64_t>{0, 2, 1, 3, 4});
  in = rw.add_node(node, "Transpose", {in}, {base + ".depth_major"}, {typed({g.n, depth, g.c, g.h, g.w})}, perm)->output(0);

  kernels::AttributeMap attrs;
  attrs.set("strides", drop_depth(strides));
  attrs.set("dilations", drop_depth(dilations));
  attrs.set("pads", drop_depth(pads));
  attrs.set("group", node->attrs().get_int("group", 1));
  attrs.set("kernel_shape", std::vector<int64_t>{w->dim(3), w->dim(4)});
  const int64_t oh = (*ys)[3], ow = (*ys)[4];
  const Tensor w4 = w->reshaped({m, w->dim(1), g.kd, w->dim(3) * w->dim(4)});
  ir::Value* sum = nullptr;
  for (int64_t k = 0; k < g.kd; ++k) {
    const std::string tap = base + ".tap" + std::to_string(k);
    const int64_t start = k * g.dd, end = start + (g.od - 1) * g.sd + 1;
    ir::Value* slice =
        rw.add_node(node, "Slice",
                    {in, rw.add_constant(tap + ".starts", int64_tensor({1}, {start})),
                     rw.add_constant(tap + ".ends", int64_tensor({1}, {end})),
                     rw.add_constant(tap + ".axes", int64_tensor({1}, {1})),
                     rw.add_constant(tap + ".steps", int64_tensor({1}, {g.sd}))},
                    {tap + ".depths"}, {typed({g.n, g.od, g.c, g.h, g.w})})
            ->output(0);
    ir::Value* batch = rw.add_node(node, "Reshape", {slice, rw.add_constant(tap + ".shape", int64_tensor({4}, {g.n * g.od, g.c, g.h, g.w}))},
                                   {tap + ".batch"}, {typed({g.n * g.od, g.c, g.h, g.w})})
                           ->output(0);
    // W[:, :, k] as [M, C/g, KH, KW].
    Tensor wk(DataType::kFloat32, {m, w->dim(1), w->dim(3), w->dim(4)});
    const int64_t plane = w->dim(3) * w->dim(4);
    for (int64_t o = 0; o < m * w->dim(1); ++o) {
      for (int64_t i = 0; i < plane; ++i) {
        wk.data<float>()[o * plane + i] = static_cast<float>(w4.float_at((o * g.kd + k) * plane + i));
      }
    }
    std::vector<ir::Value*> inputs{batch, rw.add_constant(tap + ".weight", std::move(wk))};
    if (k == 0 && node->input(2) != nullptr) inputs.push_back(node->input(2));
    ir::Value* conv = rw.add_node(node, "Conv", inputs, {tap}, {typed({g.n * g.od, m, oh, ow})}, attrs)->output(0);
    sum = sum == nullptr ? conv
                         : rw.add_node(node, "Add", {sum, conv}, {tap + ".sum"}, {typed({g.n * g.od, m, oh, ow})})->output(0);
  }
  ir::Value* split = rw.add_node(node, "Reshape", {sum, rw.add_constant(base + ".shape5d", int64_tensor({5}, {g.n, g.od, m, oh, ow}))},
                                 {base + ".depth_major_out"}, {typed({g.n, g.od, m, oh, ow})})
                         ->output(0);
  ir::Node* back = rw.add_node(node, "Transpose", {split}, {base + ".out3d"}, {y->type()}, perm);
  if (!rw.replace_value(y, back->output(0), true)) {
    rw.erase_if_dead(back);
    return false;
  }
  rw.erase_if_dead(node);
  return true;
}

int run(PassContext& ctx) {
  GraphRewriter rw(*ctx.model.graph);
  return rw.sweep([&](ir::Node* node) { return convert(rw, node); });
}

}  // namespace

PassDef conv3d_as_conv2d_pass() {
  return {"conv3d_as_conv2d", "3-D Conv becomes one 2-D Conv per depth tap over [N·D, C, H, W], summed", {}, run};
}

}  // namespace openbpu::passes
