// graph_to_onnx GRAPH_TEXT OUT.onnx [--samples N DIR]: writes the model of a graph text
// (openbpu/ir/parse.h; lines starting with '#' are comments) as an ONNX file, so that the
// command-line tests can convert small models made for them. With --samples, also N calibration samples per model input, standard normal
// float32 (fixed seeds), as DIR/<input>/<i>.npy.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>

#include "openbpu/common/error.h"
#include "openbpu/common/npy.h"
#include "openbpu/frontend/onnx_model.h"
#include "openbpu/ir/parse.h"

namespace {

void write_samples(const openbpu::ir::Model& model, int count, const std::filesystem::path& dir) {
  uint32_t seed = 1;
  for (const openbpu::ir::Value* v : model.graph->inputs()) {
    if (v->is_constant()) continue;
    const auto shape = v->type().static_shape();
    if (!shape) openbpu::raise("input '", v->name(), "' has no static shape to sample");
    std::filesystem::create_directories(dir / v->name());
    for (int i = 0; i < count; ++i) {
      std::mt19937 rng(seed++);
      std::normal_distribution<float> normal(0.0f, 1.0f);
      openbpu::kernels::Tensor t(openbpu::kernels::DataType::kFloat32, *shape);
      for (int64_t k = 0; k < t.element_count(); ++k) t.data<float>()[k] = normal(rng);
      openbpu::write_npy(dir / v->name() / (std::to_string(i) + ".npy"), t);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const bool samples = argc == 6 && std::string(argv[3]) == "--samples";
  if (argc != 3 && !samples) {
    std::cerr << "usage: graph_to_onnx GRAPH_TEXT OUT.onnx [--samples N DIR]\n";
    return 2;
  }
  try {
    std::ifstream in(argv[1]);
    if (!in) openbpu::raise("cannot read '", argv[1], "'");
    std::stringstream text;  // lines starting with '#' are comments
    for (std::string line; std::getline(in, line);) {
      if (!line.starts_with("#")) text << line << "\n";
    }
    const openbpu::ir::Model model = openbpu::ir::parse_model(text.str());
    openbpu::frontend::save_onnx(model, argv[2]);
    if (samples) write_samples(model, std::stoi(argv[4]), argv[5]);
  } catch (const std::exception& e) {
    std::cerr << "graph_to_onnx: " << argv[1] << ": " << e.what() << "\n";
    return 1;
  }
  return 0;
}
