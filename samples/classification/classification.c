/*
 * classification: the smallest complete hbDNN program. Loads a converted classifier (.bin /
 * .hbm), prints its input and output properties, converts an image to the model's input
 * (NV12, RGB, BGR, YUV444 or Y; resized bilinearly to the input's size), runs one inference
 * and prints the five best classes of output 0.
 *
 *   classification MODEL_FILE INPUT_FILE [--bgr] [--top K]
 *
 * INPUT_FILE, for an image input: a binary PPM (P6, 8-bit) or a uint8 .npy of shape (H, W, 3),
 * RGB (BGR with --bgr). For any other input (a featuremap): a .npy or raw file holding exactly
 * the input's dense bytes (validShape, its element type). Exit status 0 on success, 1 on any
 * error (with a message naming the file, the call or the rule).
 *
 * The calls follow hb_dnn.h's sequence: hbDNNInitializeFromFiles → hbDNNGetModelNameList →
 * hbDNNGetModelHandle → hbDNNGet{Input,Output}TensorProperties → hbSysAllocCachedMem → fill
 * the input, hbSysFlushMem(CLEAN) → hbDNNInfer → hbDNNWaitTaskDone → hbSysFlushMem(INVALIDATE)
 * → read the output → hbDNNReleaseTask, hbSysFreeMem, hbDNNRelease.
 */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dnn/hb_dnn.h"
#include "dnn/hb_sys.h"

static void fail(const char* format, ...) {
  va_list args;
  va_start(args, format);
  fputs("classification: error: ", stderr);
  vfprintf(stderr, format, args);
  fputc('\n', stderr);
  va_end(args);
  exit(1);
}

/* Every hbDNN / hbSys call goes through here: a failure prints the call and the library's
 * description of the error, and ends the program (the OS frees what is left). */
