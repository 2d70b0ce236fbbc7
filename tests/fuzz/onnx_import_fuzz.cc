// Fuzz target: ONNX import, protobuf bytes → IR → onnx checker → shape inference → IR
// verifier (load_onnx_from_bytes, what hb_mapper / hb_compile reach through load_onnx).
// External data resolves against an empty scratch folder, so no host file is ever read.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "fuzz_support.h"
#include "openbpu/frontend/onnx_model.h"
#include "openbpu/frontend/shape_inference.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static openbpu::fuzz::ScratchFile scratch;
  static const std::filesystem::path base_dir =
      std::filesystem::path(scratch.write("", "")).parent_path();
  try {
    openbpu::ir::Model model = openbpu::frontend::load_onnx_from_bytes(
        std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.onnx", base_dir);
    // What a pipeline does next with a loaded model: types forgotten and inferred again.
    openbpu::frontend::infer_shapes(model, /*recompute=*/true);
  } catch (...) {
    openbpu::fuzz::reject_or_abort("onnx_import");
  }
  return 0;
}
