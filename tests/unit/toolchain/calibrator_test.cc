// The calibrator: determinism, streaming (one sample alive at a time), the method search and the
// sensitivity ranking.
#include "openbpu/calibration/calibrator.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <random>

#include "openbpu/calibration/calibration_nodes.h"
#include "openbpu/calibration/fake_quant_evaluation.h"
#include "openbpu/common/error.h"
#include "openbpu/ir/verifier.h"
#include "openbpu/kernels/registry.h"

namespace openbpu::calibration {
namespace {

using ir::TensorType;
using kernels::DataType;

Tensor weights(kernels::Shape shape, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Tensor t(DataType::kFloat32, std::move(shape));
  for (int64_t i = 0; i < t.element_count(); ++i) {
    t.data<float>()[i] = static_cast<float>(static_cast<double>(rng() >> 11) * 0x1.0p-53 - 0.5);
  }
  return t;
}

// A float32 node of unknown shape writing `out`, named <op>_<out>.
ir::Node* add_float_node(ir::Graph& g, const std::string& op, std::vector<ir::Value*> in, const std::string& out) {
  ir::Node* n = g.add_node({op, std::move(in), {out}, op + "_" + out, "", {}});
  n->output(0)->set_type(TensorType{DataType::kFloat32, std::nullopt});
  return n;
}

// x[1,3,8,8] -> Conv -> Relu -> Conv -> Add(skip from the first Relu) -> GlobalAveragePool
// -> Flatten -> Gemm -> Softmax -> y[1,4] (scored through the logits)
ir::Model model() {
  ir::Model m;
  m.opsets.push_back({"", 13});
  ir::Graph& g = *m.graph;
  ir::Value* x = g.add_value("x", TensorType::of(DataType::kFloat32, {1, 3, 8, 8}));
  g.add_input(x);
  auto node = [&](const std::string& op, std::vector<ir::Value*> in, const std::string& out) {
    return add_float_node(g, op, std::move(in), out);
  };
  ir::Node* conv1 = node("Conv", {x, g.add_constant("w1", weights({6, 3, 3, 3}, 1))}, "c1");
  conv1->attrs().set("pads", std::vector<int64_t>{1, 1, 1, 1});
  ir::Value* r1 = node("Relu", {conv1->output(0)}, "r1")->output(0);
  ir::Node* conv2 = node("Conv", {r1, g.add_constant("w2", weights({6, 6, 3, 3}, 2))}, "c2");
  conv2->attrs().set("pads", std::vector<int64_t>{1, 1, 1, 1});
  ir::Value* a = node("Add", {conv2->output(0), r1}, "a")->output(0);
  ir::Value* p = node("GlobalAveragePool", {a}, "p")->output(0);
  ir::Value* f = node("Flatten", {p}, "f")->output(0);
  ir::Value* logits = node("Gemm", {f, g.add_constant("w3", weights({6, 4}, 3))}, "l")->output(0);
  ir::Value* y = node("Softmax", {logits}, "y")->output(0);
  g.add_output(y);
  return m;
}

// Counts live sample buffers (the calibrator must hold one sample at a time).
class CountingAllocator : public kernels::Allocator {
 public:
  std::shared_ptr<kernels::Buffer> allocate(size_t bytes) override {
    struct Counted : kernels::Buffer {
      Counted(std::shared_ptr<kernels::Buffer> b, CountingAllocator* o)
          : inner(std::move(b)), owner(o) {}
      ~Counted() override { --owner->live; }
      void* data() override { return inner->data(); }
      size_t size() const override { return inner->size(); }
      std::shared_ptr<kernels::Buffer> inner;
      CountingAllocator* owner;
    };
    ++live;
    peak = std::max(peak, live);
    return std::make_shared<Counted>(kernels::Allocator::default_allocator().allocate(bytes), this);
  }
  int live = 0;
  int peak = 0;
};

SampleStream samples(size_t count, kernels::Allocator* allocator = nullptr) {
  return {count, [allocator](size_t i) {
            std::mt19937_64 rng(1000 + i);
            Tensor t(DataType::kFloat32, {1, 3, 8, 8},
                     allocator ? *allocator : kernels::Allocator::default_allocator());
            for (int64_t k = 0; k < t.element_count(); ++k) {
              const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;
              t.data<float>()[k] = static_cast<float>(u * u * 6 - 1);
            }
            return std::map<std::string, Tensor>{{"x", std::move(t)}};
          }};
}

// Every HzCalibration node's thresholds, by node name, as raw bits.
std::map<std::string, std::vector<uint32_t>> threshold_bits(const ir::Model& m) {
  std::map<std::string, std::vector<uint32_t>> out;
  for (const ir::Node* n : m.graph->nodes()) {
    if (!is_calibration_node(*n)) continue;
    for (float v : n->attrs().get_floats("thresholds")) {
      uint32_t bits;
      std::memcpy(&bits, &v, sizeof bits);
      out[n->name()].push_back(bits);
    }
  }
  return out;
}

CalibrationOptions options_without_evaluation(config::CalibrationType type) {
  CalibrationOptions o;
  o.type = type;
  o.evaluation_samples = 0;
  return o;
}

TEST(Calibrator, SameDataGivesBitIdenticalThresholds) {
  for (auto type : {config::CalibrationType::kKl, config::CalibrationType::kMax}) {
    CalibrationOptions o = options_without_evaluation(type);
    o.max_percentile = type == config::CalibrationType::kMax ? 0.9999 : 1.0;
    o.per_channel = true;
    ir::Model a = model(), b = model();
    const SampleStream s = samples(12);
    const CalibrationReport ra = calibrate(a, &s, o);
    const CalibrationReport rb = calibrate(b, &s, o);
    const auto ta = threshold_bits(a), tb = threshold_bits(b);
    EXPECT_EQ(ta, tb);
    EXPECT_EQ(ta.size(), ra.points.size());
    // Activations on the inputs of Conv (x, r1), Relu (c1), Add (c2, r1), GAP (a), Gemm (f),
    // the GAP output p (read only by the unquantized Flatten); weights w1, w2, w3.
    EXPECT_EQ(ta.size(), 10u);
    EXPECT_TRUE(ir::verify(*a.graph).empty());
    EXPECT_EQ(ra.method,
              type == config::CalibrationType::kKl ? "kl" : "max-percentile:percentile=0.9999");
    // Per-channel activations: one threshold per channel of c1 (6).
    EXPECT_EQ(ta.at("c1_HzCalibration").size(), 6u);
  }
}

TEST(Calibrator, HoldsOneSampleAtATime) {
  for (size_t count : {3u, 40u}) {
    CountingAllocator counter;
    const SampleStream s = samples(count, &counter);
    ir::Model m = model();
    calibrate(m, &s, options_without_evaluation(config::CalibrationType::kKl));
    EXPECT_EQ(counter.peak, 1) << count << " samples";
    EXPECT_EQ(counter.live, 0);
  }
}

TEST(Calibrator, SkipUsesRandomDataAndNeedsNoSamples) {
  ir::Model m = model();
  CalibrationOptions o = options_without_evaluation(config::CalibrationType::kSkip);
  std::vector<std::string> log;
  o.log = [&](const std::string& line) { log.push_back(line); };
  const CalibrationReport r = calibrate(m, nullptr, o);
  EXPECT_EQ(r.method, "skip");
  EXPECT_EQ(r.sample_count, 1u);
  EXPECT_EQ(log.front(), "Calibration uses 1 random sample(s).");
  for (const auto& [tensor, node] : calibration_nodes(*m.graph)) {
    if (node->attrs().get_string("kind") == "activation") {
      EXPECT_EQ(node->attrs().get_floats("thresholds").size(), 1u) << tensor;
      EXPECT_EQ(node->attrs().get_string("method"), "max") << tensor;
    }
  }
  // Other methods need samples.
  ir::Model other = model();
  EXPECT_THROW(calibrate(other, nullptr, options_without_evaluation(config::CalibrationType::kKl)),
               Error);
}

TEST(Calibrator, LoadTakesThresholdsByTensorNameAndMaxForTheRest) {
  ir::Model m = model();
  CalibrationOptions o = options_without_evaluation(config::CalibrationType::kLoad);
  o.loaded["c1"] = LoadedThreshold{{3.5f}, 1, 8};
  const SampleStream s = samples(2);
  const CalibrationReport r = calibrate(m, &s, o);
  EXPECT_EQ(r.method, "load");
  const auto nodes = calibration_nodes(*m.graph);
  EXPECT_EQ(nodes.at("c1")->attrs().get_floats("thresholds"), std::vector<float>{3.5f});
  EXPECT_EQ(nodes.at("c1")->attrs().get_string("method"), "load");
  EXPECT_EQ(nodes.at("x")->attrs().get_floats("thresholds"),
            std::vector<float>{r.statistics.at("x").abs_max});
}

// Unset, the evaluation sample count follows the model's size: a small model is scored on up
// to 16 samples (as many as there are), one whose ranking work exceeds kEvaluationWork on 1.
TEST(Calibrator, EvaluationSamplesFollowTheModelSize) {
  ir::Model m = model();
  const std::vector<CalibrationPoint> points =
      find_calibration_points(*m.graph, CalibrationRules::defaults());
  EXPECT_EQ(evaluation_sample_count(*m.graph, points), 16u);
  for (ir::Value* v : m.graph->values()) {
    if (!v->is_constant() && v->type().static_shape()) {
      v->set_type(ir::TensorType::of(v->type().dtype, {1, 4096, 4096, 64}));
    }
  }
  EXPECT_EQ(evaluation_sample_count(*m.graph, points), 1u);
  std::vector<std::string> log;
  CalibrationOptions o;
  o.log = [&](const std::string& line) { log.push_back(line); };
  const SampleStream s = samples(3);
  ir::Model small = model();
  calibrate(small, &s, o);
  EXPECT_NE(std::find(log.begin(), log.end(), "Calibrated models are scored on 3 samples."),
            log.end());
}

TEST(Calibrator, DefaultPicksTheBestCandidateByOutputCosineAndRanksNodes) {
  ir::Model m = model();
  CalibrationOptions o;
  o.evaluation_samples = 1;  // compared below with runs on the first sample
  std::vector<std::string> log;
  o.log = [&](const std::string& line) { log.push_back(line); };
  const SampleStream s = samples(8);
  const CalibrationReport r = calibrate(m, &s, o);
  ASSERT_EQ(r.candidates.size(), 4u);
  double best = -1, best_score = -2;
  std::string best_name;
  for (const CandidateScore& c : r.candidates) {
    if (c.score > best_score) {  // chosen by score (the decision margins of the Gemm's logits)
      best_score = c.score;
      best = c.cosine;
      best_name = c.method.name();
    }
  }
  EXPECT_EQ(r.method, best_name);
  EXPECT_NE(std::find(log.begin(), log.end(), "Select " + best_name + " method."), log.end());
  ASSERT_TRUE(r.output_cosine.has_value());
  EXPECT_DOUBLE_EQ(*r.output_cosine, best);
  EXPECT_LT(best, 1.0);  // fake quantization does change the outputs
  EXPECT_GT(best, 0.99);
  // Sensitivity: every quantized node, most sensitive first, each above the all-quantized cosine.
  ASSERT_EQ(r.sensitivity.size(), 6u);  // Conv x2, Relu, Add, GlobalAveragePool, Gemm
  for (size_t i = 1; i < r.sensitivity.size(); ++i) {
    EXPECT_LE(r.sensitivity[i - 1].metrics.score, r.sensitivity[i].metrics.score);
  }
  for (const NodeSensitivity& n : r.sensitivity) EXPECT_GE(n.metrics.cosine, best - 1e-9) << n.node;
  // Each cosine is, to the bit, that of the model run from its input with only the node's
  // calibration nodes enabled (the ranking resumes one float run instead).
  const std::map<std::string, ir::Node*> cal = calibration_nodes(*m.graph);
  for (const auto& [tensor, node] : cal) set_calibration_enabled(*node, false);
  EvaluationSet first;
  first.feeds.push_back(s.feeds(0));
  executor::FloatExecutor float_model(m, o.executor);
  first.reference_outputs.push_back(run_for_evaluation(float_model, *m.graph, first.feeds[0]));
  first.classes = evaluation_classes(m);
  for (const NodeSensitivity& n : r.sensitivity) {
    for (const std::string& t : n.tensors) set_calibration_enabled(*cal.at(t), true);
    const OutputMetrics full = output_metrics(m, first, o.executor);
    EXPECT_EQ(full.cosine, n.metrics.cosine) << n.node;
    EXPECT_EQ(full.score, n.metrics.score) << n.node;
    EXPECT_EQ(full.agreement, n.metrics.agreement) << n.node;
    EXPECT_EQ(full.mse, n.metrics.mse) << n.node;
    EXPECT_EQ(full.mre, n.metrics.mre) << n.node;
    EXPECT_EQ(full.sqnr, n.metrics.sqnr) << n.node;
    EXPECT_EQ(full.chebyshev, n.metrics.chebyshev) << n.node;
    for (const std::string& t : n.tensors) set_calibration_enabled(*cal.at(t), false);
  }
  for (const auto& [tensor, node] : cal) set_calibration_enabled(*node, true);
  // The ranking leaves every calibration node enabled.
  for (const auto& [tensor, node] : calibration_nodes(*m.graph)) {
    EXPECT_EQ(node->attrs().get_int("enabled"), 1) << tensor;
  }
  // Same data, same choice and thresholds.
  ir::Model again = model();
  const CalibrationReport r2 = calibrate(again, &s, o);
  EXPECT_EQ(r2.method, r.method);
  EXPECT_EQ(threshold_bits(again), threshold_bits(m));
  // With three threads (statistics, KL and the ranking's workers), the same bits.
  CalibrationOptions threaded = o;
  threaded.executor.threads = 3;
  ir::Model third = model();
  const CalibrationReport r3 = calibrate(third, &s, threaded);
  EXPECT_EQ(r3.method, r.method);
  EXPECT_EQ(threshold_bits(third), threshold_bits(m));
  ASSERT_EQ(r3.sensitivity.size(), r.sensitivity.size());
  for (size_t i = 0; i < r.sensitivity.size(); ++i) {
    EXPECT_EQ(r3.sensitivity[i].node, r.sensitivity[i].node);
    EXPECT_EQ(r3.sensitivity[i].metrics.cosine, r.sensitivity[i].metrics.cosine)
        << r.sensitivity[i].node;
  }
}

TEST(Calibrator, MixNeverEndsBelowTheModelwiseChoice) {
  ir::Model m = model();
  CalibrationOptions o;
  o.type = config::CalibrationType::kMix;
  o.rank_sensitivity = false;
  const SampleStream s = samples(8);
  const CalibrationReport r = calibrate(m, &s, o);
  EXPECT_EQ(r.method, "mix");
  EXPECT_EQ(r.node_methods.size(), 7u);
  double modelwise = -1;
  for (const CandidateScore& c : r.candidates) modelwise = std::max(modelwise, c.cosine);
  ASSERT_TRUE(r.output_cosine.has_value());
  EXPECT_GE(*r.output_cosine, modelwise);
}

// kl against max: a warning when kl is clearly worse. x -> Conv 1x1 -> y on sparse spikes
// (most values near 0, a few of 8 to 10: kl clips the spikes, which are the whole output); the
// same model on Gaussian samples (kl clips only the last few values of the tails) must not fire
// it.
TEST(Calibrator, KlWarnsWhenItClipsWhatTheOutputIsMadeOf) {
  const auto conv = [] {
    ir::Model m;
    m.opsets.push_back({"", 13});
    ir::Graph& g = *m.graph;
    ir::Value* x = g.add_value("x", TensorType::of(DataType::kFloat32, {1, 3, 16, 16}));
    g.add_input(x);
    g.add_output(add_float_node(g, "Conv", {x, g.add_constant("w", weights({4, 3, 1, 1}, 4))}, "y")
                     ->output(0));
    return m;
  };
  const auto stream = [](bool spiky) {
    return SampleStream{
        spiky ? size_t{4} : size_t{16}, [spiky](size_t i) {
          std::mt19937_64 rng(50 + i);
          std::normal_distribution<float> gauss(0.0f, 1.0f);
          Tensor t(DataType::kFloat32, {1, 3, 16, 16});
          for (int64_t k = 0; k < t.element_count(); ++k) {
            const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;
            t.data<float>()[k] =
                !spiky ? gauss(rng)
                       : static_cast<float>(k % 37 == 0 ? 8 + 2 * u : 0.01 * (u - 0.5));
          }
          return std::map<std::string, Tensor>{{"x", std::move(t)}};
        }};
  };
  const SampleStream spikes = stream(true);
  CalibrationOptions o;
  o.type = config::CalibrationType::kKl;
  o.rank_sensitivity = false;
  ir::Model m = conv();
  const CalibrationReport r = calibrate(m, &spikes, o);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("calibration_type kl: output cosine similarity"), std::string::npos) << r.warnings[0];
  EXPECT_EQ(r.method, "kl");

