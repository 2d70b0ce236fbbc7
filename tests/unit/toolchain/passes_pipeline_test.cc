// The pass registry, options, pipeline text, and run_passes (verifier, count lines, refresher).
#include <set>

#include "openbpu/common/error.h"
#include "openbpu/passes/pass.h"
#include "pass_test_support.h"

namespace openbpu::passes {
namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(PassRegistry, EveryPassHasAUniqueNameASummaryAndDocumentedOptions) {
  std::set<std::string_view> names;
  for (const PassDef& def : all_passes()) {
    EXPECT_TRUE(names.insert(def.name).second) << def.name;
    EXPECT_FALSE(def.summary.empty()) << def.name;
    EXPECT_NE(def.run, nullptr) << def.name;
    for (const PassOptionSpec& o : def.options) {
      EXPECT_FALSE(o.summary.empty()) << def.name << "." << o.name;
      EXPECT_FALSE(o.default_value.empty()) << def.name << "." << o.name;
    }
    EXPECT_EQ(find_pass(def.name), &def);
  }
  for (const PassInvocation& inv : default_pipeline()) {
    EXPECT_NE(find_pass(inv.name), nullptr) << inv.name;
  }
  EXPECT_EQ(find_pass("no_such_pass"), nullptr);
}

TEST(PassRegistry, NamesAndOptionsAreCheckedBeforeAnyPassRuns) {
  ir::Model model = ir::parse_model(
      "graph g (%x: float32[2]) -> (%y) {\n  %i = Identity(%x)\n  %y = Neg(%i)\n}\n");
  const std::string before = ir::dump(*model.graph);
  EXPECT_NE(error_of([&] {
              run_passes(model, {{"dropout_identity_removal", {}}, {"fold", {}}});
            }).find("unknown pass 'fold' (passes: dropout_identity_removal, constant_folding"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              run_passes(model, {{"constant_folding", {{"growth", "2"}}}});
            })
                .find("pass 'constant_folding' has no option 'growth' (options: max_growth, "
                      "always_fold_bytes, keep_qdq)"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              run_passes(model, {{"constant_folding", {{"keep_qdq", "yes"}}}});
            }).find("option 'keep_qdq' must be true or false, got 'yes'"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              run_passes(model, {{"constant_folding", {{"max_growth", "x"}}}});
            }).find("option 'max_growth' must be a number, got 'x'"),
            std::string::npos);
  EXPECT_EQ(ir::dump(*model.graph), before);  // nothing ran
}

TEST(PassPipeline, ParsesNamesAndOptions) {
  const auto passes =
      parse_pipeline(" constant_folding{max_growth=4; keep_qdq=false}, dead_code_elimination ");
  ASSERT_EQ(passes.size(), 2u);
  EXPECT_EQ(passes[0].name, "constant_folding");
  EXPECT_EQ(passes[0].options.at("max_growth"), "4");
  EXPECT_EQ(passes[0].options.at("keep_qdq"), "false");
  EXPECT_EQ(passes[1].name, "dead_code_elimination");
  EXPECT_TRUE(passes[1].options.empty());
  EXPECT_NE(error_of([] { parse_pipeline("a{k=1"); }).find("missing '}'"), std::string::npos);
  EXPECT_NE(error_of([] { parse_pipeline("a{k}"); }).find("must be key=value"), std::string::npos);
  EXPECT_NE(error_of([] { parse_pipeline("a,,b"); }).find("empty pass name"), std::string::npos);
}

