// A fixed set of worker threads for data-parallel loops inside kernels and the simulator's
// functional units.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace openbpu::base {

class ThreadPool {
 public:
  // `threads` is the total parallelism including the calling thread; 1 runs everything inline.
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int thread_count() const { return static_cast<int>(workers_.size()) + 1; }

  // Calls fn(begin, end) over disjoint chunks covering [0, n); returns when all are done.
  // Chunks hold at least `min_chunk` items. Runs inline when one thread or one chunk suffices.
  // Nested calls from inside fn run inline. The first exception thrown by fn is rethrown here.
  void parallel_for(int64_t n, int64_t min_chunk,
                    const std::function<void(int64_t, int64_t)>& fn);

 private:
  void worker_loop();
  struct Job;

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  Job* job_ = nullptr;
  uint64_t generation_ = 0;
  bool stopping_ = false;
  std::mutex submit_mutex_;  // one parallel_for at a time per pool
};

// Runs fn over [0, n) on `pool` if given, else inline. Inline, fn is called directly (no
// std::function is made, so a kernel without a pool allocates nothing here); for the pool it is
// passed by reference (a std::function holding a reference_wrapper does not allocate either).
template <typename Fn>
void parallel_for(ThreadPool* pool, int64_t n, int64_t min_chunk, const Fn& fn) {
  if (n <= 0) return;
  if (pool == nullptr || pool->thread_count() == 1 || n <= min_chunk) {
    fn(int64_t{0}, n);
  } else {
    pool->parallel_for(n, min_chunk, std::function<void(int64_t, int64_t)>(std::cref(fn)));
  }
}

}  // namespace openbpu::base
