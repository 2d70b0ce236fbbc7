/*
 * ucp_ocr_app: a user's C program on the UCP-generation API (hobot/hb_ucp.h and
 * hobot/dnn/hb_dnn.h only). It loads models (PP-OCR det, cls, rec .hbm) into one packed handle
 * and runs sample i of every model as one task of sub-tasks (hbDNNInferV2 appending), on two
 * threads, each keeping two tasks in flight with completion callbacks and its own priority.
 * Every output is written raw to OUT_DIR/<model>/<sample>_out<k>.bin, for the test to compare
 * with the quantized model (dnn_model_check --ucp-outputs).
 *
 *   ucp_ocr_app OUT_DIR COUNT MODEL_FILE INPUT_DIR [MODEL_FILE INPUT_DIR ...]
 * INPUT_DIR holds float32 .npy files, one per sample (single-input models); the first COUNT in
 * name order are run. Exit status 0 on success, 1 on any failure (printed).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hobot/dnn/hb_dnn.h"
#include "hobot/hb_ucp.h"

#define MAX_MODELS 4
#define MAX_TENSORS 8
#define IN_FLIGHT 2

#define CHECK(call)                                                                             \
  do {                                                                                          \
    int32_t status_ = (call);                                                                   \
    if (status_ != 0) {                                                                         \
      fprintf(stderr, "ucp_ocr_app: %s failed: %s\n", #call, hbUCPGetErrorDesc(status_));       \
      exit(1);                                                                                  \
    }                                                                                           \
  } while (0)

typedef struct {
  hbDNNHandle_t handle;
  const char *name;
  int32_t inputs, outputs;
  char **files; /* COUNT sample paths */
} Model;

typedef struct {
  pthread_mutex_t mutex;
  pthread_cond_t cond;
  int done;
  int32_t status;
} Completion;

/* One task in flight: its tensors per model and its completion. */
typedef struct {
  hbUCPTaskHandle_t task;
  int sample;
  hbDNNTensor in[MAX_MODELS][MAX_TENSORS], out[MAX_MODELS][MAX_TENSORS];
  Completion completion;
} Slot;

static const char *g_out_dir;
static int g_count, g_models;
static Model g_model[MAX_MODELS];

static void fail(const char *what, const char *detail) {
  fprintf(stderr, "ucp_ocr_app: %s: %s\n", what, detail);
  exit(1);
}

static int by_name(const struct dirent **a, const struct dirent **b) { return strcmp((*a)->d_name, (*b)->d_name); }
static int is_npy(const struct dirent *e) {
  size_t n = strlen(e->d_name);
  return n > 4 && strcmp(e->d_name + n - 4, ".npy") == 0;
}

static char **sample_files(const char *dir) {
  struct dirent **list = NULL;
  int n = scandir(dir, &list, is_npy, by_name);
  if (n < g_count) fail(dir, "fewer .npy files than COUNT");
  char **files = calloc((size_t)g_count, sizeof *files);
  for (int i = 0; i < n; ++i) {
    if (i < g_count && asprintf(&files[i], "%s/%s", dir, list[i]->d_name) < 0) fail(dir, "out of memory");
    free(list[i]);
  }
  free(list);
  return files;
}

/* Reads a little-endian float32 .npy file of exactly `bytes` data bytes into `dst`. */
static void read_npy(const char *path, void *dst, int64_t bytes) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) fail(path, strerror(errno));
  unsigned char head[10];
  if (fread(head, 1, 10, f) != 10 || memcmp(head, "\x93NUMPY", 6) != 0) fail(path, "not a .npy file");
  long header = head[6] == 1 ? head[8] | head[9] << 8 : 0;
  if (head[6] != 1) {
    unsigned char more[2];
    if (fread(more, 1, 2, f) != 2) fail(path, "truncated header");
    header = head[8] | head[9] << 8 | more[0] << 16 | (long)more[1] << 24;
  }
  char *text = calloc(1, (size_t)header + 1);
  if (fread(text, 1, (size_t)header, f) != (size_t)header) fail(path, "truncated header");
  if (strstr(text, "'<f4'") == NULL || strstr(text, "'fortran_order': False") == NULL) fail(path, "not float32 C-order");
  free(text);
  if (fread(dst, 1, (size_t)bytes, f) != (size_t)bytes || fgetc(f) != EOF) fail(path, "data size differs from the input's");
  fclose(f);
}

