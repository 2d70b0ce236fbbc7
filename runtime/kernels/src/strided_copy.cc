#include "openbpu/kernels/strided_copy.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#include "openbpu/kernels/axes.h"

namespace openbpu::kernels {

namespace {

// Elements per parallel chunk of plain copying.
constexpr int64_t kCopyChunkElements = 1 << 15;

// A strided iteration space with unit dimensions dropped and mergeable neighbours merged.
struct StridedSpace {
  std::vector<int64_t> shape, src, dst;
};

StridedSpace simplify(std::span<const int64_t> shape, std::span<const int64_t> src_strides,
                      std::span<const int64_t> dst_strides) {
  StridedSpace s;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (!s.shape.empty() && s.src.back() == src_strides[d] * shape[d] &&
        s.dst.back() == dst_strides[d] * shape[d]) {
      s.shape.back() *= shape[d];
      s.src.back() = src_strides[d];
      s.dst.back() = dst_strides[d];
      continue;
    }
    s.shape.push_back(shape[d]);
    s.src.push_back(src_strides[d]);
    s.dst.push_back(dst_strides[d]);
  }
  return s;
}

template <typename U>
void copy_rows(ThreadPool* pool, const StridedSpace& s, const U* src, U* dst) {
  const size_t rank = s.shape.size();
  if (rank == 0) {
    *dst = *src;
    return;
  }
  const int64_t inner = s.shape[rank - 1];
  const int64_t inner_src = s.src[rank - 1];
  const int64_t inner_dst = s.dst[rank - 1];
  const size_t outer_rank = rank - 1;
  const int64_t rows = dims_product(s.shape, 0, outer_rank);
  const bool contiguous = inner_src == 1 && inner_dst == 1;
  parallel_for(pool, rows, std::max<int64_t>(1, kCopyChunkElements / inner),
               [&](int64_t begin, int64_t end) {
                 std::vector<int64_t> index(outer_rank, 0);
                 int64_t src_off = 0, dst_off = 0;
                 for (size_t d = outer_rank, rest = size_t(begin); d-- > 0;) {
                   index[d] = int64_t(rest % size_t(s.shape[d]));
                   rest /= size_t(s.shape[d]);
                   src_off += index[d] * s.src[d];
                   dst_off += index[d] * s.dst[d];
                 }
                 for (int64_t row = begin; row < end; ++row) {
                   const U* from = src + src_off;
                   U* to = dst + dst_off;
                   if (contiguous) {
                     std::memcpy(to, from, size_t(inner) * sizeof(U));
                   } else {
                     for (int64_t i = 0; i < inner; ++i) to[i * inner_dst] = from[i * inner_src];
                   }
                   for (size_t d = outer_rank; d-- > 0;) {
                     if (++index[d] < s.shape[d]) {
                       src_off += s.src[d];
                       dst_off += s.dst[d];
                       break;
                     }
                     src_off -= s.src[d] * (s.shape[d] - 1);
                     dst_off -= s.dst[d] * (s.shape[d] - 1);
                     index[d] = 0;
                   }
                 }
               });
}

// Transposing copies (the destination's innermost dimension is contiguous, the source's is not,
// and some outer dimension p is contiguous in the source): the plane (p, innermost) is copied in
// square tiles so that both sides stay in cache. Same result as copy_rows; tested against it.
constexpr int64_t kTransposeTile = 32;

template <typename U>
void copy_tiles(ThreadPool* pool, const StridedSpace& s, size_t p, const U* src, U* dst) {
  const size_t rank = s.shape.size(), last = rank - 1;
  std::vector<size_t> other;  // the dimensions outside the plane
  for (size_t d = 0; d < last; ++d) {
    if (d != p) other.push_back(d);
  }
  const int64_t np = s.shape[p], ni = s.shape[last];
  const int64_t sp = s.src[p], dp = s.dst[p], si = s.src[last];
  int64_t planes = 1;
  for (size_t d : other) planes *= s.shape[d];
  const int64_t p_tiles = (np + kTransposeTile - 1) / kTransposeTile;
  const int64_t items_per_chunk = std::max<int64_t>(1, kCopyChunkElements / (kTransposeTile * ni));
  parallel_for(pool, planes * p_tiles, items_per_chunk, [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      int64_t src_off = 0, dst_off = 0;
      int64_t rest = item / p_tiles;
      for (size_t k = other.size(); k-- > 0;) {
        const size_t d = other[k];
        const int64_t i = rest % s.shape[d];
        rest /= s.shape[d];
        src_off += i * s.src[d];
        dst_off += i * s.dst[d];
      }
      const int64_t p0 = (item % p_tiles) * kTransposeTile;
      const int64_t p1 = std::min(np, p0 + kTransposeTile);
      for (int64_t i0 = 0; i0 < ni; i0 += kTransposeTile) {
        const int64_t i1 = std::min(ni, i0 + kTransposeTile);
        for (int64_t a = p0; a < p1; ++a) {
          const U* from = src + src_off + a * sp;
          U* to = dst + dst_off + a * dp;
          for (int64_t i = i0; i < i1; ++i) to[i] = from[i * si];
        }
      }
    }
  });
}

}  // namespace

void copy_strided(ThreadPool* pool, size_t width, std::span<const int64_t> shape, const void* src,
                  std::span<const int64_t> src_strides, void* dst,
                  std::span<const int64_t> dst_strides) {
  OPENBPU_CHECK(src_strides.size() == shape.size() && dst_strides.size() == shape.size(),
        "copy_strided: ", shape.size(), " dimensions but ", src_strides.size(), " source and ",
        dst_strides.size(), " destination strides");
  for (int64_t d : shape) {
    if (d == 0) return;
  }
  const StridedSpace space = simplify(shape, src_strides, dst_strides);
  // A dimension contiguous in the source, if the innermost one is not (a transposition).
  std::optional<size_t> contiguous_source;
  const size_t rank = space.shape.size();
  if (rank >= 2 && space.dst[rank - 1] == 1 && space.src[rank - 1] != 1) {
    for (size_t d = 0; d + 1 < rank; ++d) {
      if (space.src[d] == 1) contiguous_source = d;
    }
  }
  dispatch_by_width(width, "copy_strided", [&]<typename U>() {
    if (contiguous_source) {
      copy_tiles<U>(pool, space, *contiguous_source, static_cast<const U*>(src),
                    static_cast<U*>(dst));
    } else {
      copy_rows<U>(pool, space, static_cast<const U*>(src), static_cast<U*>(dst));
    }
  });
}

void fill_elements(ThreadPool* pool, size_t width, void* dst, int64_t count, const void* value) {
  dispatch_by_width(width, "fill_elements", [&]<typename U>() {
    U v;
    std::memcpy(&v, value, sizeof(U));
    U* out = static_cast<U*>(dst);
    parallel_for(pool, count, kCopyChunkElements,
                 [&](int64_t begin, int64_t end) { std::fill(out + begin, out + end, v); });
  });
}

}  // namespace openbpu::kernels
