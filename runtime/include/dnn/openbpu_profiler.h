/*
 * OpenBPU extension to the hbDNN runtime profiler (not part of the Horizon API; hb_dnn.h does
 * not declare it). The profiler is on when HB_DNN_PROFILER_LOG_PATH is set (non-empty) at the
 * first model load (hbDNNInitializeFromFiles / hbDNNInitializeFromDDR) of the process; it then
 * writes <path>/profiler.log and <path>/profiler.csv when the last packed handle is released
 * (hbDNNRelease) and at normal program exit (docs/runtime.md, "Profiler").
 *
 * Both functions are thread safe and return 0 or a negative hbDNNStatus
 * (hbDNNGetErrorDesc gives the detail).
 */
#ifndef OPENBPU_DNN_PROFILER_H_
#define OPENBPU_DNN_PROFILER_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Replaces what the first JSON object of profiler.log (and the running_condition / perf_result
 * blocks of profiler.csv) reports — by default the figures the library observed (inferences,
 * first submit to last completion, submitting threads) — with a benchmark's own figures, as
 * hrt_model_exec perf does. modelName must not be NULL (it is copied); times in ms.
 * No effect, and 0, when the profiler is off.
 */
int32_t openbpuDNNProfilerSetRunningCondition(const char *modelName, int32_t coreId, int64_t frameCount, double runTimeMs,
                                              int32_t threadNum, double averageLatencyMs, double fps);

/*
 * Writes profiler.log and profiler.csv now (atomically; the folder is created if missing).
 * HB_DNN_API_USE_ERROR when the profiler is off, HB_DNN_CAN_NOT_OPEN_FILE when a file cannot be
 * written.
 */
int32_t openbpuDNNProfilerFlush(void);

#ifdef __cplusplus
}
#endif

#endif /* OPENBPU_DNN_PROFILER_H_ */
