/*
 * async_multi_model: several models in one packed handle, run asynchronously from two threads
 * with different priorities.
 *
 *   async_multi_model [--rounds N] [--in-flight K] MODEL_FILE MODEL_FILE...
 *
 * All the files' models are loaded by one hbDNNInitializeFromFiles call (model names must be
 * unique). Thread "urgent" runs the first model at priority HB_DNN_PRIORITY_HIGHEST - 55 (200),
 * one task at a time: a latency-critical stream. Thread "batch" runs every other model at
 * priority HB_DNN_PRIORITY_LOWEST: each round it submits K tasks (round-robin over its models)
 * without waiting, then waits for all of them, so several tasks of several models are in
 * flight at once and the scheduler orders them by priority. Each thread runs N rounds.
 *
 * Every input is a fixed pattern (image inputs: every byte 128, a mid-grey picture; other
 * inputs: zeros), so every inference of a model must give the same bytes: the program checks
 * that each task's outputs equal the model's first result (no cross-talk between concurrent
 * tasks), and prints, per model, its priority, inferences, mean latency and the top-5 of
 * output 0. Exit status 0 when every call succeeded and every result matched, 1 otherwise.
 */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dnn/hb_dnn.h"
#include "dnn/hb_sys.h"

#define MAX_IN_FLIGHT 8 /* tasks one thread has submitted and not yet waited for */

static void fail(const char* format, ...) {
  va_list args;
  va_start(args, format);
  fputs("async_multi_model: error: ", stderr);
  vfprintf(stderr, format, args);
  fputc('\n', stderr);
  va_end(args);
  exit(1);
}

/* A failing hbDNN / hbSys call: the call, the library's description, and exit(1) (the other
 * thread's tasks are abandoned with the process). */
