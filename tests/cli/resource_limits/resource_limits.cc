// resource_limits: hostile but valid inputs through the command-line tools and the C API; each
// must be refused with an error naming the input and the rule, a non-zero exit, and a peak RSS
// under 1 GiB (the time each refusal took is printed, not asserted).
//
//   resource_limits CASE --work DIR --tool NAME=PATH...
//   resource_limits load-model FILE      (hbDNNInitializeFromFiles; a child of the model_file case)
//
// CASE (the inputs are made here, in DIR):
//   model_file         .bin files whose tensors claim terabytes: model inputs and outputs of 2^40
//                      elements; 2,048 BPU segments whose programs address 512 MiB each (1 TiB of
//                      device memory); a 1 TiB sparse file. Through hbDNNInitializeFromFiles,
//                      hrt_model_exec model_info and hb_model_info (which only prints the
//                      device-memory file: a bounded run).
//   onnx_shape         an ONNX model whose input and output have 2^40 elements, through hb_mapper
//                      checker, makertbin (--fast-perf and a yaml) and hb_compile; a model with
//                      symbolic dimensions given a 2^40-element --input-shape.
//   yaml_entries       configs of 10^6 entries: node_info as a mapping and as a string,
//                      run_on_cpu as a list, through hb_mapper and hb_compile; a 1 TiB sparse
//                      config file.
//   calibration_files  a cal_data_dir of 100,000 .npy files (hard links of one), through hb_mapper
//                      makertbin and hb_compile.
// Tools: hb_mapper, hb_compile, hb_model_info, hrt_model_exec. Each command runs with
// RLIMIT_DATA at 4 GiB, so that a regression fails here instead of exhausting the machine, and
// at most 120 s (a hang guard).
#include <onnx/onnx_pb.h>
#include <sys/resource.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "../child_process.h"
#include "dnn/hb_dnn.h"
#include "openbpu/common/npy.h"
#include "openbpu/format/model_file.h"
#include "openbpu/ir/parse.h"
#include "openbpu/simulator/isa.h"
#include "small_model.h"

namespace fs = std::filesystem;
using openbpu::cli_test::Child;
using openbpu::cli_test::ChildExit;

namespace {

constexpr long kMaxPeakRssKib = 1024 * 1024;  // 1 GiB
constexpr double kHangGuardSeconds = 120;

struct Context {
  fs::path work;
  std::map<std::string, std::string> tools;
  std::string self;
  int failures = 0;

