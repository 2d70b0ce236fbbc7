// The virtual BPU device (device.h): job priorities, preemption by a priority-255 job at a
// function-call boundary, and what may not interleave.
//
// No test sleeps or depends on timing: the device's observer runs on the worker thread at each
// function-call boundary, so a test submits the preempting job from there (the device checks its
// queue right after the observer returns), and holds the worker at a boundary on a Gate when it
// needs jobs queued behind a running one. A Gate's timeout only turns a deadlock into a failure.
// Each test ends with its device idle or destroyed, so no observer outlives what it refers to.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <future>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <variant>
#include <vector>

#include "openbpu/simulator/device.h"
#include "openbpu/simulator/isa.h"
#include "openbpu/simulator/program.h"
#include "simulator/lut_chain_program.h"

namespace openbpu::simulator {
namespace {

using namespace std::chrono_literals;
using Kind = DeviceEvent::Kind;

using testing::kBytes;
using testing::kTableBytes;

// int8 table of a permutation: applied again and again, it keeps changing every byte.
std::vector<uint8_t> lut_table() {
  std::vector<uint8_t> t(kTableBytes);
  for (uint32_t i = 0; i < kTableBytes; ++i) t[i] = static_cast<uint8_t>((i * 37 + 11) & 0xFF);
  return t;
}

// A chain of `calls` function calls, each FunctionBegin then `luts` LUTs, ping-ponging between
// two buffers after the table. With `boundaries` false there is no FunctionBegin at all.
std::vector<uint8_t> lut_chain_program(uint32_t calls, uint32_t luts = 2, bool boundaries = true) {
  return encode_program(testing::lut_chain(calls, [luts](uint32_t) { return luts; }, boundaries));
}

std::vector<uint8_t> random_input(uint32_t seed) {
  std::vector<uint8_t> v(kBytes);
  uint32_t x = seed * 2654435761u + 1;
  for (uint8_t& b : v) {
    x = x * 1664525u + 1013904223u;
    b = static_cast<uint8_t>(x >> 24);
  }
  return v;
}

// The chain's output computed on the host: the table applied `steps` times.
std::vector<uint8_t> expected_output(std::vector<uint8_t> v, uint32_t steps) {
  const std::vector<uint8_t> t = lut_table();
  for (uint32_t s = 0; s < steps; ++s) {
    for (uint8_t& b : v) b = t[static_cast<uint8_t>(static_cast<int8_t>(b) + 128)];
  }
  return v;
}

// Opens once; waiting on it blocks the calling thread (the worker, in an observer) until then.
class Gate {
 public:
  void open() {
    {
      std::lock_guard lock(mutex_);
      open_ = true;
    }
    cv_.notify_all();
  }
  bool wait() {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, 60s, [&] { return open_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool open_ = false;
};

// One job's buffers and its expected output.
struct JobData {
  std::vector<uint8_t> input, output, expected;
};

// Records the worker's events as "name:kind:calls" (kSubmitted and kStopping left out: they
// come from other threads) and runs a test's action on each event.
class Recorder {
 public:
  using Action = std::function<void(const DeviceEvent&, const std::string& name)>;

  void name(uint64_t job, std::string n) {
    {
      std::lock_guard lock(mutex_);
      names_[job] = std::move(n);
    }
    named_.notify_all();
  }
  void set_action(Action a) { action_ = std::move(a); }
  std::shared_ptr<const DeviceObserver> observer() {
    return std::make_shared<const DeviceObserver>([this](const DeviceEvent& e) {
      std::string n;
      {
        std::unique_lock lock(mutex_);
        // A job may reach the worker before submit() has returned its id to the test, which
        // names it then: wait for the name (kSubmitted comes from inside submit() itself).
        if (e.kind != Kind::kSubmitted && e.kind != Kind::kStopping) {
          named_.wait_for(lock, 60s, [&] { return names_.count(e.job) != 0; });
        }
        auto it = names_.find(e.job);
        n = it == names_.end() ? "?" + std::to_string(e.job) : it->second;
        if (e.kind != Kind::kSubmitted && e.kind != Kind::kStopping) {
          static const char* kinds[] = {"submitted", "call", "preempted", "resumed", "finished", "stopping"};
          log_.push_back(n + ":" + kinds[static_cast<int>(e.kind)] + ":" + std::to_string(e.function_calls));
        }
      }
      if (action_) action_(e, n);
    });
  }
  std::vector<std::string> log() {
    std::lock_guard lock(mutex_);
    return log_;
  }
  // The log's entries of one kind, in order: "L:finished:8" → "L".
  std::vector<std::string> order(const std::string& kind) {
    std::vector<std::string> out;
    for (const std::string& s : log()) {
      const size_t a = s.find(':'), b = s.find(':', a + 1);
      if (s.substr(a + 1, b - a - 1) == kind) out.push_back(s.substr(0, a));
    }
    return out;
  }

 private:
  std::mutex mutex_;
  std::condition_variable named_;
  std::map<uint64_t, std::string> names_;
  std::vector<std::string> log_;
  Action action_;  // set before the observer is installed
};

class DeviceTest : public ::testing::Test {
 protected:
  // Declared before the device: the observer refers to them until the device is gone.
  Recorder recorder_;
  std::map<std::string, JobData> data_;
  std::unique_ptr<Device> device_ = std::make_unique<Device>();

  uint64_t load(uint32_t calls, uint32_t luts = 2, bool boundaries = true) {
    const DeviceResult r = device_->load(lut_chain_program(calls, luts, boundaries), lut_table());
    EXPECT_TRUE(r.ok()) << r.message;
    return r.id;
  }
  // Submits program `program` (a chain of `steps` LUTs) as job `name`; returns its id.
  uint64_t submit(const std::string& name, uint64_t program, uint32_t steps, int priority) {
    JobData& d = data_[name];
    d.input = random_input(static_cast<uint32_t>(data_.size()) * 7 + steps);
    d.output.assign(kBytes, 0);
    d.expected = expected_output(d.input, steps);
    const DeviceResult r = device_->submit(program, {std::span<const uint8_t>(d.input)}, {std::span<uint8_t>(d.output)}, priority);
    EXPECT_TRUE(r.ok()) << r.message;
    recorder_.name(r.id, name);
    return r.id;
  }
  void expect_done(uint64_t job, const std::string& name) {
    const DeviceResult r = device_->wait(job, 60s);
    EXPECT_TRUE(r.ok()) << name << ": " << r.message;
    EXPECT_EQ(data_[name].output, data_[name].expected) << name << ": output differs from the unpreempted result";
  }
};

TEST(Program, FunctionCallsSplitTheProgramAndRunAsExecuteDoes) {
  for (bool boundaries : {true, false}) {
    SCOPED_TRACE(boundaries ? "with FunctionBegin" : "without FunctionBegin");
    const DecodeResult d = decode_program(lut_chain_program(4, 3, boundaries), lut_table());
    ASSERT_TRUE(d.ok) << d.error;
    const Program& p = d.program;
    std::vector<size_t> starts;
    for (size_t i = 0; i < p.instructions.size(); i = function_call_end(p, i)) starts.push_back(i);
    if (boundaries) {
      EXPECT_EQ(starts, (std::vector<size_t>{0, 4, 8, 12}));
    } else {
      EXPECT_EQ(starts, (std::vector<size_t>{0}));  // one call
    }
    EXPECT_EQ(function_call_end(p, p.instructions.size()), p.instructions.size());

    std::vector<uint8_t> whole(p.memory_bytes, 0), pieces(p.memory_bytes, 0);
    const std::vector<uint8_t> table = lut_table(), input = random_input(3);
    for (auto* m : {&whole, &pieces}) {
      std::memcpy(m->data(), table.data(), table.size());
      scatter_dense(p.inputs[0], input, *m);
    }
    execute(p, whole);
    for (size_t i : starts) execute_range(p, i, function_call_end(p, i), pieces);
    EXPECT_EQ(whole, pieces);
    std::vector<uint8_t> out(kBytes);
    gather_dense(p.outputs[0], whole, out);
    EXPECT_EQ(out, expected_output(input, 12));
  }
}

// Found by fuzzing (tests/fuzz, model_file): a program header claiming 4 GiB of device memory
// made the runtime allocate it when loading a model file of a few kilobytes.
TEST(Program, MemoryOverTheBoundIsRefused) {
  const DecodeResult d = decode_program(lut_chain_program(4, 3, true), lut_table());
  ASSERT_TRUE(d.ok) << d.error;
  Program p = d.program;
  p.memory_bytes = isa::kMaxMemoryBytes;
  EXPECT_TRUE(decode_program(encode_program(p), lut_table()).ok);
  p.memory_bytes = isa::kMaxMemoryBytes + 1;
  const DecodeResult over = decode_program(encode_program(p), lut_table());
  EXPECT_FALSE(over.ok);
  EXPECT_NE(over.error.find("memory size 536870913 bytes exceeds the 536870912 bytes (512 MiB) a program may address"),
            std::string::npos)
      << over.error;
}

// Found by fuzzing (tests/fuzz, bpu_program): a descriptor whose axes each span nearly 2^63
// bytes overflowed int64 while its byte range was summed (UBSan); the sums saturate, and the
// descriptor is refused as lying outside device memory.
TEST(Program, ADescriptorSpanningMoreThanInt64IsRefused) {
  const DecodeResult d = decode_program(lut_chain_program(4, 3, true), lut_table());
  ASSERT_TRUE(d.ok) << d.error;
  for (const int32_t sign : {1, -1}) {
    Program p = d.program;
    auto lut = std::find_if(p.instructions.begin(), p.instructions.end(),
                            [](const Instruction& i) { return std::holds_alternative<isa::LutInstruction>(i.payload); });
    ASSERT_NE(lut, p.instructions.end());
    isa::TensorDesc& in = std::get<isa::LutInstruction>(lut->payload).input;
    in.rank = isa::kMaxRank;
    for (uint32_t i = 0; i < isa::kMaxRank; ++i) {
      in.dims[i] = 0xFFFFFFFFu;
      in.strides[i] = sign * std::numeric_limits<int32_t>::max();
    }
    const ByteRange r = byte_range(in);
    EXPECT_EQ(sign > 0 ? r.hi : r.lo, sign > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min());
    const DecodeResult bad = decode_program(encode_program(p), lut_table());
    EXPECT_FALSE(bad.ok);
    EXPECT_NE(bad.error.find("lie outside device memory"), std::string::npos) << bad.error;
  }
}

TEST_F(DeviceTest, PriorityOutsideZeroTo255IsRefused) {
  const uint64_t p = load(1);
  std::vector<uint8_t> in(kBytes), out(kBytes);
  for (int priority : {-1, 256}) {
    const DeviceResult r = device_->submit(p, {std::span<const uint8_t>(in)}, {std::span<uint8_t>(out)}, priority);
    EXPECT_EQ(r.status, DeviceStatus::kInvalidPriority);
    EXPECT_EQ(r.message, "priority " + std::to_string(priority) + " is outside [0, 255]");
  }
}

// A job submitted with a completion (JobDone) reports its end through it, on the device's
// thread, after its outputs are written; wait() does not know it; a completion may submit again.
TEST_F(DeviceTest, CompletionReportsTheEndInsteadOfWait) {
  const uint64_t p = load(3);
  struct Completion {
    std::mutex mutex;
    std::condition_variable cv;
    std::vector<std::pair<uint64_t, std::string>> ends;  // job, failure ("" = none)
    std::vector<uint8_t> output_seen;                    // the first job's output when it ended
    Device* device = nullptr;
    uint64_t program = 0;
    std::vector<uint8_t>* first_output = nullptr;
    std::vector<uint8_t> second_in, second_out;
  } c;
  c.device = device_.get();
  c.program = p;
  JobData& d = data_["first"];
  d.input = random_input(5);
  d.output.assign(kBytes, 0);
  d.expected = expected_output(d.input, 6);
  c.first_output = &d.output;
  c.second_in = random_input(6);
  c.second_out.assign(kBytes, 0);
  const JobDone done{[](void* context, uint64_t job, const char* failure) {
                       auto& cc = *static_cast<Completion*>(context);
                       std::lock_guard lock(cc.mutex);
                       const bool first = cc.ends.empty();
                       cc.ends.emplace_back(job, failure == nullptr ? "" : failure);
                       if (first) {
                         cc.output_seen = *cc.first_output;
                         // From the completion, the next job (a driver's interrupt handler queueing more).
                         const JobDone again{[](void* ctx, uint64_t j, const char* f) {
                                               auto& c2 = *static_cast<Completion*>(ctx);
                                               {
                                                 std::lock_guard l2(c2.mutex);
                                                 c2.ends.emplace_back(j, f == nullptr ? "" : f);
                                               }
                                               c2.cv.notify_all();
                                             },
                                             &cc};
                         const DeviceResult r = cc.device->submit(cc.program, {std::span<const uint8_t>(cc.second_in)},
                                                                  {std::span<uint8_t>(cc.second_out)}, 0, again);
                         if (!r.ok()) cc.ends.emplace_back(0, r.message);
                       }
                     },
                     &c};
  const DeviceResult r = device_->submit(p, {std::span<const uint8_t>(d.input)}, {std::span<uint8_t>(d.output)}, 0, done);
  ASSERT_TRUE(r.ok()) << r.message;
  {
    std::unique_lock lock(c.mutex);
    ASSERT_TRUE(c.cv.wait_for(lock, 60s, [&] { return c.ends.size() >= 2; }));
    EXPECT_EQ(c.ends[0], (std::pair<uint64_t, std::string>{r.id, ""}));
    EXPECT_NE(c.ends[1].first, 0u) << c.ends[1].second;
    EXPECT_EQ(c.ends[1].second, "");
    EXPECT_EQ(c.output_seen, d.expected);  // written before the completion ran
  }
  EXPECT_EQ(c.second_out, expected_output(c.second_in, 6));
  EXPECT_EQ(device_->wait(r.id, 1s).status, DeviceStatus::kUnknownJob);
}

// submit_views runs the caller's span lists in place (they stay the caller's), one job after
// another in the same reused queue storage, each output equal to the host's; without a
// completion it is refused (no one could tell when the lists may go), as a wrong list is.
TEST_F(DeviceTest, SubmitViewsReadsTheCallersListsUntilTheCompletion) {
  const uint64_t p = load(2);
  struct Ends {
    std::mutex mutex;
    std::condition_variable cv;
    std::vector<std::string> failures;
  } ends;
  const JobDone done{[](void* context, uint64_t, const char* failure) {
                       auto& e = *static_cast<Ends*>(context);
                       {
                         std::lock_guard lock(e.mutex);
                         e.failures.emplace_back(failure == nullptr ? "" : failure);
                       }
                       e.cv.notify_all();
                     },
                     &ends};
  for (uint32_t k = 0; k < 5; ++k) {
    const std::vector<uint8_t> in = random_input(20 + k);
    std::vector<uint8_t> out(kBytes, 0);
    const std::span<const uint8_t> inputs[] = {std::span<const uint8_t>(in)};
    const std::span<uint8_t> outputs[] = {std::span<uint8_t>(out)};
    const DeviceResult r = device_->submit_views(p, inputs, outputs, 0, done);
    ASSERT_TRUE(r.ok()) << r.message;
    std::unique_lock lock(ends.mutex);
    ASSERT_TRUE(ends.cv.wait_for(lock, 60s, [&] { return ends.failures.size() == k + 1; }));
    EXPECT_EQ(ends.failures.back(), "");
    EXPECT_EQ(out, expected_output(in, 4)) << "job " << k;
  }
  std::vector<uint8_t> in(kBytes), out(kBytes), small(kBytes - 1);
  const std::span<const uint8_t> inputs[] = {std::span<const uint8_t>(in)};
  const std::span<uint8_t> outputs[] = {std::span<uint8_t>(out)};
  const std::span<uint8_t> short_outputs[] = {std::span<uint8_t>(small)};
  EXPECT_EQ(device_->submit_views(p, inputs, outputs, 0, JobDone{}).status, DeviceStatus::kWrongBuffers);
  const DeviceResult wrong = device_->submit_views(p, inputs, short_outputs, 0, done);
  EXPECT_EQ(wrong.status, DeviceStatus::kWrongBuffers);
  EXPECT_EQ(wrong.message, "output 0 has 4095 bytes, expected 4096");
}

// A running job holds the worker at its first boundary while the others are queued; they then
// run by priority, in submission order within a priority (none of them is 255: no preemption).
TEST_F(DeviceTest, QueuedJobsRunByPriorityThenSubmissionOrder) {
  const uint64_t p1 = load(2), p2 = load(2);
  Gate running, release;
  recorder_.set_action([&](const DeviceEvent& e, const std::string& n) {
    if (e.kind == Kind::kFunctionCallDone && n == "blocker") {
      running.open();
      EXPECT_TRUE(release.wait());
    }
  });
  device_->set_observer(recorder_.observer());
  std::vector<std::pair<uint64_t, std::string>> jobs;
  jobs.emplace_back(submit("blocker", p1, 4, 0), "blocker");
  EXPECT_TRUE(running.wait());
  // Same program or not does not matter here: nothing is suspended.
  const std::vector<std::pair<std::string, int>> queued = {{"a3", 3}, {"b7", 7}, {"c3", 3}, {"d254", 254}, {"e0", 0}, {"f7", 7}};
  for (size_t i = 0; i < queued.size(); ++i) {
    jobs.emplace_back(submit(queued[i].first, i % 2 ? p1 : p2, 4, queued[i].second), queued[i].first);
  }
  release.open();
  for (const auto& [id, name] : jobs) expect_done(id, name);
  EXPECT_EQ(recorder_.order("finished"), (std::vector<std::string>{"blocker", "d254", "b7", "f7", "a3", "c3", "e0"}));
  EXPECT_EQ(device_->preemptions(), 0u);
}

// L runs 8 calls; at its second boundary a priority-255 job H of another program is submitted:
// L is suspended right there, H runs to its end, L resumes at its third call. Both outputs are
// the unpreempted ones.
TEST_F(DeviceTest, PreempJobOvertakesARunningJobAtAFunctionCallBoundary) {
  const uint64_t pl = load(8), ph = load(3);
  uint64_t h = 0;
  recorder_.set_action([&](const DeviceEvent& e, const std::string& n) {
    if (e.kind == Kind::kFunctionCallDone && n == "L" && e.function_calls == 2) h = submit("H", ph, 6, 255);
  });
  device_->set_observer(recorder_.observer());
  const uint64_t l = submit("L", pl, 16, 10);
  expect_done(l, "L");
  expect_done(h, "H");
  EXPECT_EQ(recorder_.log(), (std::vector<std::string>{
                                 "L:call:1", "L:call:2", "L:preempted:2",                      //
                                 "H:call:1", "H:call:2", "H:finished:3",                       //
                                 "L:resumed:2", "L:call:3", "L:call:4", "L:call:5", "L:call:6",  //
                                 "L:call:7", "L:finished:8"}));
  EXPECT_EQ(device_->preemptions(), 1u);
}

// A priority-255 job of the running job's own program waits for it (they share the program's
// memory); so does one submitted during another priority-255 job (never preempted).
TEST_F(DeviceTest, PreempJobOfTheSameProgramOrDuringAPreempJobWaits) {
  const uint64_t p1 = load(4), p2 = load(4);
  uint64_t same = 0, second = 0;
  recorder_.set_action([&](const DeviceEvent& e, const std::string& n) {
    if (e.kind != Kind::kFunctionCallDone || e.function_calls != 1) return;
    if (n == "L") same = submit("same", p1, 8, 255);
    if (n == "same") second = submit("second", p2, 8, 255);
  });
  device_->set_observer(recorder_.observer());
  const uint64_t l = submit("L", p1, 8, 0);
  expect_done(l, "L");
  expect_done(same, "same");
  expect_done(second, "second");
  EXPECT_EQ(recorder_.order("finished"), (std::vector<std::string>{"L", "same", "second"}));
  EXPECT_EQ(recorder_.order("preempted"), std::vector<std::string>{});
  EXPECT_EQ(device_->preemptions(), 0u);
}

// While L is suspended: a priority-200 job (M) waits for L to resume and end, and so does a
// priority-255 job of L's program (S): it would overwrite L's activations. L is preempted again
// only by a priority-255 job of a free program (H2).
TEST_F(DeviceTest, SuspendedJobResumesBeforeOtherJobsAndKeepsItsProgram) {
  const uint64_t pl = load(6), ph = load(2), pm = load(2), ph2 = load(2);
  std::map<std::string, uint64_t> ids;
  recorder_.set_action([&](const DeviceEvent& e, const std::string& n) {
    if (e.kind != Kind::kFunctionCallDone) return;
    if (n == "L" && e.function_calls == 1) ids["H"] = submit("H", ph, 4, 255);
    if (n == "H") {
      ids["M"] = submit("M", pm, 4, 200);
      ids["S"] = submit("S", pl, 12, 255);
    }
    if (n == "L" && e.function_calls == 3) ids["H2"] = submit("H2", ph2, 4, 255);
  });
  device_->set_observer(recorder_.observer());
  const uint64_t l = submit("L", pl, 12, 100);
  expect_done(l, "L");  // the others were submitted before L ended: ids is complete
  for (const char* n : {"H", "H2", "S", "M"}) expect_done(ids[n], n);
  EXPECT_EQ(recorder_.log(), (std::vector<std::string>{
                                 "L:call:1", "L:preempted:1",                  //
                                 "H:call:1", "H:finished:2",                   //
                                 "L:resumed:1", "L:call:2", "L:call:3", "L:preempted:3",  //
                                 "H2:call:1", "H2:finished:2",                 //
                                 "L:resumed:3", "L:call:4", "L:call:5", "L:finished:6",  //
                                 "S:call:1", "S:call:2", "S:call:3", "S:call:4", "S:call:5", "S:finished:6",  //
                                 "M:call:1", "M:finished:2"}));
  EXPECT_EQ(device_->preemptions(), 2u);
}

// A program without FunctionBegin is one function call: it has no boundary to be preempted at
// (the device checks for a preempting job only between calls, as the tests above show).
TEST_F(DeviceTest, ProgramWithoutBoundariesIsOneCall) {
  const uint64_t p = load(4, 2, false);
  device_->set_observer(recorder_.observer());
  expect_done(submit("L", p, 8, 0), "L");
  EXPECT_EQ(recorder_.log(), std::vector<std::string>{"L:finished:1"});
}

// Unloading the program of a suspended job: the job still completes (it holds its program).
TEST_F(DeviceTest, UnloadingTheProgramOfASuspendedJobLetsItFinish) {
  const uint64_t pl = load(4), ph = load(2);
  uint64_t h = 0;
  DeviceResult unloaded, resubmitted;
  recorder_.set_action([&](const DeviceEvent& e, const std::string& n) {
    if (e.kind != Kind::kFunctionCallDone) return;
    if (n == "L" && e.function_calls == 1) h = submit("H", ph, 4, 255);
    if (n == "H") {
      unloaded = device_->unload(pl);  // L is suspended now
      std::vector<uint8_t> in(kBytes), out(kBytes);
      resubmitted = device_->submit(pl, {std::span<const uint8_t>(in)}, {std::span<uint8_t>(out)}, 255);
    }
  });
  device_->set_observer(recorder_.observer());
  const uint64_t l = submit("L", pl, 8, 0);
  expect_done(l, "L");
  expect_done(h, "H");
  EXPECT_TRUE(unloaded.ok()) << unloaded.message;
  EXPECT_EQ(resubmitted.status, DeviceStatus::kUnknownProgram);
  EXPECT_EQ(recorder_.order("preempted"), std::vector<std::string>{"L"});
}

// Destroying the device while a job is suspended: the destructor runs every job to its end.
// H holds the worker at its boundary (L suspended) until the destructor has begun.
TEST_F(DeviceTest, DestroyingTheDeviceFinishesSuspendedJobs) {
  const uint64_t pl = load(4), ph = load(2);
  Gate h_running, stopping;
  recorder_.set_action([&](const DeviceEvent& e, const std::string& n) {
    if (e.kind == Kind::kStopping) stopping.open();
    if (e.kind != Kind::kFunctionCallDone) return;
    if (n == "L" && e.function_calls == 1) submit("H", ph, 4, 255);
    if (n == "H") {
      h_running.open();
      EXPECT_TRUE(stopping.wait());
    }
  });
  device_->set_observer(recorder_.observer());
  submit("L", pl, 8, 0);
  EXPECT_TRUE(h_running.wait());
  device_.reset();  // no wait(): the destructor finishes H, resumes and finishes L
  EXPECT_EQ(recorder_.log(), (std::vector<std::string>{"L:call:1", "L:preempted:1", "H:call:1", "H:finished:2",
                                                       "L:resumed:1", "L:call:2", "L:call:3", "L:finished:4"}));
  for (const char* n : {"L", "H"}) EXPECT_EQ(data_[n].output, data_[n].expected) << n;
}

}  // namespace
}  // namespace openbpu::simulator
