// openbpu::tensor_io: the data side of the tools that run models through the hbDNN API
// (hrt_model_exec, hb_model_verifier), so that the board and the host read inputs and
// interpret outputs by one definition: input files into the bytes a model input takes
// (src/input_files.cc), outputs back as valid data, dequantized, as text (src/output_values.cc),
// and the texts and sizes of tensor properties (src/tensor_properties.cc). Plain functions over
// hbDNNTensorProperties; errors are thrown as std::runtime_error with one line naming the file
// and the rule (a tool turns them into an error line and a non-zero exit).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "dnn/hb_dnn.h"

namespace openbpu::tensor_io {

const char* tensor_type_name(int32_t type);      // "HB_DNN_TENSOR_TYPE_F32", ...
const char* tensor_layout_name(int32_t layout);  // "HB_DNN_LAYOUT_NCHW", ...
const char* quanti_type_name(hbDNNQuantiType type);
bool is_image_type(int32_t type);
size_t element_size(int32_t type);  // bytes of one element; 1 for images; 0 for 4-bit / unknown
bool is_float_type(int32_t type);
std::string shape_text(const hbDNNTensorShape& shape);  // "(1,3,48,192,)"

int64_t element_count(const hbDNNTensorShape& shape);
// Bytes of the tensor's valid data, dense (NV12: alignedByteSize).
size_t dense_byte_size(const hbDNNTensorProperties& p);

// One input's bytes. `dense`: laid out by validShape (the caller then sets alignedShape =
// validShape); otherwise exactly alignedByteSize bytes in the model's aligned layout.
struct InputData {
  std::vector<uint8_t> bytes;
  bool dense = true;
  // A resizer input's source image (read_source_image): its height and width; 0 otherwise.
  int image_height = 0, image_width = 0;
};

// A model's inputs / outputs through the hbDNN API: their properties in index order, and their
// names appended to `names` when given. Throws std::runtime_error naming the failing call.
std::vector<hbDNNTensorProperties> input_properties(hbDNNHandle_t h, std::vector<std::string>* names);
std::vector<hbDNNTensorProperties> output_properties(hbDNNHandle_t h, std::vector<std::string>* names);

// By extension: .bin, .npy, .txt, .jpg/.jpeg/.png (image inputs only).
InputData read_input_file(const std::string& path, const hbDNNTensorProperties& p);
InputData read_bin_input(const std::string& path, const hbDNNTensorProperties& p);
InputData read_npy_input(const std::string& path, const hbDNNTensorProperties& p);
InputData read_txt_input(const std::string& path, const hbDNNTensorProperties& p);
InputData read_image_input(const std::string& path, const hbDNNTensorProperties& p);
// The rules of read_npy_input for an array in memory (the Python package's numpy arrays):
// `descr` is numpy's dtype without the byte-order character ("f4", "u1", "b1"), `data` holds
// `bytes` bytes in C order; NV12 inputs take their dense bytes in any shape. `what` names the
// source in errors ("input file 'x.npy'", "input 'data'").
InputData array_input(const std::string& descr, const std::vector<int64_t>& shape, const void* data, size_t bytes,
                      const hbDNNTensorProperties& p, const std::string& what);
// The numpy dtype descr of a tensor type, without the byte-order character ("f4", "i1", ...).
std::string numpy_descr(int32_t tensor_type);

// --roi_infer: the source image of a resizer input (an NV12 or Y input) at its own size, in the
// input's type: NV12 as H rows of Y then H/2 rows of interleaved UV, W bytes each; Y as H rows.
// From .jpg/.jpeg/.png (converted as convert_rgb_image; for NV12 an odd side is made even by
// repeating the last row / column) or a uint8 .npy: (H, W, 3) or (1, 3, H, W) RGB, or the
// input's own planes, (H*3/2, W) NV12 with H and W even, (H, W) Y. .bin / .txt carry no image
// size and are refused. Sets image_height / image_width.
InputData read_source_image(const std::string& path, const hbDNNTensorProperties& p);
// read_source_image's rules for an array in memory (array_input's arguments): uint8, (H, W, 3) or
// (1, 3, H, W) RGB, or the input's own planes.
InputData source_image_array(const std::string& descr, const std::vector<int64_t>& shape, const void* data,
                             size_t bytes, const hbDNNTensorProperties& p, const std::string& what);

// --roi and roi.txt: ROIs separated by ';' or line breaks, each four integers left, top, right,
// bottom separated by ',' or blanks (inclusive box); blank items are skipped. `what` names the
// source in errors ("flag '--roi'", "ROI file 'roi.txt'").
std::vector<hbDNNRoi> parse_rois(const std::string& text, const std::string& what);
// The ROIs of a ROI file (parse_rois on its text).
std::vector<hbDNNRoi> read_roi_file(const std::string& path);

// Dense random data for an input (perf without --input_file): floats uniform in [-1, 1),
// integers over [0, 255] (unsigned) or [-128, 127] (signed).
InputData random_input(const hbDNNTensorProperties& p, uint32_t seed);

// Image conversion (exposed for tests): `rgb` is H*W*3 interleaved RGB bytes; returns the
// bytes of an image input of type p.tensorType in its layout (BT.601 full range for YUV444 /
// NV12 / Y; NV12's U and V are the rounded mean of each 2x2 block).
std::vector<uint8_t> convert_rgb_image(const std::vector<uint8_t>& rgb, int height, int width,
                                       const hbDNNTensorProperties& p);
// Bilinear resize (half-pixel centres) of interleaved `channels`-channel bytes.
std::vector<uint8_t> resize_bilinear(const std::vector<uint8_t>& src, int src_h, int src_w, int channels, int dst_h,
                                     int dst_w);
// The model's image height and width (by tensorLayout).
std::pair<int, int> image_size(const hbDNNTensorProperties& p);

// The valid data of a tensor in memory laid out by p.stride (all-zero stride: dense), dense.
std::vector<uint8_t> gather_valid(const uint8_t* data, const hbDNNTensorProperties& p);
// Dense valid values as doubles (as stored, no dequantization).
std::vector<double> to_doubles(const std::vector<uint8_t>& dense, const hbDNNTensorProperties& p);
// Dense valid values dequantized (§1.9): SCALE (v - zeroPoint) * scale, SHIFT v / 2^shift,
// per axis when quantizeAxis >= 0 and more than one parameter; NONE: the values as they are.
std::vector<double> dequantize(const std::vector<uint8_t>& dense, const hbDNNTensorProperties& p);

// Text dump: values with `precision` decimals when `as_float`, else integers; a line break
// after every index of the axes [0, axis) (axis >= rank: one value per line; 0: one line).
// The layout is format::format_tensor_text's (openbpu/format/tensor_text.h), shared with the
// runtime's per-layer txt dumps.
std::string format_txt(const std::vector<double>& values, const hbDNNTensorShape& shape, int precision, int axis,
                       bool as_float);

// Writes a file through a temporary name in the same folder, fsync, rename.
void write_file_atomically(const std::string& path, const std::string& bytes);

// Indices of the k largest values, largest first (ties: smaller index first).
std::vector<size_t> top_k(const std::vector<double>& values, size_t k);

}  // namespace openbpu::tensor_io
