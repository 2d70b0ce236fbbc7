#include "openbpu/simulator/march.h"

#include <array>

namespace openbpu::simulator {

namespace {

// The timing figures (timing.h) and where each comes from:
// - clock: bernoulli2 and bayes-e 1000 MHz, the BPU clocks the boards' published latencies were
//   measured at (D-Robotics rdk_model_zoo READMEs: "BPU is 2xBernoulli@1G", "1xBayes-e@1G");
//   the other marches keep the 1200 MHz of the first sizing (no published figure).
// - MAC array: input and output lanes = the march's channel alignment (the layout pads C to the
//   lanes the array reads per cycle), 4 output positions per cycle on bernoulli2 and bayes-e
//   (bayes-e's 32 x 32 x 4 = 4096 MACs of the first sizing; X3 and X5's published 5 and 10 TOPS
//   are "equivalent" figures, above these arrays); the other marches keep their first sizing
//   after the public TOPS (40960, 32768, 53248 MACs).
// - DDR: 5.3 GB/s, FITTED with instruction_cycles on two published X5 (bayes-e) latencies,
//   MobileNetV1 1.27 ms and ResNet-18 2.95 ms (rdk_model_zoo classification README); bernoulli2
//   is given the same (both boards' LPDDR4, no published figure); the other marches scale it
//   by their DDR interface against bayes-e's in the first sizing (x2, x3, x4).
// - instruction_cycles: 9200, FITTED as above (set-up, pipeline fill and drain, sync per
//   instruction); the same on every march.
// - function_call_cycles: 1 us at the march's clock (the call's descriptor and interrupt).
// docs/bpu_isa.md compares the estimate with the five published figures.
// clang-format off
constexpr std::array<MarchSpec, 5> kMarches = {{
  // march              name          chip                      cores MAC lanes in/out/positions int16 MAC  MHz   SRAM KiB DDR GB/s instr  call  C-al W-al  k  s   d  chan  kt pool  dim    outs softmax 4-D  argmax  sm-C   resizer: ROI    scale     image area   NHWC   yuv444-NCHW hbm
  {March::kBernoulli2, "bernoulli2", "X3 (RDK X3), 5 TOPS",     2,    8,  8,  4,                   0,         1000, 1024,    5.3,     9200,  1000, 8,   16,   7, 185, 16, 2048, 14, 64,  65536, 32,  false,  true, 64,     true,  16, 255,  0.5, 8.0, 4096, 18432, true,  false, false},
  {March::kBayes,      "bayes",      "Ultra (RDK Ultra), 96 TOPS", 1, 32, 32, 40,                  10240,     1200, 24576,   10.6,    9200,  1200, 32,  32,  31, 256, 16, 8192, 14, 256, 65536, 32,  false,  true, 64,     false, 2, 4096,  0.0, 4.0, 4096, 0,     false, true,  false},
  {March::kBayesE,     "bayes-e",    "X5 (RDK X5), 10 TOPS",    1,    32, 32, 4,                   1024,      1000, 4096,    5.3,     9200,  1000, 32,  32,  31, 256, 16, 8192, 14, 256, 65536, 32,  false,  true, 64,     false, 2, 4096,  0.0, 4.0, 4096, 0,     false, true,  false},
  {March::kNashE,      "nash-e",     "S100 (J6E), 80 TOPS",     1,    32, 32, 32,                  8192,      1200, 24576,   15.9,    9200,  1200, 32,  32,  31, 256, 16, 8192, 14, 256, 65536, 256, true,   false, 32767,  false, 2, 4096,  0.0, 4.0, 4096, 0,     false, true,  true},
  {March::kNashM,      "nash-m",     "S100P (J6M), 128 TOPS",   1,    32, 32, 52,                  13312,     1200, 32768,   21.2,    9200,  1200, 32,  32,  31, 256, 16, 8192, 14, 256, 65536, 256, true,   false, 32767,  false, 2, 4096,  0.0, 4.0, 4096, 0,     false, true,  true},
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
