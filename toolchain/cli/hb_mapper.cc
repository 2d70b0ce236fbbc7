// hb_mapper: the host toolchain's command line. Subcommands:
//   checker        check that a model converts for a march: node placement table, subgraphs
//   makertbin      convert a model with a yaml config (or --fast-perf) into the stage models
//   infer          run an ONNX model (any stage model) with the float executor on .npy inputs
//   supported-ops  print the BPU operator support table as markdown
#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "conversion_options.h"
#include "openbpu/base/file_name.h"
#include "openbpu/bpu_support/op_def.h"
#include "openbpu/common/error.h"
#include "openbpu/common/input_offset.h"
#include "openbpu/common/npy.h"
#include "openbpu/executor/float_executor.h"
#include "openbpu/frontend/onnx_model.h"

namespace fs = std::filesystem;
using openbpu::kernels::Tensor;

namespace {

struct Summary {
  double min = 0, max = 0, mean = 0;
  int64_t nan = 0;
};

Summary summarize(const Tensor& t) {
  Summary s;
  if (t.element_count() == 0 || openbpu::kernels::dtype_size(t.dtype()) == 0) return s;
  s.min = INFINITY;
  s.max = -INFINITY;
  double sum = 0;
  int64_t finite = 0;
  for (int64_t i = 0; i < t.element_count(); ++i) {
    const double v = t.float_at(i);
    if (std::isnan(v)) {
      ++s.nan;
      continue;
    }
    s.min = std::min(s.min, v);
    s.max = std::max(s.max, v);
    sum += v;
    ++finite;
  }
  s.mean = finite ? sum / static_cast<double>(finite) : NAN;
  return s;
}

// Time per operator type (last run), largest first, and the ten slowest nodes.
void print_profile(const std::vector<std::pair<const openbpu::ir::Node*, double>>& node_times) {
  std::map<std::string, std::pair<double, int>> by_op;
  double total = 0;
  for (const auto& [node, us] : node_times) {
    auto& e = by_op[node->op_type()];
    e.first += us;
    e.second += 1;
    total += us;
  }
  std::vector<std::pair<std::string, std::pair<double, int>>> ops(by_op.begin(), by_op.end());
  std::sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
  std::cout << std::fixed << std::setprecision(3) << "profile (last run): op type, nodes, ms, share\n";
  for (const auto& [op, e] : ops) {
    std::cout << "  " << std::left << std::setw(24) << op << std::right << std::setw(5) << e.second
              << std::setw(10) << e.first / 1000 << std::setw(8) << std::setprecision(1)
              << 100 * e.first / total << "%\n" << std::setprecision(3);
  }
  auto slow = node_times;
  std::sort(slow.begin(), slow.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::cout << "slowest nodes:\n";
  for (size_t i = 0; i < slow.size() && i < 10; ++i) {
    std::cout << "  " << slow[i].first->name() << " (" << slow[i].first->op_type() << ") "
              << slow[i].second / 1000 << " ms\n";
  }
}

int run_infer(const std::string& model_file, const std::vector<std::string>& input_specs,
              const std::string& output_dir, int threads, int repeat, bool profile, int input_offset) {
  const auto load_start = std::chrono::steady_clock::now();
  openbpu::ir::Model model = openbpu::frontend::load_onnx(model_file);
  openbpu::executor::FloatExecutor exec(model, {threads});
  const double load_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - load_start).count();

  std::map<std::string, Tensor> feeds;
  for (const std::string& spec : input_specs) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
      openbpu::raise("--input '", spec, "' must be NAME=FILE.npy");
    }
    const std::string name = spec.substr(0, eq);
    if (feeds.count(name)) openbpu::raise("--input gives '", name, "' twice");
    Tensor data = openbpu::read_npy(spec.substr(eq + 1));
    for (const openbpu::ir::Value* v : model.graph->inputs()) {
      if (v->name() == name && v->type().dtype == openbpu::kernels::DataType::kInt8 &&
          data.dtype() == openbpu::kernels::DataType::kUint8) {
        data = openbpu::shift_to_int8(data, input_offset, "--input '" + name + "'", "--input-offset");
      }
    }
    feeds[name] = std::move(data);
  }

  std::vector<double> times;
  openbpu::executor::RunResult result;
  std::vector<std::pair<const openbpu::ir::Node*, double>> node_times;
  openbpu::executor::RunOptions run_options;
  if (profile) run_options.node_times_us = &node_times;
  for (int i = 0; i < repeat; ++i) {
    node_times.clear();
    const auto start = std::chrono::steady_clock::now();
    result = exec.run(feeds, run_options);
    times.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::error_code ec;
  fs::create_directories(output_dir, ec);
  if (ec) openbpu::raise("cannot create --output-dir ", output_dir, ": ", ec.message());
  std::cout << "model: " << model_file << " (" << model.graph->nodes().size() << " nodes, opset "
            << model.opset_version("") << ")\n";
  for (size_t i = 0; i < result.names.size(); ++i) {
    const Tensor& t = result.tensors[i];
    const fs::path path = fs::path(output_dir) / (openbpu::base::safe_file_name(result.names[i]) + ".npy");
    openbpu::write_npy(path, t);
    const Summary s = summarize(t);
    std::cout << "output '" << result.names[i] << "': " << t.describe() << std::setprecision(6)
              << " min " << s.min << " max " << s.max << " mean " << s.mean;
    if (s.nan) std::cout << " nan " << s.nan;
    std::cout << " -> " << path.string() << "\n";
  }
  if (profile) print_profile(node_times);
  std::sort(times.begin(), times.end());
  std::cout << std::fixed << std::setprecision(2) << "load+prepare " << load_ms << " ms, run "
            << times[times.size() / 2] << " ms (median of " << repeat << ", " << threads
            << " thread" << (threads > 1 ? "s" : "") << ", float executor on this host)\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"hb_mapper: OpenBPU host toolchain"};
  app.require_subcommand(1);

  openbpu::cli::ConversionOptions check_opts;
  check_opts.request.checker = true;
  check_opts.request.command = "checker";
  auto* checker = app.add_subcommand(
      "checker", "Check that a model converts for a march: where every node runs, subgraphs, errors");
  openbpu::cli::add_model_type_option(*checker, check_opts);
  checker->add_option("--march", check_opts.request.march, "bernoulli2, bayes or bayes-e")->required();
  openbpu::cli::add_model_options(*checker, check_opts, /*model_required=*/true);

  openbpu::cli::ConversionOptions make_opts;
  make_opts.request.command = "makertbin";
  auto* makertbin = app.add_subcommand(
      "makertbin", "Convert a model (yaml config) into the original, optimized, calibrated and quantized models");
  makertbin->add_option("-c,--config", make_opts.request.config_file, "the conversion yaml");
  openbpu::cli::add_model_type_option(*makertbin, make_opts);
  makertbin->add_flag("--fast-perf", make_opts.request.fast_perf,
                      "convert with default settings and random calibration (performance evaluation)");
  makertbin->add_option("--march", make_opts.request.march, "with --fast-perf: bernoulli2, bayes or bayes-e");
  openbpu::cli::add_model_options(*makertbin, make_opts, /*model_required=*/false);

  auto* infer = app.add_subcommand(
      "infer", "Run an ONNX model with the float executor and write one .npy per output");
  std::string model_file, output_dir;
  std::vector<std::string> inputs;
  int threads = 1, repeat = 1;
  bool profile = false;
  int input_offset = 128;
  infer->add_option("--model-file", model_file, "ONNX model")->required();
  infer->add_option("--input", inputs, "NAME=FILE.npy, once per model input");
  infer->add_option("--output-dir", output_dir, "where <output>.npy files go")->required();
  infer->add_option("--threads", threads, "threads inside kernels")->check(CLI::Range(1, 256))->capture_default_str();
  infer->add_option("--repeat", repeat, "runs to time (the median is printed)")->check(CLI::Range(1, 100000))->capture_default_str();
  infer->add_flag("--profile", profile, "print time per operator type and the slowest nodes");
  infer->add_option("--input-offset", input_offset,
                    "uint8 data fed to an int8 image input (RGB_128, yuv444_128, ...) is shifted by -offset")
      ->check(CLI::Range(0, 255))
      ->capture_default_str();

  auto* supported_ops = app.add_subcommand(
      "supported-ops", "Print the BPU operator support table (docs/supported_ops.md) as markdown");

  CLI11_PARSE(app, argc, argv);
  if (checker->parsed()) return openbpu::cli::run_with_log(check_opts, "hb_mapper_checker.log");
  if (makertbin->parsed()) {
    const auto& r = make_opts.request;
    if (r.fast_perf && (r.model_file.empty() || r.march.empty() || !r.config_file.empty())) {
      std::cerr << "ERROR makertbin --fast-perf needs --model and --march, and no --config\n";
      return 2;
    }
    if (!r.fast_perf && (r.config_file.empty() || !r.model_file.empty() || !r.march.empty())) {
      std::cerr << "ERROR makertbin needs --config (or --fast-perf with --model and --march)\n";
      return 2;
    }
    return openbpu::cli::run_with_log(make_opts, "hb_mapper_makertbin.log");
  }
  try {
    if (infer->parsed()) return run_infer(model_file, inputs, output_dir, threads, repeat, profile, input_offset);
    if (supported_ops->parsed()) {
      std::cout << openbpu::bpu_support::supported_ops_markdown();
      return 0;
    }
  } catch (const std::exception& e) {
    std::cerr << "ERROR " << e.what() << "\n";
    return 1;
  }
  return 0;
}
