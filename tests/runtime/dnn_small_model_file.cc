// Writes the runtime unit tests' small model (small_model.h: float input, CPU operators around
// two BPU segments, bayes-e) to a model file, for dnn_stress's RSS bar: one inference takes
// well under a millisecond (a converted PP-OCR model takes ~10 ms), so 100k inferences fit in
// CI, and dnn_stress itself stays free of the compiler.
//
//   dnn_small_model_file OUT.bin
#include <filesystem>
#include <fstream>
#include <iostream>

#include "small_model.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: dnn_small_model_file OUT.bin\n";
    return 2;
  }
  try {
    const openbpu::ir::Model model = openbpu::ir::parse_model(openbpu::kModelText);
    const std::vector<uint8_t> bytes = openbpu::model_file(model, "small");
    if (bytes.empty() || ::testing::Test::HasFailure()) {
      std::cerr << "dnn_small_model_file: the model did not serialize\n";
      return 1;
    }
    const std::filesystem::path path(argv[1]);
    if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (!out.flush()) {
      std::cerr << "dnn_small_model_file: cannot write " << argv[1] << "\n";
      return 1;
    }
    std::cout << "wrote " << argv[1] << " (" << bytes.size() << " bytes)\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "dnn_small_model_file: " << e.what() << "\n";
    return 1;
  }
}
