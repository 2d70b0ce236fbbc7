// hrt_model_exec's pieces: the gflags-style parser, the input readers, txt dumps, dequantization,
// the simulated throughput of perf's threads on the virtual BPU's queues.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "openbpu/format/model_file.h"
#include "openbpu/hrt/flags.h"
#include "openbpu/dnn/simulated_perf.h"
#include "openbpu/tensor_io/image_decode.h"
#include "openbpu/tensor_io/tensor_io.h"
#include "openbpu/simulator/isa.h"
#include "openbpu/simulator/march.h"
#include "openbpu/simulator/program.h"

namespace openbpu::hrt {
namespace isa = simulator::isa;
using namespace tensor_io;  // NOLINT(google-build-using-namespace): the functions under test
using dnn::simulated_bpu_latency;
using dnn::simulated_bpu_throughput;
using dnn::simulated_throughput_of;
using dnn::SimulatedLatency;
using dnn::SimulatedThroughput;
namespace {

ParseResult parse(std::vector<std::string> args) { return parse_command_line(args); }

TEST(Flags, BothValueFormsAndLastWins) {
  const ParseResult r = parse({"infer", "--model_file=a.bin,b.bin", "--frame_count", "3", "--frame_count=5", "stray",
                               "-core_id=1", "--dump_format", "txt"});
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.options.command, Command::kInfer);
  EXPECT_EQ(r.options.model_file, "a.bin,b.bin");
  EXPECT_EQ(r.options.frame_count, 5);
  EXPECT_TRUE(r.options.frame_count_set);
  EXPECT_EQ(r.options.core_id, 1);
  EXPECT_EQ(r.options.dump_format, "txt");
  EXPECT_EQ(split_list(r.options.model_file), (std::vector<std::string>{"a.bin", "b.bin"}));
}

TEST(Flags, Bools) {
  ParseResult r = parse({"infer", "--enable_dump", "--hybrid_dequantize_process=1", "--enable_cls_post_process", "false",
                         "--roi_infer=TRUE", "--noroi_infer"});
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_TRUE(r.options.enable_dump);
  EXPECT_TRUE(r.options.hybrid_dequantize_process);
  EXPECT_FALSE(r.options.enable_cls_post_process);
  EXPECT_FALSE(r.options.roi_infer);
  r = parse({"infer", "--enable_dump=0"});
  ASSERT_TRUE(r.ok);
  EXPECT_FALSE(r.options.enable_dump);
  r = parse({"infer", "--enable_dump=yes"});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("'--enable_dump'"), std::string::npos) << r.error;
}

TEST(Flags, ErrorsNameTheFlagAndTheRule) {
  ParseResult r = parse({"perf", "--unknown=1"});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("unknown flag '--unknown'"), std::string::npos);
  r = parse({"perf", "--thread_num=0"});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("[1, 8]"), std::string::npos);
  r = parse({"perf", "--core_id=3"});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("'--core_id'"), std::string::npos);
  r = parse({"perf", "--frame_count=1x"});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("not an integer"), std::string::npos);
  r = parse({"perf", "--dump_format=csv"});
  EXPECT_FALSE(r.ok);
  r = parse({"perf", "--model_file"});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("needs a value"), std::string::npos);
  r = parse({"run"});
  EXPECT_FALSE(r.ok);
}

TEST(Flags, ThreadNumClampsAboveEightAndVersionHelp) {
  ParseResult r = parse({"perf", "--thread_num=20"});
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.options.thread_num, 8);
  EXPECT_TRUE(r.options.thread_num_clamped);
  EXPECT_TRUE(parse({"-v"}).options.version);
  EXPECT_TRUE(parse({"--version"}).options.version);
  EXPECT_TRUE(parse({"-h"}).options.help);
  EXPECT_TRUE(parse({"--help"}).options.help);
}

hbDNNTensorProperties props(int32_t type, std::vector<int32_t> shape, int32_t layout = HB_DNN_LAYOUT_NCHW) {
  hbDNNTensorProperties p{};
  p.tensorType = type;
  p.tensorLayout = layout;
  p.validShape.numDimensions = static_cast<int32_t>(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) p.validShape.dimensionSize[i] = shape[i];
  p.alignedShape = p.validShape;
  p.alignedByteSize = static_cast<int32_t>(dense_byte_size(p));
  return p;
}