static void write_file(const char *path, const void *data, int64_t bytes) {
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = fopen(tmp, "wb");
  if (f == NULL || fwrite(data, 1, (size_t)bytes, f) != (size_t)bytes || fclose(f) != 0) fail(tmp, "write failed");
  if (rename(tmp, path) != 0) fail(path, strerror(errno));
}

static void on_done(hbUCPTaskHandle_t task, int32_t status, void *userdata) {
  (void)task;
  Completion *c = userdata;
  pthread_mutex_lock(&c->mutex);
  c->done = 1;
  c->status = status;
  pthread_cond_signal(&c->cond);
  pthread_mutex_unlock(&c->mutex);
}

/* Allocates the slot's tensors for `sample`, fills and cleans the inputs, makes the task (one
 * sub-task per model) and submits it. */
static void start(Slot *s, int sample, int priority) {
  s->sample = sample;
  s->task = NULL;
  for (int m = 0; m < g_models; ++m) {
    const Model *model = &g_model[m];
    if (model->inputs != 1) fail(model->name, "this program feeds single-input models");
    hbDNNTensor *in = &s->in[m][0];
    CHECK(hbDNNGetInputTensorProperties(&in->properties, model->handle, 0));
    int64_t bytes = 4;
    for (int d = in->properties.validShape.numDimensions - 1; d >= 0; --d) {
      in->properties.stride[d] = bytes; /* dense data: the runtime pads */
      bytes *= in->properties.validShape.dimensionSize[d];
    }
    CHECK(hbUCPMallocCached(&in->sysMem, (uint64_t)bytes, 0));
    read_npy(model->files[sample], in->sysMem.virAddr, bytes);
    CHECK(hbUCPMemFlush(&in->sysMem, HB_SYS_MEM_CACHE_CLEAN));
    for (int k = 0; k < model->outputs; ++k) {
      hbDNNTensor *out = &s->out[m][k];
      CHECK(hbDNNGetOutputTensorProperties(&out->properties, model->handle, k));
      CHECK(hbUCPMallocCached(&out->sysMem, (uint64_t)out->properties.alignedByteSize, 0));
    }
    CHECK(hbDNNInferV2(&s->task, s->out[m], s->in[m], model->handle));
  }
  s->completion.done = 0;
  CHECK(hbUCPSetTaskDoneCb(s->task, on_done, &s->completion));
  hbUCPSchedParam sched;
  HB_UCP_INITIALIZE_SCHED_PARAM(&sched);
  sched.priority = priority;
  sched.backend = HB_UCP_BPU_CORE_ANY;
  CHECK(hbUCPSubmitTask(s->task, &sched));
}

/* Waits for the slot's callback, checks the task's status, writes and frees its outputs. */
static void finish(Slot *s) {
  pthread_mutex_lock(&s->completion.mutex);
  while (!s->completion.done) pthread_cond_wait(&s->completion.cond, &s->completion.mutex);
  pthread_mutex_unlock(&s->completion.mutex);
  CHECK(s->completion.status);
  CHECK(hbUCPWaitTaskDone(s->task, 0)); /* done already: returns the same result at once */
  for (int m = 0; m < g_models; ++m) {
    const Model *model = &g_model[m];
    const char *base = strrchr(model->files[s->sample], '/') + 1;
    for (int k = 0; k < model->outputs; ++k) {
      hbDNNTensor *out = &s->out[m][k];
      CHECK(hbUCPMemFlush(&out->sysMem, HB_SYS_MEM_CACHE_INVALIDATE));
      char path[4096];
      snprintf(path, sizeof path, "%s/%s/%.*s_out%d.bin", g_out_dir, model->name, (int)(strlen(base) - 4), base, k);
      write_file(path, out->sysMem.virAddr, out->properties.alignedByteSize);
      CHECK(hbUCPFree(&out->sysMem));
    }
    CHECK(hbUCPFree(&s->in[m][0].sysMem));
  }
  CHECK(hbUCPReleaseTask(s->task));
}

