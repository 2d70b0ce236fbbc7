#include "openbpu/accuracy/ocr_dataset.h"

#include <nlohmann/json.hpp>

#include "openbpu/common/atomic_file.h"
#include "openbpu/common/error.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace openbpu::accuracy {

OcrTask parse_ocr_task(const std::string& name) {
  if (name == "det") return OcrTask::kDetection;
  if (name == "rec") return OcrTask::kRecognition;
  if (name == "cls") return OcrTask::kClassification;
  raise("unknown OCR task '", name, "' (det, rec, cls)");
}

const char* ocr_task_name(OcrTask task) {
  switch (task) {
    case OcrTask::kDetection: return "det";
    case OcrTask::kRecognition: return "rec";
    case OcrTask::kClassification: return "cls";
  }
  return "?";
}

namespace {

// The value of `key` in `object`, or an Error naming the file, the entry and the key.
const json& field(const json& object, const char* key, const fs::path& file,
                  const std::string& where) {
  if (!object.is_object() || !object.contains(key)) {
    raise(file.string(), ": ", where, " has no '", key, "'");
  }
  return object.at(key);
}

Box box_of(const json& value, const fs::path& file, const std::string& where) {
  if (!value.is_array() || value.size() != 4) {
    raise(file.string(), ": ", where, " box must be [x0, y0, x1, y1]");
  }
  Box box;
  box.x0 = value[0].get<double>();
  box.y0 = value[1].get<double>();
  box.x1 = value[2].get<double>();
  box.y1 = value[3].get<double>();
  if (box.x1 < box.x0 || box.y1 < box.y0) raise(file.string(), ": ", where, " box is inverted");
  return box;
}

}  // namespace

OcrDataset load_ocr_dataset(const fs::path& folder, OcrTask task) {
  fs::path dir = folder;
  if (!fs::exists(dir / "labels.json") && fs::exists(dir / ocr_task_name(task) / "labels.json")) {
    dir /= ocr_task_name(task);
  }
  const fs::path file = dir / "labels.json";
  if (!fs::exists(file)) {
    raise("no labels.json in ", folder.string(), " nor in ",
          (folder / ocr_task_name(task)).string(),
          " (render the data with scripts/render_ocr_dataset.py)");
  }
  json root;
  try {
    root = json::parse(read_file(file));
  } catch (const json::exception& e) {
    raise(file.string(), ": not valid JSON: ", e.what());
  }
  OcrDataset dataset;
  dataset.task = task;
  dataset.folder = fs::absolute(dir);
  try {
    const auto kind = field(root, "kind", file, "the file").get<std::string>();
    if (kind != ocr_task_name(task)) {
      raise(file.string(), ": holds '", kind, "' samples, not '", ocr_task_name(task), "'");
    }
    dataset.input_shape = field(root, "input_shape", file, "the file").get<std::vector<int64_t>>();
    for (const json& entry : field(root, "samples", file, "the file")) {
      OcrSample s;
      s.id = field(entry, "id", file, "a sample").get<std::string>();
      const std::string where = "sample " + s.id;
      s.condition = entry.value("condition", "");
      s.input = dataset.folder / field(entry, "input", file, where).get<std::string>();
      s.image = dataset.folder / field(entry, "image", file, where).get<std::string>();
      s.bgr_uint8 = dataset.folder / field(entry, "bgr_uint8", file, where).get<std::string>();
      s.rgb_uint8 = dataset.folder / field(entry, "rgb_uint8", file, where).get<std::string>();
      if (task == OcrTask::kDetection) {
        for (const json& line : field(entry, "lines", file, where)) {
          OcrTextLine l;
          l.text = line.value("text", "");
          l.box = box_of(field(line, "box", file, where + " line"), file, where + " line");
          s.lines.push_back(l);
        }
      } else {
        s.text = field(entry, "text", file, where).get<std::string>();
      }
      if (task == OcrTask::kClassification) {
        s.label = field(entry, "label", file, where).get<int64_t>();
      }
      dataset.samples.push_back(std::move(s));
    }
  } catch (const json::exception& e) {
    raise(file.string(), ": unexpected value: ", e.what());
  }
  if (dataset.samples.empty()) raise(file.string(), ": no samples");
  return dataset;
}

}  // namespace openbpu::accuracy
