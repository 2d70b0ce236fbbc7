// Writes a small Caffe classifier (net.prototxt + net.caffemodel, deterministic weights) into a
// directory, for the hb_mapper Caffe command-line test:
// Input 1x3x32x32 → Convolution 8 3x3 → BatchNorm → Scale → ReLU (in place) → Pooling MAX 2/2 →
// Convolution 16 3x3 → ReLU → Pooling AVE global → InnerProduct 10 → Softmax.
//   caffe_fixture OUT_DIR
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "openbpu/caffe/caffe.pb.h"

namespace {

const char* kPrototxt = R"(name: "tiny_classifier"
layer { name: "data" type: "Input" top: "data" input_param { shape { dim: 1 dim: 3 dim: 32 dim: 32 } } }
layer { name: "conv1" type: "Convolution" bottom: "data" top: "conv1"
  convolution_param { num_output: 8 kernel_size: 3 pad: 1 bias_term: false } }
layer { name: "bn1" type: "BatchNorm" bottom: "conv1" top: "conv1" batch_norm_param { use_global_stats: true } }
layer { name: "scale1" type: "Scale" bottom: "conv1" top: "conv1" scale_param { bias_term: true } }
layer { name: "relu1" type: "ReLU" bottom: "conv1" top: "conv1" }
layer { name: "pool1" type: "Pooling" bottom: "conv1" top: "pool1" pooling_param { pool: MAX kernel_size: 2 stride: 2 } }
layer { name: "conv2" type: "Convolution" bottom: "pool1" top: "conv2" convolution_param { num_output: 16 kernel_size: 3 } }
layer { name: "relu2" type: "ReLU" bottom: "conv2" top: "conv2" }
layer { name: "pool2" type: "Pooling" bottom: "conv2" top: "pool2" pooling_param { pool: AVE global_pooling: true } }
layer { name: "fc" type: "InnerProduct" bottom: "pool2" top: "fc" inner_product_param { num_output: 10 } }
layer { name: "prob" type: "Softmax" bottom: "fc" top: "prob" }
)";

std::mt19937_64 rng(2026);

std::vector<float> random_values(size_t n, double scale, double offset = 0) {
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(offset + scale * (static_cast<double>(rng() >> 11) * 0x1.0p-53 - 0.5));
  return v;
}

void add_blob(openbpu::caffe::LayerParameter* layer, const std::vector<int64_t>& shape, const std::vector<float>& data) {
  openbpu::caffe::BlobProto* blob = layer->add_blobs();
  for (int64_t d : shape) blob->mutable_shape()->add_dim(d);
  for (float x : data) blob->add_data(x);
}

openbpu::caffe::LayerParameter* layer(openbpu::caffe::NetParameter& net, const std::string& name, const std::string& type) {
  openbpu::caffe::LayerParameter* l = net.add_layer();
  l->set_name(name);
  l->set_type(type);
  return l;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: caffe_fixture OUT_DIR\n");
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "net.prototxt") << kPrototxt;

  openbpu::caffe::NetParameter net;
  net.set_name("tiny_classifier");
  add_blob(layer(net, "conv1", "Convolution"), {8, 3, 3, 3}, random_values(8 * 27, 0.8));
  auto* bn = layer(net, "bn1", "BatchNorm");
  add_blob(bn, {8}, random_values(8, 0.4));             // mean · s
  add_blob(bn, {8}, random_values(8, 0.5, 0.75));       // variance · s
  add_blob(bn, {1}, {2.0f});                            // s
  auto* scale = layer(net, "scale1", "Scale");
  add_blob(scale, {8}, random_values(8, 0.6, 1.0));
  add_blob(scale, {8}, random_values(8, 0.2));
  auto* conv2 = layer(net, "conv2", "Convolution");
  add_blob(conv2, {16, 8, 3, 3}, random_values(16 * 72, 0.3));
  add_blob(conv2, {16}, random_values(16, 0.1));
  auto* fc = layer(net, "fc", "InnerProduct");
  add_blob(fc, {10, 16}, random_values(160, 1.2));
  add_blob(fc, {10}, random_values(10, 0.1));
  std::string bytes;
  if (!net.SerializeToString(&bytes)) return 1;
  std::ofstream(dir / "net.caffemodel", std::ios::binary) << bytes;
  std::printf("%s/net.prototxt and net.caffemodel written\n", dir.c_str());
  return 0;
}
