// hmct-debugger: accuracy debugging of a calibrated model (debugger/analyses.h), with the
// reference's subcommands, options and output folders.
//
//   hmct-debugger get-sensitivity-of-nodes MODEL CALIBRATION_DATA [-m METRIC...] [-o NODE]
//                 [-n node|weight|activation] [-d N] [-i NODE...] [-v] [-s DIR]
//   hmct-debugger plot-acc-error MODEL CALIBRATION_DATA [-q NODES...] [-nq NODES...] [-m METRIC]
//   hmct-debugger plot-distribution MODEL CALIBRATION_DATA -n NODE...
//   hmct-debugger get-channelwise-data-distribution MODEL CALIBRATION_DATA -n NODE... [-a AXIS]
//   hmct-debugger sensitivity-analysis MODEL CALIBRATION_DATA [-p THRESHOLD] [-c COUNT]
//   hmct-debugger runall MODEL CALIBRATION_DATA [...]
//   hmct-debugger find-fix --config model.yaml [--metric-command CMD | --metric output-cosine]
//                 --target VALUE [--latency-budget 25% | MICROSECONDS]
#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <thread>

#include "openbpu/base/file_name.h"
#include "openbpu/common/atomic_file.h"
#include "openbpu/common/error.h"
#include "openbpu/common/text.h"
#include "openbpu/debugger/analyses.h"
#include "openbpu/debugger/fix_finder.h"
#include "openbpu/debugger/plots.h"

namespace {

using namespace openbpu;
using namespace openbpu::debugger;
namespace fs = std::filesystem;

// Options every subcommand takes.
struct Common {
  std::string model, data, save_dir = "./debug_result";
  size_t data_num = 1;
  bool verbose = false;
};

struct Loaded {
  DebugModel m;
  std::vector<Sample> samples;
  executor::ExecutorOptions executor;
};

Loaded load(const Common& c) {
  Loaded l{load_debug_model(c.model), {}, {}};
  l.samples = read_debug_data(*l.m.model.graph, c.data, c.data_num);
  l.executor.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return l;
}

fs::path output_dir(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) raise("-s ", dir.string(), ": cannot create the folder: ", ec.message());
  return dir;
}

std::string value_text(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return fixed(v, 6);
}

// --- get-sensitivity-of-nodes ---------------------------------------------------------------
struct SensitivityArgs {
  std::vector<std::string> metrics{"cosine-similarity"}, interested;
  std::string output_node, node_type = "node";
};

std::vector<calibration::NodeSensitivity> sensitivity(Loaded& l, const Common& c,
                                                      const SensitivityArgs& a,
                                                      const fs::path& dir) {
  std::vector<Metric> metrics;
  for (const std::string& name : a.metrics) metrics.push_back(parse_metric(name));
  SensitivityOptions o;
  o.granularity = parse_granularity(a.node_type);
  o.sort_metric = metrics.front();
  o.output_node = a.output_node;
  o.interested = a.interested;
  o.executor = l.executor;
  const auto ranked = node_sensitivity(l.m, l.samples, o);
  std::ostringstream table;
  table << "node\ttype";
  for (Metric m : metrics) table << "\t" << metric_name(m);
  table << "\n";
  for (const calibration::NodeSensitivity& s : ranked) {
    table << s.node << "\t" << s.op_type;
    for (Metric m : metrics) table << "\t" << value_text(metric_value(s.metrics, m));
    table << "\n";
  }
  write_file_atomically(output_dir(dir) / "node_sensitivity.txt", table.str());
  const size_t shown = c.verbose ? ranked.size() : std::min<size_t>(ranked.size(), 10);
  std::cout << "Sensitivity of " << ranked.size() << " " << a.node_type << "s on "
            << l.samples.size() << " samples (most sensitive first by " << metric_name(metrics[0])
            << "):\n";
  std::istringstream lines(table.str());
  std::string line;
  for (size_t i = 0; i <= shown && std::getline(lines, line); ++i)
    std::cout << "  " << line << "\n";
  BarChart chart{"Node sensitivity (" + a.node_type + "s quantized one at a time, " +
                     std::to_string(l.samples.size()) + " samples)",
                 metric_name(metrics[0]) +
                     (metric_unit(metrics[0]).empty() ? "" : " [" + metric_unit(metrics[0]) + "]"),
                 {},
                 {}};
  for (size_t i = 0; i < ranked.size() && i < 30; ++i) {
    chart.names.push_back(ranked[i].node);
    chart.values.push_back(metric_value(ranked[i].metrics, metrics[0]));
  }
  if (!chart.names.empty()) write_bar_chart(chart, dir / "node_sensitivity");
  return ranked;
}

