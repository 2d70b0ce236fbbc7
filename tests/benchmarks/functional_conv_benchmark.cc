// The virtual BPU's convolution unit (simulator/src/functional/conv.cc) on the host, per host
// instruction-set path, on layer shapes of PP-OCRv4 det/rec and ResNet, with the fraction of
// the path's multiply-add peak it reaches. The peak is measured here: a loop of independent
// tdpbssd (amx: 16384 int8 MACs each), vpdpbusd (avx512: 64) or vpmaddwd (avx2: 16)
// instructions, one core (an int16 layer's MACs are counted once against these int8 peaks).
//
//   functional_conv_benchmark [google benchmark flags]
// Counters: GMAC/s (nominal MACs: output pixels × M × KH·KW·C/group) and peak% of the path.
// Operands are random (NHWC with channels padded to 32 bytes, the compiler's layout); the numbers
// measure the unit only.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "openbpu/simulator/host_isa.h"
#include "openbpu/simulator/isa.h"
#include "openbpu/simulator/program.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define PEAK_X86 1
#else
#define PEAK_X86 0
#endif

namespace sim = openbpu::simulator;
namespace isa = openbpu::simulator::isa;

namespace {

// ------------------------------------------------------------------ peak

#if PEAK_X86
// kChains independent accumulators so that latency does not bound the loop.
constexpr int kChains = 24;
__attribute__((target("avx512f,avx512bw,avx512vnni"))) int64_t vnni_loop(int64_t iterations) {
  __m512i acc[kChains];  // distinct starts: identical chains could be computed once
  for (int k = 0; k < kChains; ++k) acc[k] = _mm512_set1_epi32(k);
  const __m512i x = _mm512_set1_epi8(3), w = _mm512_set1_epi8(-2);
  for (int64_t i = 0; i < iterations; ++i) {
    for (auto& a : acc) a = _mm512_dpbusd_epi32(a, x, w);
  }
  __m512i sum = acc[0];
  for (int k = 1; k < kChains; ++k) sum = _mm512_add_epi32(sum, acc[k]);
  int32_t lanes[16];
  _mm512_storeu_si512(lanes, sum);
  return lanes[0];
}

__attribute__((target("avx2"))) int64_t madd_loop(int64_t iterations) {
  __m256i acc[kChains];
  for (int k = 0; k < kChains; ++k) acc[k] = _mm256_set1_epi32(k);
  const __m256i x = _mm256_set1_epi16(3), w = _mm256_set1_epi16(-2);
  for (int64_t i = 0; i < iterations; ++i) {
    for (auto& a : acc) a = _mm256_add_epi32(a, _mm256_madd_epi16(x, w));
  }
  __m256i sum = acc[0];
  for (int k = 1; k < kChains; ++k) sum = _mm256_add_epi32(sum, acc[k]);
  return _mm256_extract_epi32(sum, 0);
}
#endif

// Four independent accumulator tiles (0-3) from two pairs of operand tiles (4-5 by 6-7), 16 rows
// of 64 bytes each; supported_host_isas() has asked Linux for the tile permission.
struct alignas(64) TileConfig {
  uint8_t palette = 1, start_row = 0, reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};
__attribute__((target("amx-tile,amx-int8"))) int64_t amx_loop(int64_t iterations) {
  TileConfig config;
  for (int t = 0; t < 8; ++t) {
    config.colsb[t] = 64;
    config.rows[t] = 16;
  }
  asm volatile("" ::: "memory");
  _tile_loadconfig(&config);
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  _tile_zero(4);
  _tile_zero(5);
  _tile_zero(6);
  _tile_zero(7);
  for (int64_t i = 0; i < iterations / 4; ++i) {
    _tile_dpbssd(0, 4, 6);
    _tile_dpbssd(1, 4, 7);
    _tile_dpbssd(2, 5, 6);
    _tile_dpbssd(3, 5, 7);
  }
  int32_t out[16 * 16];
  _tile_stored(0, out, 64);
  asm volatile("" ::: "memory");
  _tile_release();
  return out[0];
}

// MAC/s of the path's widest multiply-add instruction (0: none measured, the scalar path).
double measured_peak(sim::HostIsa path) {
#if PEAK_X86
  if (path == sim::HostIsa::kScalar) return 0;
  const bool amx = path == sim::HostIsa::kAmx, vnni = path == sim::HostIsa::kAvx512;
  const int64_t macs_per_instruction = amx ? 16 * 16 * 64 : vnni ? 64 : 16;
  const int64_t iterations = amx ? 200'000 : 10'000'000;
  double best = 0;
  for (int round = 0; round < 3; ++round) {
    const auto t0 = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(amx    ? amx_loop(iterations * kChains)
                             : vnni ? vnni_loop(iterations)
                                    : madd_loop(iterations));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::max(best, double(iterations) * kChains * double(macs_per_instruction) / seconds);
  }
  return best;
#else
  (void)path;
  return 0;
#endif
}

// ------------------------------------------------------------------ layers

struct Layer {
  const char* name;
  isa::ElementType x, y;
  int64_t C, M, H, W, K, stride, group;
  bool transpose;
};

// PP-OCRv4 det at 704x960 and rec at 48x320 (the shapes their conversions compile; x/y int16
// where the compiler keeps int16) and ResNet-18/50 at 224x224.
const Layer kLayers[] = {
    {"det_3x3_c96_m24_i8", isa::ElementType::kInt8, isa::ElementType::kInt8, 96, 24, 88, 120, 3, 1,
     1, false},
    {"det_3x3s2_c3_m16_i8", isa::ElementType::kInt8, isa::ElementType::kInt16, 3, 16, 704, 960, 3,
     2, 1, false},
    {"det_1x1_c16_m32_i16", isa::ElementType::kInt16, isa::ElementType::kInt16, 16, 32, 176, 240, 1,
     1, 1, false},
    {"det_dw3x3_c16_i16", isa::ElementType::kInt16, isa::ElementType::kInt16, 16, 16, 176, 240, 3,
     1, 16, false},
    {"det_convT2x2_c24_m1_i8", isa::ElementType::kInt8, isa::ElementType::kInt8, 24, 1, 352, 480, 2,
     2, 1, true},
    {"det_convT2x2_c24_m24_i8", isa::ElementType::kInt8, isa::ElementType::kInt8, 24, 24, 176, 240,
     2, 2, 1, true},
    {"rec_dw5x5_c240_i16", isa::ElementType::kInt16, isa::ElementType::kInt16, 240, 240, 12, 80, 5,
     1, 240, false},
    {"rec_1x1_c240_m240_i16", isa::ElementType::kInt16, isa::ElementType::kInt16, 240, 240, 12, 80,
     1, 1, 1, false},
    {"rec_fc_c120_m6625_i8", isa::ElementType::kInt8, isa::ElementType::kInt32, 120, 6625, 1, 40, 1,
     1, 1, false},
    {"resnet_3x3_c64_m64_i8", isa::ElementType::kInt8, isa::ElementType::kInt8, 64, 64, 56, 56, 3,
     1, 1, false},
    {"resnet_3x3_c256_m256_i8", isa::ElementType::kInt8, isa::ElementType::kInt8, 256, 256, 14, 14,
     3, 1, 1, false},
    {"resnet_1x1_c256_m64_i8", isa::ElementType::kInt8, isa::ElementType::kInt8, 256, 64, 56, 56, 1,
     1, 1, false},
    {"resnet_3x3_c64_m64_i16", isa::ElementType::kInt16, isa::ElementType::kInt8, 64, 64, 56, 56, 3,
     1, 1, false},
};

int64_t bytes_of(isa::ElementType t) { return t == isa::ElementType::kInt8 ? 1 : (t == isa::ElementType::kInt16 ? 2 : 4); }

// The bytes between pixels of an NHWC tensor as the compiler lays it out: channels padded to
// 32 bytes.
int64_t pixel_bytes(isa::ElementType type, int64_t C) { return (C * bytes_of(type) + 31) / 32 * 32; }

// An NHWC tensor description at `address`.
isa::TensorDesc nhwc(uint32_t address, isa::ElementType type, int64_t C, int64_t H, int64_t W) {
  isa::TensorDesc d{};
  d.address = address;
  d.type = type;
  d.rank = 4;
  const int64_t e = bytes_of(type), px = pixel_bytes(type, C);
  const int64_t dims[4] = {1, C, H, W}, strides[4] = {H * W * px, e, W * px, px};
  for (int k = 0; k < 4; ++k) {
    d.dims[k] = uint32_t(dims[k]);
    d.strides[k] = int32_t(strides[k]);
  }
  return d;
}

struct Prepared {
  std::vector<uint8_t> memory;
  sim::Instruction instruction;
  int64_t macs = 0;
};

Prepared prepare(const Layer& l) {
  const int64_t pad = l.transpose ? 0 : (l.K - 1) / 2;
  const int64_t OH = l.transpose ? (l.H - 1) * l.stride + l.K : (l.H + 2 * pad - l.K) / l.stride + 1;
  const int64_t OW = l.transpose ? (l.W - 1) * l.stride + l.K : (l.W + 2 * pad - l.K) / l.stride + 1;
  const int64_t Cg = l.C / l.group, L = l.K * l.K * Cg;
  Prepared p;
  p.macs = OH * OW * l.M * L;
  std::mt19937 rng(1);
  uint64_t top = 0;
  auto place = [&](int64_t bytes) {
    const uint64_t at = top;
    top = (top + uint64_t(bytes) + 63) & ~uint64_t{63};
    return uint32_t(at);
  };
  isa::ConvInstruction in{};
  in.weights = place(l.M * L);
  in.bias = place(4 * l.M);
  in.requant = place(8 * l.M);
  in.input = nhwc(place(l.H * l.W * pixel_bytes(l.x, l.C)), l.x, l.C, l.H, l.W);
  in.output = nhwc(place(OH * OW * pixel_bytes(l.y, l.M)), l.y, l.M, OH, OW);
  in.residual = isa::TensorDesc{};
  in.residual_requant = isa::kNoAddress;
  p.memory.assign(top, 0);
  std::uniform_int_distribution<int> byte(-128, 127), word(-32768, 32767);
  for (int64_t i = 0; i < l.M * L; ++i) p.memory[in.weights + i] = uint8_t(byte(rng));
  const int64_t xbytes = l.H * l.W * pixel_bytes(l.x, l.C);
  for (int64_t i = 0; i < xbytes; ++i) p.memory[in.input.address + i] = uint8_t(byte(rng));
  // Requantization to the output's range for a typical sum of L random products.
  const double typical = std::sqrt(double(L)) * 74.0 * (l.x == isa::ElementType::kInt8 ? 74.0 : 18900.0);
  const int shift = 30 + int(std::ceil(std::log2(typical / (l.y == isa::ElementType::kInt8 ? 64.0 : 16384.0))));
  for (int64_t m = 0; m < l.M; ++m) {
    const int32_t bias = int32_t(byte(rng)) * 16;
    const isa::MultiplierEntry e{int32_t((1u << 30) + uint32_t(rng() % (1u << 30))), std::max(shift, 1)};
    std::memcpy(&p.memory[in.bias + 4 * m], &bias, 4);
    std::memcpy(&p.memory[in.requant + 8 * m], &e, 8);
  }
  in.kernel_h = in.kernel_w = uint32_t(l.K);
  in.stride_h = in.stride_w = uint32_t(l.stride);
  in.dilation_h = in.dilation_w = 1;
  in.pad_top = in.pad_left = int32_t(pad);
  in.group = uint32_t(l.group);
  in.clip_min = l.y == isa::ElementType::kInt8 ? -128 : (l.y == isa::ElementType::kInt16 ? -32768 : INT32_MIN);
  in.clip_max = l.y == isa::ElementType::kInt8 ? 127 : (l.y == isa::ElementType::kInt16 ? 32767 : INT32_MAX);
  p.instruction.opcode = l.transpose ? isa::Opcode::kConvTranspose : isa::Opcode::kConv;
  p.instruction.payload = in;
  return p;
}

void run_layer(benchmark::State& state, const Layer& layer, sim::HostIsa path, double peak) {
  if (!sim::set_host_isa(path)) {
    state.SkipWithError("this CPU does not support the path");
    return;
  }
  Prepared p = prepare(layer);
  double seconds = 0;  // the loop's own clock: rate counters would print "/s" after the percentage
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    sim::execute_instruction(p.instruction, p.memory);
    benchmark::ClobberMemory();
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  const double rate = double(p.macs) * double(state.iterations()) / seconds;
  state.counters["GMAC/s"] = rate / 1e9;
  if (peak > 0) state.counters["peak%"] = 100.0 * rate / peak;
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  for (sim::HostIsa path : sim::supported_host_isas()) {
    const double peak = measured_peak(path);
    std::printf("path %s: measured multiply-add peak %.1f GMAC/s (one core)\n",
                std::string(sim::host_isa_name(path)).c_str(), peak / 1e9);
    for (const Layer& layer : kLayers) {
      const std::string name = std::string(layer.name) + "/" + std::string(sim::host_isa_name(path));
      benchmark::RegisterBenchmark(name.c_str(), [&layer, path, peak](benchmark::State& state) {
        run_layer(state, layer, path, peak);
      })->Unit(benchmark::kMillisecond);
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
