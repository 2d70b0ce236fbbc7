// Internal: one instruction's work split over host threads (host_isa.h, version 2).
#pragma once

#include <algorithm>
#include <cstdint>

#include "openbpu/base/thread_pool.h"
#include "isa_clones.h"

namespace openbpu::simulator::functional {

// The calling thread's pool of host_threads() threads (made on first use and when the setting
// changes), or nullptr for one thread.
base::ThreadPool* unit_pool();

// The parts to split `n` items into: one per host thread, none smaller than `min_items`.
int64_t part_count(int64_t n, int64_t min_items);

// fn(part) for part < parts, on the unit pool's threads; returns when all are done. fn must not
// allocate scratch memory (ScratchArena is the calling thread's) nor throw.
template <typename Fn>
void for_each_part(int64_t parts, const Fn& fn) {
  base::parallel_for(parts > 1 ? unit_pool() : nullptr, parts, 1, [&](int64_t begin, int64_t end) {
    for (int64_t part = begin; part < end; ++part) fn(part);
  });
}

// Rows::run<kIsa>(context, r0, r1, part) over the rows [0, rows) split into `parts` ranges on the
// unit pool's threads, each range dispatched into the clone of the host path in use; one part
// runs inline (the caller is that clone already).
template <typename Rows, HostIsa kIsa, typename Context>
OPENBPU_INLINE void split_rows(const Context& context, int64_t rows, int64_t parts) {
  if (parts <= 1) return Rows::template run<kIsa>(context, int64_t{0}, rows, int64_t{0});
  for_each_part(parts, [&](int64_t part) {
    host_dispatch<Rows>(context, rows * part / parts, rows * (part + 1) / parts, part);
  });
}

// The parts for a walk's rows of n elements: each at least 32 Ki elements.
inline int64_t row_parts(int64_t rows, int64_t n) { return part_count(rows, (int64_t{1} << 15) / std::max<int64_t>(n, 1) + 1); }

}  // namespace openbpu::simulator::functional