// --- plot-acc-error --------------------------------------------------------------------------
struct AccErrorArgs {
  std::vector<std::string> quantize, non_quantize;  // each a comma-separated node list
  std::string metric = "cosine-similarity";
};

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> names;
  std::istringstream in(text);
  std::string name;
  while (std::getline(in, name, ',')) {
    if (!name.empty()) names.push_back(name);
  }
  return names;
}

// A -q / -nq value as calibrated tensors: "weight", "activation", or node names.
std::vector<std::string> tensors_of_list(const DebugModel& m, const std::string& list) {
  if (list == "weight") return calibrated_of_kind(m, calibration::CalibrationKind::kWeight);
  if (list == "activation") return calibrated_of_kind(m, calibration::CalibrationKind::kActivation);
  std::vector<std::string> tensors;
  for (const std::string& name : split_list(list)) {
    for (std::string& t : calibrated_tensors_of(m, name)) tensors.push_back(std::move(t));
  }
  return tensors;
}

void acc_error(Loaded& l, const AccErrorArgs& a, const fs::path& dir) {
  const Metric metric = parse_metric(a.metric);
  std::vector<QuantizedSet> sets;
  // "all but" curves are read against everything quantized.
  if (a.quantize.empty() && !a.non_quantize.empty())
    sets.push_back({"quantize all", all_calibrated(l.m)});
  for (const std::string& q : a.quantize)
    sets.push_back({"quantize " + q, tensors_of_list(l.m, q)});
  for (const std::string& q : a.non_quantize) {
    const std::vector<std::string> kept = tensors_of_list(l.m, q);
    QuantizedSet s{"quantize all but " + q, {}};
    for (const std::string& t : all_calibrated(l.m)) {
      if (std::find(kept.begin(), kept.end(), t) == kept.end()) s.tensors.push_back(t);
    }
    sets.push_back(std::move(s));
  }
  if (sets.empty()) {
    sets = {{"quantize all", all_calibrated(l.m)},
            {"quantize weights", calibrated_of_kind(l.m, calibration::CalibrationKind::kWeight)},
            {"quantize activations",
             calibrated_of_kind(l.m, calibration::CalibrationKind::kActivation)}};
  }
  const AccumulatedError e = accumulated_error(l.m, l.samples, sets, metric, l.executor);
  std::ostringstream table;
  table << "index\tnode";
  for (const auto& curve : e.curves) table << "\t" << curve.label;
  table << "\n";
  for (size_t i = 0; i < e.nodes.size(); ++i) {
    table << i << "\t" << e.nodes[i];
    for (const auto& curve : e.curves) table << "\t" << value_text(curve.values[i]);
    table << "\n";
  }
  write_file_atomically(output_dir(dir) / "accumulate_error.txt", table.str());
  LineChart chart{"Accumulated error: each node's output against the float model (" +
                      std::to_string(l.samples.size()) + " samples)",
                  "node (graph order)",
                  metric_name(metric),
                  {},
                  e.nodes};
  for (const auto& curve : e.curves) chart.series.push_back({curve.label, curve.values});
  write_line_chart(chart, dir / "accumulate_error");
  std::cout << "Accumulated error of " << e.nodes.size() << " nodes, " << e.curves.size()
            << " configurations: " << (dir / "accumulate_error.png").string() << "\n";
  for (const auto& curve : e.curves) {
    std::cout << "  " << curve.label << ": last node " << value_text(curve.values.back()) << "\n";
  }
}

