// model_file_faults: the corruption bar of the model file, on a real compiled model.
//
//   model_file_faults <model.bin>
// The file must load; then each corruption must be rejected with a message (never a crash;
// run under ASan/UBSan in the sanitizer build):
//   - truncation at 20 offsets spread over the file;
//   - 200 random single-bit flips (the CRC-32C footer catches them);
//   - a wrong file identifier and a future format version, re-sealed with a valid CRC so that
//     the structural checks (not the checksum) must reject them;
//   - 200 random bit flips inside BPU programs, re-sealed: the program decoder must refuse the
//     program or, if it still decodes, the device must run it without a memory error.
// Prints one line per class and exits 1 if any corruption was accepted where it must not be.
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <random>

#include "openbpu/format/model_file.h"
#include "openbpu/simulator/device.h"
#include "openbpu/simulator/program.h"

namespace {

using namespace openbpu;

// Loads and verifies `bytes` as the runtime would: container, then every BPU program.
std::string load_error(std::span<const uint8_t> bytes) {
  format::ModelFile file;
  if (const format::Status st = format::ModelFile::from_bytes(bytes, &file); !st.ok()) {
    return st.message.empty() ? std::string("(empty message)") : st.message;
  }
  format::PackageInfo package;
  if (const format::Status st = format::unpack_package(file.view(), &package); !st.ok()) return st.message;
  for (const format::ModelInfo& m : package.models) {
    for (const format::SegmentInfo& s : m.segments) {
      if (const auto* bpu = std::get_if<format::BpuSegmentInfo>(&s.body)) {
        const simulator::DecodeResult d = simulator::decode_program(bpu->program, bpu->weights);
        if (!d.ok) return d.error;
      }
    }
  }
  return "";
}

std::vector<uint8_t> reseal(const std::vector<uint8_t>& file) {
  std::vector<uint8_t> out;
  const std::span<const uint8_t> flatbuffer(file.data(), file.size() - format::kFooterSize);
  if (!format::seal_flatbuffer(flatbuffer, &out).ok()) return {};
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: model_file_faults <model.bin>\n";
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  const std::vector<uint8_t> file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (const std::string e = load_error(file); !e.empty()) {
    std::cerr << argv[1] << ": the intact file does not load: " << e << "\n";
    return 1;
  }
  int failures = 0;
  auto expect_rejected = [&](const std::vector<uint8_t>& bytes, const std::string& what) {
    const std::string e = load_error(bytes);
    if (e.empty()) {
      std::cerr << "ACCEPTED: " << what << "\n";
      ++failures;
    }
    return e;
  };

  // Truncations.
  std::string example;
  for (int i = 0; i < 20; ++i) {
    const size_t n = file.size() * static_cast<size_t>(i) / 20 + static_cast<size_t>(i);
    example = expect_rejected(std::vector<uint8_t>(file.begin(), file.begin() + static_cast<long>(std::min(n, file.size() - 1))),
                              "truncated to " + std::to_string(n) + " bytes");
  }
  std::cout << "20 truncations rejected, e.g. \"" << example << "\"\n";

  std::mt19937 rng(20261123);
  for (int i = 0; i < 200; ++i) {
    std::vector<uint8_t> bad = file;
    const size_t at = rng() % bad.size();
    bad[at] ^= static_cast<uint8_t>(1u << (rng() % 8));
    example = expect_rejected(bad, "bit flip at byte " + std::to_string(at));
  }
  std::cout << "200 bit flips rejected, e.g. \"" << example << "\"\n";

  {
    std::vector<uint8_t> bad = file;
    std::memcpy(bad.data() + 4, "XXXX", 4);  // the flatbuffer file identifier
    std::cout << "wrong identifier: \"" << expect_rejected(reseal(bad), "wrong identifier") << "\"\n";
  }
  {
    // Package.format_version is field 0 of the root table: find it through the vtable.
    std::vector<uint8_t> bad = file;
    uint32_t root;
    std::memcpy(&root, bad.data(), 4);
    int32_t vtable_offset;
    std::memcpy(&vtable_offset, bad.data() + root, 4);
    const size_t vtable = static_cast<size_t>(static_cast<int64_t>(root) - vtable_offset);
    uint16_t field0;
    std::memcpy(&field0, bad.data() + vtable + 4, 2);
    const uint32_t future = (format::kFormatVersionMajor + 1) * 1000;
    std::memcpy(bad.data() + root + field0, &future, 4);
    std::cout << "future version: \"" << expect_rejected(reseal(bad), "future version") << "\"\n";
  }

  // Flips inside BPU programs, re-sealed: refused by the decoder, or harmless when run.
  format::ModelFile intact;
  if (!format::ModelFile::from_bytes(file, &intact).ok()) return 1;
  format::PackageInfo package;
  if (!format::unpack_package(intact.view(), &package).ok()) return 1;
  int refused = 0, ran = 0;
  for (int i = 0; i < 200; ++i) {
    format::PackageInfo copy = package;
    std::vector<format::BpuSegmentInfo*> bpus;
    for (format::ModelInfo& m : copy.models) {
      for (format::SegmentInfo& s : m.segments) {
        if (auto* b = std::get_if<format::BpuSegmentInfo>(&s.body)) bpus.push_back(b);
      }
    }
    if (bpus.empty()) break;
    format::BpuSegmentInfo& b = *bpus[rng() % bpus.size()];
    b.program[rng() % b.program.size()] ^= static_cast<uint8_t>(1u << (rng() % 8));
    const simulator::DecodeResult d = simulator::decode_program(b.program, b.weights);
    if (!d.ok) {
      ++refused;
      continue;
    }
    // Still a valid program (a flipped bit in a field with slack): it must run cleanly.
    simulator::Device device;
    const simulator::DeviceResult loaded = device.load(b.program, b.weights);
    if (!loaded.ok()) {
      std::cerr << "decoded but not loadable: " << loaded.message << "\n";
      ++failures;
      continue;
    }
    std::vector<std::vector<uint8_t>> inputs, outputs;
    std::vector<std::span<const uint8_t>> in_spans;
    std::vector<std::span<uint8_t>> out_spans;
    for (const auto& d2 : d.program.inputs) inputs.emplace_back(simulator::element_count(d2) * simulator::isa::element_bytes(d2.type), 0);
    for (const auto& d2 : d.program.outputs) outputs.emplace_back(simulator::element_count(d2) * simulator::isa::element_bytes(d2.type), 0);
    for (auto& v : inputs) in_spans.emplace_back(v);
    for (auto& v : outputs) out_spans.emplace_back(v);
    const simulator::DeviceResult job = device.submit(loaded.id, in_spans, out_spans);
    if (!job.ok() || !device.wait(job.id, std::chrono::minutes(5)).ok()) {
      std::cerr << "decoded program did not run: " << job.message << "\n";
      ++failures;
      continue;
    }
    ++ran;
  }
  std::cout << "200 program bit flips: " << refused << " refused by the decoder, " << ran
            << " still valid programs ran cleanly\n";
  if (failures > 0) {
    std::cerr << failures << " corruption(s) accepted\n";
    return 1;
  }
  return 0;
}
