// Functional unit kPreprocess (isa.h, PreprocessInstruction): an NV12 or packed image to the
// model's int8 *_128 input.
#include "access.h"
#include "units.h"

namespace openbpu::simulator::functional {

namespace {

void packed(const isa::PreprocessInstruction& in, uint8_t* m) {
  const Walk<2> w = make_walk<2>({&in.source, &in.output}, 1);
  const int64_t n = w.dims[w.rank - 1];
  const int64_t is = w.strides[0][w.rank - 1], io = w.strides[1][w.rank - 1];
  for_each_row(w, {int64_t{in.source.address}, int64_t{in.output.address}}, [&](const std::array<int64_t, 2>& o) {
    for (int64_t i = 0; i < n; ++i) {
      m[o[1] + i * io] = static_cast<uint8_t>(static_cast<int8_t>(m[o[0] + i * is] - 128));
    }
  });
}

}  // namespace

void preprocess(const isa::PreprocessInstruction& in, Memory memory) {
  if (in.format == isa::ImageFormat::kPacked) return packed(in, memory.data());
  const isa::TensorDesc& s = in.source;
  const isa::TensorDesc& y = in.output;
  const int64_t N = y.dims[0], H = y.dims[2], W = y.dims[3];
  uint8_t* m = memory.data();
  for (int64_t n = 0; n < N; ++n) {
    const int64_t image = int64_t{s.address} + n * s.strides[0];
    for (int64_t h = 0; h < H; ++h) {
      const int64_t luma = image + h * s.strides[1];
      const int64_t chroma = image + (H + h / 2) * s.strides[1];
      for (int64_t w = 0; w < W; ++w) {
        const int64_t out = int64_t{y.address} + n * y.strides[0] + h * y.strides[2] + w * y.strides[3];
        const int64_t uv = chroma + (2 * (w / 2)) * s.strides[2];
        m[out] = static_cast<uint8_t>(static_cast<int8_t>(m[luma + w * s.strides[2]] - 128));
        m[out + y.strides[1]] = static_cast<uint8_t>(static_cast<int8_t>(m[uv] - 128));
        m[out + 2 * y.strides[1]] = static_cast<uint8_t>(static_cast<int8_t>(m[uv + s.strides[2]] - 128));
      }
    }
  }
}

}  // namespace openbpu::simulator::functional
