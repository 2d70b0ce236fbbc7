#include "openbpu/debugger/fix_finder.h"

#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>

#include "openbpu/common/atomic_file.h"
#include "openbpu/common/error.h"
#include "openbpu/common/text.h"
#include "openbpu/debugger/analyses.h"
#include "openbpu/frontend/onnx_model.h"
#include "openbpu/pipeline/conversion.h"

namespace openbpu::debugger {

namespace fs = std::filesystem;

namespace {

// The one file of `dir` whose name ends with `suffix`.
fs::path file_ending(const fs::path& dir, const std::string& suffix) {
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    if (e.path().filename().string().ends_with(suffix)) return e.path();
  }
  raise(dir.string(), ": no *", suffix, " after the conversion");
}

// The timing model's latency of a converted model: its BPU subgraphs' "latency (us)", summed.
double bpu_latency_us(const fs::path& dir) {
  double total = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.find("_subgraph_") == std::string::npos || !name.ends_with(".json")) continue;
    const nlohmann::json j = nlohmann::json::parse(read_file(e.path()), nullptr, false);
    if (j.is_discarded() || !j.contains("summary"))
      raise(e.path().string(), ": not a subgraph report");
    total += j["summary"].value("latency (us)", 0.0);
  }
  return total;
}

// `CMD '<model>'` through /bin/sh; its last non-empty output line is the metric.
double command_metric(const std::string& command, const fs::path& model) {
  std::string quoted = "'";
  for (char ch : model.string()) quoted += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  quoted += "'";
  const std::string line = command + " " + quoted;
  FILE* pipe = ::popen(line.c_str(), "r");
  if (pipe == nullptr) raise("--metric-command: cannot run '", line, "'");
  std::string output;
  char buffer[4096];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) output.append(buffer, n);
  const int status = ::pclose(pipe);
  std::istringstream lines(output);
  std::string last, l;
  while (std::getline(lines, l)) {
    if (l.find_first_not_of(" \t\r") != std::string::npos) last = l;
  }
  if (status != 0)
    raise("--metric-command '", line, "' exited with status ", WEXITSTATUS(status), ": ", last);
  char* end = nullptr;
  const double value = std::strtod(last.c_str(), &end);
  while (end != nullptr && (*end == ' ' || *end == '\t' || *end == '\r')) ++end;
  if (last.empty() || end == nullptr || *end != '\0' || !std::isfinite(value)) {
    raise("--metric-command '", line, "': the last line '", last, "' is not a number");
  }
  return value;
}

// The default metric: mean cosine of the quantized model's outputs (in graph order) with the
// optimized float model's, on the dumped calibration samples.
class OutputCosine {
 public:
  OutputCosine(const fs::path& float_model, const fs::path& data, size_t count, int threads)
      : float_model_(frontend::load_onnx(float_model)) {
    options_.threads = threads;
    samples_ = read_debug_data(*float_model_.graph, data, count);
    executor::FloatExecutor ex(float_model_, options_);
    for (const Sample& s : samples_) reference_.push_back(ex.run(s).tensors);
  }
  double measure(const fs::path& quantized_model) const {
    const ir::Model q = frontend::load_onnx(quantized_model);
    executor::FloatExecutor ex(q, options_);
    double sum = 0;
    size_t terms = 0;
    for (size_t i = 0; i < samples_.size(); ++i) {
      const std::vector<Tensor> out = ex.run(samples_[i]).tensors;
      for (size_t k = 0; k < out.size() && k < reference_[i].size(); ++k) {
        const double c = calibration::pair_sums(out[k], reference_[i][k]).cosine();
        sum += std::isfinite(c) ? c : 0.0;
        ++terms;
      }
    }
    return terms ? sum / static_cast<double>(terms) : 0.0;
  }

 private:
  ir::Model float_model_;
  executor::ExecutorOptions options_;
  std::vector<Sample> samples_;
  std::vector<std::vector<Tensor>> reference_;
};

struct Candidate {
  bool ok = false;
  double metric = 0, latency_us = 0;
  std::string error;
  fs::path dir;
};

// Where a node's quantization error comes from: the worst output cosine among its weight and
// among its activation calibration nodes, each quantized alone (1 when it has none).
struct ErrorSource {
  double weight = 1, activation = 1;
};

class Search {
 public:
  Search(const FixOptions& o, const std::function<void(const std::string&)>& say)
      : o_(o), say_(say), yaml_text_(read_file(o.config_file)) {
    const config::CompileConfig cfg =
        config::load_compile_config(o.config_file.string(), o.flavour, o.model_type);
    working_dir_ = cfg.model.working_dir;
    work_ = working_dir_ / "find_fix_candidates";
  }

