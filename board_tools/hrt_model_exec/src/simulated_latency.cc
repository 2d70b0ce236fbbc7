#include "openbpu/hrt/simulated_latency.h"

#include <algorithm>
#include <string>
#include <variant>

#include "openbpu/format/model_file.h"
#include "openbpu/simulator/march.h"
#include "openbpu/simulator/program.h"
#include "openbpu/simulator/timing.h"

namespace openbpu::hrt {

SimulatedLatency simulated_bpu_latency(const std::string& model_file, const std::string& model_name) {
  SimulatedLatency r;
  format::ModelFile file;
  format::Status status = format::ModelFile::load(model_file, &file);
  format::PackageInfo package;
  if (status.ok()) status = format::unpack_package(file.view(), &package);
  if (!status.ok()) {
    r.error = status.message;
    return r;
  }
  for (const format::ModelInfo& model : package.models) {
    if (model.name != model_name) continue;
    const auto march = simulator::march_from_name(model.march);
    if (!march) {
      r.error = "model '" + model.name + "': unknown march '" + model.march + "'";
      return r;
    }
    int cores = 1;
    for (const auto& [key, value] : model.compile_parameters) {
      if (key == "compiler_parameters.core_num") {
        try {
          cores = std::max(1, std::stoi(value));
        } catch (...) {
          cores = 1;
        }
      }
    }
    const simulator::MarchSpec& spec = simulator::march_spec(*march);
    r.march = model.march;
    for (const format::SegmentInfo& segment : model.segments) {
      const auto* bpu = std::get_if<format::BpuSegmentInfo>(&segment.body);
      if (bpu == nullptr) continue;
      const simulator::DecodeResult decoded = simulator::decode_program(bpu->program, bpu->weights);
      if (!decoded.ok) {
        r.error = "segment '" + segment.name + "': " + decoded.error;
        return r;
      }
      r.latency_us += simulator::estimate_program(decoded.program, spec, cores).latency_us;
      ++r.segments;
    }
    r.ok = true;
    return r;
  }
  r.error = "model '" + model_name + "' is not in " + model_file;
  return r;
}

}  // namespace openbpu::hrt
