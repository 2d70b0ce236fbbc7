// The tiled convolution engine's packed weights and their per-thread cache (conv_tile.h).
#include <algorithm>
#include <cstring>
#include <new>
#include <vector>

#include "conv_tile.h"

namespace openbpu::simulator::functional {

namespace {

// Bytes of packed weights (and their copies) one thread keeps; past it the cache starts over.
constexpr size_t kCacheBytes = size_t{128} << 20;

// Packed weights start on a cache line: AMX tile rows and vector loads are whole lines.
template <typename T>
struct LineAllocator {
  using value_type = T;
  LineAllocator() = default;
  template <typename U>
  LineAllocator(const LineAllocator<U>&) noexcept {}
  T* allocate(size_t n) {
    return static_cast<T*>(::operator new (n * sizeof(T), std::align_val_t{64}));
  }
  void deallocate(T* p, size_t) noexcept { ::operator delete (p, std::align_val_t{64}); }
  friend bool operator==(const LineAllocator&, const LineAllocator&) { return true; }
};

template <typename TX>
struct Entry {
  using Weight = typename TileTraits<TX>::Weight;
  const int8_t* address;
  int64_t M, KH, KW, Cg;
  bool rows;
  int64_t align;
  std::vector<int8_t> copy;  // the weights as packed
  std::vector<Weight, LineAllocator<Weight>> packed;
  std::vector<int64_t> sums;
  size_t bytes() const { return copy.size() + packed.size() * sizeof(Weight) + sums.size() * sizeof(int64_t); }
};

template <typename TX>
struct Cache {
  std::vector<Entry<TX>> entries;
  size_t bytes = 0;
};

template <typename TX>
Cache<TX>& thread_cache() {
  thread_local Cache<TX> cache;
  return cache;
}

template <typename TX>
TileWeights<TX> view(const Entry<TX>& e) {
  const PatchLayout layout(e.KH, e.KW, e.Cg, e.align, e.rows);
  const int64_t B = (e.M + kTileLanes - 1) / kTileLanes;
  return {layout, layout.segment / TileTraits<TX>::kStep, B, layout.length() * kTileLanes, e.packed.data(),
          e.sums.data()};
}

// Packs e.copy into e.packed and e.sums (sized here).
template <typename TX>
void pack(Entry<TX>& e) {
  constexpr int64_t kStep = TileTraits<TX>::kStep;
  const PatchLayout layout(e.KH, e.KW, e.Cg, e.align, e.rows);
  const int64_t B = (e.M + kTileLanes - 1) / kTileLanes, wb = layout.length() * kTileLanes;
  e.packed.assign(size_t(B * wb), 0);
  e.sums.assign(size_t(layout.segments * B * kTileLanes), 0);
  const int8_t* w = e.copy.data();
  for (int64_t m = 0; m < e.M; ++m) {
    typename Entry<TX>::Weight* block = e.packed.data() + (m / kTileLanes) * wb + (m % kTileLanes) * kStep;
    for (int64_t kh = 0; kh < e.KH; ++kh) {
      for (int64_t kw = 0; kw < e.KW; ++kw, w += e.Cg) {
        const int64_t at = layout.offset(kh, kw);
        int64_t sum = 0;
        for (int64_t c = 0; c < e.Cg; ++c) {
          const int64_t k = at + c;
          block[(k / kStep) * kTileLanes * kStep + k % kStep] = w[c];
          sum += w[c];
        }
        e.sums[size_t(layout.segment_of(kh, kw) * B * kTileLanes + m)] += sum;
      }
    }
  }
}

}  // namespace

template <typename TX>
TileWeights<TX> tile_weights(const int8_t* weights, int64_t M, int64_t KH, int64_t KW, int64_t Cg,
                             bool rows, int64_t align) {
  Cache<TX>& cache = thread_cache<TX>();
  const size_t n = size_t(M * KH * KW * Cg);
  auto same_place = [&](const Entry<TX>& e) {
    return e.address == weights && e.M == M && e.KH == KH && e.KW == KW && e.Cg == Cg &&
           e.rows == rows && e.align == align;
  };
  for (const Entry<TX>& e : cache.entries) {
    if (same_place(e) && std::memcmp(e.copy.data(), weights, n) == 0) return view(e);
  }
  Entry<TX> e{weights, M, KH, KW, Cg, rows, align, std::vector<int8_t>(weights, weights + n),
              {},      {}};
  pack(e);
  std::erase_if(cache.entries, [&](const Entry<TX>& old) {  // stale now: other weights at that place
    if (!same_place(old)) return false;
    cache.bytes -= old.bytes();
    return true;
  });
  if (cache.bytes + e.bytes() > kCacheBytes) {
    cache.entries.clear();
    cache.bytes = 0;
  }
  cache.entries.push_back(std::move(e));
  cache.bytes += cache.entries.back().bytes();
  return view(cache.entries.back());
}

template TileWeights<int8_t> tile_weights<int8_t>(const int8_t*, int64_t, int64_t, int64_t, int64_t,
                                                  bool, int64_t);
template TileWeights<int16_t> tile_weights<int16_t>(const int8_t*, int64_t, int64_t, int64_t,
                                                    int64_t, bool, int64_t);

}  // namespace openbpu::simulator::functional