std::string temp_file(const std::string& name, const std::string& bytes) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

std::string npy(const std::string& descr, const std::string& shape, const std::string& data) {
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64) header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  return out + header + data;
}

TEST(Readers, Npy) {
  const hbDNNTensorProperties p = props(HB_DNN_TENSOR_TYPE_F32, {1, 2, 3});
  const float values[6] = {1, 2, 3, 4, 5, 6};
  const std::string data(reinterpret_cast<const char*>(values), sizeof values);
  const InputData d = read_npy_input(temp_file("ok.npy", npy("<f4", "(1, 2, 3)", data)), p);
  EXPECT_TRUE(d.dense);
  ASSERT_EQ(d.bytes.size(), sizeof values);
  EXPECT_EQ(std::memcmp(d.bytes.data(), values, sizeof values), 0);
  EXPECT_THROW(read_npy_input(temp_file("dtype.npy", npy("<f8", "(1, 2, 3)", data + data)), p), std::runtime_error);
  try {
    read_npy_input(temp_file("shape.npy", npy("<f4", "(1, 3, 2)", data)), p);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("does not match the input's valid shape (1,2,3,)"), std::string::npos) << e.what();
  }
  EXPECT_THROW(read_npy_input(temp_file("bad.npy", "not numpy"), p), std::runtime_error);
  // A bool mask input is U8 in the classic tensor types: numpy's bool has its bytes.
  const hbDNNTensorProperties u8 = props(HB_DNN_TENSOR_TYPE_U8, {1, 2, 3});
  const std::string mask("\x01\x00\x00\x01\x01\x00", 6);
  EXPECT_EQ(read_npy_input(temp_file("mask.npy", npy("|b1", "(1, 2, 3)", mask)), u8).bytes.size(), 6u);
  EXPECT_THROW(read_npy_input(temp_file("mask_f.npy", npy("|b1", "(1, 2, 3)", mask)), p), std::runtime_error);
}

// Found by fuzzing (tests/fuzz, tensor_files): a header ending right after "'shape':" read past
// its end (std::out_of_range escaped); now each malformed header is a clear error.
TEST(Readers, NpyMalformedHeaders) {
  const hbDNNTensorProperties p = props(HB_DNN_TENSOR_TYPE_F32, {1, 2, 3});
  auto raw_npy = [](const std::string& header) {
    return std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(header.size()) + '\0' + header;
  };
  const std::pair<std::string, std::string> cases[] = {
      {"{'descr': '<f4', 'fortran_order': False, 'shape':", "'shape' without a value"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2, 3", "'shape' is not (...)"},
      {"{'descr': <f4, 'fortran_order': False, 'shape': (1, 2, 3), }", "'descr' is not '...'"},
  };
  for (const auto& [header, rule] : cases) {
    try {
      read_npy_input(temp_file("malformed.npy", raw_npy(header)), p);
      ADD_FAILURE() << "accepted: " << header;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(rule), std::string::npos) << e.what();
    }
  }
}

