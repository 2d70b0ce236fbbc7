// Fuzz target: hrt_model_exec's command line and ROI parsing. The input is the argument list,
// one argument per line (argv[0] left out), as parse_command_line() gets it from main();
// a parsed --roi goes through parse_rois() as main() does, and the whole input is also read
// as a ROI file's text.
#include <cstdint>
#include <string_view>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "openbpu/hrt/flags.h"
#include "openbpu/tensor_io/tensor_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> args;
  for (std::string_view rest = text; !rest.empty();) {
    const auto [arg, after] = openbpu::fuzz::split_at(rest, "\n");
    args.emplace_back(arg);
    if (arg.size() == rest.size()) break;
    rest = after;
  }
  try {
    const openbpu::hrt::ParseResult parsed = openbpu::hrt::parse_command_line(args);
    openbpu::fuzz::require(parsed.ok || !parsed.error.empty(), "hrt_flags", "a refused command line has no error text");
    if (parsed.ok) {
      (void)openbpu::hrt::split_list(parsed.options.model_file);
      (void)openbpu::hrt::split_list(parsed.options.input_file);
      if (!parsed.options.roi.empty()) (void)openbpu::tensor_io::parse_rois(parsed.options.roi, "flag '--roi'");
    }
  } catch (...) {
    openbpu::fuzz::reject_or_abort("hrt_flags");
  }
  try {
    (void)openbpu::tensor_io::parse_rois(text, "ROI file 'roi.txt'");
  } catch (...) {
    openbpu::fuzz::reject_or_abort("hrt_flags");
  }
  return 0;
}
