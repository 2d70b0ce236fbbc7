// The virtual BPU device (device.h): program memory, a priority queue of jobs and one worker
// thread that runs them a function call at a time.
#include "openbpu/simulator/device.h"

#include <cstring>
#include <new>

namespace openbpu::simulator {

namespace {

uint64_t dense_bytes(const isa::TensorDesc& d) { return element_count(d) * isa::element_bytes(d.type); }

DeviceResult error(DeviceStatus status, std::string message) { return {status, std::move(message), 0}; }

}  // namespace

Device::Device() : worker_([this] { run_worker(); }) {}

Device::~Device() {
  notify({DeviceEvent::Kind::kStopping, 0, 0, 0});
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  queued_.notify_all();
  worker_.join();
}

uint64_t Device::preemptions() const {
  std::lock_guard lock(mutex_);
  return preemptions_;
}

void Device::set_observer(std::shared_ptr<const DeviceObserver> observer) {
  std::lock_guard lock(mutex_);
  observer_ = std::move(observer);
}

void Device::notify(const DeviceEvent& event) {
  std::shared_ptr<const DeviceObserver> observer;
  {
    std::lock_guard lock(mutex_);
    observer = observer_;  // no allocation: a reference count
  }
  if (observer && *observer) (*observer)(event);
}

DeviceResult Device::load(std::span<const uint8_t> program, std::span<const uint8_t> weights) {
  try {
    DecodeResult decoded = decode_program(program, weights);
    if (!decoded.ok) return error(DeviceStatus::kInvalidProgram, std::move(decoded.error));
    auto loaded = std::make_shared<Loaded>();
    loaded->memory.assign(decoded.program.memory_bytes, 0);
    if (!weights.empty()) std::memcpy(loaded->memory.data(), weights.data(), weights.size());
    loaded->program = std::move(decoded.program);
    std::lock_guard lock(mutex_);
    const uint64_t id = next_program_++;
    programs_.emplace(id, std::move(loaded));
    return {DeviceStatus::kOk, "", id};
  } catch (const std::bad_alloc&) {
    return {DeviceStatus::kOutOfMemory, "out of memory while loading the program (device memory or its decoded form)", 0};
  }
}

DeviceResult Device::unload(uint64_t program) {
  std::lock_guard lock(mutex_);
  if (programs_.erase(program) == 0) {
    return error(DeviceStatus::kUnknownProgram, "program " + std::to_string(program) + " is not loaded");
  }
  return {};  // queued jobs hold their own reference to the program
}

const Program* Device::program(uint64_t handle) const {
  std::lock_guard lock(mutex_);
  auto it = programs_.find(handle);
  return it == programs_.end() ? nullptr : &it->second->program;
}

DeviceResult Device::submit(uint64_t program, std::vector<std::span<const uint8_t>> inputs,
                            std::vector<std::span<uint8_t>> outputs, int priority) {
  return submit(program, std::move(inputs), std::move(outputs), priority, JobDone{});
}

DeviceResult Device::submit(uint64_t program, std::vector<std::span<const uint8_t>> inputs,
                            std::vector<std::span<uint8_t>> outputs, int priority, JobDone done) {
  // The views are checked first; moving the vectors into the job keeps their elements in place.
  return queue_job(program, inputs, outputs, priority, done, [&](Job& job) {
    job.owned_inputs = std::move(inputs);
    job.owned_outputs = std::move(outputs);
    job.inputs = job.owned_inputs;
    job.outputs = job.owned_outputs;
  });
}

DeviceResult Device::submit_views(uint64_t program, std::span<const std::span<const uint8_t>> inputs,
                                  std::span<const std::span<uint8_t>> outputs, int priority, JobDone done) {
  if (done.call == nullptr) return error(DeviceStatus::kWrongBuffers, "submit_views needs a completion (JobDone)");
  return queue_job(program, inputs, outputs, priority, done, [&](Job& job) {
    job.owned_inputs.clear();
    job.owned_outputs.clear();
    job.inputs = inputs;
    job.outputs = outputs;
  });
}

template <typename Fill>
DeviceResult Device::queue_job(uint64_t program, std::span<const std::span<const uint8_t>> inputs,
                               std::span<const std::span<uint8_t>> outputs, int priority, JobDone done,
                               const Fill& fill) {
  if (priority < kLowestPriority || priority > kPreemptPriority) {
    return error(DeviceStatus::kInvalidPriority, "priority " + std::to_string(priority) + " is outside [0, 255]");
  }
  std::unique_lock lock(mutex_);
  auto it = programs_.find(program);
  if (it == programs_.end()) {
    return error(DeviceStatus::kUnknownProgram, "program " + std::to_string(program) + " is not loaded");
  }
  const Program& p = it->second->program;
  if (inputs.size() != p.inputs.size() || outputs.size() != p.outputs.size()) {
    return error(DeviceStatus::kWrongBuffers,
                 "program has " + std::to_string(p.inputs.size()) + " inputs and " + std::to_string(p.outputs.size()) +
                     " outputs, got " + std::to_string(inputs.size()) + " and " + std::to_string(outputs.size()));
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].size() != dense_bytes(p.inputs[i])) {
      return error(DeviceStatus::kWrongBuffers, "input " + std::to_string(i) + " has " +
                                                    std::to_string(inputs[i].size()) + " bytes, expected " +
                                                    std::to_string(dense_bytes(p.inputs[i])));
    }
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i].size() != dense_bytes(p.outputs[i])) {
      return error(DeviceStatus::kWrongBuffers, "output " + std::to_string(i) + " has " +
                                                    std::to_string(outputs[i].size()) + " bytes, expected " +
                                                    std::to_string(dense_bytes(p.outputs[i])));
    }
  }
  const uint64_t id = next_job_;
  try {
    if (done.call == nullptr) jobs_[id] = {};
    try {
      if (spare_.empty()) spare_.emplace_back();
      Job& job = spare_.front();
      job.id = id;
      job.priority = priority;
      job.loaded = it->second;
      job.done = done;
      job.started = false;
      job.next_instruction = 0;
      job.function_calls = 0;
      fill(job);
      queue_.splice(queue_.end(), spare_, spare_.begin());
    } catch (...) {
      jobs_.erase(id);
      throw;
    }
  } catch (const std::bad_alloc&) {
    return {DeviceStatus::kOutOfMemory, "out of memory while queueing the job", 0};
  }
  ++next_job_;
  lock.unlock();
  queued_.notify_one();
  notify({DeviceEvent::Kind::kSubmitted, id, priority, 0});
  return {DeviceStatus::kOk, "", id};
}

