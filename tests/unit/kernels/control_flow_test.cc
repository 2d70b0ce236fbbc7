// If and Loop with subgraphs given as functions: the operators' semantics (which branch, how many
// iterations, carried and scanned values, outer values after the listed inputs).
#include <functional>

#include "kernel_test_support.h"

namespace openbpu::kernels::testing {
namespace {

using I64 = std::vector<int64_t>;
using Body = std::function<std::vector<Tensor>(std::span<const Tensor* const>, std::span<const Tensor* const>)>;

class FunctionGraph final : public Subgraph {
 public:
  explicit FunctionGraph(Body f) : f_(std::move(f)) {}
  std::vector<Tensor> run(std::span<const Tensor* const> in, std::span<const Tensor* const> outer) const override {
    return f_(in, outer);
  }

 private:
  Body f_;
};

std::vector<Tensor> run_control_flow(const std::string& op, std::vector<NamedSubgraph> graphs, int listed,
                                     const std::vector<std::optional<Tensor>>& inputs, int outputs) {
  const AttributeMap attrs;
  return run_node({"test_node", op, "", 17, attrs, listed, outputs, graphs}, inputs, outputs);
}

TEST(If, RunsTheBranchTheConditionTakesWithTheOuterValues) {
  auto branch = [](int64_t add) {
    return std::make_shared<FunctionGraph>([add](auto in, auto outer) {
      EXPECT_TRUE(in.empty());
      return std::vector<Tensor>{Tensor::scalar<int64_t>(outer[0]->template data<int64_t>()[0] + add)};
    });
  };
  const std::vector<NamedSubgraph> graphs{{"then_branch", branch(1)}, {"else_branch", branch(-1)}};
  EXPECT_EQ(run_control_flow("If", graphs, 1, {make<bool>({1}, {true}), Tensor::scalar<int64_t>(10)}, 1)[0]
                .to_int64_vector(),
            (I64{11}));
  EXPECT_EQ(run_control_flow("If", graphs, 1, {make<bool>({}, {false}), Tensor::scalar<int64_t>(10)}, 1)[0]
                .to_int64_vector(),
            (I64{9}));
  EXPECT_THROW(run_control_flow("If", graphs, 1, {make<float>({}, {1.0f}), Tensor::scalar<int64_t>(10)}, 1),
               KernelError);
  EXPECT_THROW(run_control_flow("If", {graphs[0]}, 1, {make<bool>({}, {true})}, 1), KernelError);  // no else
}

// body(i, cond, s) = (s + i < limit, s + i, s · 2): a carried sum and a scan output.
std::vector<NamedSubgraph> summing_body(int64_t limit) {
  return {{"body", std::make_shared<FunctionGraph>([limit](auto in, auto) {
             const int64_t i = in[0]->template data<int64_t>()[0];
             const int64_t s = in[2]->template data<int64_t>()[0] + i;
             return std::vector<Tensor>{make<bool>({}, {s < limit}), Tensor::scalar<int64_t>(s),
                                        make<int64_t>({2}, {s, 2 * s})};
           })}};
}

TEST(Loop, ATripCountRunsThatOftenAndStacksTheScanOutputs) {
  const auto out = run_control_flow("Loop", summing_body(1000), 3,
                                    {Tensor::scalar<int64_t>(4), std::nullopt, Tensor::scalar<int64_t>(0)}, 2);
  EXPECT_EQ(out[0].to_int64_vector(), (I64{6}));  // 0 + 1 + 2 + 3
  EXPECT_EQ(out[1].shape(), (Shape{4, 2}));
  EXPECT_EQ(out[1].to_int64_vector(), (I64{0, 0, 1, 2, 3, 6, 6, 12}));
}

TEST(Loop, TheConditionEndsAWhileLoopAndZeroTripsKeepTheInitialValues) {
  auto out = run_control_flow("Loop", summing_body(5), 3,
                              {std::nullopt, make<bool>({}, {true}), Tensor::scalar<int64_t>(0)}, 2);
  EXPECT_EQ(out[0].to_int64_vector(), (I64{6}));  // sums 0, 1, 3, 6: the body said stop after 6
  EXPECT_EQ(out[1].shape(), (Shape{4, 2}));
  out = run_control_flow("Loop", summing_body(5), 3,
                         {Tensor::scalar<int64_t>(0), make<bool>({}, {true}), Tensor::scalar<int64_t>(7)}, 2);
  EXPECT_EQ(out[0].to_int64_vector(), (I64{7}));
  EXPECT_EQ(out[1].shape(), (Shape{0}));
  // Neither a trip count nor a condition: it would never end.
  EXPECT_THROW(run_control_flow("Loop", summing_body(5), 3, {std::nullopt, std::nullopt, Tensor::scalar<int64_t>(0)}, 2),
               KernelError);
}

}  // namespace
}  // namespace openbpu::kernels::testing
