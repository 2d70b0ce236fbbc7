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
  DecodeResult decoded = decode_program(program, weights);
  if (!decoded.ok) return error(DeviceStatus::kInvalidProgram, std::move(decoded.error));
  std::shared_ptr<Loaded> loaded;
  try {
    loaded = std::make_shared<Loaded>();
    loaded->memory.assign(decoded.program.memory_bytes, 0);
  } catch (const std::bad_alloc&) {
    return error(DeviceStatus::kOutOfMemory, "cannot allocate " + std::to_string(decoded.program.memory_bytes) +
                                                 " bytes of device memory");
  }
  if (!weights.empty()) std::memcpy(loaded->memory.data(), weights.data(), weights.size());
  loaded->program = std::move(decoded.program);
  std::lock_guard lock(mutex_);
  const uint64_t id = next_program_++;
  programs_.emplace(id, std::move(loaded));
  return {DeviceStatus::kOk, "", id};
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
  const uint64_t id = next_job_++;
  queue_.push_back(Job{id, it->second, std::move(inputs), std::move(outputs)});
  jobs_[id] = false;
  lock.unlock();
  queued_.notify_one();
  return {DeviceStatus::kOk, "", id};
}

DeviceResult Device::wait(uint64_t job, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  if (jobs_.find(job) == jobs_.end()) {
    return error(DeviceStatus::kUnknownJob, "job " + std::to_string(job) + " is unknown or already waited for");
  }
  if (!finished_.wait_for(lock, timeout, [&] { return jobs_.at(job); })) {
    return error(DeviceStatus::kTimeout, "job " + std::to_string(job) + " did not finish within " +
                                             std::to_string(timeout.count()) + " ms");
  }
  jobs_.erase(job);
  return {DeviceStatus::kOk, "", job};
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
    for (size_t i = 0; i < job.inputs.size(); ++i) scatter_dense(loaded.program.inputs[i], job.inputs[i], memory);
    execute(loaded.program, memory);
    for (size_t i = 0; i < job.outputs.size(); ++i) gather_dense(loaded.program.outputs[i], memory, job.outputs[i]);
    {
      std::lock_guard lock(mutex_);
      jobs_[job.id] = true;
    }
    finished_.notify_all();
  }
}

}  // namespace openbpu::simulator
