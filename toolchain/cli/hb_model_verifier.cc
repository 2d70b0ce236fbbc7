// hb_model_verifier: runs one input through the quantized ONNX model (float executor), the .bin
// model on the x86 simulator (hbDNN runtime) and, given a board, the .bin model on the board
// (hrt_model_exec over SSH), and compares the three pairwise on every output. See
// docs/hb_model_verifier.md. Exit status: 0 all PASSED, 1 a mismatch, 2 an error.
#include <openssl/evp.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "openbpu/base/file_name.h"
#include "openbpu/common/error.h"
#include "openbpu/executor/float_executor.h"
#include "openbpu/frontend/onnx_model.h"
#include "openbpu/tensor_io/tensor_io.h"
#include "openbpu/verifier/board.h"
#include "openbpu/verifier/compare.h"
#include "openbpu/verifier/model_runs.h"

namespace {

using namespace openbpu;
using verifier::BoardSession;

struct Options {
  std::string quanti_model, bin_model, board, user = "root", key, known_hosts, fingerprint;
  std::string board_dir = "/userdata", board_tool;
  std::vector<std::string> inputs;
  int port = 22, digits = 5, timeout_s = 300, connect_timeout_s = 10;
};

// One run's outputs, dequantized, in the .bin model's output order.
using Outputs = std::vector<std::vector<double>>;

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) raise("cannot read ", path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string sha256_hex(const std::vector<uint8_t>& bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_sha256(), nullptr) != 1) raise("SHA-256 failed");
  std::string hex;
  char two[3];
  for (unsigned int i = 0; i < length; ++i) {
    std::snprintf(two, sizeof two, "%02x", digest[i]);
    hex += two;
  }
  return hex;
}

Outputs run_quantized(const Options& o, const verifier::BinModel& bin, const std::vector<tensor_io::InputData>& data) {
  ir::Model model = frontend::load_onnx(o.quanti_model);
  executor::FloatExecutor exec(model);
  std::map<std::string, kernels::Tensor> feeds;
  for (size_t i = 0; i < bin.inputs().size(); ++i) {
    const verifier::TensorInfo& in = bin.inputs()[i];
    const ir::Value* value = nullptr;
    for (const ir::Value* v : exec.required_inputs()) {
      if (v->name() == in.name) value = v;
    }
    if (value == nullptr) raise(o.quanti_model, ": no input '", in.name, "' (the .bin model's input ", i, ")");
    const std::optional<kernels::Shape> shape = value->type().static_shape();
    if (!shape) raise(o.quanti_model, ": input '", in.name, "' has no static shape (", value->type().to_string(), ")");
    try {
      feeds[in.name] = verifier::quantized_model_feed(data[i], in.properties, value->type().dtype, *shape);
    } catch (const Error& e) {
      raise(o.quanti_model, ": input '", in.name, "': ", e.what());
    }
  }
  const executor::RunResult result = exec.run(feeds);
  Outputs out;
  for (const verifier::TensorInfo& t : bin.outputs()) {
    size_t k = 0;
    while (k < result.names.size() && result.names[k] != t.name) ++k;
    if (k == result.names.size()) raise(o.quanti_model, ": no output '", t.name, "' (an output of the .bin model)");
    out.push_back(verifier::tensor_values(result.tensors[k], t.properties));
  }
  return out;
}

// The board's hrt_model_exec: --board-tool (looked up in --board-dir, where it runs), else the
// first of PATH, /userdata, /app. Every path the user gave reaches the shell through
// shell_quote() only, and is never echoed back through it.
std::string find_board_tool(BoardSession& board, const Options& o) {
  const std::string probe =
      o.board_tool.empty()
          ? "for p in \"$(command -v hrt_model_exec)\" /userdata/hrt_model_exec /app/hrt_model_exec /app/bin/hrt_model_exec; "
            "do if [ -n \"$p\" ] && [ -x \"$p\" ]; then echo \"$p\"; exit 0; fi; done; exit 3"
          : "cd " + verifier::shell_quote(o.board_dir) + " && test -x " + verifier::shell_quote(o.board_tool);
  const verifier::CommandResult r = board.run(probe, o.connect_timeout_s);
  std::string path = o.board_tool.empty() ? r.out : o.board_tool;
  if (o.board_tool.empty()) {
    while (!path.empty() && (path.back() == '\n' || path.back() == '\r')) path.pop_back();
  }
  if (r.exit_status != 0 || path.empty()) {
    raise("board ", board.name(), " has no hrt_model_exec (",
          o.board_tool.empty() ? "looked in PATH, /userdata and /app" : "no executable " + o.board_tool,
          "); install it with scripts/deploy_board.sh or pass --board-tool");
  }
  return path;
}