  // Converts `edit` into `dir` and measures it; a failed conversion or metric is !ok.
  Candidate run(CandidateEdit edit, const std::string& dir_name) {
    Candidate c;
    c.dir = work_ / dir_name;
    fs::remove_all(c.dir);
    fs::create_directories(c.dir);
    edit.working_dir = c.dir.string();
    try {
      convert(edit, c.dir / "candidate.yaml", c.dir / "conversion.log");
      c.latency_us = bpu_latency_us(c.dir);
      c.metric = metric(file_ending(c.dir, "_quantized_model.onnx"));
      c.ok = true;
    } catch (const Error& e) {
      c.error = e.what();
    }
    return c;
  }

  void convert(const CandidateEdit& edit, const fs::path& yaml, const fs::path& log_file) {
    write_file_atomically(yaml, edited_config(yaml_text_, o_.config_file.string(), edit));
    pipeline::ConversionRequest request;
    request.flavour = o_.flavour;
    request.model_type = o_.model_type;
    request.command = o_.flavour == config::ConfigFlavour::kHbCompile ? "hb_compile" : "makertbin";
    request.config_file = yaml.string();
    request.threads = o_.threads;
    pipeline::Log log(log_file.string(), pipeline::LogLevel::kError);
    if (pipeline::run_conversion(request, log) != 0) {
      raise("the conversion of ", yaml.string(), " failed (", log_file.string(), ")");
    }
  }

  double metric(const fs::path& quantized) {
    if (!o_.metric_command.empty()) return command_metric(o_.metric_command, quantized);
    return cosine_->measure(quantized);
  }

  FixResult search();

  struct Choice {
    std::string label;
    std::map<std::string, NodeSetting> nodes;
  };

 private:
  std::optional<Choice> choice(const DebugModel& m, const std::string& node,
                               const ErrorSource& source) const;
  std::vector<std::pair<std::string, Choice>> ranked_choices(const fs::path& dir);
  void grow(FixResult& r, const std::vector<std::pair<std::string, Choice>>& ranked, double budget);
  void finish(FixResult& r);

  const FixOptions& o_;
  const std::function<void(const std::string&)>& say_;
  std::string yaml_text_;
  fs::path working_dir_, work_;
  std::unique_ptr<OutputCosine> cosine_;
  std::set<std::string> model_nodes_;  // node names node_info can name (stage 1's)
  // The name node_info gives a node: its own if stage 1 has it, else that of the stage-1 node
  // it was made of ("<name>.<part>", "<name>@<i>": ir::nodes_standing_for).
  std::optional<std::string> config_name(const std::string& node) const;
};

std::optional<std::string> Search::config_name(const std::string& node) const {
  for (std::string name = node;;) {
    if (model_nodes_.count(name)) return name;
    const size_t cut = name.find_last_of(".@");
    if (cut == std::string::npos || cut == 0) return std::nullopt;
    name.resize(cut);
  }
}

// The node a tensor comes from, through a calibration node; nullptr for a model input.
const ir::Node* producer_of(const ir::Value* v) {
  const ir::Node* p = v != nullptr ? v->producer() : nullptr;
  if (p != nullptr && calibration::is_calibration_node(*p)) p = p->input(0)->producer();
  return p;
}

// The nodes reading a node's outputs, through calibration nodes.
std::vector<const ir::Node*> consumers_of(const ir::Node& node) {
  std::vector<const ir::Node*> readers;
  for (const ir::Value* out : node.outputs()) {
    if (out == nullptr) continue;
    for (const ir::Use& use : out->uses()) {
      if (!calibration::is_calibration_node(*use.node)) {
        readers.push_back(use.node);
        continue;
      }
      for (const ir::Value* c : use.node->outputs()) {
        for (const ir::Use& u : c->uses()) readers.push_back(u.node);
      }
    }
  }
  return readers;
}

