/*
 * ct_range_each_within (report_ranges.c) against ct_range_each on a trace written
 * here: thread 1 has 50 steps (an outermost "step" range, 10 kernels inside it, an
 * inner "fwd" range around the first 4; calls beginning exactly at a step's begin and
 * end, and just outside: between the steps), thread 2 has no range and launches
 * 100,000 kernels on its own stream, and every 7th call of thread 1 is a synchronous
 * copy whose GPU record comes before its call. The ranges handed over must be the same
 * with the extents (every field), with planted totals, while the calls kept at once
 * drop from CT_RANGE_QUEUE_MEM (thread 2's calls in memory; the rest in its temporary
 * file) to a step's.
 * usage: test_range_extents DIR (a scratch directory)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "range_queue.h"
#include "report.h"

#include "test_check.h"
#include "test_trace.h"

#define STEPS 50
#define PER_STEP 10        /* kernels inside a step, 1 us apart from its begin */
#define STEP_NS 100000ull  /* a step lasts 9 us (its calls begin at +0 .. +9 us) of 100 us */
#define OTHER 100000ull    /* thread 2's kernels */
#define BEFORE_GPU_NS 50   /* GPU work of the call just before a step (its kernel ends
                              after the step's first starts: that one's start moves to its
                              end, as the projection shows overlapping work on a stream) */
#define T0 1000000000ull

static uint64_t next_corr = 1;

/* A timed call of tid on stream at begin, GPU work of gpu_ns right after it; a copy's
 * GPU record comes first. */
static void call(ct_file_writer *w, uint64_t tid, uint64_t stream, uint64_t begin, uint64_t gpu_ns,
                 int copy) {
  uint64_t corr = next_corr++;
  ct_record api = {.kind = CT_KIND_API}, gpu = {.kind = CT_KIND_GPU};
  api.u.api = (struct ct_api){.tid = tid, .name = 1, .begin_ns = begin, .end_ns = begin + 500,
                              .corr = corr, .stream = stream, .flags = CT_API_TIMED};
  gpu.u.gpu = (struct ct_gpu){.corr = corr, .stream = stream, .start_ns = begin + 100,
                              .end_ns = begin + 100 + gpu_ns,
                              .type = copy ? CT_GPU_MEMCPY : CT_GPU_KERNEL, .name = 2};
  if (copy) test_trace_add(w, &gpu);
  test_trace_add(w, &api);
  if (!copy) test_trace_add(w, &gpu);
}

static void range(ct_file_writer *w, uint64_t name, uint64_t begin, uint64_t end, uint64_t depth) {
  ct_record r = {.kind = CT_KIND_RANGE};
  r.u.range = (struct ct_range){.tid = 1, .name = name, .begin_ns = begin, .end_ns = end,
                                .depth = depth};
  test_trace_add(w, &r);
}

static void write_trace(const char *path) {
  ct_file_writer *w = test_trace_open(path, 1 << 16);
  ct_file_writer_add_string(w, 1, "cudaLaunchKernel", 16);
  ct_file_writer_add_string(w, 2, "_Z1kv", 5);
  ct_file_writer_add_string(w, 3, "step", 4);
  ct_file_writer_add_string(w, 4, "fwd", 3);
  ct_record r = {.kind = CT_KIND_PROCESS};
  r.u.process = (struct ct_process){.pid = 9, .start_ns = T0};
  test_trace_add(w, &r);
  uint64_t other = 0;
  for (uint64_t s = 0; s < STEPS; s++) {
    uint64_t b = T0 + s * STEP_NS, e = b + (PER_STEP - 1) * 1000;
    call(w, 1, 1, b - 1, BEFORE_GPU_NS, 0); /* just before the step: no range claims it */
    for (uint64_t k = 0; k < PER_STEP; k++) /* from b to e: the step claims them */
      call(w, 1, 1, b + k * 1000, 100 + k, (s * PER_STEP + k) % 7 == 0);
    range(w, 4, b, b + 3000, 1); /* fwd: the first 4 */
    range(w, 3, b, e, 0);
    call(w, 1, 1, e + 1, 50, 0); /* just after */
    for (; other < (s + 1) * OTHER / STEPS; other++) call(w, 2, 2, b + 10000 + other % 2000, 10, 0);
  }
  r.kind = CT_KIND_END;
  test_trace_add(w, &r);
  test_trace_close(w, path);
}

