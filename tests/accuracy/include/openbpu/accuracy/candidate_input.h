// What a candidate model is fed, made from a sample's stored files. The float model always
// takes the float32 PaddleOCR input; a converted model may take instead the image in the
// intermediate type of its HzPreprocess (e.g. RGB_128 / yuv444_128: uint8 minus 128 as int8),
// in NCHW or NHWC.
#pragma once

#include <cstdint>
#include <string>

#include "openbpu/accuracy/ocr_dataset.h"
#include "openbpu/kernels/tensor.h"

namespace openbpu::accuracy {

enum class CandidateSource {
  kFloat,   // the float32 input file, unchanged
  kRgb,     // uint8 RGB
  kBgr,     // uint8 BGR
  kYuv444,  // BT.601 YUV of the RGB image, one chroma sample per pixel
  kNv12,    // as kYuv444 with chroma averaged over 2x2 blocks (what NV12 keeps), replicated
};

enum class CandidateRange {
  kFull,   // Y, U, V in [0, 255]
  kVideo,  // bt601_video: Y in [16, 235], U and V in [16, 240]
};

struct CandidateInputOptions {
  CandidateSource source = CandidateSource::kFloat;
  CandidateRange range = CandidateRange::kFull;
  bool nhwc = false;   // layout of the image sources (the float input is NCHW)
  int64_t offset = 0;  // subtracted from every pixel value (128 for the *_128 types)
  // Element type fed to the model; kUndefined: float32 for kFloat, else uint8 for offset 0,
  // int8 for offset 128 and float32 otherwise.
  kernels::DataType dtype = kernels::DataType::kUndefined;
};

// "float", "rgb", "bgr", "yuv444", "nv12"; "full", "video"; throw Error for anything else.
CandidateSource parse_candidate_source(const std::string& name);
CandidateRange parse_candidate_range(const std::string& name);

// Converts a uint8 [1,3,H,W] RGB image. Throws Error if a value does not fit `dtype`, if the
// image is not [1,3,H,W] uint8, or for nv12 with an odd height or width.
kernels::Tensor candidate_input_from_rgb(const kernels::Tensor& rgb,
                                         const CandidateInputOptions& options);
// Reads the sample's file for `options.source` and converts it.
kernels::Tensor candidate_input(const OcrSample& sample, const CandidateInputOptions& options);

}  // namespace openbpu::accuracy