// Found by fuzzing (tests/fuzz, image_decode): files that made stb_image 2.27 write past a
// table, allocate a chunk's declared gigabytes, decode a truncated picture to its end or return
// one without pixels are refused first, with the rule (image_decode.h).
TEST(ImageDecode, HostileFilesAreRefused) {
  auto le32 = [](uint32_t v) { return std::string{char(v), char(v >> 8), char(v >> 16), char(v >> 24)}; };
  auto be32 = [](uint32_t v) { return std::string{char(v >> 24), char(v >> 16), char(v >> 8), char(v)}; };
  const std::string png_signature("\x89PNG\r\n\x1a\n", 8);
  const std::string ihdr_9000 = be32(13) + "IHDR" + be32(9000) + be32(8000) + std::string("\x08\x02\0\0\0", 5) + be32(0);
  // A BMP of width x height, 24 bits, `data` bytes of pixels after the 54-byte header.
  auto bmp = [&](int32_t width, int32_t height, size_t data) {
    return "BM" + le32(54 + data) + le32(0) + le32(54) + le32(40) + le32(width) + le32(height) +
           std::string("\x01\0\x18\0", 4) + le32(0) + le32(0) + le32(0) + le32(0) + le32(0) + le32(0) +
           std::string(data, '\x7f');
  };
  const std::pair<std::string, std::string> cases[] = {
      {std::string("\xff\xd8\xff\xc4\x00\x13\x00", 7) + std::string(16, '\x11'), "defines 272 codes; at most 256"},
      // SOF0 of 8x8, one component; a DHT of DC table 0 (one code); a scan using AC table 1.
      {std::string("\xff\xd8\xff\xc0\x00\x0b\x08\x00\x08\x00\x08\x01\x01\x11\x00", 15) +
           std::string("\xff\xc4\x00\x14\x00\x01", 6) + std::string(15, '\0') + std::string(1, '\0') +
           std::string("\xff\xda\x00\x08\x01\x01\x01\x00\x3f\x00", 10) + std::string(8, '\0'),
       "a JPEG scan uses AC Huffman table 1, which no DHT before it defines"},
      {png_signature + ihdr_9000, "9000 x 8000 pixels; at most 67108864 (8192 x 8192)"},
      {png_signature + be32(13) + "IHDR" + be32(4) + be32(4) + std::string("\x08\x02\0\0\0", 5) + be32(0) +
           be32(0x7fffffff) + "IDAT",
       "PNG chunk 'IDAT' at byte 33 declares 2147483647 bytes"},
      {bmp(100, 100, 16), "the BMP's pixel rows end at byte 30054, the file has 70 (truncated)"},
      {bmp(100, -100, 16), "the BMP's pixel rows end at byte 30054"},
      {bmp(4, 0, 0), "4 x 0 pixels; an image has at least one"},
  };
  for (const auto& [file, rule] : cases) {
    int h = 0, w = 0;
    try {
      decode_image_rgb({reinterpret_cast<const uint8_t*>(file.data()), file.size()}, "x.img", &h, &w);
      ADD_FAILURE() << "accepted; expected: " << rule;
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(std::string(e.what()).rfind("x.img: cannot decode the image (", 0), 0u) << e.what();
      EXPECT_NE(std::string(e.what()).find(rule), std::string::npos) << e.what();
    }
  }
  // A small picture that breaks no rule still decodes.
  const std::string ok = bmp(2, -2, 16);
  int h = 0, w = 0;
  EXPECT_EQ(decode_image_rgb({reinterpret_cast<const uint8_t*>(ok.data()), ok.size()}, "ok.bmp", &h, &w).size(), 12u);
  EXPECT_EQ(h, 2);
  EXPECT_EQ(w, 2);
}

TEST(Readers, BinDenseOrAligned) {
  hbDNNTensorProperties p = props(HB_DNN_TENSOR_TYPE_S8, {1, 2, 3});
  p.alignedShape.dimensionSize[2] = 4;
  p.alignedByteSize = 8;
  EXPECT_TRUE(read_bin_input(temp_file("dense.bin", std::string(6, '\1')), p).dense);
  EXPECT_FALSE(read_bin_input(temp_file("aligned.bin", std::string(8, '\1')), p).dense);
  try {
    read_bin_input(temp_file("short.bin", std::string(5, '\1')), p);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("holds 5 bytes; the input takes 6"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("or 8 (alignedByteSize"), std::string::npos) << e.what();
  }
}

TEST(Readers, TxtConvertsToTheTensorType) {
  const hbDNNTensorProperties p = props(HB_DNN_TENSOR_TYPE_S8, {1, 4});
  const InputData d = read_txt_input(temp_file("v.txt", "1 -2.6\n300\t-300\n"), p);
  ASSERT_EQ(d.bytes.size(), 4u);
  EXPECT_EQ(static_cast<int8_t>(d.bytes[0]), 1);
  EXPECT_EQ(static_cast<int8_t>(d.bytes[1]), -3);
  EXPECT_EQ(static_cast<int8_t>(d.bytes[2]), 127);
  EXPECT_EQ(static_cast<int8_t>(d.bytes[3]), -128);
  EXPECT_THROW(read_txt_input(temp_file("few.txt", "1 2 3"), p), std::runtime_error);
  EXPECT_THROW(read_txt_input(temp_file("nan.txt", "1 2 x 4"), p), std::runtime_error);
  const hbDNNTensorProperties f = props(HB_DNN_TENSOR_TYPE_F32, {2});
  const InputData fd = read_txt_input(temp_file("f.txt", "0.5 -1.25"), f);
  float v[2];
  std::memcpy(v, fd.bytes.data(), 8);
  EXPECT_EQ(v[0], 0.5f);
  EXPECT_EQ(v[1], -1.25f);
}

