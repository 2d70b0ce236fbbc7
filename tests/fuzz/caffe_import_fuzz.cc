// Fuzz target: Caffe import (load_caffe_from_bytes, what load_caffe runs on the two files):
// the input is the network text (.prototxt), then the separator line, then the trained
// weights (.caffemodel bytes).
#include <cstdint>
#include <string_view>

#include "fuzz_support.h"
#include "openbpu/frontend/caffe_model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto [prototxt, caffemodel] = openbpu::fuzz::split_at(
      std::string_view(reinterpret_cast<const char*>(data), size), "\n#caffemodel#\n");
  try {
    openbpu::frontend::load_caffe_from_bytes(prototxt, caffemodel, "fuzz.prototxt", "fuzz.caffemodel");
  } catch (...) {
    openbpu::fuzz::reject_or_abort("caffe_import");
  }
  return 0;
}
