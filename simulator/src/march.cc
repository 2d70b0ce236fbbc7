#include "openbpu/simulator/march.h"

#include <array>

namespace openbpu::simulator {

namespace {

// clang-format off
constexpr std::array<MarchSpec, 5> kMarches = {{
  // march              name          chip                      cores int8 MAC int16 MAC  MHz   SRAM KiB DDR GB/s C-al W-al  k  s   d  chan  kt pool  dim    outs softmax 4-D  argmax  sm-C   resizer: ROI    scale     image area   NHWC   yuv444-NCHW hbm
  {March::kBernoulli2, "bernoulli2", "X3 (RDK X3), 5 TOPS",     2,    1024,     0,        1200, 1024,    12.8,   8,   16,   7, 185, 16, 2048, 14, 64,  65536, 32,  false,  true, 64,     true,  16, 255,  0.5, 8.0, 4096, 18432, true,  false, false},
  {March::kBayes,      "bayes",      "Ultra (RDK Ultra), 96 TOPS", 1, 40960,    10240,    1200, 24576,   51.2,   32,  32,  31, 256, 16, 8192, 14, 256, 65536, 32,  false,  true, 64,     false, 2, 4096,  0.0, 4.0, 4096, 0,     false, true,  false},
  {March::kBayesE,     "bayes-e",    "X5 (RDK X5), 10 TOPS",    1,    4096,     1024,     1200, 4096,    25.6,   32,  32,  31, 256, 16, 8192, 14, 256, 65536, 32,  false,  true, 64,     false, 2, 4096,  0.0, 4.0, 4096, 0,     false, true,  false},
  {March::kNashE,      "nash-e",     "S100 (J6E), 80 TOPS",     1,    32768,    8192,     1200, 24576,   76.8,   32,  32,  31, 256, 16, 8192, 14, 256, 65536, 256, true,   false, 32767,  false, 2, 4096,  0.0, 4.0, 4096, 0,     false, true,  true},
  {March::kNashM,      "nash-m",     "S100P (J6M), 128 TOPS",   1,    53248,    13312,    1200, 32768,   102.4,  32,  32,  31, 256, 16, 8192, 14, 256, 65536, 256, true,   false, 32767,  false, 2, 4096,  0.0, 4.0, 4096, 0,     false, true,  true},
}};
// clang-format on

}  // namespace

std::span<const MarchSpec> all_marches() { return kMarches; }

const MarchSpec& march_spec(March march) { return kMarches[static_cast<size_t>(march)]; }

std::optional<March> march_from_name(std::string_view name) {
  for (const MarchSpec& m : kMarches) {
    if (m.name == name) return m.march;
  }
  return std::nullopt;
}

}  // namespace openbpu::simulator
