// compiler_parameters, and the rules that span groups.
#include <algorithm>

#include "group_parsers.h"

namespace openbpu::config {
namespace {

constexpr std::string_view kKnownExtraParams[] = {"input_no_padding", "output_no_padding"};

bool is_int16(QuantDataType t) {
  return t == QuantDataType::kInt16;
}

// "; core_num 2 is available on bernoulli2 only": the marches with that many cores, by the table.
std::string marches_with_cores(int64_t cores) {
  std::string names;
  for (const simulator::MarchSpec& m : simulator::all_marches()) {
    if (m.bpu_cores >= cores) names += (names.empty() ? "" : ", ") + std::string(m.name);
  }
  if (names.empty()) return "";
  return "; core_num " + std::to_string(cores) + " is available on " + names + " only";
}

}  // namespace

std::optional<std::string> resizer_size_problem(const CompileConfig& config, const InputSpec& input,
                                                InputSource source) {
  const simulator::MarchSpec& spec = simulator::march_spec(config.model.march);
  if (source != InputSource::kResizer || spec.resizer_input_area_max == 0 || input.shape.size() != 4) {
    return std::nullopt;
  }
  const bool nchw = input.layout_train == Layout::kNchw;
  const int64_t h = input.shape[nchw ? 2 : 1];
  const int64_t w = input.shape[nchw ? 3 : 2];
  if (h * w < spec.resizer_input_area_max) return std::nullopt;
  return "resizer input on " + std::string(spec.name) + " needs H*W < " +
         std::to_string(spec.resizer_input_area_max) + "; " + std::to_string(h) + "x" + std::to_string(w) + " is " +
         std::to_string(h * w);
}

void parse_compiler_parameters(YamlGroup& g, ParseContext& ctx) {
  CompilerParameters& p = ctx.config.compiler;
  const bool compile = ctx.flavour == ConfigFlavour::kHbCompile;

  if (auto raw = g.text("compile_mode")) {
    auto mode = parse_enum<CompileMode>(*raw);
    if (mode == CompileMode::kBalance && !compile) {
      g.error("compile_mode",
              "'balance' is a compile_mode of hb_compile; hb_mapper accepts "
              "'latency', 'bandwidth'");
    } else if (mode) {
      p.compile_mode = *mode;
    } else {
      std::vector<std::string_view> names = {"latency", "bandwidth"};
      if (compile) names.push_back("balance");
      g.error("compile_mode", not_one_of(*raw, names));
    }
  }
  if (compile) {
    auto factor = g.integer("balance_factor", 0, 100);
    if (factor && p.compile_mode != CompileMode::kBalance) {
      g.error("balance_factor", "is used only with compile_mode 'balance' (compile_mode is '" +
                                    std::string(to_string(p.compile_mode)) + "')");
    }
    p.balance_factor = factor;
    if (p.compile_mode == CompileMode::kBalance && !g.given("balance_factor")) {
      g.group_error(
          "Missing keys: 'balance_factor' (compile_mode 'balance' needs it: 0 favours "
          "bandwidth, 100 favours latency)");
    }
  }
  if (auto debug = g.flag("debug")) p.debug = *debug;
  if (auto cores = g.integer("core_num", 1, 2)) p.core_num = *cores;

  if (compile) {
    constexpr OptimizeLevel kLevels[] = {OptimizeLevel::kO0, OptimizeLevel::kO1,
                                         OptimizeLevel::kO2};
    if (auto raw = g.text("optimize_level")) {
      auto level = parse_enum<OptimizeLevel>(*raw);
      if (level == OptimizeLevel::kO3) {
        g.error("optimize_level", "'" + *raw +
                                      "' is not one of 'O0', 'O1', 'O2' (hb_compile's "
                                      "highest level is O2)");
      } else if (auto v = g.choice_from_text<OptimizeLevel>("optimize_level", *raw, kLevels)) {
        p.optimize_level = *v;
      }
    }
  } else if (auto level = g.choice<OptimizeLevel>("optimize_level")) {
    p.optimize_level = *level;
  } else if (!g.given("optimize_level")) {
    g.group_error("Missing keys: 'optimize_level'");
  }

  if (auto node = g.value("input_source")) {
    if (!node->IsMap()) {
      g.error("input_source",
              "expected a mapping {input name: ddr | pyramid | resizer}, got " + describe(*node));
    } else {
      for (auto it = node->begin(); it != node->end(); ++it) {
        const std::string name = trimmed(it->first.Scalar());
        if (!it->second.IsScalar()) {
          g.error("input_source", "input '" + name + "': expected ddr, pyramid or resizer, got " +
                                      describe(it->second));
          continue;
        }
        const std::string text = trimmed(it->second.Scalar());
        if (auto source = parse_enum<InputSource>(text)) {
          p.input_source[name] = *source;
        } else {
          g.error("input_source",
                  "input '" + name + "': " +
                      not_one_of(text, spellings_of<InputSource>(std::span<const InputSource>(
                                           all_values<InputSource>()))));
        }
      }
    }
  }
  if (auto t = g.integer("max_time_per_fc", 0, 4294967295LL,
                         "0 (no limit) or microseconds in [1000, 4294967295]")) {
    if (*t != 0 && *t < 1000) {
      g.error("max_time_per_fc",
              "expected 0 (no limit) or microseconds in [1000, 4294967295], "
              "got '" +
                  std::to_string(*t) + "'");
    } else {
      p.max_time_per_fc = *t;
    }
  }
  p.jobs = g.integer("jobs", 1, 4096);
  if (auto advice =
          g.integer("advice", 0, 4294967295LL, "microseconds in [0, 4294967295] (0 = off)")) {
    p.advice = *advice;
  }
  if (compile) {
    if (auto node = g.value("extra_params")) {
      if (!node->IsMap()) {
        g.error("extra_params", "expected a mapping {name: value}, got " + describe(*node));
      } else {
        for (auto it = node->begin(); it != node->end(); ++it) {
          const std::string name = trimmed(it->first.Scalar());
          if (!it->second.IsScalar()) {
            g.error("extra_params",
                    "'" + name + "': expected a single value, got " + describe(it->second));
            continue;
          }
          const std::string value = trimmed(it->second.Scalar());
          const bool known = std::find(std::begin(kKnownExtraParams), std::end(kKnownExtraParams),
                                       name) != std::end(kKnownExtraParams);
          if (known && !bool_from_text(value)) {
            g.error("extra_params", "'" + name + "': expected True or False, got '" + value + "'");
            continue;
          }
          if (!known) {
            ctx.warn("compiler_parameters: extra_params '" + name +
                     "' is kept in the config but not used by OpenBPU's compiler" +
                     did_you_mean(name, kKnownExtraParams));
          }
          p.extra_params[name] = value;
        }
      }
    }
  }
}

void check_cross_group_rules(ParseContext& ctx, const ParseState& state, IssueList& issues) {
  const CompileConfig& config = ctx.config;
  const auto& inputs = config.input.inputs;
  const std::string march(to_string(config.model.march));

  // March-specific keys.
  const simulator::MarchSpec& spec = simulator::march_spec(config.model.march);
  if (state.march_known && !spec.supports_int16()) {
    const std::string why = " is not available on " + march +
                            " (its BPU has no int16 path; place nodes "
                            "with run_on_cpu / run_on_bpu)";
    if (!config.model.node_info.empty()) {
      issues.add(state.node_info_group, "node_info", "node_info" + why);
    }
    if (!config.model.set_node_data_type.empty()) {
      issues.add("model_parameters", "set_node_data_type", "set_node_data_type" + why);
    }
    for (const auto& rule : config.calibration.optimization) {
      if (is_int16(rule.data_type)) {
        issues.add("calibration_parameters", "optimization",
                   "'" + rule.spelling +
                       "' is not available on " + march + " (int8 only; "
                       "set_model_output_int8 is)");
      }
    }
  }
  if (state.march_known && config.compiler.core_num > spec.bpu_cores) {
    issues.add("compiler_parameters", "core_num",
               "core_num " + std::to_string(config.compiler.core_num) + " is more than march '" +
                   march + "' has BPU cores (" + std::to_string(spec.bpu_cores) +
                   ")" + marches_with_cores(config.compiler.core_num));
  }

  // Node placement: one node cannot be forced onto both units.
  const auto& cpu = config.calibration.run_on_cpu;
  const auto& bpu = config.calibration.run_on_bpu;
  for (const auto& name : cpu) {
    if (std::find(bpu.begin(), bpu.end(), name) != bpu.end()) {
      issues.add("calibration_parameters", "run_on_cpu",
                 "node '" + name + "' is in both run_on_cpu and run_on_bpu");
    }
  }
  for (const auto& [name, setting] : config.model.node_info) {
    if (!setting.on) continue;
    const bool in_cpu = std::find(cpu.begin(), cpu.end(), name) != cpu.end();
    const bool in_bpu = std::find(bpu.begin(), bpu.end(), name) != bpu.end();
    if ((in_cpu && *setting.on == ExecutionUnit::kBpu) ||
        (in_bpu && *setting.on == ExecutionUnit::kCpu)) {
      issues.add("model_parameters", "node_info",
                 "node '" + name + "' has 'ON': '" + std::string(to_string(*setting.on)) +
                     "' but is listed in " + (in_cpu ? "run_on_cpu" : "run_on_bpu"));
    }
  }

  // input_source: names of inputs, sources their input_type_rt allows.
  if (!state.inputs_known) return;
  std::vector<std::string> names;
  for (const auto& input : inputs) names.push_back(input.name);
  for (const auto& [name, source] : config.compiler.input_source) {
    auto it = std::find(names.begin(), names.end(), name);
    if (it == names.end()) {
      if (config.input.names_given) {
        issues.add("compiler_parameters", "input_source",
                   "'" + name + "' is not an input; input_name lists " + quoted_list(names) +
                       did_you_mean(name, names));
      }
      continue;  // unnamed inputs: checked against the model by resolve_against_model()
    }
    const InputSpec& input = inputs[it - names.begin()];
    if (source != InputSource::kDdr && input.type_rt != InputType::kNv12 &&
        input.type_rt != InputType::kGray) {
      issues.add("compiler_parameters", "input_source",
                 "input '" + name + "': '" + std::string(to_string(source)) +
                     "' delivers nv12 or gray images; input_type_rt is '" +
                     std::string(to_string(input.type_rt)) + "' (use ddr)");
    }
    if (auto problem = resizer_size_problem(config, input, source)) {
      issues.add("compiler_parameters", "input_source", "input '" + name + "': " + *problem);
    }
  }
}

}  // namespace openbpu::config
