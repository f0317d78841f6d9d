/*
 * ct_range_each (report_ranges.c) keeps in its temporary files only calls that a range
 * may still claim, on a trace written here. Thread 1: 40,000 calls before its first
 * range, then three depth-0 "step" ranges of 1,000 calls each, 5,000 calls outside any
 * range after each; thread 2: 80,000 calls and no range; thread 3: one range around
 * all its 50,000 calls (nothing nested: nothing claims from its queue before it
 * closes). Kernels' GPU records come 3 calls late, every 7th call of thread 1 is a copy
 * whose GPU record comes first. The temporary files are limited to 3,500,000 bytes
 * each (RLIMIT_FSIZE, SIGXFSZ ignored): thread 3's 50,000 calls fit (64 bytes each),
 * thread 2's 80,000 do not, so queuing calls no range can claim loses some
 * (ct_range_each counts them lost and says so). Every range must get exactly the GPU
 * work of its calls, nothing lost. And ct_range_queue_drop_before alone (queue_drop).
 * Built twice: with the default CT_RANGE_QUEUE_MEM, and with 4 (every call but the
 * newest through the file).
 * usage: test_range_unclaimed DIR (a scratch directory)
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "codec.h"
#include "range_queue.h"
#include "report.h"

#include "test_check.h"
#include "test_trace.h"

#define T0 1000000000ull
#define PRE 40000ull    /* thread 1's calls before its first range */
#define IN 1000ull      /* calls in each of its ranges */
#define GAP 5000ull     /* calls after each of them, outside any range */
#define NRANGES 3ull
#define N1 (PRE + NRANGES * (IN + GAP))
#define N2 80000ull     /* thread 2: no range */
#define N3 50000ull     /* thread 3: one range around them all */
#define LATE 3          /* a kernel's GPU record comes this many calls later */
#define FILE_LIMIT 3500000 /* bytes a temporary file may hold */

enum { S_API = 1, S_KERNEL, S_STEP, S_ALL };

/* Call i of thread tid: begins at 4 us intervals; its GPU work on stream tid. */
static uint64_t call_begin(uint64_t tid, uint64_t i) { return T0 + i * 4000 + (tid - 1) * 1000; }
static uint64_t gpu_ns_of(uint64_t i) { return 100 + i % 37; }
static int is_copy(uint64_t tid, uint64_t i) { return tid == 1 && i % 7 == 0; }
static uint64_t corr_of(uint64_t tid, uint64_t i) { return tid * 1000000 + i + 1; }
static uint64_t range_first(uint64_t r) { return PRE + r * (IN + GAP); }

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
                      uint64_t count) {
  ct_record r = {.kind = CT_KIND_RANGE};
  r.u.range = (struct ct_range){.tid = tid, .name = name, .begin_ns = call_begin(tid, first) - 10,
                                .end_ns = call_begin(tid, first + count - 1) + 600};
  test_trace_add(w, &r);
}

static void write_trace(const char *path) {
  ct_file_writer *w = test_trace_open(path, 1 << 16);
  static const char *names[] = {"", "cudaLaunchKernel", "_Z1kv", "step", "all"};
  for (uint64_t id = 1; id <= S_ALL; id++)
    ct_file_writer_add_string(w, id, names[id], strlen(names[id]));
  ct_record r = {.kind = CT_KIND_PROCESS};
  r.u.process = (struct ct_process){.pid = 9, .start_ns = T0};
  test_trace_add(w, &r);
  for (uint64_t i = 0; i < N2; i++) {
    if (i < N1) add_call(w, 1, i);
    add_call(w, 2, i);
    if (i < N3) add_call(w, 3, i);
    for (uint64_t k = 0; k < NRANGES; k++)
      if (i + 1 == range_first(k) + IN) add_range(w, 1, S_STEP, range_first(k), IN);
    if (i + 1 == N3) {
      add_late(w, 3, N3);
      add_range(w, 3, S_ALL, 0, N3);
    }
  }
  add_late(w, 1, N1);
  add_late(w, 2, N2);
  r.kind = CT_KIND_END;
  test_trace_add(w, &r);
  test_trace_close(w, path);
}

typedef struct seen {
  uint64_t ranges, right, steps, all;
} seen;

/* Checks a range against the GPU work of the calls planted inside it. */
static void on_range(void *user, const ct_range_span *r) {
  seen *s = user;
  s->ranges++;
  uint64_t first = (r->begin_ns + 10 - call_begin(r->tid, 0)) / 4000;
  uint64_t last = (r->end_ns - 600 - call_begin(r->tid, 0)) / 4000;
  uint64_t gpu_ns = 0, activities = 0, kernels = 0;
  for (uint64_t i = first; i <= last; i++) {
    gpu_ns += gpu_ns_of(i);
    activities++;
    kernels += !is_copy(r->tid, i);
  }
  int ok = r->gpu_ns == gpu_ns && r->activities == activities && r->kernels == kernels &&
           r->nstreams == 1 && r->streams[0].stream == r->tid &&
           r->streams[0].start_ns == call_begin(r->tid, first) + 200 &&
           r->streams[0].end_ns == call_begin(r->tid, last) + 200 + gpu_ns_of(last);
  if (!ok)
    printf("range at calls %llu..%llu of thread %llu: %llu ns in %llu activities, expected "
           "%llu ns in %llu\n", (unsigned long long)first, (unsigned long long)last,
           (unsigned long long)r->tid, (unsigned long long)r->gpu_ns,
           (unsigned long long)r->activities, (unsigned long long)gpu_ns,
           (unsigned long long)activities);
  s->right += ok;
  s->steps += ok && r->tid == 1 && last - first + 1 == IN;
  s->all += ok && r->tid == 3 && last - first + 1 == N3;
}

