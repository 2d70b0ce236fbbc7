// hb_eval_preprocess's model names (image_preprocess.h: named_recipes). Each row: how that model
// family's evaluation pipeline prepares an image, as the model was trained to see it.
#include "openbpu/calibration/image_preprocess.h"

namespace openbpu::calibration {

namespace {

using config::InputType;
using config::Layout;

constexpr InputType kRgb = InputType::kRgb, kBgr = InputType::kBgr;
constexpr Layout kNchw = Layout::kNchw, kNhwc = Layout::kNhwc;

ImageRecipe recipe(ResizeMode mode, int64_t h, int64_t w, int64_t short_side, uint8_t pad,
                   InputType colour, Layout layout) {
  return {mode, h, w, short_side, pad, colour, layout};
}

}  // namespace

const std::vector<NamedRecipe>& named_recipes() {
  using M = ResizeMode;
  // clang-format off
  static const std::vector<NamedRecipe> recipes = {
    // ImageNet classifiers: short side 256, centre 224 x 224 (Caffe-trained MobileNets read BGR).
    {"mobilenetv1",        "classification", recipe(M::kShortSideCrop, 224, 224, 256, 0, kBgr, kNchw)},
    {"mobilenetv2",        "classification", recipe(M::kShortSideCrop, 224, 224, 256, 0, kBgr, kNchw)},
    {"mobilenetv3",        "classification", recipe(M::kShortSideCrop, 224, 224, 256, 0, kRgb, kNchw)},
    {"resnet18",           "classification", recipe(M::kShortSideCrop, 224, 224, 256, 0, kRgb, kNchw)},
    {"resnet50",           "classification", recipe(M::kShortSideCrop, 224, 224, 256, 0, kRgb, kNchw)},
    {"efficientnet_lite0", "classification", recipe(M::kShortSideCrop, 224, 224, 256, 0, kRgb, kNhwc)},
    {"vit_tiny",           "classification", recipe(M::kShortSideCrop, 224, 224, 256, 0, kRgb, kNchw)},
    // Detectors: letterboxed into 640 x 640 on grey 114, as the YOLO repositories evaluate.
    {"yolov5s",            "detection",      recipe(M::kLetterbox, 640, 640, 0, 114, kRgb, kNchw)},
    {"yolov8n",            "detection",      recipe(M::kLetterbox, 640, 640, 0, 114, kRgb, kNchw)},
    // Segmentation: the whole image to 512 x 512.
    {"unet",               "segmentation",   recipe(M::kStretch, 512, 512, 0, 0, kRgb, kNchw)},
    // PP-OCR (PaddleOCR reads BGR): det the page to the sample's 704 x 960; rec and cls the text
    // line to height 48 with its aspect kept, padded on the right (320 / 192 wide).
    {"ppocr_det",          "ocr",            recipe(M::kStretch, 704, 960, 0, 0, kBgr, kNchw)},
    {"ppocr_rec",          "ocr",            recipe(M::kHeightPadRight, 48, 320, 0, 0, kBgr, kNchw)},
    {"ppocr_cls",          "ocr",            recipe(M::kHeightPadRight, 48, 192, 0, 0, kBgr, kNchw)},
  };
  // clang-format on
  return recipes;
}

const NamedRecipe* find_recipe(std::string_view name) {
  for (const NamedRecipe& r : named_recipes()) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

}  // namespace openbpu::calibration
