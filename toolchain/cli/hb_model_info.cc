// hb_model_info: prints what a model file (.bin / .hbm) holds, in the original's layout — the
// deps, the conversion parameters, input/output types and deleted nodes — after verifying it
// (the flatbuffers Verifier and semantic checks of runtime/format, then every BPU program
// through the simulator's decoder). A corrupted file gets one error line naming the rule it
// breaks and exit code 1.
//
//   hb_model_info [-m <model name>] <model_file>
#include <iostream>
#include <span>

#include <CLI/CLI.hpp>

#include "openbpu/compiler/model_writer.h"
#include "openbpu/format/model_file.h"
#include "openbpu/simulator/program.h"

namespace {

constexpr const char* kVersion = OPENBPU_VERSION_STRING;

}  // namespace

int main(int argc, char** argv) {
  using namespace openbpu;
  CLI::App app{"Print the information of a model file (.bin / .hbm)"};
  std::string path, model_name;
  app.add_option("model_file", path, "the .bin / .hbm model file")->required();
  app.add_option("-m", model_name, "print only this model of a packed file");
  app.set_version_flag("--version", std::string("hb_model_info version ") + kVersion);
  CLI11_PARSE(app, argc, argv);

  std::cout << "Start hb_model_info....\n" << "hb_model_info version " << kVersion << "\n";
  format::ModelFile file;
  if (const format::Status st = format::ModelFile::load(path, &file); !st.ok()) {
    std::cerr << "ERROR " << st.message << "\n";
    return 1;
  }
  format::PackageInfo package;
  if (const format::Status st = format::unpack_package(file.view(), &package); !st.ok()) {
    std::cerr << "ERROR " << path << ": " << st.message << "\n";
    return 1;
  }
  // The BPU programs are opaque to the container: decode and verify each.
  for (const format::ModelInfo& model : package.models) {
    for (const format::SegmentInfo& segment : model.segments) {
      const auto* bpu = std::get_if<format::BpuSegmentInfo>(&segment.body);
      if (bpu == nullptr) continue;
      const simulator::DecodeResult decoded = simulator::decode_program(bpu->program, bpu->weights);
      if (!decoded.ok) {
        std::cerr << "ERROR " << path << ": model '" << model.name << "' segment '" << segment.name
                  << "': " << decoded.error << "\n";
        return 1;
      }
    }
  }
  bool found = model_name.empty();
  for (const format::ModelInfo& model : package.models) {
    if (!model_name.empty() && model.name != model_name) continue;
    found = true;
    std::cout << "******** " << model.name << " info *********\n" << compiler::describe_model(model) << "\n";
  }
  if (!found) {
    std::string names;
    for (const format::ModelInfo& model : package.models) names += (names.empty() ? "" : ", ") + model.name;
    std::cerr << "ERROR " << path << " has no model named '" << model_name << "' (it has: " << names << ")\n";
    return 1;
  }
  return 0;
}