typedef struct {
  int first, priority;
} Worker;

static void *run_worker(void *arg) {
  const Worker *w = arg;
  Slot *slots = calloc(IN_FLIGHT, sizeof *slots);
  for (int i = 0; i < IN_FLIGHT; ++i) {
    pthread_mutex_init(&slots[i].completion.mutex, NULL);
    pthread_cond_init(&slots[i].completion.cond, NULL);
  }
  int started = 0, finished = 0;
  for (int sample = w->first; sample < g_count; sample += 2) {
    if (started - finished == IN_FLIGHT) finish(&slots[finished++ % IN_FLIGHT]);
    start(&slots[started++ % IN_FLIGHT], sample, w->priority);
  }
  while (finished < started) finish(&slots[finished++ % IN_FLIGHT]);
  free(slots);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 5 || argc % 2 != 1 || (argc - 3) / 2 > MAX_MODELS) {
    fprintf(stderr, "usage: ucp_ocr_app OUT_DIR COUNT MODEL_FILE INPUT_DIR [MODEL_FILE INPUT_DIR ...]\n");
    return 1;
  }
  g_out_dir = argv[1];
  g_count = atoi(argv[2]);
  g_models = (argc - 3) / 2;
  const char *files[MAX_MODELS];
  for (int m = 0; m < g_models; ++m) files[m] = argv[3 + 2 * m];
  printf("UCP %s, DNN %s, SoC %s\n", hbUCPGetVersion(), hbDNNGetVersion(), hbUCPGetSocName());
  hbDNNPackedHandle_t packed = NULL;
  CHECK(hbDNNInitializeFromFiles(&packed, files, g_models));
  const char **names = NULL;
  int32_t name_count = 0;
  CHECK(hbDNNGetModelNameList(&names, &name_count, packed));
  if (name_count != g_models) fail(argv[3], "each model file must hold one model");
  for (int m = 0; m < g_models; ++m) {
    Model *model = &g_model[m];
    model->name = names[m];
    CHECK(hbDNNGetModelHandle(&model->handle, packed, model->name));
    CHECK(hbDNNGetInputCount(&model->inputs, model->handle));
    CHECK(hbDNNGetOutputCount(&model->outputs, model->handle));
    if (model->outputs > MAX_TENSORS) fail(model->name, "too many outputs");
    model->files = sample_files(argv[4 + 2 * m]);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/%s", g_out_dir, model->name);
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) fail(dir, strerror(errno));
    const char *desc = NULL;
    uint32_t size = 0;
    int32_t type = 0;
    CHECK(hbDNNGetModelDesc(&desc, &size, &type, model->handle));
    printf("%s: %d input(s), %d output(s), description %s\n", model->name, model->inputs, model->outputs,
           type == HB_DNN_DESC_TYPE_STRING ? desc : "(none)");
  }
  Worker workers[2] = {{0, HB_UCP_PRIORITY_LOWEST}, {1, 200}};
  pthread_t threads[2];
  for (int t = 0; t < 2; ++t) {
    if (pthread_create(&threads[t], NULL, run_worker, &workers[t]) != 0) fail("pthread_create", "failed");
  }
  for (int t = 0; t < 2; ++t) pthread_join(threads[t], NULL);
  CHECK(hbDNNRelease(packed));
  printf("ucp_ocr_app: %d sample(s) of %d model(s) written to %s\n", g_count, g_models, g_out_dir);
  return 0;
}
