#include "conv_affine_folding.h"

namespace openbpu::passes {

std::optional<int64_t> foldable_conv_channels(const ir::Node& conv) {
  const bool transpose = is_op(&conv, "ConvTranspose");
  if (!is_op(&conv, "Conv") && !transpose) return std::nullopt;
  const Tensor* w = constant_of(conv.input(1));
  if (w == nullptr || w->dtype() != DataType::kFloat32 || w->rank() < 3) return std::nullopt;
  const ir::Value* b = conv.input(2);
  if (b != nullptr && !float32_values(b)) return std::nullopt;
  const int64_t group = conv.attrs().get_int("group", 1);
  const int64_t channels = transpose ? w->dim(1) * group : w->dim(0);
  if (b != nullptr && b->constant()->element_count() != channels) return std::nullopt;
  return channels;
}

void fold_affine_into_conv(GraphRewriter& rw, ir::Node* conv, const std::vector<float>& scale,
                           const std::vector<float>& shift) {
  const bool transpose = conv->op_type() == "ConvTranspose";
  const Tensor& w = *conv->input(1)->constant();
  const int64_t channels = static_cast<int64_t>(scale.size());
  const int64_t group = conv->attrs().get_int("group", 1);
  const auto src = w.values<float>();
  std::vector<float> weights(src.begin(), src.end());
  const int64_t kernel = w.element_count() / (w.dim(0) * w.dim(1));
  for (int64_t i = 0; i < w.element_count(); ++i) {
    int64_t channel = 0;
    if (transpose) {
      const int64_t c = i / (w.dim(1) * kernel);  // input channel
      const int64_t j = (i / kernel) % w.dim(1);  // output channel within the group
      const int64_t g = c / (w.dim(0) / group);
      channel = g * w.dim(1) + j;
    } else {
      channel = i / (w.element_count() / channels);
    }
    weights[static_cast<size_t>(i)] *= scale[static_cast<size_t>(channel)];
  }
  std::vector<float> bias(static_cast<size_t>(channels), 0.0f);
  if (const auto b = float32_values(conv->input(2))) bias = *b;
  for (size_t m = 0; m < bias.size(); ++m) bias[m] = bias[m] * scale[m] + shift[m];

  const std::string base = conv->output(0)->name();
  ir::Value* new_w = rw.add_constant(base + ".weight", float32_tensor(w.shape(), weights));
  ir::Value* new_b = rw.add_constant(base + ".bias", float32_tensor({channels}, bias));
  ir::Graph& g = rw.graph();
  g.set_node_input(conv, 1, new_w);
  if (conv->inputs().size() > 2) {
    g.set_node_input(conv, 2, new_b);
  } else {
    g.add_node_input(conv, new_b);
  }
}

std::optional<std::vector<float>> per_channel_values(const ir::Value* constant, int64_t rank,
                                                     int64_t channels, int64_t axis) {
  const auto values = float32_values(constant);
  if (!values || rank < 1 || axis < 0 || axis >= rank) return std::nullopt;
  const Tensor& t = *constant->constant();
  if (t.rank() > rank) return std::nullopt;
  bool varies_per_channel = false;
  for (int64_t i = 0; i < t.rank(); ++i) {
    const int64_t along = rank - t.rank() + i;  // the tensor axis this dim broadcasts over
    const int64_t d = t.dim(i);
    if (d == 1) continue;
    if (along != axis || d != channels) return std::nullopt;
    varies_per_channel = true;
  }
  if (!varies_per_channel)
    return std::vector<float>(static_cast<size_t>(channels), values->front());
  return values;
}

}  // namespace openbpu::passes
