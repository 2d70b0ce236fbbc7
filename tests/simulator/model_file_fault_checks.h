// The corruption bar of a model file (model_file_faults and the compiler's unit tests): every
// corruption class must be rejected with a message, never crash (run under ASan/UBSan).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace openbpu::testing {

struct FaultReport {
  std::vector<std::string> lines;     // one per corruption class, with an example message
  std::vector<std::string> accepted;  // corruptions that were accepted but must not be
};

// Loads `file` as the runtime would (container, then every BPU program); "" when it loads.
std::string model_file_load_error(const std::vector<uint8_t>& file);

// Truncations at 20 offsets, 200 single-bit flips, a wrong identifier and a future version
// (re-sealed with a valid CRC), and `program_flips` bit flips inside BPU programs (re-sealed):
// refused by the decoder, or — if the program still decodes — run on the device without error.
FaultReport model_file_faults(const std::vector<uint8_t>& file, int program_flips = 200, uint32_t seed = 20261123);

}  // namespace openbpu::testing
