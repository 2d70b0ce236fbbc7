// Runs ONNX's own backend test cases (libonnx-testdata) through the ONNX frontend and the float
// executor, compares every output with the suite's tolerance (rtol 1e-3, atol 1e-7 unless given),
// and reports one line per failure and a final "N passed, M failed, K skipped" line.
//
// With --expected-failures FILE the run fails if a case fails that the file does not list, or if
// a listed case passes (so the list stays honest); with --min-pass-rate R it fails if fewer than
// R of the in-scope cases pass. Out-of-scope cases (training, string, sequence/optional,
// control-flow and random operators) are skipped with a reason.
#include <onnx/onnx_pb.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "openbpu/common/atomic_file.h"
#include "openbpu/common/error.h"
#include "openbpu/executor/float_executor.h"
#include "openbpu/frontend/onnx_model.h"

namespace fs = std::filesystem;
using openbpu::kernels::DataType;
using openbpu::kernels::Tensor;

namespace {

const std::set<std::string> kTrainingOps = {"Adagrad", "Adam", "Momentum", "Gradient"};
const std::set<std::string> kStringOps = {"StringNormalizer", "TfIdfVectorizer", "RegexFullMatch",
                                          "StringConcat", "StringSplit"};
const std::set<std::string> kControlFlowOps = {"Scan"};  // If and Loop run (control_flow.cc)
const std::set<std::string> kRandomOps = {"Bernoulli", "RandomUniform", "RandomUniformLike",
                                          "RandomNormal", "RandomNormalLike", "Multinomial"};

// Returns why a model is out of scope, or "" if it is in scope.
std::string out_of_scope_reason(const onnx::ModelProto& model) {
  std::string reason;
  std::function<void(const onnx::GraphProto&)> walk = [&](const onnx::GraphProto& g) {
    for (const auto& node : g.node()) {
      const std::string& op = node.op_type();
      if (!reason.empty()) return;
      if (kTrainingOps.count(op)) reason = "training operator " + op;
      else if (kStringOps.count(op)) reason = "string operator " + op;
      else if (op.rfind("Sequence", 0) == 0 || op.rfind("Optional", 0) == 0 ||
               op == "SplitToSequence" || op == "ConcatFromSequence")
        reason = "sequence/optional operator " + op;
      else if (kControlFlowOps.count(op)) reason = "control-flow operator " + op;
      else if (kRandomOps.count(op)) reason = "random operator " + op;
      else if (node.domain() == "ai.onnx.preview.training") reason = "training operator " + op;
      for (const auto& a : node.attribute()) {
        if (a.has_g()) walk(a.g());
        for (const auto& sg : a.graphs()) walk(sg);
      }
    }
  };
  walk(model.graph());
  if (!reason.empty()) return reason;
  for (const auto& in : model.graph().input()) {
    if (in.has_type() && !in.type().has_tensor_type()) {
      return "non-tensor input '" + in.name() + "' (sequence/optional/map)";
    }
  }
  for (const auto& out : model.graph().output()) {
    if (out.has_type() && !out.type().has_tensor_type()) {
      return "non-tensor output '" + out.name() + "' (sequence/optional/map)";
    }
  }
  return "";
}

struct CaseResult {
  std::string suite;
  std::string name;
  std::string status;  // passed | failed | skipped
  std::string reason;
  double seconds = 0;
  std::string id() const { return suite + "/" + name; }
};

std::vector<fs::path> sorted_files(const fs::path& dir, const std::string& prefix) {
  std::vector<std::pair<int, fs::path>> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) == 0 && e.path().extension() == ".pb") {
      files.emplace_back(std::stoi(name.substr(prefix.size())), e.path());
    }
  }
  std::sort(files.begin(), files.end());
  std::vector<fs::path> out;
  for (auto& f : files) out.push_back(f.second);
  return out;
}

// "" if equal within tolerance, else the first difference.
std::string compare(const Tensor& expected, const Tensor& actual, double rtol, double atol) {
  if (expected.dtype() != actual.dtype()) {
    return openbpu::str_cat("type ", openbpu::kernels::dtype_name(actual.dtype()), ", expected ",
                            openbpu::kernels::dtype_name(expected.dtype()));
  }
  if (expected.shape() != actual.shape()) {
    return openbpu::str_cat("shape ", openbpu::kernels::shape_to_string(actual.shape()),
                            ", expected ", openbpu::kernels::shape_to_string(expected.shape()));
  }
  const bool is_float = openbpu::kernels::dtype_is_float(expected.dtype());
  int64_t mismatches = 0;
  std::string first;
  for (int64_t i = 0; i < expected.element_count(); ++i) {
    bool ok;
    double e, a;
    if (is_float) {
      e = expected.float_at(i);
      a = actual.float_at(i);
      if (std::isnan(e) || std::isnan(a)) {
        ok = std::isnan(e) && std::isnan(a);
      } else if (std::isinf(e) || std::isinf(a)) {
        ok = e == a;
      } else {
        ok = std::fabs(a - e) <= atol + rtol * std::fabs(e);
      }
    } else if (expected.dtype() == DataType::kUint64) {
      const auto* pe = static_cast<const uint64_t*>(expected.raw_data());
      const auto* pa = static_cast<const uint64_t*>(actual.raw_data());
      ok = pe[i] == pa[i];
      e = static_cast<double>(pe[i]);
      a = static_cast<double>(pa[i]);
    } else {
      const int64_t ie = expected.int_at(i), ia = actual.int_at(i);
      ok = ie == ia;
      e = static_cast<double>(ie);
      a = static_cast<double>(ia);
    }
    if (!ok) {
      if (mismatches == 0) {
        std::ostringstream s;
        s.precision(9);
        s << "element " << i << ": got " << a << ", expected " << e;
        first = s.str();
      }
      ++mismatches;
    }
  }
  if (mismatches == 0) return "";
  return openbpu::str_cat(mismatches, " of ", expected.element_count(), " elements differ; ", first);
}

