// Graph passes of the stage-2 optimizer (*_optimized_float_model.onnx) and their registry.
//
// A pass is one file in toolchain/passes/src/ with a registered name, a one-line summary and
// its options (name, default, meaning). It rewrites the model's main graph in place into an
// equivalent float graph of standard ONNX operators, keeps node order topological and value
// types filled where it can compute them, keeps the graph's input and output names, and
// returns how many rewrites it made. Passes know nothing about a march.
#pragma once

#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "openbpu/ir/graph.h"

namespace openbpu::passes {

// Receives one human-readable line (no trailing newline).
using Logger = std::function<void(const std::string& line)>;
// Recomputes value types after the graph changed (the ONNX frontend's shape inference, wired
// by the caller; see PipelineOptions::refresh_types).
using TypeRefresher = std::function<void(ir::Model& model)>;

struct PassOptionSpec {
  std::string_view name;
  std::string_view default_value;
  std::string_view summary;
};

// Option values of one pass run, checked against the pass's specs: an unknown name or a value
// of the wrong form is an Error naming the pass and the option.
class PassOptions {
 public:
  PassOptions(std::string_view pass_name, std::span<const PassOptionSpec> specs,
              const std::map<std::string, std::string>& values);

  const std::string& get_string(std::string_view name) const;
  double get_double(std::string_view name) const;
  int64_t get_int(std::string_view name) const;
  bool get_bool(std::string_view name) const;  // true/false/1/0

 private:
  std::string pass_name_;
  std::map<std::string, std::string, std::less<>> values_;  // every option, defaults filled
};

struct PassContext {
  ir::Model& model;
  const PassOptions& options;
  const Logger& log;                   // detail lines (may be empty)
  const TypeRefresher& refresh_types;  // may be empty
};

struct PassDef {
  std::string_view name;
  std::string_view summary;
  std::vector<PassOptionSpec> options;
  // Rewrites ctx.model; returns the number of rewrites made (0: the graph is unchanged).
  int (*run)(PassContext& ctx);
};

// Every pass, in the order of the table in registry.cc.
std::span<const PassDef> all_passes();
// The pass of that name, or nullptr.
const PassDef* find_pass(std::string_view name);

}  // namespace openbpu::passes