// --- plot-distribution / get-channelwise-data-distribution ----------------------------------
std::string threshold_label(const std::vector<float>& t, int bits) {
  if (t.empty()) return "";
  return (t.size() == 1 ? "threshold " + fixed(t[0], 4)
                        : std::to_string(t.size()) + " thresholds") +
         " (int" + std::to_string(bits) + ")";
}

void distributions(Loaded& l, const std::vector<std::string>& nodes, const fs::path& dir) {
  if (nodes.empty()) raise("-n: give at least one node (calibration node, tensor or node name)");
  output_dir(dir);
  for (const std::string& name : nodes) {
    const ValueDistribution d = value_distribution(l.m, l.samples, name, 128, l.executor);
    HistogramChart chart{"Distribution of " + d.tensor + " (" + d.kind + ")",
                         "value",
                         d.edges,
                         d.counts,
                         {},
                         threshold_label(d.thresholds, d.bits)};
    float largest = 0;
    for (float t : d.thresholds) largest = std::max(largest, t);
    if (!d.thresholds.empty()) chart.markers = {-largest, largest};
    if (d.thresholds.size() > 1) chart.marker_label = "largest of " + chart.marker_label;
    const fs::path stem = dir / base::safe_file_name(name);
    write_histogram(chart, stem);
    std::cout << name << ": " << d.kind << " " << d.tensor << ", min " << fixed(d.min, 6)
              << ", max " << fixed(d.max, 6) << " -> " << stem.string() << ".png\n";
  }
}

void channelwise(Loaded& l, const std::vector<std::string>& nodes, int axis, const fs::path& dir) {
  if (nodes.empty()) raise("-n: give at least one calibration node");
  output_dir(dir);
  for (const std::string& name : nodes) {
    const ChannelDistribution d = channel_distribution(l.m, l.samples, name, axis, l.executor);
    BoxChart chart{"Per-channel distribution of " + d.tensor + " (" + d.kind + ", axis " +
                       std::to_string(d.axis) + ")",
                   "channel",
                   "value",
                   {},
                   {},
                   threshold_label(d.thresholds, d.bits)};
    std::ostringstream table;
    table << "channel\tmin\tq1\tmedian\tq3\tmax\n";
    for (size_t c = 0; c < d.channels.size(); ++c) {
      const auto& ch = d.channels[c];
      chart.boxes.push_back({ch.min, ch.q1, ch.median, ch.q3, ch.max});
      table << c << "\t" << fixed(ch.min, 6) << "\t" << fixed(ch.q1, 6) << "\t"
            << fixed(ch.median, 6) << "\t" << fixed(ch.q3, 6) << "\t" << fixed(ch.max, 6) << "\n";
    }
    if (d.thresholds.size() == 1 || d.thresholds.size() == d.channels.size()) {
      chart.markers.assign(d.thresholds.begin(), d.thresholds.end());
    }
    const fs::path stem = dir / (base::safe_file_name(name) + "_channelwise");
    write_box_chart(chart, stem);
    write_file_atomically(fs::path(stem.string() + ".txt"), table.str());
    std::cout << name << ": " << d.channels.size() << " channels -> " << stem.string() << ".png\n";
  }
}

// --- sensitivity-analysis --------------------------------------------------------------------
struct AnalysisArgs {
  double pick_threshold = 0.999;  // nodes whose sensitivity cosine is below it
  size_t count = 10;              // at most this many
  std::string metric = "cosine-similarity", output_node;
};