TEST(Readers, ImageConversion) {
  // One 2x2 RGB image: red, green, blue, white.
  const std::vector<uint8_t> rgb = {255, 0, 0, 0, 255, 0, 0, 0, 255, 255, 255, 255};
  const std::vector<uint8_t> planar = convert_rgb_image(rgb, 2, 2, props(HB_DNN_IMG_TYPE_RGB, {1, 3, 2, 2}));
  EXPECT_EQ(planar, (std::vector<uint8_t>{255, 0, 0, 255, 0, 255, 0, 255, 0, 0, 255, 255}));
  const std::vector<uint8_t> bgr = convert_rgb_image(rgb, 2, 2, props(HB_DNN_IMG_TYPE_BGR, {1, 2, 2, 3}, HB_DNN_LAYOUT_NHWC));
  EXPECT_EQ(bgr, (std::vector<uint8_t>{0, 0, 255, 0, 255, 0, 255, 0, 0, 255, 255, 255}));
  hbDNNTensorProperties nv12 = props(HB_DNN_IMG_TYPE_NV12, {1, 3, 2, 2});
  nv12.alignedByteSize = 6;
  const std::vector<uint8_t> yuv = convert_rgb_image(rgb, 2, 2, nv12);
  // BT.601 full range Y of red, green, blue, white; U, V the rounded 2x2 means.
  EXPECT_EQ(yuv, (std::vector<uint8_t>{76, 150, 29, 255, 128, 128}));
  EXPECT_EQ(resize_bilinear({0, 100}, 1, 2, 1, 1, 4), (std::vector<uint8_t>{0, 25, 75, 100}));
}

TEST(Readers, SourceImageForAResizerInput) {
  hbDNNTensorProperties nv12 = props(HB_DNN_IMG_TYPE_NV12, {1, 3, 16, 16});
  nv12.alignedByteSize = 384;
  // (H, W, 3) RGB at its own size, odd: the last row and column are repeated to 4x2 (W x H).
  const std::string rgb = {char(255), 0, 0, 0, char(255), 0, 0, 0, char(255)};  // 3x1: red, green, blue
  InputData d = read_source_image(temp_file("odd.npy", npy("|u1", "(1, 3, 3)", rgb)), nv12);
  EXPECT_EQ(d.image_height, 2);
  EXPECT_EQ(d.image_width, 4);
  const std::vector<uint8_t> padded = {255, 0, 0, 0, 255, 0, 0, 0, 255, 0, 0, 255,
                                       255, 0, 0, 0, 255, 0, 0, 0, 255, 0, 0, 255};
  EXPECT_EQ(d.bytes, convert_rgb_image(padded, 2, 4, nv12));
  // (1, 3, H, W) planar RGB gives what the interleaved form gives.
  // A 2x2 image of red and green columns: R plane, G plane, B plane.
  const std::string planes = {char(255), 0, char(255), 0, 0, char(255), 0, char(255), 0, 0, 0, 0};
  d = read_source_image(temp_file("nchw.npy", npy("|u1", "(1, 3, 2, 2)", planes)), nv12);
  EXPECT_EQ(d.bytes, convert_rgb_image({255, 0, 0, 0, 255, 0, 255, 0, 0, 0, 255, 0}, 2, 2, nv12));
  // (H*3/2, W) NV12 planes as they are.
  const std::string raw = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};  // 4x2 Y, then one UV row of 4
  d = read_source_image(temp_file("nv12.npy", npy("|u1", "(3, 4)", raw)), nv12);
  EXPECT_EQ(d.image_height, 2);
  EXPECT_EQ(d.image_width, 4);
  EXPECT_EQ(d.bytes, std::vector<uint8_t>(raw.begin(), raw.end()));
  // (H, W) is a Y image for a Y input; for NV12 (5 rows) it is no image at all.
  d = read_source_image(temp_file("y.npy", npy("|u1", "(3, 4)", raw)), props(HB_DNN_IMG_TYPE_Y, {1, 1, 16, 16}));
  EXPECT_EQ(d.image_height, 3);
  EXPECT_EQ(d.bytes.size(), 12u);
  const auto error_of = [](auto&& call) {
    try {
      call();
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error_of([&] { read_source_image(temp_file("five.npy", npy("|u1", "(5, 2)", std::string(10, '\1'))), nv12); })
                .find("(H*3/2, W) NV12 with H and W even"),
            std::string::npos);
  EXPECT_NE(error_of([&] { read_source_image(temp_file("f.npy", npy("<f4", "(1, 1, 3)", std::string(12, '\0'))), nv12); })
                .find("holds uint8 ('u1'), not 'f4'"),
            std::string::npos);
  EXPECT_NE(error_of([&] { read_source_image(temp_file("raw.bin", std::string(384, '\0')), nv12); }).find(".bin and .txt carry no size"),
            std::string::npos);
  EXPECT_NE(error_of([&] { read_source_image(temp_file("rgb.npy", npy("|u1", "(2, 2, 3)", std::string(12, '\0'))),
                                             props(HB_DNN_IMG_TYPE_RGB, {1, 3, 2, 2})); })
                .find("a resizer input is NV12 or Y"),
            std::string::npos);
  EXPECT_NE(error_of([&] { read_source_image(temp_file("short.npy", npy("|u1", "(2, 2, 3)", std::string(11, '\0'))), nv12); })
                .find("holds 11 data bytes"),
            std::string::npos);
}

