// Fuzz target: the tensor file readers. hrt_model_exec's and hb_model_verifier's input files
// (tensor_io: .bin, .npy, .txt for an input of the given properties; a resizer input's source
// image as .npy; a ROI file) and the toolchain's .npy reader (calibration samples,
// hb_mapper infer inputs). The first bytes choose the reader and the input's properties as a
// verified model would give them (type, layout, shape); the rest is the file.
#include <cstdint>
#include <string_view>
#include <string>

#include "dnn/hb_dnn.h"
#include "fuzz_support.h"
#include "openbpu/common/npy.h"
#include "openbpu/tensor_io/tensor_io.h"

namespace {

// Properties of a model input: dense, validShape == alignedShape, NV12 / Y as (1, C, H, W)
// with an even H and W for NV12, alignedByteSize as the model file verifier requires.
hbDNNTensorProperties input_properties(openbpu::fuzz::InputReader& in) {
  hbDNNTensorProperties p{};
  p.tensorType = static_cast<int32_t>(in.pick(HB_DNN_TENSOR_TYPE_MAX));
  p.tensorLayout = in.byte() & 1 ? HB_DNN_LAYOUT_NHWC : HB_DNN_LAYOUT_NCHW;
  p.quantiType = NONE;
  const bool nv12 = p.tensorType == HB_DNN_IMG_TYPE_NV12 || p.tensorType == HB_DNN_IMG_TYPE_NV12_SEPARATE;
  hbDNNTensorShape& s = p.validShape;
  if (openbpu::tensor_io::is_image_type(p.tensorType)) {
    const int32_t channels = nv12 || p.tensorType == HB_DNN_IMG_TYPE_YUV444 || p.tensorType >= HB_DNN_IMG_TYPE_RGB ? 3 : 1;
    const int32_t h = 2 * (1 + static_cast<int32_t>(in.pick(8))), w = 2 * (1 + static_cast<int32_t>(in.pick(8)));
    s.numDimensions = 4;
    s.dimensionSize[0] = 1;
    const bool nhwc = p.tensorLayout == HB_DNN_LAYOUT_NHWC;
    s.dimensionSize[nhwc ? 3 : 1] = channels;
    s.dimensionSize[nhwc ? 1 : 2] = h;
    s.dimensionSize[nhwc ? 2 : 3] = w;
    p.alignedByteSize = nv12 ? h * w * 3 / 2 : h * w * channels;
  } else {
    s.numDimensions = 1 + static_cast<int32_t>(in.pick(4));
    int64_t count = 1;
    for (int32_t i = 0; i < s.numDimensions; ++i) count *= s.dimensionSize[i] = 1 + static_cast<int32_t>(in.pick(6));
    p.alignedByteSize = static_cast<int32_t>(count * static_cast<int64_t>(openbpu::tensor_io::element_size(p.tensorType)));
  }
  p.alignedShape = p.validShape;
  return p;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace io = openbpu::tensor_io;
  static openbpu::fuzz::ScratchFile scratch;
  openbpu::fuzz::InputReader in(data, size);
  const size_t reader = in.pick(6);
  const hbDNNTensorProperties p = input_properties(in);
  const std::string_view file = in.rest();
  try {
    switch (reader) {
      case 0: (void)io::read_input_file(scratch.write(file, "bin"), p); break;
      case 1: (void)io::read_input_file(scratch.write(file, "npy"), p); break;
      case 2: (void)io::read_input_file(scratch.write(file, "txt"), p); break;
      case 3: (void)io::read_source_image(scratch.write(file, "npy"), p); break;
      case 4: (void)io::read_roi_file(scratch.write(file, "txt")); break;
      default: (void)openbpu::parse_npy(file, "fuzz.npy"); break;
    }
  } catch (...) {
    openbpu::fuzz::reject_or_abort("tensor_files");
  }
  return 0;
}