// A node's choice: weights cannot be widened, so a node whose weights cost more than its
// activations goes to the CPU, with int16 at its BPU boundaries (its BPU producers' outputs and
// readers' inputs, so that leaving it float does not narrow its neighbours' tensors to int8);
// otherwise int16 activations, or the CPU if they already are int16.
std::optional<Search::Choice> Search::choice(const DebugModel& m, const std::string& node,
                                             const ErrorSource& source) const {
  const std::optional<std::string> name = config_name(node);
  if (!name) return std::nullopt;  // made by stage 2 of nothing node_info can name
  const ir::Node* n = nullptr;
  for (const ir::Node* k : m.model.graph->nodes()) {
    if (k->name() == node) n = k;
  }
  if (n == nullptr) return std::nullopt;
  bool all_int16 = true;
  for (const calibration::CalibrationPoint& p : m.points) {
    if (p.kind != calibration::CalibrationKind::kActivation) continue;
    if (std::find(p.nodes.begin(), p.nodes.end(), node) == p.nodes.end()) continue;
    all_int16 = all_int16 && m.calibration.at(p.tensor)->attrs().get_int("bits", 8) == 16;
  }
  if (source.weight >= source.activation && !all_int16) {
    return Choice{"int16", {{*name, NodeSetting{false, true, true}}}};
  }
  Choice cpu{"CPU", {{*name, NodeSetting{true, false, false}}}};
  auto bpu_neighbour = [&](const ir::Node* k) -> std::optional<std::string> {
    if (k == nullptr || !k->domain().empty() || !calibration::default_quantized_op(k->op_type())) return std::nullopt;
    const std::optional<std::string> neighbour = config_name(k->name());
    return neighbour == name ? std::nullopt : neighbour;
  };
  for (const ir::Value* in : n->inputs()) {
    if (in == nullptr || in->is_constant()) continue;
    if (const auto p = bpu_neighbour(producer_of(in))) cpu.nodes[*p].output_int16 = true;
  }
  for (const ir::Node* c : consumers_of(*n)) {
    if (const auto k = bpu_neighbour(c)) cpu.nodes[*k].input_int16 = true;
  }
  return cpu;
}

// The nodes to change, most sensitive first, each with its choice.
std::vector<std::pair<std::string, Search::Choice>> Search::ranked_choices(const fs::path& dir) {
  DebugModel m = load_debug_model(file_ending(dir, "_calibrated_model.onnx"));
  const std::vector<Sample> samples =
      read_debug_data(*m.model.graph, dir / "calibration_data", o_.data_num);
  SensitivityOptions so;
  so.executor.threads = o_.threads;
  const auto nodes = node_sensitivity(m, samples, so);
  std::map<std::string, double> single;  // calibrated tensor -> cosine quantized alone
  for (Granularity g : {Granularity::kWeight, Granularity::kActivation}) {
    so.granularity = g;
    for (const calibration::NodeSensitivity& s : node_sensitivity(m, samples, so)) {
      single[s.tensors.front()] = s.metrics.cosine;
    }
  }
  std::map<std::string, ErrorSource> source;
  for (const calibration::CalibrationPoint& p : m.points) {
    for (const std::string& node : p.nodes) {
      double& worst = p.kind == calibration::CalibrationKind::kWeight ? source[node].weight
                                                                      : source[node].activation;
      if (single.count(p.tensor)) worst = std::min(worst, single[p.tensor]);
    }
  }
  std::vector<std::pair<std::string, Choice>> out;
  std::set<std::string> named;  // the parts of one node_info name count once, at the first
  for (const calibration::NodeSensitivity& s : nodes) {
    if (s.metrics.cosine >= 1.0) continue;
    const std::optional<std::string> name = config_name(s.node);
    if (!name || !named.insert(*name).second) continue;
    if (std::optional<Choice> c = choice(m, s.node, source[s.node])) out.emplace_back(*name, *c);
  }
  say_("Ranked " + std::to_string(nodes.size()) + " nodes by sensitivity on " +
       std::to_string(samples.size()) + " samples; " + std::to_string(out.size()) +
       " can be changed in node_info.");
  return out;
}

FixResult Search::search() {
  FixResult r;
  say_("Converting " + o_.config_file.string() + " as given...");
  // The as-given conversion also dumps the calibration samples the metric and ranking use.
  const fs::path base_dir = work_ / "step_0";
  {
    CandidateEdit edit;
    fs::remove_all(base_dir);
    fs::create_directories(base_dir);
    edit.working_dir = base_dir.string();
    edit.dump_calibration_data = true;
    convert(edit, base_dir / "candidate.yaml", base_dir / "conversion.log");
    if (o_.metric_command.empty()) {
      cosine_ =
          std::make_unique<OutputCosine>(file_ending(base_dir, "_optimized_float_model.onnx"),
                                         base_dir / "calibration_data", o_.data_num, o_.threads);
    }
    r.metric = metric(file_ending(base_dir, "_quantized_model.onnx"));
    r.latency_us = bpu_latency_us(base_dir);
    frontend::OnnxLoadOptions names_only;
    names_only.run_checker = names_only.infer_shapes = false;
    const ir::Model stage1 =
        frontend::load_onnx(file_ending(base_dir, "_original_float_model.onnx"), names_only);
    for (const ir::Node* n : stage1.graph->nodes()) model_nodes_.insert(n->name());
  }
  r.steps.push_back({"(as given)", r.metric, r.latency_us, true, ""});
  const double budget = o_.budget_us        ? *o_.budget_us
                        : o_.budget_percent ? r.latency_us * (1 + *o_.budget_percent / 100)
                                            : std::numeric_limits<double>::infinity();
  say_("  metric " + fixed(r.metric, 6) + ", BPU latency " + fixed(r.latency_us, 1) +
       " us (budget " + (std::isfinite(budget) ? fixed(budget, 1) + " us" : "none") + ")");
  r.reached = r.metric >= o_.target;
  if (!r.reached) grow(r, ranked_choices(base_dir), budget);
  finish(r);
  return r;
}

