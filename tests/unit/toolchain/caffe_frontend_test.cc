// The Caffe frontend: each test writes a .prototxt and a .caffemodel (built with the generated
// openbpu::caffe classes), loads them, runs the model with the float executor and compares with
// an independent result: a hand computation following Caffe's definition of the layer, or an
// equivalent ONNX graph in the IR's text form.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include "openbpu/caffe/caffe.pb.h"
#include "openbpu/common/error.h"
#include "openbpu/executor/float_executor.h"
#include "openbpu/frontend/caffe_model.h"
#include "openbpu/ir/parse.h"

namespace openbpu::frontend {
namespace {

namespace fs = std::filesystem;
using kernels::DataType;
using kernels::Shape;
using kernels::Tensor;

// ------------------------------------------------------------------ fixtures

struct CaffeFiles {
  fs::path prototxt;
  fs::path caffemodel;
};

fs::path temp_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("openbpu_caffe_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// Writes `prototxt` and the serialized `weights` into a fresh folder named after the test.
CaffeFiles write_model(const std::string& name, const std::string& prototxt,
                       const caffe::NetParameter& weights) {
  const fs::path dir = temp_dir(name);
  CaffeFiles f{dir / (name + ".prototxt"), dir / (name + ".caffemodel")};
  std::ofstream(f.prototxt) << prototxt;
  std::string bytes;
  EXPECT_TRUE(weights.SerializeToString(&bytes));
  std::ofstream(f.caffemodel, std::ios::binary) << bytes;
  return f;
}

// Values in [-1, 1), reproducible from the seed.
Tensor random_tensor(const Shape& shape, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Tensor t(DataType::kFloat32, shape);
  for (int64_t i = 0; i < t.element_count(); ++i) {
    t.data<float>()[i] = static_cast<float>(static_cast<double>(rng() >> 11) * 0x1.0p-52 - 1.0);
  }
  return t;
}

std::vector<float> values(const Tensor& t) {
  const auto v = t.values<float>();
  return {v.begin(), v.end()};
}

// Appends a blob with `shape` and `data` to `layer` (BlobShape form, as Caffe writes today).
void add_blob(caffe::LayerParameter* layer, const Shape& shape, const std::vector<float>& data) {
  caffe::BlobProto* blob = layer->add_blobs();
  for (int64_t d : shape) blob->mutable_shape()->add_dim(d);
  for (float v : data) blob->add_data(v);
}
void add_blob(caffe::LayerParameter* layer, const Tensor& t) {
  add_blob(layer, t.shape(), values(t));
}

caffe::LayerParameter* weights_for(caffe::NetParameter& net, const std::string& name,
                                   const std::string& type) {
  caffe::LayerParameter* layer = net.add_layer();
  layer->set_name(name);
  layer->set_type(type);
  return layer;
}

// Runs `model` once; outputs by name (copied out of the executor's buffers).
std::map<std::string, Tensor> run(const ir::Model& model,
                                  const std::map<std::string, Tensor>& feeds) {
  executor::FloatExecutor exec(model);
  const executor::RunResult r = exec.run(feeds);
  std::map<std::string, Tensor> out;
  for (size_t i = 0; i < r.names.size(); ++i) out[r.names[i]] = r.tensors[i].clone();
  return out;
}

std::vector<std::string> output_names(const ir::Model& model) {
  std::vector<std::string> names;
  for (const ir::Value* v : model.graph->outputs()) names.push_back(v->name());
  return names;
}

const ir::Node* node_named(const ir::Model& model, const std::string& name) {
  for (const ir::Node* n : model.graph->nodes()) {
    if (n->name() == name) return n;
  }
  return nullptr;
}

// Shape and values within 1e-5 relative (absolute below magnitude 1).
void expect_close(const Tensor& actual, const Shape& shape, const std::vector<float>& expected,
                  const std::string& what) {
  ASSERT_EQ(actual.shape(), shape) << what;
  ASSERT_EQ(static_cast<size_t>(actual.element_count()), expected.size()) << what;
  const auto a = actual.values<float>();
  for (size_t i = 0; i < expected.size(); ++i) {
    const double tolerance = 1e-5 * std::max(1.0, std::fabs(static_cast<double>(expected[i])));
    ASSERT_NEAR(a[i], expected[i], tolerance) << what << " element " << i;
  }
}

std::string load_error(const CaffeFiles& f) {
  try {
    load_caffe(f.prototxt, f.caffemodel);
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "load_caffe did not fail";
  return "";
}

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.rfind(prefix, 0) == 0;
}

// Row-major offset of a 4-D index.
int64_t at4(const Shape& s, int64_t n, int64_t c, int64_t h, int64_t w) {
  return ((n * s[1] + c) * s[2] + h) * s[3] + w;
}

// ------------------------------------------------------------------ layers

TEST(CaffeFrontend, ConvBatchNormScaleReluInPlaceMatchesTheOnnxGraph) {
  // The reference: Conv, then BatchNormalization with Scale's factor and bias folded into
  // its gamma/beta, then Relu. Weights are the parser's pseudo-random constants.
  const ir::Model reference = ir::parse_model(
      "model opsets=[ai.onnx:11]\n"
      "graph g (%data: float32[1,3,8,8]) -> (%y) {\n"
      "  init %w: float32[4,3,3,3]\n"
      "  init %b: float32[4]\n"
      "  init %mean: float32[4]\n"
      "  init %var: float32[4] uniform(0.5, 2)\n"
      "  init %gamma: float32[4] uniform(0.5, 2)\n"
      "  init %beta: float32[4]\n"
      "  %c = Conv[kernel_shape=[3,3], pads=[1,1,1,1], strides=[2,2]](%data, %w, %b)\n"
      "  %n = BatchNormalization[epsilon=0.001](%c, %gamma, %beta, %mean, %var)\n"
      "  %y = Relu(%n)\n"
      "}\n");
  auto constant = [&](const std::string& name) {
    return *reference.graph->find_value(name)->constant();
  };

  const std::string prototxt = R"(
name: "convbn"
input: "data"
input_shape { dim: 1 dim: 3 dim: 8 dim: 8 }
layer {
  name: "conv1" type: "Convolution" bottom: "data" top: "conv1"
  param { lr_mult: 1 decay_mult: 1 }
  convolution_param {
    num_output: 4 kernel_size: 3 pad: 1 stride: 2
    weight_filler { type: "xavier" } engine: CUDNN
  }
}
layer { name: "bn1" type: "BatchNorm" bottom: "conv1" top: "conv1"
        batch_norm_param { use_global_stats: true eps: 0.001 } }
layer { name: "scale1" type: "Scale" bottom: "conv1" top: "conv1" scale_param { bias_term: true } }
layer { name: "relu1" type: "ReLU" bottom: "conv1" top: "conv1" }
)";
  caffe::NetParameter weights;
  weights_for(weights, "data", "Input");  // layers without blobs are fine
  auto* conv = weights_for(weights, "conv1", "Convolution");
  add_blob(conv, constant("w"));
  add_blob(conv, constant("b"));
  // Caffe's BatchNorm stores running sums and their scale factor.
  const float factor = 3.0f;
  auto* bn = weights_for(weights, "bn1", "BatchNorm");
  std::vector<float> mean = values(constant("mean")), var = values(constant("var"));
  for (float& v : mean) v *= factor;
  for (float& v : var) v *= factor;
  add_blob(bn, {4}, mean);
  add_blob(bn, {4}, var);
  add_blob(bn, {1}, {factor});
  auto* scale = weights_for(weights, "scale1", "Scale");
  add_blob(scale, constant("gamma"));
  add_blob(scale, constant("beta"));
  const CaffeFiles f = write_model("conv_bn", prototxt, weights);

  const ir::Model model = load_caffe(f.prototxt, f.caffemodel);
  EXPECT_EQ(model.opset_version(""), 11);
  EXPECT_EQ(output_names(model), std::vector<std::string>{"conv1"});
  ASSERT_NE(node_named(model, "conv1"), nullptr);
  EXPECT_EQ(node_named(model, "conv1")->op_type(), "Conv");
  EXPECT_EQ(node_named(model, "bn1")->op_type(), "BatchNormalization");
  EXPECT_EQ(node_named(model, "scale1")->op_type(), "Mul");
  EXPECT_EQ(node_named(model, "scale1/bias")->op_type(), "Add");
  EXPECT_EQ(node_named(model, "relu1")->op_type(), "Relu");
  EXPECT_EQ(model.graph->outputs()[0]->type().to_string(), "float32[1,4,4,4]");

  const Tensor x = random_tensor({1, 3, 8, 8}, 1);
  const Tensor expected = run(reference, {{"data", x}}).at("y");
  expect_close(run(model, {{"data", x}}).at("conv1"), expected.shape(), values(expected), "conv1");
}

// Caffe's pooling, written after its CPU forward pass.
Tensor caffe_pool(const Tensor& x, bool is_max, int64_t k, int64_t s, int64_t pad, bool round_up) {
  const Shape& xs = x.shape();
  auto out_size = [&](int64_t in) {
    const int64_t room = in + 2 * pad - k;
    int64_t out = (round_up ? (room + s - 1) / s : room / s) + 1;
    if (pad > 0 && (out - 1) * s >= in + pad) --out;
    return out;
  };
  const Shape ys{xs[0], xs[1], out_size(xs[2]), out_size(xs[3])};
  Tensor y(DataType::kFloat32, ys);
  const float* in = x.data<float>();
  float* out = y.data<float>();
  for (int64_t n = 0; n < ys[0]; ++n) {
    for (int64_t c = 0; c < ys[1]; ++c) {
      for (int64_t ph = 0; ph < ys[2]; ++ph) {
        for (int64_t pw = 0; pw < ys[3]; ++pw) {
          int64_t hstart = ph * s - pad, wstart = pw * s - pad;
          int64_t hend = std::min(hstart + k, xs[2] + pad),
                  wend = std::min(wstart + k, xs[3] + pad);
          const int64_t pool_size = (hend - hstart) * (wend - wstart);
          hstart = std::max<int64_t>(hstart, 0);
          wstart = std::max<int64_t>(wstart, 0);
          hend = std::min(hend, xs[2]);
          wend = std::min(wend, xs[3]);
          double acc = is_max ? -FLT_MAX : 0.0;
          for (int64_t h = hstart; h < hend; ++h) {
            for (int64_t w = wstart; w < wend; ++w) {
              const float v = in[at4(xs, n, c, h, w)];
              acc = is_max ? std::max<double>(acc, v) : acc + v;
            }
          }
          out[at4(ys, n, c, ph, pw)] =
              static_cast<float>(is_max ? acc : acc / static_cast<double>(pool_size));
        }
      }
    }
  }
  return y;
}

TEST(CaffePooling, RoundsUpLikeCaffeForMaxAndPaddedAverage) {
  // 6x6 input, kernel 3, stride 2: rounding down gives 2 (pad 0) / 3 (pad 1) outputs per
  // axis, Caffe gives 3 / 4.
  const std::string prototxt = R"(
layer { name: "data" type: "Input" top: "data" input_param { shape { dim: 1 dim: 2 dim: 6 dim: 6 } } }
layer { name: "pmax" type: "Pooling" bottom: "data" top: "pmax"
        pooling_param { pool: MAX kernel_size: 3 stride: 2 } }
layer { name: "pave" type: "Pooling" bottom: "data" top: "pave"
        pooling_param { pool: AVE kernel_size: 3 stride: 2 pad: 1 } }
layer { name: "pfloor" type: "Pooling" bottom: "data" top: "pfloor"
        pooling_param { pool: AVE kernel_h: 3 kernel_w: 3 stride_h: 2 stride_w: 2 pad_h: 1 pad_w: 1 round_mode: FLOOR } }
layer { name: "pglobal" type: "Pooling" bottom: "data" top: "pglobal"
        pooling_param { pool: AVE global_pooling: true } }
)";
  const CaffeFiles f = write_model("pooling", prototxt, {});
  const ir::Model model = load_caffe(f.prototxt, f.caffemodel);
  EXPECT_EQ(output_names(model), (std::vector<std::string>{"pmax", "pave", "pfloor", "pglobal"}));
  EXPECT_EQ(node_named(model, "pmax")->attrs().get_int("ceil_mode", 0), 1);
  EXPECT_EQ(node_named(model, "pave")->attrs().get_int("ceil_mode", 0), 1);
  EXPECT_EQ(node_named(model, "pave")->attrs().get_int("count_include_pad", 0), 1);
  EXPECT_EQ(node_named(model, "pfloor")->attrs().get_int("ceil_mode", 0), 0);
  EXPECT_EQ(node_named(model, "pglobal")->op_type(), "GlobalAveragePool");