  const std::string& tool(const std::string& name) const {
    const auto it = tools.find(name);
    if (it == tools.end()) throw std::runtime_error("--tool " + name + "=PATH is missing");
    return it->second;
  }
};

std::string read_text(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void write_bytes(const fs::path& file, std::string_view bytes) {
  std::ofstream out(file, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out.flush()) throw std::runtime_error("cannot write " + file.string());
}

// A sparse file of `bytes` bytes (nothing is written to disk).
void write_sparse(const fs::path& file, uint64_t bytes) {
  std::ofstream(file, std::ios::binary).put('x');
  fs::resize_file(file, bytes);
}

// Runs `argv` (output to <label>.out in the work folder) and checks the refusal: a non-zero exit
// (not a signal), every `expected` text in the output, peak RSS under 1 GiB. With `refused` false
// the run must succeed instead (a bounded run: a tool that has nothing to allocate).
void expect_refusal(Context& cx, const std::string& label, const std::vector<std::string>& argv,
                    const std::vector<std::string>& expected, bool refused = true) {
  const fs::path output = cx.work / (label + ".out");
  Child child(argv, cx.work, output, uint64_t{4} << 30);
  const bool ended = child.wait_for(kHangGuardSeconds);
  if (!ended) child.kill();
  const ChildExit exit = child.wait();
  const std::string text = read_text(output);
  std::vector<std::string> problems;
  if (!ended)
    problems.push_back("still running after " + std::to_string(kHangGuardSeconds) + " s (killed)");
  if (exit.signal != 0 && ended)
    problems.push_back("ended by signal " + std::to_string(exit.signal));
  if (refused && exit.exit_code == 0) problems.push_back("exit 0: the input was accepted");
  if (!refused && exit.exit_code != 0)
    problems.push_back("exit " + std::to_string(exit.exit_code) + ", not 0");
  for (const std::string& e : expected) {
    if (text.find(e) == std::string::npos) problems.push_back("the output lacks '" + e + "'");
  }
  if (exit.peak_rss_kib >= kMaxPeakRssKib) {
    problems.push_back("peak RSS " + std::to_string(exit.peak_rss_kib / 1024) +
                       " MiB, not under 1 GiB");
  }
  // The first line naming the rule, for the log of the test.
  std::string line = expected.empty() ? "" : expected.front();
  for (std::istringstream lines(text); std::getline(lines, line);) {
    if (!expected.empty() && line.find(expected.front()) != std::string::npos) break;
  }
  std::printf("%-34s exit %d in %6.2f s, peak RSS %6.1f MiB%s\n    %s\n", label.c_str(),
              exit.exit_code, exit.seconds, exit.peak_rss_kib / 1024.0,
              problems.empty() ? "" : "  FAILED", line.substr(0, 400).c_str());
  for (const std::string& p : problems)
    std::printf("    FAILED: %s (see %s)\n", p.c_str(), output.c_str());
  cx.failures += problems.empty() ? 0 : 1;
}

// ------------------------------------------------------------------ model files

openbpu::format::PackageInfo small_package() {
  using namespace openbpu;
  const ir::Model model = ir::parse_model(kModelText);
  std::vector<uint8_t> bytes;
  format::Status st = compile_bayes_model_file(model, random_input(1), "small", "test", &bytes);
  format::ModelFile file;
  if (st.ok()) st = format::ModelFile::from_bytes(bytes, &file);
  format::PackageInfo package;
  if (st.ok()) st = format::unpack_package(file.view(), &package);
  if (!st.ok()) throw std::runtime_error("the small model: " + st.message);
  return package;
}

// Serialized with the model-file checks, unless `unchecked` (a file they refuse).
void save(const openbpu::format::PackageInfo& package, const fs::path& file,
          bool unchecked = false) {
  std::vector<uint8_t> bytes;
  const openbpu::format::Status st =
      unchecked ? openbpu::format::serialize_package_unchecked(package, &bytes)
                : openbpu::format::serialize_package(package, &bytes);
  if (!st.ok()) throw std::runtime_error(file.string() + ": " + st.message);
  write_bytes(file, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

// A float32 tensor of 2^40 elements (4 TiB), dense NCHW.
void claim_terabytes(openbpu::format::TensorInfo& t) {
  t.valid_shape = t.aligned_shape = {1, 1024, 1024, int64_t{1} << 20};
  t.tensor_type = openbpu::format::TensorType::TENSOR_TYPE_F32;
  t.quanti_type = openbpu::format::QuantiType::NONE;
  t.shift.clear();
  t.scale.clear();
  t.zero_point.clear();
  t.quantize_axis = -1;
  t.aligned_byte_size = uint64_t{4} << 40;
  t.stride = {int64_t{4} << 40, int64_t{4} << 30, int64_t{4} << 20, 4};
}

// The small model with its first BPU segment repeated until its programs claim 1 TiB: each copy
// reads what the original reads, writes a tensor of its own and addresses 512 MiB.
openbpu::format::PackageInfo device_memory_package(openbpu::format::PackageInfo package) {
  using namespace openbpu::format;
  ModelInfo& m = package.models.front();
  size_t at = 0;
  while (at < m.segments.size() && !std::holds_alternative<BpuSegmentInfo>(m.segments[at].body))
    ++at;
  if (at == m.segments.size()) throw std::runtime_error("the small model has no BPU segment");
  BpuSegmentInfo bpu = std::get<BpuSegmentInfo>(m.segments[at].body);
  openbpu::simulator::isa::ProgramHeader header{};
  std::memcpy(&header, bpu.program.data(), sizeof header);
  header.memory_bytes = openbpu::simulator::isa::kMaxMemoryBytes;
  std::memcpy(bpu.program.data(), &header, sizeof header);
  const TensorRefInfo written = bpu.outputs.front();
  if (written.kind != TensorRefKind::INTERMEDIATE)
    throw std::runtime_error("unexpected first BPU output");
  const TensorInfo like = m.tensors[written.index];
  std::vector<SegmentInfo> copies;
  for (int k = 0; k < 2048; ++k) {
    TensorInfo t = like;
    t.name = like.name + "_copy" + std::to_string(k);
    m.tensors.push_back(t);
    BpuSegmentInfo copy = bpu;
    copy.outputs = {TensorRefInfo::intermediate(static_cast<uint32_t>(m.tensors.size() - 1))};
    copies.push_back({m.segments[at].name + "_copy" + std::to_string(k), copy});
  }
  m.segments.insert(m.segments.begin() + static_cast<std::ptrdiff_t>(at) + 1, copies.begin(),
                    copies.end());
  return package;
}

void model_file_case(Context& cx) {
  const openbpu::format::PackageInfo small = small_package();
  openbpu::format::PackageInfo tensors = small;
  for (auto& t : tensors.models.front().inputs) claim_terabytes(t);
  for (auto& t : tensors.models.front().outputs) claim_terabytes(t);
  save(tensors, cx.work / "tensors.bin", /*unchecked=*/true);
  save(device_memory_package(small), cx.work / "device_memory.bin");
  std::printf("device_memory.bin: %ju bytes\n",
              static_cast<uintmax_t>(fs::file_size(cx.work / "device_memory.bin")));
  write_sparse(cx.work / "terabyte.bin", uint64_t{1} << 40);

  const std::string tensor_rule =
      "aligned_byte_size 4398046511104 exceeds the 2147483647 bytes (2 GiB) a tensor may hold (the "
      "C API's int32 "
      "alignedByteSize)";
  const std::string memory_rule =
      "the programs of a model address at most 536870912 bytes (512 MiB) together";
  const std::string size_rule =
      "a model file holds a flatbuffer under 2147483647 bytes (2 GiB) and a 16-byte footer";
  for (const auto& [file, rule] :
       std::vector<std::pair<std::string, std::string>>{{"tensors.bin", tensor_rule},
                                                        {"device_memory.bin", memory_rule},
                                                        {"terabyte.bin", size_rule}}) {
    const std::string path = (cx.work / file).string();
    const std::string stem = fs::path(file).stem().string();
    expect_refusal(cx, stem + " hbDNNInitializeFromFiles", {cx.self, "load-model", path},
                   {rule, path});
    expect_refusal(cx, stem + " hrt_model_exec model_info",
                   {cx.tool("hrt_model_exec"), "model_info", "--model_file", path}, {rule});
    if (file ==
        "device_memory.bin") {  // hb_model_info allocates no device memory: it prints the model
      expect_refusal(cx, stem + " hb_model_info", {cx.tool("hb_model_info"), path},
                     {"******** small info"},
                     /*refused=*/false);
    } else {
      expect_refusal(cx, stem + " hb_model_info", {cx.tool("hb_model_info"), path}, {rule, path});
    }
  }
}

int load_model(const std::string& file) {
  hbPackedDNNHandle_t packed = nullptr;
  const char* files[] = {file.c_str()};
  const int32_t status = hbDNNInitializeFromFiles(&packed, files, 1);
  std::printf("hbDNNInitializeFromFiles: %d %s\n", status, hbDNNGetErrorDesc(status));
  if (status == 0) hbDNNRelease(packed);
  return status == 0 ? 0 : 1;
}

}  // namespace

namespace {

// ------------------------------------------------------------------ ONNX, yaml, calibration

// y = Relu(x), float32 of the given dimensions (a number, or a name for a symbolic one).
void write_relu_onnx(const fs::path& file, const std::vector<std::string>& dims) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("relu");
  onnx::NodeProto* n = g->add_node();
  n->set_name("relu");
  n->set_op_type("Relu");
  n->add_input("x");
  n->add_output("y");
  g->add_input()->set_name("x");
  g->add_output()->set_name("y");
  for (onnx::ValueInfoProto* v : {g->mutable_input(0), g->mutable_output(0)}) {
    onnx::TypeProto_Tensor* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    for (const std::string& d : dims) {
      onnx::TensorShapeProto_Dimension* dim = t->mutable_shape()->add_dim();
      if (std::isdigit(static_cast<unsigned char>(d[0]))) {
        dim->set_dim_value(std::stoll(d));
      } else {
        dim->set_dim_param(d);
      }
    }
  }
  write_bytes(file, m.SerializeAsString());
}

// A conversion config of `model` (input 'x', featuremap), `extra_model` and `extra_calibration`
// lines added to their groups.
std::string config_yaml(const fs::path& model, const std::string& march, const std::string& name,
                        const fs::path& cal_dir, const std::string& extra_model = "",
                        const std::string& extra_calibration = "") {
  return "model_parameters:\n  onnx_model: '" + model.string() + "'\n  march: '" + march +
         "'\n  working_dir: '" + name + "_out'\n  output_model_file_prefix: '" + name + "'\n" +
         extra_model +
         "input_parameters:\n  input_name: 'x'\n  input_type_train: 'featuremap'\n  input_type_rt: "
         "'featuremap'\n"
         "  input_layout_train: 'NCHW'\n  norm_type: 'no_preprocess'\n"
         "calibration_parameters:\n  calibration_type: 'default'\n  cal_data_dir: '" +
         cal_dir.string() + "'\n" + extra_calibration +
         "compiler_parameters:\n  optimize_level: 'O2'\n";
}

// A folder of `count` .npy samples of float32[1,3,4,4]: hard links, a new file every 50,000
// (ext4 allows 65,000 links to one).
void write_samples(const fs::path& dir, size_t count) {
  fs::create_directories(dir);
  const openbpu::kernels::Tensor t(openbpu::kernels::DataType::kFloat32, {1, 3, 4, 4});
  fs::path original;
  for (size_t i = 0; i < count; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "%06zu.npy", i);
    if (i % 50000 == 0) {
      original = dir / name;
      openbpu::write_npy(original, t);
    } else {
      fs::create_hard_link(original, dir / name);
    }
  }
}

void onnx_shape_case(Context& cx) {
  const fs::path big = cx.work / "big.onnx", dynamic = cx.work / "dynamic.onnx";
  write_relu_onnx(big, {"1", "1024", "1024", "1048576"});
  write_relu_onnx(dynamic, {"n", "c", "h", "w"});
  write_samples(cx.work / "cal", 1);
  write_bytes(cx.work / "big.yaml", config_yaml(big, "bayes-e", "big", cx.work / "cal"));
  write_bytes(cx.work / "big_nash.yaml", config_yaml(big, "nash-e", "big_nash", cx.work / "cal"));
  const std::string rule =
      "float32[1,1024,1024,1048576] needs 4398046511104 bytes; a tensor holds at most 2147483647 "
      "(2 GiB)";
  const std::vector<std::string> expected = {"tensor 'x' (graph input): " + rule, big.string()};
  const std::string& mapper = cx.tool("hb_mapper");
  expect_refusal(
      cx, "hb_mapper checker",
      {mapper, "checker", "--model-type", "onnx", "--march", "bayes-e", "--model", big.string()},
      expected);
  expect_refusal(
      cx, "hb_mapper makertbin --fast-perf",
      {mapper, "makertbin", "--fast-perf", "--model", big.string(), "--march", "bayes-e"},
      expected);
  expect_refusal(
      cx, "hb_mapper makertbin --config",
      {mapper, "makertbin", "--config", (cx.work / "big.yaml").string(), "--model-type", "onnx"},
      expected);
  expect_refusal(cx, "hb_compile --config",
                 {cx.tool("hb_compile"), "--config", (cx.work / "big_nash.yaml").string()},
                 expected);
  expect_refusal(
      cx, "hb_mapper checker --input-shape",
      {mapper, "checker", "--model-type", "onnx", "--march", "bayes-e", "--model", dynamic.string(),
       "--input-shape", "x", "1x1024x1024x1048576"},
      {"tensor 'x' (graph input): " + rule, dynamic.string() + " with the config's inputs"});
}

// `count` entries made by `entry(i)`, joined by `separator`.
template <typename Entry>
std::string entries(size_t count, const std::string& separator, Entry entry) {
  std::string text;
  for (size_t i = 0; i < count; ++i)
    text += (i ? separator : "") + entry("node" + std::to_string(i));
  return text;
}

void yaml_entries_case(Context& cx) {
  const fs::path small = cx.work / "small.onnx", cal = cx.work / "cal";
  write_relu_onnx(small, {"1", "3", "4", "4"});
  write_samples(cal, 1);
  const size_t n = 1000000;
  // Written one at a time: the commands run after this function's texts are freed (a child's
  // peak RSS starts at the driver's RSS when it forks).
  auto write = [&](const std::string& file, const std::string& march,
                   const std::string& model_lines, const std::string& calibration_lines) {
    const std::string text = config_yaml(small, march, fs::path(file).stem().string(), cal,
                                         model_lines, calibration_lines);
    write_bytes(cx.work / file, text);
    std::printf("%s: %zu bytes\n", file.c_str(), text.size());
  };
  // 10^6 node_info entries in block style (25 MB), for both tools; 10^6 run_on_cpu names in a flow
  // list (2 bytes each); node_info as a string of 10^5 entries (the string's own yaml).
  write("node_info_map.yaml", "bayes-e",
        "  node_info:\n" +
            entries(n, "", [](const std::string& m) { return "    " + m + ": {ON: CPU}\n"; }),
        "");
  write("node_info_map_nash.yaml", "nash-e",
        "  node_info:\n" +
            entries(n, "", [](const std::string& m) { return "    " + m + ": {ON: CPU}\n"; }),
        "");
  write("run_on_cpu_list.yaml", "bayes-e", "",
        "  run_on_cpu: [" + entries(n, ",", [](const std::string&) { return std::string("n"); }) +
            "]\n");
  write("node_info_string.yaml", "bayes-e",
        "  node_info: \"{" +
            entries(n / 10, ", ", [](const std::string& m) { return m + ": {ON: CPU}"; }) + "}\"\n",
        "");
  write_sparse(cx.work / "terabyte.yaml", uint64_t{1} << 40);

  const std::string size_rule = " bytes; a conversion config is at most 4194304 bytes (4 MiB)";
  const std::string node_rule =
      "holds more than 100000 yaml nodes (keys, values and list items); a conversion config holds "
      "at most 100000";
  auto mapper = [&](const std::string& file) {
    return std::vector<std::string>{cx.tool("hb_mapper"),      "makertbin",    "--config",
                                    (cx.work / file).string(), "--model-type", "onnx"};
  };
  const std::string parse_failed = "yaml file parse failed";
  const std::string map = (cx.work / "node_info_map.yaml").string(),
                    map_nash = (cx.work / "node_info_map_nash.yaml").string();
  expect_refusal(
      cx, "hb_mapper node_info_map.yaml", mapper("node_info_map.yaml"),
      {"the config file '" + map + "' is " + std::to_string(fs::file_size(map)) + size_rule,
       parse_failed});
  expect_refusal(cx, "hb_compile node_info_map_nash.yaml",
                 {cx.tool("hb_compile"), "--config", map_nash},
                 {"the config file '" + map_nash + "' is " +
                      std::to_string(fs::file_size(map_nash)) + size_rule,
                  parse_failed});
  expect_refusal(cx, "hb_mapper run_on_cpu_list.yaml", mapper("run_on_cpu_list.yaml"),
                 {(cx.work / "run_on_cpu_list.yaml").string() + ": " + node_rule, parse_failed});
  expect_refusal(cx, "hb_mapper node_info_string.yaml", mapper("node_info_string.yaml"),
                 {"Key 'node_info' error: the mapping in the string " + node_rule, parse_failed});
  const std::string terabyte = (cx.work / "terabyte.yaml").string();
  expect_refusal(cx, "hb_mapper terabyte.yaml", mapper("terabyte.yaml"),
                 {"the config file '" + terabyte + "' is 1099511627776" + size_rule, parse_failed});
}

void calibration_files_case(Context& cx) {
  const fs::path small = cx.work / "small.onnx", cal = cx.work / "cal";
  write_relu_onnx(small, {"1", "3", "4", "4"});
  const auto start = std::chrono::steady_clock::now();
  write_samples(cal, 100000);
  std::printf("100000 calibration files linked in %.2f s\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  write_bytes(cx.work / "cal.yaml", config_yaml(small, "bayes-e", "cal", cal));
  write_bytes(cx.work / "cal_nash.yaml", config_yaml(small, "nash-e", "cal_nash", cal));
  const std::vector<std::string> expected = {
      "cal_data_dir '" + cal.string() +
      "' of input 'x' holds more than 10000 files; calibration reads at most "
      "10000 samples"};
  expect_refusal(cx, "hb_mapper makertbin",
                 {cx.tool("hb_mapper"), "makertbin", "--config", (cx.work / "cal.yaml").string(),
                  "--model-type", "onnx"},
                 expected);
  expect_refusal(cx, "hb_compile",
                 {cx.tool("hb_compile"), "--config", (cx.work / "cal_nash.yaml").string()},
                 expected);
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 2 && args[0] == "load-model") return load_model(args[1]);
  if (args.size() < 3 || args[1] != "--work") {
    std::cerr << "usage: resource_limits CASE --work DIR --tool NAME=PATH...\n";
    return 2;
  }
  try {
    Context cx;
    cx.work = fs::absolute(args[2]);
    cx.self = fs::canonical("/proc/self/exe").string();
    for (size_t i = 3; i + 1 < args.size(); i += 2) {
      const size_t eq = args[i + 1].find('=');
      if (args[i] != "--tool" || eq == std::string::npos)
        throw std::runtime_error("expected --tool NAME=PATH");
      cx.tools[args[i + 1].substr(0, eq)] = fs::absolute(args[i + 1].substr(eq + 1)).string();
    }
    fs::remove_all(cx.work);
    fs::create_directories(cx.work);
    const std::string& name = args[0];
    if (name == "model_file") {
      model_file_case(cx);
    } else if (name == "onnx_shape") {
      onnx_shape_case(cx);
    } else if (name == "yaml_entries") {
      yaml_entries_case(cx);
    } else if (name == "calibration_files") {
      calibration_files_case(cx);
    } else {
      throw std::runtime_error("unknown case '" + name + "'");
    }
    std::printf("resource_limits %s: %s\n", name.c_str(), cx.failures == 0 ? "OK" : "FAILED");
    if (cx.failures == 0) fs::remove_all(cx.work);
    return cx.failures == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "resource_limits: " << e.what() << "\n";
    return 1;
  }
}
