// The float executor against onnxruntime-node on the real PP-OCR models, on rendered text
// images: every output must satisfy max|ours - ort| <= 1e-4 * max|ort|.
// The data folder (OPENBPU_REAL_MODELS_DIR) is prepared by prepare_reference.sh.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "openbpu/base/file_name.h"
#include "openbpu/common/npy.h"
#include "openbpu/executor/float_executor.h"
#include "openbpu/frontend/onnx_model.h"

namespace fs = std::filesystem;
using openbpu::kernels::Tensor;

namespace {

fs::path data_dir() {
  const char* dir = std::getenv("OPENBPU_REAL_MODELS_DIR");
  return dir ? fs::path(dir) : fs::path();
}

struct Case {
  std::string input;
  std::string kind;
};

std::vector<Case> cases_of(const std::string& kind) {
  std::vector<Case> out;
  std::ifstream in(data_dir() / "inputs" / "manifest.tsv");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    Case c;
    std::getline(fields, c.input, '\t');
    std::getline(fields, c.kind, '\t');
    if (c.kind == kind) out.push_back(c);
  }
  return out;
}

void compare_model(const std::string& kind, const std::string& model_file) {
  ASSERT_FALSE(data_dir().empty()) << "set OPENBPU_REAL_MODELS_DIR (see prepare_reference.sh)";
  const auto cases = cases_of(kind);
  ASSERT_FALSE(cases.empty()) << "no " << kind << " inputs in " << data_dir();
  const openbpu::ir::Model model = openbpu::frontend::load_onnx(data_dir() / "models" / model_file);
  openbpu::executor::FloatExecutor exec(model, {2});
  for (const Case& c : cases) {
    const Tensor x = openbpu::read_npy(data_dir() / "inputs" / c.input);
    const auto result = exec.run({{"x", x}});
    const std::string stem = fs::path(c.input).stem().string();
    for (size_t i = 0; i < result.names.size(); ++i) {
      const std::string file = openbpu::base::file_name_part(result.names[i]);  // ort_run.js safeName
      const Tensor ref = openbpu::read_npy(data_dir() / "ort" / stem / (file + ".npy"));
      const Tensor& ours = result.tensors[i];
      ASSERT_EQ(ours.shape(), ref.shape()) << c.input << " output " << result.names[i];
      double max_ref = 0, max_diff = 0;
      for (int64_t k = 0; k < ref.element_count(); ++k) {
        max_ref = std::max(max_ref, std::fabs(ref.float_at(k)));
        max_diff = std::max(max_diff, std::fabs(ref.float_at(k) - ours.float_at(k)));
      }
      EXPECT_LE(max_diff, 1e-4 * max_ref)
          << model_file << " on " << c.input << " output " << result.names[i] << ": max|diff| "
          << max_diff << ", max|ref| " << max_ref;
      std::cout << "[ compare  ] " << model_file << " " << c.input << " " << ours.describe()
                << " max|diff| " << max_diff << " (bar " << 1e-4 * max_ref << ")\n";
    }
  }
}

TEST(RealModels, PPOCRv4DetectionMatchesOnnxRuntime) {
  compare_model("det", "ch_PP-OCRv4_det_infer.onnx");
}

TEST(RealModels, PPOCRv4RecognitionMatchesOnnxRuntime) {
  compare_model("rec", "ch_PP-OCRv4_rec_infer.onnx");
}

TEST(RealModels, PPOCRMobileV2ClassifierMatchesOnnxRuntime) {
  compare_model("cls", "ch_ppocr_mobile_v2.0_cls_infer.onnx");
}

}  // namespace