typedef struct handed {
  ct_range_span v[2 * STEPS + 1];
  size_t n;
} handed;

static void on_range(void *user, const ct_range_span *r) {
  handed *h = user;
  if (h->n < sizeof h->v / sizeof *h->v) h->v[h->n++] = *r;
}

int main(int argc, char **argv) {
  char path[4096];
  test_trace_path(argc, argv, "range-extents-test.ctr", path, sizeof path);
  write_trace(path);

  /* the extents, from the RANGE records as dump's model pass delivers them */
  ct_map *extents = ct_map_new(sizeof(ct_range_extent));
  for (uint64_t s = 0; s < STEPS; s++) {
    struct ct_range step = {.tid = 1, .begin_ns = T0 + s * STEP_NS,
                            .end_ns = T0 + s * STEP_NS + (PER_STEP - 1) * 1000};
    CHECK(extents && ct_range_extent_add(extents, &step) == 0, "extent");
  }
  static handed all, within;
  ct_model_stats st1, st2;
  uint64_t lost1 = 0, lost2 = 0;
  int rc1 = ct_range_each(path, on_range, &all, &st1, NULL, &lost1);
  int rc2 = ct_range_each_within(path, on_range, &within, &st2, NULL, &lost2, extents);
  CHECK(rc1 == 0 && rc2 == 0, "clean reads: %d (%s), %d (%s)", rc1, st1.message, rc2, st2.message);
  CHECK(all.n == 2 * STEPS && within.n == all.n, "%zu and %zu ranges", all.n, within.n);
  int same = all.n == within.n;
  for (size_t i = 0; same && i < all.n; i++) {
    const ct_range_span *a = &all.v[i], *b = &within.v[i];
    same = a->tid == b->tid && a->begin_ns == b->begin_ns && a->end_ns == b->end_ns &&
           a->depth == b->depth && a->gpu_ns == b->gpu_ns && a->activities == b->activities &&
           a->kernels == b->kernels && a->nstreams == b->nstreams &&
           !memcmp(a->streams, b->streams, a->nstreams * sizeof *a->streams);
  }
  CHECK(same, "the same ranges handed over with and without the extents");
  /* planted: a step claims its 10 calls, GPU 100 + k ns each, fwd the first 4; the
   * first starts BEFORE_GPU_NS - 1 ns later (the call before it overlaps it) */
  uint64_t steps = 0, fwds = 0;
  for (size_t i = 0; i < within.n; i++) {
    const ct_range_span *r = &within.v[i];
    if (r->depth == 0)
      steps += r->activities == PER_STEP && r->gpu_ns == PER_STEP * 100 + 45 - (BEFORE_GPU_NS - 1) && r->nstreams == 1;
    else
      fwds += r->activities == 4 && r->gpu_ns == 4 * 100 + 6 - (BEFORE_GPU_NS - 1);
  }
  CHECK(steps == STEPS && fwds == STEPS, "%llu steps and %llu fwd ranges as planted",
        (unsigned long long)steps, (unsigned long long)fwds);
  CHECK(lost1 == 0 && lost2 == 0, "calls lost: %llu, %llu within the extents",
        (unsigned long long)lost1, (unsigned long long)lost2);
  /* memory: without extents, thread 2's queue holds CT_RANGE_QUEUE_MEM calls in memory
   * (the older ones in its temporary file); with them, none */
  CHECK(st1.calls_peak >= CT_RANGE_QUEUE_MEM && st1.calls_peak <= CT_RANGE_QUEUE_MEM + 2 * PER_STEP &&
        st2.calls_peak <= 2 * PER_STEP,
        "calls kept at once: %llu, %llu within the extents", (unsigned long long)st1.calls_peak,
        (unsigned long long)st2.calls_peak);
  ct_map_free(extents);
  remove(path);
  printf(failures ? "%d failures\n" : "ok\n", failures);
  return failures ? 1 : 0;
}