// ONNX 1.12's test data stores bfloat16 tensors as uint16 (numpy has no bfloat16): read them
// as the bfloat16 bit patterns they are when the model's side is bfloat16.
Tensor as_suite_bfloat16(const Tensor& t, DataType wanted) {
  if (wanted == DataType::kBFloat16 && t.dtype() == DataType::kUint16) {
    return Tensor(DataType::kBFloat16, t.shape(), t.buffer(), t.byte_offset());
  }
  return t;
}

CaseResult run_case(const std::string& suite, const fs::path& dir, int threads, double rtol,
                    double atol) {
  CaseResult r{suite, dir.filename().string(), "failed", "", 0};
  const auto start = std::chrono::steady_clock::now();
  try {
    const fs::path model_path = dir / "model.onnx";
    onnx::ModelProto proto;
    {
      const std::string bytes = openbpu::read_file(model_path);
      if (!proto.ParseFromString(bytes)) throw openbpu::Error("model.onnx does not parse");
    }
    if (std::string why = out_of_scope_reason(proto); !why.empty()) {
      r.status = "skipped";
      r.reason = why;
      // Out of scope still must not crash: load and prepare it, expecting a clear error at most.
      try {
        openbpu::ir::Model model = openbpu::frontend::load_onnx(model_path);
        openbpu::executor::FloatExecutor exec(model, {threads});
      } catch (const std::exception&) {
      }
      return r;
    }
    openbpu::ir::Model model = openbpu::frontend::load_onnx(model_path);
    openbpu::executor::FloatExecutor exec(model, {threads});
    std::vector<fs::path> sets;
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) {
        sets.push_back(e.path());
      }
    }
    std::sort(sets.begin(), sets.end());
    if (sets.empty()) throw openbpu::Error("no test_data_set_* folder");
    for (const fs::path& set : sets) {
      std::map<std::string, Tensor> feeds;
      const auto inputs = sorted_files(set, "input_");
      const auto& required = exec.required_inputs();
      if (inputs.size() > required.size()) {
        throw openbpu::Error(openbpu::str_cat(set.filename().string(), " has ", inputs.size(),
                                              " inputs, the model takes ", required.size()));
      }
      for (size_t i = 0; i < inputs.size(); ++i) {
        feeds[required[i]->name()] =
            as_suite_bfloat16(openbpu::frontend::read_tensor_pb(inputs[i]), required[i]->type().dtype);
      }
      const auto result = exec.run(feeds);
      const auto outputs = sorted_files(set, "output_");
      if (outputs.size() != result.tensors.size()) {
        throw openbpu::Error(openbpu::str_cat("the model produced ", result.tensors.size(),
                                              " outputs, the test expects ", outputs.size()));
      }
      for (size_t i = 0; i < outputs.size(); ++i) {
        const Tensor expected = as_suite_bfloat16(openbpu::frontend::read_tensor_pb(outputs[i]),
                                                  result.tensors[i].dtype());
        const std::string diff = compare(expected, result.tensors[i], rtol, atol);
        if (!diff.empty()) {
          throw openbpu::Error(openbpu::str_cat(set.filename().string(), " output ", i, " '",
                                                result.names[i], "': ", diff));
        }
      }
    }
    r.status = "passed";
  } catch (const std::exception& e) {
    r.reason = e.what();
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

// Lines "suite/case   reason..." ; '#' starts a comment line.
std::map<std::string, std::string> read_expected_failures(const fs::path& path) {
  std::map<std::string, std::string> out;
  std::ifstream in(path);
  if (!in) throw openbpu::Error("cannot read " + path.string());
  std::string line;
  while (std::getline(in, line)) {
    const size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos || line[start] == '#') continue;
    const size_t end = line.find_first_of(" \t", start);
    const std::string id = line.substr(start, end - start);
    std::string reason = end == std::string::npos ? "" : line.substr(end);
    reason.erase(0, reason.find_first_not_of(" \t"));
    out[id] = reason;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Run ONNX's backend test cases through the OpenBPU float executor"};
  std::string data_dir = "/usr/share/libonnx-testdata/data";
  std::vector<std::string> suites = {"node", "pytorch-converted", "pytorch-operator", "simple"};
  std::string filter = ".*";
  std::string json_path;
  std::string expected_path;
  double min_pass_rate = 0;
  int threads = 1;
  double rtol = 1e-3, atol = 1e-7;
  bool verbose = false;
  app.add_option("--data-dir", data_dir, "folder holding the suites")->capture_default_str();
  app.add_option("--suites", suites, "suites to run")->delimiter(',')->capture_default_str();
  app.add_option("--filter", filter, "regex on 'suite/case'")->capture_default_str();
  app.add_option("--json", json_path, "write per-case results as JSON");
  app.add_option("--expected-failures", expected_path, "list of cases known to fail, with reasons");
  app.add_option("--min-pass-rate", min_pass_rate, "fail if fewer in-scope cases pass (0..1)");
  app.add_option("--threads", threads, "executor threads")->capture_default_str();
  app.add_option("--rtol", rtol)->capture_default_str();
  app.add_option("--atol", atol)->capture_default_str();
  app.add_flag("-v,--verbose", verbose, "print every case");
  CLI11_PARSE(app, argc, argv);

  std::regex pattern;
  try {
    pattern = std::regex(filter);
  } catch (const std::regex_error& e) {
    std::cerr << "error: --filter '" << filter << "' is not a valid regex: " << e.what() << "\n";
    return 2;
  }
  std::map<std::string, std::string> expected;
  if (!expected_path.empty()) {
    try {
      expected = read_expected_failures(expected_path);
    } catch (const std::exception& e) {
      std::cerr << "error: " << e.what() << "\n";
      return 2;
    }
  }
  std::vector<CaseResult> results;
  for (const std::string& suite : suites) {
    const fs::path dir = fs::path(data_dir) / suite;
    if (!fs::is_directory(dir)) {
      std::cerr << "error: " << dir.string() << " does not exist (install libonnx-testdata)\n";
      return 2;
    }
    std::vector<fs::path> cases;
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.is_directory() && fs::exists(e.path() / "model.onnx")) cases.push_back(e.path());
    }
    std::sort(cases.begin(), cases.end());
    for (const fs::path& c : cases) {
      if (!std::regex_search(suite + "/" + c.filename().string(), pattern)) continue;
      results.push_back(run_case(suite, c, threads, rtol, atol));
      const CaseResult& r = results.back();
      const bool listed = expected.count(r.id()) != 0;
      if (r.status == "failed" || verbose) {
        std::cout << (r.status == "failed" ? (listed ? "XFAIL " : "FAIL  ")
                      : r.status == "passed" ? "ok    " : "skip  ")
                  << r.id() << (r.reason.empty() ? "" : ": " + r.reason) << "\n";
      }
    }
  }

  int passed = 0, failed = 0, skipped = 0;
  for (const auto& r : results) {
    if (r.status == "passed") ++passed;
    else if (r.status == "failed") ++failed;
    else ++skipped;
  }
  int exit_code = 0;
  if (!expected_path.empty()) {
    for (const auto& r : results) {
      const bool listed = expected.count(r.id()) != 0;
      if (r.status == "failed" && !listed) {
        std::cout << "UNEXPECTED FAILURE " << r.id() << ": " << r.reason << "\n";
        exit_code = 1;
      } else if (r.status == "passed" && listed) {
        std::cout << "UNEXPECTED PASS " << r.id()
                  << " (remove it from the expected failures list)\n";
        exit_code = 1;
      } else if (r.status == "skipped" && listed) {
        std::cout << "LISTED BUT SKIPPED " << r.id() << " (remove it from the list)\n";
        exit_code = 1;
      }
    }
  }
  const int in_scope = passed + failed;
  const double rate = in_scope == 0 ? 1.0 : static_cast<double>(passed) / in_scope;
  if (rate < min_pass_rate) {
    std::cout << "pass rate " << rate * 100 << "% is below the bar of " << min_pass_rate * 100
              << "%\n";
    exit_code = 1;
  }
  if (!json_path.empty()) {
    nlohmann::json j;
    j["passed"] = passed;
    j["failed"] = failed;
    j["skipped"] = skipped;
    j["pass_rate_in_scope"] = rate;
    for (const auto& r : results) {
      j["cases"].push_back({{"suite", r.suite}, {"name", r.name}, {"status", r.status},
                            {"reason", r.reason}, {"seconds", r.seconds}});
    }
    try {
      openbpu::write_file_atomically(json_path, j.dump(1));
    } catch (const std::exception& e) {
      std::cerr << "error: " << e.what() << "\n";
      return 2;
    }
  }
  std::cout << passed << " passed, " << failed << " failed, " << skipped << " skipped ("
            << static_cast<int>(rate * 1000) / 10.0 << "% of " << in_scope
            << " in-scope cases pass)\n";
  return exit_code;
}
