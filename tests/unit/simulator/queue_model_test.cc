// The queue model (queue_model.h): hand-computed timelines of jobs on per-core queues, the
// scheduling rules it shares with the device (device.h), input errors, and the function-call
// split of a real decoded program.
#include "openbpu/simulator/queue_model.h"

#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>

#include "openbpu/simulator/isa.h"
#include "openbpu/simulator/march.h"
#include "openbpu/simulator/program.h"
#include "openbpu/simulator/timing.h"
#include "simulator/lut_chain_program.h"

namespace openbpu::simulator {
namespace {

QueuedJob job(std::vector<uint64_t> calls, uint64_t submit, int priority = 0, int core = kAnyCore) {
  QueuedJob j;
  j.function_calls = std::move(calls);
  j.submit_cycle = submit;
  j.priority = priority;
  j.core = core;
  return j;
}

QueueReport run(const std::vector<QueuedJob>& jobs, int cores) {
  QueueReport r = simulate_queues(jobs, cores);
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.jobs.size(), jobs.size());
  return r;
}

void expect_job(const QueueReport& r, size_t i, int core, uint64_t start, uint64_t end,
                uint64_t wait, int preemptions = 0) {
  SCOPED_TRACE("job " + std::to_string(i));
  ASSERT_LT(i, r.jobs.size());
  EXPECT_EQ(r.jobs[i].core, core);
  EXPECT_EQ(r.jobs[i].start_cycle, start);
  EXPECT_EQ(r.jobs[i].end_cycle, end);
  EXPECT_EQ(r.jobs[i].wait_cycles, wait);
  EXPECT_EQ(r.jobs[i].preemptions, preemptions);
}

// One core, three jobs arriving while the first runs: they run in arrival order, each waits for
// all before it.
TEST(QueueModel, FifoOnOneCoreWaitsAddUp) {
  const QueueReport r = run({job({100}, 0), job({50}, 10), job({30}, 20)}, 1);
  expect_job(r, 0, 0, 0, 100, 0);
  expect_job(r, 1, 0, 100, 150, 90);
  expect_job(r, 2, 0, 150, 180, 130);
  EXPECT_EQ(r.wait_cycles, 220u);
  EXPECT_EQ(r.makespan_cycles, 180u);
  EXPECT_DOUBLE_EQ(r.utilisation, 1.0);
  ASSERT_EQ(r.per_core.size(), 1u);
  EXPECT_EQ(r.per_core[0].busy_cycles, 180u);
  EXPECT_EQ(r.per_core[0].jobs, 3);
}

// Two cores, "any core" jobs all submitted at 0: each joins the core where it starts earliest
// (ties to core 0). After the long job 0 on core 0, jobs 2 and 3 both find core 1 earlier.
TEST(QueueModel, AnyCoreJobsBalanceOverTwoCores) {
  const QueueReport r = run({job({300}, 0), job({100}, 0), job({100}, 0), job({100}, 0)}, 2);
  expect_job(r, 0, 0, 0, 300, 0);
  expect_job(r, 1, 1, 0, 100, 0);
  expect_job(r, 2, 1, 100, 200, 100);
  expect_job(r, 3, 1, 200, 300, 200);
  EXPECT_EQ(r.makespan_cycles, 300u);
  EXPECT_DOUBLE_EQ(r.utilisation, 1.0);
  EXPECT_EQ(r.per_core[0].jobs, 1);
  EXPECT_EQ(r.per_core[1].jobs, 3);
  EXPECT_EQ(r.per_core[1].busy_cycles, 300u);
}

// Equal work, equal submission: ties go to the lowest core index, then alternate.
TEST(QueueModel, AnyCoreTiesGoToTheLowestCore) {
  const QueueReport r = run({job({100}, 0), job({100}, 0), job({100}, 0), job({100}, 0)}, 2);
  expect_job(r, 0, 0, 0, 100, 0);
  expect_job(r, 1, 1, 0, 100, 0);
  expect_job(r, 2, 0, 100, 200, 100);
  expect_job(r, 3, 1, 100, 200, 100);
}

// A job bound to core 0 waits behind core 0's job although core 1 is idle all along.
TEST(QueueModel, CoreAffinityWaitsWhileAnotherCoreIdles) {
  const QueueReport r = run({job({100}, 0, 0, 0), job({50}, 10, 0, 0)}, 2);
  expect_job(r, 0, 0, 0, 100, 0);
  expect_job(r, 1, 0, 100, 150, 90);
  EXPECT_EQ(r.per_core[1].busy_cycles, 0u);
  EXPECT_EQ(r.per_core[1].jobs, 0);
  EXPECT_DOUBLE_EQ(r.utilisation, 150.0 / 300.0);
}

// An "any core" job joins a queue when submitted and stays there: a job arriving later on the
// other core's queue does not move it, so it waits behind core 0's long job while core 1 runs
// the later, bound job and then idles.
TEST(QueueModel, AnyCoreJobDoesNotMoveOnceQueued) {
  // job 0 on core 0 (0..100); job 1 on core 1 (0..100); job 2 (any, at 10) starts at 100 on
  // either: ties to core 0. Job 3, bound to core 1, arrives at 20 and runs 100..110 on core 1.
  const QueueReport r =
      run({job({100}, 0, 0, 0), job({100}, 0, 0, 1), job({100}, 10), job({10}, 20, 0, 1)}, 2);
  expect_job(r, 2, 0, 100, 200, 90);
  expect_job(r, 3, 1, 100, 110, 80);
  EXPECT_EQ(r.makespan_cycles, 200u);
}

// A higher priority overtakes queued jobs but never interrupts a function call: the running
// single-call job ends first, then the priority-200 job, then the earlier priority-0 job.
TEST(QueueModel, PriorityOvertakesQueuedJobsButNotARunningCall) {
  const QueueReport r = run({job({100}, 0), job({50}, 10), job({30}, 20, 200)}, 1);
  expect_job(r, 0, 0, 0, 100, 0);
  expect_job(r, 2, 0, 100, 130, 80);
  expect_job(r, 1, 0, 130, 180, 120);
  EXPECT_EQ(r.preemptions, 0u);
}

// Even a priority-255 job waits for the end of the call in progress (one 100-cycle call).
TEST(QueueModel, PreemptingJobWaitsForTheCallInProgress) {
  const QueueReport r = run({job({100}, 0), job({10}, 10, kQueuePreemptPriority)}, 1);
  expect_job(r, 0, 0, 0, 100, 0);
  expect_job(r, 1, 0, 100, 110, 90);
  EXPECT_EQ(r.preemptions, 0u);
}

// Below 255, priority never preempts (device.h): a priority-254 arrival waits for all calls of
// the running priority-0 job.
TEST(QueueModel, PriorityBelow255DoesNotPreempt) {
  const QueueReport r = run({job({50, 50}, 0), job({10}, 10, 254)}, 1);
  expect_job(r, 0, 0, 0, 100, 0);
  expect_job(r, 1, 0, 100, 110, 90);
}

// A long three-call priority-0 job is suspended at its first boundary after a priority-255
// arrival (cycle 80, the arrival was at 50), resumes when the preempting job ends, and still goes
// before job 2, which was queued before the preemption (suspended jobs resume first).
TEST(QueueModel, PreemptionAtAFunctionCallBoundary) {
  const QueueReport r =
      run({job({40, 40, 40}, 0), job({25}, 50, kQueuePreemptPriority), job({10}, 5)}, 1);
  expect_job(r, 0, 0, 0, 145, 25, 1);
  expect_job(r, 1, 0, 80, 105, 30);
  expect_job(r, 2, 0, 145, 155, 140);
  EXPECT_EQ(r.preemptions, 1u);
  EXPECT_EQ(r.per_core[0].busy_cycles, 155u);
}

// A suspended job goes on before any queued job below priority 255 starts, even one of a higher
// priority than its own (device.h): job 2 (priority 100) overtook nothing that was running, and
// waits until the suspended priority-0 job ends.
TEST(QueueModel, SuspendedJobResumesBeforeHigherPriorityQueuedJobs) {
  const QueueReport r =
      run({job({40, 40}, 0), job({25}, 10, kQueuePreemptPriority), job({10}, 5, 100)}, 1);
  expect_job(r, 1, 0, 40, 65, 30);
  expect_job(r, 0, 0, 0, 105, 25, 1);
  expect_job(r, 2, 0, 105, 115, 100);
}

// An arrival at the very cycle a call ends is seen at that boundary.
TEST(QueueModel, ArrivalAtTheBoundaryCyclePreemptsThere) {
  const QueueReport r = run({job({40, 40}, 0), job({25}, 40, kQueuePreemptPriority)}, 1);
  expect_job(r, 0, 0, 0, 105, 25, 1);
  expect_job(r, 1, 0, 40, 65, 0);
}

// A priority-255 job is never preempted, not even by another one: they run in submission order.
TEST(QueueModel, PreemptingJobsAreNotPreempted) {
  const QueueReport r =
      run({job({40, 40}, 0, kQueuePreemptPriority), job({25}, 10, kQueuePreemptPriority)}, 1);
  expect_job(r, 0, 0, 0, 80, 0);
  expect_job(r, 1, 0, 80, 105, 70);
}

// Equal priority: submit cycle first, then job index, whatever the order of the list.
TEST(QueueModel, EqualPriorityIsFifoBySubmitCycleThenIndex) {
  const QueueReport r =
      run({job({100}, 0, 5), job({10}, 30, 5), job({10}, 20, 5), job({10}, 20, 5)}, 1);
  expect_job(r, 2, 0, 100, 110, 80);
  expect_job(r, 3, 0, 110, 120, 90);
  expect_job(r, 1, 0, 120, 130, 90);
}

// Closed-loop clients: each resubmits as soon as its previous frame ends (`after`). Two clients,
// three frames each, one core: the core never idles and each frame waits for the other client's.
TEST(QueueModel, ClosedLoopClientsThroughAfter) {
  std::vector<QueuedJob> jobs;
  for (int frame = 0; frame < 3; ++frame) {
    for (int client = 0; client < 2; ++client) {
      QueuedJob j = job({100}, 0);
      if (frame > 0) j.after = (frame - 1) * 2 + client;
      jobs.push_back(j);
    }
  }
  const QueueReport r = run(jobs, 1);
  for (size_t i = 0; i < jobs.size(); ++i) {
    expect_job(r, i, 0, 100 * i, 100 * (i + 1), i == 0 ? 0 : 100);
  }
  EXPECT_EQ(r.jobs[2].submit_cycle, 100u);
  EXPECT_EQ(r.jobs[5].submit_cycle, 400u);
  EXPECT_EQ(r.makespan_cycles, 600u);
  EXPECT_DOUBLE_EQ(r.utilisation, 1.0);
}

// `after` plus a delay: submitted that many cycles after the predecessor ends.
TEST(QueueModel, AfterAddsTheSubmitCycleAsADelay) {
  QueuedJob second = job({10}, 15);
  second.after = 0;
  const QueueReport r = run({job({100}, 5), second}, 1);
  expect_job(r, 1, 0, 120, 130, 0);
  EXPECT_EQ(r.first_submit_cycle, 5u);
  EXPECT_EQ(r.makespan_cycles, 125u);
  EXPECT_DOUBLE_EQ(r.utilisation, 110.0 / 125.0);
}

// Calls of 0 cycles end at the cycle they start; a successor released then arrives at that
// cycle and queues behind the job submitted with it.
TEST(QueueModel, ZeroCycleCalls) {
  QueuedJob third = job({0}, 0);
  third.after = 0;
  const QueueReport r = run({job({0}, 5), job({0, 10}, 5), third}, 1);
  expect_job(r, 0, 0, 5, 5, 0);
  expect_job(r, 1, 0, 5, 15, 0);
  expect_job(r, 2, 0, 15, 15, 10);
  EXPECT_EQ(r.jobs[2].submit_cycle, 5u);
}

TEST(QueueModel, NoJobs) {
  const QueueReport r = run({}, 2);
  EXPECT_TRUE(r.jobs.empty());
  ASSERT_EQ(r.per_core.size(), 2u);
  EXPECT_EQ(r.per_core[0].busy_cycles, 0u);
  EXPECT_EQ(r.makespan_cycles, 0u);
  EXPECT_EQ(r.utilisation, 0.0);
}

TEST(QueueModel, BadInputIsAnErrorNamingTheRule) {
  auto error_of = [](const std::vector<QueuedJob>& jobs, int cores) {
    const QueueReport r = simulate_queues(jobs, cores);
    EXPECT_FALSE(r.ok);
    EXPECT_TRUE(r.jobs.empty());
    return r.error;
  };
  EXPECT_EQ(error_of({job({10}, 0)}, 0), "the BPU has 0 cores; it needs at least 1");
  EXPECT_EQ(error_of({}, -1), "the BPU has -1 cores; it needs at least 1");
  EXPECT_EQ(error_of({job({10}, 0), job({10}, 0, 0, 2)}, 2),
            "job 1: core 2 is out of range [0, 2) (or kAnyCore = -1)");
  EXPECT_EQ(error_of({job({10}, 0, 0, -2)}, 2),
            "job 0: core -2 is out of range [0, 2) (or kAnyCore = -1)");
  EXPECT_EQ(error_of({job({10}, 0, 256)}, 1), "job 0: priority 256 is outside [0, 255]");
  EXPECT_EQ(error_of({job({10}, 0, -1)}, 1), "job 0: priority -1 is outside [0, 255]");
  EXPECT_EQ(error_of({job({}, 0)}, 1), "job 0: has no function call; a job runs at least one");
  QueuedJob self = job({10}, 0);
  self.after = 0;
  EXPECT_EQ(error_of({self}, 1),
            "job 0: after 0 must name an earlier job (in [0, 0)) or be kNoPredecessor = -1");
}

// The march's core count: bernoulli2 has 2 cores, bayes-e 1.
TEST(QueueModel, MarchGivesTheCoreCount) {
  const std::vector<QueuedJob> jobs{job({10}, 0, 0, 1)};
  const QueueReport two = simulate_queues(jobs, march_spec(March::kBernoulli2));
  ASSERT_TRUE(two.ok) << two.error;
  EXPECT_EQ(two.cores, 2);
  EXPECT_EQ(two.jobs[0].core, 1);
  const QueueReport one = simulate_queues(jobs, march_spec(March::kBayesE));
  EXPECT_FALSE(one.ok);
  EXPECT_EQ(one.error, "job 0: core 1 is out of range [0, 1) (or kAnyCore = -1)");
}

TEST(QueueModel, Json) {
  const MarchSpec& march = march_spec(March::kBayesE);
  const std::vector<QueuedJob> jobs{job({100}, 0), job({50}, 10)};
  EXPECT_EQ(
      queue_json(simulate_queues(jobs, 1), march),
      "{\"march\": \"bayes-e\", \"clock_mhz\": 1000, \"cores\": 1, \"first_submit_cycle\": 0, "
      "\"makespan_cycles\": 150, \"makespan_us\": 0.15, \"utilisation\": 1, \"preemptions\": 0, "
      "\"wait_cycles\": 90, \"jobs\": [{\"index\": 0, \"core\": 0, \"submit_cycle\": 0, "
      "\"start_cycle\": 0, "
      "\"end_cycle\": 100, \"wait_cycles\": 0, \"preemptions\": 0}, {\"index\": 1, \"core\": 0, "
      "\"submit_cycle\": 10, \"start_cycle\": 100, \"end_cycle\": 150, \"wait_cycles\": 90, "
      "\"preemptions\": "
      "0}], \"per_core\": [{\"core\": 0, \"busy_cycles\": 150, \"jobs\": 2}]}");
  EXPECT_EQ(queue_json(simulate_queues(jobs, 0), march),
            "{\"march\": \"bayes-e\", \"error\": \"the BPU has 0 cores; it needs at least 1\"}");
}

// ------------------------------------------------------------------ a real decoded program

// Function calls of 1, 2, 3, ... LUTs (so the calls differ), each behind a FunctionBegin unless
// `boundaries` is false, ping-ponging between two int8 buffers after the table; decoded and
// verified as the runtime would.
Program lut_calls_program(uint32_t calls, bool boundaries) {
  const Program p = testing::lut_chain(
      calls, [](uint32_t c) { return c + 1; }, boundaries, /*alternate_on_chip=*/true);
  const std::vector<uint8_t> table(testing::kTableBytes, 7);
  DecodeResult d = decode_program(encode_program(p), table);
  EXPECT_TRUE(d.ok) << d.error;
  return d.program;
}

TEST(QueueModelProgram, FunctionCallsSumToTheEstimate) {
  for (const MarchSpec& march : all_marches()) {
    SCOPED_TRACE(std::string(march.name));
    const Program p = lut_calls_program(4, true);
    ASSERT_EQ(p.instructions.size(), 4u + 1 + 2 + 3 + 4);
    const std::vector<uint64_t> calls = function_call_cycles(p, march);
    ASSERT_EQ(calls.size(), 4u);
    const ProgramEstimate e = estimate_program(p, march);
    EXPECT_EQ(std::accumulate(calls.begin(), calls.end(), uint64_t{0}), e.cycles);
    // Call c holds c + 1 LUTs after its FunctionBegin (which costs the march's
    // function_call_cycles).
    size_t i = 0;
    for (size_t c = 0; c < calls.size(); ++c) {
      uint64_t expected = e.instructions[i++].cycles;
      EXPECT_EQ(expected, static_cast<uint64_t>(march.function_call_cycles));
      for (size_t k = 0; k <= c; ++k) expected += e.instructions[i++].cycles;
      EXPECT_EQ(calls[c], expected) << "call " << c;
    }
    EXPECT_LT(calls[0], calls[3]);
  }
}

TEST(QueueModelProgram, ProgramWithoutFunctionBeginIsOneCall) {
  const MarchSpec& march = march_spec(March::kBernoulli2);
  const Program p = lut_calls_program(3, false);
  const std::vector<uint64_t> calls = function_call_cycles(p, march, 2);
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0], estimate_program(p, march, 2).cycles);
  EXPECT_TRUE(function_call_cycles(Program{}, march).empty());
}

// The program's calls as a job: one job alone on the core runs exactly the estimate's cycles.
TEST(QueueModelProgram, AJobOfTheProgramTakesTheEstimate) {
  const MarchSpec& march = march_spec(March::kBayesE);
  const Program p = lut_calls_program(3, true);
  QueuedJob j;
  j.function_calls = function_call_cycles(p, march);
  const QueueReport r = simulate_queues(std::vector<QueuedJob>{j}, march);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.jobs[0].end_cycle, estimate_program(p, march).cycles);
}

}  // namespace
}  // namespace openbpu::simulator
