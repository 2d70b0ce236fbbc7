// hb_model_modifier: removes CPU operators at a model's inputs and outputs from a model file, as
// the reference's tool does (rules in model_tools/edge_nodes.h). Each removal is recorded in the
// model (hb_model_info prints it, with the node's scale) and in hb_model_modifier.log; the
// caller then does the removed step, e.g. dequantizes an int8 output itself.
//
//   hb_model_modifier MODEL                       list the nodes that can be deleted
//   hb_model_modifier MODEL -r NODE [-r NODE]... [-a OPTYPE]... [-o OUT]
#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "openbpu/common/atomic_file.h"
#include "openbpu/common/error.h"
#include "openbpu/compiler/model_writer.h"
#include "openbpu/model_tools/edge_nodes.h"
#include "openbpu/model_tools/package_files.h"

namespace {

using namespace openbpu;

// "['a', 'b']", as the reference prints node lists.
std::string python_list(const std::vector<std::string>& names) {
  std::string s = "[";
  for (size_t i = 0; i < names.size(); ++i) s += (i ? ", '" : "'") + names[i] + "'";
  return s + "]";
}

// Console lines (INFO / ERROR) and the same lines, with details, for hb_model_modifier.log.
struct Log {
  std::ostringstream file;
  void info(const std::string& line) {
    std::cout << "INFO " << line << "\n";
    file << "INFO " << line << "\n";
  }
  void error(const std::string& line) {
    std::cerr << "ERROR " << line << "\n";
    file << "ERROR " << line << "\n";
  }
};

std::vector<std::string> names_of(const std::vector<model_tools::EdgeNode>& nodes) {
  std::vector<std::string> names;
  for (const model_tools::EdgeNode& n : nodes) names.push_back(n.name);
  return names;
}

void remove_one(format::ModelInfo& model, const std::string& name, Log& log) {
  const format::DeletedNodeInfo d = model_tools::remove_edge_node(model, name);
  log.info("Node '" + d.name + "' found, its OP type is '" + d.op_type + "'");
  for (const format::AttributeInfo& a : d.attributes) {
    if (a.name != "scale" && a.name != "scales") continue;
    log.info("scale: " + compiler::attribute_value(a) +
             "; zero point: 0. node info details are stored in hb_model_modifier log file");
  }
  log.file << "  " << compiler::describe_deleted_node(d) << "\n";
  log.info("Node '" + d.name + "' is removed");
}

int run(const std::string& path, const std::vector<std::string>& remove,
        const std::vector<std::string>& types, std::string output, Log& log) {
  format::PackageInfo package = model_tools::read_package(path);
  if (model_tools::is_packed(package)) raise("pack model is not supported");
  format::ModelInfo& model = package.models.front();
  if (remove.empty() && types.empty()) {
    log.info("Nodes that can be deleted: " +
             python_list(names_of(model_tools::removable_nodes(model))));
    return 0;
  }
  for (const std::string& type : types) {
    if (!model_tools::removable_at_input(type) && !model_tools::removable_at_output(type)) {
      raise("-a ", type,
            ": removable op types are Quantize, Transpose (inputs) and Dequantize, Cast, Reshape, ",
            "Softmax, Transpose (outputs)");
    }
  }
  log.info("Nodes that will be removed from this model: " + python_list(remove));
  if (!types.empty())
    log.info("Op types whose removable nodes will be removed: " + python_list(types));
  for (const std::string& name : remove) remove_one(model, name, log);
  for (const std::string& type : types) {
    // Sequential: removing one node may expose the next of the same type.
    for (bool removed = true; removed;) {
      removed = false;
      for (const model_tools::EdgeNode& n : model_tools::removable_nodes(model)) {
        if (n.op_type != type) continue;
        remove_one(model, n.name, log);
        removed = true;
        break;
      }
    }
  }
  if (output.empty()) {
    const std::filesystem::path p(path);
    output = p.stem().string() + "_modified" + p.extension().string();
  }
  model_tools::write_package(package, output);
  log.info("modified model saved as " + output);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Remove the CPU nodes at a model's inputs and outputs (.bin / .hbm)"};
  std::string path, output;
  std::vector<std::string> remove, types;
  app.add_option("model_file", path, "the model file")->required();
  app.add_option("-r", remove, "remove this node (repeatable; removed in order)");
  app.add_option("-a,--all", types, "remove every removable node of this op type (repeatable)");
  app.add_option("-o", output,
                 "the modified model's file (default: <model>_modified.bin in the current folder)");
  app.set_version_flag("--version",
                       std::string("hb_model_modifier version ") + OPENBPU_VERSION_STRING);
  CLI11_PARSE(app, argc, argv);
  Log log;
  int code = 1;
  try {
    code = run(path, remove, types, output, log);
  } catch (const openbpu::Error& e) {
    log.error(e.what());
  }
  try {
    openbpu::write_file_atomically("hb_model_modifier.log", log.file.str());
  } catch (const openbpu::Error& e) {
    std::cerr << "ERROR " << e.what() << "\n";
    return 1;
  }
  return code;
}
