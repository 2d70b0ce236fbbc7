#include "pipeline.h"

#include <cstdio>
#include <stdexcept>

namespace ocr {

namespace {

std::string shape_text(const std::vector<long>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

long element_count(const std::vector<long>& shape) {
  long n = 1;
  for (long d : shape) n *= d;
  return n;
}

// The probability map of det: [1, 1, H, W] or [1, H, W, 1] (leading ones allowed).
std::vector<TextBox> detect(const Image& page, TextModel& det, const DbOptions& options) {
  std::vector<long> shape;
  const std::vector<float> map =
      det.run(detection_input(page, det.input_height(), det.input_width()), shape);
  const long h = det.input_height(), w = det.input_width();
  if (element_count(shape) != h * w || shape.size() < 2) {
    throw std::runtime_error("det's output " + shape_text(shape) + " is not a " +
                             std::to_string(h) + "x" + std::to_string(w) + " probability map");
  }
  return detect_text_boxes(map, static_cast<int>(w), static_cast<int>(h), page.width, page.height,
                           options);
}

}  // namespace

std::vector<TextLine> recognize_page(const Image& page, TextModel& det, TextModel* cls,
                                     TextModel& rec, const CharacterDictionary& dictionary,
                                     const PipelineOptions& options) {
  std::vector<TextLine> lines;
  for (const TextBox& box : detect(page, det, options.db)) {
    TextLine line;
    line.box = box.corners;
    Image crop = crop_text_box(page, box.corners);
    if (crop.width == 0) continue;
    std::vector<long> shape;
    if (cls) {
      const std::vector<float> p =
          cls->run(line_input(crop, cls->input_height(), cls->input_width()), shape);
      if (p.size() != 2)
        throw std::runtime_error("cls's output " + shape_text(shape) + " is not [1, 2]");
      const bool upside_down = p[1] > p[0];  // labels 0 and 180; the first on a tie
      line.angle_score = p[upside_down ? 1 : 0];
      if (upside_down && line.angle_score > options.cls_threshold) {
        line.angle = 180;
        crop = rotate_180(crop);
      }
    }
    const std::vector<float> scores =
        rec.run(line_input(crop, rec.input_height(), rec.input_width()), shape);
    if (shape.size() != 3 || shape[0] != 1) {
      throw std::runtime_error("rec's output " + shape_text(shape) + " is not [1, steps, classes]");
    }
    line.recognition = ctc_greedy_decode(scores, shape[1], shape[2], dictionary);
    if (line.recognition.score < options.drop_score) continue;
    lines.push_back(std::move(line));
  }
  return lines;
}

std::string format_text_line(size_t index, const TextLine& line) {
  char head[160];
  std::snprintf(head, sizeof head,
                "box %zu: %.0f,%.0f %.0f,%.0f %.0f,%.0f %.0f,%.0f angle %d score %.3f text ", index,
                line.box[0].x, line.box[0].y, line.box[1].x, line.box[1].y, line.box[2].x,
                line.box[2].y, line.box[3].x, line.box[3].y, line.angle, line.recognition.score);
  return head + line.recognition.text;
}

}  // namespace ocr
