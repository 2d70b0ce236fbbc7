// One hand-made violation per semantic rule of verify_package(): a valid package is
// changed in one place, serialized without validation, and must be rejected with the rule's
// code and a message naming the element. Rules a PackageInfo cannot break (missing or
// unknown segment body, misaligned payloads) are built with the flatbuffers API directly.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "openbpu/format/model_file.h"
#include "sample_package.h"

namespace openbpu::format {
namespace {

using test_support::sample_package;
using test_support::seal;
using test_support::serialize_unchecked_or_die;
using test_support::verify;

ModelInfo& mobilenet(PackageInfo& p) { return p.models[0]; }
ModelInfo& tiny(PackageInfo& p) { return p.models[1]; }
BpuSegmentInfo& mobilenet_bpu(PackageInfo& p) {
  return std::get<BpuSegmentInfo>(p.models[0].segments[0].body);
}
CpuSegmentInfo& mobilenet_cpu(PackageInfo& p) {
  return std::get<CpuSegmentInfo>(p.models[0].segments[1].body);
}
CpuOpInfo& dequantize(PackageInfo& p) { return mobilenet_cpu(p).ops[0]; }
CpuOpInfo& softmax(PackageInfo& p) { return mobilenet_cpu(p).ops[1]; }
BpuSegmentInfo& tiny_bpu(PackageInfo& p) {
  return std::get<BpuSegmentInfo>(p.models[1].segments[0].body);
}

struct RuleCase {
  std::string name;
  std::function<void(PackageInfo&)> violate;
  StatusCode code;
  std::vector<std::string> mentions;  // substrings the message must contain
};

std::ostream& operator<<(std::ostream& out, const RuleCase& c) { return out << c.name; }

std::vector<RuleCase> rule_cases() {
  using R = TensorRefInfo;
  const std::string mob = "model[0] 'mobilenet'";
  const std::string tin = "model[1] 'tiny'";
  const std::string bpu0 = mob + ": segment[0] 'BPU_mobilenet_subgraph_0'";
  const std::string cpu1 = mob + ": segment[1] 'CPU_mobilenet_subgraph_1'";
  const std::string deq = cpu1 + ": op[0] 'mobilenet_HzDequantize'";
  const std::string smx = cpu1 + ": op[1] 'prob_Softmax'";
  const std::string tbpu = tin + ": segment[0] 'BPU_tiny_subgraph_0'";
  return {
      // ---- package and model ----
      {"NoModels", [](PackageInfo& p) { p.models.clear(); }, StatusCode::kNoModels, {"no models"}},
      {"EmptyModelName",
       [](PackageInfo& p) { tiny(p).name.clear(); },
       StatusCode::kMissingName,
       {"model[1]", "model name is empty"}},
      {"DuplicateModelName",
       [](PackageInfo& p) { tiny(p).name = "mobilenet"; },
       StatusCode::kDuplicateModelName,
       {"model[1] 'mobilenet'", "another model"}},
      {"EmptyMarch",
       [](PackageInfo& p) { mobilenet(p).march.clear(); },
       StatusCode::kMissingMarch,
       {mob, "march is empty"}},
      {"NoInputs",
       [](PackageInfo& p) { tiny(p).inputs.clear(); },
       StatusCode::kNoModelInputs,
       {tin, "no inputs"}},
      {"NoOutputs",
       [](PackageInfo& p) { tiny(p).outputs.clear(); },
       StatusCode::kNoModelOutputs,
       {tin, "no outputs"}},
      {"NoSegments",
       [](PackageInfo& p) { tiny(p).segments.clear(); },
       StatusCode::kNoSegments,
       {tin, "no segments"}},
      {"EmptyTensorName",
       [](PackageInfo& p) { mobilenet(p).tensors[1].name.clear(); },
       StatusCode::kMissingName,
       {mob + ": intermediate tensor[1]", "tensor name is empty"}},
      {"DuplicateTensorName",
       [](PackageInfo& p) { mobilenet(p).tensors[1].name = "prob"; },
       StatusCode::kDuplicateTensorName,
       {mob + ": intermediate tensor[1] 'prob'"}},
      {"EmptyCompileParameterKey",
       [](PackageInfo& p) { mobilenet(p).compile_parameters[1].first.clear(); },
       StatusCode::kMissingName,
       {mob, "compile_parameters[1] has an empty key"}},
      {"EmptyDeletedNodeName",
       [](PackageInfo& p) { mobilenet(p).deleted_nodes[0].name.clear(); },
       StatusCode::kMissingName,
       {mob, "deleted_nodes[0] has an empty name"}},
      {"DeletedNodeAttributeWithTwoValues",
       [](PackageInfo& p) { mobilenet(p).deleted_nodes[0].attributes[0].ints = {1}; },
       StatusCode::kAttributeMismatch,
       {mob + ", deleted node 'prob_HzDequantize_removed': attribute[0] 'scales'", "FLOATS",
        "'ints'"}},
      {"DeletedNodeGraphAttribute",
       [](PackageInfo& p) {
         AttributeInfo& a = mobilenet(p).deleted_nodes[0].attributes[0];
         a.type = AttributeType::GRAPH;
         a.floats.clear();
         a.g = {CpuGraphInfo{"body", 0, 0, 0, {}, {}}};
       },
       StatusCode::kAttributeMismatch,
       {"deleted node 'prob_HzDequantize_removed'", "no GRAPH attributes"}},
      // ---- tensor properties ----
      {"UnknownLayout",
       [](PackageInfo& p) { tiny(p).inputs[0].layout = static_cast<TensorLayout>(1); },
       StatusCode::kBadEnumValue,
       {tin + ": input[0] 'x'", "layout 1"}},
      {"UnknownTensorType",
       [](PackageInfo& p) { tiny(p).outputs[0].tensor_type = static_cast<TensorType>(19); },
       StatusCode::kBadEnumValue,
       {tin + ": output[0] 'y'", "tensor_type 19"}},
      {"UnknownQuantiType",
       [](PackageInfo& p) { tiny(p).outputs[0].quanti_type = static_cast<QuantiType>(3); },
       StatusCode::kBadEnumValue,
       {tin + ": output[0] 'y'", "quanti_type 3"}},
      {"UnknownInputSource",
       [](PackageInfo& p) { mobilenet(p).inputs[0].input_source = static_cast<InputSource>(3); },
       StatusCode::kBadEnumValue,
       {mob + ": input[0] 'data'", "input_source 3"}},
      {"ResizerOnAFeaturemapInput",
       [](PackageInfo& p) { tiny(p).inputs[0].input_source = InputSource::RESIZER; },
       StatusCode::kBadEnumValue,
       {tin + ": input[0] 'x'", "input_source RESIZER", "NV12 or Y", "TENSOR_TYPE_S8"}},
      {"SourceOnAnOutput",
       [](PackageInfo& p) { tiny(p).outputs[0].input_source = InputSource::PYRAMID; },
       StatusCode::kBadEnumValue,
       {tin + ": output[0] 'y'", "input_source PYRAMID", "not a model input"}},
      {"RankMismatch",
       [](PackageInfo& p) {
         tiny(p).inputs[0].aligned_shape = {1, 8, 64};
       },
       StatusCode::kRankMismatch,
       {tin + ": input[0] 'x'", "has rank 4", "has rank 3"}},
      {"RankTooLarge",
       [](PackageInfo& p) {
         auto& t = mobilenet(p).tensors[1];
         t.valid_shape = {1, 1, 1, 1, 1, 1, 1, 1, 10};
         t.aligned_shape = t.valid_shape;
       },
       StatusCode::kRankTooLarge,
       {mob + ": intermediate tensor[1] 'logits'", "rank 9"}},
      {"NegativeDimension",
       [](PackageInfo& p) { tiny(p).outputs[0].valid_shape[1] = -4; },
       StatusCode::kNegativeDimension,
       {tin + ": output[0] 'y'", "dimension 1 is negative"}},
      {"ValidExceedsAligned",
       [](PackageInfo& p) { mobilenet(p).inputs[0].valid_shape[3] = 226; },
       StatusCode::kValidExceedsAligned,
       {mob + ": input[0] 'data'", "valid_shape[3] = 226", "aligned_shape[3] = 224"}},
      {"AlignedByteSizeMismatch",
       [](PackageInfo& p) { mobilenet(p).inputs[0].aligned_byte_size = 3 * 222 * 224; },
       StatusCode::kAlignedByteSizeMismatch,
       {mob + ": input[0] 'data'", "aligned_byte_size is 149184", "IMG_TYPE_NV12",
        "takes 74592 bytes"}},
      {"AlignedByteSizeOverflow",
       [](PackageInfo& p) {
         tiny(p).inputs[0].aligned_shape = {1, int64_t{1} << 40, int64_t{1} << 40, 8};
       },
       StatusCode::kAlignedByteSizeMismatch,
       {tin + ": input[0] 'x'", "overflows"}},
      {"TensorTooLarge",  // 2^31 bytes, one more than the C API's int32 alignedByteSize
       [](PackageInfo& p) {
         TensorInfo& x = tiny(p).inputs[0];
         x.aligned_shape = {1, 8, 8, int64_t{1} << 25};
         x.aligned_byte_size = uint64_t{1} << 31;
         x.stride = {int64_t{1} << 31, int64_t{1} << 28, int64_t{1} << 25, 1};
       },
       StatusCode::kTensorTooLarge,
       {tin + ": input[0] 'x'", "aligned_byte_size 2147483648 exceeds the 2147483647 bytes (2 GiB)"}},
      {"StrideRankMismatch",
       [](PackageInfo& p) {
         tiny(p).inputs[0].stride = {512, 64, 8};
       },
       StatusCode::kStrideRankMismatch,
       {tin + ": input[0] 'x'", "3 entries", "rank 4"}},
      {"NegativeStride",
       [](PackageInfo& p) {
         tiny(p).inputs[0].stride = {512, -64, 8, 1};
       },
       StatusCode::kStrideOutOfBounds,
       {tin + ": input[0] 'x'", "stride[1] = -64"}},
      {"StrideBeyondAlignedByteSize",
       [](PackageInfo& p) {
         tiny(p).inputs[0].stride = {512, 128, 8, 1};
       },
       StatusCode::kStrideOutOfBounds,
       {tin + ": input[0] 'x'", "addresses 956 bytes", "aligned_byte_size 512"}},
      {"QuantiNoneWithScale",
       [](PackageInfo& p) { mobilenet(p).tensors[1].scale = {1.0f}; },
       StatusCode::kQuantiTypeMismatch,
       {mob + ": intermediate tensor[1] 'logits'", "quanti_type is NONE"}},
      {"QuantiScaleWithoutScale",
       [](PackageInfo& p) {
         tiny(p).inputs[0].scale.clear();
         tiny(p).inputs[0].zero_point.clear();
       },
       StatusCode::kQuantiTypeMismatch,
       {tin + ": input[0] 'x'", "quanti_type is SCALE"}},
      {"QuantiScaleWithShift",
       [](PackageInfo& p) { tiny(p).inputs[0].shift = {2}; },
       StatusCode::kQuantiTypeMismatch,
       {tin + ": input[0] 'x'", "no shift"}},
      {"QuantiShiftWithZeroPoint",
       [](PackageInfo& p) { tiny(p).outputs[0].zero_point = {0}; },
       StatusCode::kQuantiTypeMismatch,
       {tin + ": output[0] 'y'", "quanti_type is SHIFT"}},
      {"ScaleCountNotChannelCount",
       [](PackageInfo& p) {
         mobilenet(p).tensors[0].scale.pop_back();
         mobilenet(p).tensors[0].zero_point.pop_back();
       },
       StatusCode::kQuantParamLength,
       {mob + ": intermediate tensor[0] 'logits_int'", "scale has 9 values",
        "has 10 along quantize_axis 3"}},
      {"ShiftCountNotChannelCount",
       [](PackageInfo& p) {
         tiny(p).outputs[0].shift = {1, 2, 3};
       },
       StatusCode::kQuantParamLength,
       {tin + ": output[0] 'y'", "shift has 3 values"}},
      {"ZeroPointCountNotScaleCount",
       [](PackageInfo& p) { mobilenet(p).tensors[0].zero_point.resize(3); },
       StatusCode::kQuantParamLength,
       {"'logits_int'", "zero_point has 3 values"}},
      {"QuantizeAxisOutOfRange",
       [](PackageInfo& p) { mobilenet(p).tensors[0].quantize_axis = 4; },
       StatusCode::kQuantizeAxisOutOfRange,
       {"'logits_int'", "quantize_axis 4"}},
      {"QuantizeAxisNegativeForPerAxis",
       [](PackageInfo& p) { tiny(p).outputs[0].quantize_axis = -1; },
       StatusCode::kQuantizeAxisOutOfRange,
       {tin + ": output[0] 'y'", "quantize_axis -1"}},
      {"ScaleNotFinite",
       [](PackageInfo& p) {
         mobilenet(p).tensors[0].scale[2] = std::numeric_limits<float>::quiet_NaN();
       },
       StatusCode::kBadScale,
       {"'logits_int'", "scale[2] = nan"}},
      {"ScaleZero",
       [](PackageInfo& p) { tiny(p).inputs[0].scale[0] = 0.0f; },
       StatusCode::kBadScale,
       {tin + ": input[0] 'x'", "scale[0] = 0", "> 0"}},
      // ---- segments ----
      {"EmptySegmentName",
       [](PackageInfo& p) { mobilenet(p).segments[1].name.clear(); },
       StatusCode::kMissingName,
       {mob + ": segment[1]", "segment name is empty"}},
      {"DuplicateSegmentName",
       [](PackageInfo& p) { mobilenet(p).segments[1].name = "BPU_mobilenet_subgraph_0"; },
       StatusCode::kDuplicateSegmentName,
       {mob + ": segment[1] 'BPU_mobilenet_subgraph_0'"}},
      {"EmptyBpuProgram",
       [](PackageInfo& p) { mobilenet_bpu(p).program.clear(); },
       StatusCode::kEmptyBpuProgram,
       {bpu0, "program is empty"}},
      {"BpuWithoutOutputs",
       [](PackageInfo& p) { tiny_bpu(p).outputs.clear(); },
       StatusCode::kNoOutputs,
       {tbpu, "no outputs"}},
      {"EmptyCpuSegment",
       [](PackageInfo& p) { mobilenet_cpu(p).ops.clear(); },
       StatusCode::kEmptyCpuSegment,
       {cpu1, "no ops"}},
      {"OpWithoutName",
       [](PackageInfo& p) { dequantize(p).name.clear(); },
       StatusCode::kMissingName,
       {cpu1 + ": op[0]", "op name is empty"}},
      {"OpWithoutType",
       [](PackageInfo& p) { softmax(p).op_type.clear(); },
       StatusCode::kMissingName,
       {smx, "op_type is empty"}},
      {"OpWithoutOutputs",
       [](PackageInfo& p) { softmax(p).outputs.clear(); },
       StatusCode::kNoOutputs,
       {smx, "no outputs"}},
      // ---- tensor references and data flow ----
      {"BpuReadsOpConstant",
       [](PackageInfo& p) { mobilenet_bpu(p).inputs.push_back(R::op_constant(0)); },
       StatusCode::kTensorRefKindNotAllowed,
       {bpu0 + ": input[1]", "OP_CONSTANT"}},
      {"BpuInputAbsent",
       [](PackageInfo& p) { mobilenet_bpu(p).inputs = {R::absent()}; },
       StatusCode::kTensorRefKindNotAllowed,
       {bpu0 + ": input[0]", "ABSENT"}},
      {"OutputIsModelInput",
       [](PackageInfo& p) { tiny_bpu(p).outputs.push_back(R::model_input(0)); },
       StatusCode::kTensorRefKindNotAllowed,
       {tbpu + ": output[1]", "MODEL_INPUT"}},
      {"OpOutputAbsent",
       [](PackageInfo& p) { dequantize(p).outputs.push_back(R::absent()); },
       StatusCode::kTensorRefKindNotAllowed,
       {deq + ": output[1]", "ABSENT"}},
      {"UnknownRefKind",
       [](PackageInfo& p) { dequantize(p).inputs[0].kind = static_cast<TensorRefKind>(9); },
       StatusCode::kBadEnumValue,
       {deq + ": input[0]", "kind 9"}},
      {"ModelInputIndexOutOfRange",
       [](PackageInfo& p) { tiny_bpu(p).inputs = {R::model_input(5)}; },
       StatusCode::kTensorRefOutOfRange,
       {tbpu + ": input[0]", "MODEL_INPUT index 5", "1 available"}},
      {"IntermediateIndexOutOfRange",
       [](PackageInfo& p) { mobilenet_bpu(p).outputs = {R::intermediate(2)}; },
       StatusCode::kTensorRefOutOfRange,
       {bpu0 + ": output[0]", "INTERMEDIATE index 2"}},
      {"ModelOutputIndexOutOfRange",
       [](PackageInfo& p) { softmax(p).outputs = {R::model_output(1)}; },
       StatusCode::kTensorRefOutOfRange,
       {smx + ": output[0]", "MODEL_OUTPUT index 1"}},
      {"OpConstantIndexOutOfRange",
       [](PackageInfo& p) { dequantize(p).inputs[1] = R::op_constant(1); },
       StatusCode::kTensorRefOutOfRange,
       {deq + ": input[1]", "OP_CONSTANT index 1"}},
      {"AbsentWithIndex",
       [](PackageInfo& p) {
         dequantize(p).inputs[2] = {TensorRefKind::ABSENT, 4};
       },
       StatusCode::kTensorRefOutOfRange,
       {deq + ": input[2]", "index 4"}},
      {"TensorWrittenTwice",
       [](PackageInfo& p) { softmax(p).outputs = {R::intermediate(1)}; },
       StatusCode::kTensorWrittenTwice,
       {smx + ": output[0]", "INTERMEDIATE 1 'logits'"}},
      {"IntermediateReadBeforeWritten",
       [](PackageInfo& p) { std::swap(mobilenet(p).segments[0], mobilenet(p).segments[1]); },
       StatusCode::kTensorReadBeforeWritten,
       {mob + ": segment[0] 'CPU_mobilenet_subgraph_1': op[0] 'mobilenet_HzDequantize': input[0]",
        "'logits_int'"}},
      {"ModelOutputReadBeforeWritten",
       [](PackageInfo& p) { dequantize(p).inputs.push_back(R::model_output(0)); },
       StatusCode::kTensorReadBeforeWritten,
       {deq + ": input[3]", "model output[0] 'prob'"}},
      {"ModelOutputNotWritten",
       [](PackageInfo& p) {
         TensorInfo unused = mobilenet(p).tensors[1];
         unused.name = "unused";
         mobilenet(p).tensors.push_back(unused);
         softmax(p).outputs = {R::intermediate(2)};
       },
       StatusCode::kModelOutputNotWritten,
       {mob + ": output[0] 'prob' is not written"}},
      // ---- constants and attributes ----
      {"ConstantOfImageType",
       [](PackageInfo& p) { dequantize(p).constants[0].data_type = TensorType::IMG_TYPE_RGB; },
       StatusCode::kBadConstantType,
       {deq + ": constant[0] 'logits_scale'", "IMG_TYPE_RGB"}},
      {"ConstantUnknownType",
       [](PackageInfo& p) { dequantize(p).constants[0].data_type = static_cast<TensorType>(30); },
       StatusCode::kBadEnumValue,
       {deq + ": constant[0] 'logits_scale'", "data_type 30"}},
      {"ConstantNegativeDimension",
       [](PackageInfo& p) { dequantize(p).constants[0].shape = {-10}; },
       StatusCode::kNegativeDimension,
       {deq + ": constant[0] 'logits_scale'", "negative"}},
      {"ConstantSizeMismatch",
       [](PackageInfo& p) { dequantize(p).constants[0].data.pop_back(); },
       StatusCode::kConstantSizeMismatch,
       {deq + ": constant[0] 'logits_scale'", "holds 39 bytes", "needs 40"}},
      {"PackedS4ConstantSize",
       [](PackageInfo& p) { softmax(p).attributes[6].t->data = {0x21}; },
       StatusCode::kConstantSizeMismatch,
       {smx + ": attribute[6] 'table': tensor", "TENSOR_TYPE_S4", "needs 2"}},
      {"AttributeWithTwoValues",
       [](PackageInfo& p) { softmax(p).attributes[0].floats = {1.0f}; },
       StatusCode::kAttributeMismatch,
       {smx + ": attribute[0] 'axis'", "INT", "'floats'"}},
      {"TensorAttributeWithoutTensor",
       [](PackageInfo& p) { softmax(p).attributes[6].t.reset(); },
       StatusCode::kAttributeMismatch,
       {smx + ": attribute[6] 'table'", "no tensor"}},
      {"UndefinedAttributeType",
       [](PackageInfo& p) { softmax(p).attributes[1].type = AttributeType::UNDEFINED; },
       StatusCode::kAttributeMismatch,
       {smx + ": attribute[1] 'temperature'", "UNDEFINED"}},
      {"UnknownAttributeType",
       [](PackageInfo& p) { softmax(p).attributes[1].type = static_cast<AttributeType>(9); },
       StatusCode::kBadEnumValue,
       {smx + ": attribute[1] 'temperature'", "attribute type 9"}},
      // ---- graph attributes (format 1.3) ----
      {"GraphAttributeWithoutGraph",
       [](PackageInfo& p) { softmax(p).attributes[7].g.clear(); },
       StatusCode::kAttributeMismatch,
       {smx + ": attribute[7] 'body'", "no graph 'g'"}},
      {"GraphOuterCountDiffersFromImplicitInputs",
       [](PackageInfo& p) { softmax(p).implicit_inputs = 0; },
       StatusCode::kAttributeMismatch,
       {smx + ": attribute[7] 'body': graph", "reads 1 outer values, the op gives 0"}},
      {"ImplicitInputsBeyondInputs",
       [](PackageInfo& p) { softmax(p).implicit_inputs = 3; },
       StatusCode::kTensorRefOutOfRange,
       {smx, "3 implicit inputs of 2 inputs"}},
      {"GraphReadsBeforeWritten",
       [](PackageInfo& p) {
         std::swap(softmax(p).attributes[7].g[0].ops[0], softmax(p).attributes[7].g[0].ops[1]);
       },
       StatusCode::kTensorReadBeforeWritten,
       {smx + ": attribute[7] 'body': graph: op[0] 'body_if': input[1]", "tensor 2"}},
      {"GraphOpWritesAModelOutput",
       [](PackageInfo& p) { softmax(p).attributes[7].g[0].ops[0].outputs[0] = R::model_output(0); },
       StatusCode::kTensorRefKindNotAllowed,
       {"op[0] 'body_add': output[0]", "MODEL_OUTPUT"}},
      {"GraphOutputOutsideItsTable",
       [](PackageInfo& p) { softmax(p).attributes[7].g[0].outputs[0] = R::intermediate(4); },
       StatusCode::kTensorRefOutOfRange,
       {smx + ": attribute[7] 'body': graph: output[0]", "index 4"}},
      {"GraphsNestTooDeep",
       [](PackageInfo& p) {
         CpuGraphInfo& body = softmax(p).attributes[7].g[0];
         for (int level = 1; level < kMaxGraphDepth; ++level) {  // wrap the body's If: depth 2 → 9
           CpuGraphInfo wrapper{"wrap", 0, 1, 3, {}, {R::intermediate(2)}};
           wrapper.ops.push_back({"copy", "Identity", "", {R::intermediate(0)}, {R::intermediate(1)}, {}, {}, 13, 0});
           CpuOpInfo nested = body.ops[1];
           nested.inputs = {R::op_constant(0), R::intermediate(1)};
           nested.outputs = {R::intermediate(2)};
           wrapper.ops.push_back(nested);
           body.ops[1].attributes[0].g = {wrapper};
         }
       },
       StatusCode::kGraphTooDeep,
       {"nest deeper than 8"}},
      {"DuplicateAttributeName",
       [](PackageInfo& p) { softmax(p).attributes[1].name = "axis"; },
       StatusCode::kDuplicateAttributeName,
       {smx + ": attribute[1] 'axis'"}},
      {"EmptyAttributeName",
       [](PackageInfo& p) { softmax(p).attributes[2].name.clear(); },
       StatusCode::kMissingName,
       {smx + ": attribute[2]", "attribute name is empty"}},
      // ---- debug map ----
      {"DebugEntrySegmentOutOfRange",
       [](PackageInfo& p) { mobilenet(p).debug_map[1].segment_index = 2; },
       StatusCode::kDebugEntryOutOfRange,
       {mob + ": debug_map[1]", "has 2 segments"}},
      {"DebugEntryOnCpuSegment",
       [](PackageInfo& p) { mobilenet(p).debug_map[0].segment_index = 1; },
       StatusCode::kDebugEntryOutOfRange,
       {mob + ": debug_map[0]", "'CPU_mobilenet_subgraph_1'", "not a BPU segment"}},
  };
}

class SemanticRule : public ::testing::TestWithParam<RuleCase> {};

TEST(SemanticRuleBaseline, SamplePackageIsValid) {
  const Status status = verify(serialize_unchecked_or_die(sample_package()));
  EXPECT_TRUE(status.ok()) << status_code_name(status.code) << ": " << status.message;
}

TEST_P(SemanticRule, ViolationIsRejectedWithItsCodeAndNamesTheElement) {
  const RuleCase& rule = GetParam();
  PackageInfo package = sample_package();
  rule.violate(package);
  const std::vector<uint8_t> file = serialize_unchecked_or_die(package);
  PackageView view;
  const Status status = verify_package(file, &view);
  EXPECT_EQ(status.code, rule.code) << status_code_name(status.code) << ": " << status.message;
  EXPECT_FALSE(view.valid());
  for (const std::string& mention : rule.mentions) {
    EXPECT_NE(status.message.find(mention), std::string::npos)
        << "message does not mention \"" << mention << "\":\n  " << status.message;
  }
  // The checked writer refuses the same package with the same status.
  std::vector<uint8_t> checked;
  const Status refused = serialize_package(package, &checked);
  EXPECT_EQ(refused.code, rule.code);
  EXPECT_EQ(refused.message, status.message);
  EXPECT_TRUE(checked.empty());
}

INSTANTIATE_TEST_SUITE_P(Rules, SemanticRule, ::testing::ValuesIn(rule_cases()),
                         [](const ::testing::TestParamInfo<RuleCase>& param_info) {
                           return param_info.param.name;
                         });

TEST(SemanticRuleCoverage, EveryModelRuleCodeHasACase) {
  std::set<StatusCode> covered;
  for (const RuleCase& c : rule_cases()) covered.insert(c.code);
  // Codes for rules a PackageInfo cannot break are covered by the raw-flatbuffer tests below.
  for (StatusCode c : {StatusCode::kMissingSegmentBody, StatusCode::kUnknownSegmentKind,
                       StatusCode::kMisalignedData}) {
    covered.insert(c);
  }
  for (int32_t v = static_cast<int32_t>(StatusCode::kNoModels);
       v <= static_cast<int32_t>(StatusCode::kDebugEntryOutOfRange); ++v) {
    const auto code = static_cast<StatusCode>(v);
    if (std::string(status_code_name(code)) == "unknown") continue;  // gap between groups
    EXPECT_TRUE(covered.count(code) == 1) << status_code_name(code) << " has no test case";
  }
}

// ---- rules below the PackageInfo level, built with the flatbuffers API ----------------------

using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

// A package with one model "raw" (F32 input "x" and output "y" of shape (1)) whose only
// segment is made by `make_segment`; sealed into a file.
std::vector<uint8_t> raw_package(const std::function<Offset<Segment>(FlatBufferBuilder&)>& make_segment) {
  FlatBufferBuilder fbb;
  const std::vector<int64_t> shape = {1};
  const auto x_name = fbb.CreateString("x");
  const auto x_valid = fbb.CreateVector(shape);
  const auto x_aligned = fbb.CreateVector(shape);
  const auto x = CreateTensorDesc(fbb, x_name, x_valid, x_aligned, TensorLayout::NONE,
                                  TensorType::TENSOR_TYPE_F32, QuantiType::NONE, 0, 0, 0, -1, 4);
  const auto y_name = fbb.CreateString("y");
  const auto y_valid = fbb.CreateVector(shape);
  const auto y_aligned = fbb.CreateVector(shape);
  const auto y = CreateTensorDesc(fbb, y_name, y_valid, y_aligned, TensorLayout::NONE,
                                  TensorType::TENSOR_TYPE_F32, QuantiType::NONE, 0, 0, 0, -1, 4);
  const auto segment = make_segment(fbb);
  const auto inputs = fbb.CreateVector(std::vector<Offset<TensorDesc>>{x});
  const auto outputs = fbb.CreateVector(std::vector<Offset<TensorDesc>>{y});
  const auto segments = fbb.CreateVector(std::vector<Offset<Segment>>{segment});
  const auto name = fbb.CreateString("raw");
  const auto march = fbb.CreateString("bayes-e");
  const auto model = CreateModel(fbb, name, march, inputs, outputs, segments);
  const auto models = fbb.CreateVector(std::vector<Offset<Model>>{model});
  fbb.Finish(CreatePackage(fbb, kFormatVersion, 0, 0, models), PackageIdentifier());
  return seal(std::vector<uint8_t>(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()));
}

const std::vector<TensorRef> kReadX = {TensorRef(TensorRefKind::MODEL_INPUT, 0)};
const std::vector<TensorRef> kWriteY = {TensorRef(TensorRefKind::MODEL_OUTPUT, 0)};

// A BPU segment x -> y whose program/weights are placed with the given alignment forcing
// (`extra` bytes added to the forced length shift the data off the alignment).
Offset<Segment> bpu_segment(FlatBufferBuilder& fbb, size_t program_extra, size_t weights_extra) {
  const std::vector<uint8_t> program(32, 0xAB), weights(128, 0xCD);
  fbb.ForceVectorAlignment(program.size() + program_extra, 1, 16);
  const auto program_vec = fbb.CreateVector(program);
  fbb.PreAlign(weights.size() + weights_extra, 64);  // force_align stops at 32
  const auto weights_vec = fbb.CreateVector(weights);
  const auto inputs = fbb.CreateVectorOfStructs(kReadX);
  const auto outputs = fbb.CreateVectorOfStructs(kWriteY);
  const auto body = CreateBpuSegment(fbb, 1, program_vec, weights_vec, inputs, outputs);
  const auto name = fbb.CreateString("BPU_raw_subgraph_0");
  return CreateSegment(fbb, name, SegmentBody::BpuSegment, body.Union());
}

const BpuSegment* first_bpu(const std::vector<uint8_t>& file) {
  return GetPackage(file.data())->models()->Get(0)->segments()->Get(0)->body_as_BpuSegment();
}

TEST(RawFlatbufferRule, AlignedBpuSegmentIsValid) {
  const std::vector<uint8_t> file = raw_package([](FlatBufferBuilder& fbb) { return bpu_segment(fbb, 0, 0); });
  const Status status = verify(file);
  EXPECT_TRUE(status.ok()) << status.message;
}

TEST(RawFlatbufferRule, MisalignedWeightsAreRejected) {
  const std::vector<uint8_t> file = raw_package([](FlatBufferBuilder& fbb) { return bpu_segment(fbb, 0, 4); });
  ASSERT_NE((first_bpu(file)->weights()->data() - file.data()) % 64, 0) << "test setup";
  const Status status = verify(file);
  EXPECT_EQ(status.code, StatusCode::kMisalignedData) << status.message;
  EXPECT_NE(status.message.find("segment[0] 'BPU_raw_subgraph_0': BPU weights are not 64-byte"),
            std::string::npos)
      << status.message;
}

TEST(RawFlatbufferRule, MisalignedProgramIsRejected) {
  const std::vector<uint8_t> file = raw_package([](FlatBufferBuilder& fbb) { return bpu_segment(fbb, 4, 0); });
  ASSERT_NE((first_bpu(file)->program()->data() - file.data()) % 16, 0) << "test setup";
  const Status status = verify(file);
  EXPECT_EQ(status.code, StatusCode::kMisalignedData) << status.message;
  EXPECT_NE(status.message.find("BPU program is not 16-byte"), std::string::npos) << status.message;
}

TEST(RawFlatbufferRule, MisalignedConstantIsRejected) {
  const std::vector<uint8_t> file = raw_package([](FlatBufferBuilder& fbb) {
    const std::vector<uint8_t> data(4, 0);
    fbb.ForceVectorAlignment(data.size() + 4, 1, 16);
    const auto data_vec = fbb.CreateVector(data);
    const auto shape = fbb.CreateVector(std::vector<int64_t>{1});
    const auto cname = fbb.CreateString("c");
    const auto constant = CreateConstTensor(fbb, cname, TensorType::TENSOR_TYPE_F32, shape, data_vec);
    const auto constants = fbb.CreateVector(std::vector<Offset<ConstTensor>>{constant});
    const std::vector<TensorRef> inputs = {TensorRef(TensorRefKind::MODEL_INPUT, 0),
                                           TensorRef(TensorRefKind::OP_CONSTANT, 0)};
    const auto in = fbb.CreateVectorOfStructs(inputs);
    const auto out = fbb.CreateVectorOfStructs(kWriteY);
    const auto op_name = fbb.CreateString("raw_Add");
    const auto op_type = fbb.CreateString("Add");
    const auto op = CreateCpuOp(fbb, op_name, op_type, 0, in, out, 0, constants);
    const auto ops = fbb.CreateVector(std::vector<Offset<CpuOp>>{op});
    const auto body = CreateCpuSegment(fbb, ops);
    const auto name = fbb.CreateString("CPU_raw_subgraph_0");
    return CreateSegment(fbb, name, SegmentBody::CpuSegment, body.Union());
  });
  const Status status = verify(file);
  EXPECT_EQ(status.code, StatusCode::kMisalignedData) << status.message;
  EXPECT_NE(status.message.find("op[0] 'raw_Add': constant[0] 'c': constant data is not 16-byte"),
            std::string::npos)
      << status.message;
}

TEST(RawFlatbufferRule, SegmentWithoutBodyIsRejected) {
  const std::vector<uint8_t> none = raw_package([](FlatBufferBuilder& fbb) {
    const auto name = fbb.CreateString("BPU_raw_subgraph_0");
    return CreateSegment(fbb, name, SegmentBody::NONE, 0);
  });
  Status status = verify(none);
  EXPECT_EQ(status.code, StatusCode::kMissingSegmentBody) << status.message;
  EXPECT_NE(status.message.find("model[0] 'raw': segment[0] 'BPU_raw_subgraph_0': segment has no body"),
            std::string::npos)
      << status.message;

  // A BPU kind whose table is missing.
  const std::vector<uint8_t> empty = raw_package([](FlatBufferBuilder& fbb) {
    const auto name = fbb.CreateString("BPU_raw_subgraph_0");
    return CreateSegment(fbb, name, SegmentBody::BpuSegment, 0);
  });
  status = verify(empty);
  EXPECT_EQ(status.code, StatusCode::kMissingSegmentBody) << status.message;
  EXPECT_NE(status.message.find("BPU segment body is missing"), std::string::npos) << status.message;
}

TEST(RawFlatbufferRule, SegmentOfUnknownKindIsRejected) {
  const std::vector<uint8_t> file = raw_package([](FlatBufferBuilder& fbb) {
    const auto body = CreateCpuSegment(fbb);  // any table: the kind is what matters
    const auto name = fbb.CreateString("DSP_raw_subgraph_0");
    return CreateSegment(fbb, name, static_cast<SegmentBody>(3), body.Union());
  });
  const Status status = verify(file);
  EXPECT_EQ(status.code, StatusCode::kUnknownSegmentKind) << status.message;
  EXPECT_NE(status.message.find("segment[0] 'DSP_raw_subgraph_0': segment kind 3 is unknown"),
            std::string::npos)
      << status.message;
}

// flatbuffers' Verifier checks only the 4-byte alignment of a vector's length, so a vector of
// int64 can be placed with its elements at 4 mod 8; reading it would be a misaligned load.
TEST(RawFlatbufferRule, MisalignedInt64VectorIsRejectedBeforeAnyRead) {
  FlatBufferBuilder fbb;
  // A uint32 vector {1, lo, hi} with its elements 8-byte aligned; read from its second word
  // on, it is a Vector<int64_t> of length 1 whose element sits at 4 mod 8.
  fbb.PreAlign(3 * sizeof(uint32_t), 8);
  const auto words = fbb.CreateVector(std::vector<uint32_t>{1, 1, 0});
  const Offset<flatbuffers::Vector<int64_t>> fake_shape(words.o - sizeof(uint32_t));
  const auto shape = fbb.CreateVector(std::vector<int64_t>{1});
  const auto x_name = fbb.CreateString("x");
  const auto x = CreateTensorDesc(fbb, x_name, fake_shape, shape, TensorLayout::NONE,
                                  TensorType::TENSOR_TYPE_F32, QuantiType::NONE, 0, 0, 0, -1, 4);
  const auto y_name = fbb.CreateString("y");
  const auto y = CreateTensorDesc(fbb, y_name, shape, shape, TensorLayout::NONE,
                                  TensorType::TENSOR_TYPE_F32, QuantiType::NONE, 0, 0, 0, -1, 4);
  const auto segment = bpu_segment(fbb, 0, 0);
  const auto inputs = fbb.CreateVector(std::vector<Offset<TensorDesc>>{x});
  const auto outputs = fbb.CreateVector(std::vector<Offset<TensorDesc>>{y});
  const auto segments = fbb.CreateVector(std::vector<Offset<Segment>>{segment});
  const auto name = fbb.CreateString("raw");
  const auto march = fbb.CreateString("bayes-e");
  const auto model = CreateModel(fbb, name, march, inputs, outputs, segments);
  const auto models = fbb.CreateVector(std::vector<Offset<Model>>{model});
  fbb.Finish(CreatePackage(fbb, kFormatVersion, 0, 0, models), PackageIdentifier());
  const std::vector<uint8_t> file =
      seal(std::vector<uint8_t>(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()));
  const auto* valid_shape = GetPackage(file.data())->models()->Get(0)->inputs()->Get(0)->valid_shape();
  ASSERT_NE(reinterpret_cast<uintptr_t>(valid_shape->data()) % 8, 0u) << "test setup";
  ASSERT_EQ(valid_shape->size(), 1u) << "test setup";

  const Status status = verify(file);
  EXPECT_EQ(status.code, StatusCode::kInvalidFlatbuffer) << status.message;
  EXPECT_NE(status.message.find("model[0]: input[0] valid_shape (64-bit integers) is not 8-byte aligned"),
            std::string::npos)
      << status.message;
}

}  // namespace
}  // namespace openbpu::format
