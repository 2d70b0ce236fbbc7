// The timing model behind the simulated-perf extension (openbpu/dnn/simulated_perf.h).
#include "openbpu/dnn/simulated_perf.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "openbpu/format/model_file.h"
#include "openbpu/simulator/march.h"
#include "openbpu/simulator/program.h"
#include "openbpu/simulator/queue_model.h"
#include "openbpu/simulator/timing.h"

namespace openbpu::dnn {

namespace {

// One model's BPU segments, decoded, with what the estimate needs.
struct ModelPrograms {
  std::string error;  // non-empty: nothing else is set
  std::string march;
  const simulator::MarchSpec* spec = nullptr;
  int core_num = 1;
  std::vector<simulator::Program> programs;  // BPU segments in model order
};

ModelPrograms load_programs(const std::string& model_file, const std::string& model_name) {
  ModelPrograms r;
  format::ModelFile file;
  format::Status status = format::ModelFile::load(model_file, &file);
  format::PackageInfo package;
  if (status.ok()) status = format::unpack_package(file.view(), &package);
  if (!status.ok()) {
    r.error = status.message;
    return r;
  }
  for (const format::ModelInfo& model : package.models) {
    if (model.name != model_name) continue;
    const auto march = simulator::march_from_name(model.march);
    if (!march) {
      r.error = "model '" + model.name + "': unknown march '" + model.march + "'";
      return r;
    }
    for (const auto& [key, value] : model.compile_parameters) {
      if (key == "compiler_parameters.core_num") {
        try {
          r.core_num = std::max(1, std::stoi(value));
        } catch (...) {
          r.core_num = 1;
        }
      }
    }
    r.spec = &simulator::march_spec(*march);
    r.march = model.march;
    for (const format::SegmentInfo& segment : model.segments) {
      const auto* bpu = std::get_if<format::BpuSegmentInfo>(&segment.body);
      if (bpu == nullptr) continue;
      simulator::DecodeResult decoded = simulator::decode_program(bpu->program, bpu->weights);
      if (!decoded.ok) {
        r.error = "segment '" + segment.name + "': " + decoded.error;
        return r;
      }
      r.programs.push_back(std::move(decoded.program));
    }
    return r;
  }
  r.error = "model '" + model_name + "' is not in " + model_file;
  return r;
}

}  // namespace

SimulatedLatency simulated_bpu_latency(const std::string& model_file,
                                       const std::string& model_name) {
  SimulatedLatency r;
  const ModelPrograms m = load_programs(model_file, model_name);
  if (!m.error.empty()) {
    r.error = m.error;
    return r;
  }
  r.march = m.march;
  for (const simulator::Program& p : m.programs) {
    r.latency_us += simulator::estimate_program(p, *m.spec, m.core_num).latency_us;
    ++r.segments;
  }
  r.ok = true;
  return r;
}

namespace {

SimulatedThroughput throughput_on(const std::vector<std::vector<uint64_t>>& segment_calls,
                                  const simulator::MarchSpec& march, int core_num, int threads, int core_id,
                                  int frames_per_thread) {
  SimulatedThroughput r;
  r.march = march.name;
  r.threads = threads;
  r.core_num = std::max(1, core_num);
  r.cores = std::max(1, march.bpu_cores / r.core_num);
  if (threads < 1 || frames_per_thread < 1) {
    r.error = std::to_string(threads) + " thread(s) of " + std::to_string(frames_per_thread) +
              " frame(s): both must be at least 1";
    return r;
  }
  if (segment_calls.empty()) {
    r.error = "the model has no BPU segment";
    return r;
  }
  int affinity = simulator::kAnyCore;
  if (r.core_num == 1 && core_id > 0) {
    affinity = core_id - 1;  // --core_id 1 = core 0, 2 = core 1
    if (affinity >= r.cores) {
      r.error = "core_id " + std::to_string(core_id) + " names core " + std::to_string(affinity) +
                "; " + r.march + " has " + std::to_string(r.cores) + " core(s)";
      return r;
    }
  }
  // Frame-major, then client, then segment: each job's predecessor (the client's previous
  // segment or frame) comes before it, as the queue model requires.
  const int segments = static_cast<int>(segment_calls.size());
  std::vector<simulator::QueuedJob> jobs;
  jobs.reserve(static_cast<size_t>(frames_per_thread) * static_cast<size_t>(threads) *
               segment_calls.size());
  for (int frame = 0; frame < frames_per_thread; ++frame) {
    for (int client = 0; client < threads; ++client) {
      for (int s = 0; s < segments; ++s) {
        simulator::QueuedJob j;
        j.function_calls = segment_calls[static_cast<size_t>(s)];
        if (j.function_calls.empty()) j.function_calls.push_back(0);  // an empty program
        j.core = affinity;
        if (s > 0) {
          j.after = static_cast<int>(jobs.size()) - 1;
        } else if (frame > 0) {
          j.after = ((frame - 1) * threads + client) * segments + segments - 1;
        }
        jobs.push_back(std::move(j));
      }
    }
  }
  const simulator::QueueReport q = simulator::simulate_queues(jobs, r.cores);
  if (!q.ok) {
    r.error = q.error;
    return r;
  }
  r.frames = static_cast<int64_t>(threads) * frames_per_thread;
  const double frames = static_cast<double>(r.frames);
  if (q.makespan_cycles > 0)
    r.fps = frames * march.clock_mhz * 1e6 / static_cast<double>(q.makespan_cycles);
  r.average_wait_us = static_cast<double>(q.wait_cycles) / frames / march.clock_mhz;
  r.utilisation = q.utilisation;
  r.ok = true;
  return r;
}

}  // namespace

SimulatedThroughput simulated_throughput_of(const std::vector<std::vector<uint64_t>>& segment_calls,
                                            const std::string& march, int core_num, int threads, int core_id,
                                            int frames_per_thread) {
  const auto m = simulator::march_from_name(march);
  if (!m) {
    SimulatedThroughput r;
    r.error = "unknown march '" + march + "'";
    return r;
  }
  return throughput_on(segment_calls, simulator::march_spec(*m), core_num, threads, core_id, frames_per_thread);
}

SimulatedThroughput simulated_bpu_throughput(const std::string& model_file,
                                             const std::string& model_name, int threads,
                                             int core_id, int frames_per_thread) {
  const ModelPrograms m = load_programs(model_file, model_name);
  if (!m.error.empty()) {
    SimulatedThroughput r;
    r.error = m.error;
    return r;
  }
  std::vector<std::vector<uint64_t>> calls;
  for (const simulator::Program& p : m.programs)
    calls.push_back(simulator::function_call_cycles(p, *m.spec, m.core_num));
  return throughput_on(calls, *m.spec, m.core_num, threads, core_id, frames_per_thread);
}

}  // namespace openbpu::dnn
