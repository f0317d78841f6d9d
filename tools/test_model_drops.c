/*
 * The model's give-up rule (model_waits.h) on a trace with dropped records, written
 * here: N launches alternating between streams 1 and 2, of every 10 launches 3 lose
 * their GPU record and 1 its API and LAUNCH records (its GPU record comes alone), as
 * `cutrace-gentrace --drops` writes; plus one call on stream 3 whose kernel ends
 * 5 s after it (a deep queue: longer than any window), its GPU record last in the
 * file; and three calls on stream 4 at 100 ms, the GPU record of the first of them
 * written 30 ms late (past the 20 ms window: delivered late). Checks: every span and
 * activity delivered with its planted join, the deep call still joined (the rule
 * follows its stream, not the clock), the late record still joined (the stream passed
 * its call less than a window before), the calls given up on (the dropped ones but
 * those of the last windows), and the calls in flight at once bounded by the window
 * rather than by N. Then the same trace without its DROP records: nothing is given up
 * (the file does not say that records were lost, and a clean trace's records all come).
 * usage: test_model_drops DIR (a scratch directory)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "model.h"

#include "test_check.h"
#include "test_trace.h"

#define N 100000ull                  /* launches: 400 ms of trace time, 20 windows */
#define STEP_NS 4000ull              /* one launch every 4 us */
#define T0 1000000000ull
#define DEEP_CORR (N + 1)            /* the stream-3 call */
#define DEEP_END (T0 + 5000000000ull)
#define LATE_AT 25000ull             /* the stream-4 calls come with launch LATE_AT */
#define LATE_CORR (N + 2)            /* its first call; N + 3 and N + 4 follow */
#define LATE_BY 7500ull              /* its GPU record comes with launch LATE_AT + LATE_BY */

/* Launch i (corr i + 1) loses its GPU record (k 0, 3, 6) or its call (k 8), k = i % 10. */
static int gpu_lost(uint64_t i) { return i % 10 == 0 || i % 10 == 3 || i % 10 == 6; }
static int call_lost(uint64_t i) { return i % 10 == 8; }

/* Call corr on stream s at t, its LAUNCH's grid_x corr - 1. */
static void add_call(ct_file_writer *w, uint64_t corr, uint64_t stream, uint64_t t) {
  ct_record r = {0};
  r.kind = CT_KIND_API;
  r.u.api = (struct ct_api){.tid = 7, .name = 1, .begin_ns = t, .end_ns = t + 3000,
                            .corr = corr, .stream = stream, .flags = CT_API_TIMED};
  test_trace_add(w, &r);
  r.kind = CT_KIND_LAUNCH;
  r.u.launch = (struct ct_launch){.corr = corr, .kernel = 2, .grid_x = corr - 1};
  test_trace_add(w, &r);
}

static void add_gpu(ct_file_writer *w, uint64_t corr, uint64_t stream, uint64_t t) {
  ct_record r = {0};
  r.kind = CT_KIND_GPU;
  r.u.gpu = (struct ct_gpu){.corr = corr, .stream = stream, .start_ns = t + 5000,
                            .end_ns = t + 7000, .type = CT_GPU_KERNEL};
  test_trace_add(w, &r);
}

static void write_trace(const char *path, int drop_records) {
  ct_file_writer *w = test_trace_open(path, 1 << 16);
  ct_file_writer_add_string(w, 1, "__cudaLaunchKernel", 18);
  ct_file_writer_add_string(w, 2, "_Z1kv", 5);
  ct_record r = {0};
  r.kind = CT_KIND_PROCESS;
  r.u.process = (struct ct_process){.pid = 5, .start_ns = T0};
  test_trace_add(w, &r);
  r.kind = CT_KIND_API; /* the deep call: its kernel ends 5 s later */
  r.u.api = (struct ct_api){.tid = 7, .name = 1, .begin_ns = T0, .end_ns = T0 + 1000,
                            .corr = DEEP_CORR, .stream = 3, .flags = CT_API_TIMED};
  test_trace_add(w, &r);
  for (uint64_t i = 0; i < N; i++) {
    uint64_t t = T0 + 2000 + i * STEP_NS, corr = i + 1, stream = 1 + i % 2;
    if (!call_lost(i)) add_call(w, corr, stream, t);
    if (!gpu_lost(i)) add_gpu(w, corr, stream, t);
    if (i == LATE_AT) { /* three calls on stream 4, 1 us apart: the first one's GPU record late */
      for (uint64_t k = 0; k < 3; k++) add_call(w, LATE_CORR + k, 4, t + 1000 + k * 1000);
      for (uint64_t k = 1; k < 3; k++) add_gpu(w, LATE_CORR + k, 4, t + 1000 + k * 1000);
    }
    if (i == LATE_AT + LATE_BY) add_gpu(w, LATE_CORR, 4, T0 + 2000 + LATE_AT * STEP_NS + 1000);
    if (drop_records && i % 1000 == 0) { /* reported early, as the preload reports a full buffer */
      r.kind = CT_KIND_DROP;
      r.u.drop = (struct ct_drop){.tid = 7, .count = 5, .first_ns = t, .last_ns = t};
      test_trace_add(w, &r);
    }
  }
  r.kind = CT_KIND_GPU;
  r.u.gpu = (struct ct_gpu){.corr = DEEP_CORR, .stream = 3, .start_ns = DEEP_END - 1000,
                            .end_ns = DEEP_END, .type = CT_GPU_KERNEL};
  test_trace_add(w, &r);
  r.kind = CT_KIND_END;
  test_trace_add(w, &r);
  test_trace_close(w, path);
}