  const Tensor x = random_tensor({1, 2, 6, 6}, 2);
  const auto out = run(model, {{"data", x}});
  const Tensor pmax = caffe_pool(x, true, 3, 2, 0, true);
  const Tensor pave = caffe_pool(x, false, 3, 2, 1, true);
  const Tensor pfloor = caffe_pool(x, false, 3, 2, 1, false);
  EXPECT_EQ(pmax.shape(), (Shape{1, 2, 3, 3}));
  EXPECT_EQ(pave.shape(), (Shape{1, 2, 4, 4}));
  EXPECT_EQ(pfloor.shape(), (Shape{1, 2, 3, 3}));
  expect_close(out.at("pmax"), pmax.shape(), values(pmax), "pmax");
  expect_close(out.at("pave"), pave.shape(), values(pave), "pave");
  expect_close(out.at("pfloor"), pfloor.shape(), values(pfloor), "pfloor");
  const Tensor pglobal = caffe_pool(x, false, 6, 1, 0, true);
  expect_close(out.at("pglobal"), {1, 2, 1, 1}, values(pglobal), "pglobal");
}

TEST(CaffeInnerProduct, FlattensA4DBlobAndHonoursAxisAndTranspose) {
  const std::string prototxt = R"(
input: "data"
input_dim: 2 input_dim: 3 input_dim: 2 input_dim: 2
layer { name: "ip1" type: "InnerProduct" bottom: "data" top: "ip1" inner_product_param { num_output: 5 } }
layer { name: "ip2" type: "InnerProduct" bottom: "data" top: "ip2"
        inner_product_param { num_output: 5 axis: 2 transpose: true bias_term: false } }
)";
  const Tensor w1 = random_tensor({5, 12}, 3), b1 = random_tensor({5}, 4);
  const Tensor w2 = random_tensor({4, 5}, 5);  // transpose: [K, N], K = 2 * 2
  caffe::NetParameter weights;
  auto* ip1 = weights_for(weights, "ip1", "InnerProduct");
  add_blob(ip1, w1);
  add_blob(ip1, b1);
  // The older four-axis blob shape.
  caffe::BlobProto* legacy = weights_for(weights, "ip2", "InnerProduct")->add_blobs();
  legacy->set_num(1);
  legacy->set_channels(1);
  legacy->set_height(4);
  legacy->set_width(5);
  for (float v : values(w2)) legacy->add_data(v);
  const CaffeFiles f = write_model("inner_product", prototxt, weights);
  const ir::Model model = load_caffe(f.prototxt, f.caffemodel);
  EXPECT_EQ(node_named(model, "ip1")->op_type(), "Gemm");
  EXPECT_EQ(node_named(model, "ip1/flatten")->op_type(), "Flatten");

