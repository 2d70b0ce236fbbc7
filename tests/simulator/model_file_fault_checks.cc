// The corruption bar of a model file (model_file_fault_checks.h).
#include "model_file_fault_checks.h"

#include <chrono>
#include <cstring>
#include <random>
#include <span>

#include "openbpu/format/model_file.h"
#include "openbpu/simulator/device.h"
#include "openbpu/simulator/program.h"

namespace openbpu::testing {

namespace {

// Loads and verifies `bytes` as the runtime would: container, then every BPU program.
std::string load_error_of(std::span<const uint8_t> bytes) {
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

std::string model_file_load_error(const std::vector<uint8_t>& file) { return load_error_of(file); }

FaultReport model_file_faults(const std::vector<uint8_t>& file, int program_flips, uint32_t seed) {
  FaultReport report;
  auto expect_rejected = [&](const std::vector<uint8_t>& bytes, const std::string& what) {
    const std::string e = model_file_load_error(bytes);
    if (e.empty()) report.accepted.push_back(what);
    return e;
  };

  // Truncations.
  std::string example;
  for (int i = 0; i < 20; ++i) {
    const size_t n = file.size() * static_cast<size_t>(i) / 20 + static_cast<size_t>(i);
    example = expect_rejected(std::vector<uint8_t>(file.begin(), file.begin() + static_cast<long>(std::min(n, file.size() - 1))),
                              "truncated to " + std::to_string(n) + " bytes");
  }
  report.lines.push_back("20 truncations rejected, e.g. \"" + example + "\"");

  std::mt19937 rng(seed);
  for (int i = 0; i < 200; ++i) {
    std::vector<uint8_t> bad = file;
    const size_t at = rng() % bad.size();
    bad[at] ^= static_cast<uint8_t>(1u << (rng() % 8));
    example = expect_rejected(bad, "bit flip at byte " + std::to_string(at));
  }
  report.lines.push_back("200 bit flips rejected, e.g. \"" + example + "\"");

  {
    std::vector<uint8_t> bad = file;
    std::memcpy(bad.data() + 4, "XXXX", 4);  // the flatbuffer file identifier
    report.lines.push_back("wrong identifier: \"" + expect_rejected(reseal(bad), "wrong identifier") + "\"");
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
    report.lines.push_back("future version: \"" + expect_rejected(reseal(bad), "future version") + "\"");
  }

  // Flips inside BPU programs, re-sealed: refused by the decoder, or harmless when run.
  format::ModelFile intact;
  if (!format::ModelFile::from_bytes(file, &intact).ok()) {
    report.accepted.push_back("(the intact file does not load)");
    return report;
  }
  format::PackageInfo package;
  if (!format::unpack_package(intact.view(), &package).ok()) {
    report.accepted.push_back("(the intact file does not unpack)");
    return report;
  }
  int refused = 0, ran = 0;
  for (int i = 0; i < program_flips; ++i) {
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
      report.accepted.push_back("decoded but not loadable: " + loaded.message);
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
      report.accepted.push_back("decoded program did not run: " + job.message);
      continue;
    }
    ++ran;
  }
  report.lines.push_back(std::to_string(program_flips) + " program bit flips: " + std::to_string(refused) +
                         " refused by the decoder, " + std::to_string(ran) + " still valid programs ran cleanly");
  return report;
}

}  // namespace openbpu::testing