typedef struct seen {
  uint64_t spans, acts, joined, unjoined, bad_join, deep_joined, late_joined, stream4_joined;
} seen;

static void on_span(void *user, const ct_span *sp) {
  seen *s = user;
  s->spans++;
  if (sp->corr != DEEP_CORR && sp->corr && (sp->detail != CT_DETAIL_LAUNCH || sp->d.launch.grid_x != sp->corr - 1))
    s->bad_join++;
}

static void on_activity(void *user, const ct_activity *a) {
  seen *s = user;
  s->acts++;
  if (a->corr == DEEP_CORR) {
    s->deep_joined = a->has_call && a->call_begin_ns == T0 && a->end_ns == DEEP_END;
    return;
  }
  if (a->corr >= LATE_CORR) {
    s->stream4_joined += a->has_call && a->detail == CT_DETAIL_LAUNCH && a->d.launch.grid_x == a->corr - 1;
    if (a->corr == LATE_CORR) s->late_joined = a->late && a->has_call;
    return;
  }
  uint64_t i = a->corr - 1;
  if (!a->has_call) {
    s->unjoined++;
    if (!call_lost(i)) s->bad_join++;
    return;
  }
  s->joined++;
  if (call_lost(i) || a->detail != CT_DETAIL_LAUNCH || a->d.launch.grid_x != i ||
      a->call_begin_ns != T0 + 2000 + i * STEP_NS)
    s->bad_join++;
}

int main(int argc, char **argv) {
  char path[4096];
  test_trace_path(argc, argv, "model-drops-test.ctr", path, sizeof path);
  write_trace(path, 1);
  ct_model_ops ops = {.on_span = on_span, .on_activity = on_activity};
  seen s = {0};
  ct_model_stats st;
  int rc = ct_model_read(path, NULL, &ops, &s, &st);
  CHECK(rc == 0 && st.has_end && st.late == 1, "clean read (rc %d: %s), %llu late", rc,
        st.message, (unsigned long long)st.late);
  CHECK(s.spans == N / 10 * 9 + 4 && s.acts == N / 10 * 7 + 4, "%llu spans, %llu activities",
        (unsigned long long)s.spans, (unsigned long long)s.acts);
  CHECK(s.joined == N / 10 * 6 && s.unjoined == N / 10 && st.unmatched_activities == N / 10 &&
            s.bad_join == 0,
        "%llu joined, %llu without their call, %llu wrong", (unsigned long long)s.joined,
        (unsigned long long)s.unjoined, (unsigned long long)s.bad_join);
  CHECK(s.deep_joined, "the call whose kernel ends 5 s later is joined");
  CHECK(s.late_joined && s.stream4_joined == 3, "the late GPU record is joined (%llu of 3)",
        (unsigned long long)s.stream4_joined);
  /* The window stays at its first 20 ms (5000 launches, nothing late): a waiting call is
   * given up once its stream passed it a window ago (checked as its stream's work is
   * delivered), so at most three windows of waiting calls besides the calls of the
   * window held for reordering, and all but the last two windows' given up. */
  uint64_t launches_per_window = 20000000 / STEP_NS;
  uint64_t waiting = N / 10 * 4, per_window = launches_per_window / 10 * 4;
  CHECK(st.calls_given_up <= waiting && st.calls_given_up + 2 * per_window >= waiting,
        "%llu calls given up of %llu waiting", (unsigned long long)st.calls_given_up,
        (unsigned long long)waiting);
  uint64_t bound = launches_per_window + 3 * per_window;
  CHECK(st.calls_peak <= bound, "%llu calls in flight at once (at most %llu)",
        (unsigned long long)st.calls_peak, (unsigned long long)bound);

  /* Without the DROP records: the same joins (each activity without its call now waits
   * 2 s for it, so the stream-4 record is no longer late), nothing given up. */
  remove(path);
  write_trace(path, 0);
  seen s2 = {0};
  rc = ct_model_read(path, NULL, &ops, &s2, &st);
  CHECK(rc == 0 && s2.spans == s.spans && s2.acts == s.acts && s2.joined == s.joined &&
            s2.bad_join == 0 && s2.deep_joined && s2.stream4_joined == 3,
        "without DROP records: rc %d, %llu spans, %llu activities, %llu joined", rc,
        (unsigned long long)s2.spans, (unsigned long long)s2.acts, (unsigned long long)s2.joined);
  CHECK(st.calls_given_up == 0 && st.calls_peak >= waiting,
        "without DROP records: %llu given up, %llu in flight at once",
        (unsigned long long)st.calls_given_up, (unsigned long long)st.calls_peak);
  remove(path);
  printf(failures ? "%d failures\n" : "ok\n", failures);
  return failures ? 1 : 0;
}