// The configuration of the first k ranked choices.
CandidateEdit first_choices(const std::vector<std::pair<std::string, Search::Choice>>& ranked,
                            size_t k) {
  CandidateEdit edit;
  for (size_t i = 0; i < k && i < ranked.size(); ++i) {
    for (const auto& [name, setting] : ranked[i].second.nodes) {
      edit.nodes[name] = edit.nodes[name].merged(setting);
    }
  }
  return edit;
}

// The ranked choices applied to the first k nodes, k = 1, 2, 4, ... until the target is
// reached (then the smallest such k between the last two, by bisection), the latency budget
// is exceeded, the list ends or max_steps conversions were made. A single node's change is a
// noisy step for a task metric; a growing prefix of the ranking is not.
void Search::grow(FixResult& r, const std::vector<std::pair<std::string, Choice>>& ranked,
                  double budget) {
  size_t conversions = 0, below = 0, above = 0;  // k not reaching / reaching the target
  auto attempt = [&](size_t k) {
    const CandidateEdit edit = first_choices(ranked, k);
    const Candidate c = run(edit, "step_" + std::to_string(++conversions));
    std::string change = "first " + std::to_string(k) + " nodes (to " + ranked[k - 1].first + ": " +
                         ranked[k - 1].second.label + ")";
    FixStep step{change, c.metric, c.latency_us, false, c.error};
    if (c.ok && c.latency_us > budget) step.note = "over the latency budget";
    const bool usable = c.ok && step.note.empty();
    const bool reaches = usable && c.metric >= o_.target;
    // Kept: reaching with fewer nodes than before, or (not reached yet) better than the best.
    step.kept = usable && (reaches ? !r.reached || k < above : !r.reached && c.metric > r.metric);
    if (usable && !reaches && !step.kept) step.note = "no better";
    say_("  " + step.change + ": " +
         (c.ok ? "metric " + fixed(c.metric, 6) + ", BPU latency " + fixed(c.latency_us, 1) + " us"
               : "failed") +
         (step.kept           ? "  (kept)"
          : step.note.empty() ? ""
                              : "  (" + step.note + ")"));
    r.steps.push_back(step);
    fs::remove_all(c.dir);
    if (step.kept) {
      r.best = edit;
      r.metric = c.metric;
      r.latency_us = c.latency_us;
      r.reached = reaches;
    }
    if (reaches)
      above = k;
    else
      below = std::max(below, k);
    return c.ok && !(c.latency_us > budget);
  };
  for (size_t k = 1; !ranked.empty() && conversions < o_.max_steps;
       k = std::min(2 * k, ranked.size())) {
    const bool within = attempt(k);
    if (above != 0 || !within || k == ranked.size()) break;
  }
  while (above != 0 && above - below > 1 && conversions < o_.max_steps)
    attempt(below + (above - below) / 2);
}

void Search::finish(FixResult& r) {
  r.working_dir = working_dir_;
  CandidateEdit final_edit = r.best;
  final_edit.working_dir = working_dir_.string();
  fs::create_directories(working_dir_);
  say_("Converting the " + std::string(r.reached ? "found" : "best") + " configuration into " +
       working_dir_.string() + "...");
  convert(final_edit, working_dir_ / "find_fix.yaml", working_dir_ / "find_fix_conversion.log");
  std::ostringstream report, diff;
  report << "step\tchange\tmetric\tBPU latency (us)\tkept\tnote\n";
  for (size_t i = 0; i < r.steps.size(); ++i) {
    const FixStep& s = r.steps[i];
    report << i << "\t" << s.change << "\t" << fixed(s.metric, 6) << "\t" << fixed(s.latency_us, 1)
           << "\t" << (s.kept ? "yes" : "no") << "\t" << s.note << "\n";
  }
  report << (r.reached ? "target reached: " : "target not reached: ") << fixed(r.metric, 6)
         << " (target " << o_.target << "), BPU latency " << fixed(r.latency_us, 1) << " us\n";
  for (const auto& [node, setting] : r.best.nodes) {
    diff << "+ node_info['" << node << "'] = " << describe(setting) << "\n";
  }
  write_file_atomically(working_dir_ / "find_fix_report.txt", report.str());
  write_file_atomically(working_dir_ / "find_fix.diff", diff.str());
  fs::remove_all(work_);
}

}  // namespace

FixResult find_fix(const FixOptions& options, const std::function<void(const std::string&)>& say) {
  Search search(options, say);
  return search.search();
}

}  // namespace openbpu::debugger