void analysis(Loaded& l, const AnalysisArgs& a, std::vector<calibration::NodeSensitivity> ranked,
              const fs::path& dir) {
  const Metric metric = parse_metric(a.metric);
  if (ranked.empty()) {
    SensitivityOptions o;
    o.output_node = a.output_node;
    o.executor = l.executor;
    ranked = node_sensitivity(l.m, l.samples, o);
  }
  size_t picked = 0;
  while (picked < ranked.size() && picked < a.count &&
         ranked[picked].metrics.cosine < a.pick_threshold) {
    ++picked;
  }
  const SensitivityCurve curve =
      sensitivity_analysis(l.m, l.samples, ranked, picked, metric, a.output_node, l.executor);
  std::ostringstream table;
  table << "float_nodes\tlast_node_left_float\t" << metric_name(metric) << "\n";
  std::vector<std::string> names{"(all quantized)"};
  for (size_t k = 0; k < curve.values.size(); ++k) {
    if (k > 0) names.push_back("+ " + curve.nodes[k - 1]);
    table << k << "\t" << (k ? curve.nodes[k - 1] : "-") << "\t" << value_text(curve.values[k])
          << "\n";
  }
  write_file_atomically(output_dir(dir) / "sensitivity_analysis.txt", table.str());
  LineChart chart{"Sensitivity analysis: the most sensitive nodes left float one by one",
                  "nodes left float",
                  metric_name(metric),
                  {{"model output", curve.values}},
                  names};
  write_line_chart(chart, dir / "sensitivity_analysis");
  std::cout << "Sensitivity analysis (" << picked << " nodes with cosine below " << a.pick_threshold
            << "):\n"
            << table.str();
}

// --- find-fix ---------------------------------------------------------------------------------
struct FindFixArgs {
  std::string config, model_type = "onnx", tool = "hb_mapper", metric = "output-cosine",
                      metric_command, budget;
  double target = 0;
  size_t data_num = 5, max_steps = 30;
};

int fix(const FindFixArgs& a) {
  FixOptions o;
  o.config_file = a.config;
  if (a.model_type != "onnx" && a.model_type != "caffe") {
    raise("--model-type ", a.model_type, ": expected onnx or caffe");
  }
  o.model_type = a.model_type == "caffe" ? config::ModelType::kCaffe : config::ModelType::kOnnx;
  if (a.tool != "hb_mapper" && a.tool != "hb_compile") {
    raise("--tool ", a.tool, ": expected hb_mapper or hb_compile");
  }
  o.flavour =
      a.tool == "hb_compile" ? config::ConfigFlavour::kHbCompile : config::ConfigFlavour::kHbMapper;
  if (a.metric_command.empty() && a.metric != "output-cosine") {
    raise("--metric ", a.metric, ": expected output-cosine (or give --metric-command)");
  }
  o.metric_command = a.metric_command;
  o.target = a.target;
  if (!a.budget.empty()) {
    const bool percent = a.budget.back() == '%';
    const std::string number = percent ? a.budget.substr(0, a.budget.size() - 1) : a.budget;
    char* end = nullptr;
    const double v = std::strtod(number.c_str(), &end);
    if (number.empty() || *end != '\0' || !(v >= 0)) {
      raise("--latency-budget ", a.budget, ": expected microseconds or a percentage (25%)");
    }
    (percent ? o.budget_percent : o.budget_us) = v;
  }
  o.data_num = a.data_num;
  o.max_steps = a.max_steps;
  o.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const FixResult r = find_fix(o, [](const std::string& line) { std::cout << line << std::endl; });
  std::cout << (r.reached ? "Target reached: " : "Target not reached: ") << fixed(r.metric, 6)
            << " (target " << a.target << "), BPU latency " << fixed(r.latency_us, 1) << " us\n"
            << "yaml diff (" << (r.working_dir / "find_fix.yaml").string() << "):\n";
  for (const auto& [node, setting] : r.best.nodes) {
    std::cout << "+ node_info['" << node << "'] = " << describe(setting) << "\n";
  }
  if (r.best.nodes.empty()) std::cout << "  (none)\n";
  std::cout << "Report: " << (r.working_dir / "find_fix_report.txt").string() << "\n";
  return r.reached ? 0 : 2;
}