TEST(Readers, Rois) {
  const std::vector<hbDNNRoi> flag = parse_rois("0,0,15,15; 2,4,33,63;", "flag '--roi'");
  ASSERT_EQ(flag.size(), 2u);
  EXPECT_EQ(flag[1].left, 2);
  EXPECT_EQ(flag[1].top, 4);
  EXPECT_EQ(flag[1].right, 33);
  EXPECT_EQ(flag[1].bottom, 63);
  const std::vector<hbDNNRoi> file = parse_rois("0 0 191 47\r\n\n  10\t20 41 51\n", "ROI file 'roi.txt'");
  ASSERT_EQ(file.size(), 2u);
  EXPECT_EQ(file[0].right, 191);
  EXPECT_EQ(file[1].bottom, 51);
  EXPECT_TRUE(parse_rois("", "flag '--roi'").empty());
  for (const char* bad : {"0,0,15", "0,0,15,15,1", "0,0,a,15", "0,0,15,99999999999"}) {
    try {
      parse_rois(std::string("2,2,3,3;") + bad, "flag '--roi'");
      ADD_FAILURE() << bad;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("flag '--roi': ROI 1 '"), std::string::npos) << e.what();
    }
  }
}

TEST(Dump, TxtLinesFollowTheAxis) {
  hbDNNTensorShape s{{1, 2, 3}, 3};
  const std::vector<double> v = {1, 2, 3, 4, 5, 6};
  EXPECT_EQ(format_txt(v, s, 2, 3, true), "1.00\n2.00\n3.00\n4.00\n5.00\n6.00\n");
  EXPECT_EQ(format_txt(v, s, 2, 2, true), "1.00 2.00 3.00\n4.00 5.00 6.00\n");
  EXPECT_EQ(format_txt(v, s, 0, 0, false), "1 2 3 4 5 6\n");
  EXPECT_EQ(format_txt({0.123456789012}, hbDNNTensorShape{{1}, 1}, 9, 4, true), "0.123456789\n");
}

TEST(Dequantize, ScalePerAxisAndShift) {
  hbDNNTensorProperties p = props(HB_DNN_TENSOR_TYPE_S32, {1, 2, 2}, HB_DNN_LAYOUT_NHWC);
  float scales[2] = {0.5f, 0.25f};
  int8_t zero_points[2] = {0, 1};
  p.quantiType = SCALE;
  p.quantizeAxis = 2;
  p.scale = {2, scales, 2, zero_points};
  const int32_t raw[4] = {2, 5, -4, 9};
  std::vector<uint8_t> bytes(16);
  std::memcpy(bytes.data(), raw, 16);
  EXPECT_EQ(dequantize(bytes, p), (std::vector<double>{1.0, 1.0, -2.0, 2.0}));
  uint8_t shifts[1] = {2};
  p.quantiType = SHIFT;
  p.scale = {};
  p.shift = {1, shifts};
  EXPECT_EQ(dequantize(bytes, p), (std::vector<double>{0.5, 1.25, -1.0, 2.25}));
  p.quantiType = NONE;
  EXPECT_EQ(dequantize(bytes, p), (std::vector<double>{2, 5, -4, 9}));
}

