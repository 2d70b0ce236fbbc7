// fuzz_replay: the fuzz targets' entry points without libFuzzer, for the CI's ASan+UBSan
// build. Each target's LLVMFuzzerTestOneInput is compiled under the name
// openbpu_fuzz_<target> (tests/fuzz/CMakeLists.txt), and this program feeds it every file of
// the given corpus folders (and files), in name order:
//
//   fuzz_replay <target> <folder or file>...
//
// A finding aborts (the sanitizers report it, as libFuzzer would); a clean run prints how many
// inputs it replayed. An empty corpus is an error (a corpus that went missing would pass).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#define OPENBPU_FUZZ_TARGETS(X) \
  X(model_file)                 \
  X(onnx_import)                \
  X(caffe_import)               \
  X(config_yaml)                \
  X(quant_config)               \
  X(tensor_files)               \
  X(image_decode)               \
  X(hrt_flags)                  \
  X(bpu_program)

#define OPENBPU_DECLARE_TARGET(name) extern "C" int openbpu_fuzz_##name(const uint8_t* data, size_t size);
OPENBPU_FUZZ_TARGETS(OPENBPU_DECLARE_TARGET)

namespace {

using EntryPoint = int (*)(const uint8_t*, size_t);

struct Target {
  std::string_view name;
  EntryPoint entry;
};

#define OPENBPU_TARGET_ROW(name) {#name, openbpu_fuzz_##name},
constexpr Target kTargets[] = {OPENBPU_FUZZ_TARGETS(OPENBPU_TARGET_ROW)};

std::vector<std::filesystem::path> corpus_files(int argc, char** argv) {
  std::vector<std::filesystem::path> files;
  for (int i = 2; i < argc; ++i) {
    const std::filesystem::path path(argv[i]);
    if (std::filesystem::is_directory(path)) {
      for (const auto& entry : std::filesystem::directory_iterator(path)) {
        if (entry.is_regular_file()) files.push_back(entry.path());
      }
    } else {
      files.push_back(path);
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: fuzz_replay <target> <corpus folder or file>...\ntargets:");
    for (const Target& t : kTargets) std::fprintf(stderr, " %.*s", static_cast<int>(t.name.size()), t.name.data());
    std::fprintf(stderr, "\n");
    return 2;
  }
  const auto target = std::find_if(std::begin(kTargets), std::end(kTargets),
                                   [&](const Target& t) { return t.name == argv[1]; });
  if (target == std::end(kTargets)) {
    std::fprintf(stderr, "fuzz_replay: unknown target '%s'\n", argv[1]);
    return 2;
  }
  const std::vector<std::filesystem::path> files = corpus_files(argc, argv);
  if (files.empty()) {
    std::fprintf(stderr, "fuzz_replay: no corpus files for target '%s'\n", argv[1]);
    return 1;
  }
  const auto start = std::chrono::steady_clock::now();
  for (const std::filesystem::path& file : files) {
    std::ifstream in(file, std::ios::binary);
    const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) {
      std::fprintf(stderr, "fuzz_replay: cannot read '%s'\n", file.c_str());
      return 1;
    }
    std::fprintf(stderr, "%s\n", file.filename().c_str());  // the last line names a crashing input
    target->entry(bytes.data(), bytes.size());
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("fuzz_replay %s: %zu inputs replayed in %.2f s, no finding\n", argv[1], files.size(), seconds);
  return 0;
}