  const Tensor x = random_tensor({2, 3, 2, 2}, 6);
  const auto out = run(model, {{"data", x}});
  const float* xv = x.data<float>();
  std::vector<float> y1(10), y2(2 * 3 * 5);
  for (int n = 0; n < 2; ++n) {
    for (int o = 0; o < 5; ++o) {
      double acc = b1.data<float>()[o];
      for (int k = 0; k < 12; ++k) acc += double(w1.data<float>()[o * 12 + k]) * xv[n * 12 + k];
      y1[static_cast<size_t>(n * 5 + o)] = static_cast<float>(acc);
    }
  }
  for (int r = 0; r < 6; ++r) {  // rows: (n, c); K: the last two axes
    for (int o = 0; o < 5; ++o) {
      double acc = 0;
      for (int k = 0; k < 4; ++k) acc += double(w2.data<float>()[k * 5 + o]) * xv[r * 4 + k];
      y2[static_cast<size_t>(r * 5 + o)] = static_cast<float>(acc);
    }
  }
  expect_close(out.at("ip1"), {2, 5}, y1, "ip1");
  expect_close(out.at("ip2"), {2, 3, 5}, y2, "ip2");
}

TEST(CaffeEltwise, SumWithCoeffsProdMaxAndSplitTops) {
  const std::string prototxt = R"(
layer { name: "in" type: "Input" top: "a" top: "b" input_param { shape { dim: 2 dim: 3 } } }
layer { name: "split" type: "Split" bottom: "a" top: "a1" top: "a2" }
layer { name: "sum" type: "Eltwise" bottom: "a1" bottom: "b" bottom: "a2" top: "sum"
        eltwise_param { operation: SUM coeff: 0.5 coeff: -1 coeff: 2 } }
layer { name: "prod" type: "Eltwise" bottom: "a" bottom: "b" bottom: "b" top: "prod" eltwise_param { operation: PROD } }
layer { name: "max" type: "Eltwise" bottom: "a" bottom: "b" top: "max" eltwise_param { operation: MAX } }
)";
  const CaffeFiles f = write_model("eltwise", prototxt, {});
  const ir::Model model = load_caffe(f.prototxt, f.caffemodel);
  EXPECT_EQ(output_names(model), (std::vector<std::string>{"sum", "prod", "max"}));
  const Tensor a = random_tensor({2, 3}, 7), b = random_tensor({2, 3}, 8);
  const auto out = run(model, {{"a", a}, {"b", b}});
  std::vector<float> sum, prod, max;
  for (int i = 0; i < 6; ++i) {
    const float av = a.data<float>()[i], bv = b.data<float>()[i];
    sum.push_back(0.5f * av - bv + 2.0f * av);
    prod.push_back(av * bv * bv);
    max.push_back(std::max(av, bv));
  }
  expect_close(out.at("sum"), {2, 3}, sum, "sum");
  expect_close(out.at("prod"), {2, 3}, prod, "prod");
  expect_close(out.at("max"), {2, 3}, max, "max");
}