// Removes the board's work folder when the run ends, on every path.
struct RemoteFolder {
  BoardSession* board = nullptr;
  std::string path;
  ~RemoteFolder() {
    if (board == nullptr || path.empty()) return;
    try {
      (void)board->run("rm -rf " + verifier::shell_quote(path), 10);
    } catch (const Error& e) {
      std::cerr << "WARNING could not remove " << path << " from the board: " << e.what() << "\n";
    }
  }
};

// A fresh work folder under --board-dir (mktemp -d). Its path is mktemp's output without the
// final newline, checked to be --board-dir/hb_model_verifier.XXXXXX: a --board-dir holding a
// newline stays whole, and nothing but that folder is ever removed.
std::string make_work_folder(BoardSession& board, const Options& o) {
  const std::string prefix = o.board_dir + "/hb_model_verifier.";
  const verifier::CommandResult made =
      board.run("mktemp -d " + verifier::shell_quote(prefix + "XXXXXX"), o.connect_timeout_s);
  if (made.exit_status != 0) {
    raise("board ", board.name(), ": cannot create a work folder in ", o.board_dir, ": ", made.err);
  }
  const bool line = !made.out.empty() && made.out.back() == '\n';
  const std::string path = line ? made.out.substr(0, made.out.size() - 1) : made.out;
  const std::string name = path.substr(std::min(path.size(), prefix.size()));
  if (!line || path.compare(0, prefix.size(), prefix) != 0 || name.size() != 6 ||
      name.find_first_of("/\n") != std::string::npos) {
    raise("board ", board.name(), ": mktemp -d ", prefix, "XXXXXX printed '", made.out,
          "', not a folder of that name; nothing was uploaded");
  }
  return path;
}

// Each output's dense bytes as the board's hrt_model_exec dumped them.
std::vector<std::vector<uint8_t>> run_board(const Options& o, const verifier::BinModel& bin,
                                            const std::vector<tensor_io::InputData>& data) {
  verifier::BoardOptions bo;
  verifier::split_host_port(o.board, o.port, &bo.host, &bo.port);
  bo.user = o.user, bo.key_file = o.key, bo.known_hosts = o.known_hosts, bo.host_fingerprint = o.fingerprint;
  bo.connect_timeout_s = o.connect_timeout_s;
  BoardSession board(bo);
  std::cout << "board: " << board.name() << " connected\n";
  const std::string tool = find_board_tool(board, o);

  RemoteFolder folder;
  folder.path = make_work_folder(board, o);
  folder.board = &board;
  const std::string dir = folder.path;
  // The command names the work folder's files relative to --board-dir (where it runs): the
  // folder's own name is mktemp's, so no character of --board-dir reaches the tool's
  // comma-separated lists.
  const std::string work = dir.substr(o.board_dir.size() + 1);  // hb_model_verifier.XXXXXX

  const std::vector<uint8_t> model_bytes = read_file(o.bin_model);
  board.upload(model_bytes, dir + "/model.bin");
  std::string input_list;
  for (size_t i = 0; i < data.size(); ++i) {
    std::vector<uint8_t> dense =
        data[i].dense ? data[i].bytes : tensor_io::gather_valid(data[i].bytes.data(), bin.inputs()[i].properties);
    const std::string name = "/input_" + std::to_string(i) + ".bin";
    board.upload(dense, dir + name);
    input_list += (input_list.empty() ? "" : ",") + work + name;
  }
  // A damaged transfer must not pass for a model difference. The file goes in on stdin:
  // sha256sum escapes a file name with a newline or a backslash in its output line.
  const verifier::CommandResult sum =
      board.run("sha256sum < " + verifier::shell_quote(dir + "/model.bin"), o.connect_timeout_s);
  if (sum.exit_status != 0) {
    std::cerr << "WARNING board " << board.name() << " has no working sha256sum; the upload is not checked\n";
  } else if (sum.out.substr(0, 64) != sha256_hex(model_bytes)) {
    raise("board ", board.name(), ": the model arrived corrupted (SHA-256 on the board ", sum.out.substr(0, 64),
          ", here ", sha256_hex(model_bytes), ")");
  }

  const std::string command = "cd " + verifier::shell_quote(o.board_dir) + " && " + verifier::shell_quote(tool) +
                              " infer --model_file=" + verifier::shell_quote(work + "/model.bin") +
                              " --input_file=" + verifier::shell_quote(input_list) +
                              " --enable_dump=true --dump_format=bin --dump_path=" + verifier::shell_quote(work + "/out");
  std::cout << "board: " << command << "\n";
  const verifier::CommandResult r = board.run(command, o.timeout_s);
  if (r.exit_status != 0) {
    raise("board ", board.name(), ": hrt_model_exec failed (exit status ", r.exit_status, "): ",
          r.err.empty() ? r.out : r.err);
  }
  std::vector<std::vector<uint8_t>> out;
  for (size_t i = 0; i < bin.outputs().size(); ++i) {
    const verifier::TensorInfo& t = bin.outputs()[i];
    const size_t expected = tensor_io::dense_byte_size(t.properties);
    const std::string remote = dir + "/out/model_infer_output_" + std::to_string(i) + "_" + base::file_name_part(t.name) + ".bin";
    const std::vector<uint8_t> bytes = board.download(remote, expected);
    if (bytes.size() != expected) {
      raise("board ", board.name(), ": ", remote, " holds ",
            bytes.size() > expected ? "more than " + std::to_string(expected) : std::to_string(bytes.size()),
            " bytes; output ", i, " '", t.name, "' is ", tensor_io::tensor_type_name(t.properties.tensorType), " of validShape ",
            tensor_io::shape_text(t.properties.validShape), ": hrt_model_exec dumps its valid elements, dense, ", expected, " bytes");
    }
    out.push_back(bytes);
  }
  return out;
}