#define CHECK(call)                                                                    \
  do {                                                                                 \
    int32_t rc_ = (call);                                                              \
    if (rc_ != 0) fail("%s failed: %s (%d)", #call, hbDNNGetErrorDesc(rc_), (int)rc_); \
  } while (0)

static const char* type_name(int32_t type) {
  static const char* names[] = {
      "Y",   "NV12", "NV12_SEPARATE", "YUV444", "RGB", "BGR", "S4",  "U4",  "S8", "U8",
      "F16", "S16",  "U16",           "F32",    "S32", "U32", "F64", "S64", "U64"};
  return type >= 0 && type < HB_DNN_TENSOR_TYPE_MAX ? names[type] : "?";
}

static size_t element_size(int32_t type) {
  switch (type) {
    case HB_DNN_IMG_TYPE_Y:
    case HB_DNN_IMG_TYPE_NV12:
    case HB_DNN_IMG_TYPE_NV12_SEPARATE:
    case HB_DNN_IMG_TYPE_YUV444:
    case HB_DNN_IMG_TYPE_RGB:
    case HB_DNN_IMG_TYPE_BGR:
    case HB_DNN_TENSOR_TYPE_S8:
    case HB_DNN_TENSOR_TYPE_U8: return 1;
    case HB_DNN_TENSOR_TYPE_F16:
    case HB_DNN_TENSOR_TYPE_S16:
    case HB_DNN_TENSOR_TYPE_U16: return 2;
    case HB_DNN_TENSOR_TYPE_F32:
    case HB_DNN_TENSOR_TYPE_S32:
    case HB_DNN_TENSOR_TYPE_U32: return 4;
    case HB_DNN_TENSOR_TYPE_F64:
    case HB_DNN_TENSOR_TYPE_S64:
    case HB_DNN_TENSOR_TYPE_U64: return 8;
    default: return 0;
  }
}

static int is_image(int32_t type) {
  return type <= HB_DNN_IMG_TYPE_BGR;
}

static size_t element_count(const hbDNNTensorShape* shape) {
  size_t n = 1;
  for (int32_t i = 0; i < shape->numDimensions; ++i) n *= (size_t)shape->dimensionSize[i];
  return n;
}

static void print_shape(const char* label, const hbDNNTensorShape* shape) {
  printf("    %s (", label);
  for (int32_t i = 0; i < shape->numDimensions; ++i)
    printf(i ? ", %d" : "%d", shape->dimensionSize[i]);
  printf(")\n");
}

static void print_properties(const char* side, int32_t index, const char* name,
                             const hbDNNTensorProperties* p) {
  static const char* quanti[] = {"NONE", "SHIFT", "SCALE"};
  printf("%s[%d] %s: type %s, layout %s, alignedByteSize %d, quantiType %s\n", side, index, name,
         type_name(p->tensorType),
         p->tensorLayout == HB_DNN_LAYOUT_NHWC   ? "NHWC"
         : p->tensorLayout == HB_DNN_LAYOUT_NCHW ? "NCHW"
                                                 : "NONE",
         p->alignedByteSize,
         p->quantiType >= NONE && p->quantiType <= SCALE ? quanti[p->quantiType] : "?");
  print_shape("validShape  ", &p->validShape);
  print_shape("alignedShape", &p->alignedShape);
}

/* The whole of a file; *size its length. */
static unsigned char* read_file(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  if (!f) fail("cannot open '%s'", path);
  fseek(f, 0, SEEK_END);
  long length = ftell(f);
  fseek(f, 0, SEEK_SET);
  if (length < 0) fail("cannot read '%s'", path);
  unsigned char* data = malloc(length > 0 ? (size_t)length : 1);
  if (!data || fread(data, 1, (size_t)length, f) != (size_t)length) fail("cannot read '%s'", path);
  fclose(f);
  *size = (size_t)length;
  return data;
}

static int ends_with(const char* s, const char* suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* A .npy file (version 1-3, C order): its dtype text (e.g. "|u1", "<f4"), shape and data. */
typedef struct {
  char descr[16];
  int rank;
  long shape[8];
  const unsigned char* data;
  size_t bytes;
} Npy;

static Npy parse_npy(const char* path, const unsigned char* file, size_t size) {
  Npy a;
  memset(&a, 0, sizeof a);
  if (size < 10 || memcmp(file, "\x93NUMPY", 6) != 0) fail("'%s' is not a .npy file", path);
  size_t header_len =
      file[6] == 1 ? (size_t)(file[8] | file[9] << 8)
                   : (size_t)(file[8] | file[9] << 8 | file[10] << 16 | (size_t)file[11] << 24);
  size_t start = file[6] == 1 ? 10 : 12;
  if (start + header_len > size) fail("'%s': truncated .npy header", path);
  char header[1024];
  if (header_len >= sizeof header) fail("'%s': .npy header too long", path);
  memcpy(header, file + start, header_len);
  header[header_len] = 0;
  const char *d = strstr(header, "'descr':"), *o = strstr(header, "'fortran_order':"),
             *s = strstr(header, "'shape':");
  if (!d || !o || !s || sscanf(d, "'descr': '%15[^']'", a.descr) != 1)
    fail("'%s': unreadable .npy header", path);
  if (strncmp(o + 16, " True", 5) == 0)
    fail("'%s': Fortran-order .npy files are not supported", path);
  const char* c = strchr(s, '(');
  if (!c) fail("'%s': unreadable .npy shape", path);
  for (++c; *c && *c != ')';) {
    char* end;
    long v = strtol(c, &end, 10);
    if (end == c) {
      ++c;
      continue;
    }
    if (a.rank == 8) fail("'%s': more than 8 dimensions", path);
    a.shape[a.rank++] = v;
    c = end;
  }
  a.data = file + start + header_len;
  a.bytes = size - start - header_len;
  return a;
}

/* The next number of a PPM header from file[*at] on (whitespace and # comments skipped), or
 * -1 when there is none. */
static long ppm_number(const unsigned char* file, size_t size, size_t* at) {
  for (;;) {
    while (*at < size && isspace(file[*at])) ++*at;
    if (*at >= size || file[*at] != '#') break;
    while (*at < size && file[*at] != '\n') ++*at;
  }
  long v = -1;
  while (*at < size && isdigit(file[*at]) && v < 1000000)
    v = (v < 0 ? 0 : v * 10) + (file[(*at)++] - '0');
  return v;
}

/* An RGB image (h x w x 3 bytes) from a binary PPM or a uint8 (H, W, 3) .npy. */
static unsigned char* read_rgb_image(const char* path, int* h, int* w) {
  size_t size;
  unsigned char *file = read_file(path, &size), *rgb;
  if (ends_with(path, ".npy")) {
    Npy a = parse_npy(path, file, size);
    if (strcmp(a.descr + 1, "u1") != 0 || a.rank != 3 || a.shape[2] != 3 ||
        a.bytes != (size_t)(a.shape[0] * a.shape[1] * 3)) {
      fail("'%s': an image .npy is uint8 of shape (H, W, 3)", path);
    }
    *h = (int)a.shape[0], *w = (int)a.shape[1];
    rgb = malloc(a.bytes);
    if (!rgb) fail("out of memory");
    memcpy(rgb, a.data, a.bytes);
  } else {
    size_t at = 2;
    long width = -1, height = -1, maxval = -1;
    if (size >= 2 && memcmp(file, "P6", 2) == 0) {
      width = ppm_number(file, size, &at), height = ppm_number(file, size, &at),
      maxval = ppm_number(file, size, &at);
    }
    if (width <= 0 || height <= 0 || maxval != 255 || at >= size || !isspace(file[at])) {
      fail("'%s' is not a binary 8-bit PPM (P6, maxval 255) image or a .npy file", path);
    }
    *w = (int)width, *h = (int)height;
    size_t pixels = (size_t)width * (size_t)height * 3;
    if (at + 1 + pixels > size) fail("'%s': truncated PPM image", path);
    rgb = malloc(pixels);
    if (!rgb) fail("out of memory");
    memcpy(rgb, file + at + 1, pixels);
  }
  free(file);
  return rgb;
}

static unsigned char to_byte(double v) {
  long r = lround(v);
  return (unsigned char)(r < 0 ? 0 : r > 255 ? 255 : r);
}

/* Bilinear resize with half-pixel centres (as hrt_model_exec resizes image files). */
static unsigned char* resize(const unsigned char* src, int sh, int sw, int dh, int dw) {
  unsigned char* dst = malloc((size_t)dh * dw * 3);
  if (!dst) fail("out of memory");
  double sy = (double)sh / dh, sx = (double)sw / dw;
  for (int y = 0; y < dh; ++y) {
    double fy = fmin(fmax((y + 0.5) * sy - 0.5, 0.0), sh - 1.0);
    int y0 = (int)fy, y1 = y0 + 1 < sh ? y0 + 1 : sh - 1;
    double wy = fy - y0;
    for (int x = 0; x < dw; ++x) {
      double fx = fmin(fmax((x + 0.5) * sx - 0.5, 0.0), sw - 1.0);
      int x0 = (int)fx, x1 = x0 + 1 < sw ? x0 + 1 : sw - 1;
      double wx = fx - x0;
      for (int c = 0; c < 3; ++c) {
#define AT(yy, xx) ((double)src[((size_t)(yy)*sw + (xx)) * 3 + c])
        double v = (1 - wy) * ((1 - wx) * AT(y0, x0) + wx * AT(y0, x1)) +
                   wy * ((1 - wx) * AT(y1, x0) + wx * AT(y1, x1));
#undef AT
        dst[((size_t)y * dw + x) * 3 + c] = to_byte(v);
      }
    }
  }
  return dst;
}

/* An RGB image of the input's size to the input's image type, dense (validShape). BT.601 full
 * range YUV (as the toolchain's nv12 preprocessing); NV12 = the Y plane, then one interleaved
 * U, V pair per 2x2 block (the rounded mean of the block). Returns the bytes written. */
static size_t convert_image(const unsigned char* rgb, int h, int w, const hbDNNTensorProperties* p,
                            unsigned char* out) {
  size_t plane = (size_t)h * w;
  int type = p->tensorType;
  unsigned char* yuv = malloc(plane * 3);
  if (!yuv) fail("out of memory");
  for (size_t i = 0; i < plane; ++i) {
    double r = rgb[3 * i], g = rgb[3 * i + 1], b = rgb[3 * i + 2];
    unsigned char* v = yuv + 3 * i;
    if (type == HB_DNN_IMG_TYPE_RGB || type == HB_DNN_IMG_TYPE_BGR) {
      v[0] = rgb[3 * i + (type == HB_DNN_IMG_TYPE_BGR ? 2 : 0)], v[1] = rgb[3 * i + 1];
      v[2] = rgb[3 * i + (type == HB_DNN_IMG_TYPE_BGR ? 0 : 2)];
    } else {
      v[0] = to_byte(0.299 * r + 0.587 * g + 0.114 * b);
      v[1] = to_byte(-0.168736 * r - 0.331264 * g + 0.5 * b + 128);
      v[2] = to_byte(0.5 * r - 0.418688 * g - 0.081312 * b + 128);
    }
  }
  size_t n = 0;
  if (type == HB_DNN_IMG_TYPE_Y || type == HB_DNN_IMG_TYPE_NV12 ||
      type == HB_DNN_IMG_TYPE_NV12_SEPARATE) {
    for (size_t i = 0; i < plane; ++i) out[n++] = yuv[3 * i];
    if (type != HB_DNN_IMG_TYPE_Y) {
      if (h % 2 || w % 2)
        fail("an NV12 input needs an even height and width, the model's is %dx%d", h, w);
      for (int y = 0; y < h; y += 2) {
        for (int x = 0; x < w; x += 2) {
          for (int c = 1; c <= 2; ++c) {
            size_t at = (size_t)y * w + x;
            int sum = yuv[3 * at + c] + yuv[3 * (at + 1) + c] + yuv[3 * (at + w) + c] +
                      yuv[3 * (at + w + 1) + c];
            out[n++] = (unsigned char)((sum + 2) / 4);
          }
        }
      }
    }
  } else {
    int nhwc = p->tensorLayout == HB_DNN_LAYOUT_NHWC;
    for (size_t i = 0; i < plane; ++i) {
      for (size_t c = 0; c < 3; ++c) out[nhwc ? i * 3 + c : c * plane + i] = yuv[3 * i + c];
    }
    n = plane * 3;
  }
  free(yuv);
  return n;
}

/* Fills the input tensor from INPUT_FILE; the data is dense (alignedShape = validShape: the
 * runtime pads it to the model's alignment). */
static void fill_input(hbDNNTensor* input, const char* path, int bgr) {
  hbDNNTensorProperties* p = &input->properties;
  unsigned char* dest = input->sysMem[0].virAddr;
  size_t dense =
      p->tensorType == HB_DNN_IMG_TYPE_NV12 || p->tensorType == HB_DNN_IMG_TYPE_NV12_SEPARATE
          ? (size_t)p->alignedByteSize
          : element_count(&p->validShape) * element_size(p->tensorType);
  if (is_image(p->tensorType)) {
    const hbDNNTensorShape* s = &p->validShape;
    if (s->numDimensions != 4)
      fail("the image input's validShape has %d dimensions, 4 expected", s->numDimensions);
    int nhwc = p->tensorLayout == HB_DNN_LAYOUT_NHWC;
    int height = s->dimensionSize[nhwc ? 1 : 2], width = s->dimensionSize[nhwc ? 2 : 3];
    int h, w;
    unsigned char* image = read_rgb_image(path, &h, &w);
    if (bgr) {
      for (size_t i = 0; i < (size_t)h * w; ++i) {
        unsigned char t = image[3 * i];
        image[3 * i] = image[3 * i + 2], image[3 * i + 2] = t;
      }
    }
    unsigned char* sized = h == height && w == width ? image : resize(image, h, w, height, width);
    size_t n = convert_image(sized, height, width, p, dest);
    if (n != dense) fail("the converted image has %zu bytes, the input takes %zu", n, dense);
    if (sized != image) free(sized);
    free(image);
    printf("input: '%s', %dx%d RGB -> %dx%d %s\n", path, w, h, width, height,
           type_name(p->tensorType));
  } else {
    size_t size;
    unsigned char* file = read_file(path, &size);
    const unsigned char* data = file;
    if (ends_with(path, ".npy")) {
      Npy a = parse_npy(path, file, size);
      data = a.data, size = a.bytes;
    }
    if (size != dense) {
      fail("'%s' holds %zu bytes; input 0 (%s, %zu elements) takes %zu", path, size,
           type_name(p->tensorType), element_count(&p->validShape), dense);
    }
    memcpy(dest, data, dense);
    free(file);
    printf("input: '%s', %zu bytes\n", path, dense);
  }
  p->alignedShape = p->validShape;
}

/* Element `index` (row-major over validShape) of an output as float: read through `stride`,
 * dequantized by quantiType (SCALE: (q - zeroPoint) * scale, SHIFT: q / 2^shift, per tensor
 * or per channel along quantizeAxis). */
static float output_value(const hbDNNTensor* t, size_t index) {
  const hbDNNTensorProperties* p = &t->properties;
  const unsigned char* base = t->sysMem[0].virAddr;
  size_t offset = 0, rest = index;
  int32_t channel = 0;
  for (int32_t d = p->validShape.numDimensions - 1; d >= 0; --d) {
    size_t i = rest % (size_t)p->validShape.dimensionSize[d];
    rest /= (size_t)p->validShape.dimensionSize[d];
    offset += i * (size_t)p->stride[d];
    if (d == p->quantizeAxis) channel = (int32_t)i;
  }
  const void* at = base + offset;
  double q;
  switch (p->tensorType) {
    case HB_DNN_TENSOR_TYPE_F32: return *(const float*)at;
    case HB_DNN_TENSOR_TYPE_F64: return (float)*(const double*)at;
    case HB_DNN_TENSOR_TYPE_S8: q = *(const int8_t*)at; break;
    case HB_DNN_TENSOR_TYPE_U8: q = *(const uint8_t*)at; break;
    case HB_DNN_TENSOR_TYPE_S16: q = *(const int16_t*)at; break;
    case HB_DNN_TENSOR_TYPE_U16: q = *(const uint16_t*)at; break;
    case HB_DNN_TENSOR_TYPE_S32: q = *(const int32_t*)at; break;
    case HB_DNN_TENSOR_TYPE_U32: q = *(const uint32_t*)at; break;
    case HB_DNN_TENSOR_TYPE_S64: q = (double)*(const int64_t*)at; break;
    default:
      fail("output 0 has type %s, which this sample does not read", type_name(p->tensorType));
      return 0;
  }
  if (p->quantiType == SCALE && p->scale.scaleLen > 0) {
    int32_t i = p->scale.scaleLen > 1 ? channel : 0;
    double zero = p->scale.zeroPointLen > i ? p->scale.zeroPointData[i] : 0;
    return (float)((q - zero) * p->scale.scaleData[i]);
  }
  if (p->quantiType == SHIFT && p->shift.shiftLen > 0) {
    return (float)(q / (double)(1ULL << p->shift.shiftData[p->shift.shiftLen > 1 ? channel : 0]));
  }
  return (float)q;
}

int main(int argc, char** argv) {
  const char *model_file = NULL, *input_file = NULL;
  int bgr = 0, top = 5;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--bgr") == 0) {
      bgr = 1;
    } else if (strcmp(argv[i], "--top") == 0 && i + 1 < argc) {
      top = atoi(argv[++i]);
      if (top <= 0) fail("--top takes a positive number");
    } else if (argv[i][0] == '-' && argv[i][1]) {
      fail("unknown option '%s'", argv[i]);
    } else if (!model_file) {
      model_file = argv[i];
    } else if (!input_file) {
      input_file = argv[i];
    } else {
      fail("unexpected argument '%s'", argv[i]);
    }
  }
  if (!model_file || !input_file) {
    fprintf(stderr, "usage: classification MODEL_FILE INPUT_FILE [--bgr] [--top K]\n");
    return 1;
  }
  printf("hbDNN %s\n", hbDNNGetVersion());

  /* 1. Load the model file; take its first model. */
  hbPackedDNNHandle_t packed = NULL;
  CHECK(hbDNNInitializeFromFiles(&packed, &model_file, 1));
  const char** names = NULL;
  int32_t model_count = 0;
  CHECK(hbDNNGetModelNameList(&names, &model_count, packed));
  hbDNNHandle_t model = NULL;
  CHECK(hbDNNGetModelHandle(&model, packed, names[0]));
  printf("model: %s (%d in '%s')\n", names[0], (int)model_count, model_file);

  /* 2. Properties; BPU memory for the input and every output. */
  int32_t input_count = 0, output_count = 0;
  CHECK(hbDNNGetInputCount(&input_count, model));
  CHECK(hbDNNGetOutputCount(&output_count, model));
  if (input_count != 1)
    fail("model %s has %d inputs; this sample feeds a one-input classifier", names[0],
         (int)input_count);
  int32_t source = 0;
  CHECK(hbDNNGetInputSource(&source, model, 0));
  if (source == HB_DNN_INPUT_FROM_RESIZER)
    fail("model %s takes its input from the resizer (hbDNNRoiInfer); this sample runs hbDNNInfer",
         names[0]);
  hbDNNTensor input;
  memset(&input, 0, sizeof input);
  const char* name = NULL;
  CHECK(hbDNNGetInputTensorProperties(&input.properties, model, 0));
  CHECK(hbDNNGetInputName(&name, model, 0));
  print_properties("input", 0, name, &input.properties);
  CHECK(hbSysAllocCachedMem(&input.sysMem[0], (uint32_t)input.properties.alignedByteSize));

  hbDNNTensor* outputs = calloc((size_t)output_count, sizeof *outputs);
  if (!outputs) fail("out of memory");
  for (int32_t i = 0; i < output_count; ++i) {
    CHECK(hbDNNGetOutputTensorProperties(&outputs[i].properties, model, i));
    CHECK(hbDNNGetOutputName(&name, model, i));
    print_properties("output", i, name, &outputs[i].properties);
    CHECK(hbSysAllocCachedMem(&outputs[i].sysMem[0],
                              (uint32_t)outputs[i].properties.alignedByteSize));
  }

  /* 3. The input: converted from the image file, written back from the cache. */
  fill_input(&input, input_file, bgr);
  CHECK(hbSysFlushMem(&input.sysMem[0], HB_SYS_MEM_CACHE_CLEAN));

  /* 4. One inference, waited for; the outputs read through the cache. */
  hbDNNInferCtrlParam control;
  HB_DNN_INITIALIZE_INFER_CTRL_PARAM(&control);
  hbDNNTaskHandle_t task = NULL;
  CHECK(hbDNNInfer(&task, &outputs, &input, model, &control));
  CHECK(hbDNNWaitTaskDone(task, 0));
  for (int32_t i = 0; i < output_count; ++i)
    CHECK(hbSysFlushMem(&outputs[i].sysMem[0], HB_SYS_MEM_CACHE_INVALIDATE));

  /* 5. The top K of output 0 (all its elements: a classifier's (1, classes[, 1, 1]) scores). */
  size_t classes = element_count(&outputs[0].properties.validShape);
  if ((size_t)top > classes) top = (int)classes;
  float* scores = malloc(classes * sizeof *scores);
  if (!scores) fail("out of memory");
  for (size_t c = 0; c < classes; ++c) scores[c] = output_value(&outputs[0], c);
  printf("top-%d of %zu classes:\n", top, classes);
  for (int k = 0; k < top; ++k) {
    size_t best = 0;
    for (size_t c = 1; c < classes; ++c) {
      if (scores[c] > scores[best] || isnan(scores[best])) best = c;
    }
    printf("  %d: class %zu score %.9g\n", k + 1, best, scores[best]);
    scores[best] = -INFINITY;
  }
  free(scores);

  /* 6. Release: the task, the memory, the model. */
  CHECK(hbDNNReleaseTask(task));
  CHECK(hbSysFreeMem(&input.sysMem[0]));
  for (int32_t i = 0; i < output_count; ++i) CHECK(hbSysFreeMem(&outputs[i].sysMem[0]));
  free(outputs);
  CHECK(hbDNNRelease(packed));
  return 0;
}
