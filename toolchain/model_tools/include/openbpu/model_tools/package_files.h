// Reading, packing and writing model files (.bin / .hbm) for the host tools. Errors are
// openbpu::Error with one line naming the file, model and rule.
#pragma once

#include <string>
#include <vector>

#include "openbpu/format/model_file.h"

namespace openbpu::model_tools {

// The package in `path`, after the container checks of runtime/format and the simulator's
// decoder on every BPU program (what the runtime checks when it loads the file).
format::PackageInfo read_package(const std::string& path);

// A file packed by hb_pack: it holds more than one model (the compiler writes one per file).
bool is_packed(const format::PackageInfo& package);

// The model named `name` (any model when `name` is empty and the package holds one); raises
// naming the models the file has otherwise. `path` names the file in the message.
format::ModelInfo& select_model(format::PackageInfo& package, const std::string& name,
                                const std::string& path);

struct ModelFileInput {
  std::string path;
  format::PackageInfo package;
};

// hb_pack: one package holding the models of every input, in order. Refuses fewer than two
// inputs, a packed input ("<path> is a packed model, it can not be packed again!"), a model
// name used twice, and models of different marches (one file runs on one chip).
format::PackageInfo pack_packages(const std::vector<ModelFileInput>& inputs);

// Serializes (deterministically) and writes `package` atomically.
void write_package(const format::PackageInfo& package, const std::string& path);

}  // namespace openbpu::model_tools