// argv with the original's single-dash long flags (-quanti_model) as CLI11 spells them.
std::vector<std::string> normalized_arguments(int argc, char** argv) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.size() > 2 && a[0] == '-' && a[1] != '-') {
      const std::string name = a.substr(1, a.find('=') == std::string::npos ? std::string::npos : a.find('=') - 1);
      if (name.size() > 1) a = "-" + a;
    }
    args.push_back(a);
  }
  std::reverse(args.begin(), args.end());  // CLI11's parse(vector) takes them reversed
  return args;
}

int verify(const Options& o) {
  verifier::BinModel bin(o.bin_model);
  std::cout << "bin model: " << o.bin_model << " (model '" << bin.model_name() << "', " << bin.inputs().size()
            << " input(s), " << bin.outputs().size() << " output(s))\n";
  std::vector<std::string> files;
  for (const std::string& list : o.inputs) {
    size_t start = 0;
    while (start <= list.size()) {
      const size_t comma = list.find(',', start);
      const std::string item = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (!item.empty()) files.push_back(item);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  if (!files.empty() && files.size() != bin.inputs().size()) {
    raise("--input-img gives ", files.size(), " file(s); the model has ", bin.inputs().size(), " input(s), one file each");
  }
  std::vector<tensor_io::InputData> data;
  for (size_t i = 0; i < bin.inputs().size(); ++i) {
    const verifier::TensorInfo& in = bin.inputs()[i];
    if (files.empty()) {
      data.push_back(tensor_io::random_input(in.properties, static_cast<uint32_t>(1234 + i)));
      std::cout << "input '" << in.name << "': random " << tensor_io::tensor_type_name(in.properties.tensorType) << " "
                << tensor_io::shape_text(in.properties.validShape) << " (seed " << 1234 + i << ")\n";
    } else {
      try {
        data.push_back(tensor_io::read_input_file(files[i], in.properties));
      } catch (const std::exception& e) {
        raise("input '", in.name, "': ", e.what());
      }
      std::cout << "input '" << in.name << "': " << files[i] << "\n";
    }
  }

  struct Run {
    std::string label;
    Outputs outputs;
    std::vector<std::vector<uint8_t>> raw;  // the .bin model's output bytes (runs of the .bin only)
  };
  auto bin_run = [&](const std::string& label, std::vector<std::vector<uint8_t>> raw) {
    Run r{label, {}, std::move(raw)};
    for (size_t i = 0; i < r.raw.size(); ++i) r.outputs.push_back(tensor_io::dequantize(r.raw[i], bin.outputs()[i].properties));
    return r;
  };
  std::vector<Run> runs;
  runs.push_back({"Quanti onnx", run_quantized(o, bin, data), {}});
  std::cout << "quantized model: " << o.quanti_model << " ran\n";
  runs.push_back(bin_run("Simulator", bin.infer(data)));
  std::cout << "bin model: ran on the x86 simulator\n";
  if (!o.board.empty()) runs.push_back(bin_run("Arm", run_board(o, bin, data)));

  bool all_passed = true;
  for (size_t a = 0; a < runs.size(); ++a) {
    for (size_t b = a + 1; b < runs.size(); ++b) {
      for (size_t i = 0; i < bin.outputs().size(); ++i) {
        const verifier::Comparison c = verifier::compare_values(runs[a].outputs[i], runs[b].outputs[i], o.digits);
        const std::string pair = runs[a].label + " and " + runs[b].label + " result";
        std::cout << "output[" << i << "] '" << bin.outputs()[i].name << "': ";
        if (c.passed()) {
          std::cout << pair << " Strict check PASSED";
          // Two runs of the .bin model: say whether they agree to the bit, not only to -d digits.
          if (!runs[a].raw.empty() && !runs[b].raw.empty()) {
            std::cout << (runs[a].raw[i] == runs[b].raw[i] ? " (bit-identical)" : " (not bit-identical)");
          }
          std::cout << "\n";
          continue;
        }
        all_passed = false;
        std::cout << pair << " Strict check FAILED (compare_digits " << o.digits << ", first mismatch at line "
                  << c.first_mismatch << ", max abs diff " << c.max_abs_diff << ")\n";
        for (const std::string& line : verifier::mismatch_report(c)) std::cout << "INFO " << line << "\n";
      }
    }
  }
  return all_passed ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"hb_model_verifier: compare the quantized ONNX model, the .bin model on the simulator and on a board"};
  app.add_option("-q,--quanti_model", o.quanti_model, "the quantized ONNX model (*_quantized_model.onnx)")
      ->required()->check(CLI::ExistingFile);
  app.add_option("-b,--bin_model", o.bin_model, "the .bin model")->required()->check(CLI::ExistingFile);
  app.add_option("-a,--arm-board-ip", o.board, "board address (HOST or HOST:PORT); no board: host runs only");
  app.add_option("--port", o.port, "board SSH port")->check(CLI::Range(1, 65535))->capture_default_str();
  app.add_option("-u,--user", o.user, "board user")->capture_default_str();
  app.add_option("-k,--key", o.key, "private key file (default ~/.ssh/id_ed25519, id_ecdsa, id_rsa)");
  app.add_option("--known_hosts", o.known_hosts, "known_hosts file holding the board's host key (default ~/.ssh/known_hosts)");
  app.add_option("--host-key-fingerprint", o.fingerprint, "the board's host key as SHA256:... (instead of known_hosts)");
  app.add_option("--board-dir", o.board_dir, "board folder the tool runs in and puts its work folder under")
      ->capture_default_str();
  app.add_option("--board-tool", o.board_tool, "hrt_model_exec on the board (default: PATH, /userdata, /app)");
  app.add_option("-i,--input-img", o.inputs,
                 "input file per model input (.jpg/.png, .bin, .npy; comma separated); default random data");
  app.add_option("-d,--compare_digits", o.digits, "decimal digits compared")->check(CLI::Range(0, 15))->capture_default_str();
  app.add_option("--timeout", o.timeout_s, "seconds the board may take for the inference")
      ->check(CLI::Range(1, 86400))->capture_default_str();
  app.add_option("--connect-timeout", o.connect_timeout_s, "seconds for connecting and for each transfer step")
      ->check(CLI::Range(1, 600))->capture_default_str();
  try {
    std::vector<std::string> args = normalized_arguments(argc, argv);
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  try {
    return verify(o);
  } catch (const std::exception& e) {
    std::cerr << "ERROR " << e.what() << "\n";
    return 2;
  }
}
