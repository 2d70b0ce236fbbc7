// The virtual BPU device (device.h): program memory, a job queue and one worker thread.
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
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  queued_.notify_all();
  worker_.join();
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
                            std::vector<std::span<uint8_t>> outputs) {
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
    jobs_[id] = {};
    try {
      queue_.push_back(Job{id, it->second, std::move(inputs), std::move(outputs)});
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
  return {DeviceStatus::kOk, "", id};
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

void Device::run_worker() {
  for (;;) {
    Job job;
    {
      std::unique_lock lock(mutex_);
      queued_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, nothing left
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    Loaded& loaded = *job.loaded;
    std::span<uint8_t> memory(loaded.memory);
    const char* failure = nullptr;
    try {
      for (size_t i = 0; i < job.inputs.size(); ++i) scatter_dense(loaded.program.inputs[i], job.inputs[i], memory);
      execute(loaded.program, memory);
      for (size_t i = 0; i < job.outputs.size(); ++i) gather_dense(loaded.program.outputs[i], memory, job.outputs[i]);
    } catch (const std::bad_alloc&) {
      failure = "out of memory while running the program";
    } catch (...) {
      failure = "the program failed while running";
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
    }
    finished_.notify_all();
  }
}

}  // namespace openbpu::simulator