TEST(Outputs, GatherValidByStrideAndTopK) {
  hbDNNTensorProperties p = props(HB_DNN_TENSOR_TYPE_U8, {2, 2});
  p.stride[0] = 4;
  p.stride[1] = 1;
  const uint8_t padded[8] = {1, 2, 0, 0, 3, 4, 0, 0};
  EXPECT_EQ(gather_valid(padded, p), (std::vector<uint8_t>{1, 2, 3, 4}));
  EXPECT_EQ(top_k({0.1, 0.7, 0.7, 0.2}, 3), (std::vector<size_t>{1, 2, 3}));
}

// perf's threads as closed-loop clients on the queue model. bayes-e and bernoulli2 run at
// 1000 MHz, so 1000 cycles = 1 us.
TEST(SimulatedThroughput, ClientsShareOneCore) {
  const std::string bayes_e = "bayes-e";  // 1 core
  // One client: 200 frames of 1 us back to back.
  SimulatedThroughput t = simulated_throughput_of({{1000}}, bayes_e, 1, 1, 0);
  ASSERT_TRUE(t.ok) << t.error;
  EXPECT_EQ(t.frames, 200);
  EXPECT_EQ(t.cores, 1);
  EXPECT_DOUBLE_EQ(t.fps, 1e6);
  EXPECT_DOUBLE_EQ(t.average_wait_us, 0);
  // Two clients: the core is as busy (same FPS) and every frame but the first waits 1 us for
  // the other client's.
  t = simulated_throughput_of({{1000}}, bayes_e, 1, 2, 0);
  ASSERT_TRUE(t.ok) << t.error;
  EXPECT_EQ(t.frames, 400);
  EXPECT_DOUBLE_EQ(t.fps, 1e6);
  EXPECT_DOUBLE_EQ(t.average_wait_us, 399.0 / 400.0);
  EXPECT_DOUBLE_EQ(t.utilisation, 1.0);
  // Two segments of 0.5 us (a CPU segment between them takes no time): each job but the first
  // waits for the other client's job ahead of it.
  t = simulated_throughput_of({{500}, {500}}, bayes_e, 1, 2, 0);
  ASSERT_TRUE(t.ok) << t.error;
  EXPECT_DOUBLE_EQ(t.fps, 1e6);
  EXPECT_DOUBLE_EQ(t.average_wait_us, 799.0 * 500 / 400 / 1000);
}

TEST(SimulatedThroughput, CoresCoreIdAndCoreNum) {
  const std::string bernoulli2 = "bernoulli2";  // 2 cores
  // Any core: the two clients run side by side.
  SimulatedThroughput t = simulated_throughput_of({{500, 500}}, bernoulli2, 1, 2, 0);
  ASSERT_TRUE(t.ok) << t.error;
  EXPECT_EQ(t.cores, 2);
  EXPECT_DOUBLE_EQ(t.fps, 2e6);
  EXPECT_DOUBLE_EQ(t.average_wait_us, 0);
  // --core_id 1 (core 0): both on core 0, half the FPS, core 1 idle.
  t = simulated_throughput_of({{500, 500}}, bernoulli2, 1, 2, 1);
  ASSERT_TRUE(t.ok) << t.error;
  EXPECT_DOUBLE_EQ(t.fps, 1e6);
  EXPECT_DOUBLE_EQ(t.utilisation, 0.5);
  // core_num 2: a frame takes both cores, so one frame at a time; --core_id does not apply.
  t = simulated_throughput_of({{500, 500}}, bernoulli2, 2, 2, 2);
  ASSERT_TRUE(t.ok) << t.error;
  EXPECT_EQ(t.cores, 1);
  EXPECT_EQ(t.core_num, 2);
  EXPECT_DOUBLE_EQ(t.fps, 1e6);
}

TEST(SimulatedThroughput, Errors) {
  const std::string bayes_e = "bayes-e";
  EXPECT_EQ(simulated_throughput_of({{1000}}, bayes_e, 1, 1, 2).error,
            "core_id 2 names core 1; bayes-e has 1 core(s)");
  EXPECT_EQ(simulated_throughput_of({{1000}}, bayes_e, 1, 0, 0).error,
            "0 thread(s) of 200 frame(s): both must be at least 1");
  EXPECT_EQ(simulated_throughput_of({}, bayes_e, 1, 1, 0).error, "the model has no BPU segment");
  EXPECT_EQ(simulated_bpu_throughput("/nonexistent/model.bin", "m", 1, 0).ok, false);
}

