// A PP-OCR .bin model run through the hbDNN C API (dnn/hb_dnn.h): loaded once, its input and
// output tensors allocated once (hbSysAllocCachedMem) and reused by every inference.
//
// Input 0 is fed what its properties ask for (hbDNNGetInputTensorProperties): a featuremap
// (F32, or S8 / U8 / S16 quantized with a per-tensor SCALE) gets PaddleOCR's normalised float
// tensor, NCHW or NHWC; an image input (NV12, Y, YUV444, RGB, BGR; from DDR or pyramid) gets
// the resized image's bytes, converted as the toolchain's HzPreprocess expects them (BT.601
// full-range YUV; NV12's U, V the rounded mean of each 2x2 block), and the model itself
// normalises. Output 0 is read through its stride and dequantized (SCALE or SHIFT, per tensor
// or along quantizeAxis).
#pragma once

#include <string>
#include <vector>

#include "dnn/hb_dnn.h"
#include "pipeline.h"

namespace ocr {

class HbdnnModel final : public TextModel {
 public:
  // `role` (det, cls, rec) names the model in messages. Throws std::runtime_error naming the
  // file and the failing call, or the unsupported input.
  HbdnnModel(const std::string& path, const std::string& role);
  ~HbdnnModel() override;
  HbdnnModel(const HbdnnModel&) = delete;
  HbdnnModel& operator=(const HbdnnModel&) = delete;

  int input_height() const override { return height_; }
  int input_width() const override { return width_; }
  std::vector<float> run(const ModelInput& input, std::vector<long>& shape) override;
  // One line per tensor: name, type, layout, validShape, quantization.
  std::string describe() const;

 private:
  void load();
  void release();
  void check(int32_t status, const char* call) const;
  void fill_input(const ModelInput& input);

  std::string path_, role_;
  hbPackedDNNHandle_t packed_ = nullptr;
  hbDNNHandle_t model_ = nullptr;
  std::string model_name_;
  hbDNNTensor input_{};
  std::vector<hbDNNTensor> outputs_;
  int height_ = 0, width_ = 0;
  bool nhwc_ = false;
};

}  // namespace ocr
