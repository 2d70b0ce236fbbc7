// ocr_accuracy: measures a candidate model (e.g. a *_quantized_model.onnx) against the float
// model on a rendered OCR data set (scripts/render_ocr_dataset.py), both run by the float
// executor. Prints the output cosine, the task metrics of both models against the ground truth
// and the candidate's agreement with the float model; exits 0 when every given bar is met,
// 2 when one is not, 1 on an error.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "openbpu/accuracy/accuracy_bars.h"
#include "openbpu/accuracy/classification_scorer.h"
#include "openbpu/accuracy/detection_scorer.h"
#include "openbpu/accuracy/ocr_evaluation.h"
#include "openbpu/accuracy/recognition_scorer.h"
#include "openbpu/common/atomic_file.h"
#include "openbpu/common/error.h"
#include "openbpu/frontend/onnx_model.h"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace openbpu::accuracy;

namespace {

struct Arguments {
  std::string kind, float_model, candidate_model, data, keys, report_file, print_figure;
  std::string input_name, candidate_input_name;
  std::string candidate_source = "float", candidate_range = "full", candidate_layout = "NCHW";
  std::string candidate_dtype = "auto";
  int64_t candidate_offset = 0;
  int threads = 1;
  int64_t limit = 0;
  double min_iou = 0.5;
  DbOptions db;
  bool verbose = false;
  AccuracyBars bars;
};

openbpu::kernels::DataType parse_dtype(const std::string& name) {
  using openbpu::kernels::DataType;
  if (name == "auto") return DataType::kUndefined;
  if (name == "float32") return DataType::kFloat32;
  if (name == "uint8") return DataType::kUint8;
  if (name == "int8") return DataType::kInt8;
  if (name == "int16") return DataType::kInt16;
  openbpu::raise("unknown --candidate-dtype '", name, "' (auto, float32, uint8, int8, int16)");
}

std::unique_ptr<TaskScorer> make_scorer(OcrTask task, const Arguments& a) {
  switch (task) {
    case OcrTask::kDetection: return std::make_unique<DetectionScorer>(a.db, a.min_iou);
    case OcrTask::kRecognition: {
      const fs::path keys = a.keys.empty()
                                ? fs::path(a.float_model).parent_path() / "ppocr_keys_v1.txt"
                                : fs::path(a.keys);
      return std::make_unique<RecognitionScorer>(CtcDictionary::load(keys));
    }
    case OcrTask::kClassification: return std::make_unique<ClassificationScorer>();
  }
  return nullptr;
}

void print_report(const json& r, const Arguments& a) {
  std::cout << std::fixed << std::setprecision(2);
  std::cout << "ocr_accuracy " << a.kind << ": " << r["samples"].get<int64_t>() << " samples\n"
            << "  float model      " << a.float_model << " ("
            << r["milliseconds_per_sample"]["float"].get<double>() << " ms/sample)\n"
            << "  candidate model  " << a.candidate_model << " ("
            << r["milliseconds_per_sample"]["candidate"].get<double>() << " ms/sample)\n";
  std::cout << std::setprecision(6) << "output cosine, candidate vs float: mean "
            << r["output_cosine"]["mean"].get<double>() << ", min "
            << r["output_cosine"]["min"].get<double>() << "\n"
            << std::setprecision(2);
  std::cout << "vs ground truth (%)        float  candidate\n";
  for (const auto& [name, value] : r["float"].items()) {
    if (!value.is_number_float()) continue;
    std::cout << "  " << std::left << std::setw(22) << name << std::right << std::setw(9)
              << value.get<double>() << std::setw(11) << r["candidate"][name].get<double>() << "\n";
  }
  std::cout << "candidate vs float (%):";
  for (const auto& [name, value] : r["agreement"].items()) {
    std::cout << " " << name << " " << value.get<double>();
  }
  std::cout << "\n";
}

int run(const Arguments& a) {
  const OcrTask task = parse_ocr_task(a.kind);
  require_bars_apply(a.kind, a.bars);
  const OcrDataset dataset = load_ocr_dataset(a.data, task);
  EvaluationOptions options;
  options.float_input_name = a.input_name;
  options.candidate_input_name =
      a.candidate_input_name.empty() ? a.input_name : a.candidate_input_name;
  options.candidate.source = parse_candidate_source(a.candidate_source);
  options.candidate.range = parse_candidate_range(a.candidate_range);
  if (a.candidate_layout != "NCHW" && a.candidate_layout != "NHWC") {
    openbpu::raise("--candidate-layout must be NCHW or NHWC, got '", a.candidate_layout, "'");
  }
  options.candidate.nhwc = a.candidate_layout == "NHWC";
  options.candidate.offset = a.candidate_offset;
  options.candidate.dtype = parse_dtype(a.candidate_dtype);
  options.limit = a.limit;
  const std::unique_ptr<TaskScorer> scorer = make_scorer(task, a);

  const openbpu::ir::Model float_model = openbpu::frontend::load_onnx(a.float_model);
  const openbpu::ir::Model candidate_model = openbpu::frontend::load_onnx(a.candidate_model);
  openbpu::executor::FloatExecutor float_exec(float_model, {a.threads});
  openbpu::executor::FloatExecutor candidate_exec(candidate_model, {a.threads});
  json report = evaluate_ocr(dataset, float_exec, candidate_exec, *scorer, options,
                             a.verbose ? &std::cout : nullptr);
  report["data"] = dataset.folder.string();
  report["float_model"] = a.float_model;
  report["candidate_model"] = a.candidate_model;
  print_report(report, a);

  bool passed = true;
  json bars = json::array();
  for (const BarCheck& check : check_bars(report, a.bars)) {
    std::cout << "bar " << check.option << " " << check.limit << ": " << check.value << " "
              << (check.met ? "met" : "NOT MET") << "\n";
    bars.push_back({{"option", check.option},
                    {"value", check.value},
                    {"limit", check.limit},
                    {"met", check.met}});
    passed = passed && check.met;
  }
  report["bars"] = bars;
  report["passed"] = passed;
  if (!a.report_file.empty()) openbpu::write_file_atomically(a.report_file, report.dump(1) + "\n");
  if (!a.print_figure.empty()) {  // a metric for `hmct-debugger find-fix --metric-command`
    for (const char* part : {"agreement", "candidate", "float"}) {
      if (report.contains(part) && report[part].contains(a.print_figure)) {
        std::cout << report[part][a.print_figure].get<double>() << "\n";
        return 0;
      }
    }
    openbpu::raise("--print ", a.print_figure, ": the report has no such figure");
  }
  return passed ? 0 : 2;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"ocr_accuracy: a candidate OCR model against the float model on rendered data"};
  Arguments a;
  app.add_option("--kind", a.kind, "det, rec or cls")
      ->required()
      ->check(CLI::IsMember({"det", "rec", "cls"}));
  app.add_option("--float-model", a.float_model, "the float ONNX model")->required();
  app.add_option("--candidate-model", a.candidate_model, "the model to measure")->required();
  app.add_option("--data", a.data,
                 "a kind folder with labels.json, or a split folder holding det/ rec/ cls/")
      ->required();
  app.add_option("--input-name", a.input_name, "input to feed (default: the only one)");
  app.add_option("--candidate-input-name", a.candidate_input_name,
                 "the candidate's input (default: --input-name, or its only input)");
  app.add_option("--candidate-input", a.candidate_source,
                 "what the candidate is fed: float (the float input), rgb, bgr, yuv444, nv12")
      ->capture_default_str();
  app.add_option("--candidate-range", a.candidate_range, "yuv444/nv12 range: full or video")
      ->capture_default_str();
  app.add_option("--candidate-layout", a.candidate_layout, "image inputs: NCHW or NHWC")
      ->capture_default_str();
  app.add_option("--candidate-input-offset", a.candidate_offset,
                 "subtracted from the image values (128 for RGB_128, yuv444_128 ...)")
      ->capture_default_str();
  app.add_option("--candidate-dtype", a.candidate_dtype,
                 "auto (uint8; int8 with offset 128), float32, uint8, int8, int16")
      ->capture_default_str();
  app.add_option("--keys", a.keys,
                 "rec dictionary (default: ppocr_keys_v1.txt beside the float model)");
  app.add_option("--threads", a.threads, "threads inside kernels")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  app.add_option("--limit", a.limit, "use the first N samples (0: all)")->capture_default_str();
  app.add_option("--db-threshold", a.db.threshold, "det: binarisation threshold")
      ->capture_default_str();
  app.add_option("--db-box-threshold", a.db.box_threshold, "det: minimum mean box probability")
      ->capture_default_str();
  app.add_option("--db-unclip-ratio", a.db.unclip_ratio, "det: box growth")->capture_default_str();
  app.add_option("--min-iou", a.min_iou, "det: IoU for a box match")->capture_default_str();
  app.add_flag("--verbose", a.verbose, "one line per sample");
  app.add_option("--report", a.report_file, "write the figures as JSON");
  app.add_option(
      "--print", a.print_figure,
      "print this figure (e.g. text_equal, top1_agree, cosine) as the last line; exit 0");
  app.add_option("--min-cosine", a.bars.min_cosine, "bar: mean output cosine");
  app.add_option("--min-text-equal", a.bars.min_text_equal, "bar (rec): % lines equal to float");
  app.add_option("--max-cer-delta", a.bars.max_cer_delta,
                 "bar (rec): candidate CER - float CER, points");
  app.add_option("--min-top1-agree", a.bars.min_top1_agree, "bar (cls): % top-1 equal to float");
  app.add_option("--max-box-delta", a.bars.max_box_delta,
                 "bar (det): float - candidate box recall and precision, points");
  CLI11_PARSE(app, argc, argv);
  try {
    return run(a);
  } catch (const std::exception& e) {
    std::cerr << "ocr_accuracy: error: " << e.what() << "\n";
    return 1;
  }
}
