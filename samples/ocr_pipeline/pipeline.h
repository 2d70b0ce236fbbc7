// PP-OCR's text system (PaddleOCR's TextSystem): det → boxes → a crop per box → cls (turned by
// 180 degrees when the classifier says so) → rec → CTC text, lines under a score dropped. The
// models are behind TextModel, so the same pipeline runs .bin models through hbDNN
// (hbdnn_model.h) or, in the project's tests, the float ONNX models.
#pragma once

#include <string>
#include <vector>

#include "model_input.h"
#include "text_detection.h"
#include "text_recognition.h"

namespace ocr {

class TextModel {
 public:
  virtual ~TextModel() = default;
  virtual int input_height() const = 0;
  virtual int input_width() const = 0;
  // Output 0 for `input`, as floats in row-major order of `shape`.
  virtual std::vector<float> run(const ModelInput& input, std::vector<long>& shape) = 0;
};

struct PipelineOptions {
  DbOptions db;
  double cls_threshold = 0.9;  // a line turns when cls says 180 with at least this probability
  double drop_score = 0.5;     // lines whose recognition score is under it are dropped
};

struct TextLine {
  Quad box;
  int angle = 0;           // 180 when cls turned the crop (said 180 above cls_threshold), else 0
  double angle_score = 0;  // cls's probability of the class it chose (0 without cls)
  Recognition recognition;
};

// `cls` may be null (no direction classification). Throws std::runtime_error when a model's
// output does not have the shape its stage needs.
std::vector<TextLine> recognize_page(const Image& page, TextModel& det, TextModel* cls,
                                     TextModel& rec, const CharacterDictionary& dictionary,
                                     const PipelineOptions& options);

// "box N: x0,y0 x1,y1 x2,y2 x3,y3 angle A score S text TEXT" (README.md: the output format).
std::string format_text_line(size_t index, const TextLine& line);

}  // namespace ocr
