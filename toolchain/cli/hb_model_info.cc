// hb_model_info: prints what a model file (.bin / .hbm) holds, in the original's layout — the
// deps, the conversion parameters, input/output types and deleted nodes — after verifying it
// (the flatbuffers Verifier and semantic checks of runtime/format, then every BPU program
// through the simulator's decoder). A corrupted file gets one error line naming the rule it
// breaks and exit code 1. A model with deleted nodes (hb_model_modifier) also gets
// deleted_nodes_info.txt in the current directory, one line per node.
//
//   hb_model_info [-m <model name>] <model_file>
#include <CLI/CLI.hpp>
#include <iostream>
#include <span>

#include "openbpu/common/atomic_file.h"
#include "openbpu/common/error.h"
#include "openbpu/compiler/model_writer.h"
#include "openbpu/model_tools/package_files.h"

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
  try {
    format::PackageInfo package = model_tools::read_package(path);
    std::vector<const format::ModelInfo*> shown;
    if (model_name.empty()) {
      for (const format::ModelInfo& model : package.models) shown.push_back(&model);
    } else {
      shown.push_back(&model_tools::select_model(package, model_name, path));
    }
    std::string deleted;
    for (const format::ModelInfo* model : shown) {
      std::cout << "******** " << model->name << " info *********\n"
                << compiler::describe_model(*model) << "\n";
      for (const format::DeletedNodeInfo& d : model->deleted_nodes) {
        deleted += (shown.size() > 1 ? "model: " + model->name + "; " : "") +
                   compiler::describe_deleted_node(d) + "\n";
      }
    }
    // As the reference: the removed nodes' original information, one line each.
    if (!deleted.empty()) write_file_atomically("deleted_nodes_info.txt", deleted);
  } catch (const Error& e) {
    std::cerr << "ERROR " << e.what() << "\n";
    return 1;
  }
  return 0;
}
