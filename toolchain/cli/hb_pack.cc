// hb_pack: packs several model files (.bin / .hbm) into one, as the reference's hb_pack does.
// The packed file holds every model under its own name; hb_model_info -m, hrt_model_exec
// --model_name and hbDNNGetModelNameList see each. A packed file cannot be packed again.
//
//   hb_pack BIN_FILE1 BIN_FILE2 ... -o comb.bin
#include <CLI/CLI.hpp>
#include <iostream>

#include "openbpu/common/error.h"
#include "openbpu/model_tools/package_files.h"

int main(int argc, char** argv) {
  using namespace openbpu;
  CLI::App app{"Pack several model files (.bin / .hbm) into one"};
  std::vector<std::string> paths;
  std::string output;
  app.add_option("bin_files", paths, "the model files to pack, in order")->required();
  app.add_option("-o,--output_name", output, "the packed file to write, e.g. comb.bin")->required();
  app.set_version_flag("--version", std::string("hb_pack version ") + OPENBPU_VERSION_STRING);
  CLI11_PARSE(app, argc, argv);
  try {
    std::vector<model_tools::ModelFileInput> inputs;
    for (const std::string& path : paths) inputs.push_back({path, model_tools::read_package(path)});
    const format::PackageInfo packed = model_tools::pack_packages(inputs);
    model_tools::write_package(packed, output);
    std::string names;
    for (const format::ModelInfo& m : packed.models) names += (names.empty() ? "" : ", ") + m.name;
    std::cout << "INFO packed " << packed.models.size() << " models (" << names << ") into "
              << output << "\n";
  } catch (const Error& e) {
    std::cerr << "ERROR exception in command: pack\nERROR " << e.what() << "\n";
    return 1;
  }
  return 0;
}
