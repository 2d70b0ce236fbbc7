// Folding a per-output-channel affine map y·s + t into the weights and bias of the Conv or
// ConvTranspose that produces y (shared by fuse_conv_affine and fuse_batchnorm).
#pragma once

#include <optional>
#include <vector>

#include "graph_rewrite.h"

namespace openbpu::passes {

// The number of output channels of a Conv/ConvTranspose with a constant float32 weight and a
// constant float32 bias or none; nullopt if the node is not such a node.
std::optional<int64_t> foldable_conv_channels(const ir::Node& conv);

// Replaces the node's weight by W·s (per output channel) and its bias by b·s + t (new
// constants; the old ones may be shared). `scale` and `shift` hold one value per output channel.
void fold_affine_into_conv(GraphRewriter& rw, ir::Node* conv, const std::vector<float>& scale,
                           const std::vector<float>& shift);

// A float32 constant that broadcasts over a rank-`rank` tensor varying at most along `axis`
// (size `channels`), e.g. [], [1], [C], [1,C,1,1], [C,1,1] for axis 1 of an NCHW tensor: its
// values expanded to one per channel; nullopt if it varies along another axis or would
// enlarge the tensor.
std::optional<std::vector<float>> per_channel_values(const ir::Value* constant, int64_t rank,
                                                     int64_t channels, int64_t axis = 1);

}  // namespace openbpu::passes