// --- the command line ------------------------------------------------------------------------
// The reference's multi-letter short options (-nq, -dnl, ...), which CLI11 does not take, as
// their long forms.
std::vector<std::string> long_forms(int argc, char** argv) {
  static const std::map<std::string, std::string> kAliases = {
      {"-nq", "--non_quantize_node"}, {"-nqn", "--non_quantize_node"}, {"-qn", "--quantize_node"},
      {"-nm", "--ns_metrics"},        {"-nt", "--node_type"},          {"-dn", "--data_num"},
      {"-dnl", "--dis_nodes_list"},   {"-cn", "--cw_nodes_list"}};
  std::vector<std::string> args;
  for (int i = argc - 1; i >= 1; --i) {
    auto it = kAliases.find(argv[i]);
    args.push_back(it != kAliases.end() ? it->second : argv[i]);
  }
  return args;  // CLI11 takes them reversed
}

void add_common(CLI::App* sub, Common& c) {
  sub->add_option("MODEL", c.model, "the calibrated model (<prefix>_calibrated_model.onnx)")
      ->required();
  sub->add_option("CALIBRATION_DATA", c.data,
                  "the folder of samples (.npy or raw), one sub-folder per input for several")
      ->required();
  sub->add_option("-s,--save_dir", c.save_dir, "output folder")->capture_default_str();
  sub->add_option("-d,--data_num", c.data_num, "samples used (0: all)")->capture_default_str();
  sub->add_flag("-v,--verbose", c.verbose, "print every node");
}