TEST(CaffeConcat, JoinsAlongChannelsAndTheOlderConcatDim) {
  const std::string prototxt = R"(
layer { name: "in" type: "Input" top: "a" top: "b"
        input_param { shape { dim: 1 dim: 2 dim: 2 dim: 2 } shape { dim: 1 dim: 3 dim: 2 dim: 2 } } }
layer { name: "cat" type: "Concat" bottom: "a" bottom: "b" top: "cat" }
layer { name: "cat_w" type: "Concat" bottom: "a" bottom: "a" top: "cat_w" concat_param { concat_dim: 3 } }
)";
  const CaffeFiles f = write_model("concat", prototxt, {});
  const ir::Model model = load_caffe(f.prototxt, f.caffemodel);
  const Tensor a = random_tensor({1, 2, 2, 2}, 9), b = random_tensor({1, 3, 2, 2}, 10);
  const auto out = run(model, {{"a", a}, {"b", b}});
  std::vector<float> cat = values(a), cat_w;
  for (float v : values(b)) cat.push_back(v);
  for (int row = 0; row < 4; ++row) {  // (c, h) rows of width 2, repeated along w
    for (int rep = 0; rep < 2; ++rep) {
      for (int w = 0; w < 2; ++w) cat_w.push_back(a.data<float>()[row * 2 + w]);
    }
  }
  expect_close(out.at("cat"), {1, 5, 2, 2}, cat, "cat");
  expect_close(out.at("cat_w"), {1, 2, 2, 4}, cat_w, "cat_w");
}

