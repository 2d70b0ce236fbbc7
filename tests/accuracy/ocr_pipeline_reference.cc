// ocr_pipeline_reference: samples/ocr_pipeline's PP-OCR pipeline (the same pre- and
// post-processing sources) with ONNX models run by the float executor instead of .bin models
// through hbDNN. With the float models it is the float pipeline the sample is measured against;
// with the *_quantized_model.onnx of the same conversions it is what the sample must print
// exactly (the quantized model, the simulator and the board agree bit for bit). Prints the
// sample's output format; exit 0, or 1 with a message on an error.
//   ocr_pipeline_reference --det DET.onnx [--cls CLS.onnx] --rec REC.onnx --keys KEYS IMAGE...
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "openbpu/executor/float_executor.h"
#include "openbpu/frontend/onnx_model.h"
#include "pipeline.h"

namespace {

using openbpu::kernels::Tensor;

// "HxW" as {H, W}; {0, 0} for "".
std::pair<int, int> parse_size(const std::string& text) {
  int h = 0, w = 0;
  char x = 0, rest = 0;
  if (text.empty()) return {0, 0};
  if (std::sscanf(text.c_str(), "%d%c%d%c", &h, &x, &w, &rest) != 3 || x != 'x' || h <= 0 ||
      w <= 0) {
    throw std::runtime_error("a size is HxW, e.g. 48x320; got '" + text + "'");
  }
  return {h, w};
}

// A one-input ONNX model with a [N, 3, H, W] float input fed PaddleOCR's normalised tensor;
// `size` ("HxW") fixes the dimensions the model leaves open (the float models' dynamic ones).
class OnnxTextModel final : public ocr::TextModel {
 public:
  OnnxTextModel(const std::string& path, const std::string& size, int threads)
      : model_(openbpu::frontend::load_onnx(path)), executor_(model_, {threads}) {
    const auto& inputs = executor_.required_inputs();
    if (inputs.size() != 1) throw std::runtime_error(path + ": one input expected");
    const openbpu::ir::Value& input = *inputs[0];
    name_ = input.name();
    const auto& shape = input.type().shape;
    if (!shape || shape->size() != 4 || (*shape)[1].value != 3) {
      throw std::runtime_error(path + ": input '" + name_ + "' is not [N, 3, H, W]");
    }
    std::tie(height_, width_) = parse_size(size);
    for (const auto& [dim, given] :
         {std::pair{(*shape)[2], &height_}, std::pair{(*shape)[3], &width_}}) {
      if (dim.is_known() && *given != 0 && *given != dim.value) {
        throw std::runtime_error(path + ": the input is " + input.type().to_string() + ", not " +
                                 size);
      }
      if (dim.is_known()) *given = static_cast<int>(dim.value);
      if (*given == 0) throw std::runtime_error(path + ": the input's size is open; give it (HxW)");
    }
  }
  int input_height() const override { return height_; }
  int input_width() const override { return width_; }
  std::vector<float> run(const ocr::ModelInput& input, std::vector<long>& shape) override {
    const std::vector<float> chw = input.to_float_chw();
    const Tensor x = Tensor::from_values<float>({1, 3, height_, width_}, chw);
    const openbpu::executor::RunResult r = executor_.run({{name_, x}});
    const Tensor& y = r.tensors.at(0);
    shape.assign(y.shape().begin(), y.shape().end());
    const auto values = y.values<float>();
    return {values.begin(), values.end()};
  }

 private:
  openbpu::ir::Model model_;
  openbpu::executor::FloatExecutor executor_;
  std::string name_;
  int height_ = 0, width_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "ocr_pipeline_reference: samples/ocr_pipeline with ONNX models on the float executor"};
  std::string det_path, cls_path, rec_path, keys_path;
  std::vector<std::string> images;
  std::string det_size, cls_size, rec_size;
  int threads = 1;
  app.add_option("--det", det_path, "det ONNX model")->required();
  app.add_option("--cls", cls_path, "cls ONNX model (none: no line turns)");
  app.add_option("--rec", rec_path, "rec ONNX model")->required();
  app.add_option("--keys", keys_path, "the rec dictionary")->required();
  app.add_option("--det-size", det_size, "det input HxW where the model leaves it open");
  app.add_option("--cls-size", cls_size, "cls input HxW where the model leaves it open");
  app.add_option("--rec-size", rec_size, "rec input HxW where the model leaves it open");
  app.add_option("--threads", threads, "threads inside kernels")->check(CLI::Range(1, 256));
  app.add_option("images", images, "PPM / PGM images")->required();
  CLI11_PARSE(app, argc, argv);
  try {
    const ocr::CharacterDictionary keys = ocr::CharacterDictionary::load(keys_path);
    OnnxTextModel det(det_path, det_size, threads), rec(rec_path, rec_size, threads);
    std::unique_ptr<OnnxTextModel> cls;
    if (!cls_path.empty()) cls = std::make_unique<OnnxTextModel>(cls_path, cls_size, threads);
    const ocr::PipelineOptions options;
    for (const std::string& path : images) {
      const ocr::Image page = ocr::read_image(path);
      const auto lines = ocr::recognize_page(page, det, cls.get(), rec, keys, options);
      std::printf("image %s: %dx%d, %zu lines\n", path.c_str(), page.width, page.height,
                  lines.size());
      for (size_t i = 0; i < lines.size(); ++i) {
        std::printf("%s\n", ocr::format_text_line(i, lines[i]).c_str());
      }
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "ocr_pipeline_reference: error: " << e.what() << "\n";
    return 1;
  }
}
