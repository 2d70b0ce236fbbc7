// model_file_faults: the corruption bar of the model file, on a real compiled model.
//
//   model_file_faults <model.bin>
// The file must load; then each corruption must be rejected with a message (never a crash):
// truncation at 20 offsets, 200 random single-bit flips (the CRC-32C footer catches them), a
// wrong file identifier and a future format version re-sealed with a valid CRC (so that the
// structural checks, not the checksum, must reject them), and 200 random bit flips inside BPU
// programs, re-sealed: the program decoder must refuse the program or, if it still decodes,
// the device must run it cleanly. The same checks run on a compiled test model under ASan/UBSan
// in compiler_test. Prints one line per class; exit 1 if a corruption was accepted.
#include <fstream>
#include <iostream>
#include <iterator>

#include "model_file_fault_checks.h"

int main(int argc, char** argv) {
  using namespace openbpu::testing;
  if (argc != 2) {
    std::cerr << "usage: model_file_faults <model.bin>\n";
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  const std::vector<uint8_t> file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (const std::string e = model_file_load_error(file); !e.empty()) {
    std::cerr << argv[1] << ": the intact file does not load: " << e << "\n";
    return 1;
  }
  const FaultReport report = model_file_faults(file);
  for (const std::string& line : report.lines) std::cout << line << "\n";
  for (const std::string& a : report.accepted) std::cerr << "ACCEPTED: " << a << "\n";
  return report.accepted.empty() ? 0 : 1;
}