TEST(CaffeSoftmax, NormalisesOverChannelsOfA4DBlob) {
  const std::string prototxt = R"(
layer { name: "data" type: "Input" top: "data" input_param { shape { dim: 2 dim: 3 dim: 2 dim: 2 } } }
layer { name: "prob" type: "Softmax" bottom: "data" top: "prob" }
layer { name: "prob_last" type: "Softmax" bottom: "data" top: "prob_last" softmax_param { axis: -1 } }
)";
  const CaffeFiles f = write_model("softmax", prototxt, {});
  const ir::Model model = load_caffe(f.prototxt, f.caffemodel);
  const Tensor x = random_tensor({2, 3, 2, 2}, 11);
  const auto out = run(model, {{"data", x}});
  const Shape s{2, 3, 2, 2};
  std::vector<float> prob(24), prob_last(24);
  for (int n = 0; n < 2; ++n) {
    for (int h = 0; h < 2; ++h) {
      for (int w = 0; w < 2; ++w) {
        double total = 0;
        for (int c = 0; c < 3; ++c) total += std::exp(double(x.data<float>()[at4(s, n, c, h, w)]));
        for (int c = 0; c < 3; ++c) {
          const int64_t i = at4(s, n, c, h, w);
          prob[static_cast<size_t>(i)] =
              static_cast<float>(std::exp(double(x.data<float>()[i])) / total);
        }
      }
    }
  }
  for (int row = 0; row < 12; ++row) {
    const double e0 = std::exp(double(x.data<float>()[row * 2])),
                 e1 = std::exp(double(x.data<float>()[row * 2 + 1]));
    prob_last[static_cast<size_t>(row * 2)] = static_cast<float>(e0 / (e0 + e1));
    prob_last[static_cast<size_t>(row * 2 + 1)] = static_cast<float>(e1 / (e0 + e1));
  }
  expect_close(out.at("prob"), s, prob, "prob");
  expect_close(out.at("prob_last"), s, prob_last, "prob_last");
}

TEST(CaffeDeconvolution, GroupedStridedPaddedMatchesCaffesDefinition) {
  // 4 input channels, 6 outputs in 2 groups, kernel 3, stride 2, pad 1: 3x3 → 5x5.
  const std::string prototxt = R"(
layer { name: "data" type: "Input" top: "data" input_param { shape { dim: 1 dim: 4 dim: 3 dim: 3 } } }
layer { name: "up" type: "Deconvolution" bottom: "data" top: "up"
        convolution_param { num_output: 6 group: 2 kernel_size: 3 stride: 2 pad: 1 } }
)";
  const Tensor w = random_tensor({4, 3, 3, 3}, 12), b = random_tensor({6}, 13);
  caffe::NetParameter weights;
  auto* up = weights_for(weights, "up", "Deconvolution");
  add_blob(up, w);
  add_blob(up, b);
  const CaffeFiles f = write_model("deconv", prototxt, weights);
  const ir::Model model = load_caffe(f.prototxt, f.caffemodel);
  EXPECT_EQ(node_named(model, "up")->op_type(), "ConvTranspose");
  const Tensor x = random_tensor({1, 4, 3, 3}, 14);
  const Shape xs{1, 4, 3, 3}, ys{1, 6, 5, 5};
  std::vector<double> y(150, 0.0);
  for (int c = 0; c < 4; ++c) {
    const int group = c / 2;
    for (int ih = 0; ih < 3; ++ih) {
      for (int iw = 0; iw < 3; ++iw) {
        const double v = x.data<float>()[at4(xs, 0, c, ih, iw)];
        for (int ol = 0; ol < 3; ++ol) {
          for (int kh = 0; kh < 3; ++kh) {
            for (int kw = 0; kw < 3; ++kw) {
              const int oh = ih * 2 - 1 + kh, ow = iw * 2 - 1 + kw;
              if (oh < 0 || oh >= 5 || ow < 0 || ow >= 5) continue;
              y[static_cast<size_t>(at4(ys, 0, group * 3 + ol, oh, ow))] +=
                  v * w.data<float>()[at4({4, 3, 3, 3}, c, ol, kh, kw)];
            }
          }
        }
      }
    }
  }
  std::vector<float> expected;
  for (size_t i = 0; i < y.size(); ++i)
    expected.push_back(static_cast<float>(y[i] + b.data<float>()[i / 25]));
  expect_close(run(model, {{"data", x}}).at("up"), ys, expected, "up");
}

