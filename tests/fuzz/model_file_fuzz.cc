// Fuzz target: the model file reader (.bin / .hbm, packed files) through the runtime's
// verify-then-read path, hbDNNInitializeFromDDR (what hrt_model_exec and applications call),
// then every query a tool makes of a loaded model; and the tools' path (hb_model_info,
// hb_pack, hb_model_modifier): ModelFile::from_bytes + unpack_package.
//
// The CRC-32C in the footer rejects nearly every mutated file before the verifier sees it, so
// each input is tried twice: as given (the container checks), and, when it ends in the footer
// magic, with the footer recomputed over the mutated flatbuffer (the flatbuffers Verifier and
// the semantic checks behind it).
#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "dnn/hb_dnn.h"
#include "fuzz_support.h"
#include "openbpu/format/model_file.h"

namespace {

constexpr const char* kTarget = "model_file";

void query_ports(hbDNNHandle_t model, bool inputs) {
  int32_t count = -1;
  const int32_t rc = inputs ? hbDNNGetInputCount(&count, model) : hbDNNGetOutputCount(&count, model);
  openbpu::fuzz::require(rc == 0 && count > 0, kTarget, "a loaded model reports no inputs or outputs");
  for (int32_t i = 0; i < count; ++i) {
    const char* name = nullptr;
    hbDNNTensorProperties properties{};
    int32_t rc_name = 0, rc_properties = 0;
    if (inputs) {
      int32_t source = 0;
      rc_name = hbDNNGetInputName(&name, model, i);
      rc_properties = hbDNNGetInputTensorProperties(&properties, model, i);
      openbpu::fuzz::require(hbDNNGetInputSource(&source, model, i) == 0, kTarget, "hbDNNGetInputSource failed");
    } else {
      rc_name = hbDNNGetOutputName(&name, model, i);
      rc_properties = hbDNNGetOutputTensorProperties(&properties, model, i);
    }
    openbpu::fuzz::require(rc_name == 0 && name != nullptr && rc_properties == 0, kTarget,
                           "a port of a loaded model cannot be queried");
    // Touch what the properties point to (shift / scale arrays owned by the model).
    volatile int64_t sum = properties.alignedByteSize;
    for (int32_t c = 0; c < properties.shift.shiftLen; ++c) sum = sum + properties.shift.shiftData[c];
    for (int32_t c = 0; c < properties.scale.scaleLen; ++c) sum = sum + static_cast<int64_t>(properties.scale.scaleData[c]);
  }
}

void load_through_api(std::span<const uint8_t> file) {
  const void* data = file.data();
  int32_t length = static_cast<int32_t>(file.size());
  hbPackedDNNHandle_t packed = nullptr;
  if (const int32_t rc = hbDNNInitializeFromDDR(&packed, &data, &length, 1); rc != 0) {  // rejected with a code
    openbpu::fuzz::note_rejection(kTarget, hbDNNGetErrorDesc(rc));
    return;
  }
  const char** names = nullptr;
  int32_t count = 0;
  openbpu::fuzz::require(hbDNNGetModelNameList(&names, &count, packed) == 0 && count > 0, kTarget,
                         "a loaded package lists no models");
  for (int32_t m = 0; m < count; ++m) {
    hbDNNHandle_t model = nullptr;
    openbpu::fuzz::require(hbDNNGetModelHandle(&model, packed, names[m]) == 0, kTarget,
                           "a listed model has no handle");
    query_ports(model, true);
    query_ports(model, false);
  }
  openbpu::fuzz::require(hbDNNRelease(packed) == 0, kTarget, "hbDNNRelease of a loaded package failed");
}

void load_through_tools(std::span<const uint8_t> file) {
  openbpu::format::ModelFile model;
  if (const openbpu::format::Status st = openbpu::format::ModelFile::from_bytes(file, &model); !st.ok()) {
    openbpu::fuzz::note_rejection(kTarget, st.message);
    return;
  }
  openbpu::format::PackageInfo package;
  const openbpu::format::Status st = openbpu::format::unpack_package(model.view(), &package);
  openbpu::fuzz::require(st.ok(), kTarget, "unpack_package of a verified file failed: " + st.message);
}

void try_file(std::span<const uint8_t> file) {
  load_through_api(file);
  load_through_tools(file);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace openbpu::format;
  const std::span<const uint8_t> input(data, size);
  try_file(input);
  if (size >= kFooterSize &&
      std::equal(kFooterMagic, kFooterMagic + sizeof(kFooterMagic), data + size - sizeof(kFooterMagic))) {
    std::vector<uint8_t> sealed;
    if (seal_flatbuffer(input.first(size - kFooterSize), &sealed).ok()) try_file(sealed);
  }
  return 0;
}
