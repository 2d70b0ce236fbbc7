#include "openbpu/base/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <exception>

namespace openbpu::base {

namespace {
thread_local bool t_inside_parallel_for = false;
}

struct ThreadPool::Job {
  const std::function<void(int64_t, int64_t)>* fn = nullptr;
  int64_t n = 0;
  int64_t chunk = 1;
  std::atomic<int64_t> next{0};
  int active = 0;  // participants still working (guarded by mutex_)
  std::exception_ptr error;
  std::mutex error_mutex;

  void work() {
    for (;;) {
      const int64_t begin = next.fetch_add(chunk);
      if (begin >= n) return;
      const int64_t end = std::min(n, begin + chunk);
      try {
        (*fn)(begin, end);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
        next.store(n);  // stop handing out work
      }
    }
  }
};

ThreadPool::ThreadPool(int threads) {
  const int workers = std::max(threads, 1) - 1;
  workers_.reserve(static_cast<size_t>(workers));
  for (int i = 0; i < workers; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::worker_loop() {
  uint64_t seen = 0;
  for (;;) {
    Job* job = nullptr;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || (job_ != nullptr && generation_ != seen); });
      if (stopping_) return;
      seen = generation_;
      job = job_;
      ++job->active;
    }
    t_inside_parallel_for = true;
    job->work();
    t_inside_parallel_for = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      --job->active;
    }
    done_.notify_all();
  }
}

void ThreadPool::parallel_for(int64_t n, int64_t min_chunk,
                              const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  min_chunk = std::max<int64_t>(min_chunk, 1);
  if (workers_.empty() || n <= min_chunk || t_inside_parallel_for) {
    fn(0, n);
    return;
  }
  std::lock_guard<std::mutex> submit(submit_mutex_);
  Job job;
  job.fn = &fn;
  job.n = n;
  // About four chunks per thread balances uneven chunks without much scheduling overhead.
  const int64_t target = n / (static_cast<int64_t>(thread_count()) * 4);
  job.chunk = std::max(min_chunk, std::max<int64_t>(target, 1));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    job_ = &job;
    ++generation_;
  }
  wake_.notify_all();
  t_inside_parallel_for = true;
  job.work();
  t_inside_parallel_for = false;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    job_ = nullptr;  // late workers no longer join this job
    done_.wait(lock, [&] { return job.active == 0; });
  }
  if (job.error) std::rethrow_exception(job.error);
}

}  // namespace openbpu::base