void Device::retire_locked(JobList::iterator it) {
  it->loaded.reset();  // unload() may free the program now
  it->inputs = {};
  it->outputs = {};
  it->owned_inputs.clear();
  it->owned_outputs.clear();
  spare_.splice(spare_.begin(), queue_, it);
}

DeviceResult Device::wait(uint64_t job, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  if (jobs_.find(job) == jobs_.end()) {
    return error(DeviceStatus::kUnknownJob, "job " + std::to_string(job) + " is unknown or already waited for");
  }
  auto it = jobs_.find(job);
  if (!finished_.wait_for(lock, timeout, [&] { return it->second.done; })) {
    return error(DeviceStatus::kTimeout, "job " + std::to_string(job) + " did not finish within " +
                                             std::to_string(timeout.count()) + " ms");
  }
  DeviceResult result{DeviceStatus::kOk, "", job};
  if (!it->second.failure.empty()) result = {DeviceStatus::kJobFailed, std::move(it->second.failure), job};
  jobs_.erase(it);
  return result;
}

bool Device::program_in_use_locked(const Loaded* loaded) const {
  for (const Job& j : queue_) {
    if (j.started && j.loaded.get() == loaded) return true;
  }
  return false;
}

// The first-submitted queued priority-255 job whose program no started (running or suspended)
// job uses: its memory is free, so it may run now.
Device::JobList::iterator Device::preempting_job_locked() {
  for (auto it = queue_.begin(); it != queue_.end(); ++it) {
    if (!it->started && it->priority == kPreemptPriority && !program_in_use_locked(it->loaded.get())) return it;
  }
  return queue_.end();
}

