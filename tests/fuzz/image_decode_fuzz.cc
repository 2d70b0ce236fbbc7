// Fuzz target: image decoding (stb_image: jpg, png, bmp) as the tools use it. The
// toolchain's calibration and hb_eval_preprocess path (calibration::preprocess_image: decode,
// resize, place, colour-convert by a recipe) and the board tools' image inputs (tensor_io:
// read_image_input for an image input, read_source_image for a resizer input). The first bytes
// choose the path, the recipe or the input, and the file extension; the rest is the file.
// Files whose header claims more than a megapixel are only probed: decoding the largest picture
// the tools accept (tensor_io::kMaxImagePixels) and resizing it is bounded work, but takes
// minutes under the sanitizers and coverage, which the fuzzer would report as a timeout.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "dnn/hb_dnn.h"
#include "fuzz_support.h"
#include "openbpu/calibration/image_preprocess.h"
#include "openbpu/tensor_io/image_decode.h"
#include "openbpu/tensor_io/tensor_io.h"

namespace {

openbpu::calibration::ImageRecipe recipe_of(openbpu::fuzz::InputReader& in) {
  using namespace openbpu;
  static constexpr config::InputType kColours[] = {config::InputType::kRgb, config::InputType::kBgr,
                                                   config::InputType::kYuv444, config::InputType::kGray};
  calibration::ImageRecipe r;
  r.mode = static_cast<calibration::ResizeMode>(in.pick(4));
  r.height = 1 + static_cast<int64_t>(in.pick(24));
  r.width = 1 + static_cast<int64_t>(in.pick(24));
  r.short_side = 1 + static_cast<int64_t>(in.pick(32));
  r.pad = in.byte();
  r.colour = kColours[in.pick(4)];
  r.layout = in.byte() & 1 ? config::Layout::kNhwc : config::Layout::kNchw;
  return r;
}

// An image input of the board tools: (1, 3, H, W) / (1, H, W, 3), or (1, 1, H, W) for Y.
hbDNNTensorProperties image_input(openbpu::fuzz::InputReader& in) {
  static constexpr int32_t kTypes[] = {HB_DNN_IMG_TYPE_Y,      HB_DNN_IMG_TYPE_NV12, HB_DNN_IMG_TYPE_NV12_SEPARATE,
                                       HB_DNN_IMG_TYPE_YUV444, HB_DNN_IMG_TYPE_RGB,  HB_DNN_IMG_TYPE_BGR};
  hbDNNTensorProperties p{};
  p.tensorType = kTypes[in.pick(6)];
  p.tensorLayout = in.byte() & 1 ? HB_DNN_LAYOUT_NHWC : HB_DNN_LAYOUT_NCHW;
  const bool nhwc = p.tensorLayout == HB_DNN_LAYOUT_NHWC;
  const bool nv12 = p.tensorType == HB_DNN_IMG_TYPE_NV12 || p.tensorType == HB_DNN_IMG_TYPE_NV12_SEPARATE;
  const int32_t channels = p.tensorType == HB_DNN_IMG_TYPE_Y ? 1 : 3;
  const int32_t h = 2 * (1 + static_cast<int32_t>(in.pick(12))), w = 2 * (1 + static_cast<int32_t>(in.pick(12)));
  p.validShape.numDimensions = 4;
  p.validShape.dimensionSize[0] = 1;
  p.validShape.dimensionSize[nhwc ? 3 : 1] = channels;
  p.validShape.dimensionSize[nhwc ? 1 : 2] = h;
  p.validShape.dimensionSize[nhwc ? 2 : 3] = w;
  p.alignedShape = p.validShape;
  p.alignedByteSize = nv12 ? h * w * 3 / 2 : h * w * channels;
  return p;
}

}  // namespace

constexpr int64_t kMaxFuzzedPixels = 1024 * 1024;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static openbpu::fuzz::ScratchFile scratch;
  static const char* const kExtensions[] = {"jpg", "png", "bmp", "jpeg"};
  openbpu::fuzz::InputReader in(data, size);
  const size_t path = in.pick(3);
  const std::string ext = kExtensions[in.pick(4)];
  const openbpu::calibration::ImageRecipe recipe = recipe_of(in);
  const hbDNNTensorProperties input = image_input(in);
  const std::string_view bytes = in.rest();
  int height = 0, width = 0;
  if (openbpu::tensor_io::image_header_size(
          {reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, &height, &width) &&
      std::llabs(int64_t{height}) * std::llabs(int64_t{width}) > kMaxFuzzedPixels) {
    return 0;
  }
  const std::string file = scratch.write(bytes, ext);
  try {
    switch (path) {
      case 0: (void)openbpu::calibration::preprocess_image(file, recipe); break;
      case 1: (void)openbpu::tensor_io::read_image_input(file, input); break;
      default: (void)openbpu::tensor_io::read_source_image(file, input); break;
    }
  } catch (...) {
    openbpu::fuzz::reject_or_abort("image_decode");
  }
  return 0;
}
