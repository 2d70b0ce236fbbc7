// The rendered OCR data sets of scripts/render_ocr_dataset.py: one folder per kind with
// labels.json (ground truth and file names) and the sample files it names.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "openbpu/accuracy/box_matching.h"

namespace openbpu::accuracy {

enum class OcrTask { kDetection, kRecognition, kClassification };

// "det", "rec", "cls"; throws Error for anything else.
OcrTask parse_ocr_task(const std::string& name);
const char* ocr_task_name(OcrTask task);

struct OcrTextLine {
  std::string text;
  Box box;  // [x0, x1) x [y0, y1) in input pixels
};

struct OcrSample {
  std::string id;
  std::string condition;            // clean, degraded, hard
  std::filesystem::path input;      // float32 [1,3,H,W], PaddleOCR preprocessing
  std::filesystem::path image;      // png
  std::filesystem::path bgr_uint8;  // uint8 [1,3,H,W]
  std::filesystem::path rgb_uint8;  // uint8 [1,3,H,W]
  std::string text;                 // rec, cls
  int64_t label = -1;               // cls: 0 upright, 1 upside down
  std::vector<OcrTextLine> lines;   // det
};

struct OcrDataset {
  OcrTask task = OcrTask::kDetection;
  std::filesystem::path folder;
  std::vector<int64_t> input_shape;
  std::vector<OcrSample> samples;
};

// Reads `folder`/labels.json, or `folder`/<task>/labels.json when `folder` is a split folder
// (e.g. evaluation/). Paths in the samples are made absolute. Throws Error naming the file and
// the key for a missing folder, a kind other than `task`, or a malformed entry.
OcrDataset load_ocr_dataset(const std::filesystem::path& folder, OcrTask task);

}  // namespace openbpu::accuracy
