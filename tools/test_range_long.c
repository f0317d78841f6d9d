/*
 * ct_range_each (report_ranges.c) on ranges holding more calls than fit in memory, on
 * a trace written here. Thread 1: one outermost "train" range around 150,000 calls;
 * inside it "epoch" ranges (depth 1) of 70,000 calls each, the first two epochs, then
 * 10,000 calls directly in train; inside each epoch a "step" range (depth 2) around
 * every 1,000 calls. Every 7th call is a synchronous copy whose GPU record comes before
 * its call; the other calls' kernels have their GPU record 3 calls late (so a step's
 * last calls are still pending when it closes). Thread 2 launches 20,000 kernels in
 * one "side" range, its records interleaved with thread 1's. Every range must get
 * exactly the GPU work of the calls made inside it: the old queue kept 65,536 calls
 * per thread and lost the others' attribution. Built twice: with the default
 * CT_RANGE_QUEUE_MEM, and with 4, where every call but the newest goes through the
 * temporary file (calls still waiting for their GPU record too, and steps claim calls
 * there).
 * usage: test_range_long DIR (a scratch directory)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "range_queue.h"
#include "report.h"

#include "test_check.h"
#include "test_trace.h"

#define T0 1000000000ull
#define CALLS 150000ull  /* thread 1's calls, all in train */
#define EPOCH 70000ull   /* calls per epoch (two epochs, then CALLS - 2 EPOCH in train) */
#define STEP 1000ull     /* calls per step */
#define SIDE 20000ull    /* thread 2's calls, all in its range */
#define LATE 3           /* a kernel's GPU record comes this many calls later */

enum { S_API = 1, S_KERNEL, S_TRAIN, S_EPOCH, S_STEP, S_SIDE };

/* Call i of thread tid: begins at 4 us intervals; its GPU work on stream tid. */
static uint64_t call_begin(uint64_t tid, uint64_t i) { return T0 + i * 4000 + (tid - 1) * 1000; }
static uint64_t gpu_ns_of(uint64_t i) { return 100 + i % 37; }
static int is_copy(uint64_t tid, uint64_t i) { return tid == 1 && i % 7 == 0; }
static uint64_t corr_of(uint64_t tid, uint64_t i) { return tid * 1000000 + i + 1; }

static void add_gpu(ct_file_writer *w, uint64_t tid, uint64_t i) {
  ct_record r = {.kind = CT_KIND_GPU};
  uint64_t start = call_begin(tid, i) + 200;
  r.u.gpu = (struct ct_gpu){.corr = corr_of(tid, i), .stream = tid, .start_ns = start,
                            .end_ns = start + gpu_ns_of(i),
                            .type = is_copy(tid, i) ? CT_GPU_MEMCPY : CT_GPU_KERNEL,
                            .name = S_KERNEL};
  test_trace_add(w, &r);
}

/* Call i of thread tid, and the GPU records due with it. */
static void add_call(ct_file_writer *w, uint64_t tid, uint64_t i) {
  if (is_copy(tid, i)) add_gpu(w, tid, i);
  ct_record r = {.kind = CT_KIND_API};
  r.u.api = (struct ct_api){.tid = tid, .name = S_API, .begin_ns = call_begin(tid, i),
                            .end_ns = call_begin(tid, i) + 500, .corr = corr_of(tid, i),
                            .stream = tid, .flags = CT_API_TIMED};
  test_trace_add(w, &r);
  if (i >= LATE && !is_copy(tid, i - LATE)) add_gpu(w, tid, i - LATE);
}

/* The GPU records still due after thread tid's last call (n calls). */
static void add_late(ct_file_writer *w, uint64_t tid, uint64_t n) {
  for (uint64_t i = n - LATE; i < n; i++)
    if (!is_copy(tid, i)) add_gpu(w, tid, i);
}

static void add_range(ct_file_writer *w, uint64_t tid, uint64_t name, uint64_t first,
                      uint64_t count, uint64_t depth) {
  ct_record r = {.kind = CT_KIND_RANGE};
  r.u.range = (struct ct_range){.tid = tid, .name = name, .begin_ns = call_begin(tid, first) - 10,
                                .end_ns = call_begin(tid, first + count - 1) + 600,
                                .depth = depth};
  test_trace_add(w, &r);
}

