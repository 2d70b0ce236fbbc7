// Writes the runtime unit tests' small model (small_model.h: float input, CPU operators around
// two BPU segments, bayes-e) to model files for dnn_stress: DIR/small.bin (input 1x3x8x8),
// DIR/small_16x16.bin (the same graph on a 1x3x16x16 input: another BPU program),
// DIR/chain.bin (small_model.h's chain model: one BPU segment of 6 function calls, which a
// priority-255 job of another model preempts; a stress run with it exercises preemption), and
// DIR/roi.bin (small_model.h's resizer-input model: hbDNNRoiInfer on an NV12 image), and
// DIR/nv12.bin (the same graph fed an NV12 image of its input's size: the UCP API's Y / UV planes). One
// inference takes ~0.1 ms (a converted PP-OCR model ~10 ms), so 100k inferences fit in CI, and
// so does 8 threads x 2 models x 500 under ThreadSanitizer; dnn_stress stays free of the compiler.
//
//   dnn_small_model_file DIR
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

#include "openbpu/common/error.h"
#include "small_model.h"

namespace {

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  if (at == std::string::npos) openbpu::raise("small_model.h changed: '", from, "' not found");
  return text.replace(at, from.size(), to);
}

// As model_file() in small_model.h, for an input of `side` x `side`.
std::vector<uint8_t> model_bytes(const std::string& name, int64_t side) {
  using namespace openbpu;
  std::string text = kModelText;
  if (side != 8) {
    text = replaced(text, "float32[1,3,8,8]", "float32[1,3," + std::to_string(side) + "," + std::to_string(side) + "]");
    // Global average pool: 1/256 instead of 1/64 (multiplier / 2^36 → / 2^38).
    if (side != 16) openbpu::raise("side 8 or 16");
    text = replaced(text, "multiplier=1099511628, shift=36", "multiplier=1099511628, shift=38");
  }
  const ir::Model model = ir::parse_model(text);
  std::vector<uint8_t> bytes;
  const format::Status st = compile_bayes_model_file(model, uniform_input({1, 3, side, side}, 1), name, "test", &bytes);
  if (!st.ok()) raise(name, ": ", st.message);
  return bytes;
}

void write(const std::filesystem::path& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out.flush()) openbpu::raise("cannot write ", path.string());
  std::cout << "wrote " << path.string() << " (" << bytes.size() << " bytes)\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: dnn_small_model_file DIR\n";
    return 2;
  }
  try {
    const std::filesystem::path dir(argv[1]);
    std::filesystem::create_directories(dir);
    write(dir / "small.bin", model_bytes("small", 8));
    write(dir / "small_16x16.bin", model_bytes("small_16x16", 16));
    std::vector<uint8_t> chain;
    const openbpu::format::Status st = openbpu::chain_model_file(openbpu::ir::parse_model(openbpu::kChainModelText), "chain", &chain);
    if (!st.ok()) openbpu::raise("chain: ", st.message);
    write(dir / "chain.bin", chain);
    std::vector<uint8_t> roi;
    const openbpu::format::Status roi_st = openbpu::roi_model_file(openbpu::ir::parse_model(openbpu::kRoiModelText), "roi", &roi);
    if (!roi_st.ok()) openbpu::raise("roi: ", roi_st.message);
    write(dir / "roi.bin", roi);
    std::vector<uint8_t> nv12;
    const openbpu::format::Status nv12_st = openbpu::roi_model_file(openbpu::ir::parse_model(openbpu::kRoiModelText), "nv12",
                                                                    &nv12, openbpu::format::InputSource::PYRAMID);
    if (!nv12_st.ok()) openbpu::raise("nv12: ", nv12_st.message);
    write(dir / "nv12.bin", nv12);
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "dnn_small_model_file: " << e.what() << "\n";
    return 1;
  }
}