TEST(PassPipeline, DefaultPipelineOnASmallNetworkLogsCountsInTheOriginalWords) {
  // Conv → BN → paddle hardswish → GAP → Flatten → Gemm → Softmax, plus an Identity. (The
  // refresher here only counts calls; the GAP's annotated type lets cancellation see shapes.)
  const std::string text =
      "model opsets=[ai.onnx:11]\n"
      "graph g (%x: float32[1,3,8,8]) -> (%prob) {\n"
      "  init %w: float32[16,3,3,3]\n"
      "  init %s: float32[16]\n"
      "  init %b: float32[16]\n"
      "  init %m: float32[16]\n"
      "  init %v: float32[16] uniform(0.5, 2)\n"
      "  init %three: float32[]{3}\n"
      "  init %zero: float32[]{0}\n"
      "  init %six: float32[]{6}\n"
      "  init %fc: float32[10,16]\n"
      "  init %fcb: float32[10]\n"
      "  %c = Conv[kernel_shape=[3,3], pads=[1,1,1,1]](%x, %w)\n"
      "  %bn = BatchNormalization(%c, %s, %b, %m, %v)\n"
      "  %a = Add(%bn, %three)\n"
      "  %r6 = Clip(%a, %zero, %six)\n"
      "  %hm = Mul(%bn, %r6)\n"
      "  %hs = Div(%hm, %six)\n"
      "  %i = Identity(%hs)\n"
      "  %gap: float32[1,16,1,1] = GlobalAveragePool(%i)\n"
      "  %flat = Flatten(%gap)\n"
      "  %logits = Gemm[transB=1](%flat, %fc, %fcb)\n"
      "  %prob = Softmax(%logits)\n"
      "}\n";
  ir::Model model = ir::parse_model(text);
  const ir::Model reference = ir::parse_model(text);
  std::vector<std::string> lines;
  int refreshes = 0;
  PipelineOptions options;
  options.log = [&](const std::string& line) { lines.push_back(line); };
  options.refresh_types = [&](ir::Model&) { ++refreshes; };
  const auto reports = run_passes(model, default_pipeline(), options);
  EXPECT_EQ(ir::dump(*model.graph),
            "graph g (%x: float32[1,3,8,8]) -> (%prob) {\n"
            "  init %c.weight: float32[16,3,3,3]\n"
            "  init %c.bias: float32[16]\n"
            "  init %logits.weight: float32[10,16,1,1]\n"
            "  init %logits.bias: float32[10]\n"
            "  init %logits.from_nchw: int64[2]{0,-1}\n"
            "  %bn = Conv[kernel_shape=[3,3], pads=[1,1,1,1]](%x, %c.weight, %c.bias)\n"
            "  %hs.hardsigmoid = HardSigmoid[alpha=0.1666667, beta=0.5](%bn)\n"
            "  %hs = Mul(%bn, %hs.hardsigmoid)\n"
            "  %gap = GlobalAveragePool(%hs)\n"
            "  %logits.conv = Conv[kernel_shape=[1,1]](%gap, %logits.weight, %logits.bias)\n"
            "  %logits = Reshape(%logits.conv, %logits.from_nchw)\n"
            "  %prob = Softmax(%logits)\n"
            "}\n");
  EXPECT_LT(testing::relative_output_difference(reference, model, 7), 1e-5);
  ASSERT_EQ(reports.size(), default_pipeline().size());
  EXPECT_EQ(reports.front().nodes_before, 11u);
  EXPECT_EQ(reports.back().nodes_after, 7u);
  int changed = 0;
  for (const PassReport& r : reports) changed += r.rewrites > 0;
  EXPECT_EQ(refreshes, changed);
  EXPECT_EQ(lines.front(),
            "After dropout_identity_removal, the number of nodes has changed "
            "from 11 to 10.");
  const auto fused = std::find(lines.begin(), lines.end(),
                               "After fuse_batchnorm, the number of parameters has changed from "
                               "666 to 618.");
  EXPECT_NE(fused, lines.end());
}

TEST(PassPipeline, AnInvalidGraphAfterAPassIsAnErrorNamingThePass) {
  // Nodes out of order: the verifier rejects the graph after the first pass.
  ir::Model model =
      ir::parse_model("graph g (%x: float32[2]) -> (%y) {\n  %y = Neg(%a)\n  %a = Abs(%x)\n}\n");
  EXPECT_NE(error_of([&] {
              run_passes(model, {{"dead_code_elimination", {}}});
            })
                .find("after pass dead_code_elimination: the graph is invalid: node 'y' (Neg) "
                      "uses 'a' before node 'a' produces it"),
            std::string::npos);
}

}  // namespace
}  // namespace openbpu::passes