  const SampleStream gaussian = stream(false);
  ir::Model smooth = conv();
  const CalibrationReport quiet = calibrate(smooth, &gaussian, o);
  EXPECT_TRUE(quiet.warnings.empty()) << quiet.warnings.front();
}

}  // namespace
}  // namespace openbpu::calibration

namespace openbpu::calibration {
namespace {

// x -> Abs -> Neg -> Relu (z: 0 on every sample) -> Conv without bias (zc: 0 too) -> Add(with a
// Conv of x): z's threshold would be 0; it takes Neg's, and zc z's, each with a warning naming
// it. Must not fire: every other tensor.
TEST(Calibrator, ATensorZeroOnEverySampleTakesTheThresholdUpstream) {
  ir::Model m;
  m.opsets.push_back({"", 13});
  ir::Graph& g = *m.graph;
  ir::Value* x = g.add_value("x", TensorType::of(DataType::kFloat32, {1, 3, 8, 8}));
  g.add_input(x);
  auto node = [&](const std::string& op, std::vector<ir::Value*> in, const std::string& out) {
    return add_float_node(g, op, std::move(in), out)->output(0);
  };
  ir::Value* c = node("Conv", {x, g.add_constant("w1", weights({4, 3, 1, 1}, 1))}, "c");
  ir::Value* n = node("Neg", {node("Abs", {x}, "a")}, "n");
  ir::Value* z = node("Relu", {n}, "z");
  ir::Value* zc = node("Conv", {z, g.add_constant("w2", weights({4, 3, 1, 1}, 2))}, "zc");
  g.add_output(node("Add", {c, zc}, "y"));
  CalibrationOptions o = options_without_evaluation(config::CalibrationType::kMax);
  const SampleStream s = samples(3);
  const CalibrationReport r = calibrate(m, &s, o);
  const auto nodes = calibration_nodes(*m.graph);
  ASSERT_EQ(r.warnings.size(), 2u);
  EXPECT_NE(r.warnings[0].find("tensor 'z' is 0 on all 3 calibration sample(s)"), std::string::npos) << r.warnings[0];
  EXPECT_NE(r.warnings[0].find("the threshold of 'n' upstream"), std::string::npos) << r.warnings[0];
  EXPECT_NE(r.warnings[1].find("tensor 'zc' is 0 on all 3"), std::string::npos) << r.warnings[1];
  EXPECT_EQ(nodes.at("z")->attrs().get_floats("thresholds"), nodes.at("n")->attrs().get_floats("thresholds"));
  EXPECT_EQ(nodes.at("zc")->attrs().get_floats("thresholds"), nodes.at("n")->attrs().get_floats("thresholds"));
  EXPECT_GT(nodes.at("n")->attrs().get_floats("thresholds").at(0), 0.0f);
}

}  // namespace
}  // namespace openbpu::calibration