#define CHECK(call)                                                                    \
  do {                                                                                 \
    int32_t rc_ = (call);                                                              \
    if (rc_ != 0) fail("%s failed: %s (%d)", #call, hbDNNGetErrorDesc(rc_), (int)rc_); \
  } while (0)

/* One model: its handle, its inputs (shared, read-only, by all its tasks), one set of outputs
 * per task slot, and its first result (every later one must equal it). */
typedef struct {
  const char* name;
  hbDNNHandle_t handle;
  int32_t priority;
  int32_t input_count, output_count;
  hbDNNTensor* inputs;
  hbDNNTensor* outputs[MAX_IN_FLIGHT];
  unsigned char** first; /* per output: alignedByteSize bytes, or NULL before the first result */
  long inferences, mismatches;
  double total_ms;
} Model;

typedef struct {
  const char* label;
  Model** models;
  int model_count;
  int priority, in_flight, rounds;
} Worker;

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int is_image(int32_t type) {
  return type <= HB_DNN_IMG_TYPE_BGR;
}

static void prepare(Model* m, int slots) {
  CHECK(hbDNNGetInputCount(&m->input_count, m->handle));
  CHECK(hbDNNGetOutputCount(&m->output_count, m->handle));
  for (int32_t i = 0; i < m->input_count; ++i) {
    int32_t source = 0;
    CHECK(hbDNNGetInputSource(&source, m->handle, i));
    if (source == HB_DNN_INPUT_FROM_RESIZER)
      fail("model %s takes input %d from the resizer (hbDNNRoiInfer); this sample runs hbDNNInfer",
           m->name, (int)i);
  }
  m->inputs = calloc((size_t)m->input_count, sizeof *m->inputs);
  m->first = calloc((size_t)m->output_count, sizeof *m->first);
  if (!m->inputs || !m->first) fail("out of memory");
  for (int32_t i = 0; i < m->input_count; ++i) {
    hbDNNTensor* t = &m->inputs[i];
    CHECK(hbDNNGetInputTensorProperties(&t->properties, m->handle, i));
    CHECK(hbSysAllocCachedMem(&t->sysMem[0], (uint32_t)t->properties.alignedByteSize));
    /* The fixed pattern, in the model's own (aligned) layout: padding bytes get it too. */
    memset(t->sysMem[0].virAddr, is_image(t->properties.tensorType) ? 128 : 0,
           (size_t)t->properties.alignedByteSize);
    CHECK(hbSysFlushMem(&t->sysMem[0], HB_SYS_MEM_CACHE_CLEAN));
  }
  for (int s = 0; s < slots; ++s) {
    m->outputs[s] = calloc((size_t)m->output_count, sizeof **m->outputs);
    if (!m->outputs[s]) fail("out of memory");
    for (int32_t i = 0; i < m->output_count; ++i) {
      hbDNNTensor* t = &m->outputs[s][i];
      CHECK(hbDNNGetOutputTensorProperties(&t->properties, m->handle, i));
      CHECK(hbSysAllocCachedMem(&t->sysMem[0], (uint32_t)t->properties.alignedByteSize));
    }
  }
}

/* After a task of `m` wrote slot `s`: its outputs against the model's first result. */
static void check_result(Model* m, int s) {
  for (int32_t i = 0; i < m->output_count; ++i) {
    hbDNNTensor* t = &m->outputs[s][i];
    CHECK(hbSysFlushMem(&t->sysMem[0], HB_SYS_MEM_CACHE_INVALIDATE));
    size_t bytes = (size_t)t->properties.alignedByteSize;
    if (!m->first[i]) {
      m->first[i] = malloc(bytes);
      if (!m->first[i]) fail("out of memory");
      memcpy(m->first[i], t->sysMem[0].virAddr, bytes);
    } else if (memcmp(m->first[i], t->sysMem[0].virAddr, bytes) != 0) {
      ++m->mismatches;
    }
  }
}

static void* run_worker(void* arg) {
  Worker* w = arg;
  int next = 0; /* round-robin over the worker's models */
  for (int round = 0; round < w->rounds; ++round) {
    hbDNNTaskHandle_t tasks[MAX_IN_FLIGHT];
    Model* owner[MAX_IN_FLIGHT];
    int slot[MAX_IN_FLIGHT];
    double start = now_ms();
    /* Submit K tasks without waiting; the round's k-th task writes its model's slot k. */
    for (int k = 0; k < w->in_flight; ++k) {
      Model* m = w->models[next++ % w->model_count];
      hbDNNInferCtrlParam control;
      HB_DNN_INITIALIZE_INFER_CTRL_PARAM(&control);
      control.priority = w->priority;
      tasks[k] = NULL;
      owner[k] = m;
      slot[k] = k;
      hbDNNTensor* outputs = m->outputs[slot[k]];
      CHECK(hbDNNInfer(&tasks[k], &outputs, m->inputs, m->handle, &control));
    }
    /* Then wait for each, check it, release it. */
    for (int k = 0; k < w->in_flight; ++k) {
      CHECK(hbDNNWaitTaskDone(tasks[k], 0));
      double done = now_ms();
      check_result(owner[k], slot[k]);
      CHECK(hbDNNReleaseTask(tasks[k]));
      owner[k]->total_ms += done - start;
      ++owner[k]->inferences;
    }
  }
  return NULL;
}

/* Element `index` (row-major over validShape) of an output as float, read through `stride`
 * and dequantized (SCALE, SHIFT; per channel along quantizeAxis). */
static float output_value(const hbDNNTensorProperties* p, const unsigned char* base, size_t index) {
  size_t offset = 0, rest = index;
  int32_t channel = 0;
  for (int32_t d = p->validShape.numDimensions - 1; d >= 0; --d) {
    size_t i = rest % (size_t)p->validShape.dimensionSize[d];
    rest /= (size_t)p->validShape.dimensionSize[d];
    offset += i * (size_t)p->stride[d];
    if (d == p->quantizeAxis) channel = (int32_t)i;
  }
  const void* at = base + offset;
  double q;
  switch (p->tensorType) {
    case HB_DNN_TENSOR_TYPE_F32: return *(const float*)at;
    case HB_DNN_TENSOR_TYPE_S8: q = *(const int8_t*)at; break;
    case HB_DNN_TENSOR_TYPE_U8: q = *(const uint8_t*)at; break;
    case HB_DNN_TENSOR_TYPE_S16: q = *(const int16_t*)at; break;
    case HB_DNN_TENSOR_TYPE_S32: q = *(const int32_t*)at; break;
    default: return NAN;
  }
  if (p->quantiType == SCALE && p->scale.scaleLen > 0) {
    int32_t i = p->scale.scaleLen > 1 ? channel : 0;
    double zero = p->scale.zeroPointLen > i ? p->scale.zeroPointData[i] : 0;
    return (float)((q - zero) * p->scale.scaleData[i]);
  }
  if (p->quantiType == SHIFT && p->shift.shiftLen > 0) {
    return (float)(q / (double)(1ULL << p->shift.shiftData[p->shift.shiftLen > 1 ? channel : 0]));
  }
  return (float)q;
}

static void print_top5(const Model* m) {
  const hbDNNTensorProperties* p = &m->outputs[0][0].properties;
  size_t n = 1;
  for (int32_t d = 0; d < p->validShape.numDimensions; ++d)
    n *= (size_t)p->validShape.dimensionSize[d];
  float* v = malloc(n * sizeof *v);
  if (!v) fail("out of memory");
  for (size_t i = 0; i < n; ++i) v[i] = output_value(p, m->first[0], i);
  for (int k = 0; k < 5 && (size_t)k < n; ++k) {
    size_t best = 0;
    for (size_t i = 1; i < n; ++i) {
      if (v[i] > v[best] || isnan(v[best])) best = i;
    }
    printf("  %s %d: index %zu value %.9g\n", m->name, k + 1, best, v[best]);
    v[best] = -INFINITY;
  }
  free(v);
}

int main(int argc, char** argv) {
  int rounds = 20, in_flight = 4;
  const char* files[64];
  int file_count = 0;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
      rounds = atoi(argv[++i]);
      if (rounds <= 0) fail("--rounds takes a positive number");
    } else if (strcmp(argv[i], "--in-flight") == 0 && i + 1 < argc) {
      in_flight = atoi(argv[++i]);
      if (in_flight <= 0 || in_flight > MAX_IN_FLIGHT)
        fail("--in-flight takes a number in [1, %d]", MAX_IN_FLIGHT);
    } else if (argv[i][0] == '-' && argv[i][1]) {
      fail("unknown option '%s'", argv[i]);
    } else if (file_count < 64) {
      files[file_count++] = argv[i];
    } else {
      fail("more than 64 model files");
    }
  }
  if (file_count < 1) {
    fprintf(stderr,
            "usage: async_multi_model [--rounds N] [--in-flight K] MODEL_FILE MODEL_FILE...\n");
    return 1;
  }

  hbPackedDNNHandle_t packed = NULL;
  CHECK(hbDNNInitializeFromFiles(&packed, files, file_count));
  const char** names = NULL;
  int32_t model_count = 0;
  CHECK(hbDNNGetModelNameList(&names, &model_count, packed));
  if (model_count < 2)
    fail("%d model in the file(s); this sample runs two or more", (int)model_count);
  printf("hbDNN %s: %d models from %d file(s)\n", hbDNNGetVersion(), (int)model_count, file_count);

  Model* models = calloc((size_t)model_count, sizeof *models);
  Model** batch = calloc((size_t)model_count, sizeof *batch);
  if (!models || !batch) fail("out of memory");
  for (int32_t i = 0; i < model_count; ++i) {
    models[i].name = names[i];
    models[i].priority = i == 0 ? HB_DNN_PRIORITY_HIGHEST - 55 : HB_DNN_PRIORITY_LOWEST;
    CHECK(hbDNNGetModelHandle(&models[i].handle, packed, names[i]));
    prepare(&models[i], i == 0 ? 1 : in_flight);
    if (i > 0) batch[i - 1] = &models[i];
  }

  Model* urgent_models[1] = {&models[0]};
  Worker urgent = {"urgent", urgent_models, 1, models[0].priority, 1, rounds * in_flight};
  Worker background = {"batch", batch, model_count - 1, HB_DNN_PRIORITY_LOWEST, in_flight, rounds};
  pthread_t threads[2];
  double start = now_ms();
  if (pthread_create(&threads[0], NULL, run_worker, &urgent) != 0 ||
      pthread_create(&threads[1], NULL, run_worker, &background) != 0) {
    fail("cannot start the threads");
  }
  pthread_join(threads[0], NULL);
  pthread_join(threads[1], NULL);
  double wall = now_ms() - start;

  long mismatches = 0;
  for (int32_t i = 0; i < model_count; ++i) {
    Model* m = &models[i];
    printf("model %s: thread %s, priority %d, %ld inferences, mean latency %.3f ms, results %s\n",
           m->name, i == 0 ? urgent.label : background.label, (int)m->priority, m->inferences,
           m->inferences ? m->total_ms / (double)m->inferences : 0.0,
           m->mismatches ? "DIFFER between runs" : "identical in every run");
    print_top5(m);
    mismatches += m->mismatches;
  }
  printf("wall time %.1f ms\n", wall);

  for (int32_t i = 0; i < model_count; ++i) {
    Model* m = &models[i];
    for (int32_t j = 0; j < m->input_count; ++j) CHECK(hbSysFreeMem(&m->inputs[j].sysMem[0]));
    for (int s = 0; s < MAX_IN_FLIGHT && m->outputs[s]; ++s) {
      for (int32_t j = 0; j < m->output_count; ++j)
        CHECK(hbSysFreeMem(&m->outputs[s][j].sysMem[0]));
      free(m->outputs[s]);
    }
    for (int32_t j = 0; j < m->output_count; ++j) free(m->first[j]);
    free(m->first);
    free(m->inputs);
  }
  free(models);
  free(batch);
  CHECK(hbDNNRelease(packed));
  if (mismatches) {
    fprintf(stderr, "async_multi_model: error: %ld results differed from their model's first\n",
            mismatches);
    return 1;
  }
  return 0;
}