int run(int argc, char** argv) {
  CLI::App app{"Accuracy debugging of a calibrated model"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("hmct-debugger version ") + OPENBPU_VERSION_STRING);
  Common c;
  SensitivityArgs sens;
  AccErrorArgs acc;
  AnalysisArgs ana;
  std::vector<std::string> dis_nodes, cw_nodes;
  int axis = -1;

  auto* s = app.add_subcommand("get-sensitivity-of-nodes", "each node quantized alone, scored");
  add_common(s, c);
  s->add_option("-m,--metrics", sens.metrics, "cosine-similarity, mse, mre, sqnr, chebyshev");
  s->add_option("-o,--output_node", sens.output_node, "compare this node's output");
  s->add_option("-n,--node_type", sens.node_type, "node, weight or activation");
  s->add_option("-i,--interested_nodes", sens.interested, "only these candidates");
  auto* p = app.add_subcommand("plot-acc-error", "each node's error with a set quantized");
  add_common(p, c);
  p->add_option("-q,--quantize_node", acc.quantize,
                "quantize only these (comma list; weight, activation)");
  p->add_option("--non_quantize_node", acc.non_quantize, "quantize all but these (comma list)");
  p->add_option("-m,--metric", acc.metric, "the metric");
  auto* d = app.add_subcommand("plot-distribution", "histograms of tensors' values");
  add_common(d, c);
  d->add_option("-n,--nodes_list", dis_nodes, "calibration nodes, tensors or nodes")->required();
  auto* w = app.add_subcommand("get-channelwise-data-distribution", "per-channel boxes");
  add_common(w, c);
  w->add_option("-n,--nodes_list", cw_nodes, "calibration nodes")->required();
  w->add_option("-a,--axis", axis, "channel axis (default: the calibration node's)");
  auto* a = app.add_subcommand("sensitivity-analysis", "the most sensitive nodes left float");
  add_common(a, c);
  a->add_option("-p,--pick_threshold", ana.pick_threshold, "nodes with cosine below this")
      ->capture_default_str();
  a->add_option("-c,--count", ana.count, "at most this many nodes")->capture_default_str();
  a->add_option("-m,--metric", ana.metric, "the metric");
  a->add_option("-o,--output_node", ana.output_node, "compare this node's output");
  auto* r = app.add_subcommand("runall", "every analysis, one sub-folder each");
  add_common(r, c);
  r->add_option("--ns_metrics", sens.metrics, "sensitivity metrics");
  r->add_option("-o,--output_node", sens.output_node, "compare this node's output");
  r->add_option("--node_type", sens.node_type, "node, weight or activation");
  r->add_option("-i,--interested_nodes", sens.interested, "only these candidates");
  r->add_option("--dis_nodes_list", dis_nodes, "distribution nodes (default: most sensitive)");
  r->add_option("--cw_nodes_list", cw_nodes, "channelwise nodes (default: most sensitive)");
  r->add_option("-a,--axis", axis, "channel axis");
  r->add_option("--quantize_node", acc.quantize, "plot-acc-error quantize lists");
  r->add_option("--non_quantize_node", acc.non_quantize, "plot-acc-error non-quantize lists");

  FindFixArgs ff;
  auto* f = app.add_subcommand("find-fix", "search node choices that reach a target metric");
  f->add_option("--config", ff.config, "the conversion yaml")->required();
  f->add_option("--model-type", ff.model_type, "onnx or caffe")->capture_default_str();
  f->add_option("--tool", ff.tool, "the yaml's flavour: hb_mapper or hb_compile")
      ->capture_default_str();
  f->add_option("--metric", ff.metric, "output-cosine (on the calibration samples)")
      ->capture_default_str();
  f->add_option(
      "--metric-command", ff.metric_command,
      "CMD run as 'CMD <quantized model>'; its last output line is the metric (higher is better)");
  f->add_option("--target", ff.target, "the metric to reach")->required();
  f->add_option("--latency-budget", ff.budget,
                "BPU latency at most: microseconds, or N% above the as-given");
  f->add_option("-d,--data_num", ff.data_num, "samples for the ranking and output-cosine")
      ->capture_default_str();
  f->add_option("--max-steps", ff.max_steps, "conversions at most")->capture_default_str();

  std::vector<std::string> args = long_forms(argc, argv);
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (f->parsed()) return fix(ff);
  Loaded l = load(c);
  const fs::path dir = c.save_dir;
  if (s->parsed()) sensitivity(l, c, sens, dir);
  if (p->parsed()) acc_error(l, acc, dir);
  if (d->parsed()) distributions(l, dis_nodes, dir);
  if (w->parsed()) channelwise(l, cw_nodes, axis, dir);
  if (a->parsed()) analysis(l, ana, {}, dir);
  if (r->parsed()) {
    const auto ranked = sensitivity(l, c, sens, dir / "node_sensitivity");
    // The calibration nodes of the most sensitive nodes, unless listed.
    std::vector<std::string> top;
    for (size_t i = 0; i < ranked.size() && top.size() < 5; ++i) {
      for (const std::string& t : ranked[i].tensors) {
        const std::string node = l.m.calibration.at(t)->name();
        if (std::find(top.begin(), top.end(), node) == top.end() && top.size() < 5)
          top.push_back(node);
      }
    }
    if (acc.quantize.empty() && acc.non_quantize.empty() && !ranked.empty()) {
      std::string list;
      for (size_t i = 0; i < ranked.size() && i < 3; ++i) list += (i ? "," : "") + ranked[i].node;
      acc.non_quantize = {list};
    }
    acc_error(l, acc, dir / "accumulate_error");
    distributions(l, dis_nodes.empty() ? top : dis_nodes, dir / "data_distribution");
    channelwise(l, cw_nodes.empty() ? top : cw_nodes, axis, dir / "channelwise_distribution");
    ana.output_node = sens.output_node;
    analysis(l, ana,
             sens.node_type == "node" && sens.interested.empty() ? ranked : decltype(ranked){},
             dir / "sensitivity_analysis");
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const Error& e) {
    std::cerr << "ERROR " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {  // e.g. a folder that cannot be created
    std::cerr << "ERROR " << e.what() << "\n";
    return 1;
  }
}