// 1. a priority-255 job that may start (preempting_job_locked);
// 2. else a suspended job: the highest priority, then the first submitted (other jobs never
//    interrupt it, so it goes on before they start);
// 3. else no job is started: the queued job of the highest priority, then the first submitted.
// queue_ is in submission order (ids increase), so "first" is the first in the list.
Device::JobList::iterator Device::next_job_locked() {
  if (auto it = preempting_job_locked(); it != queue_.end()) return it;
  auto best = queue_.end();
  for (auto it = queue_.begin(); it != queue_.end(); ++it) {
    if (it->started && (best == queue_.end() || it->priority > best->priority)) best = it;
  }
  if (best != queue_.end()) return best;
  for (auto it = queue_.begin(); it != queue_.end(); ++it) {
    if (best == queue_.end() || it->priority > best->priority) best = it;
  }
  return best;
}

bool Device::run_job(Job& job, const char*& failure) {
  Loaded& loaded = *job.loaded;
  const Program& program = loaded.program;
  std::span<uint8_t> memory(loaded.memory);
  try {
    if (job.function_calls == 0 && job.next_instruction == 0) {
      for (size_t i = 0; i < job.inputs.size(); ++i) scatter_dense(program.inputs[i], job.inputs[i], memory);
    }
    for (;;) {
      const size_t end = function_call_end(program, job.next_instruction);
      execute_range(program, job.next_instruction, end, memory);
      job.next_instruction = end;
      ++job.function_calls;
      if (end >= program.instructions.size()) break;
      notify({DeviceEvent::Kind::kFunctionCallDone, job.id, job.priority, job.function_calls});
      if (job.priority < kPreemptPriority) {
        std::lock_guard lock(mutex_);
        if (preempting_job_locked() != queue_.end()) {
          ++preemptions_;
          return false;
        }
      }
    }
    for (size_t i = 0; i < job.outputs.size(); ++i) gather_dense(program.outputs[i], memory, job.outputs[i]);
  } catch (const std::bad_alloc&) {
    failure = "out of memory while running the program";
  } catch (...) {
    failure = "the program failed while running";
  }
  return true;
}

void Device::run_worker() {
  for (;;) {
    JobList::iterator it;
    bool resumed = false;
    {
      std::unique_lock lock(mutex_);
      queued_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, nothing left
      it = next_job_locked();
      resumed = it->started;
      it->started = true;
    }
    // The list node stays put while other threads add jobs; only this thread removes them.
    Job& job = *it;
    if (resumed) notify({DeviceEvent::Kind::kResumed, job.id, job.priority, job.function_calls});
    const char* failure = nullptr;
    if (!run_job(job, failure)) {
      notify({DeviceEvent::Kind::kPreempted, job.id, job.priority, job.function_calls});
      continue;
    }
    // Before wait() returns: whoever waits for the job sees what the observer did with it.
    notify({DeviceEvent::Kind::kFinished, job.id, job.priority, job.function_calls});
    if (job.done.call != nullptr) {
      const JobDone done = job.done;
      const uint64_t id = job.id;
      {
        std::lock_guard lock(mutex_);
        retire_locked(it);
      }
      done.call(done.context, id, failure);
      continue;
    }
    {
      std::lock_guard lock(mutex_);
      JobState& state = jobs_[job.id];  // present since submit(); no allocation
      state.done = true;
      if (failure != nullptr) {
        try {
          state.failure = failure;
        } catch (...) {
          state.failure.clear();  // reported below as a generic failure
        }
        if (state.failure.empty()) state.failure.assign("failed");
      }
      retire_locked(it);
    }
    finished_.notify_all();
  }
}

}  // namespace openbpu::simulator
