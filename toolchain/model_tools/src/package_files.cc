#include "openbpu/model_tools/package_files.h"

#include <map>

#include "openbpu/common/error.h"
#include "openbpu/simulator/program.h"

namespace openbpu::model_tools {

format::PackageInfo read_package(const std::string& path) {
  format::ModelFile file;
  if (const format::Status st = format::ModelFile::load(path, &file); !st.ok()) raise(st.message);
  format::PackageInfo package;
  if (const format::Status st = format::unpack_package(file.view(), &package); !st.ok()) {
    raise(path, ": ", st.message);
  }
  // The BPU programs are opaque to the container: decode and verify each.
  for (const format::ModelInfo& model : package.models) {
    for (const format::SegmentInfo& segment : model.segments) {
      const auto* bpu = std::get_if<format::BpuSegmentInfo>(&segment.body);
      if (bpu == nullptr) continue;
      const simulator::DecodeResult decoded = simulator::decode_program(bpu->program, bpu->weights);
      if (!decoded.ok)
        raise(path, ": model '", model.name, "' segment '", segment.name, "': ", decoded.error);
    }
  }
  return package;
}

bool is_packed(const format::PackageInfo& package) {
  return package.models.size() > 1;
}

format::ModelInfo& select_model(format::PackageInfo& package, const std::string& name,
                                const std::string& path) {
  for (format::ModelInfo& model : package.models) {
    if (name.empty() ? package.models.size() == 1 : model.name == name) return model;
  }
  std::string names;
  for (const format::ModelInfo& model : package.models)
    names += (names.empty() ? "" : ", ") + model.name;
  if (name.empty()) raise(path, " holds several models (", names, "); choose one with -m");
  raise(path, " has no model named '", name, "' (it has: ", names, ")");
}

format::PackageInfo pack_packages(const std::vector<ModelFileInput>& inputs) {
  if (inputs.size() < 2) raise("hb_pack needs at least two model files, got ", inputs.size());
  format::PackageInfo packed;
  std::map<std::string, std::string> file_of;  // model name -> the file that brought it
  for (const ModelFileInput& in : inputs) {
    if (is_packed(in.package))
      raise("model: ", in.path, " is a packed model, it can not be packed again!");
    for (const format::ModelInfo& model : in.package.models) {
      if (auto [it, fresh] = file_of.emplace(model.name, in.path); !fresh) {
        raise("model name '", model.name, "' is in both ", it->second, " and ", in.path,
              "; the models of a packed file need unique names (output_model_file_prefix)");
      }
      if (!packed.models.empty() && model.march != packed.models.front().march) {
        raise(in.path, ": model '", model.name, "' is for march ", model.march, ", ",
              inputs.front().path, " for ", packed.models.front().march,
              "; a packed file runs on one chip");
      }
      packed.models.push_back(model);
    }
  }
  packed.toolchain_name = inputs.front().package.toolchain_name;
  packed.toolchain_version = inputs.front().package.toolchain_version;
  return packed;
}

void write_package(const format::PackageInfo& package, const std::string& path) {
  std::vector<uint8_t> bytes;
  if (const format::Status st = format::serialize_package(package, &bytes); !st.ok())
    raise(path, ": ", st.message);
  if (const format::Status st = format::save_model_file(path, bytes); !st.ok()) raise(st.message);
}

}  // namespace openbpu::model_tools
