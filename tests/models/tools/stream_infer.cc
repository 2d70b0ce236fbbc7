// stream_infer MODEL AUDIO.npy OUT_DIR [options]: runs a streaming model with a recurrent state
// (Silero VAD's interface) over an audio signal frame by frame, as its users do: the state
// output of one frame is the state input of the next, starting from zeros. Writes
// OUT_DIR/probabilities.txt (the first element of the output per frame, one per line) and,
// with --samples-every K, the inputs of every K-th frame as calibration samples
// OUT_DIR/cal/<input>/<n>.npy and OUT_DIR/cal/<state>/<n>.npy.
//   --frame N          samples per frame (512)
//   --context C        the last C samples of the previous frame go before each frame (zeros
//                      before the first), as Silero v5/v6's wrappers do (0)
//   --input NAME       audio input, fed as [1, C + N] ('input')
//   --state NAME       state input ('state'); --state-out NAME its next value ('stateN')
//   --output NAME      the probability output ('output')
//   --fixed NAME=V[,V] bind an input to a constant, as the yaml's fixed_inputs (repeatable)
//   --optimize         run stage 2's passes first (a model with If nodes runs only after them)
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "openbpu/common/error.h"
#include "openbpu/common/npy.h"
#include "openbpu/config/compile_config.h"
#include "openbpu/executor/float_executor.h"
#include "openbpu/frontend/onnx_model.h"
#include "openbpu/frontend/shape_inference.h"
#include "openbpu/passes/pipeline.h"

namespace {

namespace fs = std::filesystem;
using openbpu::kernels::DataType;
using openbpu::kernels::Tensor;

struct Options {
  std::string model, audio, out;
  int64_t frame = 512, context = 0, samples_every = 0;
  std::string input = "input", state = "state", state_out = "stateN", output = "output";
  std::vector<openbpu::config::FixedInput> fixed;
  bool optimize = false;
};

Options parse(int argc, char** argv) {
  Options o;
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) openbpu::raise(a, " needs a value");
      return argv[++i];
    };
    if (a == "--frame") {
      o.frame = std::stoll(value());
    } else if (a == "--context") {
      o.context = std::stoll(value());
    } else if (a == "--samples-every") {
      o.samples_every = std::stoll(value());
    } else if (a == "--input") {
      o.input = value();
    } else if (a == "--state") {
      o.state = value();
    } else if (a == "--state-out") {
      o.state_out = value();
    } else if (a == "--output") {
      o.output = value();
    } else if (a == "--fixed") {
      const std::string v = value();
      std::string problem;
      auto fixed = openbpu::config::fixed_input_of(v, &problem);
      if (!fixed) openbpu::raise("--fixed ", problem);
      o.fixed.push_back(std::move(*fixed));
    } else if (a == "--optimize") {
      o.optimize = true;
    } else {
      positional.push_back(a);
    }
  }
  if (positional.size() != 3 || o.frame <= 0 || o.context < 0 || o.context > o.frame) {
    openbpu::raise("usage: stream_infer MODEL AUDIO.npy OUT_DIR [--frame N] [--context C <= N] [--input NAME] "
                   "[--state NAME] "
                   "[--state-out NAME] [--output NAME] [--fixed NAME=V]... [--optimize] [--samples-every K]");
  }
  o.model = positional[0], o.audio = positional[1], o.out = positional[2];
  return o;
}

// The model with the frame input as [1, N], the state's open dims (batch) as 1, the fixed inputs
// bound and, with --optimize, stage 2's passes run.
openbpu::ir::Model load(const Options& o) {
  openbpu::ir::Model model = openbpu::frontend::load_onnx(o.model);
  openbpu::config::CompileConfig cfg;
  cfg.input.fixed_inputs = o.fixed;
  openbpu::config::bind_fixed_inputs(cfg, model);
  for (openbpu::ir::Value* v : model.graph->inputs()) {
    openbpu::ir::TensorType type = v->type();
    if (v->name() == o.input) {
      type.shape = std::vector<openbpu::ir::Dim>{openbpu::ir::Dim::known(1), openbpu::ir::Dim::known(o.context + o.frame)};
    } else if (v->name() == o.state && type.shape) {
      for (openbpu::ir::Dim& d : *type.shape) {
        if (!d.is_known()) d = openbpu::ir::Dim::known(1);
      }
    }
    v->set_type(type);
  }
  openbpu::frontend::infer_shapes(model, true);
  if (o.optimize) {
    openbpu::passes::PipelineOptions popts;
    popts.refresh_types = [](openbpu::ir::Model& m) { openbpu::frontend::infer_shapes(m, true); };
    openbpu::passes::run_passes(model, openbpu::passes::default_pipeline(), popts);
  }
  return model;
}

int run(const Options& o) {
  openbpu::ir::Model model = load(o);
  openbpu::executor::FloatExecutor executor(model);
  const Tensor audio = openbpu::read_npy(o.audio);
  if (audio.dtype() != DataType::kFloat32) openbpu::raise(o.audio, ": expected float32 samples");
  const openbpu::ir::Value* state_input = model.graph->find_value(o.state);
  const auto state_shape = state_input != nullptr ? state_input->type().static_shape() : std::nullopt;
  if (!state_shape) openbpu::raise(o.model, ": state input '", o.state, "' with a static shape not found");
  Tensor state(DataType::kFloat32, *state_shape);  // zeros
  fs::create_directories(o.out);
  std::ofstream probabilities(fs::path(o.out) / "probabilities.txt");
  const int64_t frames = audio.element_count() / o.frame;
  int64_t saved = 0;
  for (int64_t f = 0; f < frames; ++f) {
    Tensor chunk(DataType::kFloat32, {1, o.context + o.frame});  // zeros before the first frame
    const float* at = audio.data<float>() + f * o.frame;
    if (f > 0) std::copy_n(at - o.context, o.context, chunk.data<float>());
    std::copy_n(at, o.frame, chunk.data<float>() + o.context);
    if (o.samples_every > 0 && f % o.samples_every == 0) {
      for (const auto& [name, t] : {std::pair{o.input, &chunk}, std::pair{o.state, &state}}) {
        const fs::path dir = fs::path(o.out) / "cal" / name;
        fs::create_directories(dir);
        openbpu::write_npy(dir / (std::to_string(saved) + ".npy"), *t);
      }
      ++saved;
    }
    const auto result = executor.run({{o.input, chunk}, {o.state, state}});
    char line[32];
    std::snprintf(line, sizeof line, "%.6f\n", result.at(o.output).float_at(0));
    probabilities << line;
    state = result.at(o.state_out).clone();
  }
  std::cout << "stream_infer: " << frames << " frames of " << o.frame << " samples (+" << o.context << " of context)";
  if (saved > 0) std::cout << ", " << saved << " calibration samples";
  std::cout << "\n";
  return probabilities.good() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse(argc, argv));
  } catch (const std::exception& e) {
    std::cerr << "stream_infer: " << e.what() << "\n";
    return 1;
  }
}
