// Calibration memory does not grow with the number of samples: calibrates a model (kl: both
// statistics passes) on N1 and on N2 samples, each in a child process, and compares the
// children's peak resident set sizes (getrusage). Exits non-zero if the larger run's peak
// exceeds the smaller one's by more than the allowed ratio.
//
//   calibration_memory_probe --model M.onnx --input x --shape 1x3x320x320
//       [--counts 20,200] [--max-ratio 1.2] [--work-dir DIR]
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <random>
#include <sstream>

#include "openbpu/calibration/calibrator.h"
#include "openbpu/common/npy.h"
#include "openbpu/frontend/onnx_model.h"

namespace fs = std::filesystem;
using namespace openbpu;

namespace {

std::vector<int64_t> parse_shape(const std::string& text) {
  std::vector<int64_t> shape;
  std::stringstream s(text);
  std::string item;
  while (std::getline(s, item, 'x')) shape.push_back(std::stoll(item));
  return shape;
}

// Smooth, image-like featuremaps (normalised range), deterministic per index.
void write_samples(const fs::path& dir, size_t count, const std::vector<int64_t>& shape) {
  fs::create_directories(dir);
  for (size_t i = 0; i < count; ++i) {
    const fs::path file = dir / (std::to_string(100000 + i) + ".npy");
    if (fs::exists(file)) continue;
    std::mt19937_64 rng(i);
    kernels::Tensor t(kernels::DataType::kFloat32, shape);
    float* p = t.data<float>();
    const int64_t w = shape.back();
    const double fx = 0.01 + static_cast<double>(rng() % 100) * 1e-4;
    const double fy = 0.02 + static_cast<double>(rng() % 100) * 1e-4;
    for (int64_t k = 0; k < t.element_count(); ++k) {
      const double noise = static_cast<double>(rng() >> 11) * 0x1.0p-53 - 0.5;
      p[k] = static_cast<float>(std::sin(fx * static_cast<double>(k % w)) *
                                    std::cos(fy * static_cast<double>(k / w)) * 1.8 +
                                noise * 0.4);
    }
    write_npy(file, t);
  }
}

struct ChildResult {
  long peak_rss_kb = 0;
  double seconds = 0;
};

ChildResult calibrate_in_child(const fs::path& model_file, const std::string& input,
                               const std::vector<int64_t>& shape, const fs::path& dir) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    close(fds[0]);
    int status = 0;
    ChildResult r;
    try {
      const auto start = std::chrono::steady_clock::now();
      ir::Model model = frontend::load_onnx(model_file);
      calibration::CalibrationSource source;
      source.input_name = input;
      source.dir = dir;
      source.shape = shape;
      const calibration::CalibrationDataset dataset({source});
      const calibration::SampleStream samples = calibration::dataset_samples(dataset);
      calibration::CalibrationOptions options;
      options.type = config::CalibrationType::kKl;
      options.evaluation_samples = 0;
      options.rank_sensitivity = false;
      calibration::calibrate(model, &samples, options);
      r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      rusage usage{};
      getrusage(RUSAGE_SELF, &usage);
      r.peak_rss_kb = usage.ru_maxrss;
    } catch (const std::exception& e) {
      std::cerr << "calibration failed: " << e.what() << "\n";
      status = 1;
    }
    if (write(fds[1], &r, sizeof r) != static_cast<ssize_t>(sizeof r)) status = 1;
    close(fds[1]);
    _exit(status);
  }
  close(fds[1]);
  ChildResult r;
  const ssize_t got = read(fds[0], &r, sizeof r);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (got != static_cast<ssize_t>(sizeof r) || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw std::runtime_error("the calibration child process failed");
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Peak memory of calibration vs the number of samples"};
  std::string model, input = "x", shape_text = "1x3x320x320", counts_text = "20,200";
  std::string work_dir = "calibration_memory_probe";
  double max_ratio = 1.2;
  app.add_option("--model", model, "float ONNX model")->required();
  app.add_option("--input", input, "input name");
  app.add_option("--shape", shape_text, "input shape, e.g. 1x3x320x320");
  app.add_option("--counts", counts_text, "two sample counts, e.g. 20,200");
  app.add_option("--max-ratio", max_ratio, "allowed peak RSS ratio of the larger run");
  app.add_option("--work-dir", work_dir, "where the sample files are written");
  CLI11_PARSE(app, argc, argv);

  try {
    const std::vector<int64_t> shape = parse_shape(shape_text);
    const size_t comma = counts_text.find(',');
    const size_t small = std::stoul(counts_text.substr(0, comma));
    const size_t large = std::stoul(counts_text.substr(comma + 1));
    const fs::path root(work_dir);
    const fs::path all = root / "samples";
    write_samples(all, large, shape);
    // The small set: links to the first files of the large one.
    const fs::path few = root / ("first_" + std::to_string(small));
    fs::remove_all(few);
    fs::create_directories(few);
    for (size_t i = 0; i < small; ++i) {
      const std::string name = std::to_string(100000 + i) + ".npy";
      fs::create_symlink(fs::absolute(all / name), few / name);
    }
    const ChildResult a = calibrate_in_child(model, input, shape, few);
    const ChildResult b = calibrate_in_child(model, input, shape, all);
    const double ratio = static_cast<double>(b.peak_rss_kb) / static_cast<double>(a.peak_rss_kb);
    std::printf("samples=%zu peak_rss=%.1f MiB time=%.1f s\n", small, a.peak_rss_kb / 1024.0,
                a.seconds);
    std::printf("samples=%zu peak_rss=%.1f MiB time=%.1f s\n", large, b.peak_rss_kb / 1024.0,
                b.seconds);
    std::printf("peak RSS ratio %.3f (allowed %.2f)\n", ratio, max_ratio);
    fs::remove_all(root);
    if (ratio > max_ratio) {
      std::printf("FAILED: calibration memory grows with the number of samples\n");
      return 1;
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "calibration_memory_probe: " << e.what() << "\n";
    return 1;
  }
}