// A model file of one BPU segment: `calls` function calls of two LUTs each on an int8
// [1, 16, 16, 16] tensor (the table is the weights blob).
std::string write_lut_model(const std::string& path, uint32_t calls) {
  constexpr uint32_t kTable = 256, kBytes = 4096;
  simulator::Program p;
  p.constant_bytes = kTable;
  p.memory_bytes = kTable + 2 * kBytes;
  const int64_t dims[] = {1, 16, 16, 16};
  const isa::TensorDesc a = simulator::dense_desc(kTable, isa::ElementType::kInt8, dims);
  const isa::TensorDesc b = simulator::dense_desc(kTable + kBytes, isa::ElementType::kInt8, dims);
  p.inputs.push_back(a);
  bool in_a = true;
  for (uint32_t c = 0; c < calls; ++c) {
    p.instructions.push_back({isa::Opcode::kFunctionBegin, isa::FunctionBegin{c}, 0});
    for (int k = 0; k < 2; ++k) {
      p.instructions.push_back(
          {isa::Opcode::kLut, isa::LutInstruction{in_a ? a : b, in_a ? b : a, 0}, 0});
      in_a = !in_a;
    }
  }
  p.outputs.push_back(in_a ? a : b);

  format::TensorInfo t;
  t.valid_shape = {1, 16, 16, 16};
  t.aligned_shape = t.valid_shape;
  t.layout = format::TensorLayout::NCHW;
  t.tensor_type = format::TensorType::TENSOR_TYPE_S8;
  t.quanti_type = format::QuantiType::NONE;
  t.aligned_byte_size = kBytes;
  t.stride = {kBytes, 256, 16, 1};
  format::ModelInfo m;
  m.name = "lut";
  m.march = "bayes-e";
  t.name = "x";
  m.inputs.push_back(t);
  t.name = "y";
  m.outputs.push_back(t);
  format::BpuSegmentInfo bpu;
  bpu.isa_version = isa::kIsaVersion;
  bpu.program = simulator::encode_program(p);
  bpu.weights.resize(kTable);
  for (uint32_t i = 0; i < kTable; ++i) bpu.weights[i] = static_cast<uint8_t>(i * 37 + 11);
  bpu.inputs = {format::TensorRefInfo::model_input(0)};
  bpu.outputs = {format::TensorRefInfo::model_output(0)};
  m.segments.push_back({"BPU_lut_subgraph_0", bpu});
  format::PackageInfo package;
  package.toolchain_name = "openbpu";
  package.toolchain_version = "0.1.0";
  package.models.push_back(m);
  std::vector<uint8_t> file;
  format::Status s = format::serialize_package(package, &file);
  if (s.ok()) s = format::save_model_file(path, file);
  EXPECT_TRUE(s.ok()) << s.message;
  return path;
}

// From a model file: the segment's calls as the queue model's jobs, and on one core the FPS is
// 1 / the latency line's figure.
TEST(SimulatedThroughput, FromAModelFile) {
  const std::string file = write_lut_model(::testing::TempDir() + "hrt_lut_model.bin", 3);
  const SimulatedLatency latency = simulated_bpu_latency(file, "lut");
  ASSERT_TRUE(latency.ok) << latency.error;
  const SimulatedThroughput t = simulated_bpu_throughput(file, "lut", 3, 0);
  ASSERT_TRUE(t.ok) << t.error;
  EXPECT_EQ(t.march, "bayes-e");
  EXPECT_EQ(t.threads, 3);
  EXPECT_EQ(t.cores, 1);
  EXPECT_EQ(t.frames, 600);
  EXPECT_NEAR(t.fps, 1e6 / latency.latency_us, 1e-6 * t.fps);
  // Client 0's first frame waits for nothing, client 1's for one frame, every other frame for
  // the two other clients' frames.
  EXPECT_NEAR(t.average_wait_us, latency.latency_us * (0 + 1 + 2.0 * 598) / 600, 1e-6 * latency.latency_us);
  EXPECT_FALSE(simulated_bpu_throughput(file, "other", 1, 0).ok);
  std::remove(file.c_str());
}

}  // namespace
}  // namespace openbpu::hrt