static void write_trace(const char *path) {
  ct_file_writer *w = test_trace_open(path, 1 << 16);
  static const char *names[] = {"", "cudaLaunchKernel", "_Z1kv", "train", "epoch", "step", "side"};
  for (uint64_t id = 1; id <= S_SIDE; id++)
    ct_file_writer_add_string(w, id, names[id], strlen(names[id]));
  ct_record r = {.kind = CT_KIND_PROCESS};
  r.u.process = (struct ct_process){.pid = 9, .start_ns = T0};
  test_trace_add(w, &r);
  for (uint64_t i = 0; i < CALLS; i++) {
    add_call(w, 1, i);
    if (i < SIDE) add_call(w, 2, i);
    if (i + 1 == SIDE) {
      add_late(w, 2, SIDE);
      add_range(w, 2, S_SIDE, 0, SIDE, 0);
    }
    if (i < 2 * EPOCH && (i + 1) % STEP == 0) add_range(w, 1, S_STEP, i + 1 - STEP, STEP, 2);
    if (i < 2 * EPOCH && (i + 1) % EPOCH == 0) add_range(w, 1, S_EPOCH, i + 1 - EPOCH, EPOCH, 1);
  }
  add_range(w, 1, S_TRAIN, 0, CALLS, 0);
  add_late(w, 1, CALLS);
  r.kind = CT_KIND_END;
  test_trace_add(w, &r);
  test_trace_close(w, path);
}

/* What calls [first, first + count) of thread tid ran on the GPU, by the plan. */
typedef struct expect {
  uint64_t gpu_ns, activities, kernels, start, end;
} expect;

static expect expected(uint64_t tid, uint64_t first, uint64_t count) {
  expect x = {0};
  x.start = call_begin(tid, first) + 200;
  x.end = call_begin(tid, first + count - 1) + 200 + gpu_ns_of(first + count - 1);
  for (uint64_t i = first; i < first + count; i++) {
    x.gpu_ns += gpu_ns_of(i);
    x.activities++;
    x.kernels += !is_copy(tid, i);
  }
  return x;
}

typedef struct seen {
  uint64_t ranges, right, train, epochs, steps, side;
} seen;

static void on_range(void *user, const ct_range_span *r) {
  seen *s = user;
  s->ranges++;
  uint64_t first = (r->begin_ns + 10 - call_begin(r->tid, 0)) / 4000;
  uint64_t last = (r->end_ns - 600 - call_begin(r->tid, 0)) / 4000;
  expect x = expected(r->tid, first, last - first + 1);
  /* one stream per thread: copies and kernels alike */
  int ok = r->gpu_ns == x.gpu_ns && r->activities == x.activities && r->kernels == x.kernels &&
           r->nstreams == 1 && r->streams[0].stream == r->tid &&
           r->streams[0].start_ns == x.start && r->streams[0].end_ns == x.end;
  if (!ok && s->ranges - s->right < 5)
    printf("range %.*s at calls %llu..%llu of thread %llu: %llu ns in %llu activities (%llu "
           "kernels), expected %llu ns in %llu (%llu)\n", (int)r->name_len, r->name,
           (unsigned long long)first, (unsigned long long)last, (unsigned long long)r->tid,
           (unsigned long long)r->gpu_ns, (unsigned long long)r->activities,
           (unsigned long long)r->kernels, (unsigned long long)x.gpu_ns,
           (unsigned long long)x.activities, (unsigned long long)x.kernels);
  s->right += ok;
  if (!r->name) return;
  if (!strncmp(r->name, "train", r->name_len)) s->train += ok && last - first + 1 == CALLS;
  if (!strncmp(r->name, "epoch", r->name_len)) s->epochs += ok && last - first + 1 == EPOCH;
  if (!strncmp(r->name, "step", r->name_len)) s->steps += ok && last - first + 1 == STEP;
  if (!strncmp(r->name, "side", r->name_len)) s->side += ok && last - first + 1 == SIDE;
}

int main(int argc, char **argv) {
  char name[64], path[4096];
  snprintf(name, sizeof name, "range-long-test-%d.ctr", CT_RANGE_QUEUE_MEM);
  test_trace_path(argc, argv, name, path, sizeof path);
  write_trace(path);
  seen s = {0};
  ct_model_stats st;
  uint64_t lost = 0;
  int rc = ct_range_each(path, on_range, &s, &st, NULL, &lost);
  CHECK(rc == 0, "clean read: %d (%s)", rc, st.message);
  const uint64_t nsteps = 2 * EPOCH / STEP;
  CHECK(s.ranges == 1 + 2 + nsteps + 1, "%llu ranges handed over", (unsigned long long)s.ranges);
  CHECK(s.right == s.ranges, "%llu of %llu ranges with exactly their calls' GPU work",
        (unsigned long long)s.right, (unsigned long long)s.ranges);
  CHECK(s.train == 1 && s.epochs == 2 && s.steps == nsteps && s.side == 1,
        "train %llu, epochs %llu, steps %llu, side %llu as planted", (unsigned long long)s.train,
        (unsigned long long)s.epochs, (unsigned long long)s.steps, (unsigned long long)s.side);
  CHECK(lost == 0, "%llu calls lost", (unsigned long long)lost);
  /* memory: each thread's queue holds at most CT_RANGE_QUEUE_MEM calls, the GPU
   * records pending a few more */
  CHECK(st.calls_peak <= 2 * CT_RANGE_QUEUE_MEM + 4 * LATE, "calls in memory at once: %llu",
        (unsigned long long)st.calls_peak);
  remove(path);
  printf(failures ? "%d failures\n" : "ok\n", failures);
  return failures ? 1 : 0;
}
