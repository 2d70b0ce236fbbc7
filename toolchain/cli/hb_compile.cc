// hb_compile: the conversion command of the UCP flavour (nash-e, nash-m):
//   hb_compile --config F.yaml
//   hb_compile --fast-perf --model F --march M [--input-shape NAME SHAPE]...
// Log: hb_compile.log in the current directory. The stages are those of hb_mapper makertbin
// (openbpu/pipeline/conversion.h) with the hb_compile config flavour.
#include <CLI/CLI.hpp>
#include <iostream>

#include "conversion_options.h"

int main(int argc, char** argv) {
  CLI::App app{"hb_compile: OpenBPU model conversion (UCP flavour: nash-e, nash-m)"};
  openbpu::cli::ConversionOptions o;
  o.request.flavour = openbpu::config::ConfigFlavour::kHbCompile;
  o.request.command = "hb_compile";
  app.add_option("-c,--config", o.request.config_file, "the conversion yaml");
  app.add_flag("--fast-perf", o.request.fast_perf,
               "convert with default settings and random calibration (performance evaluation)");
  app.add_option("--march", o.request.march, "with --fast-perf: nash-e or nash-m");
  openbpu::cli::add_model_options(app, o, /*model_required=*/false);
  CLI11_PARSE(app, argc, argv);
  const auto& r = o.request;
  if (r.fast_perf && (r.model_file.empty() || r.march.empty() || !r.config_file.empty())) {
    std::cerr << "ERROR hb_compile --fast-perf needs --model and --march, and no --config\n";
    return 2;
  }
  if (!r.fast_perf && (r.config_file.empty() || !r.model_file.empty() || !r.march.empty())) {
    std::cerr << "ERROR hb_compile needs --config (or --fast-perf with --model and --march)\n";
    return 2;
  }
  // The model type follows the file: a .prototxt beside it means Caffe.
  if (!r.proto_file.empty()) o.model_type = "caffe";
  return openbpu::cli::run_with_log(o, "hb_compile.log");
}