/* A claim's callback: counts the calls and checks each is done with its own work. */
typedef struct claimed {
  uint64_t n, wrong, first_begin;
} claimed;

static void count_claim(void *user, ct_queued_call *c) {
  claimed *k = user;
  if (!k->n++) k->first_begin = c->begin;
  k->wrong += !c->done || c->start != c->begin + 200 || c->end != c->begin + 300;
}

/* ct_range_queue_drop_before on its own: 100,000 calls (begins increasing but for
 * every 10th, 5 us early), the oldest dropped up to a time, then claims, completions
 * and more calls, the file reused once it holds none. */
static void queue_drop(void) {
  ct_range_queue q = {0};
  uint64_t seq, forgotten = 0, n = 100000;
  for (uint64_t i = 0; i < n; i++) {
    ct_queued_call c = {.begin = T0 + i * 1000 - (i % 10 == 0 ? 5000 : 0)};
    CHECK(ct_range_queue_push(&q, &c, &seq, &forgotten) == 0 && seq == i, "push %llu",
          (unsigned long long)i);
  }
  /* calls up to 60,000 began before call 60,001 (60,000 5 us early) */
  long long k = ct_range_queue_drop_before(&q, T0 + 60001 * 1000);
  CHECK(k == 60001, "dropped %lld calls (60001)", k);
  CHECK(!ct_range_queue_has(&q, 60000) && ct_range_queue_has(&q, 60001) &&
        ct_range_queue_has(&q, n - 1) && !ct_range_queue_has(&q, n), "kept calls 60001..%llu",
        (unsigned long long)(n - 1));
  for (uint64_t i = 60001; i < n; i++) {
    ct_queued_call g = {.start = T0 + i * 1000 - (i % 10 == 0 ? 5000 : 0) + 200};
    g.end = g.start + 100;
    CHECK(ct_range_queue_complete(&q, i, &g) == 0, "complete %llu", (unsigned long long)i);
  }
  claimed got = {0};
  CHECK(ct_range_queue_claim(&q, T0 + 70000 * 1000, T0 + 70010 * 1000, 0, count_claim, &got) == 0 &&
        got.n == 10 && !got.wrong, "claimed %llu calls (10: 70,000 began early), %llu wrong",
        (unsigned long long)got.n, (unsigned long long)got.wrong);
  k = ct_range_queue_drop_before(&q, UINT64_MAX);
  CHECK(k == (long long)(n - 60001) && q.nfile == 0 && q.n == 0 && q.file_base == 0,
        "all dropped: %lld, file and memory empty, the file reused from its start", k);
  for (uint64_t i = 0; i < 3 * CT_RANGE_QUEUE_MEM; i++) { /* some through the file again */
    ct_queued_call c = {.begin = T0 + i, .done = 1, .start = T0 + i + 200, .end = T0 + i + 300};
    ct_range_queue_push(&q, &c, &seq, &forgotten);
  }
  got = (claimed){0};
  CHECK(seq == n + 3 * CT_RANGE_QUEUE_MEM - 1 &&
        ct_range_queue_claim(&q, T0, T0 + (UINT64_C(1) << 40), 0, count_claim, &got) == 0 &&
        got.n == 3 * CT_RANGE_QUEUE_MEM && !got.wrong, "after the drop: %llu of %d claimed, %llu wrong",
        (unsigned long long)got.n, 3 * CT_RANGE_QUEUE_MEM, (unsigned long long)got.wrong);
  /* all but the newest two dropped: the file's and some in memory */
  k = ct_range_queue_drop_before(&q, T0 + 3 * CT_RANGE_QUEUE_MEM - 2);
  got = (claimed){0};
  CHECK(k == 3 * CT_RANGE_QUEUE_MEM - 2 &&
        ct_range_queue_claim(&q, T0, T0 + (UINT64_C(1) << 40), 1, count_claim, &got) == 0 &&
        got.n == 2 && got.first_begin == T0 + 3 * CT_RANGE_QUEUE_MEM - 2 && !got.wrong,
        "the newest two kept: %lld dropped, %llu claimed from %llu", k, (unsigned long long)got.n,
        (unsigned long long)(got.first_begin - T0));
  ct_range_queue_free(&q);
}

int main(int argc, char **argv) {
  queue_drop();
  char name[64], path[4096];
  snprintf(name, sizeof name, "range-unclaimed-test-%d.ctr", CT_RANGE_QUEUE_MEM);
  test_trace_path(argc, argv, name, path, sizeof path);
  write_trace(path);
  signal(SIGXFSZ, SIG_IGN);
  struct rlimit lim = {FILE_LIMIT, FILE_LIMIT};
  CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0, "file size limit set");
  seen s = {0};
  ct_model_stats st;
  uint64_t lost = 0;
  int rc = ct_range_each(path, on_range, &s, &st, NULL, &lost);
  CHECK(rc == 0, "clean read: %d (%s)", rc, st.message);
  CHECK(s.ranges == NRANGES + 1 && s.right == s.ranges && s.steps == NRANGES && s.all == 1,
        "%llu ranges, %llu with exactly their calls' GPU work (steps %llu, all %llu)",
        (unsigned long long)s.ranges, (unsigned long long)s.right, (unsigned long long)s.steps,
        (unsigned long long)s.all);
  CHECK(lost == 0, "%llu calls lost (queued past the file size limit)", (unsigned long long)lost);
  remove(path);
  printf(failures ? "%d failures\n" : "ok\n", failures);
  return failures ? 1 : 0;
}