TEST(CaffeShapeLayers, PermuteReshapeFlatten) {
  const std::string prototxt = R"(
layer { name: "data" type: "Input" top: "data" input_param { shape { dim: 1 dim: 2 dim: 3 dim: 4 } } }
layer { name: "perm" type: "Permute" bottom: "data" top: "perm" permute_param { order: 0 order: 2 order: 3 order: 1 } }
layer { name: "resh" type: "Reshape" bottom: "perm" top: "resh" reshape_param { shape { dim: 0 dim: -1 dim: 2 } } }
layer { name: "flat" type: "Flatten" bottom: "resh" top: "flat" }
layer { name: "mid" type: "Reshape" bottom: "data" top: "mid" reshape_param { shape { dim: 2 dim: 1 } axis: 1 num_axes: 1 } }
layer { name: "flat_mid" type: "Flatten" bottom: "data" top: "flat_mid" flatten_param { axis: 1 end_axis: 2 } }
)";
  const CaffeFiles f = write_model("shape_layers", prototxt, {});
  const ir::Model model = load_caffe(f.prototxt, f.caffemodel);
  EXPECT_EQ(output_names(model), (std::vector<std::string>{"flat", "mid", "flat_mid"}));
  const Tensor x = random_tensor({1, 2, 3, 4}, 15);
  const auto out = run(model, {{"data", x}});
  std::vector<float> permuted;  // [1,3,4,2]
  for (int h = 0; h < 3; ++h) {
    for (int w = 0; w < 4; ++w) {
      for (int c = 0; c < 2; ++c)
        permuted.push_back(x.data<float>()[at4({1, 2, 3, 4}, 0, c, h, w)]);
    }
  }
  expect_close(out.at("flat"), {1, 24}, permuted, "flat");
  expect_close(out.at("mid"), {1, 2, 1, 3, 4}, values(x), "mid");
  expect_close(out.at("flat_mid"), {1, 6, 4}, values(x), "flat_mid");
}

TEST(CaffeSlice, SplitsIntoTwoTopsAtTheSlicePoint) {
  const std::string prototxt = R"(
layer { name: "data" type: "Input" top: "data" input_param { shape { dim: 1 dim: 5 dim: 2 dim: 2 } } }
layer { name: "slice" type: "Slice" bottom: "data" top: "s1" top: "s2" slice_param { axis: 1 slice_point: 2 } }
)";
  const CaffeFiles f = write_model("slice", prototxt, {});
  const ir::Model model = load_caffe(f.prototxt, f.caffemodel);
  EXPECT_EQ(output_names(model), (std::vector<std::string>{"s1", "s2"}));
  EXPECT_EQ(node_named(model, "slice")->op_type(), "Split");
  const Tensor x = random_tensor({1, 5, 2, 2}, 16);
  const auto out = run(model, {{"data", x}});
  const std::vector<float> all = values(x);
  expect_close(out.at("s1"), {1, 2, 2, 2}, std::vector<float>(all.begin(), all.begin() + 8), "s1");
  expect_close(out.at("s2"), {1, 3, 2, 2}, std::vector<float>(all.begin() + 8, all.end()), "s2");
}

TEST(CaffeActivations, LeakyReluRelu6SigmoidTanh) {
  const std::string prototxt = R"(
layer { name: "data" type: "Input" top: "data" input_param { shape { dim: 1 dim: 8 } } }
layer { name: "scaled" type: "Scale" bottom: "data" top: "scaled" scale_param { num_axes: 0 } }
layer { name: "leaky" type: "ReLU" bottom: "scaled" top: "leaky" relu_param { negative_slope: 0.1 } }
layer { name: "relu6" type: "ReLU6" bottom: "scaled" top: "relu6" }
layer { name: "sig" type: "Sigmoid" bottom: "scaled" top: "sig" }
layer { name: "tanh" type: "TanH" bottom: "scaled" top: "tanh" }
)";
  caffe::NetParameter weights;
  add_blob(weights_for(weights, "scaled", "Scale"), {}, {8.0f});  // a scalar factor
  const CaffeFiles f = write_model("activations", prototxt, weights);
  const ir::Model model = load_caffe(f.prototxt, f.caffemodel);
  EXPECT_EQ(node_named(model, "leaky")->op_type(), "LeakyRelu");
  EXPECT_EQ(node_named(model, "relu6")->op_type(), "Clip");
  const Tensor x = random_tensor({1, 8}, 17);
  const auto out = run(model, {{"data", x}});
  std::vector<float> leaky, relu6, sig, tanh;
  for (float v : values(x)) {
    const float s = v * 8.0f;
    leaky.push_back(s < 0 ? 0.1f * s : s);
    relu6.push_back(std::clamp(s, 0.0f, 6.0f));
    sig.push_back(static_cast<float>(1.0 / (1.0 + std::exp(-double(s)))));
    tanh.push_back(std::tanh(s));
  }
  expect_close(out.at("leaky"), {1, 8}, leaky, "leaky");
  expect_close(out.at("relu6"), {1, 8}, relu6, "relu6");
  expect_close(out.at("sig"), {1, 8}, sig, "sig");
  expect_close(out.at("tanh"), {1, 8}, tanh, "tanh");
}

