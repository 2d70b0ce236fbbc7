// The peer of the end-to-end benchmarks: onnxruntime-node, run through tests/models/ort_run.js
// (npm onnxruntime-node; NODE_PATH set by the benchmark scripts) on the same input file.
#pragma once

#include <array>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

namespace openbpu::bench {

// Median ms over 15 runs (after 3 warm-ups) of onnxruntime-node on `model` with input x = the
// .npy `input`, on `threads` intra-op threads; -1 on failure (ORT's output is printed then).
inline double ort_median_ms(const std::filesystem::path& source_dir, const std::filesystem::path& model,
                            const std::filesystem::path& input, int threads) {
  const std::string cmd = "node '" + (source_dir / "tests/models/ort_run.js").string() + "' --model '" + model.string() +
                          "' --input 'x=" + input.string() + "' --threads " + std::to_string(threads) +
                          " --warmup 3 --repeat 15 2>&1";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
  if (!pipe) return -1;
  std::string out;
  std::array<char, 512> buf;
  while (fgets(buf.data(), buf.size(), pipe.get())) out += buf.data();
  try {
    // ORT's warnings (e.g. unused initializers of the QDQ models) come first; the JSON line last.
    const size_t brace = out.rfind("\n{");
    return nlohmann::json::parse(brace == std::string::npos ? out : out.substr(brace + 1)).at("median_ms").get<double>();
  } catch (const std::exception&) {
    std::cerr << "ort_run failed for " << model << ": " << out << "\n";
    return -1;
  }
}

}  // namespace openbpu::bench
