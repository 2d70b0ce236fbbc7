// The stage-2 optimizer on the real PP-OCR models: each model, with its input shape fixed to the
// rendered inputs' shape (as stage 1 does with input_shape), goes through the default pass
// pipeline; the optimized model's outputs must match the original's on every rendered input
// with cosine similarity >= 0.99999 (and so must the logits before a final Softmax). The
// optimized model is saved and loaded again first (the ONNX checker accepts it). Prints
// node/parameter counts, cosine and max |diff|.
// The data folder (OPENBPU_REAL_MODELS_DIR) is prepared by prepare_reference.sh.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "openbpu/common/npy.h"
#include "openbpu/executor/float_executor.h"
#include "openbpu/frontend/onnx_model.h"
#include "openbpu/frontend/shape_inference.h"
#include "openbpu/ir/verifier.h"
#include "openbpu/passes/pipeline.h"

namespace fs = std::filesystem;
using openbpu::kernels::Tensor;

namespace {

fs::path data_dir() {
  const char* dir = std::getenv("OPENBPU_REAL_MODELS_DIR");
  return dir ? fs::path(dir) : fs::path();
}

std::vector<std::string> inputs_of(const std::string& kind) {
  std::vector<std::string> out;
  std::ifstream in(data_dir() / "inputs" / "manifest.tsv");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string file, k;
    std::getline(fields, file, '\t');
    std::getline(fields, k, '\t');
    if (k == kind) out.push_back(file);
  }
  return out;
}

// Every intermediate type recomputed from the (now static) input types.
void refresh_types(openbpu::ir::Model& model) {
  openbpu::ir::Graph& g = *model.graph;
  for (openbpu::ir::Value* v : g.values()) {
    if (!v->is_constant() && !g.is_input(v)) v->set_type({});
  }
  openbpu::frontend::infer_shapes(model);
}

double cosine(const Tensor& a, const Tensor& b) {
  double ab = 0, aa = 0, bb = 0;
  for (int64_t i = 0; i < a.element_count(); ++i) {
    ab += a.float_at(i) * b.float_at(i);
    aa += a.float_at(i) * a.float_at(i);
    bb += b.float_at(i) * b.float_at(i);
  }
  return aa == 0 && bb == 0 ? 1.0 : ab / std::sqrt(aa * bb);
}

void check_model(const std::string& kind, const std::string& model_file) {
  ASSERT_FALSE(data_dir().empty()) << "set OPENBPU_REAL_MODELS_DIR (see prepare_reference.sh)";
  const auto inputs = inputs_of(kind);
  ASSERT_FALSE(inputs.empty()) << "no " << kind << " inputs in " << data_dir();
  const Tensor first = openbpu::read_npy(data_dir() / "inputs" / inputs.front());

  openbpu::ir::Model original = openbpu::frontend::load_onnx(data_dir() / "models" / model_file);
  original.graph->inputs().front()->set_type(
      openbpu::ir::TensorType::of(first.dtype(), first.shape()));
  refresh_types(original);
  openbpu::ir::Model optimized = openbpu::frontend::load_onnx(data_dir() / "models" / model_file);
  optimized.graph->inputs().front()->set_type(
      openbpu::ir::TensorType::of(first.dtype(), first.shape()));
  refresh_types(optimized);

  openbpu::passes::PipelineOptions options;
  options.log = [&](const std::string& line) { std::cout << "[ passes   ] " << line << "\n"; };
  options.refresh_types = refresh_types;
  const auto reports =
      openbpu::passes::run_passes(optimized, openbpu::passes::default_pipeline(), options);
  std::cout << "[ passes   ] " << model_file << ": nodes " << reports.front().nodes_before << " -> "
            << reports.back().nodes_after << ", parameters " << reports.front().parameters_before
            << " -> " << reports.back().parameters_after << "\n";
  EXPECT_LT(reports.back().nodes_after, reports.front().nodes_before);

  // The optimized model is valid ONNX: written and loaded again (the loader runs the checker).
  const fs::path saved = fs::temp_directory_path() / ("openbpu_optimized_" + model_file);
  openbpu::frontend::save_onnx(optimized, saved);
  const openbpu::ir::Model reloaded = openbpu::frontend::load_onnx(saved);
  fs::remove(saved);

  // Besides the outputs, compare the logits before a final Softmax (saturated probabilities
  // would hide differences).
  auto logits = [](const openbpu::ir::Model& m) {
    std::vector<std::string> names;
    for (const openbpu::ir::Value* out : m.graph->outputs()) {
      const openbpu::ir::Node* p = out->producer();
      if (p != nullptr && p->op_type() == "Softmax") names.push_back(p->input(0)->name());
    }
    return names;
  };
  openbpu::executor::RunOptions original_run, optimized_run;
  original_run.extra_outputs = logits(original);
  optimized_run.extra_outputs = logits(reloaded);

  openbpu::executor::FloatExecutor original_exec(original, {2});
  openbpu::executor::FloatExecutor optimized_exec(reloaded, {2});
  const std::string input_name = original.graph->inputs().front()->name();
  for (const std::string& file : inputs) {
    const Tensor x = openbpu::read_npy(data_dir() / "inputs" / file);
    const auto want = original_exec.run({{input_name, x}}, original_run);
    const auto got = optimized_exec.run({{input_name, x}}, optimized_run);
    ASSERT_EQ(want.tensors.size(), got.tensors.size());
    for (size_t i = 0; i < want.tensors.size(); ++i) {
      if (i < original.graph->outputs().size()) {
        ASSERT_EQ(want.names[i], got.names[i]);
      }
      ASSERT_EQ(want.tensors[i].shape(), got.tensors[i].shape()) << want.names[i];
      double max_diff = 0;
      for (int64_t k = 0; k < want.tensors[i].element_count(); ++k) {
        max_diff =
            std::max(max_diff, std::fabs(want.tensors[i].float_at(k) - got.tensors[i].float_at(k)));
      }
      const double cos = cosine(want.tensors[i], got.tensors[i]);
      std::cout << "[ compare  ] " << model_file << " " << file << " " << want.names[i]
                << " cosine " << std::fixed << std::setprecision(9) << cos << std::defaultfloat
                << " max|diff| " << max_diff << "\n";
      EXPECT_GE(cos, 0.99999) << model_file << " on " << file << " output " << want.names[i];
    }
  }
}

TEST(OptimizedModels, PPOCRv4DetectionMatchesTheOriginal) {
  check_model("det", "ch_PP-OCRv4_det_infer.onnx");
}

TEST(OptimizedModels, PPOCRv4RecognitionMatchesTheOriginal) {
  check_model("rec", "ch_PP-OCRv4_rec_infer.onnx");
}

TEST(OptimizedModels, PPOCRMobileV2ClassifierMatchesTheOriginal) {
  check_model("cls", "ch_ppocr_mobile_v2.0_cls_infer.onnx");
}

}  // namespace