TEST(CaffeInPlace, EveryVersionIsAValueAndTheLastKeepsTheBlobName) {
  // blob: Convolution → ReLU → Scale → Dropout, all in place; then a Dropout under a new name.
  const std::string prototxt = R"(
layer { name: "data" type: "Input" top: "data" input_param { shape { dim: 1 dim: 1 dim: 3 dim: 3 } } }
layer { name: "c1" type: "Convolution" bottom: "data" top: "blob" convolution_param { num_output: 1 kernel_size: 1 bias_term: false } }
layer { name: "r1" type: "ReLU" bottom: "blob" top: "blob" }
layer { name: "s1" type: "Scale" bottom: "blob" top: "blob" }
layer { name: "d1" type: "Dropout" bottom: "blob" top: "blob" dropout_param { dropout_ratio: 0.5 } }
layer { name: "train_only" type: "Accuracy" bottom: "blob" top: "acc" include { phase: TRAIN } }
layer { name: "d2" type: "Dropout" bottom: "data" top: "copy" }
)";
  caffe::NetParameter weights;
  add_blob(weights_for(weights, "c1", "Convolution"), {1, 1, 1, 1}, {-2.0f});
  add_blob(weights_for(weights, "s1", "Scale"), {1}, {3.0f});
  const CaffeFiles f = write_model("in_place", prototxt, weights);
  const ir::Model model = load_caffe(f.prototxt, f.caffemodel);
  EXPECT_EQ(output_names(model), (std::vector<std::string>{"blob", "copy"}));
  const ir::Graph& g = *model.graph;
  ASSERT_NE(g.find_value("blob/c1"), nullptr);
  ASSERT_NE(g.find_value("blob/r1"), nullptr);
  EXPECT_EQ(g.find_value("blob/c1")->producer()->name(), "c1");
  EXPECT_EQ(g.find_value("blob/r1")->producer()->name(), "r1");
  EXPECT_EQ(g.find_value("blob")->producer()->name(), "s1");
  // The renamed data blob is an Identity named after its Dropout layer.
  EXPECT_EQ(g.find_value("copy")->producer()->op_type(), "Identity");
  EXPECT_EQ(g.find_value("copy")->producer()->name(), "d2");
  EXPECT_EQ(g.nodes().size(), 4u);

  const Tensor x = random_tensor({1, 1, 3, 3}, 18);
  const auto out = run(model, {{"data", x}});
  std::vector<float> expected;
  for (float v : values(x)) expected.push_back(std::max(-2.0f * v, 0.0f) * 3.0f);
  expect_close(out.at("blob"), {1, 1, 3, 3}, expected, "blob");
  expect_close(out.at("copy"), {1, 1, 3, 3}, values(x), "copy");
}

// ------------------------------------------------------------------ errors

const char* const kConvNet = R"(
input: "data"
input_shape { dim: 1 dim: 3 dim: 4 dim: 4 }
layer { name: "conv1" type: "Convolution" bottom: "data" top: "conv1"
        convolution_param { num_output: 4 kernel_size: 3 } }
)";

TEST(CaffeErrors, MissingFileNamesIt) {
  const fs::path dir = temp_dir("missing");
  const CaffeFiles f{dir / "absent.prototxt", dir / "absent.caffemodel"};
  const std::string message = load_error(f);
  EXPECT_TRUE(starts_with(message, f.prototxt.string())) << message;
  EXPECT_NE(message.find("no such file"), std::string::npos) << message;
  const CaffeFiles g = write_model("missing_weights_file", kConvNet, {});
  fs::remove(g.caffemodel);
  EXPECT_TRUE(starts_with(load_error(g), g.caffemodel.string())) << load_error(g);
}

TEST(CaffeErrors, TextParseErrorGivesLineAndColumn) {
  const CaffeFiles f = write_model("parse_error",
                                   "input: \"data\"\n"
                                   "input_dim: 1\n"
                                   "layer { name: \"x\" type: ReLU }\n",
                                   {});
  const std::string message = load_error(f);
  EXPECT_TRUE(starts_with(message, f.prototxt.string() + ":3:25: ")) << message;
}

