// The per-march table of the virtual BPU (design invariant 6: one table, read by the checker,
// the partitioner, the compiler, the simulator's timing model and the generated docs).
//
// The marches are the original toolchain's names; the figures describe OUR virtual BPU, sized
// after the public figures of the chips (X3 5 TOPS, X5 10 TOPS, Ultra 96 TOPS, S100 80 TOPS,
// S100P 128 TOPS; X3's and X5's are "equivalent" TOPS, above what their MAC arrays do: march.cc)
// and fitted to two published board latencies (docs/bpu_isa.md, "The timing model"). They are a
// model, not measurements of real hardware.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace openbpu::simulator {

enum class March { kBernoulli2, kBayes, kBayesE, kNashE, kNashM };

struct MarchSpec {
  March march;
  std::string_view name;          // yaml / CLI spelling: "bernoulli2", "bayes-e", ...
  std::string_view chip;          // public chip / board the march is named after
  int bpu_cores;                  // cores a model may be compiled for (core_num ≤ this)
  // The MAC array of a core (timing.h): per cycle it multiplies mac_input_lanes input channels
  // into mac_output_lanes output channels at mac_positions output positions.
  int mac_input_lanes;
  int mac_output_lanes;
  int mac_positions;
  int int16_macs_per_cycle;       // per core; 0 = no int16 compute
  int clock_mhz;                  // BPU clock
  int sram_kib;                   // on-chip memory per core
  double ddr_gbytes_per_s;        // DDR bandwidth the BPU's DMA achieves
  int instruction_cycles;         // fixed cost of each instruction (set-up, pipeline fill, sync)
  int function_call_cycles;       // fixed cost of each function call (descriptor, interrupt)
  int channel_align;              // C is padded to a multiple of this in BPU layouts
  int width_align;                // W is padded to a multiple of this for image inputs
  // Operator limits used by the support table (docs/supported_ops.md lists the rules).
  int conv_kernel_max;            // kernel H and W in [1, conv_kernel_max]
  int conv_stride_max;            // stride H and W in [1, conv_stride_max]
  int conv_dilation_max;          // dilation in [1, conv_dilation_max]
  int channels_max;               // input/output channels per group
  int conv_transpose_kernel_max;  // ConvTranspose kernel H and W in [1, this]
  int pool_kernel_max;            // Max/AveragePool kernel H and W
  int64_t tensor_dim_max;         // every H, W, C in [1, tensor_dim_max]
  int max_model_outputs;          // outputs a model may have
  bool softmax_on_bpu_default;    // Softmax runs on the BPU without run_on_bpu
  bool axis_ops_4d_only;          // ArgMax / Softmax need a 4-D NCHW input (else any rank)
  int argmax_extent_max;          // ArgMax: the reduced axis has [1, this] elements
  bool softmax_channel_axis_only; // Softmax on the BPU only along axis 1 (C)
  // The resizer of input_source: resizer inputs (hbDNNRoiInfer, docs/runtime.md): a ROI's
  // width and height in [resizer_roi_min, resizer_roi_max], each ROI side / input side in
  // (resizer_scale_min, resizer_scale_max], source images at most resizer_image_max wide/high.
  int resizer_roi_min;
  int resizer_roi_max;
  double resizer_scale_min;
  double resizer_scale_max;
  int resizer_image_max;
  int64_t resizer_input_area_max;  // a resizer-fed model input has H*W below this; 0: no limit
  // Input rules of the conversion config.
  bool image_inputs_nhwc;         // hb_mapper: image inputs default to input_layout_rt NHWC
  bool yuv444_nchw_input;         // a yuv444 input may be laid out NCHW
  bool hbm_generation;            // converted by hb_compile into .hbm (UCP); else hb_mapper, .bin

  // Int8 MACs per cycle of one core's array.
  int int8_macs_per_cycle() const { return mac_input_lanes * mac_output_lanes * mac_positions; }
  // Peak int8 TOPS of the virtual BPU (all cores).
  double peak_int8_tops() const {
    return 2.0 * int8_macs_per_cycle() * clock_mhz * 1e6 * bpu_cores / 1e12;
  }
  bool supports_int16() const { return int16_macs_per_cycle > 0; }
};

// All marches in the order of the enum.
std::span<const MarchSpec> all_marches();
const MarchSpec& march_spec(March march);
// Looks a march up by its yaml/CLI name; nullopt if unknown.
std::optional<March> march_from_name(std::string_view name);

}  // namespace openbpu::simulator
