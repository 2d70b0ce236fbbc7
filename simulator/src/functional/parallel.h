// Internal: one instruction's work split over host threads (host_isa.h, version 2).
#pragma once

#include <cstdint>

#include "openbpu/base/thread_pool.h"

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

}  // namespace openbpu::simulator::functional