TEST(CaffeErrors, UnsupportedLayerTypeNamesLayerAndType) {
  const CaffeFiles f = write_model("unsupported", std::string(kConvNet) + R"(
layer { name: "norm1" type: "LRN" bottom: "conv1" top: "norm1" lrn_param { local_size: 5 } }
layer { name: "loss" type: "SoftmaxWithLoss" bottom: "norm1" top: "loss" }
)",
                                   {});
  // Reported before conv1's missing weights: types are checked first.
  const std::string message = load_error(f);
  EXPECT_TRUE(starts_with(message, f.prototxt.string() + ": layer 'norm1' (LRN): ")) << message;
  EXPECT_NE(message.find("not supported by this frontend"), std::string::npos) << message;
  EXPECT_NE(message.find("also unsupported: 'loss' (SoftmaxWithLoss)"), std::string::npos)
      << message;
}

TEST(CaffeErrors, WeightsMissingOrMisshapen) {
  {
    const CaffeFiles f = write_model("no_weights", kConvNet, {});
    const std::string message = load_error(f);
    EXPECT_TRUE(starts_with(message, f.caffemodel.string())) << message;
    EXPECT_NE(message.find("layer 'conv1' (Convolution)"), std::string::npos) << message;
  }
  {
    caffe::NetParameter weights;
    add_blob(weights_for(weights, "conv1", "Convolution"), random_tensor({4, 3, 3, 3}, 1));
    const CaffeFiles f = write_model("blob_count", kConvNet, weights);
    const std::string message = load_error(f);
    EXPECT_TRUE(starts_with(message, f.caffemodel.string())) << message;
    EXPECT_NE(message.find("layer 'conv1' (Convolution) has 1 blobs, expected 2"),
              std::string::npos)
        << message;
  }
  {
    caffe::NetParameter weights;
    auto* conv = weights_for(weights, "conv1", "Convolution");
    add_blob(conv, random_tensor({4, 3, 3}, 1));
    add_blob(conv, random_tensor({4}, 2));
    const CaffeFiles f = write_model("blob_size", kConvNet, weights);
    const std::string message = load_error(f);
    EXPECT_TRUE(starts_with(message, f.caffemodel.string())) << message;
    EXPECT_NE(message.find("blob 0 (weights) has 36 values"), std::string::npos) << message;
    EXPECT_NE(message.find("expected 108"), std::string::npos) << message;
  }
  {
    caffe::NetParameter weights;
    weights.add_layers()->set_name("conv1");  // the V1 format
    const CaffeFiles f = write_model("v1", kConvNet, weights);
    const std::string message = load_error(f);
    EXPECT_TRUE(starts_with(message, f.caffemodel.string())) << message;
    EXPECT_NE(message.find("upgrade_net_proto_binary"), std::string::npos) << message;
  }
}

TEST(CaffeErrors, UndefinedBottomAndNoInput) {
  {
    const CaffeFiles f = write_model("undefined_bottom", R"(
input: "data"
input_dim: 1 input_dim: 1 input_dim: 2 input_dim: 2
layer { name: "relu" type: "ReLU" bottom: "dta" top: "relu" }
)",
                                     {});
    const std::string message = load_error(f);
    EXPECT_TRUE(starts_with(message, f.prototxt.string())) << message;
    EXPECT_NE(message.find("layer 'relu' (ReLU)"), std::string::npos) << message;
    EXPECT_NE(message.find("bottom 'dta'"), std::string::npos) << message;
  }
  {
    const CaffeFiles f = write_model("no_input", "name: \"empty\"\n", {});
    const std::string message = load_error(f);
    EXPECT_TRUE(starts_with(message, f.prototxt.string())) << message;
    EXPECT_NE(message.find("declares no input"), std::string::npos) << message;
  }
}

// Found by fuzzing (tests/fuzz, caffe_import): a layer without a name made nodes whose outputs
// were absent values, dereferenced as null. load_caffe_from_bytes: the files' contents.
TEST(CaffeErrors, UnnamedLayerIsRefused) {
  const std::string prototxt = R"(input: "data"
input_dim: 1 input_dim: 1 input_dim: 2 input_dim: 2
layer { type: "ReLU" bottom: "data" top: "relu" }
)";
  try {
    load_caffe_from_bytes(prototxt, "", "net.prototxt", "net.caffemodel");
    FAIL() << "an unnamed layer was accepted";
  } catch (const Error& e) {
    EXPECT_TRUE(starts_with(e.what(), "net.prototxt: a layer of type 'ReLU' has no name")) << e.what();
  }
}

}  // namespace
}  // namespace openbpu::frontend
