#include "hbdnn_model.h"

#include <cmath>
#include <cstring>
#include <stdexcept>

#include "dnn/hb_sys.h"

namespace ocr {

namespace {

const char* type_name(int32_t type) {
  static const char* names[] = {
      "Y",   "NV12", "NV12_SEPARATE", "YUV444", "RGB", "BGR", "S4",  "U4",  "S8", "U8",
      "F16", "S16",  "U16",           "F32",    "S32", "U32", "F64", "S64", "U64"};
  return type >= 0 && type < HB_DNN_TENSOR_TYPE_MAX ? names[type] : "?";
}

bool is_image(int32_t type) {
  return type == HB_DNN_IMG_TYPE_Y || type == HB_DNN_IMG_TYPE_NV12 ||
         type == HB_DNN_IMG_TYPE_YUV444 || type == HB_DNN_IMG_TYPE_RGB ||
         type == HB_DNN_IMG_TYPE_BGR;
}

size_t featuremap_element_size(int32_t type) {
  switch (type) {
    case HB_DNN_TENSOR_TYPE_F32: return 4;
    case HB_DNN_TENSOR_TYPE_S16: return 2;
    case HB_DNN_TENSOR_TYPE_S8:
    case HB_DNN_TENSOR_TYPE_U8: return 1;
    default: return 0;
  }
}

std::string shape_text(const hbDNNTensorShape& s) {
  std::string t = "(";
  for (int32_t i = 0; i < s.numDimensions; ++i)
    t += (i ? "," : "") + std::to_string(s.dimensionSize[i]);
  return t + ")";
}

uint8_t to_byte(double v) {
  const double r = std::floor(v + 0.5);
  return static_cast<uint8_t>(r < 0 ? 0 : r > 255 ? 255 : r);
}

// The image's bytes as an image input of type `type` (dense: NV12 = Y plane, then U, V per
// 2x2 block; others planar for NCHW, interleaved for NHWC).
void write_image(const Image& image, int32_t type, bool nhwc, uint8_t* out) {
  const size_t plane = static_cast<size_t>(image.width) * static_cast<size_t>(image.height);
  std::vector<uint8_t> px(plane * 3);  // the three channels of the input type, interleaved
  for (size_t i = 0; i < plane; ++i) {
    const double r = image.rgb[3 * i], g = image.rgb[3 * i + 1], b = image.rgb[3 * i + 2];
    if (type == HB_DNN_IMG_TYPE_RGB || type == HB_DNN_IMG_TYPE_BGR) {
      const bool bgr = type == HB_DNN_IMG_TYPE_BGR;
      px[3 * i] = image.rgb[3 * i + (bgr ? 2 : 0)];
      px[3 * i + 1] = image.rgb[3 * i + 1];
      px[3 * i + 2] = image.rgb[3 * i + (bgr ? 0 : 2)];
    } else {
      px[3 * i] = to_byte(0.299 * r + 0.587 * g + 0.114 * b);
      px[3 * i + 1] = to_byte(-0.168736 * r - 0.331264 * g + 0.5 * b + 128);
      px[3 * i + 2] = to_byte(0.5 * r - 0.418688 * g - 0.081312 * b + 128);
    }
  }
  if (type == HB_DNN_IMG_TYPE_Y || type == HB_DNN_IMG_TYPE_NV12) {
    for (size_t i = 0; i < plane; ++i) *out++ = px[3 * i];
    if (type == HB_DNN_IMG_TYPE_Y) return;
    const size_t w = static_cast<size_t>(image.width);
    for (size_t y = 0; y < static_cast<size_t>(image.height); y += 2) {
      for (size_t x = 0; x < w; x += 2) {
        for (size_t c = 1; c <= 2; ++c) {
          const size_t at = y * w + x;
          const int sum = px[3 * at + c] + px[3 * (at + 1) + c] + px[3 * (at + w) + c] +
                          px[3 * (at + w + 1) + c];
          *out++ = static_cast<uint8_t>((sum + 2) / 4);
        }
      }
    }
    return;
  }
  for (size_t i = 0; i < plane; ++i) {
    for (size_t c = 0; c < 3; ++c) out[nhwc ? i * 3 + c : c * plane + i] = px[3 * i + c];
  }
}

// Element `index` (row-major over validShape) of an output, read through its stride and
// dequantized.
float output_value(const hbDNNTensor& t, size_t index) {
  const hbDNNTensorProperties& p = t.properties;
  size_t offset = 0, rest = index;
  int32_t channel = 0;
  for (int32_t d = p.validShape.numDimensions - 1; d >= 0; --d) {
    const size_t i = rest % static_cast<size_t>(p.validShape.dimensionSize[d]);
    rest /= static_cast<size_t>(p.validShape.dimensionSize[d]);
    offset += i * static_cast<size_t>(p.stride[d]);
    if (d == p.quantizeAxis) channel = static_cast<int32_t>(i);
  }
  const uint8_t* at = static_cast<const uint8_t*>(t.sysMem[0].virAddr) + offset;
  double q = 0;
  switch (p.tensorType) {
    case HB_DNN_TENSOR_TYPE_F32: {
      float v;
      std::memcpy(&v, at, 4);
      return v;
    }
    case HB_DNN_TENSOR_TYPE_S8: q = *reinterpret_cast<const int8_t*>(at); break;
    case HB_DNN_TENSOR_TYPE_U8: q = *at; break;
    case HB_DNN_TENSOR_TYPE_S16: {
      int16_t v;
      std::memcpy(&v, at, 2);
      q = v;
      break;
    }
    case HB_DNN_TENSOR_TYPE_S32: {
      int32_t v;
      std::memcpy(&v, at, 4);
      q = v;
      break;
    }
    default: return NAN;  // rejected when the model is loaded
  }
  if (p.quantiType == SCALE && p.scale.scaleLen > 0) {
    const int32_t i = p.scale.scaleLen > 1 ? channel : 0;
    const double zero = p.scale.zeroPointLen > i ? p.scale.zeroPointData[i] : 0;
    return static_cast<float>((q - zero) * p.scale.scaleData[i]);
  }
  if (p.quantiType == SHIFT && p.shift.shiftLen > 0) {
    const int32_t s = p.shift.shiftData[p.shift.shiftLen > 1 ? channel : 0];
    return static_cast<float>(q / static_cast<double>(1ULL << s));
  }
  return static_cast<float>(q);
}

}  // namespace

void HbdnnModel::check(int32_t status, const char* call) const {
  if (status != 0) {
    throw std::runtime_error(std::string(call) + " failed for " + role_ + " model '" + path_ +
                             "': " + hbDNNGetErrorDesc(status) + " (" + std::to_string(status) +
                             ")");
  }
}

HbdnnModel::HbdnnModel(const std::string& path, const std::string& role)
    : path_(path), role_(role) {
  try {
    load();
  } catch (...) {
    release();
    throw;
  }
}

void HbdnnModel::load() {
  const char* file = path_.c_str();
  check(hbDNNInitializeFromFiles(&packed_, &file, 1), "hbDNNInitializeFromFiles");
  const char** names = nullptr;
  int32_t count = 0;
  check(hbDNNGetModelNameList(&names, &count, packed_), "hbDNNGetModelNameList");
  check(hbDNNGetModelHandle(&model_, packed_, names[0]), "hbDNNGetModelHandle");
  model_name_ = names[0];
  int32_t inputs = 0, outputs = 0, source = 0;
  check(hbDNNGetInputCount(&inputs, model_), "hbDNNGetInputCount");
  check(hbDNNGetOutputCount(&outputs, model_), "hbDNNGetOutputCount");
  check(hbDNNGetInputSource(&source, model_, 0), "hbDNNGetInputSource");
  check(hbDNNGetInputTensorProperties(&input_.properties, model_, 0),
        "hbDNNGetInputTensorProperties");
  const hbDNNTensorProperties& p = input_.properties;
  const std::string what = role_ + " model '" + path_ + "'";
  if (inputs != 1)
    throw std::runtime_error(what + " has " + std::to_string(inputs) + " inputs; one expected");
  if (source == HB_DNN_INPUT_FROM_RESIZER) {
    throw std::runtime_error(what +
                             " takes its input from the resizer (hbDNNRoiInfer); convert it with a "
                             "DDR or pyramid input");
  }
  if (!is_image(p.tensorType) && featuremap_element_size(p.tensorType) == 0) {
    throw std::runtime_error(what + ": input type " + type_name(p.tensorType) +
                             " is not supported");
  }
  if (featuremap_element_size(p.tensorType) && p.tensorType != HB_DNN_TENSOR_TYPE_F32 &&
      !(p.quantiType == SCALE && p.scale.scaleLen == 1)) {
    throw std::runtime_error(what + ": a quantized featuremap input needs one SCALE parameter");
  }
  if (p.validShape.numDimensions != 4) {
    throw std::runtime_error(what + ": the input's validShape " + shape_text(p.validShape) +
                             " is not 4-D");
  }
  nhwc_ = p.tensorLayout == HB_DNN_LAYOUT_NHWC;
  height_ = p.validShape.dimensionSize[nhwc_ ? 1 : 2];
  width_ = p.validShape.dimensionSize[nhwc_ ? 2 : 3];
  if (p.validShape.dimensionSize[0] != 1 || p.validShape.dimensionSize[nhwc_ ? 3 : 1] != 3 ||
      height_ <= 0 || width_ <= 0 ||
      (p.tensorType == HB_DNN_IMG_TYPE_NV12 && (height_ % 2 || width_ % 2))) {
    throw std::runtime_error(what + ": the input's validShape " + shape_text(p.validShape) +
                             " is not one 3-channel image (even-sized for NV12)");
  }
  check(hbSysAllocCachedMem(&input_.sysMem[0], static_cast<uint32_t>(p.alignedByteSize)),
        "hbSysAllocCachedMem");
  outputs_.resize(static_cast<size_t>(outputs));
  for (int32_t i = 0; i < outputs; ++i) {
    hbDNNTensor& o = outputs_[static_cast<size_t>(i)];
    check(hbDNNGetOutputTensorProperties(&o.properties, model_, i),
          "hbDNNGetOutputTensorProperties");
    check(hbSysAllocCachedMem(&o.sysMem[0], static_cast<uint32_t>(o.properties.alignedByteSize)),
          "hbSysAllocCachedMem");
  }
  const int32_t out_type = outputs_.at(0).properties.tensorType;
  if (out_type != HB_DNN_TENSOR_TYPE_F32 && out_type != HB_DNN_TENSOR_TYPE_S8 &&
      out_type != HB_DNN_TENSOR_TYPE_U8 && out_type != HB_DNN_TENSOR_TYPE_S16 &&
      out_type != HB_DNN_TENSOR_TYPE_S32) {
    throw std::runtime_error(what + ": output type " + type_name(out_type) + " is not supported");
  }
}

HbdnnModel::~HbdnnModel() {
  release();
}

void HbdnnModel::release() {
  if (input_.sysMem[0].virAddr) hbSysFreeMem(&input_.sysMem[0]);
  for (hbDNNTensor& o : outputs_) {
    if (o.sysMem[0].virAddr) hbSysFreeMem(&o.sysMem[0]);
  }
  if (packed_) hbDNNRelease(packed_);
  input_ = hbDNNTensor{};
  outputs_.clear();
  packed_ = nullptr;
}

void HbdnnModel::fill_input(const ModelInput& input) {
  hbDNNTensorProperties& p = input_.properties;
  auto* dest = static_cast<uint8_t*>(input_.sysMem[0].virAddr);
  if (is_image(p.tensorType)) {
    write_image(input.image, p.tensorType, nhwc_, dest);
  } else {
    const std::vector<float> chw = input.to_float_chw();
    const size_t plane = static_cast<size_t>(height_) * static_cast<size_t>(width_);
    const size_t size = featuremap_element_size(p.tensorType);
    const double scale = p.tensorType == HB_DNN_TENSOR_TYPE_F32 ? 1 : p.scale.scaleData[0];
    const double zero = p.scale.zeroPointLen > 0 ? p.scale.zeroPointData[0] : 0;
    for (size_t c = 0; c < 3; ++c) {
      for (size_t i = 0; i < plane; ++i) {
        const float v = chw[c * plane + i];
        uint8_t* at = dest + (nhwc_ ? i * 3 + c : c * plane + i) * size;
        if (p.tensorType == HB_DNN_TENSOR_TYPE_F32) {
          std::memcpy(at, &v, 4);
          continue;
        }
        const double lo = p.tensorType == HB_DNN_TENSOR_TYPE_S8   ? -128
                          : p.tensorType == HB_DNN_TENSOR_TYPE_U8 ? 0
                                                                  : -32768;
        const double hi = p.tensorType == HB_DNN_TENSOR_TYPE_S8   ? 127
                          : p.tensorType == HB_DNN_TENSOR_TYPE_U8 ? 255
                                                                  : 32767;
        const double q = std::min(std::max(std::nearbyint(v / scale) + zero, lo), hi);
        if (size == 1) {
          *at = static_cast<uint8_t>(static_cast<int>(q));
        } else {
          const auto s = static_cast<int16_t>(q);
          std::memcpy(at, &s, 2);
        }
      }
    }
  }
  p.alignedShape = p.validShape;  // dense data: the runtime pads it to the model's alignment
}

std::vector<float> HbdnnModel::run(const ModelInput& input, std::vector<long>& shape) {
  fill_input(input);
  check(hbSysFlushMem(&input_.sysMem[0], HB_SYS_MEM_CACHE_CLEAN), "hbSysFlushMem");
  hbDNNInferCtrlParam control;
  HB_DNN_INITIALIZE_INFER_CTRL_PARAM(&control);
  hbDNNTaskHandle_t task = nullptr;
  hbDNNTensor* outputs = outputs_.data();
  check(hbDNNInfer(&task, &outputs, &input_, model_, &control), "hbDNNInfer");
  const int32_t waited = hbDNNWaitTaskDone(task, 0);
  const int32_t released = hbDNNReleaseTask(task);
  check(waited, "hbDNNWaitTaskDone");
  check(released, "hbDNNReleaseTask");
  for (hbDNNTensor& o : outputs_)
    check(hbSysFlushMem(&o.sysMem[0], HB_SYS_MEM_CACHE_INVALIDATE), "hbSysFlushMem");
  const hbDNNTensorProperties& p = outputs_[0].properties;
  shape.assign(p.validShape.dimensionSize, p.validShape.dimensionSize + p.validShape.numDimensions);
  size_t count = 1;
  for (long d : shape) count *= static_cast<size_t>(d);
  std::vector<float> values(count);
  for (size_t i = 0; i < count; ++i) values[i] = output_value(outputs_[0], i);
  return values;
}

std::string HbdnnModel::describe() const {
  static const char* quanti[] = {"NONE", "SHIFT", "SCALE"};
  const auto line = [](const char* side, const hbDNNTensorProperties& p) {
    return std::string(side) + " " + type_name(p.tensorType) + " " +
           (p.tensorLayout == HB_DNN_LAYOUT_NHWC   ? "NHWC"
            : p.tensorLayout == HB_DNN_LAYOUT_NCHW ? "NCHW"
                                                   : "NONE") +
           " validShape " + shape_text(p.validShape) + " alignedShape " +
           shape_text(p.alignedShape) + " quantiType " +
           (p.quantiType >= NONE && p.quantiType <= SCALE ? quanti[p.quantiType] : "?");
  };
  return role_ + ": " + model_name_ + " ('" + path_ + "')\n  " + line("input", input_.properties) +
         "\n  " + line("output", outputs_.at(0).properties);
}

}  // namespace ocr
